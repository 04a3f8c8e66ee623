"""Scene constants and helpers for the calibration tests (cameras, grids, error measures)."""

from __future__ import annotations

import math

import numpy as np

from calibration.camera import CameraModel

IMAGE_SIZE_WH_PX = (1920, 1080)
TRUE_FOCAL_PX = 1400.0
TRUE_DIST = (-0.10, 0.03, 0.0, 0.0, 0.0)
MAT_FOCAL_PX = 1250.0
MAT_K1 = -0.08


def tilted_camera(
    tilt_deg: float,
    *,
    distance_mm: float = 1700.0,
    focal_px: float = MAT_FOCAL_PX,
    dist=(MAT_K1, 0, 0, 0, 0),
    side_mm: float = 80.0,
) -> CameraModel:
    """A camera on the -y side of the mat, ``tilt_deg`` from straight down, aimed at the mat centre."""
    t = math.radians(tilt_deg)
    return CameraModel.look_at(
        eye_mm=(side_mm, -distance_mm * math.sin(t), distance_mm * math.cos(t)),
        target_mm=(0, 0, 0),
        focal_px=focal_px,
        image_size_wh_px=IMAGE_SIZE_WH_PX,
        dist=dist,
    )


# Board views for the intrinsics: (eye, target) in the board's frame; the board lands all over the frame.
BOARD_VIEWS_MM = (
    ((0, -250, 650), (0, 0, 0)),
    ((250, -100, 600), (230, -150, 0)),
    ((-280, -150, 560), (-240, 120, 0)),
    ((0, 320, 600), (-250, -150, 0)),
    ((-150, 260, 640), (260, 150, 0)),
    ((100, 100, 500), (-260, 160, 0)),
)


def mat_grid_mm(nx: int = 13, ny: int = 7) -> np.ndarray:
    """Points on a grid over the whole mat (edges included), (N, 2) mm."""
    xs, ys = np.meshgrid(np.linspace(-914.4, 914.4, nx), np.linspace(-457.2, 457.2, ny))
    return np.column_stack([xs.ravel(), ys.ravel()])


def mapping_errors_mm(
    true_camera: CameraModel, calibration, points_mm: np.ndarray, z_mm: float
) -> np.ndarray:
    """Plan error of table points at height z seen by the true camera, mapped back by ``calibration``."""
    px = true_camera.project_mm(np.column_stack([points_mm, np.full(len(points_mm), z_mm)]))
    return np.linalg.norm(calibration.image_to_table_mm(px, z_mm) - points_mm, axis=1)
