"""``tableref dominoes-hands IMAGE... [--players N]``: each remaining hand's pips and who wins a blocked hand.

One photo per hand (the tiles face up), or one photo of every hand with ``--region NAME=X0,Y0,X1,Y1`` per player
(each hand laid in its marked region, a box in the photo's pixels; a tile in no region is listed and may be any
player's). Each tile is read (an unreadable or face-down tile is never guessed: the
hand's total is then unknown, and the result UNDECIDED if that tile could change it); the lowest pip count wins,
equal lowest share (DM A3, DM I-4). ``--players N`` checks there is one photo per player; with ``--boneyard K``
too, the deal is checked (DM Am-Deal / Br-Deal). ``--json`` prints the document.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from api.commands.analyze import read_image
from api.dominoes_service import DominoesInputError, parse_region, settle_hands, settle_hands_in_regions


def summary_lines(doc: dict) -> list[str]:
    lines = []
    for h in doc["hands"]:
        tiles = ", ".join("?" if t is None else t for t in h["tiles"]) or "no tiles"
        total = h["pips"] if h["pips"] is not None else f"at least {h['known_pips']} ({h['unread']} unread)"
        lines.append(f"{h['player']}: {tiles} -> {total} pips")
    for o in doc.get("outside_regions", []):
        lines.append(f"in no player's region: {o['tile'] or '?'} at pixel {o['center_px']}")
    for r in doc["rulings"]:
        lines.append(f"[{r['rule']}] {r['decision']}: {r['explanation']}")
    return lines


class HandsArgumentError(ValueError):
    """A bad command-line value; the message names it."""


def run_dominoes_hands(args: argparse.Namespace) -> int:
    if args.players is not None and args.players < 2:
        raise HandsArgumentError(f"--players must be at least 2, got {args.players}")
    if args.region:
        if len(args.images) != 1:
            raise DominoesInputError(f"--region marks hands in one photo, but {len(args.images)} photos were given")
        regions = [parse_region(r) for r in args.region]
        if args.players is not None and args.players != len(regions):
            raise DominoesInputError(f"{args.players} players but {len(regions)} hand regions: mark one per player")
        path = args.images[0]
        doc = settle_hands_in_regions(str(path), read_image(Path(path)), regions, variant=args.variant,
                                      max_pips=args.set, boneyard=args.boneyard)
    else:
        frames = [(str(p), read_image(Path(p))) for p in args.images]
        doc = settle_hands(frames, players=args.players, variant=args.variant, max_pips=args.set,
                           boneyard=args.boneyard)
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("\n".join(summary_lines(doc)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("dominoes-hands", help="pip totals of the remaining hands and the winner (dominoes)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE",
                   help="one photo per hand, or one photo of all hands with --region")
    p.add_argument("--region", action="append", default=[], metavar="NAME=X0,Y0,X1,Y1",
                   help="a player's hand region in the one photo (pixels); once per player")
    p.add_argument("--players", type=int, default=None, help="number of players (one photo each)")
    p.add_argument("--variant", choices=("british", "american"), default="british")
    p.add_argument("--set", type=int, choices=(6, 9, 12), default=6, help="double-six, -nine or -twelve")
    p.add_argument("--boneyard", type=int, default=None, help="tiles left unused, to check the deal")
    p.add_argument("--json", action="store_true", help="print the document as JSON")
    p.set_defaults(handler=run_dominoes_hands)
