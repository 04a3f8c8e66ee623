"""``tableref score IMAGE --game ice-tiddlywinks``: each colour's score and a verdict for every piece.

``--calibration CAL.json`` (from ``tableref calibrate``, or a scene/truth document with a ``calibration``
block) gives the camera; without it an overhead camera is assumed and every verdict is flagged.
``--colours red,yellow`` names the players' colours. ``--start-line COLOR:x0,y0,x1,y1`` (pixels, needs a
calibration) or ``--start-line-mm COLOR:x0,y0,x1,y1`` (table mm) marks a player's start line; the stash area
is on the side away from the middle of the view. ``--json`` prints the document; ``--annotate OUT.jpg``
writes the photo with each verdict and its points.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2

from api.commands.analyze import ImageReadError, read_image
from api.ice_service import IceServiceError, annotate_ice, score_ice_photo


def load_camera(path: Path | None):
    """The camera of a calibration file: ``tableref calibrate`` output or any document with ``calibration``."""
    if path is None:
        return None
    from calibration.camera import CameraModel
    from calibration.types import TableCalibration

    data = json.loads(Path(path).read_text())
    if isinstance(data, dict) and isinstance(data.get("calibration"), dict) and "camera" in data["calibration"]:
        return CameraModel.from_dict(data["calibration"]["camera"])
    return TableCalibration.from_json(path).camera


def parse_line_arg(text: str, frame: str) -> dict:
    try:
        color, coords = text.split(":", 1)
        x0, y0, x1, y1 = (float(v) for v in coords.split(","))
    except ValueError as exc:
        raise IceServiceError(f"start line must be COLOR:x0,y0,x1,y1, got {text!r}") from exc
    return {"color": color, "p0": [x0, y0], "p1": [x1, y1], "frame": frame}


def summary_lines(doc: dict) -> list[str]:
    lines = []
    scores = doc.get("scores", {})
    lines.append("scores: " + (", ".join(f"{c} {v}" for c, v in sorted(scores.items(), key=lambda kv: -kv[1]))
                               or "none"))
    for p in doc["pieces"]:
        flag = "  FLAGGED: " + "; ".join(p.get("reasons", [])) if p["flagged"] else ""
        lines.append(f"  {p['id']}: {p['color']} {p['size']} {p['pose']} -> {p['points']} points "
                     f"({p['verdict']}, confidence {p['confidence']:.2f}){flag}")
    for r in doc.get("rulings", []):
        if not r["piece_ids"]:
            lines.append(f"[{r['rule']}] {r['decision']}: {r['explanation']}")
    if doc["calibration"]["source"] == "assumed_overhead":
        lines.append("no calibration: overhead camera assumed, every verdict flagged for a human look")
    return lines


def run_score(args: argparse.Namespace) -> int:
    frame = read_image(Path(args.image))
    camera = load_camera(args.calibration)
    lines = [parse_line_arg(t, "px") for t in args.start_line] + [
        parse_line_arg(t, "mm") for t in args.start_line_mm
    ]
    colours = [c for c in (args.colours or "").split(",") if c.strip()] or None
    doc = score_ice_photo(frame, camera, colours=colours, start_lines=lines)
    doc["image"]["path"] = str(args.image)
    if args.annotate is not None and not cv2.imwrite(str(args.annotate), annotate_ice(frame, doc)):
        raise ImageReadError(f"{args.annotate}: cannot write the annotated picture")
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("\n".join(summary_lines(doc)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("score", help="score a photo of a finished game (Ice Tiddly Winks)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("image", type=Path, metavar="IMAGE")
    p.add_argument("--game", choices=("ice-tiddlywinks",), default="ice-tiddlywinks")
    p.add_argument("--calibration", type=Path, default=None, metavar="CAL.json")
    p.add_argument("--colours", "--colors", default=None, metavar="C1,C2,...", help="the players' colours")
    p.add_argument("--start-line", action="append", default=[], metavar="COLOR:x0,y0,x1,y1",
                   help="a player's start line through two image points (pixels)")
    p.add_argument("--start-line-mm", action="append", default=[], metavar="COLOR:x0,y0,x1,y1",
                   help="a player's start line through two table points (mm)")
    p.add_argument("--json", action="store_true", help="print the scored document as JSON")
    p.add_argument("--annotate", type=Path, default=None, metavar="OUT.jpg", help="write the annotated photo")
    p.set_defaults(handler=run_score)
