"""A lying piece with another standing on it shows its open base as a lying piece alone does: its size is read
again with the table seen through the base forgiven and the base rim's edges weighed, its partner held where the
pair's fit put it (vision/pyramids._fit_blob, ``_open_base_size`` with ``others``).

The piece standing on the lying one hides its apex end, never its open base; fitted as hulls, the bare table
seen through the base made a lying piece a size or two smaller score better under its partner (the bench's
ice_fresh_022 p12, a green large lying piece under a small one, read medium).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import IceScene, Lighting, lying_piece, render_ice_scene, standing_on_lying_piece
from tests.vision.test_pyramids_open_base import _camera
from tests.vision.test_pyramids_roles import MATCH_GATE_MM, _nearest
from vision.pyramids import detect_pyramids


def _truth(piece) -> dict:
    """``piece``'s corners and apex as the bench's truth gives them (``_nearest`` matches on their centroid)."""
    return {"base_corners_mm": piece.corners_mm(), "apex_mm": piece.apex_mm()}


# (camera tilt deg, lying piece's yaw deg, its size and colour, the standing piece's size, the direction it
# faces deg, how far its base reaches over the lying piece). The code before this test read the first lying piece
# small and 16 mm off (unflagged), the second small (flagged).
SCENES = [
    (30.0, 270.0, "large", "clear", "small", 0.0, 0.4),
    (25.0, 290.0, "medium", "yellow", "small", 20.0, 0.35),
]


@pytest.fixture(scope="module", params=SCENES, ids=["large-under-small", "medium-under-small"])
def lying_under_standing(request):
    # the lying piece turns its open base to the camera (its apex along -x), the red one stands on its apex end
    tilt, yaw, size, colour, top_size, toward, reach = request.param
    cam = _camera(tilt)
    rng = np.random.default_rng(3)
    low = lying_piece("p1", colour, size, (0.0, 0.0), math.radians(yaw))
    top = standing_on_lying_piece("p2", "red", top_size, low, math.radians(toward), reach)
    assert top is not None
    linear = render_ice_scene(IceScene(pieces=(low, top)), cam, Lighting.random(rng), rng, supersample=2)
    photo = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    return low, top, detect_pyramids(photo, cam)


def test_the_lying_piece_under_a_standing_one_is_read_its_own_size(lying_under_standing):
    low, top, dets = lying_under_standing
    assert len(dets) == 2
    lying, d_lying = _nearest(_truth(low), dets)
    assert d_lying <= MATCH_GATE_MM
    assert (lying.pose, lying.size) == ("lying", low.size)


def test_the_standing_piece_keeps_its_reading(lying_under_standing):
    low, top, dets = lying_under_standing
    standing, d_top = _nearest(_truth(top), dets)
    assert d_top <= MATCH_GATE_MM
    assert (standing.pose, standing.size) == ("standing_on_lying", top.size)
