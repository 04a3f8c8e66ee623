"""A wink found where a pile's colours meet, placed again by the part of its disc that shows.

The label circle search places a wink where its colour's pixels best fill a circle. In a pile, a wink mostly
under another of a different colour shows only a crescent; when a wink of its own colour lies beside it, the two
colour regions make one, and the circle lands across their junction, millimetres off (tw_8183_001: a yellow
placed 7 mm off, over a blue that shows blue there, and over bare felt). The occlusion model is exact in plan:
what shows of a wink is its disc minus the winks above it, and where a found wink of another colour shows its
own colour, a wink there lies under it. So the wink's own-colour samples (those its same-colour neighbour does
not explain) are matched, by intersection over union, with what a disc of a known radius would show, at every
centre within a radius of where it was found (its colour read in Lab's chromatic plane against its twin's, since
a wink in a pile lies in the shade of the one over it). A wink whose disc already explains its colour where it
stands stays; one that does not moves only where a disc explains it clearly better, and its place is then that
of a crescent (flagged, as ``vision.crescents`` does). Only winks touching one of their own colour and
overlapping one of another are looked at (a pile's junction): a frame of lone winks pays nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import WINK_THICKNESS_MM
from vision.colour import COLOR_NAMES, ColourScene, lab_rows, nearest_hue
from vision.crescents import CrescentParams, wink_classes, felt_at, own_colour_shows, sample_bgr_at
from vision.ortho import OrthoGrid
from vision.winks import EDGE_BLUR_IMAGE_PX, RADII_MM, WinkCandidate, distances_mm


@dataclass(frozen=True, slots=True)
class EchoParams:
    """Refit parameters (mm unless named otherwise)."""

    step_mm: float = 0.5  # plan raster of the samples (as the crescent search)
    touch_mm: float = 1.0  # a same-colour neighbour this far apart at most makes one colour region with it
    overlap_mm: float = 2.0  # another colour's wink overlapping by this much at least: a pile
    min_iou: float = 0.55  # the moved disc's match with its colour (as ``CrescentParams.min_iou``)
    min_gain: float = 0.15  # ... better than where it was found by this much (IoU)
    min_shift_mm: float = 1.5  # a smaller move is the sub-pixel fit's business


#: Hue distance (deg) of a sample of a wink's colour (as ``CrescentParams.max_hue_deg``).
MAX_HUE_DEG = 30.0
#: Share of the wink's own chroma off the felt (Lab a, b) a sample of it keeps: half, a blend with the felt across
#: a blurred rim has less only beyond its middle.
MIN_CHROMA_SHARE = 0.5
#: Fewest samples of its hue that give a wink's colour here (a 0.5 mm raster: a few mm^2).
MIN_REFERENCE_SAMPLES = 16


def _iou(pts: np.ndarray, mine: np.ndarray, hidden: np.ndarray, inside: np.ndarray, centres: np.ndarray,
         r: float) -> np.ndarray:
    """IoU of what a disc at each of ``centres`` would show with ``mine`` (its colour). ``hidden``: samples where
    a found wink (``inside``: which) shows its own colour, so a wink there lies under it. One wink cannot be
    both over and under another: a disc whose colour shows inside found wink j lies over it, and j's own
    colour inside the disc is then a miss (as ``vision.crescents`` scores a lower wink)."""
    dx = pts[None, :, 0] - centres[:, None, 0]
    dy = pts[None, :, 1] - centres[:, None, 1]
    disc = dx * dx + dy * dy < r * r
    pred = disc & ~hidden[None, :]
    inter = (pred & mine[None, :]).sum(axis=1)
    union = (pred | mine[None, :]).sum(axis=1)
    for j in np.unique(inside[hidden]):
        over_j = (disc & (mine & (inside == j))[None, :]).any(axis=1)
        union += over_j * (disc & (hidden & (inside == j))[None, :]).sum(axis=1)
    return inter / np.maximum(union, 1)


def _iou_on_raster(pts: np.ndarray, n_side: int, step_mm: float, use: np.ndarray, mine: np.ndarray,
                   hidden: np.ndarray, inside: np.ndarray, centre_idx: np.ndarray, r: float) -> np.ndarray:
    """``_iou(pts[use], mine[use], hidden[use], inside[use], pts[centre_idx], r)`` when ``pts`` is a square raster
    (``n_side`` points a side, ``step_mm`` apart, row-major) and the centres are raster points: each count over a
    disc is a correlation of a raster image with the disc's offsets (a disc is the same set of offsets at every
    raster centre), so the ~10^7 point-centre tests become a few filters. Offsets whose distance is the radius
    within rounding (the brute force's float decides them, not the exact raster) are tested pointwise as it does,
    so the counts, whole numbers, are the same."""
    reach = int(np.floor(r / step_mm)) + 1
    o = np.arange(-reach, reach + 1)
    d2 = (o[None, :] * step_mm) ** 2 + (o[:, None] * step_mm) ** 2
    tol = 1e-6 * r * r
    kern = (d2 < r * r - tol).astype(np.float64)
    edge_b, edge_a = np.nonzero(np.abs(d2 - r * r) <= tol)
    edge_b, edge_a = edge_b - reach, edge_a - reach

    def disc_sums(ind: np.ndarray) -> np.ndarray:
        """Per centre, the count of ``ind`` (over all raster points, bool) within its disc."""
        img = ind.reshape(n_side, n_side).astype(np.float64)
        full = np.rint(cv2.filter2D(img, -1, kern, borderType=cv2.BORDER_CONSTANT)).reshape(-1)[centre_idx]
        out = full.astype(np.int64)
        for a, b in zip(edge_a.tolist(), edge_b.tolist()):
            cy, cx = np.divmod(centre_idx, n_side)
            ok = (cx + a >= 0) & (cx + a < n_side) & (cy + b >= 0) & (cy + b < n_side)
            p = np.where(ok, centre_idx + b * n_side + a, 0)
            dx = pts[p, 0] - pts[centre_idx, 0]
            dy = pts[p, 1] - pts[centre_idx, 1]
            out += ok & (dx * dx + dy * dy < r * r) & ind[p]
        return out

    mine_u, hidden_u = use & mine, use & hidden
    free = use & ~hidden
    inter = disc_sums(free & mine)
    union = disc_sums(free) + int(mine_u.sum()) - inter
    for j in np.unique(inside[hidden_u]):
        over_j = disc_sums(mine_u & (inside == j)) > 0
        union += over_j * disc_sums(hidden_u & (inside == j))
    return inter / np.maximum(union, 1)


def _own_reference(colours: np.ndarray, where: np.ndarray, k: int, cs: ColourScene) -> np.ndarray | None:
    """The wink colour ``k`` as it shows here: the median of the more saturated half of the samples ``where`` (its
    disc and its twin's) of that hue, so that the other colours over part of those discs do not bend it."""
    if not where.any():
        return None
    lab = lab_rows(np.clip(colours[where] * cs.gains_bgr, 0, 1))
    cls, hue_gap = nearest_hue(np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0, cs.hue_centres_deg)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    of_k = (cls == k) & (hue_gap <= MAX_HUE_DEG)
    if of_k.sum() < MIN_REFERENCE_SAMPLES:
        return None
    rich = of_k & (chroma >= np.median(chroma[of_k]))
    return np.median(colours[where][rich], axis=0)


def _own_colour(colours: np.ndarray, felt: np.ndarray, ref: np.ndarray, k: int, cs: ColourScene) -> np.ndarray:
    """Samples of the wink colour ``k``: of its hue, and off the felt in Lab's chromatic plane along the way to
    ``ref`` by at least ``MIN_CHROMA_SHARE`` of it. Lightness is left out: a wink in a pile lies in the shade
    of the one over it, darker than its twin in the open."""
    lab = lab_rows(np.clip(colours * cs.gains_bgr, 0, 1))
    felt_ab = lab_rows(np.clip(felt * cs.gains_bgr, 0, 1))[:, 1:]
    ref_ab = lab_rows(np.clip(ref[None, :] * cs.gains_bgr, 0, 1))[0, 1:]
    v = ref_ab - felt_ab
    vv = np.maximum((v * v).sum(axis=1), 1e-6)
    d = lab[:, 1:] - felt_ab
    along = (d * v).sum(axis=1) / vv
    cls, hue_gap = nearest_hue(np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0, cs.hue_centres_deg)
    return (cls == k) & (hue_gap <= MAX_HUE_DEG) & (along >= MIN_CHROMA_SHARE)


def refit_pile_echoes(cands: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene,
                      grid: OrthoGrid, params: EchoParams = EchoParams()) -> list[WinkCandidate]:
    """Move winks placed across a pile's colour junction to where what shows of their disc is their colour
    (see the module's docstring); returns the winks moved, whose place now rests on that crescent."""
    live = [c for c in cands if c.opening_fraction < 0.5]
    if len(live) < 3:
        return []
    ctr = np.array([c.center_mm for c in live])
    rad = np.array([c.radius_mm for c in live])
    gap = np.sqrt(((ctr[:, None, :] - ctr[None, :, :]) ** 2).sum(axis=2)) - rad[:, None] - rad[None, :]
    np.fill_diagonal(gap, np.inf)
    same = np.array([[a.color == b.color for b in live] for a in live])
    cp = CrescentParams(step_mm=params.step_mm)
    moved: list[WinkCandidate] = []
    for i, c in enumerate(live):
        if c.tilt_deg > 0:
            continue
        if not ((same[i] & (gap[i] <= params.touch_mm)).any() and (~same[i] & (gap[i] <= -params.overlap_mm)).any()):
            continue
        r_c = c.radius_mm
        half = 2.0 * RADII_MM["large"] + 2.0
        g = np.arange(-half, half + 1e-9, params.step_mm)
        gx, gy = np.meshgrid(g, g)
        pts = c.center_mm + np.column_stack([gx.ravel(), gy.ravel()])
        mmpp = camera.mm_per_px_at((float(c.center_mm[0]), float(c.center_mm[1])))
        blend = EDGE_BLUR_IMAGE_PX * mmpp
        near = [o for j, o in enumerate(live) if j != i and gap[i, j] < half]
        keep = np.ones(len(pts), bool)
        inside = np.full(len(pts), -1)
        # in its twin's disc its colour is the twin's, whatever other found disc overlaps there too (a wink
        # found under the twin: tw_8991_001's green-S2 under red-L1 took red-L1's red for red-S1's own)
        twin = np.zeros(len(pts), bool)
        for j, o in enumerate(near):
            d = distances_mm(pts, o.center_mm)
            keep &= np.abs(d - o.radius_mm) > blend  # a found rim's blur mixes two colours
            inside[d < o.radius_mm] = j
            if o.color == c.color:
                twin |= d < o.radius_mm
        k = COLOR_NAMES.index(c.color)
        colours = sample_bgr_at(image_bgr, camera, pts, WINK_THICKNESS_MM)
        felt = felt_at(cs.background_bgr, grid, pts)
        # its own colour as it shows in its disc and its twin's (a felt-hued wink too: read against the felt)
        ref = _own_reference(colours, (twin | (distances_mm(pts, c.center_mm) < r_c)) & keep, k, cs)
        if ref is None:
            continue
        own = _own_colour(colours, felt, ref, k, cs)
        # the other winks' colours (no upper wink's blur to discount: the found rims' bands are left out)
        cls = wink_classes(colours, felt, felt[0], cs, cp)
        # where another colour shows inside its found wink, a wink there is under it: it shows nothing there
        hidden = own_colour_shows(cls, inside, near) & ~own
        use = keep & ~twin
        hidden_all, inside_all = hidden, inside
        pts_u, mine, hidden, inside = pts[use], own[use], hidden[use], inside[use]
        if mine.sum() * params.step_mm ** 2 < cp.min_area_mm2:
            continue
        d_pts = distances_mm(pts, c.center_mm)
        best = None
        cur = 0.0
        for size, r in RADII_MM.items():
            at = np.flatnonzero(d_pts <= r_c)
            cg = pts[at]
            iou = _iou_on_raster(pts, len(g), params.step_mm, use, own, hidden_all, inside_all, at, r)
            j = int(np.argmax(iou))
            if best is None or iou[j] > best[0]:
                best = (float(iou[j]), size, cg[j])
            if size == c.size:
                cur = float(_iou(pts_u, mine, hidden, inside, c.center_mm[None, :], r)[0])
        iou, size, centre = best
        if cur >= params.min_iou or iou < params.min_iou or iou < cur + params.min_gain:
            continue
        if float(np.linalg.norm(centre - c.center_mm)) < params.min_shift_mm:
            continue
        c.center_mm = np.asarray(centre, float)
        c.size = size
        c.center_px = None
        c.confidence = min(c.confidence, cp.min_iou + 0.4 * iou)
        c.size_confidence = min(c.size_confidence, 0.6)
        moved.append(c)
    return moved
