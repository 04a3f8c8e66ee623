"""Two winks of the felt's hue read as one: does one disc explain the whole pigment blob around a found wink?

A green wink on green felt shows in the picture mostly as extra chroma along the felt's own hue; its rim blends
into the felt over the camera's blur. Two such winks a few millimetres apart (waiting in a corner) then make one
pigment blob about 37 mm long, and the label circle search places one small wink between them (tw_102_002), or
one wink a few millimetres off where a baseline hides a side of it and misses its neighbour at the mat's edge
(rigA_03). A disc of a known radius (TW 2: 8 or 11 mm) cannot explain such a blob; the union of two can. Here
the pigment is read in the full image on a plan raster at the winks' top (Lab chroma along the direction from the
felt to the found wink's core, so a shadow, which moves the felt mostly in lightness, and white paint, which
lowers its chroma, do not count), and fitted by least squares with one blurred disc and with the union of two, of
known radii. Two discs replace the wink when they leave less of the pigment than one by more than half a small
wink's area at half the pigment's level, each is a disc of pigment of the wink's own hue, clear of the winks found,
and the sizes fit TW 2's inventory (the likelier small radius unless the fit says large by that same margin).
Only lone winks are looked at, and only where the labels give the felt's class to a few pixels beyond them.

Where they show only neutral foreground there (the second wink's pigment left neutral), the two winks may lie
one on the other (a squop of the felt's hue, tw_4850_001, tw_6365_001): their union adds little area to one
disc, but its length along its long axis (the centres' distance plus both radii, up to 37 mm) is more than any
wink's 22 mm diameter. A blob whose length no disc can hold is fitted with two overlapping discs that must make
that length and explain the pigment better than one disc, then refitted with each wink's own pigment level, the
upper's over the lower's (a raised wink is lit otherwise; with one level the lower slides under the upper). Each
disc must show the wink's hue by its part beyond the other; no other wink's centre may lie on it. Sizes stay
flagged for the colour's set; orders are the pile modules'.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import LARGE_WINKS_PER_COLOR, WINK_THICKNESS_MM
from vision.colour import CLASS_NEUTRAL, COLOR_NAMES, ColourScene
from vision.felt_cores import _sample_ab
from vision.ortho import OrthoGrid
from vision.rim_check import RIM_FOUND_CONFIDENCE, _on_felt
from vision.winks import EDGE_BLUR_IMAGE_PX, RADII_MM, WinkCandidate, _dist, _on_mat, distances_mm

#: Plan raster step of the pigment samples (mm): finer than a 4K pixel's footprint on the mat is not needed.
RASTER_MM = 1.0
#: The window reaches this far beyond the found wink's rim: a neighbour of either size a few mm away fits in it.
WINDOW_BEYOND_MM = 2.0 * RADII_MM["large"] + 4.0
#: Pigment level of the found wink: this percentile of its disc's samples (its core, wherever in the disc).
PIGMENT_PERCENTILE = 90.0
#: A pigment level this many felt noise sigmas above the felt: a wink's core, not a speck of texture.
MIN_PIGMENT_SIGMAS = 3.0
#: Smallest connected pigment area counted (mm^2): a third of a small wink; felt texture makes specks.
MIN_BLOB_MM2 = np.pi * RADII_MM["small"] ** 2 / 3.0
#: Two discs must explain the pigment of this much more area than one (mm^2; at half the pigment's level): half a
#: small wink, as must pigment left beyond the found wink before any fit.
MIN_GAIN_MM2 = 0.5 * np.pi * RADII_MM["small"] ** 2
#: Each disc of the pair holds pigment over this share of its inner disc (radius less one blur width).
MIN_DISC_PIGMENT = 0.7
#: Each disc's chroma off the felt may turn from the found wink's by this ratio (sideways over along, ~27 deg).
MAX_HUE_TURN_RATIO = 0.5
#: The two discs may overlap by this much (mm) at most: more is a squop, read by the pile modules.
MAX_PAIR_OVERLAP_MM = 2.0
#: Fewest ortho pixels of the felt's class beyond the found wink that may be a second wink's core (as
#: ``vision.felt_cores`` seeds its search).
MIN_CORE_PX = 3
#: A blob longer than a large wink's diameter by this much (mm, beyond the blur either end) is no one disc.
SPAN_MARGIN_MM = 2.0
#: A squopped pair's length (centre distance plus both radii) matches the blob's to within this (mm).
MAX_SPAN_ERROR_MM = 3.0
#: A squopped pair's centres lie this far apart at least (closer: one disc within the blur, as ``arc_size``'s).
MIN_APART_MM = 3.0
#: Each disc of a squopped pair shows this share of its inner disc clear of other winks found.
MIN_SEEN_SHARE = 0.4
#: Centre search steps of the outline fit (mm): coarse to the raster's half.
SEARCH_STEPS_MM = (2.0, 1.0, 0.5)


def _model(pts: np.ndarray, discs: list[tuple[np.ndarray, float]], blur_mm: float) -> np.ndarray:
    """Pigment share of each sample under the union of ``discs`` seen through a blur ``blur_mm`` wide (a linear
    ramp across each rim)."""
    m = np.zeros(len(pts))
    for c, r in discs:
        d = np.sqrt(((pts - c) ** 2).sum(axis=1)) - r
        m = np.maximum(m, np.clip(0.5 - d / blur_mm, 0.0, 1.0))
    return m


def _residual(pts: np.ndarray, s: np.ndarray, discs: list[tuple[np.ndarray, float]], blur_mm: float) -> float:
    """Sum of squares of the pigment ``s`` left by the discs' blurred union at its best-fitting level."""
    m = _model(pts, discs, blur_mm)
    mm = float(m @ m)
    a = float(s @ m) / mm if mm > 0 else 0.0
    return float(((s - a * m) ** 2).sum())


def _residual_squop(pts: np.ndarray, s: np.ndarray, discs: list[tuple[np.ndarray, float]], blur_mm: float) -> float:
    """As ``_residual`` for a wink (the first disc) lying on another (the second): each shows its own pigment
    level, the upper's over the lower's where it covers it (a raised, tilted upper is lit otherwise)."""
    (cu, ru), (cl, rl) = discs
    mu = np.clip(0.5 - (np.sqrt(((pts - cu) ** 2).sum(axis=1)) - ru) / blur_mm, 0.0, 1.0)
    ml = np.clip(0.5 - (np.sqrt(((pts - cl) ** 2).sum(axis=1)) - rl) / blur_mm, 0.0, 1.0) * (1.0 - mu)
    a = np.column_stack([mu, ml])
    coef = np.maximum(np.linalg.lstsq(a, s, rcond=None)[0], 0.0)
    return float(((s - a @ coef) ** 2).sum())


def _fit(pts: np.ndarray, s: np.ndarray, centres: list[np.ndarray], radii: list[float],
         blur_mm: float, residual=_residual) -> tuple[float, list]:
    """Centres of discs of the given radii that fit the pigment best, by coordinate search coarse to fine."""
    cs = [np.asarray(c, float).copy() for c in centres]
    best = residual(pts, s, list(zip(cs, radii)), blur_mm)
    for step in SEARCH_STEPS_MM:
        moved = True
        while moved:
            moved = False
            for i in range(len(cs)):
                for dx, dy in product((-step, 0.0, step), repeat=2):
                    if dx == 0.0 and dy == 0.0:
                        continue
                    trial = [*cs]
                    trial[i] = cs[i] + (dx, dy)
                    res = residual(pts, s, list(zip(trial, radii)), blur_mm)
                    if res < best:
                        best, cs, moved = res, trial, True
    return best, cs


def _two_means(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two cluster centres of plan points: split along their long axis, then a few Lloyd steps."""
    mu = p.mean(axis=0)
    _, vecs = np.linalg.eigh(np.cov((p - mu).T))
    u = vecs[:, 1]
    a, b = mu + u, mu - u
    for _ in range(8):
        near_a = ((p - a) ** 2).sum(axis=1) <= ((p - b) ** 2).sum(axis=1)
        if near_a.all() or not near_a.any():
            break
        a, b = p[near_a].mean(axis=0), p[~near_a].mean(axis=0)
    return a, b


def _pigment_blob(s: np.ndarray, ok: np.ndarray, level: float, n: int) -> np.ndarray:
    """Raster samples above half the pigment ``level``, in connected parts no smaller than a third of a wink."""
    raw = (ok & (s > 0.5 * level)).reshape(n, n).astype(np.uint8)
    _, lab, stats, _ = cv2.connectedComponentsWithStats(raw, connectivity=8)
    big = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] * RASTER_MM ** 2 >= MIN_BLOB_MM2)
    return np.isin(lab.ravel(), big[big > 0]) & ok


def split_twin_blobs(cands: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene,
                     grid: OrthoGrid, exclude: Callable[[np.ndarray], np.ndarray] | None = None) -> list[WinkCandidate]:
    """``cands`` with each lone wink of the felt's hue whose pigment blob two discs explain replaced by those two
    (see the module's docstring). ``exclude(plan points)`` marks ground that shows no felt (the pot)."""
    if not cs.mat_class:
        return cands
    color = COLOR_NAMES[cs.mat_class - 1]
    out = list(cands)
    for c in cands:
        if (c.color != color or c.potted or c.opening_fraction >= 0.5 or c.tilt_deg > 0 or c.above
                or c.order_confidence):
            continue
        others = [o for o in out if o is not c and not o.potted]
        if any(_dist(o.center_mm, c.center_mm) < o.radius_mm + c.radius_mm + 1.0 for o in others):
            continue  # a wink in a group: its pigment is shared, and its neighbours' modules read it
        core_px, fg_mm2 = _beyond(c, others, cs, grid, camera)
        if core_px < MIN_CORE_PX and fg_mm2 < MIN_GAIN_MM2:
            continue  # nothing of a second wink's colour beside it
        # no felt-class core beyond it: a second wink of its hue can only be read from the blob's length, first
        # on the labels (cheap), then on the pigment
        overlap = core_px < MIN_CORE_PX
        if overlap and _label_span_mm(c, cs, grid) < 2.0 * RADII_MM["large"] + SPAN_MARGIN_MM:
            continue
        pair = _twin_pair(c, others, image_bgr, camera, exclude, overlap)
        if pair is not None:
            out = [o for o in out if o is not c] + pair
    return out


def _reaching(others: list[WinkCandidate], centre_mm: np.ndarray, half_mm: float,
              spread_mm: float) -> list[WinkCandidate]:
    """The winks whose disc (with its blur) can reach the square window of half side ``half_mm`` about
    ``centre_mm``: the others mask nothing in it (a frame holds some twenty winks, the window a few)."""
    cx, cy = float(centre_mm[0]), float(centre_mm[1])
    # (the larger of the two offsets, as np.max(np.abs(...)) gives it, on Python floats: a call per wink)
    return [o for o in others
            if max(abs(o.center_mm[0] - cx), abs(o.center_mm[1] - cy)) <= half_mm + o.radius_mm + spread_mm]


def _label_window(c: WinkCandidate, cs: ColourScene, grid: OrthoGrid) -> tuple[np.ndarray, int, int]:
    """The labels in the square window about the found wink that a neighbour of either size fits in, and the
    window's first row and column."""
    half = c.radius_mm + WINDOW_BEYOND_MM
    lo = np.floor(grid.ortho_from_table(c.center_mm - half)[0]).astype(int)
    hi = np.ceil(grid.ortho_from_table(c.center_mm + half)[0]).astype(int)
    (c0, c1), (r0, r1) = sorted((lo[0], hi[0])), sorted((lo[1], hi[1]))
    c0, r0 = max(c0, 0), max(r0, 0)
    lab = cs.labels[r0:r1 + 1, c0:c1 + 1]
    return lab, r0, c0


def _beyond(c: WinkCandidate, others: list[WinkCandidate], cs: ColourScene, grid: OrthoGrid,
            camera: CameraModel) -> tuple[int, float]:
    """What the labels show in the window beyond the found wink (and its blur) and the other winks: pixels of the
    felt's class (a second wink's core), and the area (mm^2) of the felt's class or neutral foreground (a second
    wink's pigment the labels left neutral). Cheap, on the coarse labels; the pigment fit reads the image."""
    half = c.radius_mm + WINDOW_BEYOND_MM
    lab, r0, c0 = _label_window(c, cs, grid)
    rr, cc = np.nonzero((lab == cs.mat_class) | (lab == CLASS_NEUTRAL))
    if len(rr) < MIN_CORE_PX:
        return 0, 0.0
    pts = grid.table_from_ortho(np.column_stack([cc + c0, rr + r0]))
    spread = EDGE_BLUR_IMAGE_PX * camera.mm_per_px_at((float(c.center_mm[0]), float(c.center_mm[1])))
    free = distances_mm(pts, c.center_mm) > c.radius_mm + spread
    for o in _reaching(others, c.center_mm, half + grid.mm_per_px, spread):  # the window's pixels reach one further
        free &= distances_mm(pts, o.center_mm) > o.radius_mm + spread
    core = int((free & (lab[rr, cc] == cs.mat_class)).sum())
    return core, float(free.sum()) * grid.mm_per_px ** 2


def _label_span_mm(c: WinkCandidate, cs: ColourScene, grid: OrthoGrid) -> float:
    """Length of the labels' part of the felt's class or neutral foreground joined to the found wink, in its
    window."""
    lab, r0, c0 = _label_window(c, cs, grid)
    _, comp = cv2.connectedComponents(((lab == cs.mat_class) | (lab == CLASS_NEUTRAL)).astype(np.uint8),
                                      connectivity=8)
    cp = np.rint(grid.ortho_from_table(c.center_mm[None])[0]).astype(int) - (c0, r0)
    if not (0 <= cp[1] < comp.shape[0] and 0 <= cp[0] < comp.shape[1]) or comp[cp[1], cp[0]] == 0:
        return 0.0
    rr, cc = np.nonzero(comp == comp[cp[1], cp[0]])
    return _span_mm(grid.table_from_ortho(np.column_stack([cc + c0, rr + r0])))


def _span_mm(p: np.ndarray) -> float:
    """Length of plan samples ``p`` (raster cells) along their long axis."""
    if len(p) < 3:
        return 0.0
    _, vecs = np.linalg.eigh(np.cov((p - p.mean(axis=0)).T))
    t = p @ vecs[:, 1]
    return float(t.max() - t.min()) + RASTER_MM


def _twin_pair(c: WinkCandidate, others: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
               exclude: Callable[[np.ndarray], np.ndarray] | None, overlap: bool = False
               ) -> list[WinkCandidate] | None:
    """Two discs of known radii that explain the pigment blob around ``c``; ``overlap``: only a squopped pair,
    read from the blob's length (see the module's docstring)."""
    half = c.radius_mm + WINDOW_BEYOND_MM
    ax = np.arange(-half, half + 1e-9, RASTER_MM)
    gx, gy = np.meshgrid(ax, ax)
    n = len(ax)
    pts = c.center_mm + np.column_stack([gx.ravel(), gy.ravel()])
    mmpp = camera.mm_per_px_at((float(c.center_mm[0]), float(c.center_mm[1])))
    spread = EDGE_BLUR_IMAGE_PX * mmpp
    ok = _on_felt(pts, camera)
    if exclude is not None:
        ok &= ~exclude(pts)
    for o in _reaching(others, c.center_mm, half, spread):
        ok &= ((pts - o.center_mm) ** 2).sum(axis=1) > (o.radius_mm + spread) ** 2
    own = ((pts - c.center_mm) ** 2).sum(axis=1) < c.radius_mm ** 2
    if (ok & own).sum() < 0.5 * own.sum() or (ok & ~own).sum() < own.sum():
        return None
    ab = _sample_ab(image_bgr, camera, pts, WINK_THICKNESS_MM)
    felt_ab = np.median(ab[ok & ~own], axis=0)
    # the pigment's direction from the felt: the found wink's most distinct samples (its core)
    dist = distances_mm(ab, felt_ab)
    inner = ok & own
    core = inner & (dist >= np.percentile(dist[inner], 75.0))
    v = np.median(ab[core], axis=0) - felt_ab
    if np.linalg.norm(v) < 1e-6:
        return None
    u = v / np.linalg.norm(v)
    s = (ab - felt_ab) @ u
    felt_s = s[ok & ~own]
    # the felt's noise from its lower half alone: pigment (neighbours, blur) only adds to the upper one
    sigma = float(np.median(felt_s) - np.percentile(felt_s, 15.87))
    level = float(np.percentile(s[inner], PIGMENT_PERCENTILE))
    if level < MIN_PIGMENT_SIGMAS * max(sigma, 1e-6):
        return None
    blob = _pigment_blob(s, ok, level, n)
    # a wink found between two shows less than their pigment's level: the level is the blob's own, and the
    # outline is where the blurred pigment falls to half of it
    if blob.any():
        level = max(level, float(np.percentile(s[blob], PIGMENT_PERCENTILE)))
        blob = _pigment_blob(s, ok, level, n)
    # pigment the found wink (with its blur) leaves unexplained: nothing to split when it is less than half a wink
    beyond = ((pts - c.center_mm) ** 2).sum(axis=1) > (c.radius_mm + spread) ** 2
    if (blob & beyond).sum() * RASTER_MM ** 2 < MIN_GAIN_MM2:
        return None
    span = 0.0
    if overlap:
        # the blob's part joined to the found wink: longer than any one disc (its half-level outline is the rim)
        _, lab = cv2.connectedComponents(blob.reshape(n, n).astype(np.uint8), connectivity=8)
        k = lab.ravel()[int(np.argmin(((pts - c.center_mm) ** 2).sum(axis=1)))]
        span = _span_mm(pts[lab.ravel() == k]) if k > 0 else 0.0
        if span < 2.0 * RADII_MM["large"] + 2.0 * spread + SPAN_MARGIN_MM:
            return None
    # only samples a disc placed on the blob can reach weigh in the fit (the rest add the same to every hypothesis)
    reach = RADII_MM["large"] + 2.0 * spread + max(SEARCH_STEPS_MM)
    bp = pts[blob]
    near = ok & np.all((pts >= bp.min(axis=0) - reach) & (pts <= bp.max(axis=0) + reach), axis=1)
    q, b, sq, dq = pts[near], blob[near], s[near], ab[near] - felt_ab
    blur_mm = 2.0 * spread
    one = min((_fit(q, sq, [c.center_mm], [r], blur_mm) for r in RADII_MM.values()), key=lambda f: f[0])[0]
    a0, b0 = _two_means(q[b])
    # TW 2: two large winks per colour; those found already leave so many for the pair
    large_left = LARGE_WINKS_PER_COLOR - sum(o.color == c.color and o.size == "large" for o in others)
    fits = []
    for ra, rb in product(RADII_MM.values(), repeat=2):
        if (ra, rb).count(RADII_MM["large"]) > large_left:
            continue
        res, ctrs = _fit(q, sq, [a0, b0], [ra, rb], blur_mm)
        gap = float(np.linalg.norm(ctrs[0] - ctrs[1]))
        if overlap:
            # a squop: the two discs overlap (apart by more than the blur: two discs) and make the blob's length
            if (not MIN_APART_MM < gap < ra + rb - MAX_PAIR_OVERLAP_MM
                    or abs(gap + ra + rb - span) > MAX_SPAN_ERROR_MM):
                continue
        # two discs overlapping by more than a sliver are a squop, which the pile modules read
        elif gap < ra + rb - MAX_PAIR_OVERLAP_MM:
            continue
        fits.append((res, ctrs, (ra, rb)))
    if not fits:
        return None
    if overlap:
        # the lower wink shows only its crescent: its size is not the pigment's to say, so the best fit stands
        two, ctrs, radii = min(fits, key=lambda f: f[0])
        if two >= one:
            return None
        # each wink its own pigment level, the upper's over the lower's: either may be the upper
        ctrs, radii = min((_fit(q, sq, [ctrs[i], ctrs[1 - i]], [radii[i], radii[1 - i]], blur_mm, _residual_squop)
                           + ([radii[i], radii[1 - i]],) for i in (0, 1)), key=lambda f: f[0])[1:]
        # each wink's own level: the lower's pigment need only stand clear of the felt's noise, not at half the upper's
        return _pair_winks(c, ctrs, radii, q, sq > MIN_PIGMENT_SIGMAS * sigma, dq, u, others, spread, squop=True)
    # a size the outline does not decide stays the likelier one (four small winks to two large): more large
    # radii only where they explain the pigment by more than the gain that makes a second wink
    gain_min = MIN_GAIN_MM2 / RASTER_MM ** 2 * level ** 2 / 4.0
    fits.sort(key=lambda f: f[0])
    two, ctrs, radii = min((f for f in fits if f[0] < fits[0][0] + gain_min),
                           key=lambda f: (f[2].count(RADII_MM["large"]), f[0]))
    if one - two < gain_min:
        return None
    return _pair_winks(c, ctrs, radii, q, b, dq, u, others, spread)


def _pair_winks(c: WinkCandidate, ctrs: list[np.ndarray], radii: tuple[float, float], q: np.ndarray, b: np.ndarray,
                dq: np.ndarray, u: np.ndarray, others: list[WinkCandidate], spread: float,
                squop: bool = False) -> list[WinkCandidate] | None:
    """The pair's two candidates, if each disc is a disc of ``c``'s pigment (samples ``q``, clear of other winks;
    pigment shown ``b``, chroma off the felt ``dq`` along ``u``); a ``squop``'s disc is read by its part beyond
    the other and may lie partly under other winks: it need only show a share of itself, and only another wink's
    centre on it excludes it."""
    out = []
    for ctr, r in zip(ctrs, radii):
        # each disc is pigment through (its inner disc), on the mat, and clear of every wink found
        d2 = ((q - ctr) ** 2).sum(axis=1)
        held = d2 < (r - spread) ** 2
        if squop:
            # each disc speaks by its own part, beyond the other's disc and blur (the lower shows no more)
            j = 1 - len(out)
            held &= ((q - ctrs[j]) ** 2).sum(axis=1) > (radii[j] + spread) ** 2
        if squop and held.sum() * RASTER_MM ** 2 < MIN_SEEN_SHARE * np.pi * (r - spread) ** 2:
            return None
        if held.sum() == 0 or b[held].mean() < MIN_DISC_PIGMENT or not _on_mat(ctr[None], 0.0)[0]:
            return None
        # ... of the found wink's own hue: its chroma off the felt points the same way (a wink of another
        # colour would turn it)
        dv = np.median(dq[held], axis=0)
        if abs(float(dv @ (u[1], -u[0]))) > MAX_HUE_TURN_RATIO * float(dv @ u):
            return None
        if any(_dist(o.center_mm, ctr) < (max(o.radius_mm, r) if squop else o.radius_mm + r) for o in others):
            return None
        size = next(k for k, v in RADII_MM.items() if v == r)
        w = WinkCandidate(color=c.color, size=size, center_mm=np.asarray(ctr, float), votes=c.votes)
        w.edge_support, w.own_fraction, w.score = c.edge_support, c.own_fraction, c.score
        w.confidence = min(c.confidence, RIM_FOUND_CONFIDENCE)
        w.size_confidence = min(c.size_confidence, 0.6)
        out.append(w)
    return out
