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

from geometry.marbles import GROUP_CENTROID_TOL_MM, MARBLE_DIAMETER_MM

# A member's core must be brighter than the sand by this many robust deviations of the same disc average over
# the surface (sand speckle averages out over a disc; a ball's lit glass does not)
BRIGHTER_MADS = 10.0
# A grey lattice point with coloured members on at least this many of its six sides lies inside the group (a
# point beyond a straight edge of the packing touches 2 members, one in a notch 3)
INTERIOR_NEIGHBOURS = 4
# ... and counts as a marble, flagged (below the counts' 0.9): a marble knocked out of the middle leaves a hole
INTERIOR_PRESENCE = 0.75
# The set-up rule (MB 9(e), 11(b)) puts marbles only where the opening group lies: within 52 mm of a centroid
# that is within 10 mm of the ring's centre (RULES.md 4.1); a cluster elsewhere formed after shots and may hold
# anything
SETUP_RADIUS_MM = 52.0 + GROUP_CENTROID_TOL_MM
# The set-up group's sizes (MB 9(e), 11(b), (d), (e); RULES.md 4.1): the N lattice points nearest the ring's centre
SETUP_COUNTS = (13, 25, 37, 49)
# A group is read as a set-up group only when its sure members fill that shape but for at most this many points
# (a doubtful member in a hole, or a marble no cue finds there): more, and it has been played into
SETUP_MAX_HOLES = 2
# A group's outline reads are calibrated by their own median (the group's edge balls are mostly marbles) only
# when at least this many of its members form part of the outline
MIN_ARC_READS = 6


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


def brightness_mads(dl_disc: np.ndarray, region: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    """How many robust deviations (MAD over the surface) the disc-averaged lightness departure at each point stands
    above the surface's typical (zeros where the surface is too small to say)."""
    vals = dl_disc[region]
    if vals.size < 100 or not len(pts_px):
        return np.zeros(len(pts_px))
    med = float(np.median(vals))
    mad = float(np.median(np.abs(vals - med))) + 1e-3
    gi = np.clip(np.round(pts_px).astype(int), 0, [dl_disc.shape[1] - 1, dl_disc.shape[0] - 1]).reshape(-1, 2)
    return (dl_disc[gi[:, 1], gi[:, 0]] - med) / mad


def brighter_than_sand(dl_disc: np.ndarray, region: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    """Whether the disc-averaged lightness departure at each point stands ``BRIGHTER_MADS`` robust deviations
    above the surface's typical: lit glass, which no shadow can be."""
    return brightness_mads(dl_disc, region, pts_px) > BRIGHTER_MADS


def lit_and_coloured(core_chroma: np.ndarray, bright_mads: np.ndarray, sure_core_chroma: float) -> np.ndarray:
    """Whether a free lattice point beside a group is a pale tinted marble by its colour and its light together.

    Why. Each cue alone is sure only far out: a core of ``sure_core_chroma`` (the shade beside a group takes up to
    ~9 of its neighbours' colour by blur) or a disc ``BRIGHTER_MADS`` above the sand (a ball without colour). But
    the two never come together on sand: the shade that takes a neighbour's colour is darker than the sand, and a
    bright scuff or caustic spot is the sand's own hue. So a point counts when its two cues, each as a share of its
    own sure level (brightness only above the sand's), add to one. Development set and seed 311 (663 free points
    beside 51 groups): the one marble there (bench_2026_029, a pale clear ball at 6.4 px per marble: core 9.7, 4.4
    MADs) adds to 1.41; the sand and shade points to 0.94 at most (core 6.2, 3.2 MADs)."""
    return (np.asarray(core_chroma, float) / sure_core_chroma
            + np.clip(np.asarray(bright_mads, float), 0.0, None) / BRIGHTER_MADS) >= 1.0


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


def outline_arc_radii(solid: np.ndarray, members_px: np.ndarray, reach_px: float, min_arc_rad: float = 0.5 * math.pi
                      ) -> np.ndarray:
    """The radius (px) of the group's outline where each member forms it (NaN where it forms less than
    ``min_arc_rad`` of it: an inner member).

    Why. A group's outline is made of its edge balls' own arcs, each bending with its ball's radius, so a tolley
    at the group's edge bends it wider than a marble, however the lattice placed points on it. The circle is fitted
    to the outline points nearest the member (within ``reach_px``), its centre free.
    """
    members_px = np.asarray(members_px, float).reshape(-1, 2)
    out = np.full(len(members_px), np.nan)
    if not len(members_px):
        return out
    cs, _ = cv2.findContours(solid.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not cs:
        return out
    pts = np.vstack([c.reshape(-1, 2) for c in cs]).astype(float)
    d = np.linalg.norm(pts[:, None] - members_px[None], axis=2)
    near = np.argmin(d, axis=1)
    for i in range(len(members_px)):
        p = pts[(near == i) & (d[:, i] <= reach_px)]
        if len(p) < 8:
            continue
        # Kasa fit: x^2 + y^2 + a x + b y + c = 0
        A = np.column_stack([p, np.ones(len(p))])
        sol, *_ = np.linalg.lstsq(A, -(p ** 2).sum(axis=1), rcond=None)
        ctr = -0.5 * sol[:2]
        r2 = float(ctr @ ctr - sol[2])
        if r2 <= 0:
            continue
        ang = np.sort(np.arctan2(p[:, 1] - ctr[1], p[:, 0] - ctr[0]))
        gaps = np.diff(np.concatenate([ang, ang[:1] + 2 * math.pi]))
        if 2 * math.pi - float(gaps.max()) < min_arc_rad:
            continue
        out[i] = math.sqrt(r2)
    return out


def arc_sizes_mm(reads_mm: np.ndarray, model_sigma_mm: float) -> tuple[np.ndarray, float] | None:
    """The edge members' outline diameters less the group's own bias, and their uncertainty; None when too few.

    Why. The group's silhouette is cut at a threshold of its own background (shadows and blur widen it alike on
    every edge ball), so the median read over its edge members, mostly marbles, is what it reads for 12.7 mm. The
    reads' own scatter about it over those members is their honest uncertainty (at a few pixels per marble it is
    far wider than a single ball's size model), with the median's error from so few of them.

    >>> d, s = arc_sizes_mm(np.array([12.0, 13.0, 14.0, 13.0, 12.5, 13.5, 20.0, np.nan]), 0.5)
    >>> round(float(d[6]), 2), round(s, 2)
    (19.7, 2.9)
    """
    reads_mm = np.asarray(reads_mm, float)
    ok = np.isfinite(reads_mm)
    if ok.sum() < MIN_ARC_READS:
        return None
    med = float(np.median(reads_mm[ok]))
    # the RMS scatter, not a robust one: a kind is called from a single read's tail, and these reads have
    # heavy tails (a neighbour's arc, the contact shadow on one side), which a MAD would hide
    spread = float(np.sqrt(np.mean((reads_mm[ok] - med) ** 2)))
    sigma = math.hypot(max(spread, model_sigma_mm), spread / math.sqrt(int(ok.sum())))
    return reads_mm - med + MARBLE_DIAMETER_MM, sigma


def setup_shape(members_px: np.ndarray, sure: np.ndarray, centre_px: np.ndarray, angle_rad: float, spacing_px: float,
                centre_tol_px: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Which members lie in the set-up group their sure members nearly fill, and that shape's points no member holds.

    Why. A group set up for the opening (RULES.md 4.1) is the N lattice points nearest the ring's centre (N one of
    ``SETUP_COUNTS``, its centre within the centroid tolerance of the ring's). Beyond a set-up group's edge lies its
    shade, never a member: the doubtful points there (cores faintly tinted by blur, bench_503_009: two 'members'
    a row beyond a 37's edge, 41-44 darker than the sand) are shade; and inside it a point the silhouette covers is
    a member, however dark (bench_2026_017: a near-black swirl in the 49's lamp-away edge, grey core 4.3). A group
    played into is no set-up shape, so nothing is read from it: its sure members must all lie in the shape and
    fill it but for ``SETUP_MAX_HOLES`` points.

    ``members_px`` (N, 2) on the fitted lattice (turned by ``angle_rad``), ``sure`` (N,) bool, ``centre_px`` the ring's
    centre; the shape's centre is searched within ``centre_tol_px`` of it (it settles which of a shell's equidistant
    points the N nearest take). Returns (in-shape mask over members, holes (K, 2)) or None when no set-up shape fits.

    >>> a = np.arange(6) * np.pi / 3
    >>> shell1 = np.column_stack([np.cos(a), np.sin(a)]) * 10.0
    >>> shell2 = np.column_stack([np.cos(a + np.pi / 6), np.sin(a + np.pi / 6)]) * 10.0 * np.sqrt(3)
    >>> members = np.vstack([shell1, shell2, [[20.0, 0.0]]])  # a 13 less its centre, and a doubtful point beyond
    >>> inside, holes = setup_shape(members, np.arange(13) < 12, np.zeros(2), 0.0, 10.0, 1.0)
    >>> int(inside.sum()), bool(inside[12]), holes.round(1).tolist()
    (12, False, [[0.0, 0.0]])
    """
    members_px = np.asarray(members_px, float).reshape(-1, 2)
    sure = np.asarray(sure, bool)
    if int(sure.sum()) < SETUP_COUNTS[0] - SETUP_MAX_HOLES:
        return None
    ref = members_px[sure][np.argmin(np.hypot(*(members_px[sure] - centre_px).T))]
    a1 = np.array([math.cos(angle_rad), math.sin(angle_rad)]) * spacing_px
    a2 = np.array([math.cos(angle_rad + math.pi / 3), math.sin(angle_rad + math.pi / 3)]) * spacing_px
    k = np.arange(-9, 10)
    ii, jj = np.meshgrid(k, k)
    lattice = ref + ii.reshape(-1, 1) * a1 + jj.reshape(-1, 1) * a2
    # each member's lattice point (members sit on the fitted lattice, within a quarter spacing)
    d = np.linalg.norm(members_px[:, None] - lattice[None], axis=2)
    slot = np.argmin(d, axis=1)
    on = d[np.arange(len(members_px)), slot] < 0.25 * spacing_px
    step = max(0.5, 0.1 * spacing_px)
    offs = np.arange(-centre_tol_px, centre_tol_px + 1e-9, step)
    best = None
    for dx in offs:
        for dy in offs:
            if dx * dx + dy * dy > centre_tol_px * centre_tol_px:
                continue
            order = np.argsort(np.hypot(*(lattice - (centre_px + (dx, dy))).T), kind="stable")
            for n in SETUP_COUNTS:
                shape = np.zeros(len(lattice), bool)
                shape[order[:n]] = True
                inside = on & shape[slot]
                if not inside[sure].all():
                    continue
                held = np.zeros(len(lattice), bool)
                held[slot[inside]] = True
                holes = int((shape & ~held).sum())
                if holes > SETUP_MAX_HOLES:
                    continue
                cost = holes + int((~inside).sum())
                if best is None or cost < best[0]:
                    best = (cost, inside, lattice[shape & ~held])
    return None if best is None else (best[1], best[2])
