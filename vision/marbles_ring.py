"""The marbles ring in a photo: its image outline and the ring frame (camera pose) it implies.

With a calibration the ring is simply projected. Without one, the sand-covered ring is segmented from the
ground around it (sand is the bright, yellow class of a two-class Otsu split; the shaded part of the sand
shoulder, which that split gives to the ground, is won back by chromaticity), and the camera is fitted to the
outline as the apparent outline of the raised ring: the top edge (R, z = 0) where the shoulder is hidden, the
foot of the shoulder (R + 40 mm, 76.2 mm lower) where the camera sees it (``calibration.ring``). A circle
alone leaves a two-fold tilt ambiguity and the focal length free; the shoulder's second circle settles both,
and the ring frame's remaining looseness is reported as ``frame_sigma_mm``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from calibration.ring import fit_ring_camera
from geometry.marbles import RING_HEIGHT_MM, RING_RADIUS_MM
from vision.types import VisionError

# the shoulder by chromaticity: classes sampled inside the sand eroded by INNER and outside it dilated by
# OUTER (square kernels, px), split only when their means lie MIN_CHROMA_SEPARATION pooled standard
# deviations apart, kept only when the whole ring is at most MAX_WHOLE_OVER_SAND times the bright sand (a
# 40 mm shoulder round a 914 mm ring adds ~9 % of the area)
INNER_MARGIN_PX = 25
OUTER_MARGIN_PX = 41
MIN_CHROMA_SEPARATION = 2.0
MAX_WHOLE_OVER_SAND = 1.25
MIN_SAND_GROUND_SEPARATION = 20.0  # CIELAB distance of the two classes' means: sand against grass/earth/paving


class RingNotFoundError(VisionError):
    """No ring rim could be fitted and no calibration was given; the message says what was seen."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RingDetection:
    camera: CameraModel
    source: str  # "given" | "ring_outline" (whole ring by chromaticity) | "ring_sand_edge" (brightness only)
    center_px: tuple[float, float]
    ellipse_px: dict
    rim_fit_rms_px: float | None = None
    frame_sigma_mm: float = 0.0  # how far apart equally good self-calibrated ring frames put a point

    def to_dict(self) -> dict:
        return {
            "center_mm": [0.0, 0.0],
            "radius_mm": RING_RADIUS_MM,
            "height_mm": RING_HEIGHT_MM,
            "center_px": [round(self.center_px[0], 2), round(self.center_px[1], 2)],
            "ellipse_px": self.ellipse_px,
            "source": self.source,
            "rim_fit_rms_px": None if self.rim_fit_rms_px is None else round(self.rim_fit_rms_px, 3),
            "frame_sigma_mm": round(self.frame_sigma_mm, 2),
        }


def ring_ellipse_px(camera: CameraModel, radius_mm: float = RING_RADIUS_MM, z_mm: float = 0.0) -> dict:
    """``cv2.fitEllipse`` of the projected circle: centre, full axes, angle (deg)."""
    a = np.linspace(0, 2 * math.pi, 360, endpoint=False)
    pts = np.column_stack([radius_mm * np.cos(a), radius_mm * np.sin(a), np.full_like(a, z_mm)])
    (cx, cy), (ax1, ax2), ang = cv2.fitEllipse(camera.project_mm(pts).astype(np.float32))
    return {"center": [round(cx, 2), round(cy, 2)], "axes": [round(ax1, 2), round(ax2, 2)],
            "angle_deg": round(ang, 3)}


def _from_camera(camera: CameraModel, source: str, rms: float | None = None,
                 frame_sigma_mm: float = 0.0) -> RingDetection:
    c = camera.project_mm(np.zeros((1, 3)))[0]
    return RingDetection(camera=camera, source=source, center_px=(float(c[0]), float(c[1])),
                         ellipse_px=ring_ellipse_px(camera), rim_fit_rms_px=rms,
                         frame_sigma_mm=frame_sigma_mm)


def _largest_component(m: np.ndarray) -> np.ndarray:
    n, lbl, st, _ = cv2.connectedComponentsWithStats(m.astype(np.uint8))
    if n < 2:
        return np.zeros(m.shape, bool)
    return lbl == 1 + int(np.argmax(st[1:, 4]))


def sand_mask(frame_bgr: np.ndarray) -> np.ndarray:
    """Sand (bright, yellow) against grass, earth or paving: Otsu on yellowness plus lightness."""
    small = cv2.GaussianBlur(frame_bgr, (0, 0), 2.0)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    feat = lab[..., 2] + 0.5 * lab[..., 0]
    feat = cv2.normalize(feat, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    _, m = cv2.threshold(feat, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    out = _largest_component(m).astype(np.uint8)
    # fill holes (marbles, the scribed line)
    ff = out.copy()
    cv2.floodFill(ff, np.zeros((out.shape[0] + 2, out.shape[1] + 2), np.uint8), (0, 0), 1)
    return (out | (1 - ff)).astype(bool) if ff[0, 0] == 1 and out[0, 0] == 0 else out.astype(bool)


def shoulder_mask(frame_bgr: np.ndarray, sand: np.ndarray) -> np.ndarray | None:
    """The whole raised ring (top and sand shoulder, lit or shaded) against the ground, by chromaticity.

    A shaded shoulder is dark and falls in with the ground in ``sand_mask``; its chromaticity (colour with
    the brightness divided out) is still the sand's. The two classes' chromaticities are taken well inside
    and well outside ``sand`` and split along their discriminant. None when the split is not clean."""
    blur = cv2.GaussianBlur(frame_bgr, (0, 0), 2.0).astype(np.float32) + 1.0
    chroma = blur / blur.sum(2, keepdims=True)
    sand_u8 = sand.astype(np.uint8)
    inner = cv2.erode(sand_u8, np.ones((INNER_MARGIN_PX, INNER_MARGIN_PX), np.uint8)).astype(bool)
    outer = ~cv2.dilate(sand_u8, np.ones((OUTER_MARGIN_PX, OUTER_MARGIN_PX), np.uint8)).astype(bool)
    if inner.sum() < 1000 or outer.sum() < 1000:
        return None
    ms, mg = chroma[inner].mean(0), chroma[outer].mean(0)
    cov = np.cov(chroma[inner].T) + np.cov(chroma[outer].T) + 1e-6 * np.eye(3)
    wv = np.linalg.solve(cov, ms - mg)
    ps, pg = chroma[inner] @ wv, chroma[outer] @ wv
    if (ps.mean() - pg.mean()) < MIN_CHROMA_SEPARATION * math.hypot(ps.std(), pg.std()):
        return None  # sand and ground too alike in colour (e.g. bare earth): keep the brightness split
    proj = chroma @ wv
    m = cv2.morphologyEx((proj > 0.5 * (ps.mean() + pg.mean())).astype(np.uint8), cv2.MORPH_OPEN,
                         np.ones((5, 5), np.uint8))
    big = _largest_component(m)
    # the whole ring contains the sand top and adds at most a shoulder's width around it
    if (big & sand).sum() < 0.95 * sand.sum() or big.sum() > MAX_WHOLE_OVER_SAND * sand.sum():
        return None
    return big


def outline_px(mask: np.ndarray, border_px: int = 4) -> np.ndarray:
    """(N, 2) outer boundary of the largest region of ``mask``, without points on the image border."""
    h, w = mask.shape
    cnts, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not cnts:
        raise RingNotFoundError("no sand region found")
    pts = max(cnts, key=len).reshape(-1, 2).astype(np.float64)
    keep = ((pts[:, 0] > border_px) & (pts[:, 1] > border_px) & (pts[:, 0] < w - 1 - border_px)
            & (pts[:, 1] < h - 1 - border_px))
    pts = pts[keep]
    if len(pts) < 50:
        raise RingNotFoundError(f"only {len(pts)} rim points visible: the ring edge is out of the picture")
    return pts


def detect_ring(frame_bgr: np.ndarray, camera: CameraModel | None = None, *,
                focal_px: float | None = None) -> RingDetection:
    """The ring and the ring frame: from ``camera`` when given, else from the ring's outline."""
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
    whole = shoulder_mask(frame_bgr, mask)
    try:
        fit = fit_ring_camera(outline_px(mask if whole is None else whole), (w, h), focal_px=focal_px,
                              either_edge=whole is None)
    except CalibrationError as exc:
        raise RingNotFoundError(f"the ring outline gives no camera: {exc}") from exc
    return _from_camera(fit.camera, "ring_outline" if whole is not None else "ring_sand_edge", fit.rms_px,
                        fit.frame_sigma_mm)
