"""A partly seen wink's size from the curvature of the arc of its rim that shows against the felt.

Winks come in two radii, 8 and 11 mm. A wink mostly hidden (under others, behind the pot, at the mat's edge
among paint) shows only an arc of its outline; the label image and a known-radius ring search then cannot tell
the two sizes apart, and the size was left flagged. An arc still carries its radius in its curvature: over an
arc of 120 degrees the two radii differ in sagitta by about a millimetre and a half. So the rim is located
along rays in the full-resolution image, in the plane of the wink's top face (at its height, tilted as posed),
where the chromaticity leaves the wink's for the local felt's (the half-way mix of the two, which blur does
not move; shading and shadows change brightness, not chromaticity); the rays whose edge is not seen against
the felt (another wink, paint, the pot) are set aside; a circle with a free radius is fitted to the rest.
Near the mat's edge the felt model does not hold (the felt's border is shaded by the edge, and beyond the mat
lies the table or floor): there each ray's rim is read against that ray's own last stretch, and each sample's
line of sight is followed down to the mat's top and the table, so the mat's edge line and side wall are never
read as the rim (``_local_reference``). The image's own edge offset (bevel, shading) is taken as half a pixel
either way, or measured the same way on whole, sure winks of the same picture when that leaves the arc
undecided. The size is
decided only when the two radii's likelihoods differ by ``min_likelihood_ratio`` and the fitted radius is a
wink's (an edge that is not one round rim fits neither); otherwise the flag stays.

The same edges, seen nearly all round a lone blob of the felt's own hue, tell two winks' union from one disc
(``split_union``, used by ``union_rims``); seen on both sides of a baseline, they tell one large wink that
the paint parts in two from two winks (``join_paint_cut``). A lone wink a few pixels across, whose rim shows
no curvature, is sized by the amount of its colour instead (``vision.disc_mass``), which must then not
contradict what the arc says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import (LARGE_WINK_RADIUS_MM, MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, SMALL_WINK_RADIUS_MM,
                                WINK_THICKNESS_MM)
from vision.colour import CLASS_BG, CLASS_NEUTRAL, COLOR_NAMES, ColourScene
from vision.crescents import felt_at
from vision.disc_mass import DiscMassParams, disc_mass, size_from_mass
from vision.ortho import OrthoGrid
from vision.silhouette import rim_points_mm
from vision.winks import (PAINT_HALF_WIDTH_MAX_MM, RADII_MM, RING_SWITCH_RATIO, WinkCandidate, _dist, _on_mat,
                          _sample_labels, baseline_distance_mm, distances_mm)


@dataclass(frozen=True, slots=True)
class ArcSizeParams:
    """Arc fit parameters (mm unless named otherwise)."""

    n_rays: int = 72  # 5 degrees: about one ray per image pixel of a small wink's rim at 1.3 mm/px
    step_mm: float = 0.25  # sample spacing along a ray
    knots: int = 5  # projected points per ray (the rest interpolated)
    start_mm: float = 3.0  # rays start this far from the centre (inside either radius) ...
    end_mm: float = LARGE_WINK_RADIUS_MM + 4.5  # ... and end here
    inner_mm: float = SMALL_WINK_RADIUS_MM - 2.0  # the wink's own colour is read inside this radius
    min_inner_samples: int = 12
    wink_level: float = 0.7  # a ray must start on the wink's colour (this blend or more) ...
    felt_level: float = 0.3  # ... and reach the felt (this blend or less) within ``felt_within_mm`` of the edge
    felt_within_mm: float = 2.0
    min_chroma_contrast: float = 3.0  # wink/felt chromaticity difference, in the felt's noise sigmas
    chroma_inside_mm: tuple[float, float] = (1.0, 2.0)  # just inside the edge the chromaticity is the wink's ...
    chroma_outside_mm: tuple[float, float] = (1.0, 2.5)  # ... and just outside the felt's
    chroma_wink_level: float = 0.55
    chroma_felt_level: float = 0.4
    # robust spread of the wink's own chromaticity blend (1 when noiseless): the window means (about three
    # independent samples) must stay two sigma clear of the levels above (0.45 from 1, 0.4 from 0)
    max_chroma_noise: float = 0.3
    blend_px: float = 1.5  # blur width: an edge this close to another wink, paint or the pot is not this rim's
    clear_mm: float = 1.0  # ... plus this
    paint_clearance_mm: float = 5.0  # baseline paint half-width (about 2.5-3) plus blur
    mat_edge_zone_mm: float = 8.0  # the felt's border, shaded by the mat's own edge: not in the felt model
    # Near the mat's edge the rim is read against what lies just beyond it on the ray itself (the felt's shaded
    # border, or the table or floor beyond the mat), not against the felt model: ``_local_reference``.
    local_reference: bool = True
    local_window_mm: float = 2.5  # the ray's last stretch: what lies beyond the wink there is the reference
    max_mat_thickness_mm: float = 5.0  # the mat's side wall may show this far below its top (sim: 2-4 mm)
    max_local_noise: float = 0.03  # the reference stretch is uniform: chromaticity spread (MAD sigma) at most
    min_arc_deg: float = 75.0  # visible arc needed to measure a curvature
    corr_px: float = 1.5  # edge samples closer than this along the outline are not independent (blur)
    systematic_px: float = 0.25  # slowly varying edge error (felt texture, shading, a neighbour's blur) ...
    systematic_block_deg: float = 30.0  # ... independent over stretches of this much outline
    model_sigma_mm: float = 0.15  # radius error no arc averages away (pose, thickness, bevel)
    min_likelihood_ratio: float = 100.0  # between the two radii, to decide
    max_misfit_sigma: float = 3.0  # the chosen radius within this many sigma of the fitted one ...
    max_misfit_mm: float = 1.0  # ... or this close
    max_rms_px: float = 0.8  # an edge this ragged is not one round rim
    recentre_mm: float = 1.5  # a fit centred further than this from the rays' origin is measured again
    cautious_neighbours: bool = True  # a neighbour of unknown size and position may reach a large wink's rim ...
    unsure_position_mm: float = 3.0  # ... plus this (its coarse centre's error), see ``_reach_mm``
    size_fit_fraction: float = 0.6  # outline fraction whose fit measured a wink's radius (WinkDetectorParams)
    min_reference: int = 2  # sure whole winks needed to measure the image's edge offset
    max_reference: int = 4
    prior_offset_sigma_px: float = 0.5  # edge offset (bevel, shading) before it is measured: about half a pixel
    reference_rays: int = 36  # a whole outline needs fewer rays for the same radius error
    trim_sigma: float = 3.0  # robust fit: residuals beyond this many rms are dropped


@dataclass(frozen=True, slots=True)
class ArcFit:
    """A circle fitted in a wink's top-face plane: radius and its uncertainty, and what it rests on."""

    radius_mm: float
    sigma_mm: float  # statistical only (the edge scatter over the arc's independent samples)
    center_mm: np.ndarray  # in plan
    arc_deg: float
    rms_px: float
    n_points: int
    points_mm: np.ndarray | None = None  # the edge points, in the top-face plane about the wink's centre
    noise_mm2: float = 0.0  # per-point edge variance, scaled for the points that are not independent


def fit_known_radius(p: np.ndarray, r: float, c0: np.ndarray, fit_bias: bool = False,
                      iters: int = 8) -> tuple[np.ndarray, float, np.ndarray]:
    """Centre of a circle of radius ``r`` (plus, with ``fit_bias``, a common edge offset: blur and the blend
    level move every edge alike) through points ``p`` (Gauss-Newton); returns it, the offset and residuals.

    The 2x2 or 3x3 normal equations are summed by columns and solved on Python floats (Cramer's rule, with
    LAPACK's determinant test): on a few dozen points the general routines' fixed cost was most of the fit."""
    c = c0.astype(float).copy()
    bias = 0.0
    px, py = p[:, 0], p[:, 1]
    n = float(len(p))
    for _ in range(iters):
        gx, gy = px - c[0], py - c[1]
        dist = np.maximum(np.sqrt(gx * gx + gy * gy), 1e-6)
        res = dist - r - bias
        jx, jy = -gx / dist, -gy / dist
        a, b, d = float(jx @ jx), float(jx @ jy), float(jy @ jy)
        u, v = -float(jx @ res), -float(jy @ res)
        if fit_bias:
            # the offset's column is all -1: its sums are -sum(jx), -sum(jy), n; its right-hand side sum(res)
            e, f, w = -float(jx.sum()), -float(jy.sum()), float(res.sum())
            cof = (d * n - f * f, f * e - b * n, b * f - d * e)
            det = a * cof[0] + b * cof[1] + e * cof[2]
            if abs(det) < 1e-9:
                break
            adj = ((cof[0], f * e - b * n, b * f - e * d),
                   (e * f - b * n, a * n - e * e, b * e - a * f),
                   (b * f - d * e, e * b - a * f, a * d - b * b))
            step = [(row[0] * u + row[1] * v + row[2] * w) / det for row in adj]
        else:
            det = a * d - b * b
            if abs(det) < 1e-9:
                break
            step = [(d * u - b * v) / det, (a * v - b * u) / det]
        c[0] += min(max(step[0], -3.0), 3.0)
        c[1] += min(max(step[1], -3.0), 3.0)
        if fit_bias:
            bias = min(max(bias + step[2], -3.0), 3.0)
        if math.sqrt(sum(x * x for x in step)) < 1e-3:
            break
    gx, gy = px - c[0], py - c[1]
    return c, bias, np.sqrt(gx * gx + gy * gy) - r - bias


def _fit_circle(p: np.ndarray, c0: np.ndarray, r0: float, iters: int = 10) -> tuple[np.ndarray, float, np.ndarray]:
    """Least-squares circle (centre and radius free) through ``p`` from a start; returns centre, radius and
    the parameter covariance per unit residual variance (``inv(J^T J)``)."""
    c = c0.astype(float).copy()
    r = float(r0)
    jtj = np.eye(3)
    for _ in range(iters):
        g = p - c
        d = np.maximum(distances_mm(p, c), 1e-9)
        res = d - r
        jac = np.column_stack([-g / d[:, None], -np.ones(len(p))])
        jtj = jac.T @ jac
        if abs(np.linalg.det(jtj)) < 1e-12:
            return c, r, np.full((3, 3), np.inf)
        step = np.linalg.solve(jtj, -(jac.T @ res))
        step = np.clip(step, -3.0, 3.0)
        c += step[:2]
        r += float(step[2])
        if float(np.abs(step).max()) < 1e-4:
            break
    return c, r, np.linalg.inv(jtj)


def _rays(w: WinkCandidate, n_rays: int, params: ArcSizeParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rays in ``w``'s top-face plane: unit 3-D directions (rays, 3), their angles, and the radii sampled."""
    ang = np.linspace(0.0, 2 * math.pi, n_rays, endpoint=False)
    s = np.arange(params.start_mm, params.end_mm + 1e-9, params.step_mm)
    # a point of the (tilted) face is linear in its radius: centre + r * direction
    d = rim_points_mm(np.zeros(2), 1.0, 0.0, ang, w.tilt_deg, w.tilt_azimuth_deg)
    return d, ang, s


def _reach_mm(o: WinkCandidate, params: ArcSizeParams, w: WinkCandidate | None = None, felt_class: int = -1
              ) -> float:
    """How far from its centre another wink may cover the felt: its radius once its outline was fitted and
    its size measured; a large wink's radius plus its coarse position error while either is unknown (its
    outline must not be taken for this one's). A neighbour ``o`` of another colour than ``w``'s, and not of the
    felt's hue (``felt_class``), is told apart by its colour wherever it lies: an edge against it is refused
    by the labels beyond the edge, so only its disc as found is set aside (two flagged winks, each partly
    under the other, no longer hide each other's whole rim)."""
    if not params.cautious_neighbours or o.arc_sigma_mm is not None or (
            o.fit_fraction >= params.size_fit_fraction and o.size_confidence >= 0.9):
        return o.radius_mm
    if w is not None and o.color != w.color and not o.neutral_inside and felt_class >= 0 \
            and COLOR_NAMES.index(o.color) + 1 != felt_class:
        return o.radius_mm
    return LARGE_WINK_RADIUS_MM + params.unsure_position_mm


def rim_edges(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
              cs: ColourScene, grid: OrthoGrid, exclude_mask: np.ndarray | None = None,
              params: ArcSizeParams = ArcSizeParams(), n_rays: int | None = None
              ) -> tuple[np.ndarray, float, float] | None:
    """Where ``w``'s outline meets the felt along rays from its centre: the edge points in its top-face plane
    (about its centre, mm), the arc they cover (degrees) and the image scale there (mm per pixel); None when
    less than ``min_arc_deg`` shows."""
    d, ang, s = _rays(w, n_rays or params.n_rays, params)
    n_r, n_s = len(ang), len(s)
    mmpp = camera.mm_per_px_at((float(w.center_mm[0]), float(w.center_mm[1])))
    blend = params.blend_px * mmpp + params.clear_mm
    # colour tells another wink from the felt only where the labels are read (not in the mat's edge zone)
    told = cs.mat_class if bool(_on_mat(w.center_mm[None], params.end_mm + params.mat_edge_zone_mm + blend)[0]) \
        else -1
    reach = {id(o): _reach_mm(o, params, w, told) for o in winks if o is not w and not o.potted}
    others = [o for o in winks if o is not w and not o.potted
              and _dist(o.center_mm, w.center_mm) < reach[id(o)] + params.end_mm + blend]
    # first, in plan alone: could enough of the rim (at either radius) be seen against the felt at all?
    rim = w.center_mm + w.radius_mm * d[:, :2]
    zone = params.mat_edge_zone_mm + blend
    could = (np.ones(len(rim), bool) if params.local_reference else _on_mat(rim, zone)) & (
        baseline_distance_mm(rim) > params.paint_clearance_mm)
    for o in others:
        could &= distances_mm(rim, o.center_mm) > reach[id(o)] + blend
    if int(could.sum()) * 360.0 / n_r < params.min_arc_deg:
        return None
    half = WINK_THICKNESS_MM / 2 / math.cos(math.radians(w.tilt_deg))
    c3 = np.array([w.center_mm[0], w.center_mm[1], w.z_mm + half])
    # project a few knots per ray and interpolate between them (the lens is smooth over a centimetre)
    kn = np.linspace(0, n_s - 1, params.knots).round().astype(int)
    qk = camera.project_mm((c3[None, None, :] + s[kn][None, :, None] * d[:, None, :]).reshape(-1, 3))
    qk = qk.reshape(n_r, len(kn), 2)
    f = np.arange(n_s, dtype=float)
    seg = np.clip(np.searchsorted(kn, f, side="right") - 1, 0, len(kn) - 2)
    wt = ((f - kn[seg]) / (kn[seg + 1] - kn[seg]))[None, :, None]
    q = (qk[:, seg] * (1.0 - wt) + qk[:, seg + 1] * wt).reshape(-1, 2).astype(np.float32)
    hh, ww = image_bgr.shape[:2]
    if q[:, 0].min() < 0 or q[:, 1].min() < 0 or q[:, 0].max() > ww - 1 or q[:, 1].max() > hh - 1:
        return None
    bgr = cv2.remap(image_bgr, q[:, 0:1], q[:, 1:2], cv2.INTER_LINEAR).reshape(-1, 3).astype(np.float32) / 255.0
    plan = (w.center_mm[None, None, :] + s[None, :, None] * d[:, None, :2]).reshape(-1, 2)
    # what else is there: other winks (not potted) near enough to cover or touch this one
    covered = np.zeros(len(plan), bool)  # in or near another wink's disc (its colour, its blur)
    for o in others:
        covered |= distances_mm(plan, o.center_mm) < reach[id(o)] + blend
    cov = covered.reshape(n_r, n_s)
    # A ray may start under a wink lying over this one (a squopped wink's centre is often covered): it is
    # read from where it comes out from under, and nothing else may be met after that.
    j0 = np.argmin(np.cumprod(cov, axis=1), axis=1)  # leading covered samples
    j0 = np.where(cov.all(axis=1), n_s, j0)
    ks = np.arange(n_s)[None, :]
    seen = ks >= j0[:, None]
    # the wink's own colour, where nothing else can be seen
    inner = (seen & (s[None, :] <= params.inner_mm)).ravel()
    if int(inner.sum()) < params.min_inner_samples:
        return None
    wink_bgr = np.median(bgr[inner], axis=0)
    # the local felt (a smooth field, 72 mm median): once per ray, at its outer end
    felt_ray = felt_at(cs.background_bgr, grid, plan.reshape(n_r, n_s, 2)[:, -1])
    # near the mat's edge: the ray's own surroundings (None: no ray reaches the edge zone)
    local = _local_reference(w, c3, d, s, plan.reshape(n_r, n_s, 2), bgr.reshape(n_r, n_s, 3), cov, camera,
                             zone, params) if params.local_reference else None
    if local is not None:
        felt_ray = np.where(local.edge_ray[:, None], local.bgr, felt_ray)
    felt = np.repeat(felt_ray, n_s, axis=0)
    # The edge is read in chromaticity: shading (the bevel, a shadow on the felt, uneven light) changes a
    # colour's brightness, not its chromaticity, so a shadow is not taken for more wink nor a shaded bevel for
    # felt. A pixel mixing a fraction f of wink with felt has the chromaticity blend
    # f sW / (f sW + (1 - f) sF) (s: brightness), so the outline (f = 1/2) is where that reaches sW / (sW + sF).
    chroma = bgr / np.maximum(bgr.sum(axis=1, keepdims=True), 1e-6)
    felt_c = felt / np.maximum(felt.sum(axis=1, keepdims=True), 1e-6)
    inner_c = np.median(chroma[inner], axis=0)
    vc = inner_c[None, :] - felt_c
    vcn = np.sqrt(np.maximum((vc * vc).sum(axis=1), 1e-12))
    if float(np.median(vcn)) < params.min_chroma_contrast * max(cs.mat_noise[0], 1e-4):
        return None  # the wink's hue is the felt's: its edge cannot be told from a shadow's
    ac = (((chroma - felt_c) * vc).sum(axis=1) / (vcn * vcn)).reshape(n_r, n_s)
    # pixel noise along each ray: a [1 2 1] smoothing (symmetric: it moves no edge); and a chromaticity this
    # noisy on the wink itself cannot place its edge
    ac = np.concatenate([ac[:, :1], 0.25 * ac[:, :-2] + 0.5 * ac[:, 1:-1] + 0.25 * ac[:, 2:], ac[:, -1:]], axis=1)
    ac_in = ac.ravel()[inner]
    if 1.4826 * float(np.median(np.abs(ac_in - np.median(ac_in)))) > params.max_chroma_noise:
        return None
    s_w = float(wink_bgr.sum())
    s_f = felt.reshape(n_r, n_s, 3)[:, 0].sum(axis=1)
    level = (s_w / np.maximum(s_w + s_f, 1e-6))[:, None]
    # where each ray leaves the wink: the first sample below the edge level, after starting on the wink
    rows = np.arange(n_r)
    j0c = np.minimum(j0, n_s - 1)
    below = (ac < level) & seen
    j = np.argmax(below, axis=1)
    ok = below[rows, j] & (j > j0) & (ac[rows, j0c] >= params.wink_level)
    jm = np.maximum(j - 1, 0)
    a0, a1 = ac[rows, jm], ac[rows, j]
    t = np.clip((a0 - level[:, 0]) / np.maximum(a0 - a1, 1e-6), 0.0, 1.0)
    r_edge = s[jm] + t * params.step_mm
    # ... and reaches the felt just beyond it (not a blend into something else): in chromaticity, and in
    # colour no further from the felt than the wink is (another colour would be)
    k_felt = int(round(params.felt_within_mm / params.step_mm))
    idx = np.clip(j[:, None] + np.arange(1, k_felt + 1)[None, :], 0, n_s - 1)
    ok &= (ac[rows[:, None], idx] <= params.felt_level).any(axis=1)
    di = (ks - j[:, None]) * params.step_mm
    lo_in, hi_in = params.chroma_inside_mm
    lo_out, hi_out = params.chroma_outside_mm
    sel_in = (di >= -hi_in) & (di <= -lo_in) & seen
    sel_out = (di >= lo_out) & (di <= hi_out)
    m_in = np.where(sel_in, ac, 0.0).sum(axis=1) / np.maximum(sel_in.sum(axis=1), 1)
    m_out = np.where(sel_out, ac, 0.0).sum(axis=1) / np.maximum(sel_out.sum(axis=1), 1)
    ok &= (m_in >= params.chroma_wink_level) & (m_out <= params.chroma_felt_level)
    ok &= (sel_in.sum(axis=1) > 0) & (sel_out.sum(axis=1) > 0)
    # nothing but the wink and the felt along the ray, from where it comes out to beyond the edge
    upto = ks <= np.minimum(j + k_felt, n_s - 1)[:, None]
    ok &= ~(cov & upto & seen).any(axis=1)
    # The silhouette is the hull of the top and the bottom rim: on the side facing the camera the side wall
    # shows, and the bottom rim (seen in the top face's plane) lies out by the thickness times the tangent of
    # the viewing angle; along a ray the outline is out by that shift's outward part.
    cam = camera.center_mm
    shift = WINK_THICKNESS_MM * (cam[:2] - c3[:2]) / max(float(cam[2] - c3[2]), 1e-3)
    r_edge = r_edge - np.maximum(d[:, :2] @ shift, 0.0)
    edge = w.center_mm + r_edge[:, None] * d[:, :2]
    beyond = edge + (edge - w.center_mm) / np.maximum(np.linalg.norm(edge - w.center_mm, axis=1), 1e-6)[:, None] * 2.0
    lab = _sample_labels(cs.labels, grid.ortho_from_table(beyond))
    felt_ok = ((lab == CLASS_BG) | (lab == CLASS_NEUTRAL)) & _on_mat(edge, zone)
    if local is None:
        ok &= felt_ok
    else:
        # an edge-zone ray: from just inside the edge found to the ray's end one surface (that of its
        # reference), clear of the mat's edge line and side wall, and the reference itself one surface
        same = ((local.surface == local.ref_surface[:, None]) | (ks < (j - 1)[:, None])).all(axis=1)
        contrast = vcn.reshape(n_r, n_s)[:, 0] >= params.min_chroma_contrast * np.maximum(local.noise,
                                                                                          cs.mat_noise[0])
        ok &= np.where(local.edge_ray, local.usable & same & contrast, felt_ok)
    ok &= baseline_distance_mm(edge) > params.paint_clearance_mm
    if exclude_mask is not None:
        ok &= _sample_labels(exclude_mask.view(np.uint8), grid.ortho_from_table(edge)) != 1
    n = int(ok.sum())
    arc_deg = n * 360.0 / n_r
    if arc_deg < params.min_arc_deg or n < 8:
        return None
    # the wink's own (top-face) plane: ray radius and angle are its polar coordinates there
    return np.column_stack([r_edge * np.cos(ang), r_edge * np.sin(ang)])[ok], float(arc_deg), mmpp


@dataclass(frozen=True, slots=True)
class LocalReference:
    """Per ray, what its rim is read against near the mat's edge (arrays over the rays)."""

    edge_ray: np.ndarray  # bool: the ray's rim part reaches the felt's border zone or beyond the mat
    bgr: np.ndarray  # (rays, 3) the reference colour: the median over the ray's last stretch
    noise: np.ndarray  # its chromaticity spread (MAD sigma, per chromaticity unit)
    surface: np.ndarray  # (rays, samples) int8: 1 the mat's top, 2 beyond the mat, 0 its edge line or side wall
    ref_surface: np.ndarray  # the surface under the reference stretch
    usable: np.ndarray  # bool: that stretch is one surface, uncovered, and uniform


def _local_reference(w: WinkCandidate, c3: np.ndarray, d: np.ndarray, s: np.ndarray, plan: np.ndarray,
                     bgr: np.ndarray, cov: np.ndarray, camera: CameraModel, zone_mm: float,
                     params: ArcSizeParams) -> LocalReference | None:
    """The reference each ray's rim is read against where the felt model does not hold (the mat's shaded
    border, the table or floor beyond it): the ray's own last stretch, beyond either radius. Which surface
    each sample shows is found by following its line of sight down to the mat's top and to the lowest the
    table can be: past the edge line at both it sees beyond the mat, inside at the top it sees the mat, and
    between (the edge line's blur, the side wall) neither, so the mat's edge is never read as the wink's rim."""
    n_r, n_s = cov.shape
    # rays whose rim (at either radius) or the felt just beyond it reaches the zone: the rest keep the model
    near = (s >= params.inner_mm) & (s <= LARGE_WINK_RADIUS_MM + params.chroma_outside_mm[1])
    edge_ray = ~_on_mat(plan[:, near].reshape(-1, 2), zone_mm).reshape(n_r, -1).any(axis=1)
    if not edge_ray.any():
        return None
    p3 = c3[None, None, :] + s[None, :, None] * d[:, None, :]  # the samples, in the wink's top-face plane
    cam = camera.center_mm

    def inside_mm(z_mm: float) -> np.ndarray:
        g = cam[None, None, :2] + (p3[..., :2] - cam[None, None, :2]) * (
            (cam[2] - z_mm) / np.maximum(cam[2] - p3[..., 2], 1e-3))[..., None]
        return np.minimum(MAT_HALF_LENGTH_MM - np.abs(g[..., 0]), MAT_HALF_WIDTH_MM - np.abs(g[..., 1]))

    band = params.blend_px * camera.mm_per_px_at((float(w.center_mm[0]), float(w.center_mm[1]))) + params.clear_mm
    top, low = inside_mm(0.0), inside_mm(-params.max_mat_thickness_mm)
    surface = np.where(top > band, 1, np.where((top < -band) & (low < -band), 2, 0)).astype(np.int8)
    win = s >= s[-1] - params.local_window_mm
    ref_surface = surface[:, -1]
    usable = edge_ray & (ref_surface > 0) & (surface[:, win] == ref_surface[:, None]).all(axis=1) & ~cov[:, win].any(
        axis=1)
    ref = np.median(bgr[:, win], axis=1)
    chroma = bgr[:, win] / np.maximum(bgr[:, win].sum(axis=2, keepdims=True), 1e-6)
    med = np.median(chroma, axis=1)
    noise = 1.4826 * np.median(np.abs(chroma - med[:, None, :]), axis=1).max(axis=1)
    usable &= noise <= params.max_local_noise
    return LocalReference(edge_ray=edge_ray, bgr=ref.astype(np.float32), noise=noise, surface=surface,
                          ref_surface=ref_surface, usable=usable)


def measure_arc(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
                cs: ColourScene, grid: OrthoGrid, exclude_mask: np.ndarray | None = None,
                params: ArcSizeParams = ArcSizeParams(), n_rays: int | None = None) -> ArcFit | None:
    """The free-radius circle through the part of ``w``'s rim seen against the felt (None: too little shows)."""
    got = rim_edges(w, winks, image_bgr, camera, cs, grid, exclude_mask, params, n_rays)
    if got is None:
        return None
    loc, arc_deg, mmpp = got
    n_r = n_rays or params.n_rays
    c, r, jinv = _fit_circle(loc, np.zeros(2), 0.5 * (SMALL_WINK_RADIUS_MM + LARGE_WINK_RADIUS_MM))
    for _ in range(2):
        res = np.linalg.norm(loc - c, axis=1) - r
        rms = float(np.sqrt(np.mean(res * res)))
        keep = np.abs(res) <= max(params.trim_sigma * rms, 0.5 * mmpp)
        if keep.all() or keep.sum() < 8:
            break
        loc = loc[keep]
        c, r, jinv = _fit_circle(loc, c, r)
    res = np.linalg.norm(loc - c, axis=1) - r
    m = len(loc)
    rms = float(np.sqrt(np.sum(res * res) / max(m - 3, 1)))
    if not np.all(np.isfinite(jinv)) or not math.isfinite(r):
        return None
    # neighbouring samples share the blur: the independent ones are about one per ``corr_px`` of outline
    arc_len_px = m * (2 * math.pi * r / n_r) / mmpp
    n_ind = max(arc_len_px / params.corr_px, 4.0)
    # Edge errors that do not average out along the outline (felt texture, shading, a neighbour's blur) vary
    # slowly along it: a short arc has few independent stretches of them, and little curvature to show.
    n_blocks = max(arc_deg / params.systematic_block_deg, 1.0)
    noise = m * (rms * rms / n_ind + (params.systematic_px * mmpp) ** 2 / n_blocks)
    var_r = float(jinv[2, 2]) * noise
    return ArcFit(radius_mm=float(r), sigma_mm=math.sqrt(max(var_r, 0.0)), center_mm=_to_plan(w, c),
                  arc_deg=float(arc_deg), rms_px=rms / mmpp, n_points=m, points_mm=loc, noise_mm2=noise)


def _to_plan(w: WinkCandidate, c_local: np.ndarray) -> np.ndarray:
    """A point of ``w``'s top-face plane (offset from its centre) in plan: foreshortened along the tilt."""
    az = math.radians(w.tilt_azimuth_deg)
    ca, sa = math.cos(az), math.sin(az)
    du = (c_local[0] * ca + c_local[1] * sa) * math.cos(math.radians(w.tilt_deg))
    dv = -c_local[0] * sa + c_local[1] * ca
    return w.center_mm + np.array([du * ca - dv * sa, du * sa + dv * ca])


def center_on_arc(w: WinkCandidate, fit: ArcFit, radius_mm: float, radius_sigma_mm: float
                  ) -> tuple[np.ndarray, float]:
    """The plan centre of the circle of a known (apparent) radius through the arc, and its uncertainty (mm,
    the larger axis), with that of the apparent radius (on a short arc the centre moves more than it)."""
    p = fit.points_mm
    c, _, _ = fit_known_radius(p, radius_mm, np.zeros(2))
    c_wider, _, _ = fit_known_radius(p, radius_mm + 0.5, c)
    lever = float(np.linalg.norm(c_wider - c)) / 0.5
    g = p - c
    jac = -g / np.maximum(np.linalg.norm(g, axis=1), 1e-9)[:, None]
    jtj = jac.T @ jac
    if abs(np.linalg.det(jtj)) < 1e-12:
        return w.center_mm.copy(), math.inf
    cov = np.linalg.inv(jtj) * fit.noise_mm2
    return _to_plan(w, c), math.hypot(math.sqrt(max(float(np.linalg.eigvalsh(cov)[-1]), 0.0)),
                                      lever * radius_sigma_mm)


def edge_offset_mm_per_px(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
                          cs: ColourScene, grid: OrthoGrid, exclude_mask: np.ndarray | None,
                          params: ArcSizeParams = ArcSizeParams()) -> tuple[float, float] | None:
    """This picture's edge offset (fitted minus true radius, in image pixels) and its spread, from whole,
    sure, flat winks standing alone (None: too few)."""
    if len(winks) < 2:
        return None
    cc = np.array([w.center_mm for w in winks])
    rr = np.array([w.radius_mm for w in winks])
    gap = np.sqrt(((cc[:, None, :] - cc[None, :, :]) ** 2).sum(axis=2)) - rr[:, None] - rr[None, :]
    np.fill_diagonal(gap, np.inf)
    alone = gap.min(axis=1) > 6.0
    refs = [w for w, a in zip(winks, alone) if a and not (
        w.potted or w.tilt_deg > 0 or w.above or w.order_confidence or w.size_confidence < 0.9
        or w.fit_fraction < 0.9 or w.neutral_inside)]
    refs.sort(key=lambda w: -w.fit_fraction)
    offs = []
    for w in refs[:params.max_reference]:
        fit = measure_arc(w, winks, image_bgr, camera, cs, grid, exclude_mask, params, params.reference_rays)
        if fit is None or fit.arc_deg < 300.0:
            continue
        mmpp = camera.mm_per_px_at((float(w.center_mm[0]), float(w.center_mm[1])))
        offs.append((fit.radius_mm - w.radius_mm) / mmpp)
    if len(offs) < params.min_reference:
        return None
    o = np.asarray(offs)
    med = float(np.median(o))
    spread = float(1.4826 * np.median(np.abs(o - med))) if len(o) >= 3 else float(np.std(o))
    return med, spread


@dataclass(frozen=True, slots=True)
class SizeCall:
    size: str | None  # None: the arc cannot tell
    confidence: float
    radius_mm: float
    sigma_mm: float


def size_from_arc(fit: ArcFit, offset_px: float, offset_spread_px: float, mm_per_px: float,
                  params: ArcSizeParams = ArcSizeParams()) -> SizeCall:
    """Which of the two radii the arc's (offset-corrected) radius is, by their likelihood ratio.

    >>> fit = ArcFit(radius_mm=8.3, sigma_mm=0.2, center_mm=np.zeros(2), arc_deg=120.0, rms_px=0.2, n_points=40)
    >>> size_from_arc(fit, 0.0, 0.0, 1.0).size
    'small'
    >>> size_from_arc(ArcFit(9.4, 0.2, np.zeros(2), 120.0, 0.2, 40), 0.0, 0.0, 1.0).size is None
    True
    """
    r = fit.radius_mm - offset_px * mm_per_px
    sigma = math.sqrt(fit.sigma_mm ** 2 + (offset_spread_px * mm_per_px) ** 2 + params.model_sigma_mm ** 2)
    # log of N(r; 8, sigma) / N(r; 11, sigma)
    r_s, r_l = SMALL_WINK_RADIUS_MM, LARGE_WINK_RADIUS_MM
    log_lr = ((r - r_l) ** 2 - (r - r_s) ** 2) / (2 * sigma * sigma)
    size = "small" if log_lr > 0 else "large"
    lr = math.exp(min(abs(log_lr), 50.0))
    conf = lr / (1.0 + lr)
    misfit = abs(r - RADII_MM[size])
    fits = misfit <= max(params.max_misfit_sigma * sigma, params.max_misfit_mm)
    if lr < params.min_likelihood_ratio or not fits or fit.rms_px > params.max_rms_px:
        return SizeCall(size=None, confidence=min(conf, 0.6), radius_mm=r, sigma_mm=sigma)
    return SizeCall(size=size, confidence=conf, radius_mm=r, sigma_mm=sigma)


def _settled_arc(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
                 cs: ColourScene, grid: OrthoGrid, exclude_mask: np.ndarray | None,
                 params: ArcSizeParams) -> ArcFit | None:
    """The arc measured from rays about the wink's own centre: rays from a point millimetres off it meet its
    rim obliquely and read its inside partly off the wink, so a fit whose centre lies away from where the rays
    started is measured again from there, and kept only if it then stays put."""
    fit = measure_arc(w, winks, image_bgr, camera, cs, grid, exclude_mask, params)
    if fit is None or float(np.linalg.norm(fit.center_mm - w.center_mm)) <= params.recentre_mm:
        return fit
    moved = replace(w, center_mm=fit.center_mm.copy())
    again = measure_arc(moved, [o for o in winks if o is not w], image_bgr, camera, cs, grid, exclude_mask,
                        params)
    if again is None or float(np.linalg.norm(again.center_mm - moved.center_mm)) > params.recentre_mm:
        return None
    # the same rays' polar frame as the wink's: points about ``moved``'s centre, shifted to ``w``'s
    shift = np.asarray(fit.center_mm) - w.center_mm
    return replace(again, points_mm=again.points_mm + _to_local(w, shift))


def _to_local(w: WinkCandidate, plan_offset: np.ndarray) -> np.ndarray:
    """A plan offset from ``w``'s centre in its top-face plane (the inverse of ``_to_plan``)."""
    az = math.radians(w.tilt_azimuth_deg)
    ca, sa = math.cos(az), math.sin(az)
    du = (plan_offset[0] * ca + plan_offset[1] * sa) / math.cos(math.radians(w.tilt_deg))
    dv = -plan_offset[0] * sa + plan_offset[1] * ca
    return np.array([du * ca - dv * sa, du * sa + dv * ca])


def decide_sizes_from_arcs(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
                           cs: ColourScene, grid: OrthoGrid, exclude_mask: np.ndarray | None,
                           size_fit_fraction: float, params: ArcSizeParams = ArcSizeParams(),
                           mass_params: DiscMassParams = DiscMassParams()) -> list[WinkCandidate]:
    """Decide, from the arc each shows (or, alone on the felt, from its colour's area), the size of the winks
    whose size is flagged (too little of the outline for the known-radius fit, or a close call); returns those
    whose size changed (their centre moved to the arc's, to be fitted again). A decided wink carries
    ``arc_sigma_mm`` (its centre's uncertainty); the rest keep their flag."""
    todo = [w for w in winks if not w.potted
            and (w.fit_fraction < size_fit_fraction or w.size_confidence < 0.9)]
    if not todo:
        return []
    fits = [(w, _settled_arc(w, winks, image_bgr, camera, cs, grid, exclude_mask, params)) for w in todo]
    off: tuple[float, float] | None = None
    changed = []
    for w, fit in fits:
        mmpp = camera.mm_per_px_at((float(w.center_mm[0]), float(w.center_mm[1])))
        # A lone wink's colour summed over the plane is its disc's area whatever the blur: it sizes winks a few
        # pixels across, whose rim shows no curvature, and must not contradict what the arc says.
        mass = disc_mass(w, winks, image_bgr, camera, grid, exclude_mask, mass_params)
        by_mass = size_from_mass(mass, mass_params) if mass is not None else (None, 0.5)
        call = None
        used = (0.0, params.prior_offset_sigma_px)
        if fit is not None:
            # The picture's edge offset (blur, bevel, shading): first as any sharp picture has it (within half a
            # pixel either way); an arc that leaves undecided has it measured, once, on the picture's own whole
            # sure winks (without them, the first answer stands).
            call = size_from_arc(fit, *used, mmpp, params)
            if call.size is None:
                if off is None:
                    off = edge_offset_mm_per_px(winks, image_bgr, camera, cs, grid, exclude_mask, params) or used
                used = off
                call = size_from_arc(fit, *used, mmpp, params)
        if call is not None and call.size is not None:
            if by_mass[0] is not None and by_mass[0] != call.size:
                continue  # the arc and the colour's area disagree: the flag stays
            size, conf = call.size, call.confidence
        elif by_mass[0] is not None:
            size, conf = by_mass
        else:
            continue
        rs = w.ring_strength
        if rs is not None and max(rs.values()) > RING_SWITCH_RATIO * rs[size]:
            continue  # the edge all round the outline holds clearly more for the other radius: the flag stays
        if call is not None and call.size is not None:
            # the centre of the circle of that radius through the arc: where the arc puts the wink
            centre, sigma = center_on_arc(w, fit, RADII_MM[size] + used[0] * mmpp, used[1] * mmpp)
            if not math.isfinite(sigma):
                continue
        else:
            centre, sigma = w.center_mm.copy(), w.sigma_mm  # the mass holds no position: the fitted centre stands
        w.size_confidence = conf
        if size != w.size:
            w.size = size
            w.center_mm = centre
            w.edge_offset_px = None
            changed.append(w)
        # its position is no surer than the arc's centre, nor than the two centres agree
        w.arc_sigma_mm = math.hypot(sigma, float(np.linalg.norm(centre - w.center_mm)))
    return changed


@dataclass(frozen=True, slots=True)
class UnionSplitParams:
    """When one outline is two winks' (mm unless named otherwise)."""

    min_arc_deg: float = 220.0  # most of the outline seen (a lone blob: its shape speaks)
    max_rms_px: float = 0.7  # the two discs' union follows the edge to within this (a tilted one is an ellipse) ...
    min_gain: float = 2.0  # ... this many times closer than the best single circle of any radius
    min_single_rms_px: float = 0.6  # ... which itself misses the edge by this much
    min_apart_mm: float = 3.0  # two centres this far apart (closer: one disc, within the blur)
    min_share_deg: float = 60.0  # each disc owns this much of the outline
    max_offset_px: float = 1.0  # the edge offset (blur, bevel, shading) the union's outline may have
    n_rays: int = 36
    # rays from the blob's coarse centre reach past the union's farthest rim (a small disc's beyond a large one's
    # lies up to 16 mm out; with the felt read beyond it): a lone disc's rays end at 15.5 mm, inside that rim
    end_mm: float = LARGE_WINK_RADIUS_MM + SMALL_WINK_RADIUS_MM + 4.5
    # Beside winks of other colours (over or under them) part of the union's outline meets no felt: less of it
    # shows, and one disc may show little of its rim; its colour over its part of the blob speaks for it then
    min_beside_arc_deg: float = 180.0  # the outline seen against the felt
    min_beside_share_deg: float = 20.0  # the less-seen disc's share of it
    min_hidden_rim: float = 0.8  # share of its rim beyond the other disc seen, or beside other winks (unreadable)
    min_own_colour: float = 0.7  # share of its part beyond the other disc (and the blur) labelled its colour
    blur_mm: float = 1.5


def _fit_union(p: np.ndarray, c1: np.ndarray, c2: np.ndarray, r1: float, r2: float, max_bias_mm: float,
               iters: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two circles of known radii (plus a common edge offset within ``max_bias_mm``) whose union's outline passes
    through ``p`` (Gauss-Newton: each point is on the circle it lies nearer to, as the union's edge is the
    outer one); returns the centres and the residuals."""
    c1, c2 = c1.astype(float).copy(), c2.astype(float).copy()
    bias = 0.0
    for _ in range(iters):
        g1, g2 = p - c1, p - c2
        d1 = np.maximum(distances_mm(p, c1), 1e-9)
        d2 = np.maximum(distances_mm(p, c2), 1e-9)
        e1, e2 = d1 - r1 - bias, d2 - r2 - bias
        own1 = e1 <= e2  # the point lies on circle 1's part of the outline
        res = np.where(own1, e1, e2)
        jac = np.zeros((len(p), 5))
        jac[own1, 0:2] = -g1[own1] / d1[own1, None]
        jac[~own1, 2:4] = -g2[~own1] / d2[~own1, None]
        jac[:, 4] = -1.0
        step = np.clip(np.linalg.solve(jac.T @ jac + 1e-6 * np.eye(5), -(jac.T @ res)), -2.0, 2.0)
        c1 += step[:2]
        c2 += step[2:4]
        bias = float(np.clip(bias + step[4], -max_bias_mm, max_bias_mm))
        if float(np.abs(step).max()) < 1e-3:
            break
    e1 = distances_mm(p, c1) - r1 - bias
    e2 = distances_mm(p, c2) - r2 - bias
    return c1, c2, np.minimum(e1, e2)


def split_union(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
                cs: ColourScene, grid: OrthoGrid, exclude_mask: np.ndarray | None = None,
                params: UnionSplitParams = UnionSplitParams(), arc_params: ArcSizeParams = ArcSizeParams()
                ) -> list[tuple[str, np.ndarray]] | None:
    """Two winks of one colour read as one: their outline, seen nearly all round, is the union of two discs
    of the known radii, not one circle. Returns the two (size, plan centre), or None."""
    flat = WinkCandidate(color=w.color, size="large", center_mm=w.center_mm.copy(), votes=w.votes)
    # a union shows at ten-degree steps already; ask for the whole arc needed before reading the image
    got = rim_edges(flat, [o for o in winks if o is not w], image_bgr, camera, cs, grid, exclude_mask,
                    replace(arc_params, min_arc_deg=min(params.min_arc_deg, params.min_beside_arc_deg),
                            cautious_neighbours=False,
                            end_mm=params.end_mm), params.n_rays)
    if got is None:
        return None
    p, arc_deg, mmpp = got
    pair = union_of_two(p, mmpp, params) if arc_deg >= params.min_arc_deg else None
    if pair is None:
        pair = _union_beside_others(w, p, arc_deg, mmpp, winks, cs, grid, params, arc_params)
    if pair is None:
        return None
    (s1, c1), (s2, c2) = pair
    return [(s1, _to_plan(flat, c1)), (s2, _to_plan(flat, c2))]


def _union_beside_others(w: WinkCandidate, p: np.ndarray, arc_deg: float, mm_per_px: float,
                         winks: list[WinkCandidate], cs: ColourScene, grid: OrthoGrid, params: UnionSplitParams,
                         arc_params: ArcSizeParams) -> list[tuple[str, np.ndarray]] | None:
    """Two discs' union (outline points ``p`` about ``w``'s centre) where one disc's rim lies on winks of other
    colours (over or under them): that disc shows little outline against the felt, so its own part of the blob,
    in its colour, and a rim either seen or where no rim can be read, must speak for it."""
    if arc_deg < params.min_beside_arc_deg:
        return None
    pair = union_of_two(p, mm_per_px, replace(params, min_share_deg=params.min_beside_share_deg,
                                              min_single_rms_px=0.0))
    if pair is None:
        return None
    (s1, c1), (s2, c2) = pair
    own1 = distances_mm(p, c1) - RADII_MM[s1] <= distances_mm(p, c2) - RADII_MM[s2]
    (sa, ca), (sb, cb) = pair if own1.sum() <= (~own1).sum() else pair[::-1]  # a: the less-seen disc
    ra, rb = RADII_MM[sa], RADII_MM[sb]
    ang = np.linspace(0.0, 2 * math.pi, 72, endpoint=False)
    rim = ca + ra * np.column_stack([np.cos(ang), np.sin(ang)])
    rim = rim[distances_mm(rim, cb) > rb + params.blur_mm]  # its part of the union's outline
    if len(rim) == 0:
        return None
    # each point of that rim is seen (an outline point on it), or lies where rim_edges reads no rim: beside another
    # wink, within the blur and the felt window beyond the edge
    hidden = np.sqrt(((rim[:, None, :] - p[None, :, :]) ** 2).sum(axis=2)).min(axis=1) < params.blur_mm
    margin = arc_params.blend_px * mm_per_px + arc_params.clear_mm + arc_params.felt_within_mm
    for o in winks:
        if o is not w and o.color != w.color and not o.potted:
            hidden |= distances_mm(rim + w.center_mm, o.center_mm) < o.radius_mm + margin
    if hidden.mean() < params.min_hidden_rim:
        return None
    # its part of the blob beyond the other disc (and the blur) is of its colour
    g = np.mgrid[-ra:ra:0.5, -ra:ra:0.5].reshape(2, -1).T
    g = g[np.hypot(g[:, 0], g[:, 1]) < ra - params.blur_mm] + ca
    g = g[distances_mm(g, cb) > rb + params.blur_mm]
    k = COLOR_NAMES.index(w.color) + 1
    if len(g) == 0 or float((_sample_labels(cs.labels, grid.ortho_from_table(g + w.center_mm)) == k).mean()) \
            < params.min_own_colour:
        return None
    return pair


def union_of_two(p: np.ndarray, mm_per_px: float, params: UnionSplitParams = UnionSplitParams()
                 ) -> list[tuple[str, np.ndarray]] | None:
    """Outline points ``p`` (mm, in a wink's plane) that the union of two discs of the known radii follows,
    and no single circle does: the two (size, centre); None otherwise."""
    mmpp = mm_per_px
    c, r, _ = _fit_circle(p, np.zeros(2), 0.5 * (SMALL_WINK_RADIUS_MM + LARGE_WINK_RADIUS_MM))
    rms1 = float(np.sqrt(np.mean((distances_mm(p, c) - r) ** 2))) / mmpp
    if rms1 < params.min_single_rms_px:
        return None
    # the two centres start on the outline's long axis, as far apart as its spread along it says
    mu = p.mean(axis=0)
    evals, evecs = np.linalg.eigh(np.cov((p - mu).T))
    u = evecs[:, 1]
    best = None
    for s1, s2 in (("small", "small"), ("small", "large"), ("large", "small"), ("large", "large")):
        r1, r2 = RADII_MM[s1], RADII_MM[s2]
        half = math.sqrt(max(float(evals[1]) - 0.5 * (0.5 * (r1 + r2)) ** 2, 1.0))
        c1, c2, res = _fit_union(p, mu + half * u, mu - half * u, r1, r2, params.max_offset_px * mmpp)
        rms = float(np.sqrt(np.mean(res * res))) / mmpp
        if best is None or rms < best[0]:
            best = (rms, s1, s2, c1, c2)
    rms2, s1, s2, c1, c2 = best
    if rms2 > params.max_rms_px or rms1 < params.min_gain * rms2:
        return None
    gap = _dist(c1, c2)
    r1, r2 = RADII_MM[s1], RADII_MM[s2]
    if gap < params.min_apart_mm or gap > r1 + r2 - 1.0:
        return None
    own1 = distances_mm(p, c1) - r1 <= distances_mm(p, c2) - r2
    if min(own1.sum(), (~own1).sum()) * 360.0 / params.n_rays < params.min_share_deg:
        return None
    return [(s1, c1), (s2, c2)]



@dataclass(frozen=True, slots=True)
class PaintCutParams:
    """When two winks of one colour either side of a baseline are one large wink the paint cuts in two."""

    max_apart_mm: float = 2 * LARGE_WINK_RADIUS_MM  # the two parts' centres at most this far apart
    min_arc_deg: float = 150.0  # of the one circle's rim seen against the felt (paint and its blur set aside) ...
    min_side_deg: float = 45.0  # ... on each side of the paint
    max_rms_px: float = 0.8  # the edge follows one circle of the large radius to within this ...
    max_offset_px: float = 1.5  # ... with at most this edge offset (blur, bevel, side wall, shading), and
    # nearer the large radius than the small one
    min_gain: float = 1.5  # ... this many times closer than the two parts' own discs do
    n_rays: int = 72


def join_paint_cut(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene,
                   grid: OrthoGrid, exclude_mask: np.ndarray | None = None,
                   params: PaintCutParams = PaintCutParams(), arc_params: ArcSizeParams = ArcSizeParams()
                   ) -> list[WinkCandidate]:
    """Join pairs of same-coloured winks that a baseline's paint parts: a large wink lying across the line
    shows two parts of its colour, which the label search may read as two small winks. Paint edges are
    straight in the table plane; a wink's rim is one circle. When the rim seen on both sides of the paint
    follows one circle of the large radius, far closer than the two parts' own discs, the two are one large
    wink there. Returns the winks that were removed (the part kept is made that wink)."""
    removed: list[WinkCandidate] = []
    live = [w for w in winks if not w.potted]
    for i, a in enumerate(live):
        for b in live[i + 1:]:
            if a in removed or b in removed or a.color != b.color:
                continue
            apart = float(np.linalg.norm(a.center_mm - b.center_mm))
            if apart > params.max_apart_mm:
                continue
            # the paint's centreline runs between the two
            seg = a.center_mm[None, :] + np.linspace(0.0, 1.0, 9)[:, None] * (b.center_mm - a.center_mm)[None, :]
            if float(baseline_distance_mm(seg).min()) > PAINT_HALF_WIDTH_MAX_MM:
                continue
            # each part's rim, read along rays from its own centre (paint and its blur set aside), in plan
            others = [o for o in winks if o is not a and o is not b and o not in removed]
            parts = []
            for part in (a, b):
                probe = WinkCandidate(color=part.color, size="large", center_mm=part.center_mm.copy(),
                                      votes=part.votes)
                got = rim_edges(probe, others, image_bgr, camera, cs, grid, exclude_mask,
                                replace(arc_params, min_arc_deg=params.min_side_deg, cautious_neighbours=False),
                                params.n_rays)
                if got is None:
                    break
                parts.append((part.center_mm + got[0], got[2]))
            if len(parts) < 2:
                continue
            mid = 0.5 * (a.center_mm + b.center_mm)
            p = np.concatenate([parts[0][0], parts[1][0]]) - mid
            mmpp = max(parts[0][1], parts[1][1])
            if len(p) * 360.0 / params.n_rays < params.min_arc_deg:
                continue
            c, bias, res = fit_known_radius(p, LARGE_WINK_RADIUS_MM, np.zeros(2), fit_bias=True)
            rms_one = float(np.sqrt(np.mean(res * res))) / mmpp
            if rms_one > params.max_rms_px or abs(bias) > min(params.max_offset_px * mmpp,
                                                               0.5 * (LARGE_WINK_RADIUS_MM - SMALL_WINK_RADIUS_MM)):
                continue
            # the two parts as found, each its own disc (the union's outline is the outer one)
            pa, pb = a.center_mm - mid, b.center_mm - mid
            da = np.linalg.norm(p - pa, axis=1) - a.radius_mm
            db = np.linalg.norm(p - pb, axis=1) - b.radius_mm
            rms_two = float(np.sqrt(np.mean(np.minimum(da, db) ** 2))) / mmpp
            if rms_two < params.min_gain * rms_one:
                continue
            a.size = "large"
            a.center_mm = mid + c
            a.votes += b.votes
            a.fit_fraction = 0.0
            a.edge_offset_px = None
            removed.append(b)
    return removed
