"""A small, independent renderer of tiddlywinks photographs for the vision unit tests.

It is deliberately not the project simulator: cv2-drawn projected discs (top face, side wall, shadow) on a
noisy felt mat with painted baselines and a pot, seen through a known ``CameraModel``. Truth is returned as
plain dicts in table millimetres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry import tiddlywinks as tw
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, POT_BASE_RADIUS_MM, POT_HEIGHT_MM, \
    POT_TOP_RADIUS_MM, WINK_THICKNESS_MM

WINK_BGR = {
    "blue": (170, 70, 25),
    "green": (70, 200, 60),
    "red": (40, 40, 200),
    "yellow": (30, 210, 235),
}
MAT_BGR = (60, 120, 45)
PAINT_BGR = (225, 228, 228)
TABLE_BGR = (70, 95, 130)
POT_BGR = (40, 40, 45)
_SS = 4  # sub-pixel bits for cv2 drawing (x16)
_SHIFT = 4


@dataclass
class SynthWink:
    wink_id: str
    color: str
    size: str
    center_mm: tuple[float, float]
    z_mm: float = WINK_THICKNESS_MM / 2
    tilt_deg: float = 0.0
    tilt_azimuth_deg: float = 0.0
    potted: bool = False
    above: list[str] = field(default_factory=list)

    @property
    def radius_mm(self) -> float:
        return 11.0 if self.size == "large" else 8.0


def default_camera(width: int = 1920, height: int = 1080, tilt_deg: float = 20.0) -> CameraModel:
    """A camera above the mat's long side that frames the whole mat (about 1 mm/px at 1920 px)."""
    dist_mm = 2100.0
    t = math.radians(tilt_deg)
    eye = (0.0, -dist_mm * math.sin(t), dist_mm * math.cos(t))
    focal = width * 0.98 * dist_mm / (2 * MAT_HALF_LENGTH_MM + 120)
    return CameraModel.look_at(eye_mm=eye, target_mm=(0, 0, 0), focal_px=focal, image_size_wh_px=(width, height))


def _disc_points(c, r, z, tilt_deg=0.0, az_deg=0.0, n=96):
    """3-D points of a (possibly tilted) circle: centre (x, y) at height z, tilting up towards az."""
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    t = math.radians(tilt_deg)
    a = math.radians(az_deg)
    u = np.array([math.cos(a), math.sin(a)])
    v = np.array([-u[1], u[0]])
    du = r * np.cos(ang)
    dv = r * np.sin(ang)
    xy = np.asarray(c)[None, :] + (du * math.cos(t))[:, None] * u + dv[:, None] * v
    zz = z + du * math.sin(t)
    return np.column_stack([xy, zz])


def _fill(img, cam, pts3, color):
    px = cam.project_mm(pts3)
    hull = cv2.convexHull(np.round(px * (1 << _SHIFT)).astype(np.int32))
    cv2.fillPoly(img, [hull], color, lineType=cv2.LINE_AA, shift=_SHIFT)


def _poly(img, cam, pts2, color):
    px = cam.project_mm(np.asarray(pts2, float))
    cv2.fillPoly(img, [np.round(px * (1 << _SHIFT)).astype(np.int32)], color, lineType=cv2.LINE_AA,
                 shift=_SHIFT)


def render(winks: list[SynthWink], cam: CameraModel, *, seed: int = 0, pot_center_mm=(0.0, 0.0),
           noise: float = 4.0, jpeg_quality: int = 92, shadows: bool = True,
           mat_bgr=MAT_BGR, table_bgr=TABLE_BGR, paint_bgr=PAINT_BGR) -> np.ndarray:
    """Render a BGR image of the scene (painter's order by height)."""
    rng = np.random.default_rng(seed)
    w, h = cam.image_size_wh_px
    img = np.empty((h, w, 3), np.uint8)
    img[:] = table_bgr
    L, W = MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
    _poly(img, cam, [(-L, W), (L, W), (L, -W), (-L, -W)], mat_bgr)
    for sx in (1, -1):
        for sy in (1, -1):
            seg = np.asarray(tw.baseline_segment((sx, sy)).coords)
            d = seg[1] - seg[0]
            n = np.array([-d[1], d[0]]) / np.linalg.norm(d) * 2.5
            _poly(img, cam, [seg[0] + n, seg[1] + n, seg[1] - n, seg[0] - n], paint_bgr)
    # soft shadows first
    if shadows:
        sh = np.zeros((h, w), np.uint8)
        for wk in winks:
            if wk.potted:
                continue
            pts = _disc_points(np.asarray(wk.center_mm) + (1.2, -1.2), wk.radius_mm + 0.6, 0.0)
            _fill(sh, cam, pts, 255)
        pc = np.asarray(pot_center_mm)
        _fill(sh, cam, np.vstack([_disc_points(pc + (6, -6), POT_BASE_RADIUS_MM + 3, 0.0)]), 255)
        sh = cv2.GaussianBlur(sh, (0, 0), 2.0).astype(np.float32) / 255.0
        img = (img.astype(np.float32) * (1 - 0.35 * sh[..., None])).astype(np.uint8)
    pc = np.asarray(pot_center_mm, float)
    base = _disc_points(pc, POT_BASE_RADIUS_MM, 0.0)
    top = _disc_points(pc, POT_TOP_RADIUS_MM, POT_HEIGHT_MM)
    under = [wk for wk in winks if not wk.potted]
    potted = [wk for wk in winks if wk.potted]

    def draw_wink(wk: SynthWink):
        nonlocal img
        col = np.array(WINK_BGR[wk.color], float)
        half = WINK_THICKNESS_MM / 2
        tt = math.radians(wk.tilt_deg)
        topc = _disc_points(wk.center_mm, wk.radius_mm, wk.z_mm + half / math.cos(tt), wk.tilt_deg,
                            wk.tilt_azimuth_deg)
        botc = _disc_points(wk.center_mm, wk.radius_mm, wk.z_mm - half / math.cos(tt), wk.tilt_deg,
                            wk.tilt_azimuth_deg)
        _fill(img, cam, np.vstack([topc, botc]), tuple(float(v) for v in col * 0.6))
        _fill(img, cam, topc, tuple(float(v) for v in col * (0.95 + 0.1 * math.sin(tt))))

    for wk in sorted(under, key=lambda k: k.z_mm):
        draw_wink(wk)
    # pot body, then its dark opening, then potted winks seen inside
    _fill(img, cam, np.vstack([base, top]), POT_BGR)
    _fill(img, cam, _disc_points(pc, POT_TOP_RADIUS_MM, POT_HEIGHT_MM), (95, 95, 100))
    _fill(img, cam, _disc_points(pc, POT_TOP_RADIUS_MM - 2.0, POT_HEIGHT_MM), (25, 25, 28))
    if potted:
        # seen through the opening only: draw on a copy, keep what falls inside the top rim's ellipse
        base_img = img.copy()
        for wk in sorted(potted, key=lambda k: k.z_mm):
            draw_wink(wk)
        mask = np.zeros((h, w), np.uint8)
        _fill(mask, cam, _disc_points(pc, POT_TOP_RADIUS_MM - 2.0, POT_HEIGHT_MM), 255)
        img = np.where(mask[..., None] > 0, img, base_img)
    img = cv2.GaussianBlur(img, (0, 0), 0.7)
    img = img.astype(np.float32) + rng.normal(0, noise, img.shape).astype(np.float32)
    img = np.clip(img, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def squop_tilt(upper: SynthWink, lower: SynthWink) -> SynthWink:
    """Tilt ``upper`` so it rests on ``lower``'s top edge and on the mat (rises towards ``lower``)."""
    cu = np.asarray(upper.center_mm)
    cl = np.asarray(lower.center_mm)
    d = float(np.linalg.norm(cl - cu))
    reach = upper.radius_mm + d - lower.radius_mm  # from the low rim to the support point
    top_lower = lower.z_mm + WINK_THICKNESS_MM / 2
    tilt = math.atan2(top_lower, reach)
    z_mid = upper.radius_mm * math.tan(tilt) + WINK_THICKNESS_MM / 2 / math.cos(tilt)
    upper.tilt_deg = math.degrees(tilt)
    upper.tilt_azimuth_deg = math.degrees(math.atan2(cl[1] - cu[1], cl[0] - cu[0]))
    upper.z_mm = z_mid
    upper.above = [lower.wink_id]
    return upper
