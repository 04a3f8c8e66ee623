"""The marbles ring in a photo: its image ellipse and the ring frame (camera pose) it implies.

With a calibration the ring is simply projected. Without one, the sand-covered ring is segmented from the
ground around it (sand is the bright, yellow class of a two-class Otsu split), the sand's outer boundary (in
practice the ring's top edge R at z = 0: the sloping shoulder is shaded and falls in with the ground) is
fitted with an ellipse, robustly (points on the image border dropped, outliers trimmed), and the plane pose
is solved from that conic and the known radius: a circle's image fixes the plane's normal and distance once
the focal length is known (principal point at the image centre). The two-fold normal ambiguity, and the
focal length when not given, are settled by the rim's second circle: each candidate pose predicts where the
foot of the shoulder (R + 40 mm, 76.2 mm lower) shows apart from the top edge on the side facing the camera,
and the pose whose prediction lies on the strongest image edge wins (camera above the ring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import least_squares

from calibration.camera import CameraModel
from geometry.marbles import RING_HEIGHT_MM, RING_RADIUS_MM
from vision.types import VisionError

RIM_FOOT_RADIUS_MM = RING_RADIUS_MM + 40.0  # the sand shoulder meets the ground ~40 mm outside R (MB 1 sand)
DEFAULT_FOCAL_RATIO = 0.75  # focal length / long image side of a typical phone main camera (26 mm equiv.)
# Focal lengths tried when none is given (wide phone camera to short tele), chosen by the top-edge score
FOCAL_RATIOS = (0.5, 0.58, 0.66, 0.75, 0.9, 1.1)
MIN_SAND_GROUND_SEPARATION = 20.0  # CIELAB distance of the two classes' means: sand against grass/earth/paving
MAX_TILT_DEG = 60.0  # camera above the ring: the optical axis within 60 deg of straight down


class RingNotFoundError(VisionError):
    """No ring rim could be fitted and no calibration was given; the message says what was seen."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RingDetection:
    camera: CameraModel
    source: str  # "given" | "ring_ellipse"
    center_px: tuple[float, float]
    ellipse_px: dict
    rim_fit_rms_px: float | None = None

    def to_dict(self) -> dict:
        return {
            "center_mm": [0.0, 0.0],
            "radius_mm": RING_RADIUS_MM,
            "height_mm": RING_HEIGHT_MM,
            "center_px": [round(self.center_px[0], 2), round(self.center_px[1], 2)],
            "ellipse_px": self.ellipse_px,
            "source": self.source,
            "rim_fit_rms_px": None if self.rim_fit_rms_px is None else round(self.rim_fit_rms_px, 3),
        }


def ring_ellipse_px(camera: CameraModel, radius_mm: float = RING_RADIUS_MM, z_mm: float = 0.0) -> dict:
    """``cv2.fitEllipse`` of the projected circle: centre, full axes, angle (deg)."""
    a = np.linspace(0, 2 * math.pi, 360, endpoint=False)
    pts = np.column_stack([radius_mm * np.cos(a), radius_mm * np.sin(a), np.full_like(a, z_mm)])
    (cx, cy), (ax1, ax2), ang = cv2.fitEllipse(camera.project_mm(pts).astype(np.float32))
    return {"center": [round(cx, 2), round(cy, 2)], "axes": [round(ax1, 2), round(ax2, 2)],
            "angle_deg": round(ang, 3)}


def _from_camera(camera: CameraModel, source: str, rms: float | None = None) -> RingDetection:
    c = camera.project_mm(np.zeros((1, 3)))[0]
    return RingDetection(camera=camera, source=source, center_px=(float(c[0]), float(c[1])),
                         ellipse_px=ring_ellipse_px(camera), rim_fit_rms_px=rms)


def sand_mask(frame_bgr: np.ndarray) -> np.ndarray:
    """Sand (bright, yellow) against grass, earth or paving: Otsu on yellowness plus lightness."""
    small = cv2.GaussianBlur(frame_bgr, (0, 0), 2.0)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    feat = lab[..., 2] + 0.5 * lab[..., 0]
    feat = cv2.normalize(feat, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    _, m = cv2.threshold(feat, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    n, lbl, st, _ = cv2.connectedComponentsWithStats(m)
    if n < 2:
        return np.zeros(m.shape, bool)
    big = 1 + int(np.argmax(st[1:, 4]))
    out = (lbl == big).astype(np.uint8)
    # fill holes (marbles, the scribed line)
    ff = out.copy()
    cv2.floodFill(ff, np.zeros((out.shape[0] + 2, out.shape[1] + 2), np.uint8), (0, 0), 1)
    return (out | (1 - ff)).astype(bool) if ff[0, 0] == 1 and out[0, 0] == 0 else out.astype(bool)


def _conic(ellipse) -> np.ndarray:
    (xc, yc), (a2, b2), ang = ellipse
    a, b = a2 / 2, b2 / 2
    t = math.radians(ang)
    c, s = math.cos(t), math.sin(t)
    T = np.array([[c, s, -(c * xc + s * yc)], [-s, c, -(-s * xc + c * yc)], [0, 0, 1]])
    D = np.diag([1 / a**2, 1 / b**2, -1.0])
    return T.T @ D @ T


def _sampson(C: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.column_stack([pts, np.ones(len(pts))])
    Cp = p @ C.T
    e = np.sum(p * Cp, 1)
    g = 2 * np.hypot(Cp[:, 0], Cp[:, 1])
    return e / np.maximum(g, 1e-12)


def fit_rim_ellipse(mask: np.ndarray) -> tuple[tuple, float, int]:
    """Robust ellipse of the sand boundary: (cv2 ellipse, rms residual px, points used)."""
    h, w = mask.shape
    cnts, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not cnts:
        raise RingNotFoundError("no sand region found")
    pts = max(cnts, key=len).reshape(-1, 2).astype(np.float64)
    border = 4
    keep = (pts[:, 0] > border) & (pts[:, 1] > border) & (pts[:, 0] < w - 1 - border) & (pts[:, 1] < h - 1 - border)
    pts = pts[keep]
    if len(pts) < 50:
        raise RingNotFoundError(f"only {len(pts)} rim points visible: the ring edge is out of the picture")
    ell = cv2.fitEllipse(pts.astype(np.float32))
    for _ in range(4):
        r = np.abs(_sampson(_conic(ell), pts))
        lim = max(2.5 * float(np.median(r)) * 1.4826, 1.0)
        inl = pts[r <= lim]
        if len(inl) < 50:
            break
        ell = cv2.fitEllipse(inl.astype(np.float32))
    rms = float(np.sqrt(np.mean(_sampson(_conic(ell), inl) ** 2)))
    return ell, rms, len(inl)


def _rot(alpha: float, beta: float) -> np.ndarray:
    ca, sa, cb, sb = math.cos(alpha), math.sin(alpha), math.cos(beta), math.sin(beta)
    Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    Ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    R0 = np.diag([1.0, -1.0, -1.0])  # looking straight down, image x = ring x, image up = ring +y
    return Rx @ Ry @ R0


def camera_from_rim(ellipse, image_size_wh_px: tuple[int, int], focal_px: float,
                    radius_mm: float = RING_RADIUS_MM, z_mm: float = 0.0,
                    tilt0: tuple[float, float] = (0.0, 0.0)) -> tuple[CameraModel, float]:
    """Camera pose from the image conic of a horizontal circle of known radius and height (focal known).

    Returns the camera and the rms Sampson residual (px). ``tilt0`` starts the solver on one side of the
    two-fold ambiguity."""
    w, h = image_size_wh_px
    K = np.array([[focal_px, 0, (w - 1) / 2], [0, focal_px, (h - 1) / 2], [0, 0, 1]])
    C = _conic(ellipse)
    (u0, v0), (a2, b2), _ = ellipse
    ts = np.linspace(0, 2 * math.pi, 72, endpoint=False)
    circle = np.column_stack([radius_mm * np.cos(ts), radius_mm * np.sin(ts), np.full_like(ts, z_mm)])

    def cam(x):
        R = _rot(x[0], x[1])
        tvec = -R @ x[2:5]
        return R, tvec

    def resid(x):
        R, tvec = cam(x)
        Xc = circle @ R.T + tvec
        uv = (Xc[:, :2] / Xc[:, 2:3]) * focal_px + K[:2, 2]
        return _sampson(C, uv)

    H = focal_px * radius_mm / (0.25 * (a2 + b2)) + z_mm
    x0 = np.array([tilt0[0], tilt0[1], -(u0 - K[0, 2]) * (H - z_mm) / focal_px, (v0 - K[1, 2]) * (H - z_mm) / focal_px, H])
    sol = least_squares(resid, x0, method="lm", max_nfev=400)
    R, tvec = cam(sol.x)
    rvec, _ = cv2.Rodrigues(R)
    rms = float(np.sqrt(np.mean(sol.fun**2)))
    return CameraModel(K=K, dist=np.zeros(5), rvec=rvec.ravel(), tvec=tvec, image_size_wh_px=(w, h)), rms


def _edge_score(grad: np.ndarray, camera: CameraModel) -> float:
    """Mean image gradient along the predicted foot of the rim where it shows apart from the top edge.

    Every candidate pose fits the top edge; only the right one puts the foot of the sand shoulder, on the
    side facing the camera, on the edge between sand and ground."""
    h, w = grad.shape
    a = np.linspace(0, 2 * math.pi, 360, endpoint=False)
    top = camera.project_mm(np.column_stack([RING_RADIUS_MM * np.cos(a), RING_RADIUS_MM * np.sin(a), np.zeros_like(a)]))
    foot = camera.project_mm(np.column_stack([RIM_FOOT_RADIUS_MM * np.cos(a), RIM_FOOT_RADIUS_MM * np.sin(a),
                                              np.full_like(a, -RING_HEIGHT_MM)]))
    sep = np.linalg.norm(top - foot, axis=1)
    ok = (sep >= 3.0) & (foot[:, 0] >= 0) & (foot[:, 1] >= 0) & (foot[:, 0] <= w - 1) & (foot[:, 1] <= h - 1)
    if ok.sum() < 10:
        return 0.0
    xi = np.round(foot[ok, 0]).astype(int)
    yi = np.round(foot[ok, 1]).astype(int)
    return float(grad[yi, xi].mean())


def detect_ring(frame_bgr: np.ndarray, camera: CameraModel | None = None, *,
                focal_px: float | None = None) -> RingDetection:
    """The ring and the ring frame: from ``camera`` when given, else from the fitted sand rim."""
    h, w = frame_bgr.shape[:2]
    if camera is not None:
        if tuple(camera.image_size_wh_px) != (w, h):
            raise VisionError(f"calibration is for {camera.image_size_wh_px}, the photo is {(w, h)}")
        return _from_camera(camera, "given")
    mask = sand_mask(frame_bgr)
    if mask.mean() > 0.97 or mask.mean() < 0.03:
        raise RingNotFoundError("the photo is all sand: the ring edge is out of the picture; pass --calibration")
    lab = cv2.cvtColor(cv2.GaussianBlur(frame_bgr, (0, 0), 2.0), cv2.COLOR_BGR2LAB).astype(np.float32)
    sep = float(np.linalg.norm(lab[mask].mean(0) - lab[~mask].mean(0)))
    if sep < MIN_SAND_GROUND_SEPARATION:
        raise RingNotFoundError(f"no ground seen beside the sand (colour separation {sep:.1f} < "
                                f"{MIN_SAND_GROUND_SEPARATION}): the ring edge is out of the picture; pass --calibration")
    ell, rms, _n = fit_rim_ellipse(mask)
    gray = cv2.GaussianBlur(cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), 1.5)
    grad = cv2.magnitude(cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1))
    # start the solver tilted each way, so both sides of the two-fold ambiguity are found
    starts = [(0.3, 0.0), (-0.3, 0.0), (0.0, 0.3), (0.0, -0.3)]
    ratios = [focal_px / max(w, h)] if focal_px is not None else FOCAL_RATIOS
    best = None
    for ratio in ratios:
        for s0 in starts:
            cam, res = camera_from_rim(ell, (w, h), ratio * max(w, h), tilt0=s0)
            if res > max(2.0, 3 * rms) or cam.tilt_deg > MAX_TILT_DEG:
                continue
            score = _edge_score(grad, cam)
            if best is None or score > best[0]:
                best = (score, cam)
    if best is None:
        raise RingNotFoundError(f"no camera pose fits the rim ellipse {ell}")
    return _from_camera(best[1], "ring_ellipse", rms)
