"""A wink told by its rim in the full image, where its colour hardly departs from the felt's.

A wink is a flat disc of a known radius: in the picture its rim is an edge all round, as sharp as the camera's
blur, on one circle of the table plane at the wink's top. A wink of the felt's own hue (green on green felt),
in the shade at the mat's end or crossing a baseline, leaves the colour labels too few of its pixels to pass
their tests; its rim still shows. Along the normals of the projected outline the colour profile is sampled;
each profile gives the sub-pixel place where it leaves the colour outside (``edge_crossings``), and the centre
and the common edge offset are fitted to those places (``solve_shift``). On a real rim most of the visible
outline crosses within a pixel of the fitted circle with a contrast above the felt's noise; on felt, a band of
lighter felt or a straight edge, the crossings scatter over the profile's whole length or follow a short arc only.
The fitted edge offset (the apparent radius) then sizes it, as the sub-pixel fit sizes the other winks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from calibration.camera import CameraModel
from vision.silhouette import edge_crossings, outline, sample_profiles, solve_shift
from vision.winks import (
    EDGE_BLUR_IMAGE_PX,
    PAINT_HALF_WIDTH_MAX_MM,
    RADII_MM,
    WinkCandidate,
    _dist,
    _length,
    _on_mat,
    baseline_distance_mm,
    distances_mm,
    solid_of,
)

#: Outline samples of the rim test (one per 3.75 degrees).
RIM_SAMPLES = 96


@dataclass(frozen=True, slots=True)
class RimParams:
    profile_half_px: float = 6.0  # profiles reach this far either side of the model outline
    profile_step_px: float = 0.5
    inlier_px: float = 1.0  # a crossing this near the fitted circle is on the rim (the blur's own width)
    contrast_noise_k: float = 4.0  # ... with a contrast this many times the felt's noise between profile ends
    min_rim_share: float = 0.55  # of the whole outline: a rim seen over most of its length, not an arc
    min_visible_share: float = 0.6  # of the outline that may be judged (on the mat, clear of paint and winks)
    max_shift_mm: float = 3.0  # the fit may move the coarse centre this far
    max_offset_mm: float = 0.5 * (RADII_MM["large"] - RADII_MM["small"])  # the rim's radius: this size's, not the other's


@dataclass(frozen=True, slots=True)
class RimFit:
    center_mm: np.ndarray
    size: str
    rim_share: float  # outline share with a sharp crossing on the fitted circle
    radius_mm: float  # apparent radius (known radius plus the fitted edge offset)


def rim_fit(image_bgr: np.ndarray, camera: CameraModel, cand: WinkCandidate,
            visible: Callable[[np.ndarray], np.ndarray], noise_255: float,
            params: RimParams = RimParams(), space: Callable[[np.ndarray], np.ndarray] | None = None
            ) -> RimFit | None:
    """The rim of a flat wink near ``cand`` fitted in the full image, or None when no rim shows all round.

    Each known radius is fitted; the one whose circle holds more of the sharp crossings is the wink's.
    ``visible(plan points)`` says where the outline may be judged; ``noise_255`` is the felt's pixel noise in
    8-bit units (the contrast between profile ends must stand above it). ``space``, when given, maps the
    sampled profiles ``(N, T, 3)`` BGR into the colour space the crossings are read in (``noise_255`` then in
    its units).
    """
    fits = rim_fits(image_bgr, camera, cand, visible, noise_255, params, space)
    if not fits:
        return None
    best = max(fits, key=lambda f: f.rim_share)
    return best if best.rim_share >= params.min_rim_share else None


def rim_fits(image_bgr: np.ndarray, camera: CameraModel, cand: WinkCandidate,
             visible: Callable[[np.ndarray], np.ndarray], noise_255: float, params: RimParams = RimParams(),
             space: Callable[[np.ndarray], np.ndarray] | None = None) -> list[RimFit]:
    """The rim fitted at each known radius near ``cand`` (those that converge; see ``rim_fit``)."""
    return [f for f in (_fit_one(image_bgr, camera, cand, size, visible, noise_255, params, space)
                        for size in RADII_MM) if f is not None]


def _fit_one(image_bgr: np.ndarray, camera: CameraModel, cand: WinkCandidate, size: str,
             visible: Callable[[np.ndarray], np.ndarray], noise_255: float, params: RimParams,
             space: Callable[[np.ndarray], np.ndarray] | None = None) -> RimFit | None:
    w = WinkCandidate(color=cand.color, size=size, center_mm=np.asarray(cand.center_mm, float).copy(), votes=0.0)
    start = w.center_mm.copy()
    contrast_min = params.contrast_noise_k * noise_255
    for _ in range(3):
        ol = outline(camera, solid_of(w), w.center_mm, RIM_SAMPLES)
        u = np.column_stack([np.cos(ol.angles), np.sin(ol.angles)])
        mmpp = camera.mm_per_px_at((float(w.center_mm[0]), float(w.center_mm[1])))
        reach_mm = params.profile_half_px * mmpp
        # the whole profile must lie where the wink's surroundings show: judged at its outer end and mid-way
        ok = visible(w.center_mm + (w.radius_mm + reach_mm) * u) & visible(w.center_mm + w.radius_mm * u)
        if ok.mean() < params.min_visible_share:
            return None
        prof = sample_profiles(image_bgr, ol.points_px[ok], ol.normals_px[ok], params.profile_half_px,
                               params.profile_step_px)
        if space is not None:
            prof = space(prof)
        es = edge_crossings(prof, params.profile_half_px, params.profile_step_px)
        weights = (es.contrast >= contrast_min).astype(float)
        delta, bias, cov, _ = solve_shift(ol.jac[ok], es.offsets_px, weights, fit_bias=True)
        if not np.all(np.isfinite(cov)):
            return None
        w.center_mm = w.center_mm + np.clip(delta, -1.5, 1.5)
        if _dist(w.center_mm, start) > params.max_shift_mm:
            return None
        if _length(delta) < 0.05:
            break
    if abs(bias) * mmpp > params.max_offset_mm + mmpp:
        return None  # the crossings lie on a circle of another radius (an edge beside the wink, not its rim)
    resid = es.offsets_px - (ol.jac[ok] @ delta + bias)
    rim = (np.abs(resid) <= params.inlier_px) & (weights > 0)
    return RimFit(center_mm=w.center_mm, size=size, rim_share=float(rim.sum()) / len(ol.angles),
                  radius_mm=float(w.radius_mm + bias * mmpp))


#: Clearance from a wink already found within which a refused candidate is its echo, not a wink of its own.
KNOWN_CLEAR_MM = 3.0
#: Confidence of a wink found by its rim: its colour labels were refused, its outline is what shows it.
RIM_FOUND_CONFIDENCE = 0.8


def felt_rim_winks(near_misses: list[WinkCandidate], known: list[WinkCandidate], image_bgr: np.ndarray,
                   camera: CameraModel, noise_255: float, exclude: Callable[[np.ndarray], np.ndarray] | None = None,
                   params: RimParams = RimParams()) -> list[WinkCandidate]:
    """Winks of the felt's hue among the candidates the labels refused (``find_candidates``'s ``near_misses``),
    each kept when its rim shows all round (``rim_fit``), away from the winks already found.

    ``exclude(plan points)`` marks ground that shows no felt (the pot and its shadow). The size is the better
    fitting radius's, flagged: the ring and edge-offset checks later judge it as any other wink's.
    """
    out: list[WinkCandidate] = []
    for c in sorted(near_misses, key=lambda c: -(c.score + 0.2 * c.votes)):
        found = [*known, *out]
        if any(not o.potted and _gap_mm(o, c) < KNOWN_CLEAR_MM for o in found):
            continue

        # (the winks near enough to hide its rim: the same for every call)
        clear = [(o.center_mm, o.radius_mm + 1.5) for o in found
                 if not o.potted and _gap_mm(o, c) < 2 * RADII_MM["large"] + 10.0]

        fit = rim_fit(image_bgr, camera, c, felt_visible(camera, exclude, clear), noise_255, params)
        if fit is None:
            continue
        w = WinkCandidate(color=c.color, size=fit.size, center_mm=fit.center_mm, votes=c.votes)
        w.edge_support, w.own_fraction, w.score = c.edge_support, c.own_fraction, c.score
        w.neutral_inside = c.neutral_inside
        w.confidence = RIM_FOUND_CONFIDENCE
        w.size_confidence = 0.6
        if any(not o.potted and _gap_mm(o, w) < KNOWN_CLEAR_MM for o in found):
            continue
        out.append(w)
    return out


def _gap_mm(a: WinkCandidate, b: WinkCandidate) -> float:
    """Plan distance between two winks' rims (negative: they overlap)."""
    return _dist(a.center_mm, b.center_mm) - a.radius_mm - b.radius_mm


def _on_felt(pts: np.ndarray, camera: CameraModel) -> np.ndarray:
    """Plan points where felt shows clear of the mat's edge and of the painted baselines, as far as the camera's
    blur spreads those edges."""
    c = pts.mean(axis=0)
    mmpp = camera.mm_per_px_at((float(c[0]), float(c[1])))
    blur_mm = EDGE_BLUR_IMAGE_PX * mmpp
    return _on_mat(pts, blur_mm) & (baseline_distance_mm(pts) > PAINT_HALF_WIDTH_MAX_MM + blur_mm)


def felt_visible(camera: CameraModel, exclude: Callable[[np.ndarray], np.ndarray] | None,
                 clear: list[tuple[np.ndarray, float]]) -> Callable[[np.ndarray], np.ndarray]:
    """Where plan points show the felt: on it, off ``exclude``, beyond each ``(centre, radius)`` of ``clear``."""
    def visible(pts: np.ndarray) -> np.ndarray:
        ok = _on_felt(pts, camera)
        if exclude is not None:
            ok &= ~exclude(pts)
        for c, r in clear:
            ok &= distances_mm(pts, c) > r
        return ok
    return visible
