"""Correlation of a small raster with a ring kernel, evaluated only on the window of centres a search looks at.

The ring search of ``vision.winks.ring_responses`` correlates a ~46-pixel plan raster with kernels as wide as
itself (a 37-pixel ring) but reads the result only on the 11 x 11 centres within the search radius.
``cv2.filter2D`` computes every output through a DFT; here the window's outputs are one matrix product with a
precomputed correlation matrix (zero padding, as ``BORDER_CONSTANT``), about a tenth of the arithmetic. The sums
are the same up to float rounding (a few 1e-7 relative), as the DFT's own.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=16)
def _correlation_matrix(kernel_bytes: bytes, ksize: int, n: int, start: int, count: int) -> np.ndarray:
    """``(count * count, n * n)`` float32 rows: the kernel placed at each output of the window."""
    k = np.frombuffer(kernel_bytes, np.float32).reshape(ksize, ksize)
    m = ksize // 2
    W = np.zeros((count, count, n + 2 * m, n + 2 * m), np.float32)
    for i in range(count):
        for j in range(count):
            # output (start + i, start + j) sums k[a, b] * src[start + i + a - m, start + j + b - m]
            W[i, j, start + i:start + i + ksize, start + j:start + j + ksize] = k
    W = np.ascontiguousarray(W[:, :, m:m + n, m:m + n]).reshape(count * count, n * n)
    W.setflags(write=False)
    return W


def correlate_window(src: np.ndarray, kernel: np.ndarray, start: int, count: int) -> np.ndarray:
    """``cv2.filter2D(src, -1, kernel, borderType=BORDER_CONSTANT)[start:start+count, start:start+count]``.

    ``src`` is a square ``(n, n)`` or ``(n, n, C)`` float32 raster, ``kernel`` an odd square float32 kernel.
    """
    n = src.shape[0]
    k = np.ascontiguousarray(kernel, np.float32)
    W = _correlation_matrix(k.tobytes(), k.shape[0], n, start, count)
    flat = src.reshape(n * n, -1)
    # one matrix-vector product per channel: a (n*n, C) matrix product would start BLAS threads for no gain
    out = np.column_stack([W @ np.ascontiguousarray(flat[:, c]) for c in range(flat.shape[1])])
    return out.reshape((count, count) + src.shape[2:])
