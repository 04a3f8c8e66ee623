"""Rendered calibration scenes shared by the calibration tests (rendered once per session, seeded)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from calib_render import WOOD_BGR, board_texture, finish, mat_texture, paste, render  # noqa: E402
from calib_scenes import (
    BOARD_VIEWS_MM,
    IMAGE_SIZE_WH_PX,
    TRUE_DIST,
    TRUE_FOCAL_PX,  # noqa: E402
    tilted_camera,
)
from calibration.camera import CameraModel  # noqa: E402
from calibration.charuco import CharucoSpec  # noqa: E402


@pytest.fixture(scope="session")
def charuco_spec() -> CharucoSpec:
    return CharucoSpec()


@pytest.fixture(scope="session")
def board_views(charuco_spec):
    """Six photos of the board alone (different tilts, all parts of the frame), lens with k1, k2."""
    rng = np.random.default_rng(2)
    tex = board_texture(charuco_spec.board(), 2.0, charuco_spec.size_mm)
    images = []
    for eye, target in BOARD_VIEWS_MM:
        cam = CameraModel.look_at(
            eye_mm=eye,
            target_mm=target,
            focal_px=TRUE_FOCAL_PX,
            image_size_wh_px=IMAGE_SIZE_WH_PX,
            dist=TRUE_DIST,
        )
        images.append(finish(render(cam, tex, background_bgr=(110, 110, 110), image_mm_per_px=0.5), rng))
    return images


@pytest.fixture(scope="session")
def table_with_board(charuco_spec):
    """The board centred on the mat (default placement), the whole mat in view: (image, true camera)."""
    rng = np.random.default_rng(3)
    tex = paste(
        mat_texture(rng, px_per_mm=2.0, extent_mm=(1300, 800)),
        board_texture(charuco_spec.board(), 2.0, charuco_spec.size_mm),
    )
    cam = CameraModel.look_at(
        eye_mm=(60, -1000, 1300),
        target_mm=(0, 0, 0),
        focal_px=TRUE_FOCAL_PX,
        image_size_wh_px=IMAGE_SIZE_WH_PX,
        dist=TRUE_DIST,
    )
    return finish(render(cam, tex, background_bgr=WOOD_BGR, image_mm_per_px=1.2), rng), cam


def _mat_photo(camera: CameraModel, seed: int, with_mat: bool = True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tex = mat_texture(rng, px_per_mm=1.5, extent_mm=(1700, 1150), with_mat=with_mat)
    return finish(render(camera, tex, background_bgr=WOOD_BGR, image_mm_per_px=1.3), rng)


@pytest.fixture(scope="session")
def mat_photo_30():
    """The mat from a camera tilted 30 degrees, barrel distortion k1 = -0.08; returns (image, true camera)."""
    cam = tilted_camera(30.0)
    return _mat_photo(cam, 11), cam


@pytest.fixture(scope="session")
def mat_photo_20():
    cam = tilted_camera(20.0, dist=(-0.05, 0, 0, 0, 0), side_mm=-120.0)
    return _mat_photo(cam, 12), cam


@pytest.fixture(scope="session")
def table_without_mat():
    return _mat_photo(tilted_camera(30.0), 13, with_mat=False)
