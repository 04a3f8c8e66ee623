"""A face that dims the table like a cast shadow: the verdict that changes when the shade beside a blob is
read as plastic is flagged, never guessed (vision/pyramids.py ``_shade_reading``)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from geometry.pyramids import upright_pose
from vision.pyramids import DEFAULT_PARAMS, _fit_blob, assumed_overhead_camera
from vision.pyramids_fit import hull_px, shadow_hull_px

MM_PER_PX = 0.25
IMAGE_WH_PX = (640, 480)
REACH_PX = round(DEFAULT_PARAMS.uncertain_reach_mm / MM_PER_PX)


def _masks(size: str, faces: int, shadow_offset=None):
    """Foreground of an upright piece with ``faces`` adjacent faces cut out as shade, and its cast shadow."""
    cam = assumed_overhead_camera(IMAGE_WH_PX, MM_PER_PX)
    pose = upright_pose(size, (3.0, -2.0), 0.35)
    full = np.zeros(IMAGE_WH_PX[::-1], np.uint8)
    cv2.fillConvexPoly(full, np.round(hull_px(cam, pose)).astype(np.int32), 1)
    piece = full.copy()
    if faces:  # the faces between adjacent base corners and the apex dim the table without a tint
        q = cam.project_mm(np.vstack([pose.corners_mm()[:faces + 1], pose.apex_mm()[None]]))
        cv2.fillConvexPoly(piece, np.round(q).astype(np.int32), 0)
    if shadow_offset is not None:
        cast = shadow_hull_px(cam, pose, np.asarray(shadow_offset))
        cv2.fillConvexPoly(full, np.round(cast).astype(np.int32), 1)
    shade = ((full > 0) & (piece == 0)).astype(np.uint8)
    contours, _ = cv2.findContours(piece, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return cam, max(contours, key=cv2.contourArea), shade


@pytest.mark.parametrize("size", ["medium", "large"])
def test_two_faces_cut_out_as_shade_are_flagged_not_read_as_a_smaller_piece(size):
    cam, contour, shade = _masks(size, faces=2)
    alone = _fit_blob(cam, contour, DEFAULT_PARAMS, reach_px=REACH_PX)
    # the blob alone is the wrong piece (the photo cannot tell these faces from a cast shadow) ...
    assert [(p.kind, p.size) for p in alone.pieces] != [("upright", size)]
    assert alone.shade_reading is None
    # ... so the shade read as plastic must make the verdict a flagged one, naming an upright piece
    verdict = _fit_blob(cam, contour, DEFAULT_PARAMS, reach_px=REACH_PX, shade=shade)
    assert verdict.shade_reading is not None
    assert verdict.shade_reading.startswith("upright:")


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_a_cast_shadow_beside_a_whole_piece_does_not_flag_it(size):
    cam, contour, shade = _masks(size, faces=0, shadow_offset=(0.45, -0.2))
    verdict = _fit_blob(cam, contour, DEFAULT_PARAMS, reach_px=REACH_PX, shade=shade)
    assert [(p.kind, p.size) for p in verdict.pieces] == [("upright", size)]
    assert verdict.shade_reading is None
