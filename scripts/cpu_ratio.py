#!/usr/bin/env python3
"""CPU time per frame of the tiddlywinks pipeline, two source trees alternated: the ratio a speed change claims.

On a shared machine only ratios measured in one run mean anything. Each round runs both trees, one after the
other (the order alternating), each in its own subprocess (``PYTHONPATH`` = the tree, started outside both
trees), timing ``bench.run_pipeline`` (the bench's measure + squidge-off) with ``time.process_time`` on one
OpenCV thread, JPEG decode excluded (its time is reported for the ratio to it). Per tree: each frame's minimum
over the rounds, then the median over the frames.

    git worktree add -f /tmp/wt-main main
    python scripts/cpu_ratio.py --old-tree /tmp/wt-main --rounds 2 ~/.cache/tableref/bench/tiddlywinks_3840x2160_seed101
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import glob, json, sys, time
import cv2, numpy as np
cv2.setNumThreads(1)
from api.commands.bench import run_pipeline
paths = sorted(glob.glob(sys.argv[1] + "/*.jpg"))[:int(sys.argv[2])]
frames, decode = [], []
for p in paths:
    data = open(p, "rb").read()
    t = time.process_time()
    frame = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    decode.append((time.process_time() - t) * 1e3)
    frames.append((frame, json.load(open(p[:-4] + ".json"))))
run_pipeline(*frames[0])  # imports and per-process caches, not timed
ms = []
for frame, doc in frames:
    t = time.process_time()
    run_pipeline(frame, doc)
    ms.append((time.process_time() - t) * 1e3)
print(json.dumps({"ms": ms, "decode_ms": decode}))
"""


def run(tree: Path, frames_dir: Path, n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(frames_dir), str(n)], check=True, text=True,
                         capture_output=True, env=dict(os.environ, PYTHONPATH=str(tree)), cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old-tree", type=Path, required=True)
    ap.add_argument("--new-tree", type=Path, default=Path("."))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--frames", type=int, default=9, help="the first N photographs of the directory")
    ap.add_argument("frames_dir", type=Path, help="a directory of rendered photographs with truth JSON")
    args = ap.parse_args(argv)
    trees = {"old": args.old_tree.resolve(), "new": args.new_tree.resolve()}
    per: dict[str, list[list[float]]] = {"old": [], "new": []}
    decode: list[float] = []
    for r in range(args.rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            got = run(trees[name], args.frames_dir.resolve(), args.frames)
            per[name].append(got["ms"])
            decode += got["decode_ms"]
    dec = statistics.median(decode)
    best, mean = {}, {}
    for name, rounds in per.items():
        best[name] = statistics.median(min(times) for times in zip(*rounds))
        mean[name] = statistics.fmean(min(times) for times in zip(*rounds))
        medians = ", ".join(f"{statistics.median(r):.1f}" for r in rounds)
        print(f"{name} ({trees[name]}): {best[name]:.1f} ms per frame = {best[name] / dec:.2f} x JPEG decode "
              f"(per-round medians {medians} ms)")
    print(f"old / new = {best['old'] / best['new']:.3f} ({len(per['old'][0])} frames, {args.rounds} rounds, "
          f"JPEG decode median {dec:.1f} ms)")
    print(f"means over the frames (each its minimum over the rounds): old {mean['old']:.1f}, new {mean['new']:.1f} ms, "
          f"old / new = {mean['old'] / mean['new']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
