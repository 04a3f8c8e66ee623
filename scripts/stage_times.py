#!/usr/bin/env python3
"""CPU time per stage of the tiddlywinks pipeline (``bench.run_pipeline``), per frame, median over frames.

Each listed stage function is wrapped, in the module that calls it, by a ``time.process_time`` timer (its own
calls nested in one another count once: the outermost); nothing in the pipeline's code is changed, and the few
hundred timer calls a frame cost well under a millisecond. One OpenCV thread, JPEG decode excluded, the first
frame run once untimed (imports, per-process caches). Each tree runs in its own subprocess (``PYTHONPATH`` = the
tree, started outside it); with two or more trees the rounds alternate their order, each frame's time is its
minimum over the rounds, and the table shows the trees side by side: the same-run comparison of a speed change.

    python scripts/stage_times.py ~/.cache/tableref/bench/tiddlywinks_3840x2160_seed101
    python scripts/stage_times.py --tree /tmp/wt-main0 --tree . --rounds 3 ~/.cache/tableref/bench/tiddlywinks_3840x2160_seed101
    python scripts/stage_times.py --profile 30 DIR   # cProfile of the frames instead (where a stage spends it)

Indented names are parts of the stage above them (included in its time); ``pipeline`` is the whole of
``run_pipeline``, ``other`` what none of the top-level stages holds.
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

#: (module whose global name the pipeline calls, that name, depth in the table). Depth 0 stages are disjoint
#: parts of ``run_pipeline``; deeper ones are parts of the nearest shallower one above them.
STAGES: tuple[tuple[str, str, int], ...] = (
    ("vision.tiddlywinks", "resolve_calibration", 0),
    ("vision.tiddlywinks", "rectify_pyramid", 0),
    ("vision.tiddlywinks", "build_colour_scene", 0),
    ("vision.colour", "_median_background", 1),
    ("vision.tiddlywinks", "detect_pot", 0),
    ("vision.tiddlywinks", "_polygon_to_ortho_mask", 0),
    ("vision.tiddlywinks", "find_candidates", 0),
    ("vision.winks", "components_with_stats", 1),
    ("vision.winks", "_votes_of_masks", 1),
    ("vision.winks", "verify_many", 1),
    ("vision.winks", "_opening_fraction", 1),
    ("vision.winks", "unexplained_by_found", 1),
    ("vision.winks", "ring_size_check", 1),
    ("vision.winks", "_two_small_from_blob", 1),
    ("vision.winks", "_merge_over_explained", 1),
    ("vision.tiddlywinks", "felt_label_rims", 0),
    ("vision.tiddlywinks", "crescent_lowers", 0),
    ("vision.tiddlywinks", "union_rim_winks", 0),
    ("vision.tiddlywinks", "felt_discs", 0),
    ("vision.tiddlywinks", "felt_rim_winks", 0),
    ("vision.tiddlywinks", "felt_core_winks", 0),
    ("vision.tiddlywinks", "split_twin_blobs", 0),
    ("vision.tiddlywinks", "refit_pile_echoes", 0),
    ("vision.tiddlywinks", "split_behind_pot", 0),
    ("vision.tiddlywinks", "tinted_felt", 0),
    ("vision.tiddlywinks", "check_sizes", 0),
    ("vision.tiddlywinks", "join_paint_cut", 0),
    ("vision.tiddlywinks", "decide_order", 0),
    ("vision.tiddlywinks", "assign_poses", 0),
    ("vision.tiddlywinks", "refine_batch", 0),
    ("vision.tiddlywinks", "refine", 0),
    ("vision.tiddlywinks", "decide_sizes_from_arcs", 0),
    ("vision.tiddlywinks", "order_new_overlaps", 0),
    ("vision.tiddlywinks", "review_order", 0),
    ("vision.tiddlywinks", "confirm_potted", 0),
    ("vision.tiddlywinks", "winks_in_pot", 0),
    ("vision.tiddlywinks", "rim_winks", 0),
    ("vision.tiddlywinks", "pot_colour_winks", 0),
    ("vision.tiddlywinks", "check_potted_sizes", 0),
    ("vision.tiddlywinks", "_finish", 0),
    ("api.analysis", "squidge_off_verdict", 0),
)

_CHILD = r"""
import cProfile, glob, importlib, json, pstats, sys, time
import cv2, numpy as np
cv2.setNumThreads(1)
from api.commands.bench import run_pipeline
frames_dir, n, stages, profile = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
paths = sorted(glob.glob(frames_dir + "/*.jpg"))[:n]
frames = [(cv2.imdecode(np.frombuffer(open(p, "rb").read(), np.uint8), cv2.IMREAD_COLOR),
           json.load(open(p[:-4] + ".json"))) for p in paths]
import api.analysis  # (run_pipeline imports it inside: loaded here so that its name can be wrapped)
acc = {}
def wrap(key, f):
    depth = [0]
    def timed(*a, **k):
        if depth[0]:
            return f(*a, **k)
        depth[0] += 1
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[key] = acc.get(key, 0.0) + time.process_time() - t
            depth[0] -= 1
    return timed
run_pipeline(*frames[0])  # imports and per-process caches, not timed
if profile:
    pr = cProfile.Profile()
    pr.enable()
    for frame, doc in frames:
        run_pipeline(frame, doc)
    pr.disable()
    st = pstats.Stats(pr, stream=sys.stderr)
    st.sort_stats("cumulative").print_stats(profile)
    st.sort_stats("tottime").print_stats(profile)
    print(json.dumps({}))
    sys.exit(0)
for mod, name, _ in stages:
    m = importlib.import_module(mod)
    if callable(getattr(m, name, None)):
        setattr(m, name, wrap(mod + "." + name, getattr(m, name)))
out = []
for frame, doc in frames:
    acc.clear()
    t = time.process_time()
    run_pipeline(frame, doc)
    acc["pipeline"] = time.process_time() - t
    out.append({k: v * 1e3 for k, v in acc.items()})
print(json.dumps(out))
"""


def run(tree: Path, frames_dir: Path, n: int, profile: int = 0) -> list[dict[str, float]]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(frames_dir), str(n), json.dumps(STAGES), str(profile)],
                         check=True, text=True, stdout=subprocess.PIPE, stderr=None if profile else subprocess.PIPE,
                         env=dict(os.environ, PYTHONPATH=str(tree)), cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, action="append",
                    help="a source tree (repeatable; default the current directory)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--frames", type=int, default=20, help="the first N photographs of the directory")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="print cProfile's top N functions (cumulative, then own time) of the first tree instead")
    ap.add_argument("frames_dir", type=Path, help="a directory of rendered photographs with truth JSON")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [Path(".")])]
    frames_dir = args.frames_dir.expanduser().resolve()
    if args.profile:
        run(trees[0], frames_dir, args.frames, args.profile)
        return 0
    per: list[list[list[dict[str, float]]]] = [[] for _ in trees]
    for r in range(args.rounds):
        order = range(len(trees)) if r % 2 == 0 else reversed(range(len(trees)))
        for i in order:
            per[i].append(run(trees[i], frames_dir, args.frames))
    keys = ["pipeline"] + [f"{m}.{n}" for m, n, _ in STAGES]
    depth = {f"{m}.{n}": d for m, n, d in STAGES}
    cols = []
    for rounds in per:
        nf = len(rounds[0])
        # per frame and stage, the minimum over the rounds (a stage a frame never reached counts 0)
        best = [{k: min(rd[f].get(k, 0.0) for rd in rounds) for k in keys} for f in range(nf)]
        for b in best:
            b["other"] = b["pipeline"] - sum(b[k] for k in keys[1:] if depth[k] == 0)
        cols.append({k: (statistics.median(b[k] for b in best), statistics.fmean(b[k] for b in best))
                     for k in keys + ["other"]})
    head = f"{'stage (median / mean ms per frame)':44s}" + "".join(f"{str(t)[-22:]:>24s}" for t in trees)
    print(head)
    for k in ["pipeline"] + keys[1:] + ["other"]:
        if all(c[k][1] == 0.0 for c in cols):
            continue
        name = ("    " * depth.get(k, 0)) + k.split(".")[-1]
        print(f"{name:44s}" + "".join(f"{c[k][0]:12.2f}{c[k][1]:12.2f}" for c in cols))
    print(f"({len(per[0][0])} frames of {frames_dir}, {args.rounds} round(s), each frame's minimum over the rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
