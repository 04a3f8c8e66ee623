"""A single ball's radius from its image and its cast shadow, fitted together under the photo's one lamp.

Why. At 6-7 px per marble an opaque (swirl) tolley is read small by its silhouette alone: the blurred edge of a
ball 8-9 px across is a few pixels, and what the blurred-sphere fit (``vision.marbles_size``) takes for sand
beside it holds its shadow. A sphere lit by one lamp casts onto the ground the section of a cylinder of its own
radius along the light: the ground points whose ray to the lamp passes within R of its centre. That ellipse's
width across the lamp's azimuth is 2R whatever the lamp's elevation, and its length R / sin(elevation) beyond an
offset R / tan(elevation), so with the lamp known the shadow's whole outline follows from R alone, and a
silhouette and a shadow that are both twice a marble's area cannot both be read small.

The lamp (azimuth, elevation, the penumbra's growth with distance from the ball) is one for the photo: it is
measured on the photo's sure single marbles (radius known, 6.35 mm), their shadows stacked on the ground
(``fit_lamp``), then each ball's centre and radius are fitted
with the ball's image (as ``vision.marbles_size`` models it) over its shadow on the ground, each with its own
contrast per CIELAB channel, solved linearly. Other balls' discs and shadows are left out of each window.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import least_squares
from scipy.special import ndtr

from calibration.camera import CameraModel
from geometry.marbles import MARBLE_DIAMETER_MM, RING_HEIGHT_MM, TOLLEY_MAX_DIAMETER_MM
from vision.marbles_size import LOSS_SCALE, MIN_FIT_PX, blurred_disc, fit_sigma, local_affine

# The window reaches this many of the largest tolley's radii beyond the ball's own image and its shadow's end
WINDOW_TOLLEY_RADII = 1.45
# Lamps searched (deg above the ground): renders light from 35-70 deg; below ~25 deg shadows run off the window
ELEVATION_RANGE_DEG = (20.0, 85.0)
# ... and by the per-window fallback (``_window_lamp``), as it was built
WINDOW_ELEVATION_RANGE_DEG = (25.0, 80.0)
# The penumbra's half-width grows by this much per mm between ball and ground (tan of the lamp's angular
# radius: a window or lamp of 2-8 deg), searched in this range
PENUMBRA_RANGE = (0.01, 0.2)
# A lamp is taken only when its shadows explain the sure marbles' windows this much better (robust cost per
# window, in units of the loss scale squared) than no shadow at all: a photo under an overcast sky casts none
MIN_SHADOW_DROP = 0.0
# The lamp is fitted on up to this many sure marbles, and on no fewer than twice this (each half of them alone
# must find it too)
LAMP_BALLS = 20
LAMP_MIN_BALLS = 4
# The stacked ground windows: a grid this fine (mm) out to this far from the contact point (a marble's shadow under
# a 35 deg lamp ends 2.6 radii beyond it), each window showing at least this share of its ground, and a grid
# point kept where at least LAMP_MIN_BALLS windows show it
# The per-window fallback's marbles, as it was built
WINDOW_LAMP_BALLS = 10
WINDOW_LAMP_MIN_BALLS = 3
# ... read at no finer than this many pixels per marble (every k-th pixel of a sharper photo's windows): it was
# built under 9 px per marble, and the lamp is a direction the windows' coarse grid fixes as well, while each
# window's pixels, and the fit's cost, grow with the square of the photo's sharpness (bench_2026_027 at 23 px)
WINDOW_LAMP_MARBLE_PX = 9.0
STACK_STEP_MM = 1.0
STACK_REACH_MM = 4.5 * 0.5 * MARBLE_DIAMETER_MM
STACK_MIN_SHOWN = 0.3
STACK_MIN_WINDOWS = LAMP_MIN_BALLS
# The contact's darkening of the ground round a ball (ambient light its body hides) reaches about this many radii
CONTACT_RADII = 1.1
# ... each half of them alone, and the halves' lamps agree within this angle (deg)
LAMP_AGREE_DEG = 15.0
# The contact term is the ambient light a ball's body hides from the ground: it only darkens. A stacked fit whose
# contact term brightens the ground by more than this share of its shadow's darkening has fitted the light that
# clear glass focuses beside the ball (its caustic), not a shadow: its lamp is not the photo's (renders 631_004,
# 419_002: lamps 56 and 100 deg off, the contact term 1.9 and 0.7 of the shadow; right lamps reach 0.3)
MAX_CONTACT_BRIGHTENING = 0.5
# A ball's first centre may be a few pixels off (a centroid leans into its shadow, up to ~9 mm under a low lamp
# on the development renders): its centre is searched on a grid this far towards the lamp and across (mm)
# before the fit, which may move it this much further
CENTRE_ALONG_MM = (-3.0, 0.0, 3.0, 6.0, 9.0)
CENTRE_ACROSS_MM = (-3.0, 0.0, 3.0)
CENTRE_MARGIN_MM = 3.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Lamp:
    """The photo's key light: the unit vector towards it (table frame) and its penumbra's growth per mm."""

    to_light: tuple[float, float, float]
    penumbra_per_mm: float
    cost_drop: float  # how much its shadows lowered the sure marbles' robust cost, per window
    # the stacked fit's contact term over its shadow's depth (> 0: the ground round the contact brightens)
    contact_brightening: float = 0.0

    @property
    def elevation_deg(self) -> float:
        return math.degrees(math.asin(self.to_light[2]))


@dataclass(frozen=True, slots=True, kw_only=True)
class ShadowFit:
    """A ball's diameter (mm) read from its image and shadow, that diameter's 1-sigma from the fit's noise, and
    its contact point (table mm)."""

    diameter_mm: float
    diameter_sigma_mm: float
    contact_mm: tuple[float, float]
    # the shadow's depth: the lightness it takes from the lit ground, as a share of the ground's lightness (an
    # opaque ball's shadow is the ambient's share of the light, a clear ball's is half as deep)
    shadow_depth_ratio: float


def _to_light(azimuth_rad: float, elevation_rad: float) -> np.ndarray:
    ce = math.cos(elevation_rad)
    return np.array([ce * math.cos(azimuth_rad), ce * math.sin(azimuth_rad), math.sin(elevation_rad)])


@dataclass(slots=True)
class _Window:
    """The pixels around one ball, with the ground points they show (table mm) and their CIELAB values."""

    contact_mm: np.ndarray  # (2,) the first guess of its contact point
    base_z_mm: float
    px: np.ndarray  # (N, 2)
    ground_mm: np.ndarray  # (N, 3)
    vals: np.ndarray  # (N, 3)
    affine: np.ndarray  # px per mm across the view ray
    affine_inv: np.ndarray
    ground_px_per_mm: float


def _window(lab: np.ndarray, camera: CameraModel, contact_mm: np.ndarray, base_z_mm: float, reach_mm: float,
            others: np.ndarray, lamp: np.ndarray | None, others_r_mm: float,
            shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
            max_marble_px: float | None = None) -> _Window | None:
    """The window of ground within ``reach_mm`` of the contact point, less other balls' discs and shadows and the
    pixels ``shows_model`` (as ``vision.marbles_size.fit_ball``'s) says show neither the ball nor its ground;
    with ``max_marble_px``, every k-th pixel each way, k the marble's width in pixels over it (rounded down)."""
    c3 = np.array([contact_mm[0], contact_mm[1], base_z_mm + 0.5 * MARBLE_DIAMETER_MM])
    A = local_affine(camera, c3)
    try:
        A_inv = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return None
    g = camera.project_mm(np.array([[contact_mm[0], contact_mm[1], base_z_mm],
                                    [contact_mm[0] + 1.0, contact_mm[1], base_z_mm],
                                    [contact_mm[0], contact_mm[1] + 1.0, base_z_mm]]))
    G = np.column_stack([g[1] - g[0], g[2] - g[0]])
    px0 = g[0]
    half = int(math.ceil(reach_mm * np.abs(G).sum(1).max())) + 2
    x0, y0 = int(round(px0[0])) - half, int(round(px0[1])) - half
    h, w = lab.shape[:2]
    if x0 < 0 or y0 < 0 or x0 + 2 * half + 1 > w or y0 + 2 * half + 1 > h:
        return None
    k = 1 if max_marble_px is None else max(1, int(MARBLE_DIAMETER_MM * math.sqrt(abs(np.linalg.det(A)))
                                                   // max_marble_px))
    yy, xx = np.mgrid[y0:y0 + 2 * half + 1:k, x0:x0 + 2 * half + 1:k]
    px = np.column_stack([xx.ravel(), yy.ravel()]).astype(float)
    ground = camera.image_to_table_mm(px, base_z_mm)
    keep = np.hypot(ground[:, 0] - contact_mm[0], ground[:, 1] - contact_mm[1]) <= reach_mm
    P = np.column_stack([ground, np.full(len(ground), base_z_mm)])
    for o in others:
        o_px = camera.project_mm(o[None])[0]
        keep &= np.hypot(px[:, 0] - o_px[0], px[:, 1] - o_px[1]) > others_r_mm * math.sqrt(abs(np.linalg.det(A)))
        if lamp is not None:
            rel = o[None] - P
            s = rel @ lamp
            perp = np.linalg.norm(rel - s[:, None] * lamp[None], axis=1)
            keep &= ~((s > -others_r_mm) & (perp < others_r_mm))
    if shows_model is not None and keep.any():
        keep[keep] = shows_model(px[keep], c3)
    if keep.sum() < MIN_FIT_PX:
        return None
    vals = lab[y0:y0 + 2 * half + 1:k, x0:x0 + 2 * half + 1:k].reshape(-1, 3).astype(np.float64)
    return _Window(contact_mm=np.asarray(contact_mm, float), base_z_mm=base_z_mm, px=px[keep], ground_mm=P[keep],
                   vals=vals[keep], affine=A, affine_inv=A_inv,
                   ground_px_per_mm=math.sqrt(abs(np.linalg.det(G))))


def _layers(win: _Window, camera: CameraModel, dxy: np.ndarray, r_mm: float, lamp: np.ndarray | None,
            pen: float, psf_px: tuple[float, float]) -> list[np.ndarray]:
    """Per PSF width (lightness, colour): the design matrix [1, ball, shadow seen beside it] of each pixel."""
    c3 = np.array([win.contact_mm[0] + dxy[0], win.contact_mm[1] + dxy[1], win.base_z_mm + r_mm])
    c_px = camera.project_mm(c3[None])[0]
    q = (win.px - c_px) @ win.affine_inv.T
    rho = np.hypot(q[:, 0], q[:, 1])
    scale = math.sqrt(abs(np.linalg.det(win.affine)))
    if lamp is not None:
        rel = c3[None] - win.ground_mm
        s = rel @ lamp
        perp = np.linalg.norm(rel - s[:, None] * lamp[None], axis=1)
    out = []
    for s_px in psf_px:
        D = blurred_disc(rho, r_mm, s_px / scale)
        cols = [np.ones_like(D), D]
        if lamp is not None:
            soft = np.hypot(s_px / win.ground_px_per_mm, pen * np.maximum(s, 0.0))
            S = ndtr((r_mm - perp) / soft) * ndtr(s / soft)
            cols.append(S * (1.0 - D))
        out.append(np.column_stack(cols))
    return out


def _residuals(win: _Window, layers: list[np.ndarray]) -> np.ndarray:
    """Each channel's residual after its contrasts are solved linearly."""
    out = []
    for ch, B in ((slice(0, 1), layers[0]), (slice(1, 3), layers[1])):
        coef, *_ = np.linalg.lstsq(B, win.vals[:, ch], rcond=None)
        out.append((win.vals[:, ch] - B @ coef).ravel())
    return np.concatenate(out)


def _robust_cost(r: np.ndarray) -> float:
    z = (r / LOSS_SCALE) ** 2
    return float(np.sum(2.0 * (np.sqrt(1.0 + z) - 1.0)))


def _reach_mm(elevation_rad: float) -> float:
    """How far from its contact point a tolley's shadow may reach, plus the window's margin."""
    r = 0.5 * TOLLEY_MAX_DIAMETER_MM
    return r * (WINDOW_TOLLEY_RADII + 1.0 / math.tan(elevation_rad) + 1.0 / math.sin(elevation_rad))


def fit_lamp(lab: np.ndarray, camera: CameraModel, sure_mm: np.ndarray, others_mm: np.ndarray,
             psf_px: tuple[float, float]) -> Lamp | None:
    """The photo's lamp from its sure single marbles' shadows stacked on the ground (contact points (N, 3): x, y,
    base z), ``others_mm`` every ball's centre (M, 3), whose images are left out. None when too few marbles, when
    each half of them alone finds a different lamp, when no shadow stands out, or when the stacked ground brightens
    round the contact (``MAX_CONTACT_BRIGHTENING``: clear glass' caustics, not shadows).

    Why. A shadow lies on the ground, so in ground coordinates about each contact point every marble's shadow has
    the same shape (one lamp, one radius), while the sand's grain, a neighbour's shadow and the ball's own glass do
    not line up: the median of the ground's lightness over the marbles' windows, each less its own median, is one
    marble's shadow with the noise of many. Ground a ball hides from the camera is left out of each window. The
    lamp is fitted to that one image (the cylinder's section as in ``_layers``, and the contact's isotropic
    darkening), a few hundred values: fitting each window's ball and shadow together instead found a lamp within
    15 deg on 3 of 14 development and seed-99 renders under 9 px per marble (11 of 14 here, 0.1-0.6 s a photo)."""
    sure_mm = np.asarray(sure_mm, float).reshape(-1, 3)[:LAMP_BALLS]
    if len(sure_mm) < 2 * LAMP_MIN_BALLS:
        return _window_lamp(lab, camera, sure_mm, others_mm, psf_px)
    light = np.ascontiguousarray(lab[..., 0], dtype=np.float32)
    others = np.asarray(others_mm, float).reshape(-1, 3)
    # a resting ball's radius is its centre's height above the surface it rests on
    base = np.where(others[:, 2] > -0.5 * RING_HEIGHT_MM, 0.0, -RING_HEIGHT_MM)
    balls = np.column_stack([others, others[:, 2] - base])
    mid = np.median(sure_mm, axis=0)
    blur_mm = max(float(psf_px[0]), 1.0) * camera.mm_per_px_at((float(mid[0]), float(mid[1])), float(mid[2]))
    got = [_stacked_lamp(light, camera, sure_mm[k::2], balls, blur_mm) for k in (0, 1)]
    if any(g is None for g in got):
        return _window_lamp(lab, camera, sure_mm, others, psf_px)
    # each half of the marbles alone: a lamp both halves agree on is the photo's, a disagreement is a fit that
    # followed something else (the caustics of clear glass under a low lamp, a scuff) and no lamp is taken
    La, Lb = (np.asarray(g.to_light) for g in got)
    if math.degrees(math.acos(float(np.clip(La @ Lb, -1.0, 1.0)))) > LAMP_AGREE_DEG:
        return _window_lamp(lab, camera, sure_mm, others, psf_px)
    lamp = _stacked_lamp(light, camera, sure_mm, balls, blur_mm)
    if lamp is None or lamp.cost_drop <= MIN_SHADOW_DROP:
        return _window_lamp(lab, camera, sure_mm, others, psf_px)
    if lamp.contact_brightening > MAX_CONTACT_BRIGHTENING:
        # the marbles' stacked ground holds light round their contact, which no shadow explains: the caustics of
        # clear glass, which the fit placed as a shadow's surround; their windows hold the same light, so no lamp
        return None
    return lamp


def _occluded(P: np.ndarray, eye_mm: np.ndarray, balls: np.ndarray) -> np.ndarray:
    """Ground points (N, 3) whose ray to the camera passes through a ball (rows x, y, z, radius)."""
    d = eye_mm[None] - P
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    out = np.zeros(len(P), bool)
    for b in balls:
        rel = b[None, :3] - P
        t = np.sum(rel * d, 1)
        out |= (t > 0) & (np.linalg.norm(rel - t[:, None] * d, axis=1) < b[3])
    return out


def _stacked(light: np.ndarray, camera: CameraModel, contacts: np.ndarray, balls: np.ndarray, blur_mm: float
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """The ground grid about a contact point (K, 2) and the median over the windows of each one's lightness less
    its own median (NaN where fewer than STACK_MIN_WINDOWS show that ground)."""
    g = np.arange(-STACK_REACH_MM, STACK_REACH_MM + 1e-9, STACK_STEP_MM)
    uv = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    eye = camera.center_mm
    rows = []
    for c in contacts:
        P = np.column_stack([c[0] + uv[:, 0], c[1] + uv[:, 1], np.full(len(uv), c[2])])
        px = camera.project_mm(P).astype(np.float32)
        vals = cv2.remap(light, px[:, :1], px[:, 1:], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=np.nan).ravel().astype(float)
        own = np.array([[c[0], c[1], c[2] + 0.5 * MARBLE_DIAMETER_MM, 0.5 * MARBLE_DIAMETER_MM]])
        # the window's own ball is taken at its contact point, not where the detector put it (a centroid leans
        # into the shadow, and a sphere there would hide the shadow's visible edge)
        dist = np.hypot(balls[:, 0] - c[0], balls[:, 1] - c[1])
        near = balls[(dist < 2 * STACK_REACH_MM) & (dist >= MARBLE_DIAMETER_MM)]
        occ = _occluded(P, eye, np.vstack([near, own]) + np.array([0.0, 0.0, 0.0, blur_mm]))
        vals[occ] = np.nan
        if np.isfinite(vals).sum() < STACK_MIN_SHOWN * len(vals):
            continue
        rows.append(vals - np.nanmedian(vals))
    if len(rows) < STACK_MIN_WINDOWS:
        return None
    S = np.array(rows)
    shown = np.isfinite(S).sum(0) >= STACK_MIN_WINDOWS
    med = np.full(S.shape[1], np.nan)
    med[shown] = np.nanmedian(S[:, shown], axis=0)
    return uv, med


def _stacked_columns(uv: np.ndarray, L: np.ndarray, pen: float, blur_mm: float) -> np.ndarray:
    """Design matrix [1, shadow, contact darkening] of a marble's stacked ground window under the lamp ``L``."""
    r = 0.5 * MARBLE_DIAMETER_MM
    rel = np.column_stack([-uv, np.full(len(uv), r)])
    s = rel @ L
    perp = np.linalg.norm(rel - s[:, None] * L[None], axis=1)
    soft = np.hypot(blur_mm, pen * np.maximum(s, 0.0))
    shadow = ndtr((r - perp) / soft) * ndtr(s / soft)
    # the ambient light the ball's body hides from the ground round its contact (the renders' wide term)
    contact = np.exp(-(np.hypot(uv[:, 0], uv[:, 1]) / (CONTACT_RADII * r)) ** 2)
    return np.column_stack([np.ones(len(uv)), shadow, contact])


def _stacked_lamp(light: np.ndarray, camera: CameraModel, contacts: np.ndarray, balls: np.ndarray,
                  blur_mm: float) -> Lamp | None:
    """The lamp fitted to the marbles' stacked ground windows (``_stacked``), or None where too few show."""
    got = _stacked(light, camera, contacts, balls, blur_mm)
    if got is None:
        return None
    uv, med = got
    ok = np.isfinite(med)
    uv, y = uv[ok], med[ok]

    def res(p) -> np.ndarray:
        B = _stacked_columns(uv, _to_light(p[0], p[1]), p[2], blur_mm)
        coef, *_ = np.linalg.lstsq(B, y, rcond=None)
        if coef[1] > 0.0:
            # a shadow only darkens: a fit to a bright spot (clear glass' caustic) is no better than no shadow
            coef, *_ = np.linalg.lstsq(B[:, [0, 2]], y, rcond=None)
            return y - B[:, [0, 2]] @ coef
        return y - B @ coef

    # the azimuth is anywhere: a coarse grid first, then least squares from its best
    grid = [(math.radians(a), math.radians(e), 0.06) for a in range(0, 360, 20) for e in (30, 40, 50, 60, 70, 78)]
    x = np.array(min(grid, key=lambda p: float(np.sum(res(p) ** 2))))
    lo = [x[0] - math.radians(40), math.radians(ELEVATION_RANGE_DEG[0]), PENUMBRA_RANGE[0]]
    hi = [x[0] + math.radians(40), math.radians(ELEVATION_RANGE_DEG[1]), PENUMBRA_RANGE[1]]
    try:
        x = least_squares(res, np.clip(x, lo, hi), bounds=(lo, hi), x_scale=[0.1, 0.1, 0.02]).x
    except (ValueError, np.linalg.LinAlgError):
        return None
    L = _to_light(x[0], x[1])
    B = _stacked_columns(uv, L, x[2], blur_mm)
    coef, *_ = np.linalg.lstsq(B, y, rcond=None)
    if coef[1] >= 0.0:
        return None
    flat, *_ = np.linalg.lstsq(B[:, [0, 2]], y, rcond=None)
    drop = (float(np.sum((y - B[:, [0, 2]] @ flat) ** 2)) - float(np.sum((y - B @ coef) ** 2))) / len(y)
    return Lamp(to_light=(float(L[0]), float(L[1]), float(L[2])), penumbra_per_mm=float(x[2]), cost_drop=drop,
                contact_brightening=float(coef[2] / -coef[1]))


def _window_lamp(lab: np.ndarray, camera: CameraModel, sure_mm: np.ndarray, others_mm: np.ndarray,
             psf_px: tuple[float, float]) -> Lamp | None:
    """The lamp fitted on the sure marbles' own windows, each ball's image and shadow together, its centre refitted
    under the lamp (a detector's centroid leans into an opaque ball's shadow by up to ~9 mm, which blurs the
    stacked shadow away): the stacked lamp's fallback, as stop 24 built it. None when too few marbles or no
    shadow stands out."""
    sure_mm = np.asarray(sure_mm, float).reshape(-1, 3)[:WINDOW_LAMP_BALLS]
    if len(sure_mm) < WINDOW_LAMP_MIN_BALLS:
        return None
    r = 0.5 * MARBLE_DIAMETER_MM
    reach = _reach_mm(math.radians(WINDOW_ELEVATION_RANGE_DEG[0]))
    wins = []
    for c in sure_mm:
        c3 = np.array([c[0], c[1], c[2] + r])
        oth = np.array([o for o in others_mm if np.hypot(*(o[:2] - c3[:2])) > 1.0]).reshape(-1, 3)
        oth = oth[np.hypot(oth[:, 0] - c[0], oth[:, 1] - c[1]) < reach + TOLLEY_MAX_DIAMETER_MM]
        w = _window(lab, camera, c[:2], float(c[2]), reach, oth, None, 0.5 * TOLLEY_MAX_DIAMETER_MM,
                    max_marble_px=WINDOW_LAMP_MARBLE_PX)
        if w is not None:
            wins.append(w)
    if len(wins) < 2 * WINDOW_LAMP_MIN_BALLS:
        return None
    # each half of the marbles fits the lamp alone: a lamp both halves agree on is the photo's, a disagreement is
    # a fit that followed something else (the balls' own shading, a neighbour's shadow) and no lamp is taken
    got = [_fit_lamp_on(wins[k::2], camera, psf_px) for k in (0, 1)]
    if any(g is None for g in got):
        return None
    (La, pa, da), (Lb, pb, db) = got
    if math.degrees(math.acos(float(np.clip(La @ Lb, -1.0, 1.0)))) > LAMP_AGREE_DEG:
        return None
    L = (La + Lb) / np.linalg.norm(La + Lb)
    drop = 0.5 * (da + db)
    if drop < MIN_SHADOW_DROP:
        return None
    return Lamp(to_light=(float(L[0]), float(L[1]), float(L[2])), penumbra_per_mm=0.5 * (pa + pb),
                cost_drop=float(drop))


def _fit_lamp_on(wins: list[_Window], camera: CameraModel, psf_px: tuple[float, float]
                 ) -> tuple[np.ndarray, float, float] | None:
    """The lamp (to-light vector, penumbra per mm) and its robust cost drop per window, fitted on marbles' windows."""
    r = 0.5 * MARBLE_DIAMETER_MM
    offs = [np.zeros(2) for _ in wins]

    def cost(p) -> np.ndarray:
        L = _to_light(p[0], p[1])
        return np.concatenate([_residuals(w, _layers(w, camera, o, r, L, p[2], psf_px)) for w, o in zip(wins, offs)])

    base = _robust_cost(np.concatenate([_residuals(w, _layers(w, camera, o, r, None, 0.0, psf_px))
                                        for w, o in zip(wins, offs)]))
    # the azimuth is anywhere: a coarse grid first, then robust least squares from its best; the marbles'
    # centres (a detector's centroid leans into the shadow) are then fitted under that lamp and the lamp again
    grid = [(math.radians(a), math.radians(e), 0.06) for a in range(0, 360, 30) for e in (35.0, 50.0, 65.0)]
    x = np.array(min(grid, key=lambda p: _robust_cost(cost(p))))
    for _ in range(2):
        lo = [x[0] - math.radians(30), math.radians(WINDOW_ELEVATION_RANGE_DEG[0]), PENUMBRA_RANGE[0]]
        hi = [x[0] + math.radians(30), math.radians(WINDOW_ELEVATION_RANGE_DEG[1]), PENUMBRA_RANGE[1]]
        try:
            sol = least_squares(cost, np.clip(x, lo, hi), bounds=(lo, hi), loss="soft_l1", f_scale=LOSS_SCALE,
                                x_scale=[0.1, 0.1, 0.02], max_nfev=40)
        except (ValueError, np.linalg.LinAlgError):
            return None
        x = sol.x
        L = _to_light(x[0], x[1])
        offs = [_fit_ball(w, camera, L, x[2], psf_px, r)[0][:2] for w in wins]
    return L, float(x[2]), (base - _robust_cost(cost(x))) / len(wins)


def _fit_ball(win: _Window, camera: CameraModel, L: np.ndarray, pen: float, psf_px: tuple[float, float],
              r_fixed: float | None = None):
    """Centre offset (and radius unless ``r_fixed``) of the ball in ``win`` under the lamp ``L``: the best of a
    coarse grid of centres, then robust least squares. A detector's first centre leans into the ball's shadow
    (its blob holds some of it), so the grid runs from it towards the lamp. Returns (parameters [dx, dy, r],
    the solution), the solution None when the fit fails or its centre ends at the search's bound."""
    r_max = 0.5 * TOLLEY_MAX_DIAMETER_MM
    radii = [r_fixed] if r_fixed is not None else [0.5 * MARBLE_DIAMETER_MM, 0.5 * (0.5 * MARBLE_DIAMETER_MM + r_max)]

    def res(p):
        rr = r_fixed if r_fixed is not None else p[2]
        return _residuals(win, _layers(win, camera, p[:2], rr, L, pen, psf_px))

    towards = np.asarray(L[:2], float) / max(float(np.hypot(L[0], L[1])), 1e-9)
    across = np.array([-towards[1], towards[0]])
    starts = [np.array([*(a * towards + b * across), r0]) for a in CENTRE_ALONG_MM for b in CENTRE_ACROSS_MM
              for r0 in radii]
    best = min(starts, key=lambda p: _robust_cost(res(p)))
    lim = max(CENTRE_ALONG_MM) + CENTRE_MARGIN_MM
    lo, hi = [-lim, -lim, 0.35 * r_max], [lim, lim, 1.25 * r_max]
    if r_fixed is not None:
        best, lo, hi = best[:2], lo[:2], hi[:2]
    try:
        sol = least_squares(res, best, bounds=(lo, hi), loss="soft_l1", f_scale=LOSS_SCALE, x_scale="jac",
                            max_nfev=60)
    except (ValueError, np.linalg.LinAlgError):
        return (np.append(best, r_fixed) if r_fixed is not None else best), None
    p = sol.x if r_fixed is None else np.append(sol.x, r_fixed)
    if np.any(np.abs(p[:2]) >= lim - 0.05):
        return p, None
    return p, sol


def fit_ball_shadow(lab: np.ndarray, camera: CameraModel, contact_mm: np.ndarray, base_z_mm: float, lamp: Lamp,
                    psf_px: tuple[float, float], others_mm: np.ndarray,
                    shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> ShadowFit | None:
    """Centre and radius of the ball touching the ground near ``contact_mm`` (plan), its image and shadow
    fitted together under ``lamp``; ``others_mm`` the other balls' centres (M, 3); ``shows_model`` which window
    pixels show the ball or its ground (``vision.marbles_size.fit_ball``). None where the window leaves the photo or
    too little of it is free."""
    L = np.asarray(lamp.to_light, float)
    c = np.asarray(contact_mm, float)
    reach = _reach_mm(math.asin(L[2]))
    oth = np.asarray(others_mm, float).reshape(-1, 3)
    oth = oth[np.hypot(oth[:, 0] - c[0], oth[:, 1] - c[1]) < reach + TOLLEY_MAX_DIAMETER_MM]
    win = _window(lab, camera, c, base_z_mm, reach, oth, L, 0.5 * TOLLEY_MAX_DIAMETER_MM, shows_model)
    if win is None:
        return None
    p, sol = _fit_ball(win, camera, L, lamp.penumbra_per_mm, psf_px)
    if sol is None:
        return None
    r_sigma = fit_sigma(sol, 2)
    B = _layers(win, camera, p[:2], p[2], L, lamp.penumbra_per_mm, psf_px)[0]
    coef, *_ = np.linalg.lstsq(B, win.vals[:, 0], rcond=None)
    return ShadowFit(diameter_mm=2.0 * float(p[2]), diameter_sigma_mm=2.0 * r_sigma,
                     contact_mm=(float(c[0] + p[0]), float(c[1] + p[1])),
                     shadow_depth_ratio=float(-coef[2] / max(coef[0], 1e-6)))
