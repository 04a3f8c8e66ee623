"""ChArUco calibration on rendered board photos (known camera with k1, k2): intrinsics, table pose."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calib_scenes import TRUE_DIST, TRUE_FOCAL_PX, mapping_errors_mm, mat_grid_mm
from calibration.charuco import (
    BoardPlacement,
    CharucoSpec,
    detect_charuco,
    estimate_intrinsics,
    estimate_table_pose,
)
from calibration.errors import CalibrationError
from calibration.types import TableCalibration

FOCAL_REL_TOL = 0.01  # 1 %
PRINCIPAL_POINT_TOL_PX = 5.0
DISTORTION_SHIFT_TOL_PX = 1.0  # the fitted lens moves points within this of the true lens, over the frame
TABLE_POINT_TOL_MM = 1.0  # grid over the whole mat, at z = 0 and z = 38 (pot rim)
CAMERA_POSITION_TOL_MM = 10.0
POT_HEIGHT_MM = 38.0


@pytest.fixture(scope="module")
def intrinsics(board_views, charuco_spec):
    return estimate_intrinsics(board_views, charuco_spec)


def test_detects_board_corners(board_views, charuco_spec):
    det = detect_charuco(board_views[0], charuco_spec)
    assert len(det.ids) == 70  # (8 - 1) x (11 - 1) inner corners
    assert det.corners_px.shape == (70, 2) and det.object_mm.shape == (70, 3)
    assert len(detect_charuco(np.full((200, 300, 3), 128, np.uint8), charuco_spec).ids) == 0


def test_intrinsics_recovered(intrinsics):
    K, dist, rms_px, views = intrinsics  # unpacks as a tuple
    assert K[0, 0] == pytest.approx(TRUE_FOCAL_PX, rel=FOCAL_REL_TOL)
    assert K[1, 1] == pytest.approx(TRUE_FOCAL_PX, rel=FOCAL_REL_TOL)
    np.testing.assert_allclose(K[:2, 2], [(1920 - 1) / 2, (1080 - 1) / 2], atol=PRINCIPAL_POINT_TOL_PX)
    assert rms_px < 0.5
    assert len(views) == 6 and all(v.used and v.rms_px < 0.5 for v in views)
    # Distortion compared by its effect: where it puts points across the frame, not by coefficient.
    xs, ys = np.meshgrid(np.linspace(-0.6, 0.6, 9), np.linspace(-0.35, 0.35, 5))
    obj = np.column_stack([xs.ravel(), ys.ravel(), np.ones(xs.size)])
    K_true = np.array([[TRUE_FOCAL_PX, 0, 959.5], [0, TRUE_FOCAL_PX, 539.5], [0, 0, 1]])
    z = np.zeros(3)
    p_true = cv2.projectPoints(obj, z, z, K_true, np.array(TRUE_DIST))[0]
    p_fit = cv2.projectPoints(obj, z, z, K_true, dist)[0]
    assert np.max(np.linalg.norm(p_true - p_fit, axis=2)) < DISTORTION_SHIFT_TOL_PX
    assert dist[0] < 0  # barrel, as rendered


def test_too_few_views_is_named(board_views, charuco_spec):
    blank = np.full_like(board_views[0], 128)
    with pytest.raises(CalibrationError, match=r"only 2 of 4 images had >= 8 ChArUco corners"):
        estimate_intrinsics([board_views[0], blank, board_views[1], blank], charuco_spec)


def test_same_tilt_views_rejected(board_views, charuco_spec):
    with pytest.raises(CalibrationError, match="same tilt"):
        estimate_intrinsics([board_views[0]] * 3, charuco_spec)


@pytest.mark.parametrize("refine_with_mat", [False, True], ids=["board", "board+mat"])
def test_table_pose_maps_mat_points(intrinsics, table_with_board, charuco_spec, refine_with_mat):
    image, true_cam = table_with_board
    cal = estimate_table_pose(
        image,
        intrinsics.K,
        intrinsics.dist,
        spec=charuco_spec,
        refine_with_mat=refine_with_mat,
        intrinsics_std=intrinsics.std,
    )
    assert isinstance(cal, TableCalibration) and cal.source == "charuco"
    assert cal.reprojection_error_mm < 0.5
    assert cal.plus_x_end == "right"
    for z in (0.0, POT_HEIGHT_MM):
        err = mapping_errors_mm(true_cam, cal, mat_grid_mm(), z)
        assert err.max() < TABLE_POINT_TOL_MM, (z, err.max())
    assert np.linalg.norm(cal.camera.center_mm - true_cam.center_mm) < CAMERA_POSITION_TOL_MM
    assert (cal.mat_corners_px is not None) == refine_with_mat


def test_board_placement_moves_the_frame(intrinsics, table_with_board, charuco_spec):
    """Saying the board lies 100 mm further along +x and turned half a turn moves the table frame with it."""
    image, true_cam = table_with_board
    w, h = charuco_spec.size_mm
    # The real board's origin corner is at (-w/2, +h/2); declared turned by 180 degrees about (100, 0).
    placement = BoardPlacement(origin_mm=(100 + w / 2, -h / 2), rotation_deg=180.0)
    cal = estimate_table_pose(image, intrinsics.K, intrinsics.dist, spec=charuco_spec, placement=placement)
    px = true_cam.project_mm(np.array([[0.0, 0.0], [500.0, 200.0]]))
    np.testing.assert_allclose(
        cal.image_to_table_mm(px), [[100.0, 0.0], [-400.0, -200.0]], atol=TABLE_POINT_TOL_MM
    )
    assert cal.plus_x_end == "left"


def test_charuco_spec_validation():
    with pytest.raises(CalibrationError, match="DICT_NOPE"):
        CharucoSpec(dictionary="DICT_NOPE")
    with pytest.raises(CalibrationError, match="marker size"):
        CharucoSpec(square_mm=20, marker_mm=25)
    assert math.isclose(CharucoSpec().size_mm[1], 330.0)
