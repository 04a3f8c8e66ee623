"""The orthophoto from the window of the image the grid reaches is the one from the whole image's pyramid."""

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from synth import default_camera
from vision.ortho import OrthoGrid, ortho_maps, pyramid_size, rectify_pyramid


def _whole_pyramid(image, camera, grid, levels):
    src = image
    for _ in range(levels):
        src = cv2.pyrDown(src)
    mx, my = ortho_maps(camera, grid, source_scale=0.5 ** levels)
    ortho = cv2.remap(src, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
    h, w = src.shape[:2]
    return ortho, (mx >= 0) & (mx <= w - 1) & (my >= 0) & (my <= h - 1)


@pytest.mark.parametrize("levels", [0, 1, 2])
@pytest.mark.parametrize("shift_px", [(0, 0), (700, 0), (-650, 300), (0, -420)])
def test_window_pyramid_equals_whole_pyramid(levels, shift_px):
    # an odd-sized frame, the grid inside it or running off any side (a mat partly out of the picture)
    cam0 = default_camera(1601, 901)
    K = cam0.K.copy()
    K[0, 2] += shift_px[0]
    K[1, 2] += shift_px[1]
    cam = CameraModel(K=K, dist=cam0.dist, rvec=cam0.rvec, tvec=cam0.tvec, image_size_wh_px=(1601, 901))
    grid = OrthoGrid.covering(-400, 400, -250, 250, 1.25 * 2 ** levels, 1.5)
    image = np.random.default_rng(5).integers(0, 256, (901, 1601, 3), dtype=np.uint8)
    want, want_valid = _whole_pyramid(image, cam, grid, levels)
    got, got_valid = rectify_pyramid(image, cam, grid, levels)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_valid, want_valid)
    assert want_valid.any() and (shift_px == (0, 0) or not want_valid.all())


def test_pyramid_size_follows_pyrdown():
    image = np.zeros((901, 1601, 3), np.uint8)
    for levels in range(4):
        assert pyramid_size((1601, 901), levels) == (image.shape[1], image.shape[0])
        image = cv2.pyrDown(image)


def test_changed_camera_does_not_reuse_the_cached_tables():
    # the tables are cached by camera, grid, level and frame size: a camera moved by a few pixels (the same rig
    # calibrated again) gets its own, not the previous camera's
    cam = default_camera(1601, 901)
    K = cam.K.copy()
    K[0, 2] += 7.0
    moved = CameraModel(K=K, dist=cam.dist, rvec=cam.rvec, tvec=cam.tvec, image_size_wh_px=(1601, 901))
    grid = OrthoGrid.covering(-400, 400, -250, 250, 2.5, 1.5)
    image = np.random.default_rng(7).integers(0, 256, (901, 1601, 3), dtype=np.uint8)
    first, _ = rectify_pyramid(image, cam, grid, 1)
    got, got_valid = rectify_pyramid(image, moved, grid, 1)
    want, want_valid = _whole_pyramid(image, moved, grid, 1)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_valid, want_valid)
    assert not np.array_equal(got, first)
