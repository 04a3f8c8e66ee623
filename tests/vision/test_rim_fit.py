"""The batched sub-pixel rim fit (``refine_batch``): known centres on a drawn image, and the one-wink fit."""

import cv2
import numpy as np
import pytest

from synth import MAT_BGR, WINK_BGR, SynthWink, default_camera
from vision.colour import CLASS_BG, COLOR_NAMES
from vision.ortho import OrthoGrid
from vision.silhouette import outline
from vision.winks import WinkCandidate, WinkDetectorParams, refine, refine_batch, solid_of

#: Centre error the known-radius fit reaches on a 4K drawing of the model's own silhouettes (0.5 mm per pixel).
CENTRE_TOL_MM = 0.05
#: The batch reads each wink's outline against its neighbours' centres before they move, the one-wink fit after
#: the earlier ones moved: on winks a few millimetres apart that changes which samples are read only at the margin.
BATCH_VS_ONE_TOL_MM = 0.02

SCENE = [SynthWink("b1", "blue", "large", (-120.0, 40.0)), SynthWink("g1", "green", "small", (-97.0, 47.0)),
         SynthWink("r1", "red", "large", (60.0, -30.0)), SynthWink("y1", "yellow", "small", (150.0, 80.0)),
         SynthWink("b2", "blue", "small", (-40.0, -110.0)), SynthWink("r2", "red", "small", (66.0, -7.0))]


def _labels(grid: OrthoGrid) -> np.ndarray:
    """The colour classes the detector would read: each wink's disc in its colour on background."""
    labels = np.full((grid.height_px, grid.width_px), CLASS_BG, np.uint8)
    for s in SCENE:
        c, r = grid.ortho_from_table(np.array([s.center_mm]))[0]
        cv2.circle(labels, (int(round(c)), int(round(r))), int(round(s.radius_mm / grid.mm_per_px)),
                   COLOR_NAMES.index(s.color) + 1, -1)
    return labels


def _draw(cam) -> np.ndarray:
    """Each wink's model silhouette (top and bottom rims' hull) filled in its colour on felt, blurred as a lens
    would, with sensor noise: the fit's own model, so what is left is the fit's error."""
    w, h = cam.image_size_wh_px
    img = np.full((h, w, 3), MAT_BGR, np.uint8)
    for wk in _candidates(np.zeros((len(SCENE), 2))):
        ol = outline(cam, solid_of(wk), wk.center_mm, 360)
        cv2.fillPoly(img, [np.round(ol.points_px * 16).astype(np.int32)], WINK_BGR[wk.color], cv2.LINE_AA, shift=4)
    img = cv2.GaussianBlur(img, (0, 0), 0.8).astype(np.float32)
    img += np.random.default_rng(5).normal(0.0, 2.0, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _candidates(offsets_mm: np.ndarray) -> list[WinkCandidate]:
    return [WinkCandidate(color=s.color, size=s.size, center_mm=np.asarray(s.center_mm) + d, votes=1.0,
                          wink_id=s.wink_id) for s, d in zip(SCENE, offsets_mm)]


@pytest.fixture(scope="module")
def drawn():
    cam = default_camera(3840, 2160)
    img = _draw(cam)
    grid = OrthoGrid.covering(-300, 300, -200, 200, 0.5, 1.5)
    offsets = np.random.default_rng(7).uniform(-0.8, 0.8, (len(SCENE), 2))
    return cam, img, grid, _labels(grid), offsets


def test_batched_fit_recovers_drawn_centres(drawn):
    cam, img, grid, labels, offsets = drawn
    winks = _candidates(offsets)
    biases = refine_batch(winks, winks, img, cam, labels, grid, WinkDetectorParams(), None, 0.5)
    assert all(b is not None for b in biases)  # every outline is clean enough to fit its own edge offset
    for s, w in zip(SCENE, winks):
        assert np.linalg.norm(w.center_mm - s.center_mm) < CENTRE_TOL_MM, s.wink_id


def test_batched_fit_matches_the_one_wink_fit(drawn):
    cam, img, grid, labels, offsets = drawn
    batch, one = _candidates(offsets), _candidates(offsets)
    refine_batch(batch, batch, img, cam, labels, grid, WinkDetectorParams(), None, 0.5)
    for w in one:
        refine(w, one, img, cam, labels, grid, WinkDetectorParams(), None, 0.5)
    for a, b in zip(batch, one):
        np.testing.assert_allclose(a.center_mm, b.center_mm, atol=BATCH_VS_ONE_TOL_MM)
        assert a.sigma_mm == pytest.approx(b.sigma_mm, rel=0.2)
