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

from calibration.camera import CameraModel
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import IceScene, Lighting, lying_piece, render_ice_scene, standing_on_lying_piece
from vision.pyramids import detect_pyramids

MM_PER_PX = 0.4  # about the bench's 1080p scale
DISTANCE_MM = 1400.0
MATCH_GATE_MM = 12.0  # plan centroid of a detection within this of the truth piece's (the bench's gate)


def _camera(tilt_deg: float) -> CameraModel:
    """``tilt_deg`` off vertical, from +x: a piece whose apex points along -x turns its open base to it."""
    t = math.radians(tilt_deg)
    return CameraModel.look_at(eye_mm=(DISTANCE_MM * math.sin(t), 0.0, DISTANCE_MM * math.cos(t)),
                               target_mm=(0.0, 0.0, 0.0), up_hint=(1.0, 0.0, 0.0),
                               focal_px=DISTANCE_MM / MM_PER_PX, image_size_wh_px=(320, 240))


def _centroid_mm(piece) -> np.ndarray:
    return np.vstack([piece.corners_mm(), piece.apex_mm()[None]])[:, :2].mean(axis=0)


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


def _nearest(piece, dets):
    c = _centroid_mm(piece)
    d = [float(np.linalg.norm(np.asarray(x.plan_centroid_mm) - c)) for x in dets]
    j = int(np.argmin(d))
    return dets[j], d[j]


def test_the_lying_piece_under_a_standing_one_is_read_its_own_size(lying_under_standing):
    low, top, dets = lying_under_standing
    assert len(dets) == 2
    lying, d_lying = _nearest(low, dets)
    assert d_lying <= MATCH_GATE_MM
    assert (lying.pose, lying.size) == ("lying", low.size)


def test_the_standing_piece_keeps_its_reading(lying_under_standing):
    low, top, dets = lying_under_standing
    standing, d_top = _nearest(top, dets)
    assert d_top <= MATCH_GATE_MM
    assert (standing.pose, standing.size) == ("standing_on_lying", top.size)
