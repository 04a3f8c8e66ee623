"""Pydantic wire models for tiddlywinks scene documents and rulings, and their published JSON Schemas.

The scene shape is ``geometry/records.py``'s (shared by scene files, simulator truth and ``tableref analyze``);
these models validate it at the edge with errors that name the bad field. ``python -m api.schemas`` rewrites
``schemas/scene.schema.json`` and ``schemas/rulings.schema.json``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from adjudicator.tiddlywinks_squidge_off import SquidgeOffVerdict
from adjudicator.types import Decision, Ruling
from geometry.records import scene_to_document
from geometry.types import TiddlywinksScene

ColorName = Literal["blue", "green", "red", "yellow"]
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
SCENE_SCHEMA_FILE = "scene.schema.json"
RULINGS_SCHEMA_FILE = "rulings.schema.json"
# Coordinates beyond this are not on any table (mm).
_MAX_ABS_MM = 1e5


def _finite_xy(v: tuple[float, float]) -> tuple[float, float]:
    if not all(math.isfinite(x) and abs(x) < _MAX_ABS_MM for x in v):
        raise ValueError(f"must be two finite coordinates within {_MAX_ABS_MM:g} mm, got {list(v)}")
    return v


class PieceModel(BaseModel):
    """One wink (``pieces[]``). Derived states (``out_of_bounds`` ... ``squopping``) are ignored on input."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    color: ColorName
    size: Literal["large", "small"]
    center_mm: tuple[float, float] = Field(description="Plan centre in the table frame, mm.")
    radius_mm: float | None = Field(default=None, gt=0, le=50)
    uncertainty_mm: float = Field(default=0.0, ge=0, le=1000, description="Position sigma, mm.")
    z_mm: float = Field(default=0.75, ge=-10, le=500, description="Mid-plane height at the centre, mm.")
    tilt_deg: float = Field(default=0.0, ge=0, lt=90)
    tilt_azimuth_deg: float = Field(default=0.0, ge=-360, le=360)
    potted: bool = False
    off_mat: bool = False
    unplayed: bool = False
    out_of_bounds: bool | None = None
    behind_baseline: bool | None = None
    squopped: bool | None = None
    squopping: bool | None = None
    above: list[str] | None = Field(default=None, description="Ids of the winks this one lies over.")
    confidence: float = Field(default=1.0, ge=0, le=1)
    # Added by ``tableref analyze`` (vision): image position and how sure each pairwise vertical order is.
    center_px: tuple[float, float] | None = None
    order_confidence: dict[str, float] | None = None
    occluded_by_pot: bool | None = None

    @field_validator("center_mm")
    @classmethod
    def _check_center(cls, v: tuple[float, float]) -> tuple[float, float]:
        return _finite_xy(v)


class PotModel(BaseModel):
    """The pot; only ``center_mm`` is read, other keys (``center_px``, ``found`` ...) are carried through."""

    model_config = ConfigDict(extra="allow")
    center_mm: tuple[float, float] = (0.0, 0.0)
    center_px: tuple[float, float] | None = None

    @field_validator("center_mm")
    @classmethod
    def _check_center(cls, v: tuple[float, float]) -> tuple[float, float]:
        return _finite_xy(v)


class SceneDocument(BaseModel):
    """A tiddlywinks scene document. ``kind: "squidge-off"`` asks ``tableref judge`` for the TW 5(a) verdict.

    Unknown top-level keys (image, calibration and other metadata of truth or analysis files) are carried
    through untouched; the pieces and the game facts are checked strictly.
    """

    model_config = ConfigDict(extra="allow")
    game: Literal["tiddlywinks"] = "tiddlywinks"
    kind: Literal["position", "squidge-off"] = "position"
    game_type: Literal["pairs", "singles"] = "pairs"
    pieces: list[PieceModel]
    pot: PotModel = PotModel()
    squops: list[tuple[str, str]] = Field(default_factory=list, description="[upper, lower] pairs (derived).")
    piles: list[list[str]] = Field(default_factory=list, description="Connected squop groups (derived).")
    squidge_off_winner: ColorName | None = None
    potted_out_order: list[list[ColorName]] = Field(
        default_factory=list, description="Colours in pot-out order; one group per shot."
    )
    eps_mm: float | None = Field(default=None, gt=0, le=100, description="Decision margin override, mm.")
    unplayed_corners: list[ColorName] | None = Field(
        default=None, description="Colours with unplayed winks behind their baseline (default: from pieces)."
    )
    last_shot_color: ColorName | None = Field(default=None, description="Colour that played the last shot.")
    corner_signs: dict[ColorName, tuple[int, int]] | None = None
    above_is_explicit: bool = True

    @field_validator("pieces")
    @classmethod
    def _unique_ids(cls, v: list[PieceModel]) -> list[PieceModel]:
        ids = [p.id for p in v]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate piece ids {dupes}")
        known = set(ids)
        for p in v:
            missing = [a for a in p.above or () if a not in known]
            if missing:
                raise ValueError(f"piece {p.id!r} lies above unknown piece(s) {missing}")
        return v

    @classmethod
    def from_domain(cls, scene: TiddlywinksScene, kind: str = "position") -> SceneDocument:
        return cls.model_validate({**scene_to_document(scene), "kind": kind})

    def to_record(self) -> dict[str, Any]:
        """The plain document for ``geometry.records.scene_from_document``."""
        return self.model_dump(mode="json", exclude_none=True)


class RulingOut(BaseModel):
    """One ruling, as ``Ruling.to_dict()`` writes it."""

    model_config = ConfigDict(extra="forbid")
    game: str
    rule: str = Field(pattern=r"^[A-Z]{2} \S.*$", description="Clause as RULES.md names it, e.g. 'TW 7(a)'.")
    decision: Decision
    explanation: str = Field(min_length=1)
    piece_ids: list[str]
    evidence: dict[str, float] = Field(description="Measurement name with unit suffix -> value.")
    confidence: float = Field(ge=0, le=1)
    frame_idx: int | None
    interpretations: list[str]
    colors: list[str]
    target_mm: tuple[float, float] | None

    @classmethod
    def from_domain(cls, ruling: Ruling) -> RulingOut:
        return cls.model_validate(ruling.to_dict())


class RankedWinkOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    color: ColorName
    wink_id: str
    distance_mm: float | None = Field(description="TW P1 key; null when potted or off the mat.")
    uncertainty_mm: float
    potted: bool
    off_mat: bool
    place: int = Field(ge=1, description="Shared by winks tied within eps.")


class SquidgeOffOut(BaseModel):
    """The TW 5(a) verdict: winner (or null), ranking nearest first, re-squidgers and replays."""

    model_config = ConfigDict(extra="forbid")
    decision: Decision
    winner: ColorName | None
    ranking: list[RankedWinkOut]
    resquidge: list[ColorName]
    replay: list[ColorName]
    rulings: list[RulingOut]

    @classmethod
    def from_domain(cls, verdict: SquidgeOffVerdict) -> SquidgeOffOut:
        return cls.model_validate(verdict.to_dict())


class JudgeOutput(BaseModel):
    """What ``tableref judge`` prints: the scene with derived states, its rulings and any squidge-off verdict."""

    model_config = ConfigDict(extra="forbid")
    scene: SceneDocument
    rulings: list[RulingOut]
    squidge_off: SquidgeOffOut | None = None


def json_schemas() -> dict[str, dict[str, Any]]:
    """The published schemas by file name."""
    return {
        SCENE_SCHEMA_FILE: SceneDocument.model_json_schema(),
        RULINGS_SCHEMA_FILE: JudgeOutput.model_json_schema(),
    }


def write_json_schemas(out_dir: Path = SCHEMA_DIR) -> list[Path]:
    """Write the JSON Schema files (sorted keys, stable diff)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in json_schemas().items():
        path = out_dir / name
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_json_schemas(Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_DIR):
        print(p)
