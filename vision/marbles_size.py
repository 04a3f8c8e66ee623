"""A single ball's diameter from a model of its blurred image, fitted in the photo's own pixels.

Why. At 6-8 px per marble a threshold or blob area reads a ball small and by an amount that depends on its size
(development renders: marbles 0.75, tolleys 0.91 of true, median): the lens blur spreads the edge over a pixel or
two each side, a cut above half the contrast falls inside it, and a subtracted "soft rim" is a guess at that
spread. Here a sphere's image is modelled as what it is: its silhouette (the circle of its radius across the view
ray, carried into the image by the camera's local affine map, so an ellipse stretched away from the principal
point) convolved with a Gaussian PSF, times the ball's contrast on the sand (per CIELAB channel, solved linearly),
plus the sand. Centre and radius are fitted by robust least squares. Its median reads both kinds true (0.95,
1.01) but it has its own errors (a glass ball's tinted shadow and caustic beside it, vanes and highlights
inside), so the detector averages it with the silhouette's measure, whose errors differ.

The PSF width is the photo's, measured from its balls: each is first fitted with its own width, and the median
is used for all. JPEG keeps colour at half resolution, so lightness and colour get a width each.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import least_squares

from calibration.camera import CameraModel
from geometry.marbles import MARBLE_TOLLEY_SPLIT_MM, TOLLEY_MAX_DIAMETER_MM

# Lightness counts half of a colour difference, as in the detector's saliency (shading is lightness)
LIGHTNESS_WEIGHT = 0.5
# Robust loss scale (CIELAB units): sand grain and JPEG noise are a few units; vanes and highlights are more
LOSS_SCALE = 6.0
# The fit window: out to this many of the largest tolley's radii from the centre (wider takes in more of the
# neighbours' shadows and the sand's scuffs: on the development renders 2.0 misread more balls than 1.45)
WINDOW_TOLLEY_RADII = 1.45
# The PSF's width is searched in this range (native px): sub-pixel defocus up to a soft photo's colour
PSF_RANGE_PX = (0.3, 2.5)
# The photo's PSF is measured on up to this many balls (its median settles well before)
PSF_BALLS = 15
# Free pixels a fit needs (a ball crowded by others leaves fewer)
MIN_FIT_PX = 40


@dataclass(frozen=True, slots=True, kw_only=True)
class BallFit:
    """A ball's fitted image: its diameter (mm) and that diameter's 1-sigma from the fit's noise alone, the
    Gaussian PSF's widths in lightness and in colour (px) and the centre (px)."""

    diameter_mm: float
    diameter_sigma_mm: float
    psf_px: tuple[float, float]
    center_px: tuple[float, float]


_TABLE: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


def _disc_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Gaussian-blurred unit-contrast disc's value as a function of (R / sigma, (rho - R) / sigma): the
    probability that a 2-D normal of width sigma centred rho from the disc's centre falls inside it (a
    non-central chi-square with 2 degrees of freedom), tabulated once."""
    global _TABLE
    if _TABLE is None:
        from scipy.stats import ncx2

        k = np.arange(0.5, 40.01, 0.1)
        u = np.arange(-40.0, 8.01, 0.05)
        kk, uu = np.meshgrid(k, u, indexing="ij")
        rho = np.maximum(kk + uu, 0.0)
        _TABLE = (k, u, ncx2.cdf(kk * kk, 2, rho * rho).astype(np.float64))
    return _TABLE


def blurred_disc(rho: np.ndarray, radius: float, sigma: float) -> np.ndarray:
    """Value at distance ``rho`` from the centre of a disc of ``radius`` (unit contrast) blurred by a Gaussian of
    ``sigma`` (same units).

    >>> [round(float(v), 2) for v in blurred_disc(np.array([0.0, 10.0, 14.0]), 10.0, 1.0)]
    [1.0, 0.48, 0.0]
    """
    k_ax, u_ax, tab = _disc_table()
    k = float(np.clip(radius / sigma, k_ax[0], k_ax[-1]))
    fk = (k - k_ax[0]) / (k_ax[1] - k_ax[0])
    i0 = min(int(fk), len(k_ax) - 2)
    wk = fk - i0
    u = np.clip((np.asarray(rho, float) - radius) / sigma, u_ax[0], u_ax[-1])
    fu = (u - u_ax[0]) / (u_ax[1] - u_ax[0])
    j0 = np.minimum(fu.astype(int), len(u_ax) - 2)
    wu = fu - j0
    row = (1 - wk) * tab[i0] + wk * tab[i0 + 1]
    return (1 - wu) * row[j0] + wu * row[j0 + 1]


def local_affine(camera: CameraModel, center_mm: np.ndarray) -> np.ndarray:
    """Pixels per mm (2 x 2) of the plane across the view ray at ``center_mm`` (3-D): its columns are the image
    of 1 mm along the horizontal direction across the ray and of 1 mm along the ray's other normal. A sphere's
    silhouette is the image of its great circle in that plane."""
    c = np.asarray(center_mm, float)
    v = c - camera.center_mm
    v /= np.linalg.norm(v)
    t = np.cross(v, [0.0, 0.0, 1.0])
    if np.linalg.norm(t) < 1e-9:
        t = np.array([1.0, 0.0, 0.0])
    t /= np.linalg.norm(t)
    u = np.cross(v, t)
    p = camera.project_mm(np.vstack([c, c + t, c + u]))
    return np.column_stack([p[1] - p[0], p[2] - p[0]])


def fit_ball(lab: np.ndarray, camera: CameraModel, center_mm: np.ndarray, *, radius_guess_mm: float,
             psf_px: tuple[float, float] | None = None, others_px: np.ndarray | None = None,
             max_radius_mm: float = 0.5 * TOLLEY_MAX_DIAMETER_MM,
             shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> BallFit | None:
    """Fit the blurred-sphere model to the ball whose centre is near ``center_mm`` (3-D) in ``lab`` (the photo in
    CIELAB, lightness weighted: ``photo_lab``).

    ``psf_px``: the photo's PSF widths in lightness and colour (None: fitted too); ``others_px``: other balls'
    image centres (N, 2), whose discs are left out; ``shows_model(pixels (N, 2), center_mm)``: which window pixels
    show what the model holds, the ball or the ground it rests on (None: all; the rim's shoulder beside a ball at
    its foot is neither, and a disc fitted over it grows into it). Returns None where the window leaves the photo
    or too little of it is free.
    """
    win = ball_window(lab, camera, center_mm, max_radius_mm, others_px, shows_model)
    if win is None:
        return None
    A, px0, scale_px, q, vals = win.affine, win.center_px, win.scale_px, win.q_mm, win.values

    # JPEG keeps colour at half resolution, so a* and b* are blurred more than lightness: two PSF widths
    fixed = psf_px is not None

    def residuals(p):
        rho = np.hypot(q[:, 0] - p[0], q[:, 1] - p[1])
        s_l, s_c = (psf_px if fixed else (p[3], p[4]))
        out = []
        for ch, s_px in ((slice(0, 1), s_l), (slice(1, 3), s_c)):
            D = blurred_disc(rho, p[2], s_px / scale_px)
            B = np.column_stack([np.ones_like(D), D])
            coef, *_ = np.linalg.lstsq(B, vals[:, ch], rcond=None)
            out.append((vals[:, ch] - B @ coef).ravel())
        return np.concatenate(out)

    lo = [-0.5 * radius_guess_mm, -0.5 * radius_guess_mm, 0.35 * max_radius_mm, PSF_RANGE_PX[0], PSF_RANGE_PX[0]]
    hi = [0.5 * radius_guess_mm, 0.5 * radius_guess_mm, 1.25 * max_radius_mm, PSF_RANGE_PX[1], PSF_RANGE_PX[1]]
    x_init = [0.0, 0.0, float(np.clip(radius_guess_mm, lo[2] + 0.1, hi[2] - 0.1)), 1.0, 1.3]
    if fixed:
        lo, hi, x_init = lo[:3], hi[:3], x_init[:3]
    try:
        sol = least_squares(residuals, x_init, bounds=(lo, hi), loss="soft_l1", f_scale=LOSS_SCALE,
                            x_scale="jac", max_nfev=80)
    except (ValueError, np.linalg.LinAlgError):
        return None
    p = sol.x
    r_sigma = fit_sigma(sol, 2)
    centre = px0 + A @ p[:2]
    return BallFit(diameter_mm=2.0 * float(p[2]), diameter_sigma_mm=2.0 * r_sigma,
                   psf_px=(float(p[3]), float(p[4])) if not fixed else tuple(psf_px),
                   center_px=(float(centre[0]), float(centre[1])))



@dataclass(frozen=True, slots=True)
class BallWindow:
    """The pixels round a ball as a fit sees them: the camera's local affine map there (px per mm), the ball's
    image centre (px), the map's scale (px per mm), each kept pixel's place in mm across the view ray from that
    centre (N, 2) and its CIELAB value (N, 3)."""

    affine: np.ndarray
    center_px: np.ndarray
    scale_px: float
    q_mm: np.ndarray
    values: np.ndarray


def ball_window(lab: np.ndarray, camera: CameraModel, center_mm: np.ndarray, max_radius_mm: float,
                others_px: np.ndarray | None = None,
                shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> BallWindow | None:
    """The fit window round the ball at ``center_mm`` (3-D): out to WINDOW_TOLLEY_RADII of ``max_radius_mm``,
    other balls' discs (``others_px``) and the pixels ``shows_model`` refuses left out (``fit_ball``). None where
    the window leaves the photo or too little of it is free."""
    c3 = np.asarray(center_mm, float)
    A = local_affine(camera, c3)  # px per mm
    try:
        A_inv = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return None
    px0 = camera.project_mm(c3[None])[0]
    scale_px = math.sqrt(abs(np.linalg.det(A)))  # px per mm, geometric mean
    win_mm = WINDOW_TOLLEY_RADII * max_radius_mm
    half = int(math.ceil(win_mm * np.abs(A).sum(1).max())) + 1
    x0, y0 = int(round(px0[0])) - half, int(round(px0[1])) - half
    h, w = lab.shape[:2]
    if x0 < 0 or y0 < 0 or x0 + 2 * half + 1 > w or y0 + 2 * half + 1 > h:
        return None
    patch = lab[y0:y0 + 2 * half + 1, x0:x0 + 2 * half + 1].reshape(-1, 3).astype(np.float64)
    yy, xx = np.mgrid[y0:y0 + 2 * half + 1, x0:x0 + 2 * half + 1]
    d_px = np.column_stack([xx.ravel() - px0[0], yy.ravel() - px0[1]])
    q = d_px @ A_inv.T  # mm in the plane across the ray
    keep = np.hypot(q[:, 0], q[:, 1]) <= win_mm
    for o in (others_px if others_px is not None else ()):
        keep &= np.hypot(xx.ravel() - o[0], yy.ravel() - o[1]) > max_radius_mm * scale_px
    if shows_model is not None and keep.any():
        keep[keep] = shows_model(np.column_stack([xx.ravel()[keep], yy.ravel()[keep]]).astype(float), c3)
    if keep.sum() < MIN_FIT_PX:
        return None
    return BallWindow(A, px0, scale_px, q[keep], patch[keep])


def fit_sigma(sol, index: int) -> float:
    """The 1-sigma of parameter ``index`` of a least-squares solution, from its Jacobian with the residual's
    robust scale as the noise (inf where the Jacobian is singular)."""
    r = sol.fun
    noise = 1.4826 * float(np.median(np.abs(r - np.median(r)))) + 1e-6
    try:
        cov = np.linalg.inv(sol.jac.T @ sol.jac) * noise**2
    except np.linalg.LinAlgError:
        return math.inf
    return math.sqrt(max(float(cov[index, index]), 0.0))


def photo_lab(frame_bgr: np.ndarray) -> np.ndarray:
    """The photo in CIELAB (float32) with lightness weighted as the fit weighs it."""
    lab = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    lab[..., 0] *= LIGHTNESS_WEIGHT
    return lab


def photo_psf_px(fits: list[BallFit | None]) -> tuple[float, float] | None:
    """The photo's PSF widths (lightness, colour; px): the median over its balls' own fits (the blur is one for
    the photo, while each ball's own width trades against its radius).

    >>> f = lambda a, b: BallFit(diameter_mm=12.7, diameter_sigma_mm=0.2, psf_px=(a, b), center_px=(0.0, 0.0))
    >>> photo_psf_px([f(0.8, 1.5), f(1.0, 1.4), None, f(0.9, 2.0)])
    (0.9, 1.5)
    """
    got = np.array([f.psf_px for f in fits if f is not None]).reshape(-1, 2)
    if not len(got):
        return None
    m = np.median(got, axis=0)
    return float(m[0]), float(m[1])


def model_fits(lab: np.ndarray, camera: CameraModel, centers_mm: np.ndarray, fit: np.ndarray,
               psf_px: tuple[float, float] | None = None,
               shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
               ) -> tuple[list[BallFit | None], tuple[float, float] | None]:
    """The fit of each ball at ``centers_mm`` (N, 3) where ``fit`` is set (None where no fit), every ball's disc
    left out of the others' windows and only the pixels ``shows_model`` keeps (``fit_ball``) in its own; and the
    photo's PSF widths used (measured from the first PSF_BALLS fitted balls when not given)."""
    centers_mm = np.asarray(centers_mm, float).reshape(-1, 3)
    todo = [i for i in range(len(centers_mm)) if fit[i]]
    if psf_px is None:
        psf_px = measured_psf_px(lab, camera, centers_mm, fit, shows_model)
    out: list[BallFit | None] = [None] * len(centers_mm)
    if psf_px is None:
        return out, None
    px = _projected(camera, centers_mm)
    for i in todo:
        out[i] = _fit_one(lab, camera, centers_mm, px, i, psf_px, shows_model)
    return out, psf_px


def measured_psf_px(lab: np.ndarray, camera: CameraModel, centers_mm: np.ndarray, fit: np.ndarray,
                    shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                    ) -> tuple[float, float] | None:
    """The photo's PSF widths (``photo_psf_px``) from the first PSF_BALLS of the balls at ``centers_mm`` where
    ``fit`` is set, each fitted with its own width (``model_fits``' arguments)."""
    centers_mm = np.asarray(centers_mm, float).reshape(-1, 3)
    todo = [i for i in range(len(centers_mm)) if fit[i]]
    px = _projected(camera, centers_mm)
    return photo_psf_px([_fit_one(lab, camera, centers_mm, px, i, None, shows_model) for i in todo[:PSF_BALLS]])


def _projected(camera: CameraModel, centers_mm: np.ndarray) -> np.ndarray:
    return camera.project_mm(centers_mm) if len(centers_mm) else np.zeros((0, 2))


def _fit_one(lab: np.ndarray, camera: CameraModel, centers_mm: np.ndarray, px: np.ndarray, i: int,
             psf_px: tuple[float, float] | None,
             shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None) -> BallFit | None:
    """Ball ``i`` of ``centers_mm`` (projected: ``px``) fitted with the others' discs left out of its window."""
    return fit_ball(lab, camera, centers_mm[i], radius_guess_mm=0.5 * MARBLE_TOLLEY_SPLIT_MM, psf_px=psf_px,
                    others_px=np.delete(px, i, axis=0), shows_model=shows_model)
