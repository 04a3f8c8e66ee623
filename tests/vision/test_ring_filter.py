"""The ring search's windowed correlations give what cv2.filter2D gives on that window."""

import cv2
import numpy as np
import pytest

from vision.ring_filter import correlate_sums
from vision.winks import RADII_MM, RING_STEP_MM, _ring_kernel


def _filtered(src, kern):
    return cv2.filter2D(src, -1, kern, borderType=cv2.BORDER_CONSTANT)


@pytest.mark.parametrize("start, count", [(17, 11), (0, 5), (40, 6)])  # the search window, and at both borders
def test_window_sums_match_filter2d_with_zero_border(start, count):
    rng = np.random.default_rng(7)
    ks, kcs, kss = _ring_kernel(RADII_MM["small"] / RING_STEP_MM)
    kl, kcl, ksl = _ring_kernel(RADII_MM["large"] / RING_STEP_MM)
    planes = np.concatenate([(rng.random((1, 46, 46)) > 0.3), rng.normal(size=(2, 46, 46))]).astype(np.float32)
    outputs = [[(0, ks)], [(1, kcs), (2, kss)], [(0, kl)], [(1, kcl), (2, ksl)]]
    got = correlate_sums(planes, outputs, start, count)
    assert got.shape == (4, count, count)
    for j, terms in enumerate(outputs):
        want = sum(_filtered(planes[s], k) for s, k in terms)[start:start + count, start:start + count]
        np.testing.assert_allclose(got[j], want, atol=1e-5)
