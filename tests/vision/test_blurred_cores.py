"""A small wink at a coarse image's far end, blurred: its colour core is its disc shrunk by the blur (issue 4).

The labels give a wink's colour only to its core (half its local departure or more). At 2 mm per image pixel with
a pixel or two of blur (seed 7777's tw_7778_002, blue-S4 at the mat's far corner) a small wink's core is a disc
of 5-6 mm, inside the 2 mm probe of its rim: no edge support at all, and the wink was missed. Its own
colour is looked for as far inside the rim as the blur reaches (1.5 image pixels), and no farther.
"""

import math

import cv2
import numpy as np
import pytest

from vision.colour import CLASS_NEUTRAL, COLOR_NAMES, build_colour_scene
from vision.tiddlywinks import TiddlywinksParams, _ortho_grid
from vision.winks import WinkDetectorParams, find_candidates

CENTRE = np.array([-420.0, 180.0])
BLUE = COLOR_NAMES.index("blue") + 1


def _scene_with_blob(core_mm: float):
    """A felt orthophoto's colour scene whose labels hold one blue core of ``core_mm`` radius in a neutral halo
    reaching 10 mm (a small wink's blurred outline)."""
    params = TiddlywinksParams()
    grid = _ortho_grid(params)
    rng = np.random.default_rng(0)
    w, h = grid.width_px, grid.height_px
    felt = np.clip(np.array([60, 120, 45], float) + rng.normal(0, 2.0, (h, w, 3)), 0, 255).astype(np.uint8)
    cs = build_colour_scene(felt, grid, params.colour)
    cx, cy = grid.ortho_from_table(CENTRE[None])[0]
    s = grid.mm_per_px
    cv2.circle(cs.labels, (int(round(cx)), int(round(cy))), int(round(10.0 / s)), CLASS_NEUTRAL, -1)
    cv2.circle(cs.labels, (int(round(cx)), int(round(cy))), int(round(core_mm / s)), BLUE, -1)
    return cs, grid


def _found(cs, grid, mm_per_px: float):
    cands = find_candidates(cs, grid, WinkDetectorParams(), mm_per_px_at=lambda c: mm_per_px)
    return [c for c in cands if c.color == "blue" and math.dist(c.center_mm, CENTRE) < 3.0]


def test_a_blurred_small_wink_at_two_mm_per_pixel_is_found_by_its_shrunk_core():
    cs, grid = _scene_with_blob(5.0)
    found = _found(cs, grid, 2.1)
    assert len(found) == 1
    assert found[0].size == "small"
    assert math.dist(found[0].center_mm, CENTRE) < 1.5


@pytest.mark.parametrize("core_mm, mm_per_px", [(5.0, 0.9), (3.75, 2.1)])
def test_a_core_the_blur_does_not_explain_is_no_wink(core_mm, mm_per_px):
    # a sharp image (0.9 mm per pixel) shrinks no wink by 2 mm; at 2.1 mm per pixel a 3.75 mm blob is no small
    # wink blurred (the blur leaves a 4.9 mm core of one): the deeper probe stops at the blur's reach
    cs, grid = _scene_with_blob(core_mm)
    assert _found(cs, grid, mm_per_px) == []
