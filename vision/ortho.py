"""Rectification of the table plane: a top-down orthophoto at a chosen height, built from the camera model.

The remap tables are computed by projecting a coarse grid of table points (every ``step_px`` ortho pixels)
through the full camera model (distortion included) and interpolating bilinearly: lens distortion and
perspective are smooth at that scale, and the cost stays a few milliseconds per frame.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from calibration.camera import CameraModel


@dataclass(frozen=True, slots=True)
class OrthoGrid:
    """Ortho image geometry: column 0 / row 0 is table point (``x0_mm``, ``y0_mm``); +x right, +y up."""

    x0_mm: float
    y0_mm: float
    mm_per_px: float
    width_px: int
    height_px: int
    z_mm: float
    #: the origin and per-axis step as read-only arrays, made once per grid (a few hundred conversions a frame; a
    #: cache keyed by the grid paid for hashing and comparing its fields on every call)
    _origin: np.ndarray = field(init=False, repr=False, compare=False)
    _step: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        origin = np.array((self.x0_mm, self.y0_mm))
        step = np.array((self.mm_per_px, -self.mm_per_px))
        origin.setflags(write=False)
        step.setflags(write=False)
        object.__setattr__(self, "_origin", origin)
        object.__setattr__(self, "_step", step)

    @classmethod
    def covering(cls, x_min_mm: float, x_max_mm: float, y_min_mm: float, y_max_mm: float, mm_per_px: float,
                 z_mm: float) -> "OrthoGrid":
        w = int(np.ceil((x_max_mm - x_min_mm) / mm_per_px)) + 1
        h = int(np.ceil((y_max_mm - y_min_mm) / mm_per_px)) + 1
        return cls(float(x_min_mm), float(y_max_mm), float(mm_per_px), w, h, float(z_mm))

    # Both as two operations on the (N, 2) array with a per-axis step of (+s, -s): the same numbers as the
    # per-column formulas (negation is exact), without np.column_stack's cost on the few points of most calls.
    def table_from_ortho(self, colrow: np.ndarray) -> np.ndarray:
        return np.asarray(colrow, float).reshape(-1, 2) * self._step + self._origin

    def ortho_from_table(self, xy_mm: np.ndarray) -> np.ndarray:
        return (np.asarray(xy_mm, float).reshape(-1, 2) - self._origin) / self._step


def image_outline_mm(camera: CameraModel, z_mm: float, n: int = 24) -> np.ndarray:
    """The photo's border traced onto the plane z = ``z_mm``, in order round it (a closed polygon, ``(4n, 2)``)."""
    w, h = camera.image_size_wh_px
    t = np.linspace(0, 1, n)
    border = np.vstack([
        np.column_stack([t * (w - 1), np.zeros_like(t)]),  # top, left to right
        np.column_stack([np.full_like(t, w - 1), t * (h - 1)]),  # right, top to bottom
        np.column_stack([(1 - t) * (w - 1), np.full_like(t, h - 1)]),  # bottom, right to left
        np.column_stack([np.zeros_like(t), (1 - t) * (h - 1)]),  # left, bottom to top
    ])
    return camera.image_to_table_mm(border, z_mm)


def in_view(camera: CameraModel, grid: OrthoGrid, outline_mm: np.ndarray | None = None) -> np.ndarray:
    """Which pixels of ``grid`` lie inside the photo's outline on its plane (``image_outline_mm``, if not given).

    A remapped pixel that lands inside the image is no proof that the photo sees its plan point: the lens's
    radial polynomial (k1, k2 < 0) turns back beyond the field of view, so plan points far outside the photo
    project into it (seed 587's render 11: ground 2.3 m away landed on the ring's centre, where the balls are).
    """
    poly = grid.ortho_from_table(image_outline_mm(camera, grid.z_mm) if outline_mm is None else outline_mm)
    mask = np.zeros((grid.height_px, grid.width_px), np.uint8)
    cv2.fillPoly(mask, [np.round(poly).astype(np.int32)], 1)
    return mask.astype(bool)


def fold_radius(camera: CameraModel) -> float:
    """The undistorted radius (normalized camera coordinates) where the lens's radial polynomial turns back: the
    first zero of d/dr [r (1 + k1 r^2 + k2 r^4 + k3 r^6)] (infinite where it never turns)."""
    k = np.zeros(5)
    k[:min(5, camera.dist.size)] = np.ravel(camera.dist)[:5]
    k1, k2, k3 = k[0], k[1], k[4]
    roots = np.roots([7 * k3, 5 * k2, 3 * k1, 1.0]) if k3 else (
        np.roots([5 * k2, 3 * k1, 1.0]) if k2 else (np.array([-1 / (3 * k1)]) if k1 else np.array([])))
    s = [float(v.real) for v in np.atleast_1d(roots) if abs(v.imag) < 1e-12 and v.real > 0]
    return math.sqrt(min(s)) if s else math.inf


def before_fold(camera: CameraModel, grid: OrthoGrid) -> np.ndarray:
    """Which pixels of ``grid`` lie in front of the camera and within the lens's fold (``fold_radius``).

    Beyond the fold the projection maps plan points back into the photo where nearer ones already show: bench_503_011's
    wide lens (k1 -0.039, k2 -0.028, fold at 1.51) put far ground 1.97 m out on a ring marble's pixels, where its
    photo border (1.24 from the axis, beyond the polynomial's largest radius 1.16) has no true ray to trace an
    outline (``in_view``) with.
    """
    x = grid.table_from_ortho(np.column_stack([np.arange(grid.width_px), np.zeros(grid.width_px)]))[:, 0]
    y = grid.table_from_ortho(np.column_stack([np.zeros(grid.height_px), np.arange(grid.height_px)]))[:, 1]
    R, t = camera.R, camera.tvec
    cam = [(R[i, 0] * x[None, :] + R[i, 1] * y[:, None] + (R[i, 2] * grid.z_mm + t[i])) for i in range(3)]
    rf = fold_radius(camera)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (cam[2] > 0) & (cam[0] ** 2 + cam[1] ** 2 < (rf * cam[2]) ** 2)


def camera_key(camera: CameraModel) -> str:
    return hashlib.sha1(json.dumps(camera.to_dict(), sort_keys=True).encode()).hexdigest()


_CAMERAS: dict[str, CameraModel] = {}


def ortho_maps(camera: CameraModel, grid: OrthoGrid, step_px: int = 16,
               source_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``cv2.remap`` tables (float32) from ``grid`` into an image of the camera scaled by ``source_scale``."""
    key = camera_key(camera)
    _CAMERAS[key] = camera
    return _ortho_maps_cached(key, grid, int(step_px), float(source_scale))


@lru_cache(maxsize=8)
def _ortho_maps_cached(key: str, grid: OrthoGrid, step_px: int, source_scale: float):
    fx, fy, _ = _maps(_CAMERAS[key], grid, step_px, source_scale)
    return np.ascontiguousarray(fx), np.ascontiguousarray(fy)


def _maps(camera: CameraModel, grid: OrthoGrid, step_px: int, source_scale: float):
    """The remap tables (views) and the range of their knots ``(x_min, x_max, y_min, y_max)``: bilinear tables
    stay within it (up to float rounding)."""
    k = step_px
    # Coarse samples at fine coordinates j*k + (k-1)/2 - k, so cv2.resize(INTER_LINEAR) by k aligns exactly
    # (fine index i <-> source (i + 0.5)/k - 0.5); one extra sample each side avoids border clamping.
    gx = int(np.ceil(grid.width_px / k)) + 2
    gy = int(np.ceil(grid.height_px / k)) + 2
    cols = np.arange(gx) * k + (k - 1) / 2.0 - k
    rows = np.arange(gy) * k + (k - 1) / 2.0 - k
    cc, rr = np.meshgrid(cols, rows)
    xy = grid.table_from_ortho(np.column_stack([cc.ravel(), rr.ravel()]))
    px = camera.project_mm(np.column_stack([xy, np.full(len(xy), grid.z_mm)])) * source_scale
    # cv2.pyrDown centres destination pixel q on source pixel 2q: scaled coordinates are p * s.
    mx = px[:, 0].reshape(gy, gx).astype(np.float32)
    my = px[:, 1].reshape(gy, gx).astype(np.float32)
    big_w, big_h = gx * k, gy * k
    fx = cv2.resize(mx, (big_w, big_h), interpolation=cv2.INTER_LINEAR)
    fy = cv2.resize(my, (big_w, big_h), interpolation=cv2.INTER_LINEAR)
    # fine index i of the big map corresponds to ortho coordinate i - k
    span = (float(mx.min()), float(mx.max()), float(my.min()), float(my.max()))
    return fx[k:k + grid.height_px, k:k + grid.width_px], fy[k:k + grid.height_px, k:k + grid.width_px], span


def rectify(image_bgr: np.ndarray, camera: CameraModel, grid: OrthoGrid, source_scale: float = 1.0,
            border_bgr=(0, 0, 0)) -> np.ndarray:
    """The orthophoto of ``grid`` sampled from ``image_bgr`` (the camera image scaled by ``source_scale``)."""
    mx, my = ortho_maps(camera, grid, source_scale=source_scale)
    return cv2.remap(image_bgr, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=border_bgr)


def pyramid_size(wh: tuple[int, int], levels: int) -> tuple[int, int]:
    """Size of an image of size ``wh`` after ``cv2.pyrDown`` ``levels`` times."""
    w, h = wh
    for _ in range(levels):
        w, h = (w + 1) // 2, (h + 1) // 2
    return w, h


def _pyramid_window(lo: float, hi: float, size_full: int, size_level: int, levels: int) -> tuple[int, int]:
    """The full-resolution window ``[a, b)`` whose pyramid holds the level's pixels ``lo - 2 .. hi + 3`` as the
    whole image's pyramid does: each level's 5-tap filter reaches two pixels beyond twice its output's span,
    and the window starts on a multiple of ``2**levels`` so every level stays aligned (an image edge is kept)."""
    s = 2 ** levels
    reach = 2 * s - 2
    a_l = min(max(0, int(math.floor(lo)) - 2), max(size_level - 1, 0))
    b_l = max(min(size_level, int(math.ceil(hi)) + 3), a_l + 1)
    return max(0, (a_l * s - reach) // s * s), min(size_full, b_l * s + reach)


#: The BGRA remap pays for converting its source while the source has at most this many pixels per
#: orthophoto pixel (converting costs about 0.6 ms per megapixel, the four-channel remap saves about 3.5 per
#: orthophoto one, more from a large source: 4K frames at level 0, 4.2 source pixels per orthophoto one,
#: 8.3 against 10.4 to 11.8 ms).
_BGRA_MAX_SOURCE_RATIO = 8

#: How far inside the picture (level pixels) the remap tables' knots must all lie for the whole orthophoto to be
#: taken as seen without testing each entry: far beyond float32 rounding of a table entry (~1e-4 px).
_SPAN_CLEAR_PX = 0.01


@lru_cache(maxsize=8)
def _pyramid_maps_cached(key: str, grid: OrthoGrid, step_px: int, levels: int, frame_wh: tuple[int, int]):
    fx, fy, (x_lo, x_hi, y_lo, y_hi) = _maps(_CAMERAS[key], grid, step_px, 0.5 ** levels)
    wl, hl = pyramid_size(frame_wh, levels)
    x0, x1 = _pyramid_window(x_lo, x_hi, frame_wh[0], wl, levels)
    y0, y1 = _pyramid_window(y_lo, y_hi, frame_wh[1], hl, levels)
    # (the tables read the level's own coordinates: its window is shrunk into its place in a level-sized image)
    mx, my = fx, fy
    if x_lo >= _SPAN_CLEAR_PX and x_hi <= wl - 1 - _SPAN_CLEAR_PX and y_lo >= _SPAN_CLEAR_PX \
            and y_hi <= hl - 1 - _SPAN_CLEAR_PX:
        # every knot well inside the level's picture: so is every table entry (bilinear tables stay within their
        # knots' range up to float rounding), and the mask is all true without comparing each entry
        valid = np.broadcast_to(np.True_, mx.shape)
    else:
        # the inclusive comparisons (whole-number bounds, exact in float32) as two cv2.inRange passes
        inside = cv2.inRange(mx, 0.0, float(wl - 1))
        cv2.bitwise_and(inside, cv2.inRange(my, 0.0, float(hl - 1)), dst=inside)
        valid = np.bitwise_and(inside, 1, out=inside).view(bool)  # 255 -> 1: a well-formed bool mask
        valid.setflags(write=False)
    for a in (mx, my):
        a.setflags(write=False)
    return mx, my, valid, (x0, y0, x1, y1)


def rectify_pyramid(image_bgr: np.ndarray, camera: CameraModel, grid: OrthoGrid,
                    levels: int) -> tuple[np.ndarray, np.ndarray]:
    """The orthophoto of ``grid`` from the image's pyramid level ``levels`` (``cv2.pyrDown`` that many times)
    with the mask of where it sees the picture (black elsewhere).

    Only the window of the image the grid reaches goes down the pyramid: the same pixels as the whole image's
    pyramid there, for the part of the frame the mat and its margin cover.
    """
    key = camera_key(camera)
    _CAMERAS[key] = camera
    h, w = image_bgr.shape[:2]
    mx, my, valid, (x0, y0, x1, y1) = _pyramid_maps_cached(key, grid, 16, int(levels), (w, h))
    # the window of the level (the frame itself at level 0) in its place in an image of the whole level's size,
    # whose tables need no shift (two passes over megabytes of tables saved on each new camera); the rest of that
    # image is never read: the window holds every pixel the tables reach, with two to spare
    ox, oy = x0 >> levels, y0 >> levels
    window = image_bgr[y0:y1, x0:x1]
    for _ in range(levels - 1):
        window = cv2.pyrDown(window)
    lw, lh = pyramid_size((window.shape[1], window.shape[0]), min(levels, 1))
    wl, hl = pyramid_size((w, h), levels)
    src = image_bgr
    if levels:
        src = np.empty((hl, wl) + image_bgr.shape[2:], image_bgr.dtype)
        window = cv2.pyrDown(window, dst=src[oy:oy + lh, ox:ox + lw])
    if window.ndim == 3 and window.shape[2] == 3 \
            and window.shape[0] * window.shape[1] <= _BGRA_MAX_SOURCE_RATIO * mx.size:
        # OpenCV's remap is vectorised for four 8-bit channels and not for three: through BGRA and back, the same
        # pixels (each channel is interpolated alone) at about 8 instead of 12 ms for a 4K frame's orthophoto
        src4 = np.empty((hl, wl, 4), image_bgr.dtype)
        cv2.cvtColor(window, cv2.COLOR_BGR2BGRA, dst=src4[oy:oy + lh, ox:ox + lw])
        ortho4 = cv2.remap(src4, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        return cv2.cvtColor(ortho4, cv2.COLOR_BGRA2BGR), valid
    ortho = cv2.remap(src, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
    return ortho, valid
