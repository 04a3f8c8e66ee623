"""The ring search's windowed correlation gives what cv2.filter2D gives on that window."""

import cv2
import numpy as np
import pytest

from vision.ring_filter import correlate_window
from vision.winks import RADII_MM, RING_STEP_MM, _ring_kernel


@pytest.mark.parametrize("size", ["small", "large"])
def test_window_matches_filter2d_with_zero_border(size):
    rng = np.random.default_rng(7)
    k, kc, _ = _ring_kernel(RADII_MM[size] / RING_STEP_MM)
    colour = rng.normal(size=(46, 46, 3)).astype(np.float32)
    mask = (rng.random((46, 46)) > 0.3).astype(np.float32)
    for src, kern in ((colour, kc), (mask, k)):
        full = cv2.filter2D(src, -1, kern, borderType=cv2.BORDER_CONSTANT)
        for start, count in ((17, 11), (0, 5), (40, 6)):  # the search window, and windows at both borders
            want = full[start:start + count, start:start + count]
            np.testing.assert_allclose(correlate_window(src, kern, start, count), want, atol=1e-5)
