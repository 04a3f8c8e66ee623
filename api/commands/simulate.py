"""``tableref simulate``: render synthetic photographs (or shot videos) with exact truth JSON beside them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simulation.generate import generate_calibration, generate_tiddlywinks, generate_videos
from simulation.marbles import simulate_marbles
from simulation.pyramids import simulate_ice_tiddlywinks
from simulation.tantrix import generate_tantrix

# game -> generator ``fn(out_dir, *, count, seed, size_wh_px) -> list[Path]``; add a game by adding an entry.
GENERATORS = {
    "tiddlywinks": generate_tiddlywinks,
    "tiddlywinks-video": generate_videos,
    "calibration": generate_calibration,
    "ice-tiddlywinks": simulate_ice_tiddlywinks,
    "marbles": simulate_marbles,
    "tantrix": generate_tantrix,
}
DEFAULT_SIZES = {"tiddlywinks-video": (1280, 720)}


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1920x1080, got {text!r}") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive, got {text!r}")
    return w, h


def register(subparsers) -> None:
    p = subparsers.add_parser("simulate", help="render synthetic scenes with truth JSON",
                              description="Render synthetic photographs/videos with exact truth (same seed, same files).")
    p.add_argument("--game", choices=sorted(GENERATORS), default="tiddlywinks")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("simulated"))
    p.add_argument("--size", type=_size, default=None, help="WIDTHxHEIGHT, e.g. 1920x1080")
    p.add_argument("--samples", action="store_true",
                   help="regenerate the committed sample_images (tiddlywinks, calibration, videos, contact sheet)")
    p.set_defaults(handler=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    import cv2
    cv2.setNumThreads(1)  # the render is numpy-bound; keep OpenCV from grabbing every core
    if args.samples:
        from simulation.build_samples import build_samples
        build_samples(Path(args.out) if args.out != Path("simulated") else Path("sample_images"))
        return 0
    if args.count < 1:
        print(f"tableref: error: --count must be >= 1, got {args.count}", file=sys.stderr)
        return 2
    gen = GENERATORS[args.game]
    size = args.size or DEFAULT_SIZES.get(args.game, (1920, 1080))
    paths = gen(Path(args.out), count=args.count, seed=args.seed, size_wh_px=size)
    for path in paths:
        print(path)
    return 0
