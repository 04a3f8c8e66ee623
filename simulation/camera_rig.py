"""Random camera rigs above a table: pose, focal length, lens distortion and principal-point offset.

Shared by every game's simulator (tiddlywinks, pyramids, marbles): a rig is a `CameraModel`, so projection and
ray casting always go through the same OpenCV model the calibration code uses.
"""

from __future__ import annotations

import math

import numpy as np

from calibration.camera import CameraModel

# Barrel to mild pincushion, as phone and webcam lenses at these focal lengths show (task brief).
K1_RANGE = (-0.12, 0.05)
K2_ABS_MAX = 0.03
TANGENTIAL_ABS_MAX = 6e-4
PRINCIPAL_OFFSET_FRACTION = 0.02  # of the image width / height
FILL_RANGE = (0.88, 0.97)  # share of the limiting image extent the look area spans
ALIGNED_YAW_PROBABILITY = 0.85  # most tripods put the long side of the table across the frame


def _yaw_deg(rng: np.random.Generator) -> float:
    if rng.random() < ALIGNED_YAW_PROBABILITY:
        return float(rng.choice([0.0, 180.0]) + rng.normal(0.0, 6.0))
    return float(rng.uniform(0.0, 360.0))


def _fit_focal(eye: np.ndarray, target: np.ndarray, up: np.ndarray, corners_mm: np.ndarray,
               wh: tuple[int, int], fill: float, offset: tuple[float, float]) -> float:
    """Focal length (px) at which the look area's corners span ``fill`` of the frame (undistorted)."""
    probe = CameraModel.look_at(eye_mm=tuple(eye), target_mm=tuple(target), up_hint=tuple(up), focal_px=1.0,
                                image_size_wh_px=wh, principal_offset_px=offset)
    cam_pts = (probe.R @ corners_mm.T).T + probe.tvec
    xn = cam_pts[:, 0] / cam_pts[:, 2]
    yn = cam_pts[:, 1] / cam_pts[:, 2]
    w, h = wh
    cx, cy = probe.K[0, 2], probe.K[1, 2]
    # Each side limits separately, because the principal point is off-centre.
    limits = []
    for v, lo, hi in ((xn, cx, w - 1 - cx), (yn, cy, h - 1 - cy)):
        if v.max() > 0:
            limits.append(hi / v.max())
        if v.min() < 0:
            limits.append(lo / -v.min())
    return fill * min(limits)


def random_camera(rng: np.random.Generator, *, image_size_wh_px: tuple[int, int],
                  height_range_mm: tuple[float, float] = (1500.0, 2200.0), tilt_max_deg: float = 25.0,
                  look_area_mm: tuple[float, float] = (1828.8, 914.4)) -> CameraModel:
    """A camera 1.5-2.2 m above the table, tilted off vertical, any yaw, framing ``look_area_mm``.

    The look area is a rectangle centred (roughly) on the table origin, long side along x. The focal length is
    chosen so that it fills most of the frame; k1 is drawn in about [-0.12, 0.05] with small k2, p1, p2, and
    the principal point sits a little off the image centre. With pincushion distortion the focal length is
    shrunk until every corner of the look area stays inside the image.
    """
    w, h = (int(v) for v in image_size_wh_px)
    height = float(rng.uniform(*height_range_mm))
    tilt = math.radians(float(tilt_max_deg) * math.sqrt(float(rng.random())))
    yaw = math.radians(_yaw_deg(rng))
    lx, ly = look_area_mm
    target = np.array([rng.normal(0.0, 0.01 * lx), rng.normal(0.0, 0.01 * ly), 0.0])
    # The camera leans towards the target from the side opposite to its image-up direction.
    up = np.array([math.cos(yaw + math.pi / 2), math.sin(yaw + math.pi / 2), 0.0])
    horiz = -up * height * math.tan(tilt)
    eye = target + np.array([horiz[0], horiz[1], height])
    up_hint = up  # horizontal, so never parallel to the (downward) viewing direction
    offset = (float(rng.uniform(-1, 1) * PRINCIPAL_OFFSET_FRACTION * w),
              float(rng.uniform(-1, 1) * PRINCIPAL_OFFSET_FRACTION * h))
    corners = np.array([[sx * lx / 2, sy * ly / 2, 0.0] for sx in (-1, 1) for sy in (-1, 1)])
    fill = float(rng.uniform(*FILL_RANGE))
    focal = _fit_focal(eye, target, up_hint, corners, (w, h), fill, offset)
    k1 = float(rng.uniform(*K1_RANGE))
    dist = (k1, float(rng.uniform(-K2_ABS_MAX, K2_ABS_MAX)),
            float(rng.uniform(-TANGENTIAL_ABS_MAX, TANGENTIAL_ABS_MAX)),
            float(rng.uniform(-TANGENTIAL_ABS_MAX, TANGENTIAL_ABS_MAX)), 0.0)
    edge = np.array([[sx * lx / 2 * t, sy * ly / 2, 0.0] for sx in (-1, 1) for sy in (-1, 1)
                     for t in np.linspace(0, 1, 9)] + [[sx * lx / 2, sy * ly / 2 * t, 0.0]
                                                       for sx in (-1, 1) for sy in (-1, 1)
                                                       for t in np.linspace(0, 1, 9)])
    margin = 0.01 * min(w, h)
    for _ in range(30):
        cam = CameraModel.look_at(eye_mm=tuple(eye), target_mm=tuple(target), up_hint=tuple(up_hint),
                                  focal_px=focal, image_size_wh_px=(w, h), dist=dist, principal_offset_px=offset)
        px = cam.project_mm(edge)
        cx, cy = cam.K[0, 2], cam.K[1, 2]
        # Share of the room between the principal point and each image side that the (distorted) area uses.
        used = max((px[:, 0].max() - cx) / (w - 1 - cx), (cx - px[:, 0].min()) / cx,
                   (px[:, 1].max() - cy) / (h - 1 - cy), (cy - px[:, 1].min()) / cy)
        inside = (px[:, 0].min() >= margin and px[:, 0].max() <= w - 1 - margin
                  and px[:, 1].min() >= margin and px[:, 1].max() <= h - 1 - margin)
        if inside and abs(used - fill) < 0.005:
            break
        focal *= fill / used if inside or used < fill else 0.97
    return cam


def describe_camera(cam: CameraModel) -> dict:
    """Human-readable rig facts for render metadata."""
    c = cam.center_mm
    return {"height_mm": round(float(c[2]), 1), "tilt_deg": round(cam.tilt_deg, 2),
            "focal_px": round(float(cam.K[0, 0]), 2), "k1": round(float(cam.dist[0]), 4)}
