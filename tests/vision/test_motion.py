"""The motion gate on synthetic frame sequences: shot boundaries come out exactly where the frames change."""

from __future__ import annotations

import numpy as np
import pytest

from vision.motion import MotionGate, MotionParams, split_frames

H, W = 270, 480  # small frames keep the test fast; the gate shrinks anyway


def background(rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[0:H, 0:W]
    base = (90 + 40 * np.sin(xx / 37.0) * np.cos(yy / 23.0)).astype(np.float32)
    return np.dstack([base * 0.6, base, base * 0.8])


def frame(base: np.ndarray, rng: np.random.Generator, blobs=(), dots=()) -> np.ndarray:
    """``blobs``: (x, y, r) hand-sized discs; ``dots``: (x, y, r) wink-sized discs; plus sensor noise."""
    f = base.copy()
    yy, xx = np.mgrid[0:H, 0:W]
    for x, y, r in blobs:
        f[(xx - x) ** 2 + (yy - y) ** 2 < r * r] = (150, 170, 210)
    for x, y, r in dots:
        f[(xx - x) ** 2 + (yy - y) ** 2 < r * r] = (30, 30, 200)
    f += rng.normal(0, 2.0, f.shape).astype(np.float32)
    return np.clip(f, 0, 255).astype(np.uint8)


def shot_sequence(rng, segments):
    """Frames for a list of (kind, n): 'rest' frames (dot at its current place), 'hand' frames (a moving
    hand-sized blob), 'hold' frames (the hand still on the mat); each hand segment moves the dot once."""
    base = background(rng)
    dot = (100.0, 100.0, 4)
    frames = []
    for kind, n in segments:
        for k in range(n):
            if kind == "rest":
                frames.append(frame(base, rng, dots=[dot]))
            elif kind == "hand":
                frames.append(frame(base, rng, blobs=[(40 + 12 * k, 200 - 5 * k, 45)], dots=[dot]))
            elif kind == "hold":
                frames.append(frame(base, rng, blobs=[(200, 150, 45)], dots=[dot]))
        if kind == "hand":
            dot = (dot[0] + 60, dot[1] + 20, 4)
    return frames


def boundaries(segments):
    """Expected (shot_start, rest start) frame indices from the segment list."""
    out, i, start = [], 0, None
    for kind, n in segments:
        if kind in ("hand", "hold") and start is None:
            start = i
        if kind == "rest" and start is not None:
            out.append((start, i))
            start = None
        i += n
    return out


@pytest.mark.parametrize("segments", [
    [("rest", 12), ("hand", 15), ("rest", 15)],
    [("rest", 8), ("hand", 10), ("rest", 12), ("hand", 6), ("rest", 10)],
    # A hand held still on the mat for longer than the quiet window does not end the shot.
    [("rest", 8), ("hand", 6), ("hold", 12), ("hand", 6), ("rest", 12)],
])
def test_shot_boundaries_exact(segments):
    rng = np.random.default_rng(6)
    frames = shot_sequence(rng, segments)
    events = split_frames(frames, MotionParams.for_fps(15.0))
    assert events[0].kind == "rest" and events[0].initial and events[0].start_idx == 0
    got = []
    start = None
    for ev in events[1:]:
        if ev.kind == "shot_start":
            start = ev.frame_idx
        else:
            got.append((start, ev.start_idx))
            start = None
    assert got == boundaries(segments)


def test_noise_and_slow_light_drift_start_no_shot():
    rng = np.random.default_rng(7)
    base = background(rng)
    frames = [np.clip(frame(base, rng).astype(np.float32) * (1 + 0.002 * k), 0, 255).astype(np.uint8)
              for k in range(80)]
    events = split_frames(frames, MotionParams.for_fps(15.0))
    assert [e.kind for e in events] == ["rest"]


def test_mat_mask_ignores_motion_outside():
    rng = np.random.default_rng(8)
    base = background(rng)
    frames = [frame(base, rng) for _ in range(8)]
    frames += [frame(base, rng, blobs=[(440 - 3 * k, 30, 30)]) for k in range(10)]  # top right only
    frames += [frame(base, rng) for _ in range(8)]
    mat = np.array([[0, 100], [300, 100], [300, 269], [0, 269]], float)
    assert [e.kind for e in split_frames(frames, MotionParams.for_fps(15.0), mat)] == ["rest"]
    assert "shot_start" in [e.kind for e in split_frames(frames, MotionParams.for_fps(15.0))]


def test_gate_accepts_any_frame_size_and_grey():
    gate = MotionGate(MotionParams())
    grey = np.full((1080, 1920), 100, np.uint8)
    assert [e.kind for i in range(6) for e in gate.update(grey, i)] == ["rest"]
