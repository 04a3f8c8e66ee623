"""``tableref marbles-shot BEFORE AFTER``: score one ring-marbles shot from the photos before and after it.

BEFORE and AFTER are photos (analysed with ``--calibration CAM.json`` if given, else self-calibrated from the
ring's rim) or analysis documents (``tableref analyze --game marbles --json`` output). Prints the shot's
measurements and rulings (MB 5(d) positions 1-4, eliminations, the win); ``--annotate OUT.jpg`` writes the
after photo with the balls marked.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np


class ShotInputError(ValueError):
    """An input of ``marbles-shot`` cannot be read; the message names the file or option."""


def _load(path: Path, calibration: Path | None) -> tuple[np.ndarray | None, dict]:
    from api.marbles_service import analyze_marbles_photo

    if not path.exists():
        raise FileNotFoundError(2, "no such file", str(path))
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ShotInputError(f"{path}: not a marbles analysis document: {exc}") from None
        if not isinstance(doc, dict) or "pieces" not in doc:
            raise ShotInputError(f"{path}: not a marbles analysis document (no 'pieces')")
        return None, doc
    frame = cv2.imdecode(np.fromfile(str(path), np.uint8), cv2.IMREAD_COLOR)
    if frame is None:
        raise ShotInputError(f"{path}: not a readable image")
    return frame, analyze_marbles_photo(frame, calibration, image_path=str(path))


def run_marbles_shot(args: argparse.Namespace) -> int:
    from api.marbles_service import annotate_marbles, judge_marbles_shot, owners_from_args

    _, before = _load(Path(args.before), args.calibration)
    frame, after = _load(Path(args.after), args.calibration)
    result = judge_marbles_shot(before, after, shooter=args.shooter, owners=owners_from_args(args.owner),
                                shooter_tolley=args.shooter_tolley, foul=args.foul)
    if args.annotate is not None:
        if frame is None:
            raise ShotInputError("--annotate needs AFTER to be a photo, not a document")
        if not cv2.imwrite(str(args.annotate), annotate_marbles(frame, after)):
            raise ShotInputError(f"{args.annotate}: cannot write the annotated picture")
    if args.json:
        json.dump({**result, "before_counts": before.get("counts"), "after_counts": after.get("counts")},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    s = result["shot"]
    print(f"{s['shooter']}: {s['marbles_off']} marble(s) off ({s['marbles_on_before']} -> {s['marbles_on_after']} "
          f"on the ring); tolley {'on' if s['shooter_on_ring'] else 'off'} the ring")
    for r in result["rulings"]:
        print(f"  [{r['rule']}] {r['decision']}: {r['explanation']}")
    print("  scores: " + ", ".join(f"{k} {v}" for k, v in sorted(result["scores"].items())))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("marbles-shot", help="score a ring-marbles shot from photos before and after",
                              description="Compare the ring before and after one shot and rule on it "
                                          "(Tinsley Green rules MB 5(d)).")
    p.add_argument("before", type=Path, metavar="BEFORE", help="photo or analysis JSON before the shot")
    p.add_argument("after", type=Path, metavar="AFTER", help="photo or analysis JSON after the shot")
    p.add_argument("--calibration", type=Path, default=None, metavar="CAM.json",
                   help="camera model JSON (default: self-calibrate from the ring's rim)")
    p.add_argument("--shooter", default="shooter", help="name of the player who shot")
    p.add_argument("--owner", action="append", default=[], metavar="ID=PLAYER",
                   help="owner of a tolley resting on the ring in BEFORE (repeatable)")
    p.add_argument("--shooter-tolley", default=None, metavar="ID",
                   help="BEFORE id of the shooter's tolley when he shoots from where it rested")
    p.add_argument("--foul", choices=("fudging", "cabbaging", "blocking"), default=None)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--annotate", type=Path, default=None, metavar="OUT.jpg", help="write the annotated AFTER photo")
    p.set_defaults(handler=run_marbles_shot)
