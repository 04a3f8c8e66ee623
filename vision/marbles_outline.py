"""A single ball's diameter from its outline in the orthophoto: the outermost sharp edge along rays from its centre.

Why. The area of a ball's colour departure mixes the ball with its contact shadow and, for clear glass, misses
the parts that show the sand through it, so its size is biased by style, light and resolution. The ball's
silhouette, however, is a sharp edge (glass against sand, blurred only by the lens), while a shadow's far edge
is soft (penumbra) and the vanes and bands lie inside. So along each ray from the centre the silhouette is the
outermost local maximum of the radial colour gradient that reaches half the ray's strongest.

Geometry. The orthophoto is the plane through the ball's centre; a sphere seen along a ray at angle theta from
the vertical casts there an ellipse, its true radius across the view direction and r / cos(theta) along it.
Each ray's radius is divided by that stretch, so every ray measures the true radius; opposite rays make a chord
through the centre and the median chord is the diameter, with rays towards a nearby ball left out (its own edge
would be taken for this one's).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

N_RAYS = 32
STEP_PX = 0.1
EDGE_SHARE = 0.5  # the silhouette's edge reaches at least this share of the ray's strongest gradient
MIN_RAYS = 10  # fewer free rays than this (crowded ball): no outline measurement
CHORD_QUANTILE = 0.25  # a shadowed side lengthens its chords, never shortens them: the lower quartile


def lab_gradients(img_bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y derivatives of the CIELAB image (H, W, 3 each), lightly smoothed against JPEG noise."""
    lab = cv2.GaussianBlur(cv2.cvtColor(img_bgr, cv2.COLOR_BGR2LAB).astype(np.float32), (0, 0), 0.7)
    return cv2.Sobel(lab, cv2.CV_32F, 1, 0), cv2.Sobel(lab, cv2.CV_32F, 0, 1)


def outline_diameter_mm(grads: tuple[np.ndarray, np.ndarray], center_px, mm_per_px: float, cos_view: float,
                        azimuth_rad: float, r_min_mm: float, r_max_mm: float,
                        others_px: list[np.ndarray] | None = None) -> float | None:
    """Diameter (mm) of the ball centred at ``center_px`` (ortho), or None when too few rays are free.

    ``cos_view``: cosine of the view ray's angle from the vertical at the ball; ``azimuth_rad``: direction of the
    view ray's horizontal part in ortho pixel axes. Radii are searched in [r_min_mm, r_max_mm].
    """
    edge = _edge_radii(grads, np.asarray(center_px, float), mm_per_px, cos_view, azimuth_rad, r_min_mm, r_max_mm,
                       others_px)
    if edge is None:
        return None
    # chords through the centre: r(phi) + r(phi + pi) is the diameter whatever small offset the centre has
    # (a detected centre leans towards the shadow), and a shadowed side spoils only its own chords
    half = N_RAYS // 2
    chords = edge[:half] + edge[half:]
    chords = chords[np.isfinite(chords)]
    if len(chords) < MIN_RAYS // 2:
        return None
    return float(np.quantile(chords, CHORD_QUANTILE) * mm_per_px)


def _edge_radii(grads, c: np.ndarray, mm_per_px: float, cos_view: float, azimuth_rad: float, r_min_mm: float,
                 r_max_mm: float, others_px) -> np.ndarray | None:
    """Stretch-corrected outline radius (px) along each of the N_RAYS rays from ``c`` (NaN: no edge, or a ray
    towards another ball)."""
    gx, gy = grads
    ang = np.linspace(0.0, 2 * math.pi, N_RAYS, endpoint=False)
    keep = np.ones(N_RAYS, bool)
    reach_px = r_max_mm / mm_per_px
    for o in others_px or ():
        v = np.asarray(o, float) - c
        dist = float(np.hypot(*v))
        if dist < 1e-6 or dist > 2.2 * reach_px:
            continue
        half = math.asin(min(1.0, reach_px / dist)) + 0.2
        da = np.abs((ang - math.atan2(v[1], v[0]) + math.pi) % (2 * math.pi) - math.pi)
        keep &= da > half
    if keep.sum() < MIN_RAYS:
        return None
    a = ang - azimuth_rad
    stretch = 1.0 / np.sqrt((np.cos(a) * max(cos_view, 0.2)) ** 2 + np.sin(a) ** 2)
    rs = np.arange(r_min_mm / mm_per_px, reach_px, STEP_PX)
    mx = (c[0] + np.cos(ang)[:, None] * rs[None] * stretch[:, None]).astype(np.float32)
    my = (c[1] + np.sin(ang)[:, None] * rs[None] * stretch[:, None]).astype(np.float32)
    gxs = cv2.remap(gx, mx, my, cv2.INTER_LINEAR)
    gys = cv2.remap(gy, mx, my, cv2.INTER_LINEAR)
    radial = gxs * np.cos(ang)[:, None, None] + gys * np.sin(ang)[:, None, None]
    g = np.sqrt((radial**2).sum(-1))
    peak = (g >= EDGE_SHARE * g.max(1, keepdims=True)) & (g >= np.roll(g, 1, 1)) & (g >= np.roll(g, -1, 1))
    peak[:, 0] = peak[:, -1] = False
    k = peak.shape[1] - 1 - np.argmax(peak[:, ::-1], axis=1)
    return np.where(keep & peak.any(1), rs[k], np.nan)
