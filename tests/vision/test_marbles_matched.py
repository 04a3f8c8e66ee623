"""Faint single balls found by the disc matched filter, and the kind confidence from a measured size."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geometry.marbles import MARBLE_DIAMETER_MM, MARBLE_TOLLEY_SPLIT_MM, TOLLEY_MAX_DIAMETER_MM
from vision.marbles import DEFAULT_PARAMS, _kind_confidence, _matched_filter_singles

MARBLE_PX = 9.0
MM_PER_PX = MARBLE_DIAMETER_MM / MARBLE_PX
POSITION_TOL_MM = 1.5  # well under a marble's radius (6.35 mm)


def _surface(rng: np.random.Generator, shape=(240, 240)) -> np.ndarray:
    """Sand's colour departure from its local median: positive, noisy, about 2 units typical."""
    return np.abs(rng.normal(0.0, 2.5, shape)).astype(np.float32)


def _disc(mag: np.ndarray, center_px, radius_px: float, value: float) -> None:
    yy, xx = np.mgrid[: mag.shape[0], : mag.shape[1]]
    mag[(xx - center_px[0]) ** 2 + (yy - center_px[1]) ** 2 <= radius_px**2] += value


def _run(mag: np.ndarray, accepted=()):
    region = np.ones(mag.shape, bool)
    single_max = DEFAULT_PARAMS.single_ball_max_tolley_areas * math.pi * (0.5 * TOLLEY_MAX_DIAMETER_MM / MM_PER_PX) ** 2
    thr = float(np.median(mag)) + DEFAULT_PARAMS.threshold_mads * float(np.median(np.abs(mag - np.median(mag))))
    return _matched_filter_singles(mag, region, list(accepted), MARBLE_PX, MM_PER_PX, single_max, thr,
                                   MM_PER_PX, DEFAULT_PARAMS)


def test_faint_marble_found_at_its_centre():
    rng = np.random.default_rng(11)
    mag = _surface(rng)
    center = (121.3, 97.6)
    # a clear glass marble: a departure of ~3 noise levels, far too faint for a per-pixel threshold
    _disc(mag, center, 0.5 * MARBLE_PX, 8.0)
    found = _run(mag)
    assert len(found) == 1
    c, d_mm, conf = found[0]
    assert math.dist(c, center) * MM_PER_PX <= POSITION_TOL_MM
    assert d_mm < MARBLE_TOLLEY_SPLIT_MM
    assert 0.0 < conf <= 1.0


def test_line_of_same_contrast_is_not_a_ball():
    rng = np.random.default_rng(12)
    mag = _surface(rng)
    mag[115:123, :] += 8.0  # a paving joint or scribed line 8 px wide, as wide as a marble
    assert _run(mag) == []


def test_ball_already_found_is_not_found_twice():
    rng = np.random.default_rng(13)
    mag = _surface(rng)
    _disc(mag, (60.0, 60.0), 0.5 * MARBLE_PX, 9.0)
    assert _run(mag, accepted=[np.array([60.4, 59.8])]) == []


def test_kind_confidence_follows_the_size_margin():
    native_px = 6.0  # a whole-ring photo: 2.1 mm per pixel
    at_split = _kind_confidence(MARBLE_TOLLEY_SPLIT_MM, native_px, DEFAULT_PARAMS)
    assert at_split == pytest.approx(0.5, abs=1e-6)
    near = _kind_confidence(MARBLE_TOLLEY_SPLIT_MM + 0.5, native_px, DEFAULT_PARAMS)
    far = _kind_confidence(MARBLE_DIAMETER_MM, native_px, DEFAULT_PARAMS)
    assert 0.5 < near < far
    # the same margin is surer in a sharper photo (more pixels across the ball)
    assert _kind_confidence(MARBLE_TOLLEY_SPLIT_MM + 1.0, 20.0, DEFAULT_PARAMS) > _kind_confidence(
        MARBLE_TOLLEY_SPLIT_MM + 1.0, native_px, DEFAULT_PARAMS)
