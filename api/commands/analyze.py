"""``tableref analyze IMAGE --game tiddlywinks|marbles|dominoes|tantrix``: the scene and rulings in one photograph.

``--json`` prints the analysis document (pieces, pot, mat, calibration, rulings, squidge_off); without it a
short human summary. ``--calibration CAL.json`` uses a stored calibration (``tableref calibrate``), otherwise
the camera self-calibrates from the mat. ``--annotate OUT.jpg`` writes the umpire's picture.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np


class ImageReadError(ValueError):
    """The image file cannot be decoded; the message names the file."""


def read_image(path: Path) -> np.ndarray:
    if not path.exists():
        raise FileNotFoundError(2, "no such file", str(path))
    data = np.fromfile(str(path), np.uint8)
    frame = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if frame is None:
        raise ImageReadError(f"{path}: not a readable image")
    return frame


def load_calibration(path: Path | None):
    if path is None:
        return None
    from calibration.types import TableCalibration
    return TableCalibration.from_json(path)


def analyze_image(path: Path, calibration_path: Path | None, game: str = "tiddlywinks",
                  players: str | None = None) -> tuple[np.ndarray, dict]:
    frame = read_image(path)
    if game == "tantrix":
        from api.tantrix_service import analyze_tantrix_photo
        return frame, analyze_tantrix_photo(frame, calibration_path, image_path=str(path), players=players)
    if players is not None:
        raise ImageReadError("--players is for --game tantrix")
    if game == "marbles":
        from api.marbles_service import analyze_marbles_photo
        return frame, analyze_marbles_photo(frame, calibration_path, image_path=str(path))
    if game == "dominoes":
        from api.dominoes_service import analyze_dominoes_photo
        return frame, analyze_dominoes_photo(frame, calibration_path, image_path=str(path))
    if game != "tiddlywinks":
        raise ImageReadError(f"game {game!r} has no photo analysis (tiddlywinks, marbles, dominoes, tantrix; "
                             "Ice Tiddly Winks: tableref score)")
    from api.analysis import analyze_tiddlywinks_photo
    doc = analyze_tiddlywinks_photo(frame, load_calibration(calibration_path), image_path=str(path))
    return frame, doc


def summary_lines(doc: dict[str, Any]) -> list[str]:
    pieces = doc.get("pieces", [])
    cal = doc.get("calibration", {})
    lines = [f"{len(pieces)} winks; pot at ({doc['pot']['center_mm'][0]:.1f}, {doc['pot']['center_mm'][1]:.1f}) mm; "
             f"calibration {cal.get('source')} ({cal.get('reprojection_error_mm', 0):.2f} mm)"]
    by_color: dict[str, int] = {}
    for p in pieces:
        by_color[p["color"]] = by_color.get(p["color"], 0) + 1
    lines.append("  " + ", ".join(f"{c} {n}" for c, n in sorted(by_color.items())))
    potted = [p["id"] for p in pieces if p.get("potted")]
    if potted:
        lines.append("  potted: " + ", ".join(potted))
    for upper, lower in doc.get("squops", []):
        lines.append(f"  squop: {upper} over {lower}")
    for a, b, conf in doc.get("undecided_orders", []):
        lines.append(f"  undecided order: {a} / {b} (confidence {conf:.2f}) - umpire looks (TW I-13)")
    for r in doc.get("rulings", []):
        lines.append(f"  [{r['rule']}] {r['decision']}: {r.get('explanation', '')}")
    so = doc.get("squidge_off")
    if so:
        lines.append(f"  squidge-off: {so['decision']}" + (f", {so['winner']} starts" if so.get("winner") else ""))
    return lines


def run_analyze(args: argparse.Namespace) -> int:
    frame, doc = analyze_image(Path(args.image), args.calibration, args.game, getattr(args, "players", None))
    if args.annotate is not None:
        if args.game == "tantrix":
            from api.tantrix_overlay import annotate_tantrix as annotate
        elif args.game == "marbles":
            from api.marbles_service import annotate_marbles as annotate
        elif args.game == "dominoes":
            from api.dominoes_service import annotate_dominoes as annotate
        else:
            from api.overlay import annotate_tiddlywinks as annotate
        out = annotate(frame, doc)
        if not cv2.imwrite(str(args.annotate), out):
            raise ImageReadError(f"{args.annotate}: cannot write the annotated picture")
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.game == "marbles":
        from api.marbles_service import summary_lines as marbles_summary
        print("\n".join(marbles_summary(doc)))
    elif args.game == "dominoes":
        from api.dominoes_service import summary_lines as dominoes_summary
        print("\n".join(dominoes_summary(doc)))
    elif args.game == "tantrix":
        from api.tantrix_service import summary_lines as tantrix_summary
        print("\n".join(tantrix_summary(doc)))
    else:
        print("\n".join(summary_lines(doc)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("analyze", help="find the pieces in a photograph and rule on them",
                              description="Detect mat, pot and winks in IMAGE, measure them in table mm and "
                                          "print the scene with its rulings.")
    p.add_argument("image", type=Path, metavar="IMAGE")
    p.add_argument("--game", choices=("tiddlywinks", "marbles", "dominoes", "tantrix"), default="tiddlywinks")
    p.add_argument("--calibration", type=Path, default=None, metavar="CAL.json",
                   help="stored calibration (default: self-calibrate from the mat)")
    p.add_argument("--json", action="store_true", help="print the analysis document as JSON")
    p.add_argument("--annotate", type=Path, default=None, metavar="OUT.jpg", help="write the umpire's picture")
    p.add_argument("--players", default=None, metavar="COLOUR,COLOUR",
                   help="tantrix: the colours of player A (hand nearest the image bottom) and B, e.g. red,yellow")
    p.set_defaults(handler=run_analyze)
