"""A wink of one colour partly under (or over) a wink found of the same colour: two circles in one outline.

Two overlapping winks of one colour make one region whose outline is the union of two discs: along each ray
from the found wink's centre the outline lies at its own radius, or farther where the other disc shows
beyond it. The coarse centre of such a region is pulled towards the part that shows (about a millimetre and
a half), which is enough for the crescent search to call that part blur of the found wink's own rim. So the
outline is measured in the full-resolution image along rays, the found wink's centre is fitted to its own
rim only (the rays that reach beyond it are set aside: a second disc can only ever add to the outline), and
the rays that do reach well beyond it are the other wink's rim, fitted as a circle of each known radius.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, WINK_THICKNESS_MM
from vision.arc_size import UnionSplitParams, fit_known_radius, split_union, union_of_two
from vision.colour import COLOR_NAMES, ColourScene, blend_line
from vision.crescents import CrescentParams, felt_at, is_that_wink, sample_bgr_at, wink_classes
from vision.ortho import OrthoGrid
from vision.tilted_outline import TiltTestParams, inside_footprint, tilted_fit
from vision.winks import (RADII_MM, WinkCandidate, WinkDetectorParams, _dist, _sample_labels,
                          baseline_distance_mm, distances_mm)


@dataclass(frozen=True, slots=True)
class UnionRimParams:
    """Ray-outline parameters (mm unless named otherwise)."""

    n_rays: int = 90
    step_mm: float = 0.25  # sample spacing along a ray
    knots: int = 5  # projected points per ray (the rest interpolated)
    inside_mm: float = 3.0  # rays start this far inside the found wink's rim
    reach_mm: float = 10.0  # ... and end this far beyond it
    first_look_mm2: float = 8.0  # own-colour label area beyond the rim that calls for the ray search
    look_from_mm: float = 1.0  # ... looked for from this far beyond the (coarse) rim
    blend_px: float = 1.5  # blur width: an edge this close to another found wink is not this outline's
    trim_mm: tuple[float, ...] = (3.0, 2.0, 1.2, 0.8)  # graduated trimming of rays beyond the rim
    min_rim_rays: int = 24  # rays on the found wink's own rim needed to fit its centre
    excess_mm: float = 1.2  # a ray reaching this far beyond the fitted rim shows the other wink ...
    excess_px: float = 1.5  # ... and this many image pixels
    min_rays: int = 8  # contiguous rays showing the other wink (16 degrees at 90 rays)
    max_rms_mm: float = 0.45  # circle fit of the other wink's rim
    max_miss: float = 0.2  # share of the rays the fitted other disc should reach beyond the rim but does not
    same_blend: float = 0.35  # blend fraction (felt 0, wink 1) of the outline
    max_off_line: float = 0.35  # distance from the wink/felt blend line, in units of their difference
    mat_edge_clear_mm: float = 2.0  # the mat edge's band of mixed felt and table pixels (plus the blur)
    paint_clearance_mm: float = WinkDetectorParams().paint_clearance_mm  # baseline paint half-width plus blur
    tilt: TiltTestParams = TiltTestParams()  # when the outline is one tilted wink's
    tilt_inside_mm: float = 2.0  # a wink over another colour: rays from this far out of its centre ...
    tilt_min_felt_share: float = 0.55  # ... whose outline meets the felt on this share of them at least,
    tilt_own_share: float = 0.9  # ... and whose tilted footprint shows its own colour (of the winks' colours) ...
    tilt_inset_mm: float = 1.5  # ... this far inside its edge (blur, and the raised side's parallax)


def _edges(image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene, grid: OrthoGrid, w: WinkCandidate,
           u: np.ndarray, s: np.ndarray, params: UnionRimParams, inner_mm: float | None = None) -> np.ndarray:
    """Distance from ``w``'s centre to where its colour ends along each ray (NaN: no felt reached)."""
    pts = (w.center_mm[None, None, :] + s[None, :, None] * u[:, None, :]).reshape(-1, 2)
    # project a few knots per ray and interpolate between them (the lens is smooth over a few millimetres)
    kn = np.linspace(s[0], s[-1], params.knots)
    kp = (w.center_mm[None, None, :] + kn[None, :, None] * u[:, None, :]).reshape(-1, 2)
    q = camera.project_mm(np.column_stack([kp, np.full(len(kp), WINK_THICKNESS_MM)])).reshape(len(u), len(kn), 2)
    f = (s - s[0]) / (kn[1] - kn[0])
    k0 = np.minimum(f.astype(int), len(kn) - 2)
    wt = (f - k0)[None, :, None]
    q = (q[:, k0] * (1.0 - wt) + q[:, k0 + 1] * wt).reshape(-1, 2).astype(np.float32)
    bgr = cv2.remap(image_bgr, q[:, 0:1], q[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    bgr = bgr.reshape(-1, 3).astype(np.float32) / 255.0
    felt = felt_at(cs.background_bgr, grid, pts)
    inner = w.center_mm + ((w.radius_mm - params.inside_mm - 1.0) if inner_mm is None else inner_mm) * u
    wink_bgr = np.median(sample_bgr_at(image_bgr, camera, inner, WINK_THICKNESS_MM), axis=0)
    a, off, vv = blend_line(bgr, felt, wink_bgr)
    off = off / np.sqrt(np.maximum(vv, 1e-6))
    a = a.reshape(len(u), len(s))
    off = off.reshape(len(u), len(s))
    mine = (a >= params.same_blend) & (off < params.max_off_line)
    # a wink of this colour in another pose is lit otherwise (a flat glossy wink mirrors the lamp and looks
    # pale beside a tilted one): off this wink's blend line, but its calibrated hue is still this colour's
    _own_hue_where_it_counts(mine, bgr, felt, wink_bgr, cs, COLOR_NAMES.index(w.color))
    felt_like = (a < params.same_blend) & (off < params.max_off_line)
    stops = ~mine
    j = np.argmax(stops, axis=1)  # the first sample off the wink's colour on each ray
    rows = np.arange(len(u))
    good = stops[rows, j] & (j > 0) & felt_like[rows, j]  # left the wink for the felt (not another colour)
    jm = np.maximum(j - 1, 0)
    a0, a1 = a[rows, jm], a[rows, j]
    t = np.clip((a0 - params.same_blend) / np.maximum(a0 - a1, 1e-6), 0.0, 1.0)
    out = np.where(good, s[jm] + t * (s[j] - s[jm]), np.nan)
    return out


def _own_hue_where_it_counts(mine: np.ndarray, bgr: np.ndarray, felt: np.ndarray, wink_bgr: np.ndarray,
                             cs: ColourScene, k: int) -> None:
    """Add to ``mine`` (rays x samples) the samples whose calibrated hue is colour ``k`` (``wink_classes``), where
    that can move a ray's first sample off the wink: that sample alone on each ray (usually the felt beyond
    the rim, which ends the ray), then every sample of the few rays where it read as the wink's own colour.
    The first sample off ``mine`` on each ray is the one the whole rows' classes give, for a few reads."""
    n_rays, n_s = mine.shape
    first = np.argmax(~mine, axis=1)
    rows = np.flatnonzero(~mine[np.arange(n_rays), first])  # rays with a sample off the blend
    if len(rows) == 0:
        return
    idx = rows * n_s + first[rows]
    own = wink_classes(bgr[idx], felt[idx], wink_bgr, cs, CrescentParams()) == k
    mine[rows[own], first[rows[own]]] = True
    again = rows[own]  # the ray goes on past that sample: its other samples may end it, or not
    if len(again):
        idx = (again[:, None] * n_s + np.arange(n_s)[None, :]).ravel()
        own = wink_classes(bgr[idx], felt[idx], wink_bgr, cs, CrescentParams()) == k
        mine[again] |= own.reshape(len(again), n_s)


def _usable(e: np.ndarray, p: np.ndarray, near: list[WinkCandidate], grid: OrthoGrid,
            exclude_mask: np.ndarray | None, edge_clear_mm: float, blend_mm: float,
            params: UnionRimParams) -> np.ndarray:
    """The rays whose outline point (``p``, at distance ``e``) is the wink's own edge against the felt."""
    # near the mat's edge, an outline point in its band (felt mixed with table) says nothing; the rest of
    # the outline still does, so only those rays are set aside
    usable = (np.isfinite(e) & (np.abs(np.nan_to_num(p[:, 0])) < MAT_HALF_LENGTH_MM - edge_clear_mm)
              & (np.abs(np.nan_to_num(p[:, 1])) < MAT_HALF_WIDTH_MM - edge_clear_mm))
    # nor is an outline against a baseline's paint (a bright line of unknown width, blended with the wink
    # it keeps the wink's hue) the wink's own
    pn = np.nan_to_num(p)
    usable &= baseline_distance_mm(pn) > params.paint_clearance_mm
    for o in near:
        usable &= ~(distances_mm(pn, o.center_mm) < o.radius_mm + blend_mm + 0.5)
    if exclude_mask is not None:
        cp = np.rint(grid.ortho_from_table(np.nan_to_num(p, nan=0.0))).astype(int)
        cp = np.clip(cp, 0, [exclude_mask.shape[1] - 1, exclude_mask.shape[0] - 1])
        usable &= ~exclude_mask[cp[:, 1], cp[:, 0]]
    return usable


def _runs(mask: np.ndarray) -> list[np.ndarray]:
    """Index runs of True in a circular mask."""
    n = len(mask)
    if mask.all():
        return [np.arange(n)]
    start = int(np.flatnonzero(~mask)[0])
    runs, cur = [], []
    for k in range(1, n + 1):
        i = (start + k) % n
        if mask[i]:
            cur.append(i)
        elif cur:
            runs.append(np.array(cur))
            cur = []
    if cur:
        runs.append(np.array(cur))
    return runs


def union_rim_winks(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene,
                    grid: OrthoGrid, exclude_mask: np.ndarray | None = None,
                    params: UnionRimParams = UnionRimParams()) -> list[WinkCandidate]:
    """New winks seen only as the part of an outline beyond a found wink of their colour.

    A found wink whose own rim fits well is re-centred on that rim (its coarse centre was pulled towards the
    other wink's part). ``exclude_mask`` (ortho grid) marks the pot and its image.
    """
    live = [w for w in winks if not w.potted]
    found: list[WinkCandidate] = []
    ang = np.linspace(0.0, 2 * np.pi, params.n_rays, endpoint=False)
    u = np.column_stack([np.cos(ang), np.sin(ang)])
    for w in live:
        k = COLOR_NAMES.index(w.color) + 1
        if k == cs.mat_class:
            # The felt's own hue: its outline is not told from the felt's bands by the blend level alone; the
            # rim edges checked in chromaticity (``arc_size``) can say when a lone blob is two discs' union.
            # (two winks read as one are read as the larger size: a small one's disc cannot hold their union)
            pair = None if w.size != "large" else split_union(w, [*live, *found], image_bgr, camera, cs, grid,
                                                               exclude_mask)
            if pair is not None:
                found.append(_split(w, pair))
            continue
        c = w.center_mm
        r_w = w.radius_mm
        if abs(c[0]) > MAT_HALF_LENGTH_MM - r_w or abs(c[1]) > MAT_HALF_WIDTH_MM - r_w:
            continue  # overhanging the mat's edge: its outline there is against the table
        mmpp = camera.mm_per_px_at((float(c[0]), float(c[1])))
        blend = params.blend_px * mmpp
        edge_clear = params.mat_edge_clear_mm + blend
        # first look, in the label image: own-colour pixels beyond the rim and its blur
        ring = c + (r_w + params.look_from_mm + np.arange(0.0, params.reach_mm - 1.0, 1.0))[None, :, None] * u[:, None, :]
        ring = ring.reshape(-1, 2)
        cr = np.rint(grid.ortho_from_table(ring)).astype(int)
        ok = (cr[:, 0] >= 0) & (cr[:, 0] < cs.labels.shape[1]) & (cr[:, 1] >= 0) & (cr[:, 1] < cs.labels.shape[0])
        own = np.zeros(len(ring), bool)
        own[ok] = cs.labels[cr[ok, 1], cr[ok, 0]] == k
        own &= ((np.abs(ring[:, 0]) < MAT_HALF_LENGTH_MM - edge_clear)
                & (np.abs(ring[:, 1]) < MAT_HALF_WIDTH_MM - edge_clear))
        ring_area_mm2 = 2 * np.pi * (r_w + params.reach_mm / 2) / params.n_rays  # per sample (1 mm deep)
        if own.sum() * ring_area_mm2 < params.first_look_mm2:
            # no second wink of its colour beside it; but one lying on a wink of another colour is tilted, and
            # read as a flat disc its footprint reaches millimetres over the wink below (where the lens test
            # then sees that wink's colour and calls it the upper)
            _tilted_over_other(w, image_bgr, camera, cs, grid, [*live, *found], exclude_mask, edge_clear, blend,
                               mmpp, u, params)
            continue
        s = np.arange(r_w - params.inside_mm, r_w + params.reach_mm + 1e-9, params.step_mm)
        e = _edges(image_bgr, camera, cs, grid, w, u, s, params)
        p = c + e[:, None] * u
        others = [o for o in [*live, *found] if o is not w and _dist(o.center_mm, c) < r_w + 30.0]
        usable = _usable(e, p, others, grid, exclude_mask, edge_clear, blend, params)
        if usable.sum() < params.min_rim_rays:
            continue
        seen_all_round = (np.isfinite(e).mean() >= params.tilt.min_outline_share
                          and usable.sum() >= 2 * params.tilt.min_outline_share * params.min_rim_rays)
        if seen_all_round:
            # an outline seen all round that is no circle of either size may be one tilted wink (22 x 17 mm at
            # 39 degrees), not two flat ones
            got = tilted_fit(p[usable], c, RADII_MM, camera.center_mm, WINK_THICKNESS_MM, mmpp,
                             [(o.center_mm, o.radius_mm) for o in others if o.color != w.color], params.tilt)
            if got is not None:
                w.size, w.center_mm = got[0], got[1].center_mm
                w.outline_tilt = (got[1].tilt_deg, got[1].tilt_azimuth_deg)
                continue
        # the found wink's own rim: trim the rays that reach beyond it, more tightly as the centre settles
        centre = c.copy()
        rim = usable.copy()
        bias = 0.0
        pn = np.nan_to_num(p)
        for t in params.trim_mm:
            centre, bias, _ = fit_known_radius(p[rim], r_w, centre, fit_bias=True)
            res_all = distances_mm(pn, centre) - r_w - bias
            rim = usable & (res_all < t) & (res_all > -t - 1.0)
            if rim.sum() < params.min_rim_rays:
                break
        if rim.sum() < params.min_rim_rays:
            found += _two_discs(w, p, usable, mmpp, others, params)
            continue
        centre, bias, _ = fit_known_radius(p[rim], r_w, centre, fit_bias=True)
        res_all = distances_mm(pn, centre) - r_w - bias
        beyond = usable & (res_all > max(params.excess_mm, params.excess_px * mmpp))
        runs = [rn for rn in _runs(beyond) if len(rn) >= params.min_rays]
        new: list[WinkCandidate] = []
        for rn in runs:
            q = p[rn]
            best = None
            for size, r in RADII_MM.items():
                mid = q.mean(axis=0)
                dirn = (mid - centre) / max(_dist(mid, centre), 1e-6)
                c0 = mid - r * dirn
                cl, _, rq = fit_known_radius(q, r + bias, c0)
                rms = float(np.sqrt(np.mean(rq ** 2)))
                if best is None or rms < best[0]:
                    best = (rms, size, cl)
            rms, size, cl = best
            r = RADII_MM[size]
            d = _dist(cl, centre)
            if rms > max(params.max_rms_mm, 1.0 * mmpp) or not (abs(r - r_w) + 1.0 < d < r + r_w - 1.0):
                continue
            # the union of the two discs predicts which rays reach beyond the rim: they must, and few others
            g = cl - centre
            b = u @ g
            disc = b * b - (g @ g - r * r)
            reach = np.where(disc > 0, b + np.sqrt(np.maximum(disc, 0.0)), -np.inf) - r_w
            want = usable & (reach > max(params.excess_mm, params.excess_px * mmpp) + 0.5)
            if want.sum() == 0 or float((want & ~beyond).sum()) / want.sum() > params.max_miss:
                continue
            if any(o.color == w.color and _dist(o.center_mm, cl) < o.radius_mm + r - 2.0
                   for o in [*others, *new] if o is not w):
                continue
            n = WinkCandidate(color=w.color, size=size, center_mm=cl, votes=1.0 - rms)
            n.edge_support = len(rn) / params.n_rays
            n.own_fraction = 1.0
            n.score = n.votes
            # most of it is inferred from an arc of its rim; the size from that arc's curvature
            n.confidence = min(n.confidence, 0.9)
            new.append(n)
        if new:
            w.center_mm = centre
            found += new
        else:
            found += _two_discs(w, p, usable, mmpp, others, params)
    return found


_GRID_MM = 0.5  # sample spacing of the colour reads over a footprint


def _tilted_over_other(w: WinkCandidate, image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene,
                       grid: OrthoGrid, winks: list[WinkCandidate], exclude_mask: np.ndarray | None,
                       edge_clear_mm: float, blend_mm: float, mm_per_px: float, u: np.ndarray,
                       params: UnionRimParams) -> None:
    """``w`` re-read as a tilted disc when it overlaps a wink of another colour and its outline against the felt
    (most of it: the part over the lower wink meets that wink's colour, which says nothing of whose rim it is)
    is no circle of either size but a tilted disc rising over that wink (``tilted_fit``)."""
    c = w.center_mm
    k = COLOR_NAMES.index(w.color) + 1
    # the wink it would lie on: one of another colour it overlaps, inside whose disc its own colour shows (a wink
    # under another is hidden there)
    below = []
    for o in winks:
        if o is w or o.color == w.color or _dist(o.center_mm, c) >= o.radius_mm + w.radius_mm - 1.0:
            continue
        r_in = o.radius_mm - params.tilt_inset_mm
        g = o.center_mm + np.mgrid[-r_in:r_in:_GRID_MM, -r_in:r_in:_GRID_MM].reshape(2, -1).T
        g = g[distances_mm(g, o.center_mm) < r_in]
        own_mm2 = float((_sample_labels(cs.labels, grid.ortho_from_table(g)) == k).sum()) * _GRID_MM ** 2
        if own_mm2 >= params.first_look_mm2:
            below.append(o)
    if not below:
        return
    # rays from near the centre: a tilted wink's minor semi-axis (6 mm for a small one at 40 degrees) may lie
    # inside the flat disc's usual starting circle
    s = np.arange(params.tilt_inside_mm, w.radius_mm + params.reach_mm + 1e-9, params.step_mm)
    e = _edges(image_bgr, camera, cs, grid, w, u, s, params, inner_mm=params.tilt_inside_mm)
    p = c + e[:, None] * u
    others = [o for o in winks if o is not w and _dist(o.center_mm, c) < w.radius_mm + 30.0]
    # (an outline point beside a wink of another colour is this wink's edge against the felt: only the union
    # with a wink of its own colour blurs its outline)
    usable = _usable(e, p, [o for o in others if o.color == w.color], grid, exclude_mask, edge_clear_mm,
                     blend_mm, params)
    if usable.mean() < params.tilt_min_felt_share:
        return
    got = tilted_fit(p[usable], c, RADII_MM, camera.center_mm, WINK_THICKNESS_MM, mm_per_px,
                     [(o.center_mm, o.radius_mm) for o in others if o.color != w.color], params.tilt)
    if got is None:
        return
    # a wink lying on the other shows its colour over its whole footprint; one under it is cut by the other's
    # rim, and its outline against the felt may fit a tilted disc that reaches over the other's colour
    t = got[1]
    r = RADII_MM[got[0]]
    g = t.center_mm + np.mgrid[-r:r:_GRID_MM, -r:r:_GRID_MM].reshape(2, -1).T
    g = g[inside_footprint(g, t.center_mm, r, t.tilt_deg, t.tilt_azimuth_deg, inset_mm=params.tilt_inset_mm)]
    lab = _sample_labels(cs.labels, grid.ortho_from_table(g))
    coloured = (lab >= 1) & (lab <= len(COLOR_NAMES)) & (lab != cs.mat_class)
    if coloured.sum() == 0 or float((lab[coloured] == k).mean()) < params.tilt_own_share:
        return
    w.size, w.center_mm = got[0], t.center_mm
    w.outline_tilt = (t.tilt_deg, t.tilt_azimuth_deg)


def _split(w: WinkCandidate, pair: list[tuple[str, np.ndarray]]) -> WinkCandidate:
    """``w`` becomes the first of two winks read as one (size, plan centre); the second is returned."""
    (s1, c1), (s2, c2) = pair
    w.size, w.center_mm = s1, c1
    n = WinkCandidate(color=w.color, size=s2, center_mm=c2, votes=w.votes)
    n.edge_support, n.own_fraction, n.score = w.edge_support, 1.0, w.score
    n.confidence = min(n.confidence, 0.9)
    return n


def _two_discs(w: WinkCandidate, p: np.ndarray, usable: np.ndarray, mm_per_px: float,
               others: list[WinkCandidate], params: UnionRimParams) -> list[WinkCandidate]:
    """A found wink centred between two of its colour (two discs offset by half a radius or so): no rim of its
    own to trim to, but its outline, seen nearly all round, is the union of two discs of the known radii and
    no single circle. ``w`` becomes the one nearer its centre; the other is returned."""
    split = UnionSplitParams(n_rays=params.n_rays)
    if usable.sum() * 360.0 / params.n_rays < split.min_arc_deg:
        return []
    pair = union_of_two(p[usable] - w.center_mm, mm_per_px, split)
    if pair is None:
        return []
    pair = sorted(((s, w.center_mm + c) for s, c in pair), key=lambda sc: float(np.linalg.norm(sc[1] - w.center_mm)))
    # one of the two is a wink found already when it reaches no further than that wink's rim and blur (the
    # crescent search's test of the same wink): a disc that does owns outline beyond that wink, which the usable
    # rays (clear of every found wink) measured, so it is a wink of a pile lying on (or under) it, not it
    crescent = CrescentParams()
    blend = params.blend_px * mm_per_px
    if any(o.color == w.color and is_that_wink(o, c, RADII_MM[s], blend, crescent) for o in others for s, c in pair):
        return []
    return [_split(w, pair)]
