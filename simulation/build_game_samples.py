"""Regenerate the committed Ice Tiddly Winks and ring-marbles samples (``sample_images/ice_tiddlywinks``,
``sample_images/marbles``): each image from its own seed, so the same files come out every time.

Run from the repository root: ``python -m simulation.build_game_samples [--only ice|marbles] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from simulation.marbles import MarblesSceneSpec, generate_marbles
from simulation.pyramids import IceSceneSpec, generate_ice_tiddlywinks

HD = (1920, 1080)
ICE_SAMPLES: tuple[tuple[str, int, tuple[int, int], IceSceneSpec, tuple[float, float]], ...] = (
    # name, seed, size, what is on the table, camera tilt range (deg)
    (
        "ice_01_upright",
        101,
        HD,
        IceSceneSpec(upright=10, lying=0, standing_on_lying=0, stacked=0),
        (0.0, 10.0),
    ),
    ("ice_02_lying", 102, HD, IceSceneSpec(upright=4, lying=6, standing_on_lying=0, stacked=0), (5.0, 20.0)),
    (
        "ice_03_standing_on_lying",
        103,
        HD,
        IceSceneSpec(upright=3, lying=1, standing_on_lying=4, stacked=0),
        (10.0, 25.0),
    ),
    (
        "ice_04_stacked_and_covered",
        104,
        HD,
        IceSceneSpec(upright=3, lying=1, standing_on_lying=0, stacked=3, covered=2),
        (5.0, 25.0),
    ),
    (
        "ice_05_start_lines",
        105,
        HD,
        IceSceneSpec(upright=6, lying=2, standing_on_lying=1, stacked=1, start_lines=2),
        (0.0, 20.0),
    ),
    (
        "ice_06_oblique",
        106,
        HD,
        IceSceneSpec(upright=5, lying=2, standing_on_lying=2, stacked=1, covered=1),
        (30.0, 35.0),
    ),
    (
        "ice_07_black_white",
        107,
        HD,
        IceSceneSpec(upright=5, lying=2, standing_on_lying=1, stacked=1, colors=("black", "white")),
        (0.0, 25.0),
    ),
    (
        "ice_08_xeno",
        108,
        HD,
        IceSceneSpec(
            upright=6, lying=2, standing_on_lying=1, stacked=1, colors=("orange", "cyan", "purple", "clear")
        ),
        (0.0, 25.0),
    ),
    (
        "ice_09_rainbow",
        109,
        HD,
        IceSceneSpec(
            upright=7,
            lying=3,
            standing_on_lying=1,
            stacked=1,
            start_lines=1,
            colors=("red", "yellow", "green", "blue"),
        ),
        (0.0, 30.0),
    ),
    (
        "ice_10_crowded",
        110,
        HD,
        IceSceneSpec(upright=10, lying=4, standing_on_lying=2, stacked=2, covered=1),
        (0.0, 25.0),
    ),
    (
        "ice_11_large_4000x3000",
        111,
        (4000, 3000),
        IceSceneSpec(upright=6, lying=2, standing_on_lying=2, stacked=1, covered=1, start_lines=1),
        (10.0, 30.0),
    ),
)
MARBLE_SAMPLES: tuple[tuple[str, int, tuple[int, int], MarblesSceneSpec], ...] = (
    ("marbles_01_group49_centre", 201, HD, MarblesSceneSpec(group=49, framing="centre", ground="grass")),
    (
        "marbles_02_group49_ring",
        202,
        HD,
        MarblesSceneSpec(group=49, tolleys_off=2, framing="ring", ground="grass"),
    ),
    (
        "marbles_03_group13",
        203,
        HD,
        MarblesSceneSpec(group=13, tolleys_on=1, framing="centre", ground="earth"),
    ),
    (
        "marbles_04_group25_line",
        204,
        HD,
        MarblesSceneSpec(group=25, scribed_line=True, framing="ring", ground="pavement"),
    ),
    (
        "marbles_05_group37",
        205,
        HD,
        MarblesSceneSpec(group=37, scatter_on=3, tolleys_on=2, framing="centre", ground="grass"),
    ),
    (
        "marbles_06_midgame",
        206,
        HD,
        MarblesSceneSpec(
            scatter_on=22, scatter_off=6, tolleys_on=2, tolleys_off=1, framing="ring", ground="earth"
        ),
    ),
    (
        "marbles_07_knocked_off_edge",
        207,
        HD,
        MarblesSceneSpec(
            scatter_on=8, scatter_off=9, tolleys_on=1, tolleys_off=2, framing="edge", ground="grass"
        ),
    ),
    (
        "marbles_08_tolleys_centre",
        208,
        HD,
        MarblesSceneSpec(scatter_on=14, tolleys_on=3, scribed_line=True, framing="centre", ground="pavement"),
    ),
    (
        "marbles_09_large_4000x3000",
        209,
        (4000, 3000),
        MarblesSceneSpec(
            group=13,
            scatter_on=12,
            scatter_off=5,
            tolleys_on=2,
            tolleys_off=1,
            framing="ring",
            ground="grass",
        ),
    ),
)


def build_game_samples(root: Path, only: str = "") -> list[Path]:
    """Write every sample (image + truth JSON) under ``root``; returns the image paths."""
    written = []
    if only in ("", "ice"):
        for name, seed, size, spec, tilt in ICE_SAMPLES:
            t0 = time.perf_counter()
            jpg, _ = generate_ice_tiddlywinks(
                np.random.default_rng(seed),
                root / "ice_tiddlywinks",
                name,
                size,
                spec=spec,
                tilt_range_deg=tilt,
            )
            print(f"{jpg}  {time.perf_counter() - t0:.1f} s", flush=True)
            written.append(jpg)
    if only in ("", "marbles"):
        for name, seed, size, spec in MARBLE_SAMPLES:
            t0 = time.perf_counter()
            jpg, _ = generate_marbles(np.random.default_rng(seed), root / "marbles", name, size, spec=spec)
            print(f"{jpg}  {time.perf_counter() - t0:.1f} s", flush=True)
            written.append(jpg)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("sample_images"))
    parser.add_argument("--only", choices=("ice", "marbles"), default="")
    args = parser.parse_args(argv)
    import cv2

    cv2.setNumThreads(1)  # shared cores: the render is numpy-bound anyway
    build_game_samples(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
