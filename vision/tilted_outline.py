"""A wink's outline fitted as a tilted disc of a known radius: a 22 mm wink tilted 39° shows a 22 × 17 mm outline.

A wink lying on another is tilted; seen from above its outline is foreshortened along the tilt's azimuth (an
ellipse with axes 2r and 2r cos(tilt) in plan), and its raised side stands millimetres above the mat, so the
camera sees it displaced away from the camera's foot. Read as circles, such an outline is two small winks, or
one large wink whose plan footprint reaches millimetres further than the real one. Here the outline measured on
rays (where the wink's colour gives way to the felt, in the plane z = ``plane_z_mm``) is fitted by the exact
projection of a tilted disc: the rim of radius r tilted by t towards azimuth a, its low edge on the mat
(``z_mid = r sin t``), each rim point carried along its camera ray to the measuring plane. Its tilt counts only
where the outline's minor axis falls short of the circle by more than the fit's own uncertainty of it.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import least_squares

from geometry.constants import WINK_THICKNESS_MM
from geometry.tiddlywinks import resting_mid_height_mm

_RIM_SAMPLES = 64  # plan angles round each rim (top and bottom) of the model disc
#: SciPy 1.16 on evaluates a finite-difference Jacobian's steps through a map-like ``workers``, which the fit
#: batches; before, each step alone (the same residuals, bit for bit: only slower)
_BATCHED_STEPS = "workers" in inspect.signature(least_squares).parameters


@dataclass(frozen=True, slots=True)
class TiltedOutline:
    """A tilted disc fitted to an outline: plan centre, tilt towards an azimuth, and the fit's quality."""

    center_mm: np.ndarray
    radius_mm: float
    tilt_deg: float
    tilt_azimuth_deg: float  # plan direction (from +x) in which the disc rises
    offset_mm: float  # the common edge offset fitted with it
    rms_mm: float  # robust residual of the outline points about the model outline
    shortfall_mm: float  # how far the minor semi-axis falls short of the radius: r (1 - cos tilt)
    shortfall_sigma_mm: float  # ... and its uncertainty from the fit


def mid_height_mm(radius_mm: float, tilt_deg: float) -> float:
    """Height of a tilted disc's mid-plane centre whose low edge rests on the mat."""
    return resting_mid_height_mm(radius_mm, math.radians(tilt_deg))


def model_outline_mm(camera_center_mm: np.ndarray, center_mm: np.ndarray, radius_mm: float, tilt_deg: float,
                     azimuth_deg: float, plane_z_mm: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the camera's rays through a tilted disc's two rims meet the plane ``plane_z_mm``: (points (2N, 2),
    the disc centre's own point there)."""
    pts, mid = _model_outlines(camera_center_mm, [(center_mm, radius_mm, tilt_deg, azimuth_deg)], plane_z_mm)
    return pts[0], mid[0]


_ANG = np.linspace(0.0, 2 * np.pi, _RIM_SAMPLES, endpoint=False)


def _model_outlines(camera_center_mm: np.ndarray, discs: list[tuple[np.ndarray, float, float, float]],
                    plane_z_mm: float) -> tuple[np.ndarray, np.ndarray]:
    """``model_outline_mm`` of several discs (centre, radius, tilt, azimuth) at once, (k, 2N, 2) and (k, 2):
    a fit's finite-difference Jacobian evaluates its model at every parameter step together. Each disc's
    scalars are taken as one disc's alone (``math``), so that every disc's outline is the one it has alone."""
    half = WINK_THICKNESS_MM / 2
    sc = np.array([_disc_scalars(*d) for d in discs])
    cx, cy, r, z_mid, a, ct, st, ca, sa = (sc[:, j:j + 1] for j in range(9))
    rel = _ANG[None, :] - a
    du, dv = r * np.cos(rel), r * np.sin(rel)
    # the disc's normal (tilted towards the azimuth): the two rims lie half a thickness either side
    nrm = (-st * ca, -st * sa, ct)
    x, y, z = (np.concatenate([m + s * half * n for s in (-1.0, 1.0)], axis=1)
               for m, n in zip((cx + du * ct * ca - dv * sa, cy + du * ct * sa + dv * ca, z_mid + du * st), nrm))
    cam = np.asarray(camera_center_mm, float)
    kp = (cam[2] - plane_z_mm) / np.maximum(cam[2] - z, 1e-6)
    out = np.stack((cam[0] + (x - cam[0]) * kp, cam[1] + (y - cam[1]) * kp), axis=2)
    km = (cam[2] - plane_z_mm) / np.maximum(cam[2] - z_mid, 1e-6)
    mid = cam[:2] + (sc[:, 0:2] - cam[:2]) * km
    return out, mid


def _disc_scalars(center_mm: np.ndarray, radius_mm: float, tilt_deg: float, azimuth_deg: float) -> tuple:
    t, a = math.radians(tilt_deg), math.radians(azimuth_deg)
    return (center_mm[0], center_mm[1], radius_mm, mid_height_mm(radius_mm, tilt_deg), a, math.cos(t),
            math.sin(t), math.cos(a), math.sin(a))


def _radial_residuals_of(points_mm: np.ndarray, models_mm: np.ndarray, origins_mm: np.ndarray) -> np.ndarray:
    """Radial distance of each point beyond each of k model outlines (k, 2N, 2), both seen from the outline's
    origin (k, 2) inside it, (k, M): each rim is a closed convex curve about it, read as radius by angle, and the
    silhouette is the outer of the two. ``np.interp``'s periodic interpolation, the same arithmetic, on all the
    rims at once (a fit's Jacobian steps evaluate together)."""
    k = len(models_mm)
    period = 2 * np.pi
    q = points_mm[None, :, :] - origins_mm[:, None, :]
    tq = np.arctan2(q[:, :, 1], q[:, :, 0]) % period  # (k, M)
    rims = (models_mm - origins_mm[:, None, :]).reshape(k * 2, -1, 2)  # (2k, N, 2): rim-major per model
    n = rims.shape[1]
    # each rim as radius by angle in [0, 2 pi), in angle order, wrapped once either side
    xp = np.arctan2(rims[:, :, 1], rims[:, :, 0]) % period
    o = (np.argsort(xp, axis=1) + (np.arange(2 * k) * n)[:, None]).ravel()
    xp = xp.ravel()[o].reshape(2 * k, n)
    fp = np.hypot(rims[:, :, 0], rims[:, :, 1]).ravel()[o].reshape(2 * k, n)
    xp = np.concatenate((xp[:, -1:] - period, xp, xp[:, 0:1] + period), axis=1)
    fp = np.concatenate((fp[:, -1:], fp, fp[:, 0:1]), axis=1)
    x = np.repeat(tq, 2, axis=0)  # (2k, M), each model's points against each of its two rims
    # xp[j] <= x < xp[j + 1], as interp's search finds it (per rim; then as an index into all rims' knots)
    j = np.array([np.searchsorted(a, b, side="right") for a, b in zip(xp, x)])
    j = np.clip(j - 1, 0, n) + (np.arange(2 * k) * (n + 2))[:, None]
    xp, fp = xp.ravel(), fp.ravel()
    x0, x1, f0, f1 = xp[j], xp[j + 1], fp[j], fp[j + 1]
    val = np.where(x0 == x, f0, (f1 - f0) / (x1 - x0) * (x - x0) + f0).reshape(k, 2, -1)
    r_model = np.maximum(np.maximum(np.zeros(q.shape[1]), val[:, 0]), val[:, 1])
    return np.hypot(q[:, :, 0], q[:, :, 1]) - r_model


#: No disc lies tilted further (the model's rims stop meaning anything near upright).
_TILT_MAX_RAD = math.radians(80.0)


def _tilt_rad(v: float) -> float:
    """The tilt of a tilt vector of length ``v``: v near flat, saturating smoothly at ``_TILT_MAX_RAD``. Clamped
    instead, a start that crossed the bound met a flat residual and drifted (a tilt of 1173 degrees seen)."""
    return _TILT_MAX_RAD * math.tanh(v / _TILT_MAX_RAD)


def fit_tilted_outline(points_mm: np.ndarray, start_mm: np.ndarray, radius_mm: float,
                       camera_center_mm: np.ndarray, plane_z_mm: float, tilted: bool = True,
                       scale_mm: float = 0.4, max_offset_mm: float = 1.0,
                       start_azimuths_deg: list[float] | None = None,
                       keep: Callable[[TiltedOutline], bool] | None = None) -> TiltedOutline | None:
    """The disc of ``radius_mm`` (tilted, or flat with ``tilted=False``) whose outline best fits the points.

    A common edge offset (blur and the blend level move every edge alike) is fitted with it. The tilt is a plan
    vector (its direction the azimuth, its length the tilt in radians near flat, bounded smoothly by 80 degrees:
    ``_tilt_rad``), so that no start azimuth is needed beyond a few; the robust loss lets an outline point of a
    neighbour's blur count little. Along the camera's own bearing a tilt is nearly balanced by the raised side's
    parallax (it stands nearer the camera): there the fit has two solutions, and ``keep`` (the physics: it rises
    over a wink) chooses between the local fits from ``start_azimuths_deg``.
    """
    if len(points_mm) < 8:
        return None

    def unpack(x: np.ndarray) -> tuple[np.ndarray, float, float, float]:
        if not tilted:
            return x[:2], 0.0, 0.0, x[2]
        return x[:2], math.degrees(_tilt_rad(math.hypot(x[2], x[3]))), math.degrees(math.atan2(x[3], x[2])), x[4]

    def res_of(xs: list[np.ndarray]) -> np.ndarray:
        discs = []
        for x in xs:
            c, t, a, b = unpack(x)
            discs.append((c, radius_mm + b, t, a))
        model, mid = _model_outlines(camera_center_mm, discs, plane_z_mm)
        return _radial_residuals_of(points_mm, model, mid)

    def res(x: np.ndarray) -> np.ndarray:
        return res_of([x])[0]

    def steps(_fun, xs) -> list[np.ndarray]:
        # the finite-difference Jacobian's steps (scipy's own, one per parameter), evaluated together
        return list(res_of(list(xs)))

    azimuths = [0.0, 45.0, 90.0, 135.0] if start_azimuths_deg is None else list(start_azimuths_deg)
    v0 = _TILT_MAX_RAD * math.atanh(0.5 / _TILT_MAX_RAD)  # a start tilt of 0.5 rad
    starts = ([np.array([*start_mm, 0.0])] if not tilted else
              [np.array([*start_mm, v0 * math.cos(math.radians(a)), v0 * math.sin(math.radians(a)), 0.0])
               for a in azimuths])
    # the offset is bounded (blur and blend move an edge by a pixel or so): unbounded it would trade the two radii
    lo = np.full(len(starts[0]), -np.inf)
    hi = np.full(len(starts[0]), np.inf)
    lo[-1], hi[-1] = -max_offset_mm, max_offset_mm
    best: tuple[float, TiltedOutline] | None = None
    for x0 in starts:
        fit = least_squares(res, x0, loss="soft_l1", f_scale=scale_mm, max_nfev=200, bounds=(lo, hi),
                            x_scale=0.1 if tilted else 1.0, **({"workers": steps} if _BATCHED_STEPS else {}))
        got = _outline_of(fit, unpack, radius_mm, tilted)
        if (keep is None or keep(got)) and (best is None or fit.cost < best[0]):
            best = (fit.cost, got)
    return None if best is None else best[1]


def _outline_of(fit, unpack, radius_mm: float, tilted: bool) -> TiltedOutline:
    """The fitted disc, with the uncertainty of its minor semi-axis shortfall r (1 - cos t) from the fit's
    covariance."""
    c, t, a, b = unpack(fit.x)
    r = fit.fun
    rms = float(np.sqrt(np.median(r * r)) * 1.4826)
    sig = math.inf
    if tilted and t > 0.5:
        jtj = fit.jac.T @ fit.jac
        if abs(np.linalg.det(jtj)) > 1e-12:
            cov = np.linalg.inv(jtj) * max(rms, 0.05) ** 2
            tv = fit.x[2:4]
            n = max(float(np.linalg.norm(tv)), 1e-9)
            dt_dv = tv / n / math.cosh(n / _TILT_MAX_RAD) ** 2  # d(tilt rad) / d(tilt vector)
            var_t = float(dt_dv @ cov[2:4, 2:4] @ dt_dv)
            sig = radius_mm * math.sin(math.radians(t)) * math.sqrt(max(var_t, 0.0))
    return TiltedOutline(center_mm=np.asarray(c, float), radius_mm=radius_mm, tilt_deg=t,
                         tilt_azimuth_deg=a % 360.0, offset_mm=float(b), rms_mm=rms,
                         shortfall_mm=radius_mm * (1.0 - math.cos(math.radians(t))),
                         shortfall_sigma_mm=sig)


def inside_footprint(points_mm: np.ndarray, center_mm: np.ndarray, radius_mm: float, tilt_deg: float,
                     azimuth_deg: float, inset_mm: float = 0.0) -> np.ndarray:
    """Whether plan points lie inside a tilted disc's plan footprint (an ellipse with semi-axes r cos t along the
    azimuth and r across it), ``inset_mm`` inside its edge."""
    a = math.radians(azimuth_deg)
    g = np.asarray(points_mm, float) - center_mm
    along = g[:, 0] * math.cos(a) + g[:, 1] * math.sin(a)
    across = -g[:, 0] * math.sin(a) + g[:, 1] * math.cos(a)
    semi_along = max(radius_mm * math.cos(math.radians(tilt_deg)) - inset_mm, 1e-3)
    semi_across = max(radius_mm - inset_mm, 1e-3)
    return (along / semi_along) ** 2 + (across / semi_across) ** 2 < 1.0


@dataclass(frozen=True, slots=True)
class TiltTestParams:
    """When an outline is a tilted disc rather than a flat one (mm unless named otherwise)."""

    min_outline_share: float = 0.8  # share of the rays round the wink that measured its outline (fully visible)
    max_rms_mm: float = 0.45  # the tilted fit's robust residual (as ``union_rims``' circle fits) ...
    max_rms_px: float = 1.0  # ... or this many pixels, whichever is more
    shortfall_sigmas: float = 3.0  # the minor axis short of the circle by this many of its own sigmas
    min_shortfall_px: float = 1.0  # ... and by a pixel at least (edge offsets vary round an outline by a fraction)
    flat_rms_ratio: float = 1.5  # the best flat disc (either size) fits this much worse
    other_size_rms_ratio: float = 1.5  # the other size, tilted, fits this much worse
    support_reach_mm: float = 1.0  # the raised side's rim lies over another wink, within this of its disc


def tilted_fit(points_mm: np.ndarray, start_mm: np.ndarray, radii_mm: dict[str, float],
               camera_center_mm: np.ndarray, plane_z_mm: float, mm_per_px: float,
               supports: list[tuple[np.ndarray, float]], params: TiltTestParams = TiltTestParams()
               ) -> tuple[str, TiltedOutline] | None:
    """The size and tilted disc of an outline measurably not a circle of either size, else None.

    ``supports`` are the (plan centre, radius) of the winks of other colours near it: a wink tilted this much
    rests on one, so its raised side must lie over one of them (over a wink of its own colour the outline beyond
    is the two winks' union, which the two-disc fits read).
    """
    def supported(t: TiltedOutline) -> bool:
        a = math.radians(t.tilt_azimuth_deg)
        reach = t.radius_mm * math.cos(math.radians(t.tilt_deg))
        raised = t.center_mm + reach * np.array([math.cos(a), math.sin(a)])
        return any(float(np.linalg.norm(raised - c)) < r + params.support_reach_mm for c, r in supports)

    if len(points_mm) < 8:
        return None
    # first the outline's own second moments (an algebraic ellipse): an outline that is a circle within a pixel
    # costs no fit
    (_, _), (d1, d2), _ = cv2.fitEllipse(points_mm.astype(np.float32))
    if abs(d1 - d2) / 2 < params.min_shortfall_px * mm_per_px:
        return None
    r_max = max(radii_mm.values())
    supports = [(c, r) for c, r in supports
                if float(np.linalg.norm(c - start_mm)) < r_max + r + params.support_reach_mm]
    if not supports:
        return None
    # a tilted wink rises towards what it lies on: the fit starts from there (and from two plain azimuths)
    near = [math.degrees(math.atan2(c[1] - start_mm[1], c[0] - start_mm[0])) for c, _ in supports]
    tilted = {s: fit_tilted_outline(points_mm, start_mm, r, camera_center_mm, plane_z_mm,
                                    start_azimuths_deg=[*near, 0.0, 90.0], keep=supported)
              for s, r in radii_mm.items()}
    if all(f is None for f in tilted.values()):
        return None  # too few points, or no tilt that rises over a wink
    size, best = min(((s, t) for s, t in tilted.items() if t is not None), key=lambda kv: kv[1].rms_mm)
    if best.rms_mm > max(params.max_rms_mm, params.max_rms_px * mm_per_px):
        return None
    if best.shortfall_mm <= max(params.shortfall_sigmas * best.shortfall_sigma_mm,
                                params.min_shortfall_px * mm_per_px):
        return None  # a circle within the fit's own uncertainty
    # the flat discs only where a tilted one has passed the tests of its own (they decide nothing before)
    flat = [fit_tilted_outline(points_mm, start_mm, r, camera_center_mm, plane_z_mm, tilted=False)
            for r in radii_mm.values()]
    if any(f is None for f in flat):
        return None  # too few points
    if min(f.rms_mm for f in flat) < params.flat_rms_ratio * best.rms_mm:
        return None
    if any(o is not None and o.rms_mm < params.other_size_rms_ratio * best.rms_mm
           for s, o in tilted.items() if s != size):
        return None
    return size, best
