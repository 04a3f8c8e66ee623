"""What changed in the picture between two rest frames of a still camera, mapped onto the table (mm).

The live tracker compares each rest frame with the previous one: winks the shot moved change the image where
they were and where they are now; winks it did not move change nothing, whatever a detector makes of them.
The difference is taken on shrunk, lightly blurred frames (the largest of the three channel differences),
thresholded at a multiple of the frames' own noise (the median difference over the watched region: almost
every pixel of a rest frame is unchanged), cleaned of specks smaller than a fraction of the smallest wink's
image, and resampled onto a grid in table mm at wink height (``geometry.rest_change.RestChange``). A change over
much of the mat means the camera or the light moved: no evidence (``None``), never "nothing changed".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import (
    MAT_HALF_LENGTH_MM,
    MAT_HALF_WIDTH_MM,
    POT_HEIGHT_MM,
    POT_TOP_RADIUS_MM,
    SMALL_WINK_RADIUS_MM,
    WINK_THICKNESS_MM,
)
from geometry.rest_change import RestChange


@dataclass(frozen=True, slots=True, kw_only=True)
class RestChangeParams:
    """How two rest frames are compared (pixel sizes are of the shrunk frame)."""

    work_width_px: int = 800  # 1280 -> 800: a small wink is still ~5 px across on a whole-mat view
    blur_ksize: int = 5
    #: A pixel changed when its difference exceeds this many times the median difference (the noise floor)...
    noise_factor: float = 6.0
    #: ... and at least this many grey levels (codec quantisation of a still picture).
    min_level: int = 12
    #: A median difference above this (grey levels, after the blur) is no noise floor: most of the picture
    #: changed (light, exposure, camera), so it testifies to nothing.
    max_noise_level: float = 4.0
    #: Specks smaller than this share of a small wink's image area are noise, not a wink.
    min_blob_wink_ratio: float = 0.15
    cell_mm: float = 2.5
    #: The grid covers the mat plus this margin (winks that leave the mat land near it).
    margin_mm: float = 150.0
    #: More than this share of the mat changed: the camera or the light moved; no evidence.
    max_changed_mat_ratio: float = 0.2


def _grid_maps(camera: CameraModel, frame_wh: tuple[int, int], scale: float, p: RestChangeParams
               ) -> tuple[np.ndarray, np.ndarray, float, float]:
    x0 = -MAT_HALF_LENGTH_MM - p.margin_mm
    y0 = -MAT_HALF_WIDTH_MM - p.margin_mm
    nx = int(math.ceil(2 * (MAT_HALF_LENGTH_MM + p.margin_mm) / p.cell_mm))
    ny = int(math.ceil(2 * (MAT_HALF_WIDTH_MM + p.margin_mm) / p.cell_mm))
    xs = x0 + (np.arange(nx) + 0.5) * p.cell_mm
    ys = y0 + (np.arange(ny) + 0.5) * p.cell_mm
    gx, gy = np.meshgrid(xs, ys)
    pts = np.column_stack([gx.ravel(), gy.ravel(), np.full(gx.size, WINK_THICKNESS_MM)])
    px = np.asarray(camera.project_mm(pts), dtype=np.float64)
    px *= frame_wh[0] / camera.image_size_wh_px[0] * scale
    mx = px[:, 0].reshape(ny, nx).astype(np.float32)
    my = px[:, 1].reshape(ny, nx).astype(np.float32)
    return mx, my, x0, y0


class RestChangeMeter:
    """Keeps the shrunk previous rest frame and the table grid's pixel maps (the camera does not move)."""

    def __init__(self, params: RestChangeParams = RestChangeParams()) -> None:
        self.params = params
        self._key: tuple | None = None
        self._maps: tuple[np.ndarray, np.ndarray, float, float] | None = None
        self._mat_mask: np.ndarray | None = None
        self._prev: np.ndarray | None = None

    def shrink(self, frame_bgr: np.ndarray) -> np.ndarray:
        """The frame as compared: shrunk to ``work_width_px`` and lightly blurred."""
        h, w = frame_bgr.shape[:2]
        scale = min(1.0, self.params.work_width_px / w)
        small = cv2.resize(frame_bgr, (max(1, round(w * scale)), max(1, round(h * scale))),
                           interpolation=cv2.INTER_AREA)
        k = self.params.blur_ksize
        return cv2.GaussianBlur(small, (k, k), 0) if k > 1 else small

    def remember(self, small: np.ndarray, camera: CameraModel | None, frame_wh: tuple[int, int]) -> None:
        """Make ``small`` (from :meth:`shrink`) the previous rest frame once its rest state is accepted; the
        table grid's pixel maps are built here, at the first rest, not on a later rest's clock."""
        self._prev = small
        if camera is not None:
            self._ensure_maps(camera, frame_wh, small.shape)

    def against_last(self, small: np.ndarray, frame_wh: tuple[int, int], camera: CameraModel | None,
                     pot_center_mm: tuple[float, float] | None) -> RestChange | None:
        """This rest frame against the remembered one (None for the first, or without a camera)."""
        if self._prev is None or camera is None or self._prev.shape != small.shape:
            return None
        return self.compare(self._prev, small, frame_wh, camera, pot_center_mm)

    def update(self, frame_bgr: np.ndarray, camera: CameraModel | None,
               pot_center_mm: tuple[float, float] | None) -> RestChange | None:
        """:meth:`against_last` then :meth:`remember`, in one step."""
        small = self.shrink(frame_bgr)
        frame_wh = (frame_bgr.shape[1], frame_bgr.shape[0])
        change = self.against_last(small, frame_wh, camera, pot_center_mm)
        self.remember(small, camera, frame_wh)
        return change

    def _ensure_maps(self, camera: CameraModel, frame_wh: tuple[int, int], shape: tuple[int, ...]) -> None:
        p = self.params
        key = (id(camera), frame_wh, shape[:2])
        if self._key == key:
            return
        scale = shape[1] / frame_wh[0]
        self._maps = _grid_maps(camera, frame_wh, scale, p)
        mx, my = self._maps[0], self._maps[1]
        gx = self._maps[2] + (np.arange(mx.shape[1]) + 0.5) * p.cell_mm
        gy = self._maps[3] + (np.arange(mx.shape[0]) + 0.5) * p.cell_mm
        on_mat = (np.abs(gx)[None, :] <= MAT_HALF_LENGTH_MM) & (np.abs(gy)[:, None] <= MAT_HALF_WIDTH_MM)
        self._visible = (mx >= 0) & (mx <= shape[1] - 1) & (my >= 0) & (my <= shape[0] - 1)
        self._mat_mask = on_mat & self._visible
        self._key = key

    def compare(self, prev: np.ndarray, cur: np.ndarray, frame_wh: tuple[int, int], camera: CameraModel,
                pot_center_mm: tuple[float, float] | None) -> RestChange | None:
        p = self.params
        scale = cur.shape[1] / frame_wh[0]
        self._ensure_maps(camera, frame_wh, cur.shape)
        assert self._maps is not None and self._mat_mask is not None
        mx, my, x0, y0 = self._maps
        diff = cv2.absdiff(prev, cur)
        if diff.ndim == 3:
            diff = cv2.max(cv2.max(diff[..., 0], diff[..., 1]), diff[..., 2])
        noise = float(np.median(diff))
        if noise > p.max_noise_level:
            return None
        level = max(float(p.min_level), p.noise_factor * noise)
        mask = (diff > level).astype(np.uint8)
        # drop specks: a wink's change is a blob of about its image area
        mm_per_px = camera.mm_per_px_at((0.0, 0.0)) * camera.image_size_wh_px[0] / cur.shape[1]
        min_area = p.min_blob_wink_ratio * math.pi * (SMALL_WINK_RADIUS_MM / mm_per_px) ** 2
        n, lab, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        if n > 1:
            keep = np.zeros(n, np.uint8)
            keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= max(1.0, min_area)
            mask = keep[lab]
        grid = cv2.remap(mask, mx, my, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        grid = grid.astype(bool) & self._visible
        n_mat = int(self._mat_mask.sum())
        if n_mat and np.count_nonzero(grid & self._mat_mask) > p.max_changed_mat_ratio * n_mat:
            return None
        pot_ratio = None
        if pot_center_mm is not None:
            # the cup's opening at rim height (a potted wink is seen through it)
            a = np.linspace(0, 2 * math.pi, 48, endpoint=False)
            r = POT_TOP_RADIUS_MM - 1.5
            rim = np.column_stack([pot_center_mm[0] + r * np.cos(a), pot_center_mm[1] + r * np.sin(a),
                                   np.full(a.size, POT_HEIGHT_MM)])
            poly = np.asarray(camera.project_mm(rim), dtype=np.float64) * (frame_wh[0] / camera.image_size_wh_px[0]
                                                                         * scale)
            pm = np.zeros(mask.shape, np.uint8)
            cv2.fillPoly(pm, [np.round(poly * 16).astype(np.int32)], 1, shift=4)
            inside = int(pm.sum())
            if inside:
                pot_ratio = float(np.count_nonzero(mask & pm)) / inside
        blobs: list[tuple[float, float]] = []
        off = grid & ~self._mat_mask & self._visible
        if off.any():
            nb, blab, bstats, cents = cv2.connectedComponentsWithStats(off.astype(np.uint8), connectivity=8)
            min_cells = p.min_blob_wink_ratio * math.pi * (SMALL_WINK_RADIUS_MM / p.cell_mm) ** 2
            for i in range(1, nb):
                if bstats[i, cv2.CC_STAT_AREA] >= min_cells:
                    cx, cy = cents[i]
                    blobs.append((float(x0 + (cx + 0.5) * p.cell_mm), float(y0 + (cy + 0.5) * p.cell_mm)))
        return RestChange.from_mask(grid, x0_mm=x0, y0_mm=y0, cell_mm=p.cell_mm, pot_changed_ratio=pot_ratio,
                                    off_mat_blobs_mm=tuple(blobs))
