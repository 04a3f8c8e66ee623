"""Pieces the foreground lost to the shade: a clear piece dims the table like a cast shadow.

A clear wall passes on the wood behind it, dimmed about alike in every channel, so pixel by pixel it is the
table in shade (``shadow_mask``) and is cut from the foreground; on pale or faintly lit wood its contrast is
also under the foreground's threshold (on seed 8686's ice_fresh_002 the colour difference inside three clear
upright pieces has a median of 4.3-5.2 robust sigmas against a threshold of 6). What a shadow or the wood's
grain does not have is a pyramid's ridges: the walls' edges, where the light's path through the plastic
changes, show as thin lines from the apex to the base corners, at the places the camera projects them.

So the table dimmed or faintly changed (a lower threshold, shade kept) that no piece already claims is fitted
with one pyramid, and a fit is believed only where its own projected ridges inside the silhouette show as
lines in the photo (``RidgeMap``): measured on seed 8686 and the development renders, the clear pieces found
this way score 0.56-0.83; the shade, grain and knots that a pyramid's silhouette explains at all (IoU >= 0.45)
0.27-0.38, the others up to 0.58 at IoU <= 0.37. Such a piece is always flagged.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np
from shapely.geometry import Polygon

from geometry.pyramids import SIZES, lying_pose, upright_pose

# Foreground of the second look: robust z-score of the colour difference, shade kept (the first look: 6).
SHADE_FIND_SIGMA = 4.0
# A line this many times the photo's median ridge response counts fully, and no more.
RIDGE_SATURATION_RATIO = 4.0
# Scale (Gaussian sigma, px at the working width) of the lines: a wall's edge is 1-3 px wide there.
RIDGE_SIGMA_PX = 2.0
# The least mean ridge response over a fit's inner edges for a piece to be believed.
MIN_RIDGE_SUPPORT = 0.5
# A projected edge whose middle lies this close (px) to the silhouette's outline is on it, not inside.
OUTLINE_REACH_PX = 3.0
# The pyramid's eight edges as pairs of ``vertices_mm`` rows (base corners 0-3, apex 4).
EDGES = ((0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (1, 4), (2, 4), (3, 4))


class RidgeMap:
    """Thin lines of the working photo: grey level minus its Gaussian blur, in units of its median magnitude."""

    def __init__(self, frame_bgr: np.ndarray):
        gray = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32)
        r = np.abs(gray - cv2.GaussianBlur(gray, (0, 0), RIDGE_SIGMA_PX))
        noise = float(np.median(r[::3, ::3])) or 1.0
        self.response = np.minimum(r / (RIDGE_SATURATION_RATIO * noise), 1.0)
        self.shape = gray.shape

    def inner_edge_support(self, vertices_px: np.ndarray, hull_px: np.ndarray) -> tuple[float, int]:
        """Mean capped line response along the projected edges that run inside the silhouette (their middle
        fifths left out: the ends meet the outline and each other), and how many such edges there are."""
        h, w = self.shape
        hull = np.asarray(hull_px, np.float32).reshape(-1, 1, 2)
        values = []
        for i, j in EDGES:
            a, b = vertices_px[i], vertices_px[j]
            mid = (a + b) / 2.0
            if cv2.pointPolygonTest(hull, (float(mid[0]), float(mid[1])), True) < OUTLINE_REACH_PX:
                continue
            t = np.linspace(0.2, 0.8, max(4, int(np.hypot(*(b - a)) * 0.6)))
            pts = a[None] + (b - a)[None] * t[:, None]
            xi = np.clip(np.round(pts[:, 0]).astype(int), 0, w - 1)
            yi = np.clip(np.round(pts[:, 1]).astype(int), 0, h - 1)
            values.append(float(self.response[yi, xi].mean()))
        return (float(np.mean(values)) if values else 0.0), len(values)


def unclaimed_contours(low_mask: np.ndarray, claimed: np.ndarray, reach_px: int) -> list[np.ndarray]:
    """External contours of ``low_mask`` that touch no claimed pixel (dilated by ``reach_px``): a component
    beside a piece already read is its shadow or its own lost face, which the blob's shade reading weighs."""
    near = cv2.dilate(claimed, np.ones((2 * reach_px + 1, 2 * reach_px + 1), np.uint8))
    free = low_mask.copy()
    n, labels = cv2.connectedComponents(low_mask, connectivity=8)
    if n <= 1:
        return []
    touched = np.unique(labels[(near > 0) & (low_mask > 0)])
    free[np.isin(labels, touched[touched > 0])] = 0
    contours, _ = cv2.findContours(free, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return list(contours)


def contour_polygon(contour: np.ndarray) -> tuple[Polygon, np.ndarray]:
    """The contour simplified as the blob fit takes it: a valid polygon and its points."""
    simple = cv2.approxPolyDP(contour, 0.8, True)
    pts = (simple if len(simple) >= 4 else contour).reshape(-1, 2).astype(np.float64)
    blob = Polygon(pts)
    return (blob if blob.is_valid else blob.buffer(0)), pts


@lru_cache(maxsize=1)
def least_plan_mm2() -> float:
    """The least area (mm2) a piece's silhouette covers mapped back onto the table: the face or base it rests
    on, which its silhouette always contains (the smallest: a small piece's)."""
    areas = []
    for size in SIZES:
        for pose in (upright_pose(size, (0.0, 0.0), 0.0), lying_pose(size, (0.0, 0.0), 0.0)):
            v = pose.vertices_mm()
            on_table = v[np.abs(v[:, 2]) < 1e-6][:, :2].astype(np.float32)
            areas.append(float(cv2.contourArea(cv2.convexHull(on_table))))
    return min(areas)
