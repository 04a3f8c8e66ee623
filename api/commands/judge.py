"""``tableref judge SCENE.json``: rulings for a tiddlywinks scene in table millimetres (no camera needed)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from adjudicator.tiddlywinks import adjudicate, judge_squidge_off
from adjudicator.types import AdjudicatorError
from api.schemas import JudgeOutput, RulingOut, SceneDocument, SquidgeOffOut
from geometry.records import scene_from_document
from geometry.types import GeometryError


class SceneFileError(ValueError):
    """The scene file cannot be read or does not match the scene schema; the message names the field."""


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"


def load_scene_document(path: Path) -> SceneDocument:
    """Parse and validate a scene file; every problem becomes a :class:`SceneFileError` naming the field."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SceneFileError(
            f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except UnicodeDecodeError:
        raise SceneFileError(f"{path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise SceneFileError(f"{path}: cannot read: {exc.strerror}") from None
    if not isinstance(raw, dict):
        raise SceneFileError(f"{path}: a scene document is a JSON object, got {type(raw).__name__}")
    try:
        return SceneDocument.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise SceneFileError(f"{path}: field {_field_path(first['loc'])}: {first['msg']}{more}") from None


def judge_document(doc: SceneDocument) -> dict[str, Any]:
    """The judge output for a validated document: scene with derived states, rulings, squidge-off verdict."""
    scene = scene_from_document(doc.to_record())
    out: dict[str, Any] = {"scene": SceneDocument.from_domain(scene, kind=doc.kind)}
    if doc.kind == "squidge-off":
        verdict = judge_squidge_off(scene)
        out["rulings"] = [RulingOut.from_domain(r) for r in verdict.rulings]
        out["squidge_off"] = SquidgeOffOut.from_domain(verdict)
    else:
        out["rulings"] = [RulingOut.from_domain(r) for r in adjudicate(scene)]
    checked = JudgeOutput(**out)
    dumped: dict[str, Any] = {
        "scene": checked.scene.model_dump(mode="json", exclude_none=True),
        "rulings": [r.model_dump(mode="json") for r in checked.rulings],
    }
    if checked.squidge_off is not None:
        dumped["squidge_off"] = checked.squidge_off.model_dump(mode="json")
    return dumped


def run_judge(args: argparse.Namespace) -> int:
    try:
        result = judge_document(load_scene_document(Path(args.scene)))
    except (SceneFileError, GeometryError, AdjudicatorError) as exc:
        print(f"tableref: error: {exc}", file=sys.stderr)
        return 2
    json.dump(result, sys.stdout, indent=2 if args.pretty else None)
    sys.stdout.write("\n")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "judge",
        help="rule on a tiddlywinks scene given in table millimetres",
        description="Read a scene document (JSON, table mm) and print its rulings as JSON.",
    )
    p.add_argument("scene", metavar="SCENE.json", help="scene document (see schemas/scene.schema.json)")
    p.add_argument("--pretty", action="store_true", help="indent the JSON output")
    p.set_defaults(handler=run_judge)
