"""Winks lying mostly under a wink of another colour: found from the crescent of their own colour that shows.

A squopped wink can be covered almost wholly; what is left is a crescent a few millimetres wide, which the
coarse label image loses (its per-class opening removes anything narrower than blended outline rings). The
occlusion model is simple and exact in plan: the visible part of a lower wink is its disc minus the upper
wink's disc. So, around every wink found, the full-resolution image is sampled on a fine plan raster just
outside its rim, each sample is given a wink colour in the scene's calibrated colour space (white-balanced
Lab hue, departure from the local felt), and for every other colour that shows there the disc of each known
radius whose uncovered part best matches those samples (intersection over union) is the lower wink. A wink
of the felt's own hue (green on green felt) shows there as its pigment: more saturated and lighter than the
felt around it (tw_9900_001's green-S4 beside blue-L2).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import LARGE_WINK_RADIUS_MM, MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, WINK_THICKNESS_MM
from vision.colour import CLASS_NEUTRAL, COLOR_NAMES, ColourScene, blend_line, lab_rows, nearest_hue
from vision.ortho import OrthoGrid
from vision.winks import RADII_MM, WinkCandidate, _sample_labels, distances_mm


@dataclass(frozen=True, slots=True)
class CrescentParams:
    """Crescent search parameters (mm unless named otherwise)."""

    step_mm: float = 0.5  # plan raster of the samples
    reach_mm: float = 2 * LARGE_WINK_RADIUS_MM - 4.0  # how far beyond the upper rim a lower wink can show
    blend_px: float = 1.5  # blur width: samples this close to a found wink's rim mix two colours
    min_area_mm2: float = 8.0  # a crescent smaller than this is not evidence of a wink
    min_width_mm: float = 1.2  # ... nor one narrower than this (a blended rim)
    min_iou: float = 0.55  # match of the disc's uncovered part with the crescent samples
    min_chroma: float = 14.0  # Lab C* of a wink colour (as the colour scene's ``min_wink_chroma``)
    min_departure: float = 0.10  # relative colour departure from the local felt (blends and shading stay out)
    max_hue_deg: float = 30.0  # hue distance to the class centre
    min_off_blend: float = 0.35  # distance from the upper-wink/felt blend line, in units of their difference
    mat_edge_clear_mm: float = 3.0  # the mat's edge band (mixed felt and table pixels)
    first_look_mm: float = 6.0  # the first look's reach beyond the rim (1 mm raster of the label image)
    first_look_min_mm2: float = 3.0  # another colour's label area there that calls for the fine search (or, of
    # neutral foreground, the area that reads as a pigment in the light, ``lit_pigment``)
    pigment_max_darker_l: float = 1.0  # L* a pigment in the light may fall below its felt (noise, the felt's grain)
    dark_noise_k: float = 7.0  # a darker pigment's chromaticity off the felt/upper blend, in the felt's robust
    # sigmas (the colour scene's foreground threshold, ``ColourParams.noise_k``)
    same_clear_mm: float = 0.5  # a same-colour lower wink is looked for this far beyond the upper's rim and blur
    same_first_look_mm2: float = 4.0  # own-colour label area there that calls for that search
    same_min_blend: float = 0.7  # blend fraction (felt 0, upper wink 1) of a sample of a same-colour lower wink
    same_min_width_px: float = 2.0  # a same-colour lower wink must show this many image pixels beyond the rim
    same_min_offset_mm: float = 4.5  # ... and its centre lie this far from the upper's (else it is the same wink)
    same_refit_reach_mm: float = 3.0  # the upper placed alone on its colour to this far beyond its rim
    same_refit_shift_mm: float = 1.5  # ... within this of the coarse centre (a pile pulls the label circle ~1 mm)
    same_shade_chroma_share: float = 0.2  # a shaded same-colour sample's chromaticity gap to the upper's, in
    # units of the felt's gap to it
    same_shade_range: tuple[float, float] = (0.5, 1.0)  # ... and its brightness, as a fraction of the upper's
    felt_pigment_k: float = 4.0  # a felt-hue sample's chroma above the local felt's, in the ring's robust sigmas
    felt_off_blend_share: float = 0.7  # ... its step from the felt this far off the upper's blend (sin 44 deg)
    # A crescent is what shows of a wink mostly under another: one of the felt's hue showing more of its disc than
    # this is read by its pigment core and rim (``felt_core_winks``), which place it where it lies; the crescent
    # fit takes its part over the upper for hidden and may slide it under the upper (a green large on a blue small,
    # 89 % shown: 2.6 mm, tests/vision/test_felt_piles.py); half shown is still a crescent (test_crescent_felt_hue)
    max_felt_hue_shown: float = 0.7


def sample_bgr_at(image_bgr: np.ndarray, camera: CameraModel, pts_mm: np.ndarray, z_mm: float) -> np.ndarray:
    """BGR in [0, 1] seen at table points raised ``z_mm`` (a wink's top face): the probes are laid out in plan,
    where the winks' discs are, and read where the camera sees them."""
    q = camera.project_mm(np.column_stack([pts_mm, np.full(len(pts_mm), z_mm)])).astype(np.float32)
    v = cv2.remap(image_bgr, q[:, 0:1], q[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return v.reshape(-1, 3).astype(np.float32) / 255.0


def robust_sigma(x: np.ndarray) -> float:
    """The normal-equivalent spread of mostly-felt samples (1.4826 MAD): a few wink samples among them move it
    little."""
    return 1.4826 * float(np.median(np.abs(x - np.median(x)))) if len(x) else 0.0


def felt_pigment(lab: np.ndarray, felt_lab: np.ndarray, ref: np.ndarray, k: float) -> np.ndarray:
    """Samples of the felt's own hue that are a wink's pigment: a green wink on green felt is more saturated
    and lighter, never darker (a shadow on the felt darkens it and takes chroma away, a blend with a wink of
    another hue takes chroma too). The chroma excess must stand ``k`` robust sigmas above the spread of the
    ``ref`` samples (the ring around a wink, mostly felt), the lightness not below the felt's by one."""
    d_c = np.hypot(lab[:, 1], lab[:, 2]) - np.hypot(felt_lab[:, 1], felt_lab[:, 2])
    d_l = lab[:, 0] - felt_lab[:, 0]
    s_c, s_l = robust_sigma(d_c[ref]), robust_sigma(d_l[ref])
    return (d_c >= k * max(s_c, 1.0)) & (d_l >= -max(s_l, 1.0))


def lit_pigment(bgr: np.ndarray, felt_bgr: np.ndarray, upper_bgr: np.ndarray, cs: ColourScene,
                params: CrescentParams) -> np.ndarray:
    """Samples that are a pigment in the light: more saturated than their felt (white-balanced Lab C*), not darker
    than it by more than one L* unit (``felt_pigment``'s floor), and off the upper wink's blend with it by the
    fine search's margin, or lighter by that unit and off the blend near its felt's end by their chromaticity
    (``_off_blend_near_felt``: the felt's own hue beside a wink far from the felt in colour); or, more saturated and
    darker, of a chromaticity of their own (``dark_pigment``: a green or blue wink on beige). A shadow (a raised
    wink's, its own halo's) darkens the felt and takes chroma away; a blurred rim lies on the blend.
    ``upper_bgr``: one colour (3,), or each sample's (N, 3)."""
    lab = lab_rows(np.clip(bgr * cs.gains_bgr, 0, 1))
    felt_lab = lab_rows(np.clip(felt_bgr * cs.gains_bgr, 0, 1))
    more_chroma = np.hypot(lab[:, 1], lab[:, 2]) > np.hypot(felt_lab[:, 1], felt_lab[:, 2])
    lit = lab[:, 0] >= felt_lab[:, 0] - params.pigment_max_darker_l
    _, off_line, vv = blend_line(bgr, felt_bgr, upper_bgr.T, segment=True)  # (by channel: [0] is B)
    # a step this small from the felt is told from its grain and from a shadow by both: more saturated and lighter
    lighter = lab[:, 0] >= felt_lab[:, 0] + params.pigment_max_darker_l
    return more_chroma & np.where(lit, (off_line >= params.min_off_blend * np.sqrt(vv))
                                  | (lighter & _off_blend_near_felt(bgr, felt_bgr, upper_bgr, cs, params)),
                                  dark_pigment(bgr, felt_bgr, upper_bgr, cs, params))


def _chromaticity(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(x.sum(axis=-1, keepdims=True), 1e-6)


def _off_blend_near_felt(bgr: np.ndarray, felt_bgr: np.ndarray, upper_bgr: np.ndarray, cs: ColourScene,
                         params: CrescentParams) -> np.ndarray:
    """Samples whose chromaticity lies off the segment from the felt's to the upper wink's by more than a blend
    of the two can bend from it: a mix's chromaticity lies on that segment (the image's tone curve bends it
    most halfway, by up to ``min_off_blend`` of the segment, and not at all at its ends), and the felt's noise
    (``dark_noise_k`` sigmas). Near the felt's end a pigment of the felt's own hue (green on green felt) beside a
    wink far from the felt in colour (red) is told from the felt and from a blurred rim by its chromaticity
    alone: its step from the felt is a small part of the segment."""
    c_up = _chromaticity(np.broadcast_to(upper_bgr, bgr.shape))
    a, off_line, vv = blend_line(_chromaticity(bgr), _chromaticity(felt_bgr), c_up.T, segment=True)
    bend = params.min_off_blend * np.sqrt(vv) * 4.0 * a * (1.0 - a)
    return off_line >= np.maximum(bend, params.dark_noise_k * cs.mat_noise[0])


def dark_pigment(bgr: np.ndarray, felt_bgr: np.ndarray, upper_bgr: np.ndarray, cs: ColourScene,
                 params: CrescentParams) -> np.ndarray:
    """Samples whose chromaticity (BGR over its sum: what shading leaves) lies off the segment from the felt's
    to the upper wink's by the fine search's blend margin and by ``dark_noise_k`` of the felt's chromaticity
    noise: a wink darker than the felt (green or blue on beige). A shadow scales the felt and keeps its
    chromaticity; a blurred rim, shaded or not, mixes the felt's with the upper's and stays on that segment."""
    def chromaticity(x: np.ndarray) -> np.ndarray:
        return x / np.maximum(x.sum(axis=-1, keepdims=True), 1e-6)
    c_up = chromaticity(np.broadcast_to(upper_bgr, bgr.shape))
    c_felt = chromaticity(felt_bgr)
    _, off_line, vv = blend_line(chromaticity(bgr), c_felt, c_up.T, segment=True)
    return off_line >= np.maximum(params.min_off_blend * np.sqrt(vv), params.dark_noise_k * cs.mat_noise[0])


def wink_classes(bgr: np.ndarray, felt_bgr: np.ndarray, upper_bgr: np.ndarray, cs: ColourScene,
             params: CrescentParams, nearest_only: np.ndarray | None = None, *,
             felt_hue: bool = False) -> np.ndarray:
    """Wink colour index per sample (-1: felt, a blend of the upper wink with the felt, or no wink hue).

    Defocus spreads the upper wink over the felt beside it: such a pixel is ``a * W + (1 - a) * felt`` for
    some ``a`` and can take a third hue (red on beige reads orange, yellow-ish); only a sample clearly off that
    blend line is a colour of its own. Samples marked ``nearest_only`` take the nearest class's hue however far
    (a crescent blurred over the wink under it takes a hue between the two colours). With ``felt_hue`` a
    sample of the felt's own hue counts when it is pigment (``felt_pigment``), else never.
    """
    lab = lab_rows(np.clip(bgr * cs.gains_bgr, 0, 1))
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    cls, hue_gap = nearest_hue(hue, cs.hue_centres_deg)
    # per-channel columns: the row norms' sums in their order, without a reduction over three columns per row
    f0, f1, f2 = felt_bgr[:, 0], felt_bgr[:, 1], felt_bgr[:, 2]
    d0, d1, d2 = bgr[:, 0] - f0, bgr[:, 1] - f1, bgr[:, 2] - f2
    departure = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) / (np.sqrt(f0 * f0 + f1 * f1 + f2 * f2) + 1e-3)
    hue_ok = hue_gap <= params.max_hue_deg
    if nearest_only is not None:
        hue_ok |= nearest_only
    ok = (chroma >= params.min_chroma) & hue_ok
    ok &= departure >= params.min_departure
    _, off_line, vv = blend_line(bgr, felt_bgr, upper_bgr, segment=True)
    off_blend = off_line >= params.min_off_blend * np.sqrt(vv)
    if cs.mat_class:
        felt_cls = cls == cs.mat_class - 1
        if felt_hue:
            # a felt-hue wink departs from the felt by less than the upper wink does, so its samples are judged
            # off the blend by direction: the felt-to-sample step must point mostly away from the upper's colour
            # (a blurred rim of a wink of a near hue, yellow on green felt, steps along the blend)
            felt_lab = lab_rows(np.clip(felt_bgr * cs.gains_bgr, 0, 1))
            ref = np.ones(len(bgr), bool) if nearest_only is None else ~nearest_only
            step = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            pigment = felt_pigment(lab, felt_lab, ref, params.felt_pigment_k)
            off_blend = np.where(felt_cls, pigment & (off_line >= params.felt_off_blend_share * step), off_blend)
        else:
            ok &= ~felt_cls  # the felt's own hue: not told apart from the felt at this width
    ok &= off_blend
    return np.where(ok, cls, -1)


def _same_colour(bgr: np.ndarray, felt_bgr: np.ndarray, upper_bgr: np.ndarray, params: CrescentParams) -> np.ndarray:
    """Samples of the upper wink's own colour: on its blend line with the felt and near the wink end of it, or
    the upper's colour in shade (a lower wink under a raised upper lies in its shadow: its chromaticity is the
    upper's, its brightness a fraction of it; the felt in that shadow keeps the felt's chromaticity)."""
    v = upper_bgr[None, :] - felt_bgr
    d = bgr - felt_bgr
    vv = np.maximum((v * v).sum(axis=1), 1e-6)
    a = (d * v).sum(axis=1) / vv
    off_line = np.linalg.norm(d - a[:, None] * v, axis=1)
    departure = np.linalg.norm(d, axis=1) / (np.linalg.norm(felt_bgr, axis=1) + 1e-3)
    on_blend = (a >= params.same_min_blend) & (off_line < params.min_off_blend * np.sqrt(vv))
    sum_s, sum_u, sum_f = bgr.sum(axis=1), float(upper_bgr.sum()), felt_bgr.sum(axis=1)
    chrom_u = upper_bgr / max(sum_u, 1e-6)
    to_upper = np.linalg.norm(bgr / np.maximum(sum_s, 1e-6)[:, None] - chrom_u, axis=1)
    felt_gap = np.linalg.norm(felt_bgr / np.maximum(sum_f, 1e-6)[:, None] - chrom_u, axis=1)
    shade = sum_s / max(sum_u, 1e-6)
    in_shade = ((to_upper < params.same_shade_chroma_share * felt_gap)
                & (shade >= params.same_shade_range[0]) & (shade <= params.same_shade_range[1]))
    return (on_blend | in_shade) & (departure >= params.min_departure)


def felt_at(felt: np.ndarray, grid: OrthoGrid, pts: np.ndarray) -> np.ndarray:
    """The felt's own colour (the colour scene's background, BGR in [0, 1]) under table points: what a wink's
    blurred rim blends with there."""
    cr = np.clip(np.rint(grid.ortho_from_table(pts)).astype(int), 0, [felt.shape[1] - 1, felt.shape[0] - 1])
    return felt[cr[:, 1], cr[:, 0]].astype(np.float32) / 255.0


def _disc_counts(samples: np.ndarray, centres: np.ndarray, r: float, sets: list[np.ndarray]) -> np.ndarray:
    """(n centres, n sets) int: how many samples of each boolean set (over the samples) lie inside the disc of
    radius ``r`` about each centre (float32 plan points: the squared distances in float32). Each count is a sum
    of ones, so one float32 matrix product gives it exactly; the centres go in blocks that stay in the cache."""
    v = np.column_stack(sets).astype(np.float32)
    out = np.empty((len(centres), v.shape[1]), np.float32)
    block = max(1, min(len(centres), _DISC_BLOCK_ENTRIES // max(len(samples), 1)))
    d = np.empty((block, len(samples)), np.float32)
    dy = np.empty_like(d)
    sx, sy = samples[None, :, 0], samples[None, :, 1]
    for i in range(0, len(centres), block):
        c = centres[i:i + block]
        di, dyi = d[:len(c)], dy[:len(c)]
        np.subtract(sx, c[:, None, 0], out=di)
        np.multiply(di, di, out=di)
        np.subtract(sy, c[:, None, 1], out=dyi)
        np.multiply(dyi, dyi, out=dyi)
        np.add(di, dyi, out=di)
        np.less(di, r * r, out=di)
        np.matmul(di, v, out=out[i:i + len(c)])
    return out.astype(np.int64)


_DISC_BLOCK_ENTRIES = 1 << 16  # centres x samples per block of ``_disc_counts`` (256 kB a float32 array)


def _clear_of(pts: np.ndarray, near: list[WinkCandidate], blend: float, exclude_mask: np.ndarray | None,
              grid: OrthoGrid, params: CrescentParams) -> tuple[np.ndarray, np.ndarray]:
    """Plan samples on the felt, clear of its edge, of the pot and of other winks' rims (and their blur), with
    the index in ``near`` (-1: none) of the found wink each lies inside.

    A sample inside another found wink is kept: in a pile the middle wink lies over one wink and under
    another, so what shows of it lies inside the lower one's disc. Where that wink's own colour shows, it is
    not the wink looked for (``own_colour_shows``)."""
    edge = params.mat_edge_clear_mm + blend
    pts = pts[(np.abs(pts[:, 0]) < MAT_HALF_LENGTH_MM - edge) & (np.abs(pts[:, 1]) < MAT_HALF_WIDTH_MM - edge)]
    inside = np.full(len(pts), -1)
    for j, o in enumerate(near):
        d = distances_mm(pts, o.center_mm)
        keep = np.abs(d - o.radius_mm) > blend
        pts, d, inside = pts[keep], d[keep], inside[keep]
        inside[d < o.radius_mm] = j
    if exclude_mask is not None and len(pts):
        cr = np.rint(grid.ortho_from_table(pts)).astype(int)
        ok = (cr[:, 0] >= 0) & (cr[:, 0] < exclude_mask.shape[1]) & (cr[:, 1] >= 0) & (cr[:, 1] < exclude_mask.shape[0])
        hit = np.ones(len(pts), bool)
        hit[ok] = exclude_mask[cr[ok, 1], cr[ok, 0]]
        pts, inside = pts[~hit], inside[~hit]
    return pts, inside


def own_colour_shows(cls: np.ndarray, inside: np.ndarray, near: list[WinkCandidate]) -> np.ndarray:
    """Samples inside a found wink that show its own colour (or no wink colour at all: its shading): that
    wink is seen there, so nothing under it is."""
    own = np.array([COLOR_NAMES.index(o.color) for o in near] + [-2])[inside]
    return (inside >= 0) & ((cls == own) | (cls < 0))


def _placed_alone(upper: WinkCandidate, upper_bgr: np.ndarray, image_bgr: np.ndarray, camera: CameraModel,
                  felt: np.ndarray, grid: OrthoGrid, near: list[WinkCandidate], blend: float,
                  exclude_mask: np.ndarray | None, params: CrescentParams) -> np.ndarray:
    """The upper's centre where its own disc alone best explains its colour (intersection over union on a plan
    raster to a few mm beyond its rim): the label circle search puts a wink lying on one of its own colour
    between the two (tw_9898_001: 0.9 mm towards the lower), which moves the rim a same-colour crescent is read
    beyond onto the crescent. A disc moved towards the lower gains a narrow crescent and loses the whole far
    side of its rim, so the lower pulls the fit little."""
    step = params.step_mm
    reach = upper.radius_mm + params.same_refit_reach_mm
    g = np.arange(-reach, reach + 1e-9, step)
    gx, gy = np.meshgrid(g, g)
    offs = np.column_stack([gx.ravel(), gy.ravel()])
    pts, inside = _clear_of(upper.center_mm + offs[distances_mm(offs, (0.0, 0.0)) < reach], near, blend,
                            exclude_mask, grid, params)
    pts = pts[inside < 0]  # inside another found wink a blend of the two is not told from this colour
    if len(pts) < 20:
        return upper.center_mm
    m = _same_colour(sample_bgr_at(image_bgr, camera, pts, WINK_THICKNESS_MM), felt_at(felt, grid, pts),
                     upper_bgr, params)
    shifts = offs[distances_mm(offs, (0.0, 0.0)) <= params.same_refit_shift_mm]
    shifts = shifts[np.argsort(distances_mm(shifts, (0.0, 0.0)), kind="stable")]  # ties: the least move
    counts = _disc_counts(pts.astype(np.float32), (upper.center_mm + shifts).astype(np.float32), upper.radius_mm,
                          [m, ~m])
    iou = counts[:, 0] / np.maximum(int(m.sum()) + counts[:, 1], 1)
    return upper.center_mm + shifts[int(np.argmax(iou))]


def is_that_wink(found: WinkCandidate, centre: np.ndarray, r: float, blend: float, params: CrescentParams) -> bool:
    """Whether a disc of radius ``r`` at ``centre`` is ``found`` (a wink of its colour found already) rather than a
    wink of a pile lying on or under it: its centre is near ``found``'s, or it reaches no further than that
    wink's rim, a blended rim's width and the blur (its colour spilling over the rim, a fit a little small)."""
    d = float(np.linalg.norm(found.center_mm - centre))
    return d < params.same_min_offset_mm or d + r - found.radius_mm < params.min_width_mm + blend


def _shows_beyond(mine_pts: np.ndarray, centre: np.ndarray, r: float, twins: list[WinkCandidate], blend: float,
                  cell_mm2: float, params: CrescentParams) -> bool:
    """Whether a disc overlapping found winks of its own colour (``twins``) is a wink of its own: the middle
    wink of a pile lies on a wink of its colour and under another's, so what shows of it may all lie beside
    the upper wink. It is not the twin's own colour spilling over its rim (blur, a fit a little small) only
    where its samples lie beyond every twin's rim by more than that, over a crescent's area, with its centre
    well away from each twin's (else it is the twin itself)."""
    beyond = np.linalg.norm(mine_pts - centre, axis=1) < r
    for o in twins:
        if is_that_wink(o, centre, r, blend, params):
            return False
        beyond &= np.linalg.norm(mine_pts - o.center_mm, axis=1) > o.radius_mm + blend + params.same_clear_mm
    return float(beyond.sum()) * cell_mm2 >= params.min_area_mm2


def _may_show_crescents(cps: list[np.ndarray], centers_mm: np.ndarray, k_ups: np.ndarray,
                        far_mm: np.ndarray, cs: ColourScene, grid: OrthoGrid,
                        params: CrescentParams) -> np.ndarray:
    """Per upper wink, whether the first look's labels at all its samples ``cps[i]`` reach either call for the
    fine search: a necessary condition, as the first look counts the same labels on a subset of them (those
    ``_clear_of`` keeps), some set to felt, so a frame's many lone winks skip the clearing. All winks' samples
    are read in one sampling (each sample's own arithmetic: the same labels and counts as one at a time)."""
    n = len(cps)
    if n == 0:
        return np.zeros(0, bool)
    owner = np.repeat(np.arange(n), [len(c) for c in cps])
    cp = np.concatenate(cps)
    lab = _sample_labels(cs.labels, grid.ortho_from_table(cp))  # 255 outside the picture: in neither count
    k = k_ups[owner]
    other = np.bincount(owner, weights=(lab >= 1) & (lab < CLASS_NEUTRAL) & (lab != k), minlength=n)
    dx, dy = cp[:, 0] - centers_mm[owner, 0], cp[:, 1] - centers_mm[owner, 1]
    same = np.bincount(owner, weights=(lab == k) & (np.sqrt(dx * dx + dy * dy) > far_mm[owner]), minlength=n)
    same_called = (k_ups != cs.mat_class) & (same >= params.same_first_look_mm2)
    return (other >= params.first_look_min_mm2) | same_called


def _lit_neutral_counts(cps: list[np.ndarray], inners: list[np.ndarray], image_bgr: np.ndarray, camera: CameraModel,
                        cs: ColourScene, grid: OrthoGrid, params: CrescentParams) -> tuple[np.ndarray, dict]:
    """Per upper wink, how many of its first-look samples ``cps[i]`` the labels call neutral foreground and the
    image reads as a pigment in the light (``lit_pigment``, against the upper's colour: the median at its
    ``inners[i]``). A crescent of the felt's own hue, or a sliver narrower than the labels' opening, is labelled
    so, as are a shadow and a blurred rim (most winks show one). The same reads on a superset of the samples the
    search's own look reads, so a necessary condition of its call, for every upper in one sampling. Also the
    medians read (upper's index -> BGR), for the search to reuse."""
    n = len(cps)
    counts = np.zeros(n)
    if n == 0:
        return counts, {}
    owner = np.repeat(np.arange(n), [len(c) for c in cps])
    cp = np.concatenate(cps)
    neutral = _sample_labels(cs.labels, grid.ortho_from_table(cp)) == CLASS_NEUTRAL
    asks = np.bincount(owner, weights=neutral, minlength=n) >= params.first_look_min_mm2
    if not asks.any():
        return counts, {}
    idx = np.flatnonzero(asks)
    row = np.full(n, -1)
    row[idx] = np.arange(len(idx))
    upper_bgr = _median_colours(image_bgr, camera, [inners[i] for i in idx])
    sel = neutral & asks[owner]
    pts = cp[sel]
    lit = lit_pigment(sample_bgr_at(image_bgr, camera, pts, WINK_THICKNESS_MM), felt_at(cs.background_bgr, grid, pts),
                      upper_bgr[row[owner[sel]]], cs, params)
    return np.bincount(owner[sel], weights=lit, minlength=n), dict(zip(idx.tolist(), upper_bgr))


def _median_colours(image_bgr: np.ndarray, camera: CameraModel, pts: list[np.ndarray]) -> np.ndarray:
    """Per set of table points (a wink's middle), the median BGR seen there: one sampling for them all, one
    median per set size (a wink's middle has as many points as any of its size)."""
    bgr = sample_bgr_at(image_bgr, camera, np.concatenate(pts), WINK_THICKNESS_MM)
    n = np.array([len(p) for p in pts])
    start = np.concatenate([[0], np.cumsum(n)[:-1]])
    out = np.empty((len(pts), 3), np.float32)
    for m in np.unique(n).tolist():
        rows = np.flatnonzero(n == m)
        out[rows] = np.median(bgr[start[rows, None] + np.arange(m)[None, :]], axis=1)
    return out


def _shows_mostly(centre: np.ndarray, r_mm: float, winks: list[WinkCandidate], params: CrescentParams) -> bool:
    """Whether more than ``params.max_felt_hue_shown`` of a disc lies clear of the found winks' discs."""
    g = np.mgrid[-r_mm:r_mm:params.step_mm, -r_mm:r_mm:params.step_mm].reshape(2, -1).T
    g = g[np.hypot(g[:, 0], g[:, 1]) < r_mm] + centre
    clear = np.ones(len(g), bool)
    for o in winks:
        clear &= distances_mm(g, o.center_mm) >= o.radius_mm
    return float(clear.mean()) > params.max_felt_hue_shown


def crescent_lowers(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene,
                    grid: OrthoGrid, exclude_mask: np.ndarray | None = None,
                    params: CrescentParams = CrescentParams()) -> list[WinkCandidate]:
    """New winks seen only as a crescent beside a found wink of another colour (they lie under it).

    ``exclude_mask`` (ortho grid) marks plan areas whose colour is not a wink's (the pot and its image).
    """
    live = [w for w in winks if not w.potted]
    found: list[WinkCandidate] = []
    g = np.arange(-(LARGE_WINK_RADIUS_MM + params.reach_mm), LARGE_WINK_RADIUS_MM + params.reach_mm + 1e-9,
                  params.step_mm)
    gx, gy = np.meshgrid(g, g)
    offsets = np.column_stack([gx.ravel(), gy.ravel()])
    cell_mm2 = params.step_mm ** 2
    d_off = distances_mm(offsets, (0.0, 0.0))
    coarse = offsets[(np.abs(offsets[:, 0] % 1.0) < 1e-6) & (np.abs(offsets[:, 1] % 1.0) < 1e-6)]
    d_coarse = distances_mm(coarse, (0.0, 0.0))
    felt = cs.background_bgr  # the local felt colour (ortho grid, uint8: converted where sampled)
    # First look, in the label image: a crescent the label opening thinned still leaves some of its own
    # colour's pixels just beyond the rim; none there, nothing to search (every upper's look read at once)
    mmpps = [camera.mm_per_px_at((float(u.center_mm[0]), float(u.center_mm[1]))) for u in live]
    blends = [params.blend_px * m for m in mmpps]
    look = params.first_look_mm
    cps = [u.center_mm + coarse[(d_coarse > u.radius_mm + b + 0.5) & (d_coarse < u.radius_mm + look)]
           for u, b in zip(live, blends)]
    far_mm = np.array([u.radius_mm + b + params.same_clear_mm for u, b in zip(live, blends)])
    k_ups = np.array([COLOR_NAMES.index(u.color) + 1 for u in live], int)
    centers = np.array([u.center_mm for u in live]).reshape(-1, 2)
    inner_offs = {size: offsets[d_off < r - 1.5][::4] for size, r in RADII_MM.items()}
    inners = [u.center_mm + inner_offs[u.size] for u in live]
    lit_counts, inner_bgr = _lit_neutral_counts(cps, inners, image_bgr, camera, cs, grid, params)
    lit_look = lit_counts >= params.first_look_min_mm2
    may = _may_show_crescents(cps, centers, k_ups, far_mm, cs, grid, params) | lit_look
    for n_up, (upper, inner, mmpp, blend, cp, may_show, lit_may) in enumerate(zip(live, inners, mmpps, blends, cps,
                                                                                   may.tolist(), lit_look.tolist())):
        if not may_show:
            continue
        r_up = upper.radius_mm
        k_up = COLOR_NAMES.index(upper.color) + 1
        pool = [*live, *found]
        gap = np.array([o.center_mm for o in pool]) - upper.center_mm
        dist = np.sqrt((gap * gap).sum(axis=1))  # one array op, not a norm per pair
        near = [o for o, d in zip(pool, dist.tolist()) if o is not upper
                and d < r_up + params.reach_mm + o.radius_mm + blend]
        cp, cp_in = _clear_of(cp, near, blend, exclude_mask, grid, params)
        if len(cp) == 0:
            continue
        cr = np.rint(grid.ortho_from_table(cp)).astype(int)
        ok = (cr[:, 0] >= 0) & (cr[:, 0] < cs.labels.shape[1]) & (cr[:, 1] >= 0) & (cr[:, 1] < cs.labels.shape[0])
        lab = cs.labels[cr[ok, 1], cr[ok, 0]]
        lab_cls = np.where((lab >= 1) & (lab < CLASS_NEUTRAL), lab - 1, -1)
        lab = np.where(own_colour_shows(lab_cls, cp_in[ok], near), 0, lab)
        want_other = int(((lab >= 1) & (lab < CLASS_NEUTRAL) & (lab != k_up)).sum()) >= params.first_look_min_mm2
        upper_bgr = None
        neutral = (lab == CLASS_NEUTRAL) & (cp_in[ok] < 0)
        if not want_other and lit_may and int(neutral.sum()) >= params.first_look_min_mm2:
            # a crescent of the felt's own hue (green on green felt), or a sliver under a raised wink narrower
            # than the labels' opening, is labelled neutral foreground, as are a shadow and a blurred rim: the
            # fine search is called where those samples, read in the image, hold some pigment off the upper's
            # blend with the felt (a shadow takes chroma away, a blurred rim lies on that blend)
            upper_bgr = inner_bgr[n_up]  # read by the first look: ``lit_look`` implies it
            seen = cp[ok][neutral]
            lit = lit_pigment(sample_bgr_at(image_bgr, camera, seen, WINK_THICKNESS_MM), felt_at(felt, grid, seen),
                              upper_bgr, cs, params)
            want_other = int(lit.sum()) >= params.first_look_min_mm2
        # a lower wink of the upper's own colour: its colour well beyond the upper's rim and blur (not on a
        # felt of that hue, where the labels cannot tell it from the felt's own bands)
        far = distances_mm(cp[ok], upper.center_mm) > r_up + blend + params.same_clear_mm
        want_same = (k_up != cs.mat_class
                     and int(((lab == k_up) & far).sum()) >= params.same_first_look_mm2)
        if not (want_other or want_same):
            continue
        if upper_bgr is None:
            upper_bgr = inner_bgr.get(n_up)
        if upper_bgr is None:
            upper_bgr = np.median(sample_bgr_at(image_bgr, camera, inner, WINK_THICKNESS_MM), axis=0)
        ring = (d_off > r_up + blend) & (d_off < r_up + params.reach_mm)
        pts, pts_in = _clear_of(upper.center_mm + offsets[ring], near, blend, exclude_mask, grid, params)
        if len(pts) < 20:
            continue
        colours = sample_bgr_at(image_bgr, camera, pts, WINK_THICKNESS_MM)
        felt_pts = felt_at(felt, grid, pts)
        # inside a found wink (the middle of a pile lies on it), the crescent is only a few pixels wide and the
        # blur mixes it with that wink's colour: a hue between the two is the nearer one's (that wink's own
        # shading keeps its hue, ``own_colour_shows``)
        cls = wink_classes(colours, felt_pts, upper_bgr, cs, params, nearest_only=pts_in >= 0, felt_hue=True)
        # where a found wink shows its own colour, a wink under it is hidden and one over it is not there
        hidden = own_colour_shows(cls, pts_in, near)
        pts_other, in_other, hidden_other = pts, pts_in, hidden
        if want_same:
            # a lower wink of the upper's own colour is read beyond the upper's rim where the upper alone lies
            c_same = _placed_alone(upper, upper_bgr, image_bgr, camera, felt, grid, near, blend, exclude_mask,
                                   params)
            pts_same, in_same = _clear_of(c_same + offsets[ring], near, blend, exclude_mask, grid, params)
            same_bgr = sample_bgr_at(image_bgr, camera, pts_same, WINK_THICKNESS_MM)
            hidden_same = own_colour_shows(wink_classes(same_bgr, felt_at(felt, grid, pts_same), upper_bgr, cs,
                                                        params, nearest_only=in_same >= 0, felt_hue=True),
                                           in_same, near)
            # the upper's own colour, nearly pure or in shade, beyond its rim by more than the blur and the
            # centre's error; within them, and inside another found wink (a blend of the two), this colour is
            # not told from the upper's: no evidence either way
            blind_same = ((distances_mm(pts_same, c_same) <= r_up + blend + params.same_clear_mm) | (in_same >= 0))
            mine_same = _same_colour(same_bgr, felt_at(felt, grid, pts_same), upper_bgr, params) & ~blind_same
        for k, name in enumerate(COLOR_NAMES):
            same = name == upper.color
            if same and not want_same or not same and not want_other:
                continue
            if same:
                pts, pts_in, hidden, c_up = pts_same, in_same, hidden_same, c_same
                mine, blind = mine_same, blind_same
            else:
                pts, pts_in, hidden, c_up = pts_other, in_other, hidden_other, upper.center_mm
                mine = (cls == k) & ~hidden
                blind = np.zeros(len(pts), bool)
            if mine.sum() * cell_mm2 < params.min_area_mm2:
                continue
            best = None
            centroid = pts[mine].mean(axis=0)
            for size, r in RADII_MM.items():
                # the lower centre: within r of the crescent, and covered enough to need this search
                cg = centroid + offsets[np.linalg.norm(offsets, axis=1) <= r]
                cg = cg[np.linalg.norm(cg - c_up, axis=1) < r_up + r - 2.0]
                if len(cg) == 0:
                    continue
                local = np.linalg.norm(pts - centroid, axis=1) <= 2 * r + 1.0
                sp, sm = pts[local].astype(np.float32), mine[local]
                cgf = cg.astype(np.float32)
                sh, si = hidden[local], pts_in[local]
                js = np.unique(si[sh])
                # per centre, the disc's samples of the crescent, of the rest not hidden (the union is the
                # crescent and those), and per found wink j of both over j
                sets = [sm, ~sh & ~sm & ~blind[local], *[m for j in js for m in (sm & (si == j), sh & (si == j))]]
                counts = _disc_counts(sp, cgf, r, sets)
                inter = counts[:, 0]
                union = counts[:, 1] + int(sm.sum()) + int((mine & ~local).sum())
                for n_j in range(len(js)):
                    # a disc showing its colour inside found wink j lies over it: j's own colour in the
                    # disc's part over j is then a miss (one wink cannot be both over and under another)
                    over_j = counts[:, 2 + 2 * n_j] > 0
                    union += over_j * counts[:, 3 + 2 * n_j]
                iou = inter / np.maximum(union, 1)
                i = int(np.argmax(iou))
                if best is None or iou[i] > best[0]:
                    best = (float(iou[i]), size, cg[i], int(inter[i]))
            if best is None or best[0] < params.min_iou or best[3] * cell_mm2 < params.min_area_mm2:
                continue
            iou, size, centre, _ = best
            # width of what shows: the lower disc's reach beyond the upper rim, along the line of centres
            d = float(np.linalg.norm(centre - c_up))
            min_w = params.min_width_mm
            if same:  # what shows of it must be wider than the blur can make of the upper's own outline
                min_w = max(min_w, params.same_min_width_px * mmpp)
            if d + RADII_MM[size] - r_up < min_w:
                continue
            twins = [o for o in [*live, *found] if o.color == name and o is not upper
                     and np.linalg.norm(o.center_mm - centre) < o.radius_mm + RADII_MM[size] - 2.0]
            if twins and not _shows_beyond(pts[mine], centre, RADII_MM[size], twins, blend, cell_mm2, params):
                continue
            if same and d < r_up + RADII_MM[size] - 2.0 and d < params.same_min_offset_mm:
                continue
            if k + 1 == cs.mat_class and _shows_mostly(centre, RADII_MM[size], [upper, *near], params):
                continue  # no crescent: a wink of the felt's hue showing most of its disc, read by its core and rim
            c = WinkCandidate(color=name, size=size, center_mm=centre, votes=iou)
            c.edge_support = iou
            c.own_fraction = 1.0
            c.score = iou
            # most of it is inferred from a crescent; the size too when little of the rim shows
            c.confidence = min(c.confidence, 0.55 + 0.4 * iou)
            found.append(c)
    return found
