"""A faint clear ball's diameter from the blurred-sphere model with the sky its own sphere hides from the sand.

Why. A clear ball shows the sand through its glass, so its colour departure from the sand is faint and its area
read small; round it lies the soft contact shadow every ball casts under the sky (the sky it hides from the sand
near it), as dark as the glass itself. The blurred-sphere fit (``vision.marbles_size``) has only the ball and the
sand, so on such a ball it grows its disc over that shadow: traced on seen seed 1627 and development marbles_06,
clear marbles of 12.7 mm read 18.2-20.8 mm so, the lamp's cast shadow accounting for only 0.3-3 mm of it (a
capsule fitted over ball and cast shadow, whose width needs no lamp, still read them 15.6-20.4 mm). Here the
contact shadow is a second template with the ball's own radius and no free shape: the share of a uniform sky
a sphere of radius R resting on the plane hides from a ground point rho from its contact point,
R^3 / (rho^2 + R^2)^1.5 (cosine-weighted), its contrast solved per CIELAB channel beside the ball's. Where the
ball's own contrast dominates (opaque glass, tolleys), the template trades against the blurred edge and reads
the ball small, so the detector takes it only for a faint ball, and only where it reads smaller than the fit
without it (``vision.marbles``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import least_squares

from calibration.camera import CameraModel
from geometry.marbles import MARBLE_TOLLEY_SPLIT_MM, TOLLEY_MAX_DIAMETER_MM
from vision.marbles_size import LOSS_SCALE, ball_window, blurred_disc


def sky_occlusion(rho_mm: np.ndarray, radius_mm: float) -> np.ndarray:
    """The share of a uniform sky (cosine-weighted) a sphere of ``radius_mm`` resting on the plane hides from a
    ground point ``rho_mm`` from its contact point.

    >>> [round(float(v), 3) for v in sky_occlusion(np.array([0.0, 6.35, 19.05]), 6.35)]
    [1.0, 0.354, 0.032]
    """
    r2 = radius_mm * radius_mm
    return (r2 / (np.asarray(rho_mm, float) ** 2 + r2)) ** 1.5


def wall_sky_share(distance_mm: float, height_mm: float) -> float:
    """The share of a uniform sky (cosine-weighted) a long vertical wall of ``height_mm`` hides from a ground point
    ``distance_mm`` from its foot: an upper bound for the raised ring's sloped shoulder.

    >>> round(wall_sky_share(0.0, 76.2), 2), round(wall_sky_share(101.6, 76.2), 2)
    (0.5, 0.1)
    """
    return 0.5 * (1.0 - distance_mm / float(np.hypot(distance_mm, height_mm)))


def halo_diameter_mm(lab: np.ndarray, camera: CameraModel, center_mm: np.ndarray, psf_px: tuple[float, float], *,
                     others_px: np.ndarray | None = None, max_radius_mm: float = 0.5 * TOLLEY_MAX_DIAMETER_MM,
                     shows_model: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> float | None:
    """The diameter (mm) of the ball near ``center_mm`` (3-D) in ``lab`` (``photo_lab``) fitted as a blurred
    disc (the photo's PSF widths ``psf_px``: lightness, colour) with its sky-occlusion shadow outside it; the
    window as ``fit_ball``'s. None where the window leaves the photo or too little of it is free."""
    win = ball_window(lab, camera, center_mm, max_radius_mm, others_px, shows_model)
    if win is None:
        return None
    q, vals, scale_px = win.q_mm, win.values, win.scale_px

    def residuals(p):
        rho = np.hypot(q[:, 0] - p[0], q[:, 1] - p[1])
        out = []
        for ch, s_px in ((slice(0, 1), psf_px[0]), (slice(1, 3), psf_px[1])):
            D = blurred_disc(rho, p[2], s_px / scale_px)
            B = np.column_stack([np.ones_like(D), D, sky_occlusion(rho, p[2]) * (1.0 - D)])
            coef, *_ = np.linalg.lstsq(B, vals[:, ch], rcond=None)
            out.append((vals[:, ch] - B @ coef).ravel())
        return np.concatenate(out)

    # the centre's and the radius' ranges are the blurred-sphere fit's
    r0 = 0.5 * MARBLE_TOLLEY_SPLIT_MM
    lo = [-0.5 * r0, -0.5 * r0, 0.35 * max_radius_mm]
    hi = [0.5 * r0, 0.5 * r0, 1.25 * max_radius_mm]
    try:
        sol = least_squares(residuals, [0.0, 0.0, r0], bounds=(lo, hi), loss="soft_l1", f_scale=LOSS_SCALE,
                            x_scale="jac", max_nfev=80)
    except (ValueError, np.linalg.LinAlgError):
        return None
    return 2.0 * float(sol.x[2])
