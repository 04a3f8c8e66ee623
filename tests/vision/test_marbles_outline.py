"""A ball's diameter from its outline: sharp silhouette edge measured, soft shadow and view stretch not."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from geometry.marbles import MARBLE_DIAMETER_MM, MARBLE_TOLLEY_SPLIT_MM, TOLLEY_MAX_DIAMETER_MM
from vision.marbles_outline import lab_gradients, outline_diameter_mm

MM_PER_PX = 0.7  # a marble spans 18 px
SIZE_TOL_MM = 0.8  # half the gap between a marble (12.7) and the smallest tolley (16)
CENTER = np.array([60.3, 59.6])


def _scene(d_mm: float, *, cos_view: float = 1.0, azimuth: float = 0.0, shadow: bool = True,
           seed: int = 5) -> np.ndarray:
    """Sand with grain noise, a soft dark shadow trailing one side, and the ball's ellipse in front of it."""
    rng = np.random.default_rng(seed)
    h = w = 120
    img = np.empty((h, w, 3), np.float32)
    img[:] = (120, 170, 200)  # BGR sand
    img += rng.normal(0, 6, (h, w, 1))
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    r_px = d_mm / 2 / MM_PER_PX
    if shadow:  # penumbra: a blurred disc 1.6 radii long towards +x+y
        sh = np.zeros((h, w), np.float32)
        for t in np.linspace(0, 1.6 * r_px, 12):
            sh = np.maximum(sh, ((xx - CENTER[0] - 0.7 * t) ** 2 + (yy - CENTER[1] - 0.7 * t) ** 2
                                 <= r_px**2).astype(np.float32))
        img *= 1 - 0.45 * cv2.GaussianBlur(sh, (0, 0), 0.35 * r_px)[..., None]
    # the ball's silhouette in the ortho plane: its radius across the view, r / cos along it
    u = (xx - CENTER[0]) * math.cos(azimuth) + (yy - CENTER[1]) * math.sin(azimuth)
    v = -(xx - CENTER[0]) * math.sin(azimuth) + (yy - CENTER[1]) * math.cos(azimuth)
    ball = cv2.GaussianBlur(((u * cos_view) ** 2 + v**2 <= r_px**2).astype(np.float32), (0, 0), 0.6)  # lens blur
    img = img * (1 - ball[..., None]) + ball[..., None] * np.array([200, 90, 40], np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _measure(img, **kw):
    return outline_diameter_mm(lab_gradients(img), CENTER, MM_PER_PX, kw.pop("cos_view", 1.0),
                               kw.pop("azimuth", 0.0), 0.3 * MARBLE_DIAMETER_MM / 2,
                               1.3 * TOLLEY_MAX_DIAMETER_MM / 2, kw.pop("others", None))


@pytest.mark.parametrize("d_mm", [MARBLE_DIAMETER_MM, 16.0, 19.0])
def test_diameter_despite_the_shadow(d_mm):
    d = _measure(_scene(d_mm))
    assert d == pytest.approx(d_mm, abs=SIZE_TOL_MM)
    assert (d > MARBLE_TOLLEY_SPLIT_MM) == (d_mm > MARBLE_TOLLEY_SPLIT_MM)


def test_view_stretch_is_undone():
    cos_view, azimuth = 0.75, 0.6
    d = _measure(_scene(MARBLE_DIAMETER_MM, cos_view=cos_view, azimuth=azimuth), cos_view=cos_view,
                 azimuth=azimuth)
    assert d == pytest.approx(MARBLE_DIAMETER_MM, abs=SIZE_TOL_MM)
    # ignoring the stretch would make this marble look like a tolley along the view
    assert _measure(_scene(MARBLE_DIAMETER_MM, cos_view=0.6, azimuth=azimuth), azimuth=azimuth) > d


def test_ball_crowded_on_every_side_is_not_measured():
    ring = [CENTER + 13.0 / MM_PER_PX * np.array([math.cos(a), math.sin(a)]) for a in np.arange(6) * math.pi / 3]
    assert _measure(_scene(MARBLE_DIAMETER_MM), others=ring) is None
