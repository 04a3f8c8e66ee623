"""``tableref marbles-drop IMAGE``: who plays first in ring marbles, from a photo of the dropped tolleys and the
line scribed in the sand (MB 9(f)): each tolley's distance to the line, closest first, or 'too close to call'
and a re-drop of the tied.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def run_marbles_drop(args: argparse.Namespace) -> int:
    import cv2

    from api.commands.analyze import read_image
    from api.marbles_drop import annotate_drop, judge_drop_photo
    from api.marbles_service import owners_from_args

    frame = read_image(Path(args.image))
    doc = judge_drop_photo(frame, args.calibration, owners=owners_from_args(args.owner),
                           team_match=not args.individual, image_path=str(args.image))
    if args.annotate is not None and not cv2.imwrite(str(args.annotate), annotate_drop(frame, doc)):
        raise OSError(f"{args.annotate}: cannot write the annotated picture")
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    line = doc["scribed_line"]
    print(f"scribed line: {line['length_mm']:.0f} mm seen, offset known to {line['offset_sigma_mm']:.1f} mm")
    for d in doc["drops"]:
        print(f"  {d['player']}: {d['distance_mm']:.1f} mm from the line (± {d['sigma_mm']:.1f})")
    for r in doc["rulings"]:
        print(f"[{r['rule']}] {r['decision']}: {r['explanation']}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("marbles-drop", help="who plays first: tolleys dropped at the scribed line (marbles)",
                              description=__doc__)
    p.add_argument("image", type=Path, metavar="IMAGE", help="photo of the ring after the captains' drop")
    p.add_argument("--calibration", type=Path, default=None, metavar="CAM.json",
                   help="camera model JSON (default: self-calibrate from the ring's rim)")
    p.add_argument("--owner", action="append", default=[], metavar="ID=PLAYER",
                   help="whose tolley each one is (repeatable; default: the tolley ids)")
    p.add_argument("--individual", action="store_true",
                   help="an individual match: every player drops and plays in order of distance (MB I-3)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--annotate", type=Path, default=None, metavar="OUT.jpg",
                   help="write the photo with the line and each distance drawn")
    p.set_defaults(handler=run_marbles_drop)
