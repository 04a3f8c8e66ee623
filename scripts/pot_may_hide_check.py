"""Whether the winks a bench run missed are said to be possibly hidden in the pot (``Measurement.pot_may_hide``).

Usage: ``scripts/pot_may_hide_check.py BENCH_OUTPUT.txt DIR [BENCH_OUTPUT.txt DIR ...]``: for each bench output, the
images under DIR (searched recursively) that it lists with a missed wink are measured again (with the truth's
camera, as the bench does) and each missed wink counted as referred (its colour in ``pot_may_hide`` or the pot's own)
or silent, and each colour said to be possibly in the pot as right (a wink of it missed in the cup) or not.
"""

import collections
import json
import os
import re
import sys
from pathlib import Path

import cv2

from api.commands.bench import MIN_VISIBLE_PX, _match, _truth_camera
from vision.tiddlywinks import measure_tiddlywinks


def main(args: list[str]) -> None:
    tot: collections.Counter = collections.Counter()
    for run, root in zip(args[::2], args[1::2]):
        text = Path(run).read_text().split("== baseline")[0]  # the pipeline's section only
        names = set(re.findall(r"(\S+\.jpg): missed", text))
        for f in sorted(p for p in Path(root).rglob("*.jpg") if p.name in names):
            doc = json.loads(f.with_suffix(".json").read_text())
            m = measure_tiddlywinks(cv2.imread(str(f)), _truth_camera(doc))
            vis = doc["render"].get("visible_px", {})
            pieces = [p for p in doc["pieces"] if not (p.get("off_mat") and p.get("unplayed"))
                      and vis.get(p["id"], 0) >= MIN_VISIBLE_PX]
            matched = _match(pieces, m.winks)
            missed = [p for i, p in enumerate(pieces) if i not in matched]
            said = set(m.pot_may_hide) | ({m.pot_hides_color} if m.pot_hides_color else set())
            for p in missed:
                tot[f"missed {'in the cup' if p['potted'] else 'elsewhere'}, "
                    f"{'referred' if p['color'] in said else 'silent'}"] += 1
            for c in m.pot_may_hide:
                right = any(p["color"] == c and p["potted"] for p in missed)
                tot[f"colour said possibly in the pot, {'a wink of it missed there' if right else 'none missed there'}"] += 1
            print(os.path.basename(f), "missed", [(p["id"], "cup" if p["potted"] else "open") for p in missed],
                  "may_hide", list(m.pot_may_hide), "pot colour", m.pot_hides_color, flush=True)
    for k, v in sorted(tot.items()):
        print(f"{k}: {v}")


if __name__ == "__main__":
    main(sys.argv[1:])
