"""Request and response models of the referee service's own resources (games, calibrations, rulings).

Scene and ruling documents themselves are the shared analysis JSON (ARCHITECTURE.md); their pydantic models
live in ``api/schemas.py``. Here they are carried as open objects so a richer document never breaks a response.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

COLORS = ("blue", "green", "red", "yellow")


class ErrorOut(BaseModel):
    error: str = Field(description="Stable machine code, e.g. 'not_an_image', 'game_not_found'.")
    detail: str = Field(description="What is wrong, naming the offending value.")
    model_config = ConfigDict(extra="allow")


class CornersIn(BaseModel):
    """Four mat corners in image pixels, order (-x,+y), (+x,+y), (+x,-y), (-x,-y)."""

    model_config = ConfigDict(extra="forbid")
    corners_px: list[tuple[float, float]] = Field(min_length=4, max_length=4)
    image_size_wh_px: tuple[int, int]

    @field_validator("corners_px")
    @classmethod
    def _finite(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        for x, y in v:
            if not (abs(x) < 1e6 and abs(y) < 1e6):
                raise ValueError(f"corner ({x}, {y}) is not a finite pixel position")
        return v

    @field_validator("image_size_wh_px")
    @classmethod
    def _size(cls, v: tuple[int, int]) -> tuple[int, int]:
        if not (0 < v[0] <= 100_000 and 0 < v[1] <= 100_000):
            raise ValueError(f"image size {v} must be positive pixels")
        return v


class CalibrationOut(BaseModel):
    id: str
    created_at: float
    source: str = Field(description="'image' or 'corners'.")
    calibration: dict[str, Any] = Field(description="TableCalibration.to_dict().")


class GameIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    game: str = Field(default="tiddlywinks", description="Game to referee; supported: tiddlywinks.",
                      max_length=64)
    game_type: Literal["pairs", "singles"] = "pairs"
    players: dict[str, str] = Field(default_factory=dict, description="Colour -> player name. In singles each "
                                    "player plays a partnership's two colours (blue+red, green+yellow).")
    calibration_id: str | None = Field(default=None, max_length=64)

    @field_validator("players")
    @classmethod
    def _colors(cls, v: dict[str, str]) -> dict[str, str]:
        bad = sorted(set(v) - set(COLORS))
        if bad:
            raise ValueError(f"unknown colours {bad}; colours are {', '.join(COLORS)}")
        for color, name in v.items():
            if len(name) > 100:
                raise ValueError(f"player name for {color} is longer than 100 characters")
        return v


class SourceIn(BaseModel):
    """A frame source for OpenCV ``VideoCapture``: a device index, a video file on the server, or a URL."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["device", "file", "url"]
    value: str | int = Field(description="Device index, server file path, or rtsp/http(s) URL.")
    loop: bool = Field(default=False, description="Restart a video file at its end.")
    hold_end_s: float = Field(default=0.0, ge=0.0, le=3600.0, description="With loop: show a file's last frame "
                              "this long before restarting.")


Color = Literal["blue", "green", "red", "yellow"]
_CORRECTION_NEEDS: dict[str, tuple[str, ...]] = {
    "wink": ("id",), "squop": ("upper", "lower"), "unsquop": ("upper", "lower"), "turn": ("color",),
    "pot_out_order": ("order",), "scene": ("scene",), "pass": (), "clear_pending": ()}


class CorrectionIn(BaseModel):
    """An umpire's correction of a tiddlywinks game (``adjudicator.tiddlywinks_game.apply_correction``).

    ``wink``: set ``center_mm``/``potted``/``off_mat``/``unplayed``/``tilt_deg`` of wink ``id``; ``squop`` /
    ``unsquop``: wink ``upper`` is (not) over ``lower``; ``turn``: ``color`` is due with ``shots_left``;
    ``pass``: the turn ends; ``clear_pending``; ``pot_out_order``; ``scene``: a whole rest state."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["wink", "squop", "unsquop", "turn", "pass", "clear_pending", "pot_out_order", "scene"]
    id: str | None = Field(default=None, max_length=64)
    center_mm: tuple[float, float] | None = None
    potted: bool | None = None
    off_mat: bool | None = None
    unplayed: bool | None = None
    tilt_deg: float | None = Field(default=None, ge=0.0, le=90.0)
    upper: str | None = Field(default=None, max_length=64)
    lower: str | None = Field(default=None, max_length=64)
    color: Color | None = None
    shots_left: int | None = Field(default=None, ge=0, le=10)
    order: list[list[Color]] | None = None
    scene: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _fields_of_kind(self) -> CorrectionIn:
        missing = [f for f in _CORRECTION_NEEDS[self.kind] if getattr(self, f) is None]
        if missing:
            raise ValueError(f"a {self.kind!r} correction needs {', '.join(missing)}")
        return self

    def to_correction(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class ShotRecord(BaseModel):
    """One record of a tiddlywinks game's log as ``tableref track --json`` prints it."""

    model_config = ConfigDict(extra="allow")
    seq: int = Field(description="Order of the record within its game, from 1.")
    created_at: float
    kind: str = Field(description="start | rest | correction | rest_error")


class GameOut(BaseModel):
    id: str
    game: str
    game_type: str
    players: dict[str, str]
    calibration_id: str | None
    status: str
    source: dict[str, Any] | None
    created_at: float
    updated_at: float
    frame_count: int


class RulingRecord(BaseModel):
    seq: int = Field(description="Order of the ruling within its game, from 1.")
    created_at: float
    frame_idx: int | None
    ruling: dict[str, Any] = Field(description="Ruling.to_dict() of the rule engine: rule, decision, ...")


class EventRecord(BaseModel):
    id: int
    created_at: float
    kind: str
    data: dict[str, Any]


class GameStateOut(BaseModel):
    game: GameOut
    state: dict[str, Any] | None = Field(description="Latest analysis document (scene, rulings, squidge_off).")
    summary: dict[str, Any] = Field(description="Per-colour tiddlies and points (TW A8 if no pot-out).")
    source_status: dict[str, Any]
    rulings: list[RulingRecord] = Field(description="The most recent rulings, oldest first.")


class FrameOut(BaseModel):
    frame_idx: int
    document: dict[str, Any]
    new_rulings: list[RulingRecord]


class DistanceOut(BaseModel):
    a: str
    b: str
    center_distance_mm: float
    gap_mm: float = Field(description="Edge-to-edge plan gap (negative when the footprints overlap).")


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str
    supported_games: list[str]
    database: str
