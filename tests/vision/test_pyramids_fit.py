"""Silhouette scoring of pyramid hypotheses (vision/pyramids_fit): open bases and resting tilts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import Polygon

from calibration.camera import CameraModel
from geometry.pyramids import lying_pose, upright_pose
from vision.pyramids_fit import BlobFitter, PieceHypothesis, hull_px, opening_px, rest_on_lying, supported
from vision.pyramids_physics import tilted_support_gap_mm


def _oblique_camera():
    # 1.2 m away, 35 deg off vertical, looking from -x: it sees into a base that faces -x
    eye = (-1200.0 * math.sin(math.radians(35.0)), 0.0, 1200.0 * math.cos(math.radians(35.0)))
    return CameraModel.look_at(eye_mm=eye, target_mm=(0.0, 0.0, 0.0), focal_px=3000.0, image_size_wh_px=(800, 600))


def test_an_upright_base_is_never_seen_and_a_lying_one_is_seen_from_its_side():
    cam = _oblique_camera()
    assert opening_px(cam, upright_pose("large", (0.0, 0.0), 0.3)) is None
    # lying_pose points the apex along yaw - 90 deg: yaw = -90 deg points it to -x (base facing +x, away from
    # the camera), yaw = +90 deg to +x (base facing -x, towards the camera)
    away = opening_px(cam, lying_pose("medium", (0.0, 0.0), -math.pi / 2))
    facing = opening_px(cam, lying_pose("medium", (0.0, 0.0), math.pi / 2))
    assert away is None
    assert facing is not None and facing.shape == (4, 2)


def test_a_lying_piece_whose_open_base_shows_faintly_still_fits_its_own_size():
    cam = _oblique_camera()
    truth = PieceHypothesis("lying", "medium", (0.0, 0.0, math.pi / 2))
    pose = truth.pose()
    hull = Polygon(hull_px(cam, pose))
    # through the open base the photo shows one wall fewer: below the threshold, above half of it
    blob = hull.difference(Polygon(opening_px(cam, pose)))
    fitter = BlobFitter(cam, blob, faint=hull)
    assert fitter.iou([truth]) == pytest.approx(1.0, abs=1e-6)
    # a smaller or larger piece in its place explains it worse, however it is slid and turned
    for size in ("small", "large"):
        other = max(fitter.iou([PieceHypothesis("lying", size, (dx, dy, math.pi / 2 + da))])
                    for dx in np.linspace(-8.0, 8.0, 9) for dy in (-2.0, 0.0, 2.0) for da in (-0.2, 0.0, 0.2))
        assert other < 0.95, size
    # an opening over bare table (nothing even at half the threshold) still counts against the hypothesis
    assert BlobFitter(cam, blob).iou([truth]) < 0.95


def test_a_tilted_piece_takes_the_tilt_at_which_it_rests_on_the_lying_one():
    lying = PieceHypothesis("lying", "medium", (0.0, 0.0, math.radians(-70.0)))
    # hinge 2.3 mm short of the lying piece (its nearest point is at x = -22.7), facing it along +x (yaw -90 deg
    # raises the base along +x): it comes to rest at about 31 deg
    top = PieceHypothesis("tilted", "small", (-25.0, 0.0, -math.pi / 2, math.radians(10.0)))
    rested = rest_on_lying([lying, top])
    assert rested[0] == lying
    assert tilted_support_gap_mm(rested[1].pose(), lying.pose()) == pytest.approx(0.0, abs=0.3)
    assert 25.0 < math.degrees(rested[1].params[3]) < 35.0
    assert supported(rested)
    # so close that it would have to stand almost vertical: no piece rests like that
    assert not supported(rest_on_lying([lying, PieceHypothesis("tilted", "small", (-20.0, 0.0, -math.pi / 2, 0.3))]))
    # facing away from it nothing holds it up
    assert not supported([lying, PieceHypothesis("tilted", "small", (-25.0, 0.0, math.pi / 2, 0.3))])
