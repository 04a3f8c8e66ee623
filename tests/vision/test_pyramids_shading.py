"""Opaque or clear from how one piece's faces are lit (vision/pyramids_shading.py)."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.pyramids import PyramidPose
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import IceScene, Lighting, lying_piece, render_ice_scene, upright_piece
from vision.pyramids import assumed_overhead_camera
from vision.pyramids_grain import clear_or_white
from vision.pyramids_segment import table_reference_bgr
from vision.pyramids_shading import OPAQUE_MIN_FACE_SPREAD, face_shading_spread, is_shaded_opaque

MM_PER_PX = 0.4  # about the bench's 1080p scale at the middle of the view


def _piece_photo(color: str, elevation_deg: float, seed: int = 3, kind: str = "upright"):
    """One medium piece (upright or lying) under a lamp at ``elevation_deg``, rendered and finished as a photo."""
    rng = np.random.default_rng(seed)
    if kind == "upright":
        cam = assumed_overhead_camera((240, 180), MM_PER_PX)
    else:  # a lying piece's sides overhang: a camera overhead sees its top face alone
        cam = CameraModel.look_at(eye_mm=(0.0, -700.0, 1300.0), target_mm=(0.0, 0.0, 0.0),
                                  focal_px=1480.0 / MM_PER_PX, image_size_wh_px=(240, 180))
    make = upright_piece if kind == "upright" else lying_piece
    piece = make("p1", color, "medium", (0.0, 0.0), 0.3)
    light = Lighting.random(rng, elevation_deg=(elevation_deg, elevation_deg))
    linear = render_ice_scene(IceScene(pieces=(piece,)), cam, light, rng, supersample=2)
    photo = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    pose = PyramidPose(size="medium", rotation=piece.rotation, base_center_mm=tuple(piece.base_center_mm))
    ref = table_reference_bgr(photo, int(70.0 / MM_PER_PX))
    return photo, ref, cam, pose


@pytest.mark.parametrize(("seed", "kind"), [(3, "upright"), (4, "upright"), (5, "lying")])
def test_a_white_piece_under_a_side_lamp_shades_its_faces_apart_and_a_clear_one_does_not(seed, kind):
    white = face_shading_spread(*_piece_photo("white", 40.0, seed, kind))
    clear = face_shading_spread(*_piece_photo("clear", 40.0, seed, kind))
    assert white is not None and clear is not None
    assert is_shaded_opaque(white)
    assert not is_shaded_opaque(clear)
    assert white - clear > 0.5 * OPAQUE_MIN_FACE_SPREAD


def test_no_spread_without_faces_enough_to_compare():
    photo, ref, cam, pose = _piece_photo("white", 40.0)
    far = PyramidPose(size="medium", rotation=pose.rotation, base_center_mm=(500.0, 0.0, 0.0))  # out of view
    assert face_shading_spread(photo, ref, cam, far) is None
    assert not is_shaded_opaque(None)


def test_opaque_shading_settles_white_where_the_grain_half_shows_and_flags_a_clear_verdict():
    # grain half showing: flagged alone, settled white by the shading
    assert clear_or_white("white", 0.85)[1] is not None
    assert clear_or_white("white", 0.85, opaque_shading=True) == ("white", None)
    # grain fully showing against opaque shading: the cues disagree, white kept and flagged
    color, why = clear_or_white("white", 1.2, opaque_shading=True)
    assert color == "white" and "opaque" in why
    # a clear verdict with opaque shading is flagged, without it left alone
    color, why = clear_or_white("clear", None, opaque_shading=True)
    assert color == "clear" and "opaque" in why
    assert clear_or_white("clear", None) == ("clear", None)
    assert clear_or_white("clear", None, allowed=("clear", "red"), opaque_shading=True) == ("clear", None)
