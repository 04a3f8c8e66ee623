"""The shadow a close-packed group casts, told from its members: the lamp-away side of the group.

Why. One lamp lights the ring, so the group casts one crescent of shadow beyond its lamp-away edge. The shadow is
the sand lit by the sky alone: darker, with the sand's own hue, and at 6-8 px per marble the blur spills the
neighbouring marbles' colour into it, so a lattice point there may show a faintly coloured core (a doubtful member,
``presence_confidence`` < 1). A ball's core differs from the sand by its glass or body colour, and a lit pale ball
is brighter than the sand; a shadow only darkens. So a doubtful member that is no brighter than the sand and lies
beyond the group's centre towards its shadow is the shadow; one on the lit side stays doubtful (flagged).

The shadow's side is read from the sand round the group itself: the darkness (lightness below the sand's) in a
band one marble wide outside the members' discs, weighted towards the group's centre, leans to the lamp-away side.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

# The band round the group where its cast shadow is looked for, in marble diameters beyond the members' discs (a
# lamp 35-70 deg above the ground casts a marble's shadow 0.4-1.4 diameters long)
SHADOW_BAND_MARBLES = 1.0
# The darkness must lean this far from the group's centre (its weighted mean offset, as a share of the band's
# mean radius) for a side to be named: an overcast sky or a lamp overhead casts no one-sided shadow
MIN_LEAN_RATIO = 0.25
# A doubtful member is on the shadow's side when its offset from the group's centre along the shadow's direction
# exceeds this share of a lattice spacing (the members across the middle row are neither side)
SIDE_SPACINGS = 0.25


def shadow_direction(dl: np.ndarray, region: np.ndarray, members_px: np.ndarray, marble_px: float
                     ) -> np.ndarray | None:
    """Unit vector (ortho px) from the group's centre towards its cast shadow, or None when none leans one way.

    ``dl`` is the lightness departure from the local sand (negative in shade), ``members_px`` (N, 2) the group's
    sure members.

    >>> dl = np.zeros((80, 80), np.float32); dl[31:50, 51:57] = -20.0  # shade beyond the right-hand edge
    >>> members = np.array([[30.0, 40.0], [40.0, 40.0], [50.0, 40.0]])
    >>> shadow_direction(dl, np.ones_like(dl, bool), members, 10.0).round(1).tolist()
    [1.0, 0.0]
    """
    members_px = np.asarray(members_px, float).reshape(-1, 2)
    if len(members_px) < 3:
        return None
    h, w = dl.shape
    discs = np.zeros((h, w), np.uint8)
    for x, y in members_px:
        cv2.circle(discs, (int(round(x)), int(round(y))), int(round(0.5 * marble_px)), 1, -1)
    k = 2 * int(round(SHADOW_BAND_MARBLES * marble_px)) + 1
    band = cv2.dilate(discs, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))).astype(bool) & ~discs.astype(bool)
    band &= region
    rr, cc = np.nonzero(band)
    if len(rr) < 10:
        return None
    dark = np.clip(-dl[rr, cc], 0.0, None).astype(float)
    if dark.sum() <= 0.0:
        return None
    centre = members_px.mean(0)
    off = np.column_stack([cc, rr]) - centre
    lean = (off * dark[:, None]).sum(0) / dark.sum()
    mean_r = float(np.mean(np.hypot(*off.T)))
    n = float(np.hypot(*lean))
    if mean_r <= 0.0 or n < MIN_LEAN_RATIO * mean_r:
        return None
    return lean / n


def on_shadow_side(pts_px: np.ndarray, members_px: np.ndarray, direction: np.ndarray | None, spacing_px: float
                   ) -> np.ndarray:
    """Whether each point lies beyond the group's centre towards its shadow (none does without a direction).

    >>> on_shadow_side(np.array([[12.0, 0.0], [-12.0, 0.0]]), np.zeros((3, 2)), np.array([1.0, 0.0]), 10.0).tolist()
    [True, False]
    """
    pts_px = np.asarray(pts_px, float).reshape(-1, 2)
    if direction is None or not len(pts_px):
        return np.zeros(len(pts_px), bool)
    centre = np.asarray(members_px, float).reshape(-1, 2).mean(0)
    return (pts_px - centre) @ np.asarray(direction, float) > SIDE_SPACINGS * spacing_px
