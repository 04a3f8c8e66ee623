"""Test renderer: textures lying on a table plane, photographed by a known ``CameraModel`` (with distortion).

For each output pixel the camera's ray meets the plane; the plane point indexes a texture (``cv2.remap``).
The texture is pre-blurred to about one image pixel so edges are anti-aliased, not jagged.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import BASELINE_DISTANCE_MM, MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, POT_TOP_RADIUS_MM

FELT_BGR = (60, 120, 40)
WOOD_BGR = (40, 75, 120)
LINE_BGR = (235, 235, 235)
POT_BGR = (40, 40, 150)
BASELINE_WIDTH_MM = 4.0


class PlaneTexture:
    """A texture image covering table x in [x_min, x_min + w/ppm], y down from y_max, at ``px_per_mm``."""

    def __init__(self, image: np.ndarray, x_min_mm: float, y_max_mm: float, px_per_mm: float):
        self.image, self.x_min_mm, self.y_max_mm, self.px_per_mm = image, x_min_mm, y_max_mm, px_per_mm

    def uv(self, x_mm: np.ndarray, y_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Texture pixel coordinates (pixel centres at integers) of table points."""
        return (x_mm - self.x_min_mm) * self.px_per_mm - 0.5, (self.y_max_mm - y_mm) * self.px_per_mm - 0.5


_RAYS_CACHE: dict[bytes, np.ndarray] = {}


def _camera_rays(camera: CameraModel) -> np.ndarray:
    """Undistorted normalised rays (H*W, 3) of every pixel; cached per intrinsics (poses vary, lenses not)."""
    w, h = camera.image_size_wh_px
    key = camera.K.tobytes() + camera.dist.tobytes() + bytes(f"{w}x{h}", "ascii")
    if key not in _RAYS_CACHE:
        cc, rr = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        xy = camera.normalized_rays(np.column_stack([cc.ravel(), rr.ravel()]))
        _RAYS_CACHE.clear()
        _RAYS_CACHE[key] = np.column_stack([xy, np.ones(len(xy))])
    return _RAYS_CACHE[key]


def plane_points(camera: CameraModel, z_mm: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Table x, y of every output pixel's ray on the plane z, and a mask of rays that meet it ahead."""
    w, h = camera.image_size_wh_px
    d = _camera_rays(camera) @ camera.R  # rows: R.T @ ray, in the table frame
    o = camera.center_mm
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (z_mm - o[2]) / d[:, 2]
    ok = np.isfinite(s) & (s > 0)
    s = np.where(ok, s, 0.0)
    x = (o[0] + s * d[:, 0]).reshape(h, w)
    y = (o[1] + s * d[:, 1]).reshape(h, w)
    return x, y, ok.reshape(h, w)


def render(
    camera: CameraModel,
    texture: PlaneTexture,
    background_bgr=(90, 90, 90),
    z_mm: float = 0.0,
    image_mm_per_px: float | None = None,
) -> np.ndarray:
    """Photograph ``texture`` lying on the plane z; outside it shows ``background_bgr``."""
    x, y, ok = plane_points(camera, z_mm)
    u, v = texture.uv(x, y)
    tex = texture.image
    if image_mm_per_px is not None:  # anti-alias: blur the texture to about one image pixel
        sigma = 0.5 * image_mm_per_px * texture.px_per_mm
        if sigma > 0.5:
            tex = cv2.GaussianBlur(tex, (0, 0), sigma)
    out = cv2.remap(
        tex,
        u.astype(np.float32),
        v.astype(np.float32),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=background_bgr,
    )
    out[~ok] = background_bgr
    return out


def finish(image: np.ndarray, rng: np.random.Generator, noise_sigma: float = 2.0, blur_sigma: float = 0.6):
    """Mild optical blur and sensor noise."""
    img = cv2.GaussianBlur(image, (0, 0), blur_sigma).astype(np.float32)
    img += rng.normal(0.0, noise_sigma, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def wood_texture(shape_hw: tuple[int, int], rng: np.random.Generator, period_px: float = 40.0) -> np.ndarray:
    """Brown wood with grain stripes and a little blotchy variation."""
    h, w = shape_hw
    hs, ws = max(2, h // 4), max(2, w // 4)  # drawn at quarter resolution, then enlarged (fast)
    rows = np.arange(hs, dtype=np.float32)[:, None]
    cols = np.arange(ws, dtype=np.float32)[None, :]
    p = period_px / 4
    grain = np.sin(2 * math.pi * (rows / p + 0.3 * np.sin(cols / (7 * p))))
    blotch = cv2.resize(rng.normal(0, 1, (max(2, hs // 16), max(2, ws // 16))).astype(np.float32), (ws, hs))
    shade = 1.0 + 0.12 * grain + 0.06 * blotch
    small = np.clip(np.array(WOOD_BGR, np.float32)[None, None, :] * shade[..., None], 0, 255).astype(np.uint8)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def mat_texture(
    rng: np.random.Generator,
    *,
    px_per_mm: float = 1.5,
    extent_mm: tuple[float, float] = (1700, 1150),
    with_mat: bool = True,
) -> PlaneTexture:
    """Wooden table with (optionally) the green mat, its white baselines and a pot-coloured disc."""
    ex, ey = extent_mm
    w, h = int(2 * ex * px_per_mm), int(2 * ey * px_per_mm)
    img = wood_texture((h, w), rng)
    tex = PlaneTexture(img, -ex, ey, px_per_mm)
    if not with_mat:
        return tex
    shift = 4  # cv2 drawing with 4 fractional bits
    k = 2**shift

    def poly(points_mm, color):
        u, v = tex.uv(np.asarray(points_mm)[:, 0], np.asarray(points_mm)[:, 1])
        pts = np.round(np.column_stack([u, v]) * k).astype(np.int32)
        cv2.fillPoly(img, [pts], color, cv2.LINE_AA, shift)

    L, W = MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
    # Edges of pixels lie at half-integers: the mat spans exactly [-L, L] x [-W, W] (anti-aliased).
    poly([(-L, W), (L, W), (L, -W), (-L, -W)], FELT_BGR)
    c = BASELINE_DISTANCE_MM * math.sqrt(5)
    half = BASELINE_WIDTH_MM / 2
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        a = np.array([sx * L, sy * (c - 2 * L)])
        b = np.array([sx * (c - W) / 2, sy * W])
        n = np.array([2 * sx, sy]) / math.sqrt(5) * half
        poly([a + n, b + n, b - n, a - n], LINE_BGR)
    ang = np.linspace(0, 2 * math.pi, 90, endpoint=False)
    poly(np.column_stack([POT_TOP_RADIUS_MM * np.cos(ang), POT_TOP_RADIUS_MM * np.sin(ang)]), POT_BGR)
    return tex


def board_texture(
    board,
    px_per_mm: float,
    size_mm: tuple[float, float],
    margin_mm: float = 15.0,
    center_mm: tuple[float, float] = (0.0, 0.0),
) -> PlaneTexture:
    """The printed ChArUco board (white margin) centred at ``center_mm``, x along +x, rows along -y."""
    bw, bh = size_mm
    img = board.generateImage((round(bw * px_per_mm), round(bh * px_per_mm)), marginSize=0, borderBits=1)
    m = round(margin_mm * px_per_mm)
    img = cv2.copyMakeBorder(img, m, m, m, m, cv2.BORDER_CONSTANT, value=255)
    img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    return PlaneTexture(img, center_mm[0] - bw / 2 - margin_mm, center_mm[1] + bh / 2 + margin_mm, px_per_mm)


def paste(base: PlaneTexture, top: PlaneTexture) -> PlaneTexture:
    """``top`` laid over ``base`` (same px_per_mm, axis-aligned, integer offset)."""
    assert abs(base.px_per_mm - top.px_per_mm) < 1e-9
    c0 = round((top.x_min_mm - base.x_min_mm) * base.px_per_mm)
    r0 = round((base.y_max_mm - top.y_max_mm) * base.px_per_mm)
    img = base.image.copy()
    h, w = top.image.shape[:2]
    img[r0 : r0 + h, c0 : c0 + w] = top.image
    return PlaneTexture(img, base.x_min_mm, base.y_max_mm, base.px_per_mm)
