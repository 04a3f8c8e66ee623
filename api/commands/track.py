"""``tableref track VIDEO|DEVICE|URL``: follow a tiddlywinks game shot by shot; ``--replay LOG`` re-runs a log.

One JSON line per event with ``--json`` (shot number, colour that played, moved/potted/out/disturbed winks by
id, the rulings, the state after it); otherwise one short line per shot. ``--log`` writes the full game log
(JSON lines, every input and state) for ``--replay``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from geometry.types import Color, GameType


def _print_human(rec: dict[str, Any]) -> None:
    if rec["kind"] == "start":
        print(f"start: {rec['state']['due']} to play")
        return
    if rec["kind"] == "rest_error":
        print(f"frame {rec['frame_idx']}: rest state not read: {rec['error']}")
        return
    rep = rec.get("report", {})
    summ = rec.get("summary", {})
    if rec["kind"] == "correction":
        print(f"correction: {rec.get('input', {}).get('correction')} -> {summ.get('due')} due")
        return
    if rep.get("kind") != "shot":
        print(f"{rep.get('kind')}: {', '.join(rep.get('placed', [])) or '-'}")
        return
    parts = [f"shot {rep['shot']} {rep['color']}"]
    for key in ("moved", "potted", "out", "disturbed", "missing"):
        if rep.get(key):
            parts.append(f"{key} {','.join(rep[key])}")
    for r in rec.get("rulings", []):
        parts.append(f"[{r['rule']} {r['decision']}]")
    parts.append(f"-> {summ.get('due')} ({summ.get('shots_left')} shot(s))")
    if summ.get("ended"):
        parts.append(f"GAME OVER ({summ.get('end_reason')})")
    print("  ".join(parts))


def run(args: argparse.Namespace) -> int:
    from api.tracking import (
        TrackConfig,
        TruthFeed,
        apply_corrections_file,
        load_calibration,
        read_log,
        replay_log,
        shot_line,
        track_stream,
        write_jsonl,
    )

    def emit(rec: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps(shot_line(rec), separators=(",", ":")), flush=True)
        else:
            _print_human(shot_line(rec))

    if args.replay:
        records, mismatches = replay_log(read_log(args.replay))
        for rec in records:
            emit(rec)
        for m in mismatches:
            print(f"tableref: replay: {m}", file=sys.stderr)
        return 1 if mismatches else 0
    if not args.source:
        print("tableref: error: track needs a SOURCE (video file, device number or URL) or --replay LOG",
              file=sys.stderr)
        return 2
    sinks = [emit]
    if args.log:
        sinks.append(write_jsonl(args.log))

    def on_record(rec: dict[str, Any]) -> None:
        for s in sinks:
            s(rec)

    limit: float | None | str = "default"
    if args.time_limit_s is not None:
        limit = None if args.time_limit_s <= 0 else args.time_limit_s
    config = TrackConfig(first=Color(args.first) if args.first else None, game_type=GameType(args.game_type),
                         time_limit_s=limit)
    truth = TruthFeed.from_path(args.truth_json) if args.truth_json else None
    tracker = track_stream(args.source, calibration=load_calibration(args.calibration), truth=truth,
                           config=config, on_record=on_record, max_frames=args.max_frames)
    if args.correct:
        apply_corrections_file(tracker, args.correct)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("track", help="follow a tiddlywinks game shot by shot from a video or camera",
                              description=__doc__)
    p.add_argument("source", nargs="?", help="video file, camera device number or stream URL")
    p.add_argument("--calibration", help="calibration JSON (else the mat self-calibrates on each rest frame)")
    p.add_argument("--truth-json", help="rest-state truth (simulation shot-video JSON) instead of the vision "
                   "pipeline, for testing")
    p.add_argument("--first", choices=[c.value for c in Color],
                   help="squidge-off winner (plays first); default: the colour of the first shot")
    p.add_argument("--game-type", choices=[g.value for g in GameType], default="pairs")
    p.add_argument("--time-limit-s", type=float, default=None,
                   help="TW 9 time limit in seconds (default 25 min pairs / 20 min singles; 0 = none)")
    p.add_argument("--log", help="write the game log (JSON lines) here")
    p.add_argument("--replay", metavar="LOG", help="re-run a game log and print its records")
    p.add_argument("--correct", metavar="JSON", help="umpire corrections (JSON list) applied after the video")
    p.add_argument("--max-frames", type=int, default=None, help="stop after this many frames")
    p.add_argument("--json", action="store_true", help="one JSON line per event")
    p.set_defaults(handler=run)
