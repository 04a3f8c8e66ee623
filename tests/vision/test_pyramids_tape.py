"""Pieces on start-line tapes (vision/pyramids.py ``_remove_tape``): the tape is re-referenced along its own
axis so a piece on it stands out, also where two tapes cross and make one blob."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from geometry.pyramids import upright_pose
from vision.pyramids import _tape_strips, assumed_overhead_camera, detect_pyramids
from vision.pyramids_fit import hull_px

MM_PER_PX = 0.45
IMAGE_WH_PX = (1280, 720)
WOOD_BGR = (60, 105, 160)
TAPE_WIDTH_MM = 21.0
AXIS_TOL_DEG = 1.0
POSITION_TOL_MM = 4.0


def _strip(mask: np.ndarray, centre_px, angle_deg: float, width_px: float) -> None:
    d = np.array([math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))])
    n = np.array([-d[1], d[0]])
    c = np.asarray(centre_px, float)
    far = 2000.0
    quad = np.array([c - far * d - n * width_px / 2, c + far * d - n * width_px / 2,
                     c + far * d + n * width_px / 2, c - far * d + n * width_px / 2])
    cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)


WHITE_TAPE_DEG, DARK_TAPE_DEG = -73.0, -13.0  # image directions of the two tapes (x right, y down)


def _crossing_tapes_photo(along_mm: float = 35.0, seed: int = 5):
    """A noisy wood table with a white and a dark tape crossing at 60 deg, a green medium piece on the white
    tape ``along_mm`` from the crossing; the camera straight overhead. Returns the camera, the photo, the
    tapes' mask and the piece's plan position (mm)."""
    rng = np.random.default_rng(seed)
    cam = assumed_overhead_camera(IMAGE_WH_PX, MM_PER_PX)
    w, h = IMAGE_WH_PX
    photo = np.array(WOOD_BGR, float)[None, None] + rng.normal(0, 3, (h, w, 3))
    width_px = TAPE_WIDTH_MM / MM_PER_PX
    centre = cam.project_mm(np.array([[0.0, 0.0, 0.0]]))[0]
    white = np.zeros((h, w), np.uint8)
    _strip(white, centre, WHITE_TAPE_DEG, width_px)
    dark = np.zeros((h, w), np.uint8)
    _strip(dark, centre, DARK_TAPE_DEG, width_px)
    photo[white > 0] = (235, 238, 240)
    photo[dark > 0] = (45, 45, 50)
    d = np.array([math.cos(math.radians(WHITE_TAPE_DEG)), math.sin(math.radians(WHITE_TAPE_DEG))])
    piece_xy_mm = cam.image_to_table_mm((centre + d * along_mm / MM_PER_PX)[None], 0.0)[0]
    pose = upright_pose("medium", piece_xy_mm, 0.4)
    cv2.fillConvexPoly(photo, np.round(hull_px(cam, pose)).astype(np.int32), (40, 150, 40))
    photo = np.clip(photo + rng.normal(0, 2, photo.shape), 0, 255).astype(np.uint8)
    return cam, photo, white | dark, tuple(float(v) for v in piece_xy_mm)


def test_two_crossing_tapes_are_split_into_their_own_strips():
    cam, _, tape, _ = _crossing_tapes_photo()
    strips = _tape_strips(tape, 14.0 / MM_PER_PX, 160.0 / MM_PER_PX)
    assert len(strips) == 2
    angles = [math.degrees(math.atan2(vy, vx)) % 180.0 for _, (vx, vy, _, _) in strips]
    for want in (WHITE_TAPE_DEG % 180.0, DARK_TAPE_DEG % 180.0):
        assert min(abs(a - want) for a in angles) < AXIS_TOL_DEG


@pytest.mark.parametrize("along_mm", [35.0, 120.0], ids=["by-crossing", "along-tape"])
def test_a_piece_on_a_tape_where_two_tapes_cross_is_found(along_mm):
    cam, photo, _, piece_xy_mm = _crossing_tapes_photo(along_mm)
    dets = detect_pyramids(photo, cam)
    found = [d for d in dets if math.dist(d.center_mm, piece_xy_mm) < POSITION_TOL_MM]
    assert len(found) == 1
    assert (found[0].size, found[0].pose) == ("medium", "upright")
    assert len(dets) == 1  # the tapes themselves are no pieces
