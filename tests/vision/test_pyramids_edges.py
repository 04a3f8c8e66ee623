"""Edge support of a pyramid's outline (vision/pyramids_edges.py): faces the segmentation lost are found back
from the steps the piece's outline makes in the photo, and a piece leaning on a lying one is seeded at the
tilt at which it rests (vision/pyramids_physics.resting_tilt_rad)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from geometry.pyramids import base_mm, lying_pose, tilted_pose, upright_pose
from vision.pyramids import DEFAULT_PARAMS, _fit_blob, assumed_overhead_camera
from vision.pyramids_edges import EdgeMap
from vision.pyramids_fit import hull_px
from vision.pyramids_physics import resting_tilt_rad, tilted_support_gap_mm

MM_PER_PX = 0.25
IMAGE_WH_PX = (640, 480)
TABLE_BGR = (60, 110, 170)  # warm wood
CONTACT_TOL_MM = 0.3  # the lying piece's surface is sampled 10 steps per face edge


def _photo_with_faint_faces(size: str, faint_faces: int, seed: int = 3):
    """An upright piece over a noisy table whose ``faint_faces`` adjacent faces have the table's own colour
    (a translucent face over wood of its hue), outlined only by a thin darker rim; the others tinted blue.
    Returns the camera, the photo, the blob the segmentation would keep (the tinted faces) and the pose."""
    rng = np.random.default_rng(seed)
    cam = assumed_overhead_camera(IMAGE_WH_PX, MM_PER_PX)
    pose = upright_pose(size, (3.0, -2.0), 0.35)
    photo = np.clip(np.array(TABLE_BGR, float)[None, None] + rng.normal(0, 4, (*IMAGE_WH_PX[::-1], 3)), 0, 255)
    photo = photo.astype(np.uint8)
    hull = np.round(hull_px(cam, pose)).astype(np.int32)
    cv2.polylines(photo, [hull], True, (35, 70, 110), 1, cv2.LINE_AA)
    blob = np.zeros(IMAGE_WH_PX[::-1], np.uint8)
    corners, apex = pose.corners_mm(), pose.apex_mm()
    for k in range(faint_faces, 4):
        face = np.round(cam.project_mm(np.vstack([corners[k], corners[(k + 1) % 4], apex]))).astype(np.int32)
        cv2.fillConvexPoly(photo, face, (170, 90, 40))
        cv2.fillConvexPoly(blob, face, 1)
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return cam, photo, max(contours, key=cv2.contourArea), pose


def test_the_true_outline_has_more_edge_support_than_a_shrunk_or_shifted_one():
    cam, photo, _, pose = _photo_with_faint_faces("large", faint_faces=2)
    edges = EdgeMap(photo)
    true = edges.support([hull_px(cam, pose)])
    shrunk = edges.support([hull_px(cam, upright_pose("medium", (3.0, -2.0), 0.35))])
    shifted = edges.support([hull_px(cam, upright_pose("large", (6.0, -2.0), 0.35))])
    assert true > 0.6
    assert shrunk < 0.5 * true and shifted < 0.5 * true


@pytest.mark.parametrize("size", ["medium", "large"])
def test_faces_lost_by_the_segmentation_are_found_from_the_outline(size):
    cam, photo, contour, _ = _photo_with_faint_faces(size, faint_faces=2)
    silhouette_only = _fit_blob(cam, contour, DEFAULT_PARAMS)
    # the blob alone reads another piece (two faces are missing from it) ...
    assert [(p.kind, p.size) for p in silhouette_only.pieces] != [("upright", size)]
    # ... the steps along the whole outline restore the piece
    verdict = _fit_blob(cam, contour, DEFAULT_PARAMS, edges=EdgeMap(photo))
    assert [(p.kind, p.size) for p in verdict.pieces] == [("upright", size)]
    x, y = verdict.pieces[0].params[:2]
    assert math.hypot(x - 3.0, y + 2.0) < 1.5


@pytest.mark.parametrize("lower_size,upper_size", [("medium", "large"), ("large", "small"), ("small", "medium")])
def test_a_piece_seeded_at_its_resting_tilt_touches_the_lying_piece(lower_size, upper_size):
    lying = lying_pose(lower_size, (0.0, 0.0), math.radians(-70.0))
    near_x = float(lying.plan_footprint_mm()[:, 0].min())
    hinge = (near_x - 0.4 * base_mm(upper_size), 0.0)
    tilt = resting_tilt_rad(upper_size, lying, hinge, 0.0)
    assert tilt is not None and math.radians(5.0) <= tilt <= math.radians(40.0)
    # tilted_pose raises the base towards yaw + 90 deg: yaw = -90 deg raises it along +x, onto the lying piece
    gap = tilted_support_gap_mm(tilted_pose(upper_size, hinge, -math.pi / 2, tilt), lying)
    assert abs(gap) < CONTACT_TOL_MM


def test_no_resting_tilt_when_the_base_meets_nothing():
    lying = lying_pose("medium", (0.0, 0.0), 0.0)
    assert resting_tilt_rad("small", lying, (-200.0, 0.0), 0.0) is None


def test_an_upright_piece_touching_another_is_flagged_not_scored_silently():
    # two upright pieces side by side make one blob; either may lean on the other by the few degrees that
    # double its score (IT I-1), which the pair's silhouette does not settle
    from vision.pyramids import detect_pyramids

    rng = np.random.default_rng(5)
    cam = assumed_overhead_camera(IMAGE_WH_PX, MM_PER_PX)
    photo = np.clip(np.array(TABLE_BGR, float)[None, None] + rng.normal(0, 4, (*IMAGE_WH_PX[::-1], 3)), 0, 255)
    photo = photo.astype(np.uint8)
    for xy in ((-11.0, 0.0), (11.5, 0.0)):
        hull = np.round(hull_px(cam, upright_pose("large", xy, 0.0))).astype(np.int32)
        cv2.fillConvexPoly(photo, hull, (170, 90, 40))
        cv2.polylines(photo, [hull], True, (120, 60, 20), 1, cv2.LINE_AA)
    dets = detect_pyramids(photo, cam)
    uprights = [d for d in dets if d.pose == "upright"]
    assert len(uprights) == 2
    assert all(d.flagged and any("touching another" in r for r in d.reasons) for d in uprights)
