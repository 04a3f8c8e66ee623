"""Correlations of a small raster with ring kernels, read only on the window of centres a search looks at.

The ring search of ``vision.winks.ring_responses`` correlates a ~46-pixel plan raster (a visibility mask and
the masked colour gradients, seven planes) with kernels as wide as itself (a 37-pixel ring) and reads the
result only on the 11 x 11 centres within the search radius, for two radii: fourteen correlations. One forward
DFT of all the planes, the kernels' spectra (made once per kernel), products summed per output and one inverse
DFT of all the outputs (single precision, as OpenCV's) do the work of fourteen ``cv2.matchTemplate`` calls, whose fixed cost dominated on so
small a raster. The DFT is only as wide as the window's reach needs: a circular correlation equals the
zero-bordered one wherever the window's kernel placements never wrap onto the raster.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import cv2
import numpy as np
import scipy.fft


@lru_cache(maxsize=16)
def _kernel_spectrum(data: bytes, side: int, n_dft: int) -> np.ndarray:
    """Conjugate 2-D spectrum of an odd ``side`` x ``side`` float32 kernel centred on the DFT's origin."""
    k = np.frombuffer(data, np.float32).reshape(side, side)
    m = side // 2
    placed = np.zeros((n_dft, n_dft), np.float32)
    placed[:side, :side] = k
    placed = np.roll(placed, (-m, -m), axis=(0, 1))  # kernel tap (a, b) at offset (a - m, b - m), circularly
    spec = np.conj(scipy.fft.rfft2(placed))
    spec.setflags(write=False)
    return spec


def correlate_sums(srcs: np.ndarray, outputs: Sequence[Sequence[tuple[int, np.ndarray]]], start: int,
                   count: int) -> np.ndarray:
    """``sum_i cv2.filter2D(srcs[s_i], -1, kernel_i, borderType=BORDER_CONSTANT)`` over each output's
    ``(s_i, kernel_i)`` terms, on the window ``[start:start+count, start:start+count]``: ``(len(outputs), count,
    count)`` float32.

    ``srcs`` is ``(S, n, n)`` (square planes), each kernel an odd square float32 array.
    """
    n = srcs.shape[1]
    m = max(k.shape[0] // 2 for terms in outputs for _, k in terms)
    # the window reads raster rows start - m .. start + count - 1 + m: those outside the raster must fall on
    # the DFT's zero padding, not wrap onto the raster
    n_dft = cv2.getOptimalDFTSize(max(n + max(0, m - start), start + count + m))
    planes = np.zeros((srcs.shape[0], n_dft, n_dft), np.float32)
    planes[:, :n, :n] = srcs
    f = scipy.fft.rfft2(planes)
    prods = np.empty((len(outputs), *f.shape[1:]), f.dtype)
    for j, terms in enumerate(outputs):
        acc = None
        for s, k in terms:
            term = f[s] * _kernel_spectrum(np.ascontiguousarray(k, np.float32).tobytes(), k.shape[0], n_dft)
            acc = term if acc is None else acc + term
        prods[j] = acc
    out = scipy.fft.irfft2(prods, s=(n_dft, n_dft))
    return out[:, start:start + count, start:start + count].astype(np.float32)
