"""The camera from the outline of a raised ring: a solid of revolution of known radius and height.

A photo of the marbles ring without a calibration still shows the ring's outline against the ground. That
outline is not the image of one circle: it is the apparent contour of the raised ring, the top edge
(R = 914.4 mm, z = 0) where the camera looks down past it and the foot of the sand shoulder (R + 40 mm,
76.2 mm lower) where the camera sees the shoulder, i.e. the outer envelope of the images of the shoulder's
circles. Fitting one ellipse to that outline and taking it for the top edge tilts the plane and shifts the
centre by tens of millimetres. Here the camera (focal length, tilt, position) is fitted to the outline with
the shoulder modelled: each image point's signed distance to the union of the projected shoulder circles
(each circle's image is a conic, the union's signed distance the minimum of the conics' Sampson distances).

A single circle seen by a camera of known focal length fixes the plane's pose up to a two-fold ambiguity,
and leaves the focal length free. The shoulder's second, lower circle can settle both where it shows apart
from the top edge (a few pixels): the solver is started from both poses of several focal lengths and the
lowest residual wins. Often, not always, that is decisive: on a photo another (focal length, pose) pair may
fit nearly as well. What the outline leaves loose is reported as ``frame_sigma_mm``: a floor for what is
not modelled (principal point, lens distortion) combined with the spread of the ring frames whose residual
is within a few per cent of the best one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import least_squares

from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from geometry.marbles import RING_HEIGHT_MM, RING_RADIUS_MM

SHOULDER_WIDTH_MM = 40.0  # plan width of the sand shoulder outside R (sand slumps at ~60 deg)
SHOULDER_CIRCLES = 7  # circles sampled down the shoulder to build its apparent outline
OUTLINE_SCALE_PX = 1.5  # robust loss scale: the outline's pixel noise (mask edge, JPEG, grass texture)
TRIM_MADS = 3.0  # outline points beyond 3 robust sigmas (or TRIM_MIN_PX) are dropped for a second solve
TRIM_MIN_PX = 2.0
MAX_TILT_DEG = 60.0  # camera above the ring: optical axis within 60 deg of straight down
FOCAL_RATIOS = (0.45, 0.55, 0.67, 0.8, 1.0)  # solver starts, focal / long image side: wide phone to short tele
FOCAL_RATIO_BOUNDS = (0.35, 1.6)  # the fitted focal length stays within these multiples of the long side
# fits within 3 % of the best cost explain the outline as well (on the bench's renders the wrong side of
# the two-fold ambiguity came within 0.2-2 % where it fitted at all)
NEAR_BEST_COST_RATIO = 1.03
# A right self-calibration still puts points ~10-20 mm off (principal point and lens distortion are not
# modelled): the median plan error of the bench's whole-rim renders, ring frame against the render's camera
FRAME_SIGMA_FLOOR_MM = 12.0


def shoulder_profile(n: int = SHOULDER_CIRCLES) -> np.ndarray:
    """(n, 2) plan radius and height (mm) down the sand shoulder, top edge first: a smooth slump
    (zero slope at the top and at the foot)."""
    s = np.linspace(0.0, 1.0, n)
    return np.column_stack([RING_RADIUS_MM + SHOULDER_WIDTH_MM * s, -RING_HEIGHT_MM * s * s * (3 - 2 * s)])


def _rotation(alpha: float, beta: float) -> np.ndarray:
    """Camera rotation (table -> camera) tilted by ``alpha`` about camera x and ``beta`` about camera y from
    straight down (image x along ring x, image up along ring +y)."""
    ca, sa, cb, sb = math.cos(alpha), math.sin(alpha), math.cos(beta), math.sin(beta)
    Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    Ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    return Rx @ Ry @ np.diag([1.0, -1.0, -1.0])


def _signed_outline_px(x: np.ndarray, pts_px: np.ndarray, principal_px: np.ndarray,
                       profile: np.ndarray, either_edge: bool) -> np.ndarray:
    """Signed Sampson distance (px, + outside) of each point to the union of the shoulder circles' images."""
    f = math.exp(x[0])
    R = _rotation(x[1], x[2])
    t = -R @ x[3:6]
    K = np.array([[f, 0, principal_px[0]], [0, f, principal_px[1]], [0, 0, 1.0]])
    p = np.column_stack([pts_px, np.ones(len(pts_px))])
    best = top = None
    for r_mm, z_mm in profile:
        H = K @ np.column_stack([R[:, 0], R[:, 1], R[:, 2] * z_mm + t])
        Hi = np.linalg.inv(H)
        C = Hi.T @ np.diag([1.0, 1.0, -r_mm * r_mm]) @ Hi
        Cp = p @ C.T
        e = np.sum(p * Cp, 1)
        g = 2 * np.hypot(Cp[:, 0], Cp[:, 1])
        d = e / np.maximum(g, 1e-12)
        top = d if top is None else top
        best = d if best is None else np.minimum(best, d)
    if not either_edge:
        return best
    # an outline of the bright sand only: a lit shoulder shows with the sand, a shaded one with the ground,
    # so each point is either on the apparent outline of the whole ring or, where the shoulder is shaded,
    # on the top edge (this leaves the tilt's two-fold ambiguity looser)
    return np.where(np.abs(top) < np.abs(best), top, best)


def _camera(x: np.ndarray, principal_px: np.ndarray, image_size_wh_px: tuple[int, int]) -> CameraModel:
    f = math.exp(x[0])
    R = _rotation(x[1], x[2])
    K = np.array([[f, 0, principal_px[0]], [0, f, principal_px[1]], [0, 0, 1.0]])
    rvec, _ = cv2.Rodrigues(R)
    return CameraModel(K=K, dist=np.zeros(5), rvec=rvec.ravel(), tvec=-R @ x[3:6],
                       image_size_wh_px=image_size_wh_px)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RingCameraFit:
    """A camera fitted to a ring outline: the best fit, its residual and how loose the frame is."""

    camera: CameraModel
    rms_px: float  # rms signed distance of the inlier outline points to the fitted outline
    inliers: int
    frame_sigma_mm: float  # the floor combined with the spread of near-best ring frames (plan mm)
    candidates: tuple[CameraModel, ...] = ()
    costs: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not (self.rms_px >= 0 and self.frame_sigma_mm >= 0):
            raise CalibrationError(f"bad ring fit: rms {self.rms_px} px, "
                                   f"frame sigma {self.frame_sigma_mm} mm")


def _frame_spread_mm(best: CameraModel, others: list[CameraModel]) -> float:
    """Largest plan distance (mm) between where ``best`` and another near-best camera put the same image
    points (ring centre and rim, top-edge height), yaw taken out: how far apart equally good frames lie."""
    if not others:
        return 0.0
    a = np.linspace(0, 2 * math.pi, 24, endpoint=False)
    rr = 0.7 * RING_RADIUS_MM
    pts = np.column_stack([np.r_[0.0, rr * np.cos(a)], np.r_[0.0, rr * np.sin(a)], np.zeros(25)])
    px = best.project_mm(pts)
    spread = 0.0
    for cam in others:
        q = cam.image_to_table_mm(px, 0.0)
        ang = math.atan2(np.sum(q[:, 0] * pts[:, 1] - q[:, 1] * pts[:, 0]),
                         np.sum(q[:, 0] * pts[:, 0] + q[:, 1] * pts[:, 1]))
        c, s = math.cos(ang), math.sin(ang)
        q = q @ np.array([[c, s], [-s, c]])
        spread = max(spread, float(np.linalg.norm(q - pts[:, :2], axis=1).max()))
    return spread


def fit_ring_camera(outline_px: np.ndarray, image_size_wh_px: tuple[int, int], *,
                    focal_px: float | None = None, either_edge: bool = False) -> RingCameraFit:
    """The camera (focal length unless given, tilt, position; principal point at the image centre, no
    distortion) whose view of the raised ring has ``outline_px`` as its apparent outline.

    ``either_edge``: the outline is of the bright sand only (a shaded shoulder lost to the ground), so each
    point may lie on the top edge instead. The solver starts above the outline's ellipse at several focal
    lengths, tilted each way (the two-fold ambiguity), trims what is not ring and keeps the lowest cost.
    """
    w, h = image_size_wh_px
    pts = np.asarray(outline_px, float).reshape(-1, 2)
    if len(pts) < 30:
        raise CalibrationError(f"only {len(pts)} ring outline points: too few to fit a camera")
    if len(pts) > 360:
        pts = pts[np.linspace(0, len(pts) - 1, 360).astype(int)]
    pp = np.array([(w - 1) / 2, (h - 1) / 2])
    profile = shoulder_profile()
    long_side = max(w, h)
    f_lo, f_hi = (math.log(r * long_side) for r in FOCAL_RATIO_BOUNDS)
    (u0, v0), (a2, b2), _ = cv2.fitEllipse(pts.astype(np.float32))
    fits = []
    for ratio in FOCAL_RATIOS if focal_px is None else (focal_px / long_side,):
        f = ratio * long_side
        height = f * RING_RADIUS_MM / (0.25 * (a2 + b2))
        for tilt0 in ((0.3, 0.0), (-0.3, 0.0), (0.0, 0.3), (0.0, -0.3)):
            pose0 = np.r_[tilt0, -(u0 - pp[0]) * height / f, (v0 - pp[1]) * height / f, height]
            if focal_px is None:
                def resid(x):
                    return _signed_outline_px(x, pts, pp, profile, either_edge)
                x0 = np.r_[math.log(f), pose0]
                lb, ub = np.r_[f_lo, np.full(5, -np.inf)], np.r_[f_hi, np.full(5, np.inf)]
            else:
                def resid(x, lf=math.log(f)):
                    return _signed_outline_px(np.r_[lf, x], pts, pp, profile, either_edge)
                x0, lb, ub = pose0, np.full(5, -np.inf), np.full(5, np.inf)
            try:
                sol = least_squares(resid, x0, loss="soft_l1", f_scale=OUTLINE_SCALE_PX, bounds=(lb, ub),
                                    max_nfev=200, x_scale="jac")
                # again without what is not ring (a blob of haze or a ball on the edge joined to the outline)
                r = sol.fun
                keep = np.abs(r) <= max(TRIM_MADS * 1.4826 * float(np.median(np.abs(r))), TRIM_MIN_PX)
                if keep.sum() >= 30 and not keep.all():
                    sol = least_squares(lambda x, k=keep: resid(x)[k], sol.x, loss="soft_l1",
                                        f_scale=OUTLINE_SCALE_PX, bounds=(lb, ub), max_nfev=100, x_scale="jac")
            except (np.linalg.LinAlgError, ValueError):
                continue
            x = sol.x if focal_px is None else np.r_[math.log(f), sol.x]
            cam = _camera(x, pp, (w, h))
            if cam.tilt_deg > MAX_TILT_DEG or x[5] <= RING_HEIGHT_MM:
                continue
            r = resid(sol.x)
            # ranked on every point with a truncated square (a lump of outliers costs every fit the same),
            # so fits that trimmed differently compare
            fits.append((float(np.sum(np.minimum(r * r, (TRIM_MIN_PX * OUTLINE_SCALE_PX) ** 2))), cam, r))
    if not fits:
        raise CalibrationError("no camera above the ring explains its outline")
    fits.sort(key=lambda t: t[0])
    cost, cam, r = fits[0]
    inl = np.abs(r) <= 3 * OUTLINE_SCALE_PX
    rms = float(np.sqrt(np.mean(r[inl] ** 2))) if inl.any() else float("inf")
    near = [c for k, c, _r in fits[1:] if k <= NEAR_BEST_COST_RATIO * cost]
    sigma = math.hypot(FRAME_SIGMA_FLOOR_MM, _frame_spread_mm(cam, near))
    return RingCameraFit(camera=cam, rms_px=rms, inliers=int(inl.sum()), frame_sigma_mm=sigma,
                         candidates=tuple(c for _k, c, _r in fits), costs=tuple(k for k, _c, _r in fits))
