"""TableCalibration: mapping both ways, JSON round trip, strict keys."""

from __future__ import annotations

import json

import numpy as np
import pytest

from calib_scenes import mat_grid_mm, tilted_camera
from calibration.errors import CalibrationError
from calibration.types import MAT_CORNERS_MM, TableCalibration

ROUND_TRIP_TOL_MM = 1e-6


def _calibration() -> TableCalibration:
    return TableCalibration.from_camera(tilted_camera(30.0), source="truth")


def test_round_trip_px_mm_at_heights():
    cal = _calibration()
    pts = mat_grid_mm(7, 5)
    for z in (0.0, 38.0):
        px = cal.table_to_image_px(np.column_stack([pts, np.full(len(pts), z)]))
        np.testing.assert_allclose(cal.image_to_table_mm(px, z), pts, atol=ROUND_TRIP_TOL_MM)
    one = cal.image_to_table_mm(cal.table_to_image_px(np.array([100.0, -50.0])))
    assert one.shape == (2,)
    np.testing.assert_allclose(one, [100.0, -50.0], atol=ROUND_TRIP_TOL_MM)


def test_projection_of_many_points_is_opencvs():
    # thousands of points take the column arithmetic, a few take cv2.projectPoints: the same pixels, to the bit,
    # under a lens with every one of the five distortion terms
    import cv2

    cam = tilted_camera(30.0, dist=(-0.09, 0.02, 4e-4, -5e-4, 0.003))
    rng = np.random.default_rng(11)
    pts = np.column_stack([rng.uniform(-950, 950, 3000), rng.uniform(-480, 480, 3000), rng.uniform(-5, 40, 3000)])
    want = cv2.projectPoints(pts, cam.rvec, cam.tvec, cam.K, cam.dist)[0].reshape(-1, 2)
    np.testing.assert_array_equal(cam.project_mm(pts), want)
    np.testing.assert_array_equal(cam.project_mm(pts[:7]), want[:7])
    # one to four points take Python floats: the same pixels too
    for k in range(0, 40, 4):
        for n in (1, 2, 3, 4):
            np.testing.assert_array_equal(cam.project_mm(pts[k:k + n]), want[k:k + n])
    np.testing.assert_array_equal(cam.project_mm(pts[5, :2]), cv2.projectPoints(
        np.array([[*pts[5, :2], 0.0]]), cam.rvec, cam.tvec, cam.K, cam.dist)[0].reshape(-1, 2))


def test_ground_sampling_distance_is_that_of_opencvs_projection():
    import math

    import cv2

    cam = tilted_camera(30.0, dist=(-0.09, 0.02, 4e-4, -5e-4, 0.003))
    rng = np.random.default_rng(12)
    for x, y, z in zip(rng.uniform(-950, 950, 50), rng.uniform(-480, 480, 50), rng.choice([0.0, 1.2, 38.0], 50)):
        p = np.array([[x, y, z], [x + 1.0, y, z], [x, y + 1.0, z]])
        q = cv2.projectPoints(p, cam.rvec, cam.tvec, cam.K, cam.dist)[0].reshape(-1, 2)
        want = 1.0 / math.sqrt(abs(np.linalg.det(np.column_stack([q[1] - q[0], q[2] - q[0]]))))
        assert cam.mm_per_px_at((x, y), z) == want


def test_jacobian_maps_small_plan_steps_to_pixel_steps():
    cam = tilted_camera(30.0, dist=(-0.09, 0.02, 4e-4, -5e-4, 0.003))
    rng = np.random.default_rng(3)
    pts = np.column_stack([rng.uniform(-900, 900, 20), rng.uniform(-450, 450, 20), rng.choice([0.0, 38.0], 20)])
    px, jac = cam.project_with_jacobian(pts)
    np.testing.assert_array_equal(px, cam.project_mm(pts))
    assert jac.shape == (20, 2, 2)
    # a wink's radius away the affine map is still within a twentieth of a pixel of the projection
    for step in ((11.0, 0.0), (0.0, -11.0), (7.8, 7.8)):
        moved = cam.project_mm(pts + (*step, 0.0))
        np.testing.assert_allclose(px + jac @ np.array(step), moved, atol=0.05)


def test_mat_corners_order_and_plus_x():
    cal = _calibration()
    c = cal.mat_corners_px
    assert cal.plus_x_end == "right"
    assert c[1, 0] > c[0, 0] and c[2, 0] > c[3, 0]  # (+x) corners to the right
    assert c[0, 1] < c[3, 1]  # +y is further from the camera on the -y side: higher in the image
    np.testing.assert_allclose(cal.table_to_image_px(MAT_CORNERS_MM), c)


def test_homography_matches_camera_without_distortion():
    cam = tilted_camera(25.0, dist=(0, 0, 0, 0, 0))
    cal = TableCalibration.from_camera(cam)
    px = cam.project_mm(mat_grid_mm(5, 3))
    q = np.column_stack([px, np.ones(len(px))]) @ cal.H_table_from_image.T
    np.testing.assert_allclose(q[:, :2] / q[:, 2:], mat_grid_mm(5, 3), atol=1e-6)


def test_json_round_trip(tmp_path):
    cal = TableCalibration(
        camera=tilted_camera(30.0),
        source="mat",
        reprojection_error_mm=0.4,
        reprojection_error_px=0.3,
        mat_corners_px=[[1, 2], [3, 4], [5, 6], [7, 8]],
    )
    path = tmp_path / "CAL.json"
    cal.to_json(path)
    back = TableCalibration.from_json(path)
    assert back.source == "mat" and back.reprojection_error_mm == pytest.approx(0.4)
    np.testing.assert_allclose(back.camera.K, cal.camera.K)
    np.testing.assert_allclose(back.mat_corners_px, cal.mat_corners_px)
    # The record written by the simulator's truth ({source, reprojection_error_mm, camera}) reads too.
    minimal = {"source": "truth", "reprojection_error_mm": 0.0, "camera": cal.camera.to_dict()}
    assert TableCalibration.from_dict(minimal).mat_corners_px is None


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d.pop("camera"), ["missing", "camera"]),
        (lambda d: d.update(focal=3), ["unknown", "focal"]),
        (lambda d: d.update(source="guess"), ["source", "guess"]),
        (lambda d: d.update(reprojection_error_mm=-1), ["reprojection_error_mm"]),
        (lambda d: d.update(plus_x_end="left"), ["plus_x_end"]),
        (lambda d: d["camera"].pop("K"), ["K"]),
    ],
)
def test_bad_records_name_the_problem(edit, words):
    data = json.loads(json.dumps(_calibration().to_dict()))
    edit(data)
    with pytest.raises(CalibrationError) as info:
        TableCalibration.from_dict(data)
    for word in words:
        assert word in str(info.value)
