"""Regenerate the committed ``sample_images``: tiddlywinks photographs by rig, each rig's ChArUco calibration
frames, three shot videos and a contact sheet.

    python -m simulation.build_samples [OUT_ROOT]      (or: tableref simulate --samples)

Deterministic: the same code writes byte-identical files. Only the directories this script owns are cleared
(``tiddlywinks/``, ``calibration/``, ``videos/``, ``contact_sheet.jpg``).
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from simulation.generate import Rig, generate_calibration, make_rig, render_tiddlywinks_item
from simulation.shot_video import render_shot_video
from simulation.tiddlywinks_scenes import random_scene

SAMPLE_SEED = 2026
HD = (1920, 1080)
UHD = (3840, 2160)
VIDEO_SIZE = (1280, 720)
JPEG_QUALITY_HD = (82, 90)
JPEG_QUALITY_UHD = (80, 84)
# rig name, size, mat felt, scene kinds photographed with it.
PLAN: tuple[tuple[str, tuple[int, int], str, tuple[str, ...]], ...] = (
    ("rigA", HD, "green", ("squidge_off", "squops", "potted", "edges", "play")),
    ("rigB", HD, "grey", ("squidge_off", "squops", "potted", "unplayed", "play")),
    ("rigC", HD, "beige", ("squidge_off", "squops", "edges", "unplayed", "play")),
    ("rigD", HD, "green", ("squidge_off", "squops", "play", "potted", "edges")),
    ("rigE", UHD, "green", ("squops", "potted", "squidge_off")),
)
VIDEO_MATS = ("green", "beige", "grey")
CALIBRATION_FRAMES = {HD: 4, UHD: 3, VIDEO_SIZE: 3}
VIDEO_OUTCOMES = ("pot", "knock", "off")


def _rig(name: str, index: int, size: tuple[int, int], mat_color: str) -> Rig:
    return make_rig(name, SAMPLE_SEED * 100 + index, size, mat_color=mat_color)


def contact_sheet(image_paths: list[Path], out_path: Path, *, thumb_wh: tuple[int, int] = (320, 180),
                  columns: int = 6) -> None:
    """A grid of small thumbnails with their names, for the README."""
    tw_, th_ = thumb_wh
    rows = (len(image_paths) + columns - 1) // columns
    sheet = np.full((rows * (th_ + 18), columns * tw_, 3), 30, np.uint8)
    for k, p in enumerate(image_paths):
        img = cv2.imread(str(p))
        thumb = cv2.resize(img, thumb_wh, interpolation=cv2.INTER_AREA)
        r, c = divmod(k, columns)
        y, x = r * (th_ + 18), c * tw_
        sheet[y:y + th_, x:x + tw_] = thumb
        cv2.putText(sheet, p.stem[:44], (x + 4, y + th_ + 13), cv2.FONT_HERSHEY_SIMPLEX, 0.38, (230, 230, 230), 1,
                    cv2.LINE_AA)
    cv2.imwrite(str(out_path), sheet, [int(cv2.IMWRITE_JPEG_QUALITY), 85])


def build_samples(root: Path = Path("sample_images"), *, verbose: bool = True) -> list[Path]:
    root = Path(root)
    for sub in ("tiddlywinks", "calibration", "videos"):
        if (root / sub).exists():
            shutil.rmtree(root / sub)
    written: list[Path] = []
    tw_paths: list[Path] = []
    t0 = time.time()
    for ri, (rig_name, size, mat, kinds) in enumerate(PLAN):
        rig = _rig(rig_name, ri, size, mat)
        q = JPEG_QUALITY_UHD if size == UHD else JPEG_QUALITY_HD
        for k, kind in enumerate(kinds):
            rng = np.random.default_rng([SAMPLE_SEED, ri, k])
            scene = random_scene(rng, kind)
            p = render_tiddlywinks_item(root / "tiddlywinks", f"{rig_name}_{k:02d}_{kind}", scene, rig, rng,
                                        kind=kind, jpeg_quality_range=q)
            tw_paths.append(p)
            if verbose:
                print(f"[{time.time() - t0:6.1f}s] {p}", flush=True)
        written += generate_calibration(root / "calibration" / rig_name, count=CALIBRATION_FRAMES[size],
                                        seed=SAMPLE_SEED * 100 + ri, rig=rig, jpeg_quality_range=q)
        if verbose:
            print(f"[{time.time() - t0:6.1f}s] calibration/{rig_name}", flush=True)
    for vi, outcome in enumerate(VIDEO_OUTCOMES):
        rig = _rig(f"video{vi}", 10 + vi, VIDEO_SIZE, VIDEO_MATS[vi])
        p = render_shot_video(root / "videos", f"shot_{vi:02d}_{outcome}", rig,
                              np.random.default_rng([SAMPLE_SEED, 100 + vi]), outcome=outcome)
        written.append(p)
        written += generate_calibration(root / "calibration" / rig.name, count=CALIBRATION_FRAMES[VIDEO_SIZE],
                                        seed=SAMPLE_SEED * 100 + 10 + vi, rig=rig, jpeg_quality_range=JPEG_QUALITY_HD)
        if verbose:
            print(f"[{time.time() - t0:6.1f}s] {p}", flush=True)
    contact_sheet(tw_paths, root / "contact_sheet.jpg")
    return tw_paths + written + [root / "contact_sheet.jpg"]


if __name__ == "__main__":
    cv2.setNumThreads(1)
    build_samples(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("sample_images"))
