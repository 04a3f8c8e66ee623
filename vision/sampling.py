"""Colours of an image at many sub-pixel points, for probes laid out in the table plane and projected."""

from __future__ import annotations

import cv2
import numpy as np

#: cv2.remap's maps must stay under 32767 a side, so the points go in rows of this many.
_ROW = 1024
_MAX_SIDE = 32767


def sample_bilinear(image: np.ndarray, pts_px: np.ndarray, *, outside_nan: bool = True) -> np.ndarray:
    """Bilinear values ``(N, C)`` float32 at image points ``(N, 2)`` (x, y). Outside the image: NaN (a float
    image), or with ``outside_nan=False`` the nearest edge pixel's value (any image)."""
    step = _ROW * (_MAX_SIDE - 1)
    if len(pts_px) > step:  # more rows than one remap takes: in slices
        return np.concatenate([sample_bilinear(image, pts_px[i:i + step], outside_nan=outside_nan)
                               for i in range(0, len(pts_px), step)])
    n = len(pts_px)
    rows = max(1, -(-n // _ROW))
    xy = np.full((rows * _ROW, 2), -10.0, np.float32)
    xy[:n] = pts_px
    x, y = xy[:, 0].reshape(rows, _ROW), xy[:, 1].reshape(rows, _ROW)
    channels = 1 if image.ndim == 2 else image.shape[2]
    if not outside_nan:
        v = cv2.remap(image, x, y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return v.reshape(-1, channels)[:n].astype(np.float32)
    if image.dtype != np.float32:
        raise TypeError(f"NaN outside the image needs a float32 image, not {image.dtype}")
    v = cv2.remap(image, x, y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(np.nan,) * 4)
    out = v.reshape(-1, channels)[:n].copy()
    h, w = image.shape[:2]
    bad = (pts_px[:, 0] < 0) | (pts_px[:, 0] > w - 1) | (pts_px[:, 1] < 0) | (pts_px[:, 1] > h - 1)
    out[bad] = np.nan
    return out
