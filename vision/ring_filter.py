"""Correlation of a small raster with a ring kernel, evaluated only on the window of centres a search looks at.

The ring search of ``vision.winks.ring_responses`` correlates a ~46-pixel plan raster with kernels as wide as
itself (a 37-pixel ring) but reads the result only on the 11 x 11 centres within the search radius.
``cv2.filter2D`` computes every output of the raster; ``cv2.matchTemplate`` (``TM_CCORR``: the same
correlation, through the same kind of DFT) computes only the placements of the kernel inside its input, so the
input cut (and zero-padded, as ``BORDER_CONSTANT``) to the window's reach gives just the window: the same sums to
the last bit but for an occasional unit of the last place.
"""

from __future__ import annotations

import cv2
import numpy as np


def correlate_window(src: np.ndarray, kernel: np.ndarray, start: int, count: int) -> np.ndarray:
    """``cv2.filter2D(src, -1, kernel, borderType=BORDER_CONSTANT)[start:start+count, start:start+count]``.

    ``src`` is a square ``(n, n)`` or ``(n, n, C)`` float32 raster, ``kernel`` an odd square float32 kernel.
    """
    n = src.shape[0]
    m = kernel.shape[0] // 2
    lo, hi = start - m, start + count - 1 + m  # the input rows (and columns) the window's outputs reach
    pad_lo, pad_hi = max(0, -lo), max(0, hi - (n - 1))
    sub = src[max(lo, 0):min(hi, n - 1) + 1, max(lo, 0):min(hi, n - 1) + 1]
    if pad_lo or pad_hi:
        sub = cv2.copyMakeBorder(sub, pad_lo, pad_hi, pad_lo, pad_hi, cv2.BORDER_CONSTANT, value=0)
    if sub.ndim == 2:
        return cv2.matchTemplate(sub, kernel, cv2.TM_CCORR)
    return np.dstack([cv2.matchTemplate(np.ascontiguousarray(sub[..., c]), kernel, cv2.TM_CCORR)
                      for c in range(sub.shape[2])])
