"""Close-packed group members that the coloured-silhouette test misses: white and clear marbles on pale sand.

Why. A group's members are the lattice points (one diameter apart) whose disc the departure silhouette covers
and whose core's hue departs from the sand's (a cast shadow darkens the sand but keeps its hue). A white swirl or
clear marble on pale sand departs mostly in lightness, which that silhouette down-weights against shadows, so
such a marble at the group's edge is left out of the silhouette or refused as shade. But a cast shadow only
darkens: a ball-sized disc brighter than the sand is lit glass, never shade. And a marble touching the group
sits on the group's own lattice, so the free neighbours of its members are the only places to look.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

# A member's core must be brighter than the sand by this many robust deviations of the same disc average over
# the surface (sand speckle averages out over a disc; a ball's lit glass does not)
BRIGHTER_MADS = 10.0
# A grey lattice point with coloured members on at least this many of its six sides lies inside the group (a
# point beyond a straight edge of the packing touches 2 members, one in a notch 3)
INTERIOR_NEIGHBOURS = 4
# ... and counts as a marble, flagged (below the counts' 0.9): a marble knocked out of the middle leaves a hole
INTERIOR_PRESENCE = 0.75


def lightness_departure(img_bgr: np.ndarray, valid: np.ndarray, kernel_px: int) -> np.ndarray:
    """CIELAB lightness minus the surface's local median (a window of ``kernel_px``, as wide as the saliency's, so
    inside a group it is the sand around it); signed: shade is negative, lit glass positive."""
    L = cv2.cvtColor(img_bgr, cv2.COLOR_BGR2LAB)[..., 0]
    f = 4
    fill = np.uint8(np.median(L[valid])) if valid.any() else np.uint8(128)
    Lv = np.where(valid, L, fill).astype(np.uint8)
    small = cv2.resize(Lv, (max(1, L.shape[1] // f), max(1, L.shape[0] // f)), interpolation=cv2.INTER_AREA)
    k = int(np.clip(kernel_px / f, 3, 255)) | 1
    bg = cv2.resize(cv2.medianBlur(small, k), (L.shape[1], L.shape[0]), interpolation=cv2.INTER_LINEAR)
    d = L.astype(np.float32) - bg.astype(np.float32)
    d[~valid] = 0.0
    return d


def disc_mean(values: np.ndarray, radius_px: float) -> np.ndarray:
    """The mean of ``values`` over a disc of ``radius_px`` round each pixel (the matched filter of a ball)."""
    r = max(1, math.ceil(radius_px))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    k = ((xx * xx + yy * yy) <= radius_px * radius_px).astype(np.float32)
    return cv2.filter2D(values.astype(np.float32), -1, k / k.sum(), borderType=cv2.BORDER_REPLICATE)


def brighter_than_sand(dl_disc: np.ndarray, region: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    """Whether the disc-averaged lightness departure at each point stands ``BRIGHTER_MADS`` robust deviations
    above the surface's typical: lit glass, which no shadow can be."""
    vals = dl_disc[region]
    if vals.size < 100 or not len(pts_px):
        return np.zeros(len(pts_px), bool)
    med = float(np.median(vals))
    mad = float(np.median(np.abs(vals - med))) + 1e-3
    gi = np.clip(np.round(pts_px).astype(int), 0, [dl_disc.shape[1] - 1, dl_disc.shape[0] - 1]).reshape(-1, 2)
    return dl_disc[gi[:, 1], gi[:, 0]] > med + BRIGHTER_MADS * mad


def lattice_neighbours(members_px: np.ndarray, angle_rad: float, spacing_px: float) -> np.ndarray:
    """Lattice points one spacing from a member (the lattice turned by ``angle_rad``) that are no member.

    >>> lattice_neighbours(np.array([[0.0, 0.0]]), 0.0, 10.0).shape
    (6, 2)
    """
    members_px = np.asarray(members_px, float).reshape(-1, 2)
    if not len(members_px):
        return np.zeros((0, 2))
    a = angle_rad + np.arange(6) * math.pi / 3
    steps = np.column_stack([np.cos(a), np.sin(a)]) * spacing_px
    cand = (members_px[:, None, :] + steps[None]).reshape(-1, 2)
    out: list[np.ndarray] = []
    for p in cand:
        if np.min(np.hypot(*(members_px - p).T)) < 0.5 * spacing_px:
            continue
        if any(math.hypot(*(p - q)) < 0.5 * spacing_px for q in out):
            continue
        out.append(p)
    return np.array(out).reshape(-1, 2)


def interior_neighbours(pts_px: np.ndarray, members_px: np.ndarray, spacing_px: float) -> np.ndarray:
    """How many of ``members_px`` touch each point (centres one lattice spacing apart, within a quarter of it).

    >>> hexagon = np.array([[np.cos(a), np.sin(a)] for a in np.arange(6) * np.pi / 3]) * 10.0
    >>> interior_neighbours(np.array([[0.0, 0.0], [20.0, 0.0]]), hexagon, 10.0).tolist()
    [6, 1]
    """
    pts_px = np.asarray(pts_px, float).reshape(-1, 2)
    members_px = np.asarray(members_px, float).reshape(-1, 2)
    if not len(pts_px) or not len(members_px):
        return np.zeros(len(pts_px), int)
    d = np.linalg.norm(pts_px[:, None] - members_px[None], axis=2)
    return np.sum(np.abs(d - spacing_px) < 0.25 * spacing_px, axis=1)
