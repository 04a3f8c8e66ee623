"""A lying piece's open base shows the table: read again with that forgiven and its rim's edges weighed
(vision/pyramids_fit.open_base_score, vision/pyramids._open_base_size).

A ray through the projected base square crosses one wall only, so an oblique camera looking into the base sees
a notch of bare table at the base end. Fitted as a hull, the notch made one size smaller score better (the
bench's lying pieces read one size small).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.camera import CameraModel
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import IceScene, Lighting, lying_piece, render_ice_scene
from vision.pyramids import detect_pyramids

MM_PER_PX = 0.4  # about the bench's 1080p scale
DISTANCE_MM = 1400.0
CENTROID_TOL_MM = 4.0  # plan centroid found within this of the truth's


def _camera(tilt_deg: float) -> CameraModel:
    """``tilt_deg`` off vertical, from +x: a piece whose apex points along -x turns its open base to it."""
    t = math.radians(tilt_deg)
    return CameraModel.look_at(eye_mm=(DISTANCE_MM * math.sin(t), 0.0, DISTANCE_MM * math.cos(t)),
                               target_mm=(0.0, 0.0, 0.0), up_hint=(1.0, 0.0, 0.0),
                               focal_px=DISTANCE_MM / MM_PER_PX, image_size_wh_px=(320, 240))


def _read(tilt_deg: float, yaw_deg: float, size: str, colour: str, seed: int = 3):
    cam = _camera(tilt_deg)
    rng = np.random.default_rng(seed)
    piece = lying_piece("p1", colour, size, (0.0, 0.0), math.radians(yaw_deg))
    linear = render_ice_scene(IceScene(pieces=(piece,)), cam, Lighting.random(rng), rng, supersample=2)
    photo = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    return piece, detect_pyramids(photo, cam)


@pytest.mark.parametrize(("tilt_deg", "yaw_deg", "colour"), [(30.0, 270.0, "clear"), (40.0, 240.0, "clear")])
def test_a_lying_medium_piece_showing_its_open_base_is_read_medium(tilt_deg, yaw_deg, colour):
    # the code before this test read both as a small lying piece (flagged)
    piece, dets = _read(tilt_deg, yaw_deg, "medium", colour)
    assert len(dets) == 1
    (d,) = dets
    assert (d.size, d.pose) == ("medium", "lying")
    plan = np.vstack([piece.corners_mm(), piece.apex_mm()[None]])[:, :2].mean(axis=0)
    assert np.linalg.norm(np.asarray(d.plan_centroid_mm) - plan) <= CENTROID_TOL_MM

