"""Regenerate the committed Tantrix samples (``sample_images/tantrix``): six photographs with truth, each from
its own seed and fixed choices, so the same files come out every time.

Run from the repository root: ``python -m simulation.tantrix_samples [OUT_DIR]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import cv2

from simulation.tantrix import render_tantrix_item

SAMPLE_SEED = 2026
HD = (1920, 1080)
JPEG_QUALITY = 84  # six 1080p photographs and their truth stay under 3 MB
# name -> the scene choices it shows (render_tantrix_item options)
SAMPLES: tuple[tuple[str, dict], ...] = (
    ("tantrix_01_small_hands", dict(n_tiles=11, hands=True, illegal=False, colorblind=False, tilt_deg=12.0)),
    ("tantrix_02_big_board", dict(n_tiles=56, hands=False, illegal=False, colorblind=False, tilt_deg=6.0)),
    ("tantrix_03_mid_hands_mats", dict(n_tiles=30, hands=True, illegal=False, colorblind=False,
                                       hand_mats=True, tilt_deg=22.0)),
    ("tantrix_04_colorblind", dict(n_tiles=24, hands=True, illegal=False, colorblind=True, tilt_deg=15.0)),
    ("tantrix_05_tilt35", dict(n_tiles=40, hands=False, illegal=False, colorblind=False, tilt_deg=35.0)),
    ("tantrix_06_illegal_blocked", dict(n_tiles=20, hands=True, illegal=True, defect="blocked_space",
                                        colorblind=False, tilt_deg=18.0)),
)


def build_tantrix_samples(out_dir: Path = Path("sample_images/tantrix"), *,
                          verbose: bool = True) -> list[Path]:
    """Write every sample (``<name>.jpg`` + ``.json``) into ``out_dir``; returns the image paths."""
    out_dir = Path(out_dir)
    for old in out_dir.glob("tantrix_*"):
        old.unlink()
    t0 = time.time()
    paths = []
    for i, (name, options) in enumerate(SAMPLES):
        paths.append(render_tantrix_item(out_dir, seed=SAMPLE_SEED, index=i, size_wh_px=HD, name=name,
                                         jpeg_quality=JPEG_QUALITY, **options))
        if verbose:
            print(f"[{time.time() - t0:6.1f}s] {paths[-1]}", flush=True)
    return paths


if __name__ == "__main__":
    cv2.setNumThreads(1)
    build_tantrix_samples(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("sample_images/tantrix"))
