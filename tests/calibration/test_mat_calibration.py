"""Self-calibration from one rendered photo of the mat (1920x1080, tilted, k1 != 0), and hand corners."""

from __future__ import annotations

import numpy as np
import pytest

from calib_scenes import MAT_FOCAL_PX, MAT_K1, mapping_errors_mm, mat_grid_mm, tilted_camera
from calibration.errors import CalibrationError
from calibration.mat import MatNotFoundError, calibrate_from_mat, find_mat_outline, from_corners
from calibration.types import MAT_CORNERS_MM, TableCalibration
from geometry.constants import POT_HEIGHT_MM, POT_TOP_RADIUS_MM

MAT_POINT_TOL_MM = 2.0  # grid over the whole mat, z = 0 and z = 38
FOCAL_REL_TOL = 0.02
K1_ABS_TOL = 0.01
CORNER_TOL_PX = 1.0
CORNERS_POINT_TOL_MM = 2.0  # from four exact hand corners (no distortion)
POT_RIM_TOL_MM = 1.0
# The outline's corners meet straight lines fitted to edges that k1 = -0.08 bows by about 10 px near the
# frame's corners; only the camera fit (which models the bow) puts them within CORNER_TOL_PX.
OUTLINE_CORNER_TOL_PX = 15.0


@pytest.fixture(scope="module")
def mat_cal_30(mat_photo_30):
    return calibrate_from_mat(mat_photo_30[0])


def test_outline_corners(mat_photo_30):
    image, cam = mat_photo_30
    outline = find_mat_outline(image)
    truth = cam.project_mm(MAT_CORNERS_MM)
    # Distortion bends the edges, so the straight-line corners are only approximate before the fit.
    d = np.linalg.norm(outline.corners_px[:, None, :] - truth[None, :, :], axis=2).min(axis=1)
    assert d.max() < OUTLINE_CORNER_TOL_PX
    assert 0.3 < outline.area_ratio < 0.9


def test_self_calibration_recovers_camera(mat_cal_30, mat_photo_30):
    cal, (_, cam) = mat_cal_30, mat_photo_30
    assert isinstance(cal, TableCalibration) and cal.source == "mat"
    assert cal.camera.K[0, 0] == pytest.approx(MAT_FOCAL_PX, rel=FOCAL_REL_TOL)
    assert cal.camera.dist[0] == pytest.approx(MAT_K1, abs=K1_ABS_TOL)
    assert cal.plus_x_end == "right"
    np.testing.assert_allclose(cal.mat_corners_px, cam.project_mm(MAT_CORNERS_MM), atol=CORNER_TOL_PX)
    assert cal.reprojection_error_mm < 1.0 and cal.reprojection_error_px < 1.0


@pytest.mark.parametrize("z_mm", [0.0, POT_HEIGHT_MM])
def test_self_calibration_maps_mat_points(mat_cal_30, mat_photo_30, z_mm):
    err = mapping_errors_mm(mat_photo_30[1], mat_cal_30, mat_grid_mm(), z_mm)
    assert err.max() < MAT_POINT_TOL_MM, err.max()


def test_pot_rim_maps_to_its_plan_position(mat_photo_20):
    """Height-aware: the rim at z = 38 lands on its true plan circle, where the z = 0 reading is shifted."""
    image, cam = mat_photo_20
    assert cam.tilt_deg == pytest.approx(20.0, abs=0.5)
    cal = calibrate_from_mat(image)
    ang = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    rim = np.column_stack([POT_TOP_RADIUS_MM * np.cos(ang), POT_TOP_RADIUS_MM * np.sin(ang)])
    px = cam.project_mm(np.column_stack([rim, np.full(len(rim), POT_HEIGHT_MM)]))
    np.testing.assert_allclose(cal.image_to_table_mm(px, POT_HEIGHT_MM), rim, atol=POT_RIM_TOL_MM)
    shift = np.linalg.norm(cal.image_to_table_mm(px, 0.0) - rim, axis=1)
    assert shift.min() > 10.0  # the flat reading would be wrong by centimetres: the test can fail


def test_no_mat_raises(table_without_mat):
    with pytest.raises(MatNotFoundError, match="no mat-sized uniform region found"):
        calibrate_from_mat(table_without_mat)
    uniform = np.full((360, 640, 3), (60, 120, 40), np.uint8)
    with pytest.raises(MatNotFoundError, match="no mat-sized uniform region found"):
        calibrate_from_mat(uniform)


@pytest.mark.parametrize("shape", [(1, 1, 3), (40, 640, 3), (2, 2)], ids=["1px", "thin-strip", "grey-2px"])
def test_tiny_image_is_named_not_a_crash(shape):
    with pytest.raises(MatNotFoundError, match=r"too small to show a mat"):
        calibrate_from_mat(np.zeros(shape, np.uint8))


@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "any-order"])
def test_four_hand_corners(ordered):
    cam = tilted_camera(30.0, dist=(0, 0, 0, 0, 0))
    corners = cam.project_mm(MAT_CORNERS_MM) + np.random.default_rng(5).normal(0, 0.3, (4, 2))
    given = corners if ordered else corners[[2, 0, 3, 1]]
    cal = from_corners(given, cam.image_size_wh_px, ordered=ordered)
    assert cal.source == "corners" and cal.plus_x_end == "right"
    np.testing.assert_allclose(cal.mat_corners_px, corners)
    for z in (0.0, POT_HEIGHT_MM):
        assert mapping_errors_mm(cam, cal, mat_grid_mm(), z).max() < CORNERS_POINT_TOL_MM


def test_bad_corners_are_named():
    with pytest.raises(CalibrationError, match="four finite corners"):
        from_corners([[0, 0], [1, 1], [2, 2]], (640, 480))
