#!/usr/bin/env python3
"""Whether a change to the tiddlywinks pipeline changes what it says: the analysis documents (pieces, pot,
rulings, squidge-off) of the same photographs from two source trees, compared.

Each tree runs in its own subprocess (``PYTHONPATH`` = the tree, started outside both trees so neither shadows
the other), with the camera of each render's truth JSON, as the bench does. Decisions (colours, sizes, squops,
potted and off-mat flags, rulings) must be equal; numbers may differ by float order only: 0.01 mm for
millimetre and centre fields, one part in a million elsewhere. Timing fields are ignored.

    git worktree add -f /tmp/wt-main main
    python scripts/analysis_diff.py --old-tree /tmp/wt-main --new-tree . sample_images/tiddlywinks/*.jpg \\
        ~/.cache/tableref/bench/tiddlywinks_3840x2160_seed101/*.jpg
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: Allowed difference of millimetre and centre fields (float order), and of every other number (relative).
MM_TOL = 0.01
REL_TOL = 1e-6

_CHILD = r"""
import json, sys
import cv2
cv2.setNumThreads(1)
from calibration.camera import CameraModel
from api.analysis import analyze_tiddlywinks_photo
out = {}
for p in sys.argv[2:]:
    truth = json.load(open(p[:-4] + ".json"))
    doc = analyze_tiddlywinks_photo(cv2.imread(p), CameraModel.from_dict(truth["calibration"]["camera"]), image_path=p)
    doc.pop("timing_ms", None)
    out[p] = doc
json.dump(out, open(sys.argv[1], "w"), sort_keys=True)
"""


def analyse(tree: Path, images: list[str], out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, "-c", _CHILD, str(out), *images], env=env, cwd=tempfile.gettempdir(),
                   check=True)
    return json.loads(out.read_text())


def differences(a, b, path: str = "") -> list[str]:
    """Every place where ``b`` departs from ``a`` beyond the tolerances."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"key {path}/{k}" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += differences(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"length {path}: {len(a)} -> {len(b)}"]
        return [d for i, (u, v) in enumerate(zip(a, b)) for d in differences(u, v, f"{path}[{i}]")]
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool) \
            and (isinstance(a, float) or isinstance(b, float)):
        tol = MM_TOL if ("center" in path or "_mm" in path) else REL_TOL * max(1.0, abs(a))
        return [] if abs(a - b) <= tol else [f"number {path}: {a} -> {b}"]
    return [] if a == b else [f"value {path}: {a!r} -> {b!r}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old-tree", type=Path, required=True, help="source tree of the code before")
    ap.add_argument("--new-tree", type=Path, default=Path("."), help="source tree of the code after (default .)")
    ap.add_argument("images", nargs="+", help="rendered photographs with their truth JSON beside them")
    args = ap.parse_args(argv)
    images = [str(Path(p).resolve()) for p in args.images]
    with tempfile.TemporaryDirectory() as tmp:
        old = analyse(args.old_tree.resolve(), images, Path(tmp) / "old.json")
        new = analyse(args.new_tree.resolve(), images, Path(tmp) / "new.json")
    found = [f"{Path(p).name}: {d}" for p in images for d in differences(old[p], new[p])]
    for line in found:
        print(line)
    print(f"{len(images)} images, {len(found)} differences beyond float order")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
