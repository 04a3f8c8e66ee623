"""Small fitting helpers shared by the board and mat calibrations (pixels <-> mm residuals, 2-D lines)."""

from __future__ import annotations

import math

import numpy as np

from calibration.camera import CameraModel


def mm_per_px(camera: CameraModel, points_mm: np.ndarray) -> np.ndarray:
    """Local ground sampling distance (mm per pixel) at each table point ``(N, 3)``, in its own plane."""
    p = np.asarray(points_mm, dtype=np.float64).reshape(-1, 3)
    q = camera.project_mm(np.concatenate([p, p + [1.0, 0.0, 0.0], p + [0.0, 1.0, 0.0]]))
    q0, qx, qy = np.split(q, 3)
    a, b = qx - q0, qy - q0
    det = np.abs(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0])  # px^2 per mm^2
    return 1.0 / np.sqrt(det)


def reprojection_rms(
    camera: CameraModel, object_mm: np.ndarray, observed_px: np.ndarray
) -> tuple[float, float]:
    """RMS of the reprojection residuals, in table mm (each residual scaled locally) and in pixels."""
    obj = np.asarray(object_mm, dtype=np.float64).reshape(-1, 3)
    res_px = np.linalg.norm(camera.project_mm(obj) - np.asarray(observed_px, float).reshape(-1, 2), axis=1)
    res_mm = res_px * mm_per_px(camera, obj)
    return float(math.sqrt(np.mean(res_mm**2))), float(math.sqrt(np.mean(res_px**2)))


def fit_line_tls(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total-least-squares line through ``(N, 2)`` points: a point on it and its unit normal."""
    c = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - c, full_matrices=False)
    return c, vt[1]


def fit_line_ransac(
    points: np.ndarray, threshold: float, rng: np.random.Generator, iterations: int = 200
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Robust line: RANSAC on point pairs, then TLS on the inliers. Returns point, normal, inlier mask."""
    n = len(points)
    best = np.ones(n, bool)
    best_count = -1
    if n >= 2:
        pairs = rng.integers(0, n, size=(iterations, 2))
        for i, j in pairs:
            d = points[j] - points[i]
            norm = math.hypot(d[0], d[1])
            if norm < 1e-9:
                continue
            normal = np.array([-d[1], d[0]]) / norm
            inl = np.abs((points - points[i]) @ normal) < threshold
            count = int(inl.sum())
            if count > best_count:
                best, best_count = inl, count
    c, normal = fit_line_tls(points[best])
    for _ in range(2):  # re-select inliers around the refined line
        inl = np.abs((points - c) @ normal) < threshold
        if inl.sum() < 2:
            break
        best = inl
        c, normal = fit_line_tls(points[best])
    return c, normal, best


def intersect_lines(c1: np.ndarray, n1: np.ndarray, c2: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """Intersection of two lines given as (point, unit normal)."""
    A = np.stack([n1, n2])
    b = np.array([n1 @ c1, n2 @ c2])
    return np.linalg.solve(A, b)


def rigid_fit_2d(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Rotation ``R`` (2x2) and shift ``t`` minimising ``|R src + t - dst|``; returns R, t and the RMS."""
    cs, cd = src.mean(axis=0), dst.mean(axis=0)
    U, _, Vt = np.linalg.svd((src - cs).T @ (dst - cd))
    D = np.diag([1.0, np.sign(np.linalg.det(Vt.T @ U.T))])
    R = Vt.T @ D @ U.T
    t = cd - R @ cs
    rms = float(np.sqrt(np.mean(np.sum((src @ R.T + t - dst) ** 2, axis=1))))
    return R, t, rms


def order_clockwise(points_px: np.ndarray) -> np.ndarray:
    """Sort image points clockwise as seen on screen (image y down), starting from the top-left-most."""
    pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])  # increasing = clockwise on screen
    pts = pts[np.argsort(ang)]
    start = int(np.argmin(pts.sum(axis=1)))
    return np.roll(pts, -start, axis=0)
