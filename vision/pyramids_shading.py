"""Opaque or clear, from how the faces of one piece are lit.

An opaque (white) face is diffuse: its brightness is its albedo times the light falling on it, which follows
the cosine between the face's normal and the lamp. A pyramid's faces slope at about 74 deg, so they turn to
the lamp by very different angles and an upright white piece shows bright and dark faces side by side. A clear
wall instead passes on the table behind it, dimmed by about the same transmittance on every face, plus a thin
reflection: its faces differ little relative to the table they show. The spread of the faces' median
log photo/table ratio therefore tells the two apart where the table's grain (``pyramids_grain``) half shows.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.pyramids import PyramidPose
from vision.pyramids_segment import log_ratio

# Pixels of the working image kept clear of each face's projected edges (the edges carry their own contrast).
FACE_EDGE_CLEARANCE_PX = 2
MIN_FACE_PIXELS = 15  # a face showing fewer is too foreshortened to give a median brightness
# faces at 74 deg: a camera more than 16 deg off vertical sees only the near two or three of an upright piece;
# a lying piece's sides overhang, so from overhead only its top face shows
MIN_FACES = 2
# Spread (natural log) of the faces' median photo/table ratio at or above which the piece is opaque: a factor
# e between its brightest and darkest face. Measured on the detected clear and white verdicts alone in their
# blobs (43 development photos, seeds 5959 and 6262): upright, 38 clear 0.05-0.74 (the highest a face catching
# the window's reflection over a dark table), 14 of 35 white 1.0-1.52; lying, clear 0.06-0.62, white
# 1.06-1.74. Single pieces rendered under lamps at 40-70 deg: clear 0.09-0.76, white 0.04-1.8. White under a
# lamp near the zenith, or facing it squarely, shades its faces alike, so a low spread decides nothing.
OPAQUE_MIN_FACE_SPREAD = 1.0


def face_shading_spread(
    frame_bgr: np.ndarray, table_bgr: np.ndarray, camera: CameraModel, pose: PyramidPose
) -> float | None:
    """Spread of the median log photo/table ratio over the faces turned to the camera; None if too few show.

    ``table_bgr`` is the table reference behind the piece (``table_reference_bgr``), same size as the frame.
    """
    verts = pose.vertices_mm()
    apex, corners = verts[4], verts[:4]
    centroid = verts.mean(axis=0)
    q = camera.project_mm(verts)
    h, w = frame_bgr.shape[:2]
    pad = FACE_EDGE_CLEARANCE_PX + 2
    x0, y0 = np.floor(q.min(axis=0)).astype(int) - pad
    x1, y1 = np.ceil(q.max(axis=0)).astype(int) + pad
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    lum = log_ratio(frame_bgr[y0:y1, x0:x1], table_bgr[y0:y1, x0:x1]).mean(axis=2)
    off = np.array([x0, y0], float)
    eye = camera.center_mm
    medians = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        normal = np.cross(b - a, apex - a)
        if normal @ (a - centroid) < 0:
            normal = -normal
        if normal @ (eye - a) <= 0:
            continue  # turned away from the camera: what shows there is another face
        tri = np.round(np.array([q[i], q[(i + 1) % 4], q[4]]) - off).astype(np.int32)
        face = np.zeros(lum.shape, np.uint8)
        cv2.fillConvexPoly(face, tri, 1)
        face = cv2.erode(face, np.ones((2 * FACE_EDGE_CLEARANCE_PX + 1,) * 2, np.uint8))
        sel = face > 0
        if sel.sum() >= MIN_FACE_PIXELS:
            medians.append(float(np.median(lum[sel])))
    if len(medians) < MIN_FACES:
        return None
    return max(medians) - min(medians)


def is_shaded_opaque(spread: float | None) -> bool:
    """Faces lit as unlike as only diffuse opaque plastic is lit."""
    return spread is not None and spread >= OPAQUE_MIN_FACE_SPREAD
