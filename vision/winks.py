"""Wink detection: candidates in the rectified table plane, vertical order from occlusion, sub-pixel fit.

1. Candidates: for each colour class of the orthophoto, boundary pixels vote for the centre one known radius
   (8 or 11 mm) inside along their gradient; peaks that are verified by the label image (own colour just
   inside the circle, not own colour just outside, no mat inside the disc) become winks. A wink partly
   hidden by another still shows an arc of its own outline, which is enough to vote.
2. Order: where two discs overlap, the upper wink is the one seen in the lens (colour majority); for
   same-colour pairs, the upper wink's rim is a visible edge across the lower one while the lower rim is
   hidden, so the rim with the stronger edge inside the other disc is the upper one. Weak evidence gives an
   order confidence near 0.5 (TW I-13: undecided). Once the centres are fitted, ``vision/stacking.py`` judges
   same-colour and undecided pairs again with the pose each order implies, and lets piles decide the rest.
3. Pose: a wink lying on another is tilted: its low rim on the mat, its underside on the lower wink's top
   edge; that fixes its height and tilt (physics, not a fit).
4. Fit: in the full-resolution image, the projected silhouette of the known-radius disc at its height is
   fitted to sub-pixel edge crossings (2 unknowns: plan centre), only on outline samples where the wink is
   seen against the mat or against a wink it lies on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import (
    LARGE_WINK_RADIUS_MM,
    MAT_HALF_LENGTH_MM,
    MAT_HALF_WIDTH_MM,
    POT_BASE_RADIUS_MM,
    SMALL_WINK_RADIUS_MM,
    WINK_THICKNESS_MM,
)
from geometry.tiddlywinks import face_points_mm, resting_mid_height_mm, resting_tilt_over_rad
from vision.colour import CLASS_BG, CLASS_NEUTRAL, COLOR_NAMES, ColourScene
from vision.components import components_with_stats
from vision.ortho import OrthoGrid
from vision.ring_filter import correlate_sums
from vision.silhouette import (Outline, RoundSolid, edge_crossings, outlines, rim_points_mm, sample_profiles,
                               solve_shifts)
from vision.tilted_outline import inside_footprint, mid_height_mm

RADII_MM = {"large": LARGE_WINK_RADIUS_MM, "small": SMALL_WINK_RADIUS_MM}
SIZE_RING_MM = (LARGE_WINK_RADIUS_MM + SMALL_WINK_RADIUS_MM) / 2
CLASS_HIDDEN = 254  # label of ortho pixels where the pot hides the mat
#: Ortho pixels next to the mat's unsearched edge band whose labels are unreliable: one for the rounding of the
#: band's raster and of the probes, one for the blend of a wink's outline into the band's unread pixels.
EDGE_BLEND_PX = 2
#: Image pixels over which the camera's blur spreads the mat's edge (table colour into felt).
EDGE_BLUR_IMAGE_PX = 1.5
#: Disc share of the felt's own hue that makes a refused candidate worth reading by its rim.
NEAR_MISS_MIN_OWN = 0.5
#: Least share of a wink's outline that a centre on the mat leaves on the searched felt (a half, less the band).
MIN_OUTLINE_SHARE = 0.45


@dataclass(frozen=True, slots=True)
class WinkDetectorParams:
    """Detector parameters; lengths in mm unless named otherwise."""

    min_arc_fraction: float = 0.22  # centre votes, as a fraction of the full circumference
    min_edge_support: float = 0.22  # outline fraction with own colour inside and not outside
    max_bad_fraction: float = 0.30  # outline fraction where the mat shows just inside the circle
    max_interior_background: float = 0.12  # disc fraction that is mat: a wink is opaque
    min_own_fraction: float = 0.15  # disc fraction of its own colour
    probe_mm: float = 2.0  # inside/outside probe distance from the rim for label checks
    nms_mm: float = 4.5  # two candidates of one colour closer than this are one wink
    min_crescent_mm: float = 1.2  # a same-colour wink must reach this far beyond an overlapping one's rim ...
    min_crescent_px: float = 2.0  # ... and this many image pixels (what blur leaves resolvable)
    round_blob_tolerance_mm: float = 1.5  # a same-colour group of 3+ whose blob is this round is one blurred wink
    min_lens_mm2: float = 6.0  # overlap below this is treated as touching (no order needed)
    lap_felt_max: float = 0.5  # two colours lap where no sample between them is more felt than this
    n_outline: int = 96
    profile_half_px: float = 6.0
    profile_step_px: float = 0.5
    refine_iterations: int = 3  # stops earlier once a step is below 0.03 mm or the fit's standard error
    model_sigma_px: float = 0.3  # unmodelled edge effects (bevel, blur asymmetry), in image pixels
    residual_noise_px: float = 0.3  # edge-fit residual (rms, px) expected from pixel noise alone
    residual_sigma_gain: float = 1.5  # centre uncertainty per pixel of residual above that (x mm per px there)
    tilted_sigma_mm: float = 0.25  # extra uncertainty of a wink whose height comes from the squop model
    paint_clearance_mm: float = 5.0  # baseline paint half-width (about 2.5-3) plus blur
    min_fit_fraction: float = 0.15  # outline fraction with valid edges needed for a sub-pixel fit
    size_fit_fraction: float = 0.6  # outline fraction that measures a wink's own radius (size check)
    large_ring_min: float = 0.5  # own-colour share of the 9.5 mm ring a large wink must show
    small_ring_max: float = 0.85  # a small wink is not surrounded by its own colour at 9.5 mm
    large_ring_prefer: float = 0.6  # where both radii fit, a large wink needs this much own colour at 9.5 mm
    min_unexplained_fraction: float = 0.10  # own-colour disc share outside same-colour winks already found
    felt_edge_zone_mm: float = 10.0  # near the mat edge a felt-coloured wink must show a clean disc
    felt_edge_min_support: float = 0.5
    felt_edge_min_own: float = 0.55
    detect_off_mat: bool = False  # look for winks whose centre is beyond the mat edge (on the table)
    off_mat_min_own: float = 0.6  # beyond the mat (textured table top) a wink must show a whole clean disc
    off_mat_min_support: float = 0.5


@dataclass(slots=True, eq=False)
class WinkCandidate:
    color: str
    size: str
    center_mm: np.ndarray
    votes: float
    edge_support: float = 0.0
    bad_fraction: float = 0.0
    interior_background: float = 0.0
    own_fraction: float = 0.0
    size_evidence: float = 0.5
    score: float = 0.0
    wink_id: str = ""
    above: list[str] = field(default_factory=list)
    order_confidence: dict[str, float] = field(default_factory=dict)
    z_mm: float = WINK_THICKNESS_MM / 2
    tilt_deg: float = 0.0
    tilt_azimuth_deg: float = 0.0
    sigma_mm: float = 1.0
    fit_fraction: float = 0.0
    center_px: np.ndarray | None = None
    potted: bool = False
    opening_fraction: float = 0.0
    occluded_by_pot: bool = False
    confidence: float = 1.0
    color_margin: float = 1.0
    edge_offset_px: float | None = None
    fit_rms_px: float = 0.0
    ring_strength: dict[str, float] | None = None  # outline edge strength per size (``check_sizes``)
    size_confidence: float = 1.0  # how sure the size is (a close call between the two radii lowers it)
    size_by_set: bool = False  # size_confidence is the posterior given its colour's set (``vision.size_sets``)
    neutral_inside: bool = False  # its own pixels are labelled neutral foreground (found by shape, felt_discs)
    arc_sigma_mm: float | None = None  # size measured from the curvature of the arc it shows (``arc_size``):
    #   the centre's uncertainty from that arc; None: not measured so
    outline_tilt: tuple[float, float] | None = None  # (tilt, azimuth) deg of its whole outline (tilted_outline)

    @property
    def radius_mm(self) -> float:
        return RADII_MM[self.size]


# --- 1. candidates ------------------------------------------------------------------------------------------

def _edge_directions(mask: np.ndarray) -> tuple[np.ndarray, ...]:
    """The mask's outline pixels (rows, cols), gradient magnitude and unit gradient: the same for every radius."""
    mb = cv2.GaussianBlur(mask, (0, 0), 1.0)
    gx = cv2.Sobel(mb, cv2.CV_32F, 1, 0, ksize=3) * 0.125
    gy = cv2.Sobel(mb, cv2.CV_32F, 0, 1, ksize=3) * 0.125
    mag = cv2.magnitude(gx, gy)
    rr, cc = np.nonzero(mag > 0.06)
    m = mag[rr, cc]
    return rr, cc, m, gx[rr, cc] / m, gy[rr, cc] / m


def _votes(mask: np.ndarray, r_px: float, edges: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
    rr, cc, m, ux, uy = _edge_directions(mask) if edges is None else edges
    h, w = mask.shape
    acc = np.zeros(h * w, np.float32)
    if len(rr) == 0:
        return acc.reshape(h, w)
    x = np.rint(cc + r_px * ux).astype(np.int64)
    y = np.rint(rr + r_px * uy).astype(np.int64)
    ok = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    acc += np.bincount(y[ok] * w + x[ok], weights=m[ok], minlength=h * w).astype(np.float32)
    return acc.reshape(h, w)


def _sample_labels(labels: np.ndarray, cr: np.ndarray) -> np.ndarray:
    h, w = labels.shape
    c = np.rint(cr[:, 0]).astype(int)
    r = np.rint(cr[:, 1]).astype(int)
    ok = (c >= 0) & (c < w) & (r >= 0) & (r < h)
    out = np.full(len(cr), 255, np.uint8)  # 255: outside the picture
    out[ok] = labels[r[ok], c[ok]]
    return out


_UNIT72 = np.stack([np.cos(np.linspace(0, 2 * np.pi, 72, endpoint=False)),
                    np.sin(np.linspace(0, 2 * np.pi, 72, endpoint=False))], axis=1)


@lru_cache(maxsize=16)
def _interior_offsets(r_mm: float, step_mm: float = 1.2) -> np.ndarray:
    g = np.arange(-r_mm, r_mm + 1e-9, step_mm)
    xx, yy = np.meshgrid(g, g)
    keep = xx * xx + yy * yy <= (r_mm - 1.2) ** 2
    return np.column_stack([xx[keep], yy[keep]])


def _dist(a: np.ndarray, b: np.ndarray) -> float:
    """Plan distance between two points: ``np.linalg.norm(a - b)`` without its per-call overhead (the pairwise
    tests between winks run thousands of times a frame)."""
    ax, ay = a[0] - b[0], a[1] - b[1]
    return math.sqrt(ax * ax + ay * ay)


def _length(v: np.ndarray) -> float:
    """Length of a plan vector: ``np.linalg.norm(v)`` to the bit (the same two products and sum, whose square
    root is correctly rounded either way) without its per-call overhead."""
    return math.sqrt(v[0] * v[0] + v[1] * v[1])


def distances_mm(points_mm: np.ndarray, center_mm: np.ndarray) -> np.ndarray:
    """Plan distance of each point ``(N, 2)`` from one point: ``np.linalg.norm(points - center, axis=1)`` to the
    bit, by columns (a reduction over two columns costs several times the arithmetic on thousands of rows)."""
    dx = points_mm[:, 0] - center_mm[0]
    dy = points_mm[:, 1] - center_mm[1]
    return np.sqrt(dx * dx + dy * dy)


def _on_mat(points_mm: np.ndarray, margin_mm: float = 1.0) -> np.ndarray:
    """Plan points on the mat (the only searched surface), ``margin_mm`` inside its edge."""
    return ((np.abs(points_mm[:, 0]) <= MAT_HALF_LENGTH_MM - margin_mm)
            & (np.abs(points_mm[:, 1]) <= MAT_HALF_WIDTH_MM - margin_mm))


def verify(c: WinkCandidate, labels: np.ndarray, grid: OrthoGrid, params: WinkDetectorParams) -> None:
    """Fill the label evidence of one candidate (see ``verify_many``)."""
    verify_many([c], labels, grid, params)


def verify_many(cands: list[WinkCandidate], labels: np.ndarray, grid: OrthoGrid,
                params: WinkDetectorParams, inside_probe_mm: float | None = None) -> None:
    """Fill the label evidence of candidates (edge support, mat inside, own colour fraction).

    Probes beyond the mat edge (an overhanging wink) are not evidence either way: that surface is not searched.
    All candidates of one size are probed in one sampling: a frame has dozens, and per-candidate calls cost
    more in overhead than in sampling. ``inside_probe_mm`` (default ``params.probe_mm``): how far inside the rim
    the own colour is looked for.
    """
    n72 = len(_UNIT72)
    probe_in = params.probe_mm if inside_probe_mm is None else inside_probe_mm
    for size in RADII_MM:
        group = [c for c in cands if c.size == size]
        if not group:
            continue
        r = RADII_MM[size]
        offs = np.concatenate([(r - probe_in) * _UNIT72, (r + params.probe_mm) * _UNIT72,
                               SIZE_RING_MM * _UNIT72, _interior_offsets(r)])
        centres = np.array([c.center_mm for c in group], float)
        allp = (centres[:, None, :] + offs[None, :, :]).reshape(-1, 2)
        lab = _sample_labels(labels, grid.ortho_from_table(allp)).reshape(len(group), -1)
        on = _on_mat(allp).reshape(len(group), -1)
        k = np.array([COLOR_NAMES.index(c.color) + 1 for c in group], np.uint8)[:, None]
        cin, cout, ring, inner = lab[:, :n72], lab[:, n72:2 * n72], lab[:, 2 * n72:3 * n72], lab[:, 3 * n72:]
        on_in, on_out, on_ring, on_pts = on[:, :n72], on[:, n72:2 * n72], on[:, 2 * n72:3 * n72], on[:, 3 * n72:]
        seen = on_out & (cout != CLASS_HIDDEN) & (cin != CLASS_HIDDEN)
        good = (cin == k) & (cout != k) & seen
        bad = (cin == CLASS_BG) & on_in
        den = np.maximum(seen.sum(axis=1), 36)
        inside = on_pts & (inner != CLASS_HIDDEN)
        n_in = inside.sum(axis=1)
        # no interior sample seen: one background-class sample stands in (as the per-candidate test had it)
        interior_bg = np.where(n_in > 0, (inside & (inner == CLASS_BG)).sum(axis=1) / np.maximum(n_in, 1),
                               1.0)
        own = np.where(n_in > 0, (inside & (inner == k)).sum(axis=1) / np.maximum(n_in, 1), 0.0)
        # size evidence: between the two radii (9.5 mm) a large wink shows its own colour, a small one does not
        other = (ring >= 1) & (ring <= len(COLOR_NAMES)) & (ring != k)
        vis = ~other & on_ring & (ring != CLASS_HIDDEN)
        n_vis = vis.sum(axis=1)
        size_ev = np.where(n_vis >= 8, (vis & (ring == k)).sum(axis=1) / np.maximum(n_vis, 1), 0.5)
        edge = good.sum(axis=1) / den
        badf = bad.sum(axis=1) / den
        for i, c in enumerate(group):
            c.edge_support = float(edge[i])
            c.bad_fraction = float(badf[i])
            c.interior_background = float(interior_bg[i])
            c.own_fraction = float(own[i])
            c.size_evidence = float(size_ev[i])
            c.score = c.edge_support + 0.25 * c.own_fraction - c.bad_fraction - c.interior_background


def _opening_fraction(c: WinkCandidate, labels: np.ndarray, grid: OrthoGrid,
                      opening_mask: np.ndarray | None) -> float:
    """Share of the candidate's own-colour pixels that are seen through the pot's top opening."""
    if opening_mask is None or not _near_mask(opening_mask, grid, c.center_mm, c.radius_mm + 2.0):
        return 0.0
    k = COLOR_NAMES.index(c.color) + 1
    cr = np.rint(grid.ortho_from_table(c.center_mm + _interior_offsets(c.radius_mm + 1.0, 1.0))).astype(int)
    h, w = labels.shape
    ok = (cr[:, 0] >= 0) & (cr[:, 0] < w) & (cr[:, 1] >= 0) & (cr[:, 1] < h)
    cr = cr[ok]
    own = labels[cr[:, 1], cr[:, 0]] == k
    if not own.any():
        return 0.0
    return float(opening_mask[cr[own, 1], cr[own, 0]].mean())


def _grow(mask: np.ndarray, px: int) -> np.ndarray:
    return cv2.dilate(mask.view(np.uint8), np.ones((2 * px + 1,) * 2, np.uint8)).view(bool)


#: The edge band's derived masks, per band array and blend width (the colour scene's static masks are cached per
#: grid, so a live feed or a bench meets the same band every frame): (id(band), blend px) -> (band, the unread
#: pixels' flat indices, votable). Unread: the band widened inward by the ortho pixels whose labels it rounds or
#: blends into.
_EDGE_MASKS: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _edge_masks(cs: ColourScene, blend_px: int = EDGE_BLEND_PX) -> tuple[np.ndarray, np.ndarray]:
    band = cs.edge_band
    hit = _EDGE_MASKS.get((id(band), blend_px))
    if hit is None or hit[0] is not band:
        unread = _grow(band, blend_px)
        hit = (band, np.flatnonzero(unread), ~_grow(unread, EDGE_BLEND_PX))
        if len(_EDGE_MASKS) >= 4:
            _EDGE_MASKS.clear()
        _EDGE_MASKS[(id(band), blend_px)] = hit
    return hit[1], hit[2]


def edge_blend_px(grid: OrthoGrid, mm_per_px_at=None) -> int:
    """Ortho pixels inward of the band that the table's colour blends into: the camera's blur spreads the mat's
    edge over about ``EDGE_BLUR_IMAGE_PX`` image pixels, several mm on a photo that takes in the whole table
    (2.7 mm per pixel at a 1080p mat's far end: the red table bled a wink-coloured strip along it)."""
    if mm_per_px_at is None:
        return EDGE_BLEND_PX
    corners = ((MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM), (MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM),
               (-MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM), (-MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM))
    coarsest_mm = max(mm_per_px_at(c) for c in corners)
    return max(EDGE_BLEND_PX, int(math.ceil(EDGE_BLUR_IMAGE_PX * coarsest_mm / grid.mm_per_px)))


def votable(cs: ColourScene, blend_px: int = EDGE_BLEND_PX) -> np.ndarray:
    """Where a foreground blob's outline is its own: away from the unread band by the outline's blur, as
    ``_edge_directions`` spreads it (a blob cut by the band has the band's straight edge there, not a wink's)."""
    return _edge_masks(cs, blend_px)[1]


def outline_share(votable_sub: np.ndarray, r_px: float) -> np.ndarray:
    """Per centre pixel, the share of a circle of radius ``r_px`` about it whose outline can vote."""
    n = int(math.ceil(r_px)) + 1
    ring = np.zeros((2 * n + 1, 2 * n + 1), np.float32)
    cv2.circle(ring, (n, n), int(round(r_px)), 1.0, 1)
    ring /= ring.sum()
    return cv2.filter2D(votable_sub.astype(np.float32), -1, ring, borderType=cv2.BORDER_CONSTANT)


#: Reflected border around each mask on the shared canvas of ``_votes_of_masks``: the Gaussian's reach (4 px at
#: sigma 1) and the Sobel's (1 px), as OpenCV pads a mask filtered alone.
_CANVAS_BORDER_PX = 6


def _votes_of_masks(masks: list[np.ndarray], votable: list[np.ndarray | None],
                    radii_px: np.ndarray) -> list[np.ndarray | None]:
    """Per mask, the centre votes ``_votes`` gives for each radius, ``(len(radii_px), h, w)``, from its outline
    (``_edge_directions`` less the pixels where ``votable`` is False, where it is given), or None where it has no
    outline: all masks at once.

    The masks are stacked on one canvas, each in a border reflected as OpenCV pads an image filtered alone, so
    one blur and one pair of derivatives serve all; each outline pixel votes in its own mask's window (votes
    beyond it are dropped, as there), every mask's votes summed in one ``bincount`` in the same order.
    """
    if not masks:
        return []
    b = _CANVAS_BORDER_PX
    hs = np.array([m.shape[0] for m in masks])
    ws = np.array([m.shape[1] for m in masks])
    tops = np.concatenate([[0], np.cumsum(hs + 2 * b)[:-1]]) + b
    canvas = np.zeros((int((hs + 2 * b).sum()), int(ws.max()) + 2 * b), np.float32)
    owner = np.full(canvas.shape, -1, np.int32)
    ok_px = np.ones(canvas.shape, bool)
    for j, (m, top) in enumerate(zip(masks, tops.tolist())):
        h, w = m.shape
        canvas[top - b:top + h + b, :w + 2 * b] = cv2.copyMakeBorder(m, b, b, b, b, cv2.BORDER_REFLECT_101)
        owner[top:top + h, b:b + w] = j
        if votable[j] is not None:
            ok_px[top:top + h, b:b + w] = votable[j]
    mb = cv2.GaussianBlur(canvas, (0, 0), 1.0)
    gx = cv2.Sobel(mb, cv2.CV_32F, 1, 0, ksize=3) * 0.125
    gy = cv2.Sobel(mb, cv2.CV_32F, 0, 1, ksize=3) * 0.125
    mag = cv2.magnitude(gx, gy)
    rr, cc = np.nonzero((mag > 0.06) & (owner >= 0) & ok_px)
    j = owner[rr, cc]
    m = mag[rr, cc]
    ux, uy = gx[rr, cc] / m, gy[rr, cc] / m
    rr, cc = rr - tops[j], cc - b  # each mask's own rows and columns
    hj, wj = hs[j], ws[j]
    x = np.rint(cc + radii_px[:, None] * ux).astype(np.int64)
    y = np.rint(rr + radii_px[:, None] * uy).astype(np.int64)
    ok = (x >= 0) & (x < wj) & (y >= 0) & (y < hj)
    sizes = hs * ws
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    total = int(sizes.sum())
    idx = starts[j] + y * wj + x + (np.arange(len(radii_px)) * total)[:, None]  # each radius its own block
    flat = np.bincount(idx[ok], weights=np.broadcast_to(m, x.shape)[ok],
                       minlength=len(radii_px) * total).astype(np.float32).reshape(len(radii_px), total)
    counts = np.bincount(j, minlength=len(masks))
    return [None if counts[q] == 0 else flat[:, a:a + hs[q] * ws[q]].reshape(len(radii_px), hs[q], ws[q])
            for q, a in enumerate(starts.tolist())]


#: The 5 x 5 neighbourhood of a vote peak (its window and its local-maximum test).
_BOX5 = np.ones((5, 5), np.uint8)


def find_candidates(cs: ColourScene, grid: OrthoGrid, params: WinkDetectorParams,
                    exclude_mask: np.ndarray | None = None, opening_mask: np.ndarray | None = None,
                    pot_class: int = 0, pot_center_mm: np.ndarray | None = None,
                    mm_per_px_at=None, image_bgr: np.ndarray | None = None,
                    camera: CameraModel | None = None,
                    near_misses: list[WinkCandidate] | None = None) -> list[WinkCandidate]:
    """Wink candidates from the colour labels; ``near_misses``, when given, receives the candidates of the felt's
    own hue the label tests refused though their disc is mostly of that hue (``vision.rim_check`` reads their
    rims)."""
    # The band along the mat edge (mixed felt/table pixels, the mat's side wall) is not searched for
    # foreground: its pixels are unread, not mat. A wink lying over the edge covers it, so it is no evidence
    # either way (as the table beyond is not), instead of mat inside the wink's disc.
    labels = cs.labels.copy()
    blend_px = edge_blend_px(grid, mm_per_px_at)
    unread_idx = _edge_masks(cs, blend_px)[0]  # a thin frame: its few pixels by index, not a whole-image mask
    flat = labels.reshape(-1)
    flat[unread_idx[flat[unread_idx] == CLASS_BG]] = CLASS_HIDDEN
    vote_ok = votable(cs, blend_px)
    if exclude_mask is not None:
        # the pot's body: nothing of a wink on the mat shows there (hidden, not evidence either way)
        labels[exclude_mask] = CLASS_HIDDEN
    s = grid.mm_per_px
    wink_px = cv2.inRange(labels, 1, len(COLOR_NAMES))  # 255 on a colour class: one 8-bit pass
    # only the components' boxes and areas are used (counted on the rows and columns that hold any)
    n, _, stats, _, _ = components_with_stats(wink_px)
    h, w = labels.shape
    min_area = 0.12 * math.pi * (SMALL_WINK_RADIUS_MM / s) ** 2
    pad = int(math.ceil(LARGE_WINK_RADIUS_MM / s)) + 4
    raw: list[WinkCandidate] = []
    radii_px = np.array([r_mm / s for r_mm in RADII_MM.values()])
    tiles: list[tuple] = []  # per mask: (blob, colour, window's top and left, its votable band, cut by the band)
    masks: list[np.ndarray] = []
    for i in range(1, n):
        x0, y0, bw, bh, area = stats[i]
        if area < min_area:
            continue
        xa, ya = max(0, x0 - pad), max(0, y0 - pad)
        xb, yb = min(w, x0 + bw + pad), min(h, y0 + bh + pad)
        roi = labels[ya:yb, xa:xb]
        present = np.bincount(roi.ravel(), minlength=256)
        vote_sub = vote_ok[ya:yb, xa:xb]
        whole = None  # whether the blob's window is clear of the unread band (asked once, if at all)
        for k, name in enumerate(COLOR_NAMES, start=1):
            if present[k] < min_area:
                continue
            # a blob cut by the mat's unread edge band: its outline there is the band's, and does not vote;
            # the arc a centre needs is then a share of the outline that can vote. Not for the felt's own hue,
            # whose lighter border along the edge makes such blobs too (it keeps the whole-outline test)
            if k != cs.mat_class and whole is None:
                whole = bool(vote_sub.all())
            cut = k != cs.mat_class and not whole
            tiles.append((i, name, ya, xa, vote_sub, cut))
            masks.append((roi == k).astype(np.float32))
    # every mask's outline votes at once (a frame has dozens of small masks; the calls cost more than the work)
    all_votes = _votes_of_masks(masks, [t[4] if t[5] else None for t in tiles], radii_px)
    shares: dict[tuple[int, str], np.ndarray] = {}  # a window's outline share per size (the same for every colour)
    for (i, name, ya, xa, vote_sub, cut), votes_all in zip(tiles, all_votes):
        if votes_all is None:
            continue  # no outline, no votes: no centre reaches the (positive) threshold
        for (size, r_mm), r_px, acc in zip(RADII_MM.items(), radii_px.tolist(), votes_all):
            acc5 = cv2.boxFilter(acc, -1, (5, 5), normalize=False)
            thr = params.min_arc_fraction * 2 * math.pi * r_px
            if cut:
                if (i, size) not in shares:
                    shares[(i, size)] = np.maximum(outline_share(vote_sub, r_px), MIN_OUTLINE_SHARE)
                thr = thr * shares[(i, size)]
            peaks = (acc5 >= thr) & (acc5 >= cv2.dilate(acc5, _BOX5))
            for pr, pc in zip(*np.nonzero(peaks)):
                r0, r1 = max(0, pr - 2), min(acc.shape[0], pr + 3)
                c0, c1 = max(0, pc - 2), min(acc.shape[1], pc + 3)
                win = acc[r0:r1, c0:c1]
                tot = float(win.sum())
                if tot <= 0:
                    continue
                cy = float(win.sum(axis=1) @ np.arange(r0, r1)) / tot + ya
                cx = float(win.sum(axis=0) @ np.arange(c0, c1)) / tot + xa
                cmm = grid.table_from_ortho(np.array([[cx, cy]]))[0]
                raw.append(WinkCandidate(color=name, size=size, center_mm=cmm,
                                         votes=float(acc5[pr, pc]) / (2 * math.pi * r_px)))
    for c in raw:
        if pot_center_mm is not None:
            # A wink on the mat cannot stand inside the pot's base: a centre found there comes from a wink
            # partly hidden behind the pot, whose hidden side voted wrongly; put it against the base.
            v = c.center_mm - pot_center_mm
            d = _length(v)
            lim = POT_BASE_RADIUS_MM + c.radius_mm
            c.opening_fraction = _opening_fraction(c, labels, grid, opening_mask)
            in_opening = c.opening_fraction >= 0.5
            if d < lim - 1.0 and d > 1e-6 and not in_opening:
                c.center_mm = pot_center_mm + v / d * (lim + 0.3)
    verify_many(raw, labels, grid, params)

    def passes(c: WinkCandidate) -> bool:
        return (c.edge_support >= params.min_edge_support and c.bad_fraction <= params.max_bad_fraction
                and c.interior_background <= params.max_interior_background
                and c.own_fraction >= params.min_own_fraction
                and (c.size_evidence >= params.large_ring_min if c.size == "large"
                     else c.size_evidence <= params.small_ring_max))
    good: list[WinkCandidate] = [c for c in raw if passes(c)]
    if mm_per_px_at is not None:
        good += blurred_cores([c for c in raw if not passes(c)], labels, grid, params, mm_per_px_at, passes)
    # Greedy acceptance, best first. A same-colour candidate overlapping accepted winks must show its own
    # colour outside their discs (a real same-colour squop always leaves a crescent of the lower wink);
    # otherwise it is an echo of the ragged outline of one wink (green on green felt).
    good.sort(key=lambda c: -(c.score + 0.2 * c.votes))
    def accept(good: list[WinkCandidate]) -> list[WinkCandidate]:
        kept: list[WinkCandidate] = []
        for c in good:
            k = COLOR_NAMES.index(c.color) + 1
            same = [o for o in kept if o.color == c.color
                    and _dist(o.center_mm, c.center_mm) < o.radius_mm + c.radius_mm]
            clash = [o for o in same if _dist(o.center_mm, c.center_mm) < params.nms_mm]
            replaced = None
            if clash:
                o = clash[0]
                # one wink, two radii proposed: the ring between the radii decides (own colour there: large);
                # the small one stays found unless the large one passes the checks below
                if (o.size != c.size and c.size == "large" and c.size_evidence >= params.large_ring_prefer
                        and c.score >= 0.85 * o.score and len(clash) == 1):
                    replaced = o
                    same = [x for x in same if x is not o]
                else:
                    continue
            if same:
                pts = c.center_mm + _interior_offsets(c.radius_mm, 1.0)
                own = _sample_labels(labels, grid.ortho_from_table(pts)) == k
                # blur spreads a wink's colour by about one and a half image pixels: that is explained too
                mmpp = None if mm_per_px_at is None else float(mm_per_px_at(c.center_mm))
                spread = 0.7 if mmpp is None else max(0.7, 1.5 * mmpp)
                free = np.ones(len(pts), bool)
                for o in same:
                    free &= np.linalg.norm(pts - o.center_mm, axis=1) > o.radius_mm + spread
                if (own & free).mean() < params.min_unexplained_fraction:
                    continue
                # (beside two or more found winks too: their blurred union, each placed within a pixel, may
                # explain all of it; tw_5961_001's blue pile, at 2.3 mm per pixel, gave a large wink on its small
                # one and two smalls inside its large one, the second 0.07 unexplained. But not where the group's
                # blob is round: that is judged whole, by its shape, below, as one blurred wink)
                if mmpp is not None and (len(same) == 1 or _round_blob([*same, c], k, labels, grid, params) is None) \
                        and unexplained_by_found(
                        c, same, labels, grid, spread, mmpp) < params.min_unexplained_fraction:
                    continue
                # A same-colour wink under (or over) one already found shows only what reaches beyond that
                # wink's rim; a crescent narrower than the image can resolve (two pixels of blur) is no
                # evidence of a second wink: it is the first one's blurred outline (an echo at low resolution).
                if mm_per_px_at is not None:
                    min_w = max(params.min_crescent_mm, params.min_crescent_px * mm_per_px_at(c.center_mm))
                    if any(_dist(o.center_mm, c.center_mm) + c.radius_mm - o.radius_mm < min_w
                           for o in same):
                        continue
                    # ... and the same holds the other way round: a wink already taken that hardly reaches
                    # beyond this larger one was its echo
                    echoes = [o for o in same
                              if _dist(o.center_mm, c.center_mm) + o.radius_mm - c.radius_mm < min_w]
                    if echoes:
                        kept = [x for x in kept if not any(x is o for o in echoes)]
            if k == cs.mat_class:
                # a wink of the felt's own hue near the mat edge, where the felt itself shows lighter bands
                edge_gap = min(MAT_HALF_LENGTH_MM - abs(c.center_mm[0]), MAT_HALF_WIDTH_MM - abs(c.center_mm[1]))
                if edge_gap < c.radius_mm + params.felt_edge_zone_mm and (
                        c.edge_support < params.felt_edge_min_support or c.own_fraction < params.felt_edge_min_own):
                    continue
            off_mat = abs(c.center_mm[0]) > MAT_HALF_LENGTH_MM or abs(c.center_mm[1]) > MAT_HALF_WIDTH_MM
            if off_mat and not params.detect_off_mat:
                continue  # the table top is textured and unmodelled: a wink off the mat is not looked for
            if off_mat and (c.own_fraction < params.off_mat_min_own or c.edge_support < params.off_mat_min_support):
                continue  # only a clean whole disc counts there
            if opening_mask is not None and pot_class == k and c.opening_fraction >= 0.5:
                continue  # a pot of a wink colour: its own shaded inside cannot be told from such a wink
            kept = [x for x in kept if x is not replaced]
            kept.append(c)
        return kept

    kept = accept(good)
    if image_bgr is not None and camera is not None:
        # Two small winks of one colour, heavily overlapped, outline a blob that one large disc also covers.
        # The outline decides: the upper small wink shows its whole rim (against the mat and as an edge across
        # the lower one); a large disc there follows the blob only at its two ends. A large wink whose best
        # small ring holds clearly more edge becomes small, and the search runs again so that the lower wink's
        # crescent is found.
        changed = False
        drop: set[int] = set()

        def k_of(w: WinkCandidate) -> int:
            return COLOR_NAMES.index(w.color) + 1

        for c in kept:
            if c.size != "large":
                continue
            # only a lone blob: a large wink partly under or over others shows a cut outline instead
            if any(o is not c and _dist(o.center_mm, c.center_mm) < o.radius_mm + c.radius_mm + 1.0
                   for o in kept):
                continue
            if not any(o.color == c.color and o.size == "small" and o is not c
                       and _dist(o.center_mm, c.center_mm) < LARGE_WINK_RADIUS_MM for o in good):
                continue
            near_pot = pot_center_mm is not None and _dist(c.center_mm, pot_center_mm) < 100.0
            pair = None if (near_pot or k_of(c) == cs.mat_class) else _two_small_from_blob(c, labels, grid)
            if pair is not None:
                drop.update(id(o) for o in good if o.color == c.color
                            and _dist(o.center_mm, c.center_mm) < LARGE_WINK_RADIUS_MM)
                for q in pair:
                    verify(q, labels, grid, params)
                    good.append(q)
                changed = True
                continue
            res = ring_size_check(c, kept, image_bgr, camera)
            if res is None:
                continue
            s_small, s_large, c_small, _ = res
            if s_small > RING_SWITCH_RATIO * s_large:
                blob_mm = c.center_mm.copy()
                # the blob's other proposals were echoes of the merged outline; only the crescent's wink is new
                drop.update(id(o) for o in good if o is not c and o.color == c.color
                            and _dist(o.center_mm, blob_mm) < LARGE_WINK_RADIUS_MM)
                c.size = "small"
                c.center_mm = c_small
                verify(c, labels, grid, params)
                changed = True
                lower = _lower_in_crescent(c, blob_mm, kept, labels, grid, image_bgr, camera, s_small)
                if lower is not None:
                    verify(lower, labels, grid, params)
                    good.append(lower)
        if changed:
            good = [o for o in good if id(o) not in drop]
            good.sort(key=lambda c: -(c.score + 0.2 * c.votes))
            kept = accept(good)
    kept = _merge_over_explained(kept, labels, grid, cs.mat_class, params)
    if near_misses is not None:
        felt = COLOR_NAMES[cs.mat_class - 1] if 1 <= cs.mat_class <= len(COLOR_NAMES) else None
        near_misses.extend(c for c in raw if c.color == felt and c.own_fraction >= NEAR_MISS_MIN_OWN
                           and not any(c is k for k in kept))
    return kept


def blurred_cores(refused: list[WinkCandidate], labels: np.ndarray, grid: OrthoGrid, params: WinkDetectorParams,
                  mm_per_px_at, passes: Callable[[WinkCandidate], bool]) -> list[WinkCandidate]:
    """Refused candidates that a coarse image's blur explains, verified again (those returned hold the new
    evidence; the others keep theirs).

    The labels give a wink's colour class only to its core (half its local departure or more), which the blur
    shrinks by its reach, about ``EDGE_BLUR_IMAGE_PX`` image pixels: at 2 mm per pixel (a 1080p mat's far end,
    with motion blur) a small wink's core is a disc of 5-6 mm, inside the 2 mm probe of its rim, and it showed no
    edge at all (tw_7778_002's blue-S4, 0.2 mm from its truth, own colour 0.63 of its disc). Such a candidate is
    probed again that far inside its rim (and no farther: a smaller blob of the colour still shows none there);
    every other test stands.
    """
    out: list[WinkCandidate] = []
    for c in refused:
        if c.edge_support >= params.min_edge_support or c.own_fraction < params.min_own_fraction:
            continue
        reach = EDGE_BLUR_IMAGE_PX * float(mm_per_px_at(c.center_mm))
        if reach <= params.probe_mm:
            continue
        d = replace(c, center_mm=c.center_mm.copy())
        verify_many([d], labels, grid, params, inside_probe_mm=reach)
        if passes(d):
            verify_many([c], labels, grid, params, inside_probe_mm=reach)  # (the candidate itself: one object)
            out.append(c)
    return out


def unexplained_by_found(c: WinkCandidate, same: list[WinkCandidate], labels: np.ndarray, grid: OrthoGrid,
                         spread_mm: float, mm_per_px: float) -> float:
    """Share of candidate ``c``'s disc holding its colour that no found same-colour wink can explain.

    A found wink's centre comes from its label outline, quantised at image pixels: it is known to about one
    image pixel. Each found wink is placed where, within that, its blurred disc covers most of its colour
    around it (its own blob, not only the part inside ``c``); what of ``c``'s disc is still uncovered is
    evidence of a second wink. An echo of one blurred wink (its colour spread beyond a centre read a pixel
    off) leaves nothing; a real lower wink leaves its crescent.
    """
    k = COLOR_NAMES.index(c.color) + 1
    shift_mm = max(mm_per_px, grid.mm_per_px)
    ang = np.linspace(0.0, 2.0 * np.pi, 8, endpoint=False)
    ring = np.column_stack([np.cos(ang), np.sin(ang)])
    shifts = np.concatenate([np.zeros((1, 2)), 0.5 * shift_mm * ring, shift_mm * ring])
    inner = c.center_mm + _interior_offsets(c.radius_mm, 1.0)
    own = _sample_labels(labels, grid.ortho_from_table(inner)) == k
    free = np.ones(len(inner), bool)
    for o in same:
        # (1.2 mm: what _interior_offsets keeps clear of the rim)
        around = o.center_mm + _interior_offsets(o.radius_mm + spread_mm + shift_mm + 1.2, 1.0)
        own_around = _sample_labels(labels, grid.ortho_from_table(around)) == k
        best, best_free = None, None
        for sh in shifts:
            ctr = o.center_mm + sh
            left = int((own_around & (np.linalg.norm(around - ctr, axis=1) > o.radius_mm + spread_mm)).sum())
            if best is None or left < best:
                best, best_free = left, np.linalg.norm(inner - ctr, axis=1) > o.radius_mm + spread_mm
        free &= best_free
    return float((own & free).mean())


def _round_blob(g: list[WinkCandidate], k: int, labels: np.ndarray, grid: OrthoGrid, params: WinkDetectorParams
                ) -> tuple[np.ndarray, float] | None:
    """The blob of colour ``k`` around the winks ``g`` when it is whole (on the mat, touching no other colour) and
    round: its centroid and its minor radius (a disc of radius R has R^2/4 on every axis); else None."""
    mid = np.mean([c.center_mm for c in g], axis=0)
    pts = mid + _interior_offsets(LARGE_WINK_RADIUS_MM + 8.0, 0.75)
    lab = _sample_labels(labels, grid.ortho_from_table(pts))
    if not np.all(_on_mat(pts, 0.0)) or np.any((lab >= 1) & (lab <= len(COLOR_NAMES)) & (lab != k)):
        return None  # only a whole blob on its own speaks
    blob = pts[lab == k]
    if len(blob) < 20:
        return None
    mu = blob.mean(axis=0)
    ev = np.linalg.eigvalsh(np.cov((blob - mu).T))
    r_minor, r_major = (2.0 * math.sqrt(max(float(e), 0.0)) for e in ev)
    if r_major - r_minor > params.round_blob_tolerance_mm:
        return None
    return mu, r_minor


def _merge_over_explained(kept: list[WinkCandidate], labels: np.ndarray, grid: OrthoGrid, felt_class: int,
                          params: WinkDetectorParams) -> list[WinkCandidate]:
    """Three or more mutually overlapping winks of one colour whose blob is one round disc: one wink.

    Every wink of a real same-colour pile shows some of itself beyond the others, so their blob is as irregular
    as the union of their discs; a heavily blurred lone wink (low resolution, defocus) instead reads as a ring
    of small discs around its centre inside one round blob. Such a group becomes one wink at the blob's
    centroid, its size from the blob's second moment (a disc of radius R has R^2/4 on every axis), and its
    confidence says it was inferred.
    """
    out = list(kept)
    for color in COLOR_NAMES:
        k = COLOR_NAMES.index(color) + 1
        same = [c for c in out if c.color == color and not c.potted]
        # groups of mutually overlapping discs (connected components of the overlap graph)
        groups: list[list[WinkCandidate]] = []
        for c in same:
            hit = [g for g in groups if any(_dist(o.center_mm, c.center_mm) < o.radius_mm + c.radius_mm
                                            for o in g)]
            groups = [g for g in groups if not any(g is h for h in hit)] + [[c] + [x for g in hit for x in g]]
        for g in groups:
            if len(g) < 3:
                continue
            round_blob = _round_blob(g, k, labels, grid, params)
            if round_blob is None:
                continue
            mu, r_minor = round_blob
            one = max(g, key=lambda c: c.score)
            one.size = "large" if r_minor >= SIZE_RING_MM else "small"
            one.center_mm = mu
            one.confidence = min(one.confidence, 0.7)
            one.size_confidence = min(one.size_confidence, 0.7)
            out = [c for c in out if c is one or not any(c is o for o in g)]
    return out


def _two_small_from_blob(c: WinkCandidate, labels: np.ndarray, grid: OrthoGrid) -> list[WinkCandidate] | None:
    """Two heavily overlapped small winks of one colour, from the shape of their own-colour blob.

    A disc of radius R has a plan second moment of R^2/4 along every axis; the union of two small discs is only
    as wide as one small disc across the line of their centres and longer along it. A blob narrower than
    halfway between the two radii and clearly elongated is two small winks, their centres on its long axis.
    """
    k = COLOR_NAMES.index(c.color) + 1
    pts = c.center_mm + _interior_offsets(LARGE_WINK_RADIUS_MM + 3.0, 0.5)
    lab = _sample_labels(labels, grid.ortho_from_table(pts))
    # the blob's shape only speaks when it is whole: on the mat, nothing else (pot, other winks) around it
    if not np.all(_on_mat(pts, 0.0)) or np.any((lab != k) & (lab != CLASS_BG) & (lab != CLASS_NEUTRAL)):
        return None
    own = pts[lab == k]
    if len(own) < 50:
        return None
    mu = own.mean(axis=0)
    cov = np.cov((own - mu).T)
    evals, evecs = np.linalg.eigh(cov)
    r_minor = 2.0 * math.sqrt(max(evals[0], 0.0))
    r_major = 2.0 * math.sqrt(max(evals[1], 0.0))
    if r_minor >= SIZE_RING_MM or r_major < r_minor + 1.5:
        return None
    # along the axis, the union's second moment is about r^2/4 + (d/2)^2 for two discs d apart
    half_d = math.sqrt(max(evals[1] - SMALL_WINK_RADIUS_MM ** 2 / 4.0, 0.0))
    if half_d < 1.5:
        return None
    u = evecs[:, 1]
    return [WinkCandidate(color=c.color, size="small", center_mm=mu + sgn * half_d * u, votes=c.votes)
            for sgn in (1.0, -1.0)]


def _lower_in_crescent(upper: WinkCandidate, blob_mm: np.ndarray, kept: list[WinkCandidate], labels: np.ndarray,
                       grid: OrthoGrid, image_bgr: np.ndarray, camera: CameraModel,
                       upper_strength: float) -> WinkCandidate | None:
    """The lower small wink of a same-colour pair: its own colour left outside the upper wink (a crescent),
    and its visible rim (the part outside the upper disc) holding a clear edge."""
    k = COLOR_NAMES.index(upper.color) + 1
    pts = blob_mm + _interior_offsets(LARGE_WINK_RADIUS_MM + 1.0, 0.7)
    own = _sample_labels(labels, grid.ortho_from_table(pts)) == k
    free = np.linalg.norm(pts - upper.center_mm, axis=1) > upper.radius_mm + 1.0
    rest = pts[own & free]
    if len(rest) < 0.08 * len(pts):
        return None
    start = rest.mean(axis=0)
    cand = WinkCandidate(color=upper.color, size="small", center_mm=start, votes=0.3)
    res = ring_size_check(cand, [*kept, upper], image_bgr, camera)
    if res is None:
        return None
    s_small, s_large, c_small, _ = res
    if s_small < 0.6 * upper_strength or s_small < RING_SWITCH_RATIO * s_large:
        return None
    if np.linalg.norm(c_small - upper.center_mm) < 3.0:
        return None
    cand.center_mm = c_small
    return cand


# --- 2. vertical order ----------------------------------------------------------------------------------------

#: Plan raster of the lens samples.
LENS_STEP_MM = 0.7
#: Two colours nearer than this (8-bit BGR distance) look alike: no boundary between them to read.
ALIKE_BGR = 20.0


def lens_points(a: WinkCandidate, b: WinkCandidate, step_mm: float = LENS_STEP_MM) -> np.ndarray:
    lo = np.minimum(a.center_mm - a.radius_mm, b.center_mm - b.radius_mm)
    hi = np.maximum(a.center_mm + a.radius_mm, b.center_mm + b.radius_mm)
    xs = np.arange(lo[0], hi[0], step_mm)
    ys = np.arange(lo[1], hi[1], step_mm)
    xx, yy = np.meshgrid(xs, ys)
    p = np.column_stack([xx.ravel(), yy.ravel()])
    # stay 1 mm inside both rims: the rims themselves are mixed pixels; a wink whose outline showed it tilted
    # covers its own (foreshortened) footprint, not the flat disc's
    inside = [inside_footprint(p, w.center_mm, w.radius_mm, *(w.outline_tilt or (0.0, 0.0)), inset_mm=1.0)
              for w in (a, b)]
    return p[inside[0] & inside[1]]


def lens_area_mm2(r1: float, r2: float, d: float) -> float:
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        return math.pi * min(r1, r2) ** 2
    a1 = r1 * r1 * math.acos((d * d + r1 * r1 - r2 * r2) / (2 * d * r1))
    a2 = r2 * r2 * math.acos((d * d + r2 * r2 - r1 * r1) / (2 * d * r2))
    a3 = 0.5 * math.sqrt(max(0.0, (-d + r1 + r2) * (d + r1 - r2) * (d - r1 + r2) * (d + r1 + r2)))
    return a1 + a2 - a3


def top_rim_points(w: WinkCandidate, angles: np.ndarray, radius_mm: float) -> np.ndarray:
    """3-D points of ``w``'s top rim as posed (height, tilt) at plan angles, at the given radius."""
    half = WINK_THICKNESS_MM / 2 / math.cos(math.radians(w.tilt_deg))
    return rim_points_mm(w.center_mm, radius_mm, w.z_mm + half, angles, w.tilt_deg, w.tilt_azimuth_deg)


def rim_angles_inside(w: WinkCandidate, other: WinkCandidate, n: int = 48, clear_mm: float = 1.0) -> np.ndarray:
    """Plan angles of ``w``'s rim (as posed) that lie inside ``other``'s disc, ``clear_mm`` clear of its rim."""
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    p = top_rim_points(w, ang, w.radius_mm)[:, :2]
    return ang[np.linalg.norm(p - other.center_mm, axis=1) < other.radius_mm - clear_mm]


def rim_step_vectors(image_bgr: np.ndarray, camera: CameraModel, a: WinkCandidate, angles: np.ndarray,
                     radius_mm: float | None = None) -> np.ndarray:
    """Colour step (outer minus inner, BGR image units) across a's top rim (or a circle of ``radius_mm`` on
    its top), as posed, over 1.5 mm at each of five radial offsets within 1 mm of it: shape (5, angles, 3)."""
    n = len(angles)
    if n == 0:
        return np.zeros((5, 0, 3), np.float32)
    r = a.radius_mm if radius_mm is None else radius_mm
    pts = [top_rim_points(a, angles, r + off + side)
           for off in (-1.0, -0.5, 0.0, 0.5, 1.0) for side in (-0.75, 0.75)]
    q = camera.project_mm(np.vstack(pts)).astype(np.float32)
    vals = cv2.remap(image_bgr, q[:, 0:1], q[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    vals = vals.reshape(10, n, 3).astype(np.float32)
    return vals[1::2] - vals[0::2]


def rim_edge_strength(image_bgr: np.ndarray, camera: CameraModel, a: WinkCandidate, angles: np.ndarray) -> float:
    """Colour step across a's top rim, as posed, at the given plan angles (image units).

    The step is taken at the best of five radial offsets (within 1 mm of the model rim, so that position and
    height errors do not hide it) for each angle; the median over angles is returned.
    """
    if len(angles) == 0:
        return 0.0
    steps = np.linalg.norm(rim_step_vectors(image_bgr, camera, a, angles), axis=2)  # (5 offsets, n)
    return float(np.median(steps.max(axis=0)))


def _image_colours(image_bgr: np.ndarray, camera: CameraModel, pts_mm: np.ndarray, z_mm: float) -> np.ndarray:
    q = camera.project_mm(np.column_stack([pts_mm, np.full(len(pts_mm), z_mm)])).astype(np.float32)
    v = cv2.remap(image_bgr, q[:, 0:1], q[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return v.reshape(-1, 3).astype(np.float32)


def _lens_colour_votes(a: WinkCandidate, b: WinkCandidate, lens_mm: np.ndarray, image_bgr: np.ndarray,
                       camera: CameraModel, others: Sequence[WinkCandidate] = ()) -> tuple[int, int]:
    """Lens samples nearer (in colour) to a's unshared part than to b's, and vice versa (each part clear of
    every third wink, which may cover it)."""
    def own_part(w: WinkCandidate, o: WinkCandidate) -> np.ndarray:
        p = w.center_mm + _interior_offsets(w.radius_mm, 1.0)
        p = p[np.linalg.norm(p - o.center_mm, axis=1) > o.radius_mm + 1.5]
        return p[~covered_by_others(p, others, (a, b))]
    pa, pb = own_part(a, b), own_part(b, a)
    if len(pa) < 4 or len(pb) < 4 or len(lens_mm) == 0:
        return 0, 0
    z = WINK_THICKNESS_MM * 1.5
    ca = np.median(_image_colours(image_bgr, camera, pa, z), axis=0)
    cb = np.median(_image_colours(image_bgr, camera, pb, z), axis=0)
    if float(np.linalg.norm(ca - cb)) < ALIKE_BGR:
        return 0, 0  # the two winks look alike here: no evidence
    lens = _image_colours(image_bgr, camera, lens_mm, z)
    da = np.linalg.norm(lens - ca, axis=1)
    db = np.linalg.norm(lens - cb, axis=1)
    sep = float(np.linalg.norm(ca - cb))
    decisive = np.abs(da - db) > 0.25 * sep
    return int(((da < db) & decisive).sum()), int(((db < da) & decisive).sum())


#: A third wink's image reaches this far beyond its disc (blur, and its rim's place known to about a pixel).
THIRD_DISC_CLEAR_MM = 1.0


def covered_by_others(p: np.ndarray, others: Sequence[WinkCandidate], pair: tuple[WinkCandidate, ...],
                      color: str | None = None) -> np.ndarray:
    """Which plan points ``p`` (N, 2) lie within ``THIRD_DISC_CLEAR_MM`` of the disc of a wink of ``others``
    other than ``pair`` (and not potted), of ``color`` only when given."""
    hit = np.zeros(len(p), bool)
    for o in others:
        if o.potted or any(o is w for w in pair) or (color is not None and o.color != color):
            continue
        hit |= np.linalg.norm(p - o.center_mm, axis=1) <= o.radius_mm + THIRD_DISC_CLEAR_MM
    return hit


def judge_pair(a: WinkCandidate, b: WinkCandidate, labels: np.ndarray, grid: OrthoGrid, image_bgr: np.ndarray,
               camera: CameraModel, noise_level: float, others: Sequence[WinkCandidate] = ()) -> float:
    """Probability that ``a`` lies over ``b`` (flat discs): for two colours, which colour their lens shows
    (the upper wink hides the lower there); for one, which rim inside the other shows an edge.

    Where a third wink's disc covers the lens too, the colour seen is the topmost of the three: a's colour
    there still puts a over b unless the third is of a's colour (then it may be that wink's), and likewise
    for b."""
    p_a_upper = 0.5
    if a.color != b.color:
        pts = lens_points(a, b)
        if len(pts):
            lab = _sample_labels(labels, grid.ortho_from_table(pts))
            ka = COLOR_NAMES.index(a.color) + 1
            kb = COLOR_NAMES.index(b.color) + 1
            cov_a = covered_by_others(pts, others, (a, b), a.color)
            cov_b = covered_by_others(pts, others, (a, b), b.color)
            na = int(((lab == ka) & ~cov_a).sum())
            nb = int(((lab == kb) & ~cov_b).sum())
            if na + nb < max(4, int((~(cov_a | cov_b)).sum()) // 3):
                # the labels are unsure in the lens (shading of a tilted wink, blends): compare the
                # lens's own colours with each wink's colour where only that wink can be seen (clear of third
                # winks, whose colour would vote for the nearer of the two)
                na, nb = _lens_colour_votes(a, b, pts[~covered_by_others(pts, others, (a, b))], image_bgr,
                                            camera, others)
            # Beta(1, 1) posterior mean that a is the one seen in the lens, each vote weighed as the
            # share of an image pixel its sample is (samples finer than the pixels are not independent)
            mmpp = camera.mm_per_px_at((float(pts[:, 0].mean()), float(pts[:, 1].mean())))
            w_px = min(1.0, (LENS_STEP_MM / mmpp) ** 2)
            p_a_upper = (w_px * na + 1) / (w_px * (na + nb) + 2)
    else:
        arc_a = rim_angles_inside(a, b)
        arc_b = rim_angles_inside(b, a)
        ea = rim_edge_strength(image_bgr, camera, a, arc_a)  # (flat: poses come after the order)
        eb = rim_edge_strength(image_bgr, camera, b, arc_b)
        if len(arc_a) >= 3 and len(arc_b) >= 3:
            diff = (ea - eb) / (3.0 * noise_level + 0.25 * (ea + eb) + 1e-6)
            p_a_upper = 1.0 / (1.0 + math.exp(-3.0 * diff))
        elif len(arc_a) >= 3 and len(arc_b) < 3:
            # b's rim lies wholly outside a: b is inside-out of a only if a is the small one on top
            p_a_upper = 1.0 / (1.0 + math.exp(-3.0 * (ea - 3 * noise_level) / (3 * noise_level + 1e-6)))
        elif len(arc_b) >= 3:
            p_a_upper = 1.0 - 1.0 / (1.0 + math.exp(-3.0 * (eb - 3 * noise_level) / (3 * noise_level + 1e-6)))
    return p_a_upper


def set_order(a: WinkCandidate, b: WinkCandidate, p_a_upper: float) -> None:
    """Record the pair's order (the likelier wink upper) and its confidence on both winks."""
    conf = 0.5 + abs(p_a_upper - 0.5)
    upper, lower = (a, b) if p_a_upper >= 0.5 else (b, a)
    upper.above.append(lower.wink_id)
    upper.order_confidence[lower.wink_id] = conf
    lower.order_confidence[upper.wink_id] = conf


def decide_order(winks: list[WinkCandidate], labels: np.ndarray, grid: OrthoGrid, image_bgr: np.ndarray,
                 camera: CameraModel, params: WinkDetectorParams, noise_level: float) -> None:
    """Set ``above`` and ``order_confidence`` for every overlapping pair."""
    for w in winks:
        w.above = []
        w.order_confidence = {}
    order_new_overlaps(winks, labels, grid, image_bgr, camera, params, noise_level)


def order_new_overlaps(winks: list[WinkCandidate], labels: np.ndarray, grid: OrthoGrid, image_bgr: np.ndarray,
                       camera: CameraModel, params: WinkDetectorParams, noise_level: float
                       ) -> list[tuple[WinkCandidate, WinkCandidate]]:
    """Judge every overlapping pair that has no order yet; returns the pairs judged. After the fit this finds
    the pairs the first order, read on the coarse centres and sizes, could not see: a wink first read small (its
    outline cut by the winks over and under it) or a few millimetres off reaches a neighbour only once fitted
    (``stacking.drop_open_pairs`` takes those the reviews leave undecided out again)."""
    added = []
    for i, a in enumerate(winks):
        for b in winks[i + 1:]:
            if a.potted or b.potted or b.wink_id in a.order_confidence:
                continue
            if lens_area_mm2(a.radius_mm, b.radius_mm, _dist(a.center_mm, b.center_mm)) < params.min_lens_mm2:
                continue
            set_order(a, b, judge_pair(a, b, labels, grid, image_bgr, camera, noise_level, winks))
            added.append((a, b))
    return added


# --- 3. pose from the squop -----------------------------------------------------------------------------------

def top_height_at(w: WinkCandidate, p: np.ndarray) -> float:
    """Height of the top surface of ``w`` at plan point ``p``."""
    t = math.radians(w.tilt_deg)
    a = math.radians(w.tilt_azimuth_deg)
    dx = float(np.dot(p - w.center_mm, (math.cos(a), math.sin(a))))
    return w.z_mm + math.tan(t) * dx + WINK_THICKNESS_MM / 2 / math.cos(t)


def resting_pose(center_mm: np.ndarray, radius_mm: float, lowers: list[WinkCandidate]) -> tuple[float, float]:
    """(tilt rad, azimuth deg) of a wink at ``center_mm`` resting on the posed ``lowers``: its low edge on the mat,
    rising towards the lower that holds it up most, on the highest point of that one's top face under its
    footprint (a tilted lower's is not on the line of centres). (0, 0) with none under it."""
    best = (0.0, 0.0)
    for lw in lowers:
        u = lw.center_mm - center_mm
        d = float(np.linalg.norm(u))
        if d < 1e-6:
            continue
        u = u / d
        face = face_points_mm(lw.center_mm, lw.radius_mm, lw.z_mm, lw.tilt_deg, lw.tilt_azimuth_deg)
        tilt = resting_tilt_over_rad(center_mm, radius_mm, u, face)
        if tilt > best[0]:
            best = (tilt, math.degrees(math.atan2(u[1], u[0])))
    return best


def assign_poses(winks: list[WinkCandidate], confidence_min: float = 0.0) -> None:
    """Heights and tilts from the order graph, bottom-up: a wink lies on the mat and on its highest support.

    Only orders at least ``confidence_min`` sure pose a wink: an undecided one is a coin's toss, and a wink
    tilted on it would be refitted, and its place and size read, on a guess (its winks stay as fitted flat)."""
    by_id = {w.wink_id: w for w in winks}
    done: set[str] = set()
    for w in winks:
        w.z_mm, w.tilt_deg, w.tilt_azimuth_deg = WINK_THICKNESS_MM / 2, 0.0, 0.0
    for _ in range(len(winks) + 1):
        progressed = False
        for w in winks:
            if w.wink_id in done:
                continue
            lowers = [by_id[i] for i in w.above if i in by_id and w.order_confidence.get(i, 1.0) >= confidence_min]
            if any(lw.wink_id not in done for lw in lowers if lw.wink_id != w.wink_id) and _ < len(winks):
                continue
            best = resting_pose(w.center_mm, w.radius_mm, lowers)
            if best[0] > 0:
                w.tilt_deg = math.degrees(best[0])
                w.tilt_azimuth_deg = best[1]
                w.z_mm = resting_mid_height_mm(w.radius_mm, best[0])
            if w.outline_tilt is not None:
                # its own outline measured the tilt (the order graph may lack its support or misplace it)
                w.tilt_deg, w.tilt_azimuth_deg = w.outline_tilt
                w.z_mm = mid_height_mm(w.radius_mm, w.tilt_deg)
            done.add(w.wink_id)
            progressed = True
        if not progressed:
            break


# --- 4. sub-pixel fit -------------------------------------------------------------------------------------------

def solid_of(w: WinkCandidate) -> RoundSolid:
    half = WINK_THICKNESS_MM / 2 / math.cos(math.radians(w.tilt_deg))
    return RoundSolid(r_top_mm=w.radius_mm, z_top_mm=w.z_mm + half, r_bottom_mm=w.radius_mm,
                      z_bottom_mm=w.z_mm - half, tilt_deg=w.tilt_deg, tilt_azimuth_deg=w.tilt_azimuth_deg)


def _baseline_segments() -> np.ndarray:
    from geometry import tiddlywinks as tw
    return np.array([np.asarray(tw.baseline_segment((sx, sy)).coords) for sx in (1, -1) for sy in (1, -1)])


_SEGMENTS = _baseline_segments()


_SEGMENT_PP = next(sg for sg in _SEGMENTS if (sg > 0).all())  # the (+x, +y) corner's baseline
_BASELINE_MIN_ABS_X_MM = float(np.abs(_SEGMENTS[:, :, 0]).min())  # the painted baselines lie beyond this |x|


def baseline_distance_mm(points_mm: np.ndarray) -> np.ndarray:
    """Plan distance from each point to the nearest painted baseline centreline.

    The four baselines are mirror images in the mat's axes, each within its own quadrant: a point folded into
    the first quadrant is nearest to that quadrant's line (one segment instead of four)."""
    p = np.abs(np.asarray(points_mm, float).reshape(-1, 2))
    a, b = _SEGMENT_PP
    ab = b - a
    t = np.clip(((p - a) @ ab) / float(ab @ ab), 0.0, 1.0)
    dx = p[:, 0] - (a[0] + t * ab[0])
    dy = p[:, 1] - (a[1] + t * ab[1])
    return np.sqrt(dx * dx + dy * dy)


_MASK_BOXES: dict[int, tuple[np.ndarray, tuple[int, int, int, int]]] = {}


def _near_mask(mask: np.ndarray, grid: OrthoGrid, center_mm: np.ndarray, reach_mm: float) -> bool:
    """Whether the plan square of half-side ``reach_mm`` about ``center_mm`` meets the bounding box of ``mask``
    (the box is computed once per mask)."""
    got = _MASK_BOXES.get(id(mask))
    if got is None or got[0] is not mask:
        _MASK_BOXES.clear()
        got = (mask, cv2.boundingRect(mask.view(np.uint8)))
        _MASK_BOXES[id(mask)] = got
    bx, by, bw, bh = got[1]
    if bw == 0 or bh == 0:
        return False
    # grid.ortho_from_table's two operations per axis, on Python floats (a hundred calls a frame)
    s = grid.mm_per_px
    c, r = (float(center_mm[0]) - grid.x0_mm) / s, (float(center_mm[1]) - grid.y0_mm) / -s
    rp = reach_mm / grid.mm_per_px + 1.0
    return c + rp >= bx and c - rp <= bx + bw and r + rp >= by and r - rp <= by + bh


def _valid_outlines(ws: list[WinkCandidate], angles: list[np.ndarray], winks: list[WinkCandidate],
                    labels: np.ndarray, grid: OrthoGrid, params: WinkDetectorParams,
                    block_mask: np.ndarray | None, reaches_mm: list[float]) -> list[np.ndarray]:
    """Per wink of ``ws``, the outline samples at ``angles`` where it is seen against the mat, or against a
    wink it lies on; all winks' samples stacked, so each test is one array operation for the batch."""
    if not ws:
        return []
    counts = [len(a) for a in angles]
    ends = np.cumsum(counts).tolist()
    spans = [slice(e - c, e) for e, c in zip(ends, counts)]
    seg = np.repeat(np.arange(len(ws)), counts)
    ang = np.concatenate(angles)
    u = np.column_stack([np.cos(ang), np.sin(ang)])
    centre = np.array([w.center_mm for w in ws])[seg]
    radius = np.array([w.radius_mm for w in ws])[seg][:, None]
    k = np.array([COLOR_NAMES.index(w.color) + 1 for w in ws])[seg]
    p_out = centre + (radius + params.probe_mm) * u
    p_in = centre + (radius - params.probe_mm) * u
    # both probes' labels in one sampling (each point's own arithmetic: the same labels)
    lin, lout = np.split(_sample_labels(labels, grid.ortho_from_table(np.concatenate([p_in, p_out]))), 2)
    ok = (lin == k) & ((lout == CLASS_BG) | (lout == CLASS_NEUTRAL))
    # a wink the labels left neutral: its inside is foreground, the felt around it is not
    neutral = np.array([w.neutral_inside for w in ws])[seg]
    ok |= neutral & (lin == CLASS_NEUTRAL) & (lout == CLASS_BG)
    by_id = {o.wink_id: o for o in winks}
    for w, sl in zip(ws, spans):
        for o in (by_id[i] for i in w.above if i in by_id):
            ko = COLOR_NAMES.index(o.color) + 1
            if ko == k[sl.start]:
                continue
            inside_o = distances_mm(p_out[sl], o.center_mm) < o.radius_mm - 0.5
            ok[sl] |= (lin[sl] == k[sl]) & inside_o & (lout[sl] == ko)
    # beyond the mat's edge lies its side wall and the table: no wink edge can be measured against those
    ok &= _on_mat(p_out, 0.0)
    # nor may the edge profile reach the mat's own edge (felt to table): its step would outweigh a faint wink
    reach = np.array(reaches_mm)
    far = (reach > params.probe_mm)[seg]
    if far.any():
        ok &= ~far | _on_mat(centre + (radius + reach[seg][:, None]) * u, 0.0)
    # the baselines' paint is a bright line of unknown width: an edge seen against it is no mat edge
    near_line = np.array([abs(w.center_mm[0]) > _BASELINE_MIN_ABS_X_MM - w.radius_mm - params.probe_mm
                          - params.paint_clearance_mm for w in ws])[seg]
    if near_line.any():
        ok[near_line] &= baseline_distance_mm(p_out[near_line]) > params.paint_clearance_mm
    # where the pot hides the wink, the edge seen is the pot's, not the wink's
    for w, sl, r_mm in zip(ws, spans, reaches_mm):
        if block_mask is not None and not w.potted and _near_mask(block_mask, grid, w.center_mm,
                                                                   w.radius_mm + max(0.5, r_mm) + 2.0):
            # nor may the edge profile reach the pot: its dark base and shadow are a far stronger step than a
            # faint wink's edge and would pull the fitted outline towards the pot
            offs = np.unique([0.5, *np.linspace(0.5, max(0.5, r_mm), 4)])
            p_edge = (w.center_mm[None, None, :]
                      + (w.radius_mm + offs)[:, None, None] * u[None, sl, :]).reshape(-1, 2)
            hit = _sample_labels(block_mask.view(np.uint8), grid.ortho_from_table(p_edge)) == 1
            ok[sl] &= ~hit.reshape(len(offs), -1).any(axis=0)
    # no other wink (that is not below us) may come near the outline sample
    oc = np.array([o.center_mm for o in winks]).reshape(-1, 2)
    wc = np.array([w.center_mm for w in ws])
    near = np.all(np.abs(wc[:, None, :] - oc[None, :, :]) < 30, axis=2)
    near &= np.array([w.potted for w in ws])[:, None] == np.array([o.potted for o in winks], bool)[None, :]
    place = {id(o): i for i, o in enumerate(winks)}
    named: dict[str, list[int]] = {}
    for i, o in enumerate(winks):
        named.setdefault(o.wink_id, []).append(i)
    for j, w in enumerate(ws):
        if id(w) in place:
            near[j, place[id(w)]] = False
        for wid in w.above:
            near[j, named.get(wid, [])] = False
    if near.any():
        cols = np.flatnonzero(near.any(axis=0))
        orad = np.array([winks[i].radius_mm for i in cols])
        d2 = ((p_out[:, None, :] - oc[None, cols, :]) ** 2).sum(axis=2)
        ok &= ~np.any((d2 < (orad[None, :] + 1.5) ** 2) & near[seg][:, cols], axis=1)
    return [ok[sl] for sl in spans]


def _seen_outline(ol: Outline, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, int]:
    """The outline samples the fit reads (points, their Jacobians and normals, the normal-offset Jacobian), the
    share of the outline they are and their count: taken once per projection, not per iteration."""
    n_seen = int(np.count_nonzero(valid))
    return (ol.points_px[valid], ol.jac_full[valid], ol.normals_px[valid], ol.jac[valid],
            n_seen / len(valid) if len(valid) else 0.0, n_seen)


@dataclass(slots=True, eq=False)
class _RimFit:
    """One wink's state in the batched rim fit."""

    w: WinkCandidate
    solid: RoundSolid
    origin: np.ndarray  # plan centre the outline was projected at (its linearisation point)
    start: np.ndarray  # the centre before the fit
    reach: float  # the edge profile's half-length on the mat (mm)
    ol: Outline | None = None
    seen: tuple = ()
    moved: np.ndarray | None = None
    # its own edge offset (apparent radius, for the size check) from its latest fixed-offset fit's edges
    free_bias: float | None = None
    fitted_bias: float | None = None
    failed: bool = False


def refine(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
           labels: np.ndarray, grid: OrthoGrid, params: WinkDetectorParams, bias_px: float | None,
           mm_per_px: float, block_mask: np.ndarray | None = None) -> float | None:
    """Fit one wink's plan centre (``refine_batch`` of one); returns its fitted edge bias (px), else None."""
    return refine_batch([w], winks, image_bgr, camera, labels, grid, params, bias_px, mm_per_px,
                        block_mask)[0]


def refit_other_size(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
                     labels: np.ndarray, grid: OrthoGrid, params: WinkDetectorParams, bias_px: float | None,
                     mm_per_px: float, block_mask: np.ndarray | None = None) -> WinkCandidate | None:
    """A copy of ``w`` as the other size, its centre where that radius puts the arc of its rim that shows;
    None where too little of that radius's outline shows to fit it (no outline then speaks for that size).

    A mostly hidden wink's fit rests on that arc alone: at the other radius the same arc lies 3 mm nearer or
    farther, so the centre first moves along the arc's mean direction by the difference of the radii, then is
    fitted again."""
    alt = other_radius_shifted(w, winks, camera, labels, grid, params, block_mask)
    refine(alt, [alt if o is w else o for o in winks], image_bgr, camera, labels, grid, params, bias_px,
           mm_per_px, block_mask)
    return alt if alt.fit_fraction >= params.min_fit_fraction else None


def other_radius_shifted(w: WinkCandidate, winks: list[WinkCandidate], camera: CameraModel, labels: np.ndarray,
                         grid: OrthoGrid, params: WinkDetectorParams, block_mask: np.ndarray | None = None
                         ) -> WinkCandidate:
    """A copy of ``w`` as the other size, its centre moved along the mean direction of the arc of its rim that
    shows by the difference of the radii (where that arc then lies), not fitted."""
    alt = replace(w, size="small" if w.size == "large" else "large", center_mm=w.center_mm.copy(),
                  above=list(w.above), order_confidence=dict(w.order_confidence), edge_offset_px=None)
    reach = params.profile_half_px * camera.mm_per_px_at(tuple(w.center_mm.tolist()))
    ol = outlines(camera, [solid_of(w)], [w.center_mm], params.n_outline)[0]
    seen = _valid_outlines([w], [ol.angles], winks, labels, grid, params, block_mask, [reach])[0]
    if seen.any():
        mean_u = np.array([np.cos(ol.angles[seen]).mean(), np.sin(ol.angles[seen]).mean()])
        if _length(mean_u) > 0.2:  # an arc, not most of the outline around
            alt.center_mm = w.center_mm + (w.radius_mm - alt.radius_mm) * mean_u / _length(mean_u)
    return alt


#: A flagged wink's seen rim is the other radius's when that circle runs through at least as much of it with at most
#: this share of the residual: the wrong radius's circle crosses a seen arc, off it by up to the 3 mm the radii
#: differ, and leaves a residual that the right one does not (piles of one colour: 0.46 and 0.47 on the two such
#: winks of the squop renders of the development set and seen seeds; the nearest right size at 0.93).
OTHER_RADIUS_RMS_SHARE = 0.6


def other_radius_fits_better(w: WinkCandidate, alt: WinkCandidate | None) -> bool:
    """Whether ``alt`` (``w`` refitted at the other radius) fits the seen outline better: as much of it, far
    closer. A wink with no fit of its own (no residual) is not judged."""
    return (alt is not None and w.fit_rms_px > 0.0 and alt.fit_fraction >= w.fit_fraction
            and alt.fit_rms_px <= OTHER_RADIUS_RMS_SHARE * w.fit_rms_px)


def refine_batch(ws: list[WinkCandidate], winks: list[WinkCandidate], image_bgr: np.ndarray,
                 camera: CameraModel, labels: np.ndarray, grid: OrthoGrid, params: WinkDetectorParams,
                 bias_px: float | None, mm_per_px: float, block_mask: np.ndarray | None = None
                 ) -> list[float | None]:
    """Fit the plan centres of ``ws`` together; per wink, its fitted edge bias (px) when fitted, else None.

    Jacobi-style: each wink's valid outline is read against the centres as they stand when it is projected
    (no wink of the batch has moved within that iteration), then one Gauss-Newton step moves every wink at
    once from one sampling of all their edge profiles and one batched least-squares solve. A wink leaves the
    batch when its step is below 0.03 mm or below its fit's standard error (a further step could only move it
    within its own noise), or when too little outline is left to fit it.
    """
    fits = [_RimFit(w=w, solid=solid_of(w), origin=w.center_mm.copy(), start=w.center_mm.copy(),
                    reach=params.profile_half_px * camera.mm_per_px_at(tuple(w.center_mm.tolist())))
            for w in ws]

    def project(fs: list[_RimFit]) -> None:
        # the outlines at the current centres, and where each is seen against those same centres
        drawn = outlines(camera, [f.solid for f in fs], [f.w.center_mm for f in fs], params.n_outline)
        for f, ol in zip(fs, drawn):
            f.ol = ol
            f.origin = f.w.center_mm.copy()
            f.moved = np.zeros(2)
        valid = _valid_outlines([f.w for f in fs], [f.ol.angles for f in fs], winks, labels, grid, params,
                                block_mask, [f.reach for f in fs])
        for f, v in zip(fs, valid):
            f.seen = _seen_outline(f.ol, v)

    project(fits)
    fail_sigma = 0.5 * grid.mm_per_px + 0.3

    def give_up(f: _RimFit) -> None:
        # the coarse centre stands, with its own uncertainty
        f.failed = True
        f.w.center_mm = f.start
        f.w.sigma_mm = max(f.w.sigma_mm, fail_sigma)

    active = fits
    for it in range(params.refine_iterations):
        for f in active:
            f.moved = f.w.center_mm - f.origin
        project([f for f in active if _length(f.moved) > 1.0])  # far from the linearisation point: again
        batch = []
        for f in active:
            frac, n_seen = f.seen[4], f.seen[5]
            f.w.fit_fraction = frac
            f.w.center_px = f.ol.center_px
            if frac < params.min_fit_fraction or n_seen < 6:
                # too little outline to fit (or left after the steps so far, which it thus did not support)
                give_up(f)
            else:
                batch.append(f)
        if not batch:
            break
        counts = [f.seen[5] for f in batch]
        starts = np.cumsum([0] + counts[:-1])
        seg = np.repeat(np.arange(len(batch)), counts)
        p_seen, jac_full, normals, jv = (np.concatenate(parts) for parts in zip(*(f.seen[:4] for f in batch)))
        if it:  # small moves: the outline follows its Jacobian (exact to a hundredth of a pixel within 1 mm)
            moved = np.array([f.moved for f in batch])
            p_seen = p_seen + np.einsum("nij,nj->ni", jac_full, moved[seg])
        prof = sample_profiles(image_bgr, p_seen, normals, params.profile_half_px, params.profile_step_px)
        es = edge_crossings(prof, params.profile_half_px, params.profile_step_px)
        offs = es.offsets_px
        weights = np.minimum(np.maximum(es.contrast / 30.0, 0.0), 1.0)
        fit_bias = np.array([bias_px is None and f.seen[4] >= 0.75 for f in batch])
        # the winks fitted with the image's edge offset also measure their own (the size check's apparent
        # radius), centre kept, on the same edges: each such outline again, as one more system of the solve
        free = ~fit_bias & (np.array([f.seen[4] for f in batch]) >= params.size_fit_fraction)
        again = free[seg]
        n_b = len(batch)
        free_counts = np.array(counts)[free]
        delta, b, cov, rms = solve_shifts(
            np.concatenate([jv, jv[again]]), np.concatenate([offs, offs[again]]),
            np.concatenate([weights, weights[again]]),
            np.concatenate([starts, len(offs) + np.cumsum(free_counts) - free_counts]),
            np.concatenate([fit_bias, np.ones(len(free_counts), bool)]),
            np.concatenate([np.full(n_b, 0.0 if bias_px is None else bias_px), np.zeros(len(free_counts))]))
        for f, b_free, ok in zip((f for f, fr in zip(batch, free) if fr), b[n_b:].tolist(),
                                 np.isfinite(cov[n_b:]).all(axis=(1, 2)).tolist()):
            f.free_bias = b_free if ok else None
        delta, b, cov, rms = delta[:n_b], b[:n_b], cov[:n_b], rms[:n_b]
        finite = np.isfinite(cov).all(axis=(1, 2))
        # largest eigenvalue of each symmetric 2x2 covariance (of the finite ones)
        c00, c11, c01 = (np.where(finite, cov[:, i, j], 0.0) for i, j in ((0, 0), (1, 1), (0, 1)))
        stat = np.sqrt(np.maximum(0.5 * (c00 + c11) + np.hypot(0.5 * (c00 - c11), c01), 0.0))
        nxt = []
        for i, f in enumerate(batch):
            w = f.w
            if not finite[i]:
                give_up(f)
                continue
            step = np.minimum(np.maximum(delta[i], -3.0), 3.0)
            w.center_mm = w.center_mm + step
            if fit_bias[i]:
                f.fitted_bias = float(b[i])
                w.edge_offset_px = f.fitted_bias
            # Systematic edge effects (bevel, blur, shading) do not average out along the outline; with only
            # an arc visible they couple into the centre, the more the shorter the arc.
            # mm per pixel at this wink (a far corner of an oblique view is much coarser than the mat centre)
            mmpp_here = max(mm_per_px, f.reach / params.profile_half_px)
            model = params.model_sigma_px * mmpp_here / max(f.seen[4], 0.1)
            r = float(rms[i])
            w.fit_rms_px = r if math.isfinite(r) else 0.0
            # Edge residuals well above the pixel noise mean the outline is not where the disc model puts it
            # along part of its length (a shadow side, a neighbour's blur, felt bands, a misjudged height): a
            # systematic error of the order of that residual, which does not average out along the outline.
            excess_px = max(0.0, w.fit_rms_px - params.residual_noise_px)
            systematic = params.residual_sigma_gain * excess_px * mmpp_here
            sigma = math.hypot(float(stat[i]), model, systematic)
            if w.tilt_deg > 0:
                sigma = math.hypot(sigma, params.tilted_sigma_mm)
            w.sigma_mm = sigma
            if _length(step) >= max(0.03, float(stat[i])):
                nxt.append(f)
        active = nxt
    for f in fits:
        if f.free_bias is not None:
            f.w.edge_offset_px = f.free_bias
    done = [f for f in fits if not f.failed]
    for f in done:
        w = f.w
        # A fit less certain than the coarse centre it started from (a short arc of a wink a few pixels wide
        # in a far corner) does not override it: the two combine by their variances.
        coarse_sigma = 0.5 * max(grid.mm_per_px, f.reach / params.profile_half_px)
        if w.sigma_mm > coarse_sigma:
            wf = coarse_sigma ** 2 / (coarse_sigma ** 2 + w.sigma_mm ** 2)
            w.center_mm = f.start + wf * (w.center_mm - f.start)
            w.sigma_mm = math.sqrt(1.0 / (1.0 / coarse_sigma ** 2 + 1.0 / w.sigma_mm ** 2))
    if done:
        px = camera.project_mm(np.array([[f.w.center_mm[0], f.w.center_mm[1], f.w.z_mm] for f in done]))
        for f, p in zip(done, px):
            f.w.center_px = p
    return [None if f.failed else f.fitted_bias for f in fits]


# --- 5. size from the outline's own edge (known radii 8 and 11 mm) -------------------------------------------

RING_STEP_MM = 0.75  # plan raster of the size check (the sub-pixel fit follows)
RING_SEARCH_MM = 4.0  # centre search around the candidate, per size hypothesis
RING_SWITCH_RATIO = 1.2  # the other radius's ring must hold this much more edge to change the size
RING_MIN_VISIBLE = 0.45  # ring share that must be measurable (on the mat, away from other winks and paint)
#: Widest half-width of a painted baseline (mats are painted 4.4-6 mm wide).
PAINT_HALF_WIDTH_MAX_MM = 3.0


@lru_cache(maxsize=8)
def _ring_kernel(r_px: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ring weights (sum 1) and the same weights times the cosine and sine of the radial direction."""
    n = int(math.ceil(r_px + 3))
    yy, xx = np.mgrid[-n:n + 1, -n:n + 1].astype(np.float32)
    rr = np.sqrt(xx * xx + yy * yy)
    k = np.exp(-0.5 * ((rr - r_px) / 0.7) ** 2).astype(np.float32)
    k /= k.sum()
    rr = np.maximum(rr, 1e-6)
    return k, (k * xx / rr).astype(np.float32), (k * yy / rr).astype(np.float32)


def _project_raster(camera: CameraModel, center_mm: np.ndarray, g: np.ndarray, knots: int = 9,
                    z_mm: float = WINK_THICKNESS_MM) -> np.ndarray:
    """Pixels of the plan raster ``center + (g_i, g_j)`` at the wink's top face, ``(n*n, 2)`` float32, row-major.

    The projection (perspective and lens) is smooth over a few centimetres: a ``knots`` x ``knots`` grid of
    projected points interpolated bilinearly is exact to well under a hundredth of a pixel, for a twentieth of
    the projections.
    """
    n = len(g)
    kk = np.linspace(g[0], g[-1], knots)
    kx, ky = np.meshgrid(center_mm[0] + kk, center_mm[1] + kk)
    qk = camera.project_mm(np.column_stack([kx.ravel(), ky.ravel(), np.full(knots * knots, z_mm)]))
    qk = qk.reshape(knots, knots, 2)
    f = (np.arange(n) / (n - 1)) * (knots - 1)
    i0 = np.minimum(f.astype(int), knots - 2)
    t = (f - i0)[:, None]
    # along x (columns), then along y (rows)
    rows = qk[:, i0] * (1 - t)[None] + qk[:, i0 + 1] * t[None]  # (knots, n, 2)
    ty = t[:, :, None]
    full = rows[i0] * (1 - ty) + rows[i0 + 1] * ty  # (n, n, 2)
    return full.reshape(-1, 2).astype(np.float32)


def ring_size_check(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray,
                    camera: CameraModel) -> tuple[float, float, np.ndarray, np.ndarray] | None:
    """Edge strength of the best-placed outline of each known radius around a candidate, in the full image.

    The image is resampled on a plan raster at the wink's top face; the colour gradient magnitude is averaged
    along a ring of radius 8 mm and of 11 mm, each placed at its best centre within ``RING_SEARCH_MM``. Only the
    mat counts (not beyond its edge, not the baselines' paint, not other winks). A disc of the wrong radius
    touches the true outline at most along a short arc; the right one follows it all round.
    Returns (small strength, large strength, small centre, large centre) or None when too little is visible.
    """
    half = LARGE_WINK_RADIUS_MM + RING_SEARCH_MM + 2.0
    # a raster point's gradient reaches one raster step, and the camera's blur spreads a painted or mat edge by
    # its own width: nearer than that, the paint's or the table's edge would count as the wink's
    reach_mm = RING_STEP_MM + EDGE_BLUR_IMAGE_PX * camera.mm_per_px_at((float(w.center_mm[0]),
                                                                        float(w.center_mm[1])))
    paint_mm = PAINT_HALF_WIDTH_MAX_MM + reach_mm

    def visible(pts: np.ndarray) -> np.ndarray:
        mask = _on_mat(pts, max(1.5, reach_mm))
        if abs(w.center_mm[0]) > _BASELINE_MIN_ABS_X_MM - 1.5 * half - paint_mm:
            mask &= baseline_distance_mm(pts) > paint_mm
        for o in winks:
            if o is w or o.potted:
                continue
            if _dist(o.center_mm, w.center_mm) > o.radius_mm + half * 1.5:
                continue
            mask &= distances_mm(pts, o.center_mm) > o.radius_mm + 1.5
        return mask
    return ring_responses(image_bgr, camera, w.center_mm, WINK_THICKNESS_MM, visible)


def ring_responses(image_bgr: np.ndarray, camera: CameraModel, center_mm: np.ndarray, z_mm: float,
                   visible) -> tuple[float, float, np.ndarray, np.ndarray] | None:
    """The ring search of ``ring_size_check`` in the plane at height ``z_mm``; ``visible(plan points)`` says
    which raster points show the wink's own surroundings (the rest do not count)."""
    half = LARGE_WINK_RADIUS_MM + RING_SEARCH_MM + 2.0
    n = int(round(2 * half / RING_STEP_MM)) + 1
    g = (np.arange(n) - (n - 1) / 2) * RING_STEP_MM
    xx, yy = np.meshgrid(center_mm[0] + g, center_mm[1] + g)
    pts = np.column_stack([xx.ravel(), yy.ravel()])
    q = _project_raster(camera, center_mm, g, z_mm=z_mm)
    hh, ww = image_bgr.shape[:2]
    if q[:, 0].min() < 0 or q[:, 1].min() < 0 or q[:, 0].max() > ww - 1 or q[:, 1].max() > hh - 1:
        return None
    patch = cv2.remap(image_bgr, q[:, 0].reshape(n, n), q[:, 1].reshape(n, n), cv2.INTER_LINEAR)
    patch = cv2.GaussianBlur(patch.astype(np.float32), (0, 0), 0.7)
    gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)
    mask = visible(pts)
    mask = mask.reshape(n, n).astype(np.float32)
    gxm = gx * mask[:, :, None]
    gym = gy * mask[:, :, None]
    out = []
    c0 = (n - 1) / 2
    s_px = int(round(RING_SEARCH_MM / RING_STEP_MM))
    sizes = ("small", "large")
    # the radial colour derivative averaged along the ring, per channel, then its length: a real outline keeps
    # one sign all round (wink against felt), pixel noise averages away; per size the ring's visible weight and
    # the three channels' radial sums, all correlated at once (only the centres within the search radius)
    planes = np.concatenate([mask[None], np.moveaxis(gxm, 2, 0), np.moveaxis(gym, 2, 0)])
    terms = []
    for size in sizes:
        k, kc, ks = _ring_kernel(RADII_MM[size] / RING_STEP_MM)
        terms += [[(0, k)], *[[(1 + ch, kc), (4 + ch, ks)] for ch in range(3)]]
    start, count = int(c0) - s_px, 2 * s_px + 1
    win = correlate_sums(planes, terms, start, count)
    for j, size in enumerate(sizes):
        den, r_ch = win[4 * j], win[4 * j + 1:4 * j + 4]
        num = np.sqrt(np.einsum("cij,cij->ij", r_ch, r_ch))
        resp = np.where(den >= RING_MIN_VISIBLE, num / np.maximum(den, 1e-6), 0.0)
        # the centre must also stay near the candidate: a mild prior against sliding along a straight edge
        i = int(np.argmax(resp))
        r, c = divmod(i, resp.shape[1])
        if resp[r, c] <= 0:
            return None
        cm = center_mm + (np.array([c, r], float) - s_px) * RING_STEP_MM
        out.append((float(resp[r, c]), cm))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def check_sizes(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, felt_class: int) -> None:
    """Re-decide the size of lone winks whose size the label image cannot show (felt-coloured, at the mat edge).

    A clear majority of outline edge for the other radius changes the size (and the coarse centre); a close
    call keeps the size but lowers the wink's confidence.
    """
    for w in winks:
        if w.potted:
            continue
        k = COLOR_NAMES.index(w.color) + 1
        edge_gap = min(MAT_HALF_LENGTH_MM - abs(w.center_mm[0]), MAT_HALF_WIDTH_MM - abs(w.center_mm[1]))
        if k != felt_class and edge_gap > LARGE_WINK_RADIUS_MM + 6.0:
            continue
        crowded = any(o is not w and not o.potted
                      and _dist(o.center_mm, w.center_mm) < o.radius_mm + w.radius_mm + 1.0 for o in winks)
        if crowded:
            continue
        res = ring_size_check(w, winks, image_bgr, camera)
        if res is None:
            continue
        s_small, s_large, c_small, c_large = res
        w.ring_strength = {"small": s_small, "large": s_large}
        cur, oth = (s_small, s_large) if w.size == "small" else (s_large, s_small)
        if oth > RING_SWITCH_RATIO * cur:
            w.size = "large" if w.size == "small" else "small"
            w.center_mm = c_large if w.size == "large" else c_small
        elif cur < RING_SWITCH_RATIO * oth:
            w.confidence = min(w.confidence, 0.6)
            w.size_confidence = min(w.size_confidence, 0.6)
