"""A close-packed group's members: the set-up rule never makes a kind certain against the member's own size read."""

from __future__ import annotations

import math

import cv2
import numpy as np

from geometry.marbles import MARBLE_DIAMETER_MM, MARBLE_TOLLEY_SPLIT_MM
from vision.marbles import DEFAULT_PARAMS, KIND_SURE, _member_kind_confidences, _split_confidence
from vision.marbles_group import SETUP_RADIUS_MM, arc_sizes_mm, outline_arc_radii

MM_PER_PX = 0.5
TOLLEY_MM = 18.0


class _Grid:
    """An orthophoto whose pixel (0, 0) is the ring's centre, MM_PER_PX to a pixel (rows towards -y)."""

    def table_from_ortho(self, pts):
        pts = np.asarray(pts, float).reshape(-1, 2)
        return np.column_stack([pts[:, 0] * MM_PER_PX, -pts[:, 1] * MM_PER_PX])


def _group_with_tolley():
    """19 touching marbles (two hexagonal rings) and a tolley touching the group's edge, as one silhouette."""
    s = MARBLE_DIAMETER_MM / MM_PER_PX
    centre = np.array([120.0, 120.0])
    pts = [centre + s * (i * np.array([1.0, 0.0]) + j * np.array([0.5, math.sqrt(3) / 2]))
           for i in range(-2, 3) for j in range(-2, 3) if abs(i + j) <= 2]
    tolley = centre + np.array([2 * s + (MARBLE_DIAMETER_MM + TOLLEY_MM) / 2 / MM_PER_PX, 0.0])
    mask = np.zeros((240, 300), np.uint8)
    for p in pts:
        cv2.circle(mask, tuple(int(round(v)) for v in p), int(round(s / 2)), 1, -1)
    cv2.circle(mask, tuple(int(round(v)) for v in tolley), int(round(TOLLEY_MM / 2 / MM_PER_PX)), 1, -1)
    # the lattice fit puts a member near the tolley, not on its centre
    return mask.astype(bool), np.array(pts), tolley + np.array([-3.0, 2.0])


def test_outline_reads_the_edge_tolley_wider_than_the_edge_marbles():
    mask, marbles, on_tolley = _group_with_tolley()
    members = np.vstack([marbles, on_tolley])
    reads = 2 * MM_PER_PX * outline_arc_radii(mask, members, MARBLE_DIAMETER_MM / MM_PER_PX)
    edge = reads[:-1][np.isfinite(reads[:-1])]
    assert len(edge) >= 6  # the outer ring's members form the outline; the inner ones do not
    assert np.isnan(reads[np.argmin(np.hypot(*(marbles - marbles.mean(axis=0)).T))])
    assert abs(np.median(edge) - MARBLE_DIAMETER_MM) < 1.5
    assert abs(reads[-1] - TOLLEY_MM) < 1.5
    sized, sigma = arc_sizes_mm(reads, 0.6)
    called_tolley = [d > MARBLE_TOLLEY_SPLIT_MM and _split_confidence(d, sigma) >= KIND_SURE
                     for d in sized if np.isfinite(d)]
    assert called_tolley[-1] and not any(called_tolley[:-1])


def test_a_member_reading_tolley_or_off_the_setup_place_is_flagged_not_called_marble():
    mask, marbles, on_tolley = _group_with_tolley()
    # the same group at the ring's centre (ortho origin there)
    shift = -marbles.mean(axis=0)
    members = np.vstack([marbles, on_tolley]) + shift
    reads = 2 * MM_PER_PX * outline_arc_radii(mask, members - shift, MARBLE_DIAMETER_MM / MM_PER_PX)
    conf = _member_kind_confidences(_Grid(), members, reads, 12.0, DEFAULT_PARAMS)
    assert conf[-1] < KIND_SURE
    assert all(c >= KIND_SURE for c in conf[:-1])
    # where no opening group lies (MB 9(e): centred on the ring) the set-up rule says nothing of any member
    far = members + np.array([2 * SETUP_RADIUS_MM / MM_PER_PX, 0.0])
    assert all(c < KIND_SURE for c in _member_kind_confidences(_Grid(), far, reads, 12.0, DEFAULT_PARAMS))
