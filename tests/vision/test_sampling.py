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


def test_more_points_than_one_remap_takes_are_sampled_in_slices(monkeypatch):
    """cv2.remap refuses maps over 32767 rows; a huge probe set (a Tantrix cloth's shading proposing thousands of
    candidate tiles) is sampled in slices with the same values, never an OpenCV assertion."""
    import vision.sampling as vs

    rng = np.random.default_rng(5)
    img = rng.random((50, 60, 3)).astype(np.float32)
    pts = rng.random((1003, 2)) * [58.0, 48.0]
    pts[7] = (-5.0, 3.0)
    whole = vs.sample_bilinear(img, pts)
    monkeypatch.setattr(vs, "_ROW", 4)
    monkeypatch.setattr(vs, "_MAX_SIDE", 5)  # slices of 16 points: 63 of them
    sliced = vs.sample_bilinear(img, pts)
    np.testing.assert_array_equal(np.isnan(sliced), np.isnan(whole))
    assert np.isnan(sliced[7]).all() and np.isfinite(np.delete(sliced, 7, axis=0)).all()
    np.testing.assert_allclose(np.nan_to_num(sliced), np.nan_to_num(whole), atol=1e-6)
    u8 = (img * 255).astype(np.uint8)
    monkeypatch.setattr(vs, "_ROW", 1024)
    monkeypatch.setattr(vs, "_MAX_SIDE", 32767)
    want = vs.sample_bilinear(u8, pts, outside_nan=False)
    monkeypatch.setattr(vs, "_ROW", 4)
    monkeypatch.setattr(vs, "_MAX_SIDE", 5)
    np.testing.assert_array_equal(vs.sample_bilinear(u8, pts, outside_nan=False), want)
