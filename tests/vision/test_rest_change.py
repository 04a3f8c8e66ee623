"""Pixel change between two rest frames, on the table grid (vision.rest_change)."""

from __future__ import annotations

import cv2
import numpy as np

from calibration.camera import CameraModel
from vision.rest_change import RestChangeMeter

WH = (960, 540)


def camera() -> CameraModel:
    return CameraModel.look_at(eye_mm=(0.0, -600.0, 1700.0), target_mm=(0.0, 0.0, 0.0), focal_px=520.0,
                               image_size_wh_px=WH)


def frame(rng, discs=()) -> np.ndarray:
    """A felt-grey frame with sensor noise and red discs at the given table points (x, y, r mm)."""
    img = np.full((WH[1], WH[0], 3), (90, 110, 100), np.float32)
    cam = camera()
    for x, y, r in discs:
        c = cam.project_mm(np.array([[x, y, 1.5]]))[0]
        rim = cam.project_mm(np.array([[x + r, y, 1.5]]))[0]
        cv2.circle(img, (int(round(c[0])), int(round(c[1]))), max(2, int(round(np.hypot(*(rim - c))))),
                   (40, 40, 190), -1)
    img += rng.normal(0, 3.0, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def test_moved_wink_changes_its_two_spots_and_nothing_else():
    rng = np.random.default_rng(1)
    meter = RestChangeMeter()
    cam = camera()
    assert meter.update(frame(rng, [(-300, 100, 8), (200, -100, 11)]), cam, (0.0, 0.0)) is None  # first rest
    change = meter.update(frame(rng, [(-250, 60, 8), (200, -100, 11)]), cam, (0.0, 0.0))
    assert change is not None
    assert change.changed_within((-300, 100), 8) and change.changed_within((-250, 60), 8)
    assert not change.changed_within((200, -100), 15)  # the still wink: only noise there
    assert not change.changed_within((0, 0), 200) and change.off_mat_blobs_mm == ()
    assert change.pot_changed_ratio == 0.0


def test_still_table_shows_no_change_and_a_light_change_gives_no_evidence():
    rng = np.random.default_rng(2)
    meter = RestChangeMeter()
    cam = camera()
    meter.update(frame(rng, [(0, 0, 8)]), cam, None)
    still = meter.update(frame(rng, [(0, 0, 8)]), cam, None)
    assert still is not None and not still.grid.any()
    brighter = cv2.convertScaleAbs(frame(rng, [(0, 0, 8)]), alpha=1.4)  # the light (or the camera) changed
    assert meter.update(brighter, cam, None) is None


def test_wink_landing_off_the_mat_is_a_blob_there():
    rng = np.random.default_rng(3)
    meter = RestChangeMeter()
    cam = camera()
    meter.update(frame(rng, [(880, 0, 8)]), cam, None)
    change = meter.update(frame(rng, [(970, 10, 8)]), cam, None)
    assert change is not None and len(change.off_mat_blobs_mm) == 1
    x, y = change.off_mat_blobs_mm[0]
    assert abs(x - 970) < 12 and abs(y - 10) < 12
