"""Sub-pixel sampling shared by the rim search and the Tantrix link reader."""

from __future__ import annotations

import numpy as np
import pytest

from vision.sampling import sample_bilinear


def test_bilinear_between_pixels_nan_or_edge_outside_and_many_points():
    img = np.zeros((4, 5, 3), np.float32)
    img[:, :, 0] = np.arange(5, dtype=np.float32)[None, :] * 10.0  # channel 0 rises 10 per pixel in x
    pts = np.array([[1.5, 2.0], [3.25, 1.0], [-3.0, 1.0], [4.5, 1.0]], np.float32)
    v = sample_bilinear(img, pts)
    assert v[:2, 0] == pytest.approx([15.0, 32.5])
    assert np.isnan(v[2:]).all()
    edge = sample_bilinear(img, pts, outside_nan=False)
    assert edge[2:, 0] == pytest.approx([0.0, 40.0])
    many = np.tile(pts[:1], (40_000, 1))  # beyond remap's 32767 a side
    assert sample_bilinear(img, many)[:, 0] == pytest.approx(np.full(40_000, 15.0))
    with pytest.raises(TypeError, match="float32"):
        sample_bilinear(img.astype(np.uint8), pts)
