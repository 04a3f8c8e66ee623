"""A lone wink's size from the amount of its colour in the picture, which no blur changes.

A wink a few pixels across (a far corner of a wide view, 2-3 mm per pixel) shows no curvature to measure: its
outline is one blur. Blur moves colour about but neither makes nor destroys it: in linear light a pixel is the
mix ``f W + (1 - f) F`` of the wink's colour and the felt's, and the wink's share ``f`` summed over the plane
is the disc's area, pi r^2 (201 mm^2 small, 380 mm^2 large: nearly two to one), whatever the blur, as long as
the sum reaches beyond the blur and nothing but felt and this wink lies within it. The share is read in
chromaticity (shading and shadows change brightness, not chromaticity) and mapped back to the mix by the two
colours' brightness. The felt's own noise, read on the ring around the wink where only felt lies, gives the
sum's uncertainty; the wink's colour does not fill its own disc evenly (bevel, highlight), a share of its area
(``model_fraction``) allowed for on top.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import LARGE_WINK_RADIUS_MM, SMALL_WINK_RADIUS_MM, WINK_THICKNESS_MM
from vision.winks import EDGE_BLUR_IMAGE_PX, PAINT_HALF_WIDTH_MAX_MM, RADII_MM, WinkCandidate, _on_mat, \
    _project_raster, _sample_labels, baseline_distance_mm
from vision.ortho import OrthoGrid


@dataclass(frozen=True, slots=True)
class DiscMassParams:
    """Colour-mass size parameters (mm unless named otherwise)."""

    blur_reach_px: float = 2.0 * EDGE_BLUR_IMAGE_PX  # the sum reaches this far beyond a large rim (the blur's tail)
    margin_mm: float = 1.5  # ... plus this
    ring_mm: float = 3.0  # the outermost ring of the sum: the felt reference and its noise
    inner_mm: float = SMALL_WINK_RADIUS_MM - 4.0  # the wink's own colour is read inside this radius
    min_inner_px: float = 1.0  # ... which must span a pixel at least
    step_px: float = 0.5  # raster spacing in image pixels (at most ``max_step_mm``)
    max_step_mm: float = 0.5
    corr_px: float = 1.5  # pixel noise is correlated over this much (demosaicing, JPEG)
    model_fraction: float = 0.15  # of the disc's area: uneven colour within the wink (bevel, highlight)
    min_chroma_contrast: float = 4.0  # wink against felt, in the felt's chromaticity noise sigmas
    bin_mm: float = 1.0  # rings about the centre, each read on its felt part
    min_clear_share: float = 0.5  # of every ring (and of the reference ring) that shows felt only
    min_likelihood_ratio: float = 100.0
    max_misfit_sigma: float = 3.0  # the chosen area within this many sigma of the measured one
    # A size's disc must hold the colour and end at its rim: the mean share over a band ``band_mm`` wide, a
    # blur width (``EDGE_BLUR_IMAGE_PX``) inside its rim, at least ``fill`` and as far outside at most
    # ``1 - fill`` (a dark wink's shadow, or a tinted halo, adds colour about a wink without filling a disc)
    blur_widths: float = 1.5
    band_mm: float = 1.0
    fill: float = 0.7


@dataclass(frozen=True, slots=True)
class DiscMass:
    """The wink's colour summed over the plane: its area and that area's uncertainty (mm^2)."""

    area_mm2: float
    sigma_mm2: float
    chroma_noise: float = 0.0  # the felt's chromaticity noise in units of the wink-felt difference
    lever: float = 1.0  # felt over wink brightness: how much a chromaticity shift is magnified into a share
    fills: tuple[str, ...] = ()  # the sizes whose disc the colour fills and stops at (``DiscMassParams.fill``)


def _linear(bgr_u8: np.ndarray) -> np.ndarray:
    """sRGB-encoded values to linear light (mixing is linear there)."""
    v = bgr_u8.astype(np.float32) / 255.0
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def disc_mass(w: WinkCandidate, winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
              grid: OrthoGrid, exclude_mask: np.ndarray | None = None,
              params: DiscMassParams = DiscMassParams()) -> DiscMass | None:
    """The area of ``w``'s colour summed over a disc that reaches beyond its blur (None: too little of that disc
    shows only felt, or the colours cannot be told apart).

    Where another wink (with its blur), paint or the mat's edge takes part of the disc, each ring about the
    centre is read on its felt part alone: a blurred disc looks the same all round its centre."""
    if w.tilt_deg > 0 or w.potted:
        return None
    c = np.asarray(w.center_mm, float)
    mmpp = camera.mm_per_px_at((float(c[0]), float(c[1])))
    if params.inner_mm / mmpp < params.min_inner_px:
        return None
    blur_px_mm = EDGE_BLUR_IMAGE_PX * mmpp
    spill = params.blur_reach_px * mmpp + params.margin_mm  # how far a rim's blur reaches
    reach = LARGE_WINK_RADIUS_MM + spill
    outer = reach + params.ring_mm
    step = min(params.step_px * mmpp, params.max_step_mm)
    n = int(math.ceil(outer / step)) * 2 + 1
    g = (np.arange(n) - (n - 1) / 2) * step
    xx, yy = np.meshgrid(c[0] + g, c[1] + g)
    pts = np.column_stack([xx.ravel(), yy.ravel()])
    r = np.hypot(pts[:, 0] - c[0], pts[:, 1] - c[1])
    # felt only: clear of other winks and their blur, of paint and the mat's edge (with blur), of the pot
    clear = r <= outer
    clear &= _on_mat(pts, spill)
    clear &= baseline_distance_mm(pts) > PAINT_HALF_WIDTH_MAX_MM + spill
    for o in winks:
        if o is w or o.potted or float(np.linalg.norm(o.center_mm - c)) > outer + o.radius_mm + spill:
            continue
        clear &= np.linalg.norm(pts - o.center_mm, axis=1) > o.radius_mm + spill
    if exclude_mask is not None:
        clear &= _sample_labels(exclude_mask.view(np.uint8), grid.ortho_from_table(pts)) != 1
    inner, ring = r <= params.inner_mm, (r > reach) & (r <= outer)
    bins = np.minimum((r / params.bin_mm).astype(int), int(math.ceil(reach / params.bin_mm)))
    nb = int(math.ceil(reach / params.bin_mm))
    all_n = np.bincount(bins[r <= reach], minlength=nb + 1)[:nb]
    vis_n = np.bincount(bins[(r <= reach) & clear], minlength=nb + 1)[:nb]
    if (inner & ~clear).any() or (vis_n < params.min_clear_share * all_n).any() \
            or int((ring & clear).sum()) < params.min_clear_share * int(ring.sum()):
        return None
    q = _project_raster(camera, c, g, z_mm=w.z_mm + WINK_THICKNESS_MM / 2)
    hh, ww = image_bgr.shape[:2]
    if q[:, 0].min() < 0 or q[:, 1].min() < 0 or q[:, 0].max() > ww - 1 or q[:, 1].max() > hh - 1:
        return None
    patch = cv2.remap(image_bgr, q[:, 0].reshape(n, n), q[:, 1].reshape(n, n), cv2.INTER_LINEAR)
    lin = _linear(patch).reshape(-1, 3)
    ring &= clear
    wink_lin = np.median(lin[inner], axis=0)
    felt_lin = np.median(lin[ring], axis=0)
    s_w, s_f = float(wink_lin.sum()), float(felt_lin.sum())
    chroma = lin / np.maximum(lin.sum(axis=1, keepdims=True), 1e-6)
    cw, cf = wink_lin / max(s_w, 1e-6), felt_lin / max(s_f, 1e-6)
    v = cw - cf
    vv = float(v @ v)
    ac = ((chroma - cf) @ v) / max(vv, 1e-12)
    ring_ac = ac[ring]
    noise = 1.4826 * float(np.median(np.abs(ring_ac - np.median(ring_ac))))
    if vv <= 0 or noise <= 0 or 1.0 / noise < params.min_chroma_contrast:
        return None  # the wink's chromaticity stands too little above the felt's noise
    # the chromaticity blend back to the linear-light mix: ac = f sW / (f sW + (1 - f) sF)
    # (a share past 1 is noise on the wink itself: clipped there, where the map has no pole)
    a = np.clip(ac, -0.5, 1.0)
    f = a * s_f / np.maximum(a * s_f + (1.0 - a) * s_w, 1e-6)
    f_ref = float(np.median(f[ring]))
    f_noise = 1.4826 * float(np.median(np.abs(f[ring] - f_ref)))
    # each ring's mean share (its felt part), times its area
    use = (r <= reach) & clear
    sums = np.bincount(bins[use], weights=f[use] - f_ref, minlength=nb + 1)[:nb]
    edges_mm = np.arange(nb + 1) * params.bin_mm
    edges_mm[-1] = reach
    ring_area = math.pi * np.diff(edges_mm ** 2)
    area = float((sums / np.maximum(vis_n, 1) * ring_area).sum())
    disc_mm2 = math.pi * reach * reach
    # pixel noise over the disc (samples correlated within a pixel and the blur), and the reference's own
    cell = step * step
    n_ind_ring = max(float(ring.sum()) * cell / (params.corr_px * mmpp) ** 2, 1.0)
    var = (f_noise ** 2 * disc_mm2 * (params.corr_px * mmpp) ** 2 / max(float(use.sum()) * cell / disc_mm2, 1e-3)
           + (disc_mm2 * f_noise) ** 2 / n_ind_ring)
    fills = []
    for size, r_mm in RADII_MM.items():
        lo = r_mm - params.blur_widths * blur_px_mm
        hi = r_mm + params.blur_widths * blur_px_mm
        inside = use & (r >= lo - params.band_mm) & (r < lo)
        outside = use & (r > hi) & (r <= hi + params.band_mm)
        if inside.any() and outside.any() and float(np.mean(f[inside])) - f_ref >= params.fill and (
                float(np.mean(f[outside])) - f_ref <= 1.0 - params.fill):
            fills.append(size)
    return DiscMass(area_mm2=area, sigma_mm2=math.sqrt(var), chroma_noise=noise, lever=s_f / max(s_w, 1e-6),
                    fills=tuple(fills))


def size_from_mass(m: DiscMass, params: DiscMassParams = DiscMassParams()) -> tuple[str | None, float]:
    """Which of the two discs' areas the mass is, by their likelihood ratio (each hypothesis with its own
    model spread): the size and its confidence, or None when it cannot tell.

    >>> size_from_mass(DiscMass(205.0, 10.0, fills=("small",)))[0]
    'small'
    >>> size_from_mass(DiscMass(205.0, 10.0, fills=()))[0] is None
    True
    >>> size_from_mass(DiscMass(290.0, 10.0, fills=("small", "large")))[0] is None
    True
    """
    ll = {}
    for size, r in RADII_MM.items():
        a = math.pi * r * r
        s2 = m.sigma_mm2 ** 2 + (params.model_fraction * a) ** 2
        ll[size] = -0.5 * (m.area_mm2 - a) ** 2 / s2 - 0.5 * math.log(s2)
    best = max(ll, key=ll.get)
    other = "small" if best == "large" else "large"
    log_lr = ll[best] - ll[other]
    a = math.pi * RADII_MM[best] ** 2
    misfit = abs(m.area_mm2 - a) / math.sqrt(m.sigma_mm2 ** 2 + (params.model_fraction * a) ** 2)
    lr = math.exp(min(log_lr, 50.0))
    conf = lr / (1.0 + lr)
    if lr < params.min_likelihood_ratio or misfit > params.max_misfit_sigma or best not in m.fills:
        return None, min(conf, 0.6)
    return best, conf
