"""``tableref tantrix-move BEFORE AFTER [--calibration CAL.json] [--json]``: the tile placed between two photos.

Each of BEFORE and AFTER is a photograph of the Tantrix, or a scene document already made from one (``.json``:
``tableref analyze --game tantrix --json`` output or a simulator truth). Prints the tile placed (number, hex,
rotation, whose hand it left when the hands are visible), every rule the move broke with its clause (TX A1:
G-2, G-4, G-5 R1-R3), and the tiles that moved or vanished between the photos (the umpire looks).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from api.commands.analyze import read_image


class MoveInputError(ValueError):
    """A BEFORE or AFTER argument is unusable; the message names it."""


def load_position(path: Path, calibration: Path | None) -> dict[str, Any]:
    """The judged scene document of a photo or of a ``.json`` scene document."""
    from api.tantrix_service import analyze_tantrix_photo, judge_document

    if path.suffix.lower() == ".json":
        if not path.exists():
            raise FileNotFoundError(2, "no such file", str(path))
        try:
            doc = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MoveInputError(f"{path}: not a readable JSON document: {exc}") from None
        if not isinstance(doc, dict) or doc.get("game") != "tantrix" or not isinstance(doc.get("tiles"), list):
            raise MoveInputError(f"{path}: not a Tantrix scene document (needs game 'tantrix' and tiles[])")
        doc.setdefault("image", {"path": str(path)})
        return judge_document(doc)
    return analyze_tantrix_photo(read_image(path), calibration, image_path=str(path))


def run_tantrix_move(args: argparse.Namespace) -> int:
    from api.tantrix_service import judge_move_documents, move_summary_lines

    before = load_position(Path(args.before), args.calibration)
    after = load_position(Path(args.after), args.calibration)
    try:
        doc = judge_move_documents(before, after)
    except (KeyError, TypeError) as exc:
        raise MoveInputError(f"a scene document lacks a field the move check needs: {exc}") from None
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("\n".join(move_summary_lines(doc)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("tantrix-move", help="the Tantrix tile placed between two photos and the rules it broke",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path, metavar="BEFORE", help="photo (or scene .json) before the move")
    p.add_argument("after", type=Path, metavar="AFTER", help="photo (or scene .json) after the move")
    p.add_argument("--calibration", type=Path, default=None, metavar="CAL.json", help="stored calibration")
    p.add_argument("--json", action="store_true", help="print the move document as JSON")
    p.set_defaults(handler=run_tantrix_move)
