"""``tableref squidge-off IMAGE``: who starts (TW 5(a)), never called inside the measurement margin."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from api.commands.analyze import analyze_image


class NoSquidgeOffError(ValueError):
    """The photograph does not show a squidge-off (one squidged wink per colour)."""


def run_squidge_off(args: argparse.Namespace) -> int:
    _, doc = analyze_image(Path(args.image), args.calibration)
    verdict = doc.get("squidge_off")
    if verdict is None:
        raise NoSquidgeOffError(f"{args.image}: no squidge-off seen (each colour needs exactly one wink out of "
                                "its corner, and at least two colours)")
    out = {"winner": verdict["winner"], "decision": verdict["decision"], "ranking": verdict["ranking"],
           "resquidge": verdict["resquidge"], "replay": verdict.get("replay", []),
           "rulings": verdict.get("rulings", []), "pot": doc["pot"], "calibration": {
               k: doc["calibration"][k] for k in ("source", "reprojection_error_mm")}}
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if out["winner"]:
        print(f"{out['winner']} wins the squidge-off and starts")
    elif out["decision"] == "too_close_to_call":
        print("too close to call: the umpire measures; if equal, "
              + " and ".join(out["resquidge"]) + " re-squidge")
    elif out["resquidge"]:
        print("tie: " + " and ".join(out["resquidge"]) + " re-squidge")
    else:
        print(f"undecided: {out['rulings'][-1]['explanation'] if out['rulings'] else ''}")
    for r in out["ranking"]:
        d = "potted" if r["potted"] else ("off the mat" if r["off_mat"] else
                                          f"{r['distance_mm']:.2f} +- {r['uncertainty_mm']:.2f} mm")
        print(f"  {r['place']}. {r['color']:<7} {d}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("squidge-off", help="who wins the squidge-off in a photograph (TW 5(a))",
                              description="Rank each colour's squidged wink by its nearest edge to the pot.")
    p.add_argument("image", type=Path, metavar="IMAGE")
    p.add_argument("--calibration", type=Path, default=None, metavar="CAL.json")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run_squidge_off)
