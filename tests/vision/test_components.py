"""Components counted on the occupied rows and columns of a mask are OpenCV's on the whole mask."""

import cv2
import numpy as np
import pytest

from vision.components import component_window, components_with_stats


def _winks_mask(rng, h, w, n):
    """A sparse mask like a frame's wink labels: discs of a wink's size in the orthophoto, and specks."""
    m = np.zeros((h, w), np.uint8)
    for _ in range(n):
        cv2.circle(m, (int(rng.integers(0, w)), int(rng.integers(0, h))), int(rng.integers(1, 10)), 1, -1)
    return m


@pytest.mark.parametrize("seed", range(6))
def test_same_components_boxes_areas_and_order(seed):
    rng = np.random.default_rng(seed)
    masks = [_winks_mask(rng, 401, 773, 30), _winks_mask(rng, 400, 800, 3), np.zeros((31, 17), np.uint8),
             (rng.random((57, 91)) < 0.3).astype(np.uint8), (rng.random((8, 9)) < 0.05).astype(np.uint8)]
    for m in masks:
        n0, lab0, st0, _ = cv2.connectedComponentsWithStats(m, connectivity=8, ltype=cv2.CV_16U)
        n1, lab1, st1, rows, cols = components_with_stats(m.view(bool))
        assert n1 == n0
        np.testing.assert_array_equal(st1[1:], st0[1:])  # the same boxes and areas, numbered alike
        for i in range(1, n0):
            x0, y0, bw, bh, _ = st0[i]
            ya, yb, xa, xb = max(0, y0 - 4), min(m.shape[0], y0 + bh + 4), max(0, x0 - 4), min(m.shape[1], x0 + bw + 4)
            np.testing.assert_array_equal(component_window(lab1, rows, cols, i, ya, yb, xa, xb),
                                          lab0[ya:yb, xa:xb] == i)


def test_sparse_mask_is_counted_on_less_than_itself():
    m = _winks_mask(np.random.default_rng(1), 400, 800, 3)
    _, lab, _, rows, cols = components_with_stats(m)
    assert lab.size < 0.25 * m.size and len(rows) < m.shape[0] and len(cols) < m.shape[1]
