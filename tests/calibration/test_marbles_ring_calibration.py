"""calibration.ring: a camera fitted to the apparent outline of the raised marbles ring, in millimetres.

The outline is drawn exactly from a known pinhole camera (the union of the shoulder's circles, filled at
1/8 px and traced as a photo's mask would be), so the test isolates the geometry from the segmentation.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.ring import fit_ring_camera, shoulder_profile
from geometry.marbles import RING_RADIUS_MM

SIZE_WH = (1920, 1080)
CENTRE_TOL_MM = 3.0  # exact outline: the frame is fixed to a few mm (pixel quantisation of the outline)
PLAN_TOL_MM = 4.0


def _camera(tilt_deg: float, height_mm: float, yaw_deg: float, focal_px: float) -> CameraModel:
    """A camera looking at the ring centre from ``height_mm``, tilted ``tilt_deg`` off vertical."""
    yaw = math.radians(yaw_deg)
    up = np.array([math.cos(yaw + math.pi / 2), math.sin(yaw + math.pi / 2), 0.0])
    eye = -up * height_mm * math.tan(math.radians(tilt_deg)) + np.array([0.0, 0.0, height_mm])
    return CameraModel.look_at(eye_mm=tuple(eye), target_mm=(0.0, 0.0, 0.0), up_hint=tuple(up),
                               focal_px=focal_px, image_size_wh_px=SIZE_WH)


def _outline(cam: CameraModel) -> np.ndarray:
    w, h = SIZE_WH
    a = np.linspace(0, 2 * math.pi, 2000, endpoint=False)
    mask = np.zeros((h, w), np.uint8)
    for r_mm, z_mm in shoulder_profile(15):
        px = cam.project_mm(np.column_stack([r_mm * np.cos(a), r_mm * np.sin(a), np.full_like(a, z_mm)]))
        cv2.fillPoly(mask, [np.round(px * 8).astype(np.int32)], 1, shift=3)
    cnts, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    pts = max(cnts, key=len).reshape(-1, 2).astype(float)
    keep = (pts[:, 0] > 4) & (pts[:, 1] > 4) & (pts[:, 0] < w - 5) & (pts[:, 1] < h - 5)
    return pts[keep]


def _plan_errors_mm(truth: CameraModel, fitted: CameraModel) -> tuple[float, float]:
    """Ring centre error and the largest error over points across the ring (yaw taken out), mm."""
    a = np.linspace(0, 2 * math.pi, 16, endpoint=False)
    rr = 0.8 * RING_RADIUS_MM
    pts = np.column_stack([np.r_[0.0, rr * np.cos(a)], np.r_[0.0, rr * np.sin(a)], np.zeros(17)])
    q = fitted.image_to_table_mm(truth.project_mm(pts), 0.0)
    ang = math.atan2(np.sum(q[:, 0] * pts[:, 1] - q[:, 1] * pts[:, 0]),
                     np.sum(q[:, 0] * pts[:, 0] + q[:, 1] * pts[:, 1]))
    c, s = math.cos(ang), math.sin(ang)
    q = q @ np.array([[c, s], [-s, c]])
    return float(np.hypot(*q[0])), float(np.linalg.norm(q - pts[:, :2], axis=1).max())


@pytest.mark.parametrize(("tilt_deg", "height_mm", "yaw_deg"), [(22.0, 1900.0, 30.0), (15.0, 1700.0, 200.0)])
def test_tilted_ring_frame_from_outline_with_known_focal(tilt_deg, height_mm, yaw_deg):
    # the two-fold ambiguity: the other pose fits the top edge as well and is ~200-300 mm off; the shoulder's
    # second circle must pick the right one
    cam = _camera(tilt_deg, height_mm, yaw_deg, 980.0)
    fit = fit_ring_camera(_outline(cam), SIZE_WH, focal_px=980.0)
    centre_mm, worst_mm = _plan_errors_mm(cam, fit.camera)
    assert centre_mm <= CENTRE_TOL_MM
    assert worst_mm <= PLAN_TOL_MM
    assert fit.camera.tilt_deg == pytest.approx(tilt_deg, abs=1.0)


def test_focal_length_recovered_from_the_shoulder():
    cam = _camera(22.0, 1900.0, 30.0, 980.0)
    fit = fit_ring_camera(_outline(cam), SIZE_WH)
    assert fit.camera.K[0, 0] == pytest.approx(980.0, rel=0.03)
    centre_mm, worst_mm = _plan_errors_mm(cam, fit.camera)
    assert centre_mm <= CENTRE_TOL_MM
    assert worst_mm <= PLAN_TOL_MM


def test_frame_sigma_never_below_the_floor():
    cam = _camera(15.0, 1700.0, 200.0, 980.0)
    fit = fit_ring_camera(_outline(cam), SIZE_WH, focal_px=980.0)
    assert fit.frame_sigma_mm >= 10.0
