#!/usr/bin/env python3
"""Pose error of the tilted (upper) winks of rendered photographs against their truth JSON: centre (mm, and
along the true tilt's azimuth), tilt (deg) and height (mm), each true wink tilted over 1 deg matched to the
nearest measured wink of its colour within 6 mm. Run from a tree's root with ``PYTHONPATH`` set to it:

    PYTHONPATH=. python scripts/upper_pose_error.py ~/.cache/tableref/bench/tiddlywinks_*/*_squops.jpg
"""

from __future__ import annotations

import argparse
import json
import math

import cv2
import numpy as np

from calibration.camera import CameraModel
from vision.tiddlywinks import measure_tiddlywinks

MIN_TILT_DEG = 1.0
MATCH_MM = 6.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("images", nargs="+", help="rendered photographs with their truth JSON beside them")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    rows = []
    for p in args.images:
        truth = json.load(open(p[:-4] + ".json"))
        tilted = [w for w in truth["pieces"] if w.get("tilt_deg", 0.0) > MIN_TILT_DEG and not w["potted"]]
        if not tilted:
            continue
        m = measure_tiddlywinks(cv2.imread(p), CameraModel.from_dict(truth["calibration"]["camera"]))
        for t in tilted:
            c = np.array(t["center_mm"])
            near = [w for w in m.winks if not w.potted and w.color == t["color"]]
            w = min(near, key=lambda w: float(np.linalg.norm(np.array(w.center_mm) - c)), default=None)
            if w is None or float(np.linalg.norm(np.array(w.center_mm) - c)) > MATCH_MM:
                print(f"{p.split('/')[-1]:28s} {t['id']:10s} not found")
                continue
            d = np.array(w.center_mm) - c
            a = math.radians(t["tilt_azimuth_deg"])
            rows.append((float(np.linalg.norm(d)), w.tilt_deg - t["tilt_deg"], w.z_mm - t["z_mm"]))
            print(f"{p.split('/')[-1]:28s} {t['id']:10s} centre {rows[-1][0]:.2f} mm (along "
                  f"{float(d @ [math.cos(a), math.sin(a)]):+.2f}) tilt {w.tilt_deg:5.1f} (true {t['tilt_deg']:5.1f}) "
                  f"z {w.z_mm:.2f} (true {t['z_mm']:.2f})")
    if rows:
        e, dt, dz = (np.array(x) for x in zip(*rows))
        print(f"{len(rows)} winks: centre median {np.median(e):.3f} mean {e.mean():.3f} mm; tilt |error| median "
              f"{np.median(np.abs(dt)):.2f} mean {np.abs(dt).mean():.2f} bias {dt.mean():+.2f} deg; height |error| "
              f"mean {np.abs(dz).mean():.3f} mm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
