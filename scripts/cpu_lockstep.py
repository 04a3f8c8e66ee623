#!/usr/bin/env python3
"""CPU time per frame of the tiddlywinks pipeline, two or more source trees run at the same time, frame by frame.

``cpu_ratio.py`` runs the trees one after the other: on a machine whose load swings (tens of processes on two
cores) a round of one tree can meet another load than the other's, and a change of a few per cent drowns. Here
every tree has its own subprocess (``PYTHONPATH`` = the tree, started outside it), all given the same frame at
once and waited for, so each frame of each tree meets the same load. ``time.process_time`` around
``bench.run_pipeline`` (and around ``rectify_pyramid`` and ``build_colour_scene``), one OpenCV thread, JPEG decode
excluded, the first frame run once untimed. Per tree: each frame's minimum over the rounds, then the median and
mean over the frames; the first tree's over each other's.

    python scripts/cpu_lockstep.py --tree /tmp/wt-main0 --tree . --rounds 3 ~/.cache/tableref/bench/tiddlywinks_3840x2160_seed101
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
import vision.tiddlywinks as T
acc = {}
def wrap(name):
    f = getattr(T, name)
    def timed(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[name] = acc.get(name, 0.0) + time.process_time() - t
    setattr(T, name, timed)
for name in ("rectify_pyramid", "build_colour_scene"):
    wrap(name)
paths = sorted(glob.glob(sys.argv[1] + "/*.jpg"))[:int(sys.argv[2])]
frames = [(cv2.imdecode(np.frombuffer(open(p, "rb").read(), np.uint8), cv2.IMREAD_COLOR),
           json.load(open(p[:-4] + ".json"))) for p in paths]
run_pipeline(*frames[0])  # imports and per-process caches, not timed
print(len(frames), flush=True)
for line in sys.stdin:
    acc.clear()
    t = time.process_time()
    run_pipeline(*frames[int(line)])
    ms = (time.process_time() - t) * 1e3
    print(json.dumps([ms, acc.get("rectify_pyramid", 0.0) * 1e3, acc.get("build_colour_scene", 0.0) * 1e3]), flush=True)
"""

_COLUMNS = ("pipeline", "rectify_pyramid", "build_colour_scene")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, action="append", required=True, help="a source tree (two or more)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--frames", type=int, default=20, help="the first N photographs of the directory")
    ap.add_argument("frames_dir", type=Path, help="a directory of rendered photographs with truth JSON")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in args.tree]
    frames_dir = str(args.frames_dir.expanduser().resolve())
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, frames_dir, str(args.frames)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(t)),
                              cwd=tempfile.gettempdir()) for t in trees]
    n = min(int(p.stdout.readline()) for p in procs)
    got: list[list[list[list[float]]]] = [[[] for _ in range(n)] for _ in trees]  # tree, frame, round, column
    for _ in range(args.rounds):
        for i in range(n):
            for p in procs:
                p.stdin.write(f"{i}\n")
                p.stdin.flush()
            for k, p in enumerate(procs):
                got[k][i].append(json.loads(p.stdout.readline()))
    for p in procs:
        p.stdin.close()
        p.wait()
    best = [[[min(r[c] for r in frame) for frame in per] for c in range(len(_COLUMNS))] for per in got]
    for t, cols in zip(trees, best):
        print(f"{t}: " + " | ".join(f"{name} median {statistics.median(v):.2f} mean {statistics.fmean(v):.2f} ms"
                                    for name, v in zip(_COLUMNS, cols)))
    base = best[0][0]
    for t, cols in zip(trees[1:], best[1:]):
        print(f"pipeline {trees[0]} / {t}: medians {statistics.median(base) / statistics.median(cols[0]):.3f}, "
              f"means {statistics.fmean(base) / statistics.fmean(cols[0]):.3f}, per-frame ratios' median "
              f"{statistics.median(a / b for a, b in zip(base, cols[0])):.3f} ({n} frames, {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
