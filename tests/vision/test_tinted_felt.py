"""Tinted felt is no wink: a candidate's middle must be its pigment (vision/core_colour.py)."""

import math

import cv2
import numpy as np

from synth import SynthWink, default_camera, render
from vision.tiddlywinks import measure_tiddlywinks

BEIGE_BGR = (89, 109, 134)
RED_BGR = np.array([40.0, 40.0, 200.0], np.float32)


def _blend_disc(img, cam, center_mm, radius_mm, blur_px, to_bgr):
    """Blend a soft-edged plan disc of the image towards ``to_bgr(pixels)``."""
    mask = np.zeros(img.shape[:2], np.float32)
    ang = np.linspace(0, 2 * np.pi, 96)
    px = cam.project_mm(np.c_[center_mm[0] + radius_mm * np.cos(ang), center_mm[1] + radius_mm * np.sin(ang)])
    cv2.fillPoly(mask, [np.round(px).astype(np.int32)], 1.0)
    mask = cv2.GaussianBlur(mask, (0, 0), blur_px)[..., None]
    f = img.astype(np.float32)
    return np.clip(f * (1 - mask) + to_bgr(f) * mask, 0, 255).astype(np.uint8)


def test_felt_tinted_a_little_red_is_no_red_wink_and_a_shadowed_red_wink_still_is():
    # Felt a tenth of the way to red at the felt's own brightness, in patches the size of a wink (a red
    # neighbour's halo, 6162_003's red phantom at the mat's end). A real red wink in a deep shadow keeps its
    # chromaticity (a shadow scales all three channels) and stays a wink.
    cam = default_camera(1920, 1080)
    winks = [SynthWink("r1", "red", "small", (300.0, 100.0)), SynthWink("r2", "red", "large", (-300.0, -150.0)),
             SynthWink("r3", "red", "small", (500.0, -200.0)), SynthWink("r4", "red", "large", (-500.0, 200.0)),
             SynthWink("b1", "blue", "large", (200.0, 250.0))]
    img = render(winks, cam, seed=3, mat_bgr=BEIGE_BGR)
    tints = [(-120.0, 60.0, 9.0), (150.0, -120.0, 12.0)]
    for x, y, r in tints:
        img = _blend_disc(img, cam, (x, y), r, 1.5, lambda f: 0.9 * f + 0.1 * RED_BGR)
    img = _blend_disc(img, cam, (-500.0, 200.0), 35.0, 4.0, lambda f: 0.55 * f)
    m = measure_tiddlywinks(img, cam)
    for x, y, _ in tints:
        assert not [w for w in m.winks if math.dist(w.center_mm, (x, y)) < 15.0]
    for wk in winks:
        got = [w for w in m.winks if math.dist(w.center_mm, wk.center_mm) < 2.0]
        assert [(w.color, w.size) for w in got] == [(wk.color, wk.size)]


def test_segment_medians_are_each_segments_own_median():
    """The batched medians of the tinted-felt reads equal one np.median per segment, empty segments nan."""
    from vision.core_colour import _segment_medians
    rng = np.random.default_rng(3)
    lengths = np.array([5, 0, 1, 8, 13, 2])
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.random((bounds[-1], 4)).astype(np.float32)
    got = _segment_medians(values, bounds)
    assert np.isnan(got[1]).all()
    for i in np.flatnonzero(lengths):
        assert np.array_equal(got[i], np.median(values[bounds[i]:bounds[i + 1]], axis=0))
