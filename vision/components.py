"""Connected components of a sparse orthophoto mask, counted on the part of it that holds any foreground.

A frame's wink and foreground masks cover about 1 % of the orthophoto, in about half its rows and columns;
``cv2.connectedComponentsWithStats`` spends most of its time on the empty rest (its statistics pass visits every
pixel). The rows and columns pairs that hold no foreground are dropped, one empty pair kept between the runs that
remain (so no two components touch that did not), and the components are counted on what is left: the same
components, in the same order, with the same areas and boxes mapped back. The order is kept because OpenCV's
8-connected labelling scans 2 x 2 blocks in raster order and numbers each component by its first block: whole
pairs dropped keep every block whole and the scan order of those that remain.
"""

from __future__ import annotations

import cv2
import numpy as np

#: Rows and columns are dropped in pairs: OpenCV's 8-connected labelling works on 2 x 2 blocks.
_BLOCK = 2


def _kept_lines(occupied: np.ndarray) -> np.ndarray:
    """Indices of the lines kept along one axis: each occupied pair whole, and one empty pair between runs.

    An index of -1 stands for a line of zeros (an empty pair between runs that the image ends before)."""
    n = len(occupied)
    pairs = np.logical_or.reduceat(occupied, np.arange(0, n, _BLOCK)) if n else np.zeros(0, bool)
    keep = pairs.copy()
    # one empty pair after each run (it parts the run from the next; at the end it is harmless)
    keep[1:] |= pairs[:-1]
    idx = (np.flatnonzero(keep)[:, None] * _BLOCK + np.arange(_BLOCK)[None, :]).ravel()
    idx[idx >= n] = -1
    return idx


#: Below this share of the mask left after dropping its empty pairs, counting on the rest pays for copying it.
_MAX_KEPT_SHARE = 0.6


def components_with_stats(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``cv2.connectedComponentsWithStats(mask, connectivity=8, ltype=CV_16U)`` on the occupied part of ``mask``.

    Returns ``(n, labels, stats, rows, cols)``: ``labels`` is the label image of the kept part, whose row ``i`` is
    the mask's row ``rows[i]`` and column ``j`` its column ``cols[j]`` (rows and columns beyond those hold zeros);
    ``stats`` are in the
    mask's own coordinates (row 0, the background, counts only the kept part). ``component_window`` cuts one
    component's mask out of it. Statistics equal OpenCV's on the whole mask, row for row."""
    m = mask.view(np.uint8) if mask.dtype == bool else mask
    h, w = m.shape
    rows = _kept_lines(m.any(axis=1))
    cols = _kept_lines(m.max(axis=0) > 0)
    if not len(rows) or not len(cols):  # no foreground at all (and OpenCV must not see an empty image)
        return 1, np.zeros((0, 0), np.uint16), np.zeros((1, 5), np.int32), rows[:0], cols[:0]
    if len(rows) * len(cols) > _MAX_KEPT_SHARE * h * w:
        rows, cols = np.arange(h), np.arange(w)
        sub = m
    else:
        picked = np.take(m, rows[rows >= 0], axis=0)
        sub = np.zeros((len(rows), len(cols)), np.uint8)
        # the kept columns in runs of consecutive ones: a slice copy each
        real = np.flatnonzero(cols >= 0)
        cut = np.flatnonzero(np.diff(cols[real]) != 1) + 1
        for a, b in zip(np.r_[0, cut], np.r_[cut, len(real)]):
            j0, j1 = int(real[a]), int(real[b - 1]) + 1
            sub[:len(picked), j0:j1] = picked[:, cols[j0]:cols[j0] + (j1 - j0)]
    n, lab, stats, _ = cv2.connectedComponentsWithStats(sub, connectivity=8, ltype=cv2.CV_16U)
    if n >= 65535:  # (never on a mat; a label image that overflows 16 bits takes the 32-bit path)
        n, lab, stats, _ = cv2.connectedComponentsWithStats(sub, connectivity=8)
    if sub is m:
        return n, lab, stats, rows, cols
    rows, cols = rows[rows >= 0], cols[cols >= 0]  # (a pair cut by the image's end: its line beyond is zeros)
    stats = stats.copy()
    if n > 1:
        x0, y0 = stats[1:, cv2.CC_STAT_LEFT], stats[1:, cv2.CC_STAT_TOP]
        left, top = cols[x0], rows[y0]
        right = cols[x0 + stats[1:, cv2.CC_STAT_WIDTH] - 1]
        bottom = rows[y0 + stats[1:, cv2.CC_STAT_HEIGHT] - 1]
        stats[1:, cv2.CC_STAT_LEFT], stats[1:, cv2.CC_STAT_TOP] = left, top
        stats[1:, cv2.CC_STAT_WIDTH] = right - left + 1
        stats[1:, cv2.CC_STAT_HEIGHT] = bottom - top + 1
    return n, lab, stats, rows, cols


def component_window(labels: np.ndarray, rows: np.ndarray, cols: np.ndarray, label: int,
                     y0: int, y1: int, x0: int, x1: int) -> np.ndarray:
    """Mask of component ``label`` over the mask's window ``[y0:y1, x0:x1]`` (from ``components_with_stats``):
    the kept rows and columns in the window are consecutive ones of ``labels``; the dropped ones hold nothing."""
    a, b = np.searchsorted(rows, (y0, y1))
    c, d = np.searchsorted(cols, (x0, x1))
    sub = labels[a:b, c:d] == label
    if b - a == y1 - y0 and d - c == x1 - x0:
        return sub
    out = np.zeros((y1 - y0, x1 - x0), bool)
    out[np.ix_(rows[a:b] - y0, cols[c:d] - x0)] = sub
    return out
