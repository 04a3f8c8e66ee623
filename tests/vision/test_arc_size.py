"""A partly hidden wink's size from the curvature of its visible arc (vision/arc_size.py)."""

import math

import numpy as np
import pytest

from synth import SynthWink, _disc_points, _fill, default_camera, render, squop_tilt
from vision.arc_size import ArcFit, edge_offset_mm_per_px, measure_arc, size_from_arc
from vision.tiddlywinks import measure_tiddlywinks
from vision.winks import WinkCandidate

RADIUS_TOL_MM = 0.6  # the arc's radius, offset-corrected, against the true one (the two sizes are 3 mm apart)
POSITION_TOL_MM = 2.0
LIGHT_FELT_BGR = (110, 215, 100)  # a felt lighter than the green winks, of their hue


def _squop_scene(lower_size: str, offset_mm: float, lower_color: str = "blue", upper_color: str = "red"):
    """A wink under a large one of another colour (its centre covered), and four whole winks around."""
    lower = SynthWink("lo", lower_color, lower_size, (200.0, 100.0))
    upper = squop_tilt(SynthWink("up", upper_color, "large", (200.0 + offset_mm, 102.0)), lower)
    around = [SynthWink(f"w{i}", c, s, xy) for i, (c, s, xy) in enumerate(
        [("yellow", "large", (120.0, 60.0)), ("green", "small", (280.0, 40.0)), ("blue", "large", (300.0, 160.0)),
         ("red", "small", (100.0, 170.0))])]
    return [lower, upper, *around]


def _candidates(scene, wrong: dict[str, tuple[str, tuple[float, float]]]):
    """Candidates at the truth's poses, except ``wrong``: id -> (size, plan shift of the centre)."""
    out = []
    for t in scene:
        size, shift = wrong.get(t.wink_id, (t.size, (0.0, 0.0)))
        c = WinkCandidate(color=t.color, size=size, center_mm=np.asarray(t.center_mm) + shift, votes=1.0,
                          wink_id=t.wink_id)
        c.z_mm, c.tilt_deg, c.tilt_azimuth_deg = t.z_mm, t.tilt_deg, t.tilt_azimuth_deg
        c.above = list(t.above)
        c.fit_fraction, c.size_confidence = (0.4, 0.6) if t.wink_id in wrong else (1.0, 1.0)
        out.append(c)
    return out


@pytest.mark.parametrize("lower_size", ["small", "large"])
def test_a_wink_mostly_under_another_has_its_size_measured_and_decided(lower_size):
    # its centre is under the upper wink: the known-radius outline fit sees too little of it to size it
    # (it was flagged, size_confidence 0.6, position uncertainty 3 mm for the other size's edge)
    cam = default_camera(1920, 1080, tilt_deg=20.0)
    scene = _squop_scene(lower_size, 9.0)
    m = measure_tiddlywinks(render(scene, cam, seed=5), cam)
    truth = scene[0]
    got = min(m.winks, key=lambda w: math.dist(w.center_mm, truth.center_mm))
    assert math.dist(got.center_mm, truth.center_mm) <= POSITION_TOL_MM
    assert got.size == lower_size
    assert got.size_confidence >= 0.9
    assert got.visible_fraction < 0.6  # ... decided from the arc, not from the whole outline
    # its position uncertainty no longer spans the other size, but still covers the error made
    assert got.sigma_mm < 3.0
    assert math.dist(got.center_mm, truth.center_mm) <= 2.0 * got.sigma_mm


@pytest.mark.parametrize("lower_size, start_size", [("small", "large"), ("large", "small")])
def test_the_arc_measures_the_radius_whichever_size_the_search_started_from(lower_size, start_size):
    cam = default_camera(1920, 1080, tilt_deg=20.0)
    scene = _squop_scene(lower_size, 9.0)
    img = render(scene, cam, seed=7)
    m = measure_tiddlywinks(img, cam)
    winks = _candidates(scene, {"lo": (start_size, (-1.2, -1.0))})
    fit = measure_arc(winks[0], winks, img, cam, m.colour, m.grid)
    assert fit is not None and 100.0 <= fit.arc_deg < 300.0
    off_px, spread_px = edge_offset_mm_per_px(winks, img, cam, m.colour, m.grid, None)
    mmpp = cam.mm_per_px_at(tuple(scene[0].center_mm))
    call = size_from_arc(fit, off_px, spread_px, mmpp)
    assert call.radius_mm == pytest.approx(scene[0].radius_mm, abs=RADIUS_TOL_MM)
    assert call.size == lower_size


def test_a_shadow_around_a_wink_darker_than_the_felt_is_not_read_as_its_rim():
    # a green wink darker than a light green felt: the felt in the wink's shadow is darker too, so by
    # brightness it looks like more wink; by chromaticity it stays felt
    cam = default_camera(1920, 1080, tilt_deg=20.0)
    scene = _squop_scene("small", 9.0, lower_color="green")
    img = render(scene, cam, seed=9, mat_bgr=LIGHT_FELT_BGR, shadows=False)
    lower, upper = scene[0], scene[1]
    ring = np.zeros(img.shape[:2], np.uint8)
    _fill(ring, cam, _disc_points(lower.center_mm, lower.radius_mm + 2.5, 0.0), 255)
    _fill(ring, cam, _disc_points(lower.center_mm, lower.radius_mm + 0.2, 1.5), 0)
    _fill(ring, cam, _disc_points(upper.center_mm, upper.radius_mm + 0.5, upper.z_mm, upper.tilt_deg,
                                  upper.tilt_azimuth_deg), 0)
    shaded = img.copy()
    shaded[ring > 0] = (img[ring > 0] * 0.6).astype(np.uint8)
    m = measure_tiddlywinks(img, cam)
    winks = _candidates(scene, {"lo": ("small", (0.0, 0.0))})
    fit = measure_arc(winks[0], winks, shaded, cam, m.colour, m.grid)
    if fit is not None:  # too little of the rim left clear of the shadow is no answer either
        assert fit.radius_mm == pytest.approx(lower.radius_mm, abs=1.0)


@pytest.mark.parametrize("radius_mm, sigma_mm, rms_px, expected", [
    (8.3, 0.2, 0.2, "small"),
    (10.8, 0.2, 0.2, "large"),
    (9.4, 0.2, 0.2, None),  # between the two radii: no call
    (8.3, 1.0, 0.2, None),  # an arc too short for its curvature to tell
    (6.0, 0.2, 0.2, None),  # no wink's radius: not one round rim
    (8.3, 0.2, 1.5, None),  # a ragged edge
])
def test_size_from_arc_calls_only_clear_radii(radius_mm, sigma_mm, rms_px, expected):
    fit = ArcFit(radius_mm=radius_mm, sigma_mm=sigma_mm, center_mm=np.zeros(2), arc_deg=150.0, rms_px=rms_px,
                 n_points=40)
    call = size_from_arc(fit, 0.0, 0.0, 1.0)
    assert call.size == expected
    assert (call.confidence >= 0.99) == (expected is not None)
