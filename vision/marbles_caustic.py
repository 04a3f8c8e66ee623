"""A clear glass ball's size from where it focuses the lamp on the ground (its caustic).

Why. At 6-8 px per marble every read of a ball's outline is a few blurred pixels, and it fails by whole
millimetres where the ball is pale glass on a pale or dark ground (its edge barely differs from what shows
through it). A clear ball is also a lens: the lamp's light through it converges on the ground as a small bright
spot at the centre of the ball's shadow, where the line from the lamp through the ball's centre meets the ground.
For a ball of radius R resting on a plane, that point lies R * (cot(elevation) along the lamp's azimuth, away
from the lamp) from the contact point: in plan, ``contact + R * k`` with one vector ``k`` for the whole photo
(one lamp, far away). So ``k`` is measured on the photo's sure marbles (R known), and each other clear ball's
radius is read from how far its caustic lies from it, a distance of a marble's diameter or more, not from its
edge. Opaque (swirl) glass focuses nothing: no spot stands out, and the read is None.

Development renders (seeds 2026, 7, 99; truth centres): the caustic's radius over the true one, median 0.999,
quartiles 0.95-1.05, also at 0.5 px per mm; ``k`` scatters 0.06 between a photo's balls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.marbles import MARBLE_DIAMETER_MM, TOLLEY_MAX_DIAMETER_MM
from vision.marbles_size import local_affine

# The spot must stand this many robust deviations above the ground around the ball (MAD of the window): sand grain
# and JPEG noise reach 3-4; a clear ball's spot is several times the ground's brightness
SPOT_MIN_SNR = 5.0
# The photo's k is measured on at least this many sure marbles, which must agree (median distance to k) to this
K_MIN_BALLS = 3
K_MAX_SCATTER = 0.2
# Radii searched for a ball's spot (mm): from 0.7 of a marble's to 1.16 of the largest tolley's
R_SEARCH_MM = (0.35 * MARBLE_DIAMETER_MM, 0.58 * TOLLEY_MAX_DIAMETER_MM)
R_STEP_MM = 0.05
# The spot is looked for within this distance (px) of where it falls for some radius (the path of k)
PATH_HALF_WIDTH_PX = 1.0
# A read's uncertainty: the spot's and the ball's image centres, each placed to about this (px) ...
SPOT_SIGMA_PX = 0.2
# ... and the spot's spread about the path over radii (the lamp's size, the spot drawn out along the shadow): a
# share of the radius. Measured on the development renders: the read's error over this sigma has a spread of
# 0.5-0.7 with these halved, 3 in 443 beyond 2 (truth centres; 0.54 with the blurred-sphere fit's centres)
SPOT_SIGMA_SHARE = 0.035
# The spot is read only where it lies at least this many of the ball's radii from its centre in the image: nearer,
# its blurred spot (a third of a radius wide, plus the lens blur) merges with the ball's lit limb or is cut by the
# ball, and its centre is pulled outwards (renders: reads 0.83 of true at 1.3 radii, true from 1.5)
SPOT_MIN_RADII = 1.3
# Blur before the peak is placed (px): the spot is under a pixel; this makes its peak a smooth hill
PEAK_BLUR_PX = 0.6


@dataclass(frozen=True, slots=True, kw_only=True)
class CausticRead:
    """A ball's diameter read from its caustic (mm), that read's 1-sigma (mm) and the spot's strength (robust
    deviations above the ground)."""

    diameter_mm: float
    sigma_mm: float
    snr: float


def brightness(frame_bgr: np.ndarray) -> np.ndarray:
    """CIELAB lightness of the photo, lightly blurred (float32): the spot's peak is placed in it."""
    lum = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32)
    return cv2.GaussianBlur(lum, (0, 0), PEAK_BLUR_PX)


def _contact_mm(camera: CameraModel, center_px: np.ndarray, base_z_mm: float, radius_mm: np.ndarray) -> np.ndarray:
    """Plan contact point (N, 2) of a ball whose image centre is ``center_px`` for each radius: its centre is on
    that pixel's ray at height base + R."""
    radius_mm = np.asarray(radius_mm, float)
    px = np.repeat(np.asarray(center_px, float)[None], len(radius_mm), axis=0)
    return camera.image_to_table_mm(px, base_z_mm + radius_mm)


def _spot_centre(win: np.ndarray, xx: np.ndarray, yy: np.ndarray, cy: int, cx: int, bg: float) -> np.ndarray:
    """The spot's centre (px): the brightness-weighted centroid of its pixels above half its height within a pixel
    and a half of its peak. The spot is drawn out along the shadow (an oblique projection of the focused beam), so
    its peak pixel may lie at either end of it."""
    near = np.hypot(xx - xx[cy, cx], yy - yy[cy, cx]) <= 1.5
    w = np.clip(win - 0.5 * (float(win[cy, cx]) + bg), 0.0, None) * near
    if w.sum() <= 0:
        return np.array([xx[cy, cx], yy[cy, cx]])
    return np.array([float((w * xx).sum() / w.sum()), float((w * yy).sum() / w.sum())])


def _window(lum: np.ndarray, center_px: np.ndarray, half: int):
    """The square window of ``lum`` of half-width ``half`` about ``center_px`` and its pixel grid, or None where it
    leaves the photo."""
    x0, y0 = int(round(center_px[0])), int(round(center_px[1]))
    h, w = lum.shape
    if x0 - half < 1 or y0 - half < 1 or x0 + half + 2 > w or y0 + half + 2 > h:
        return None
    yy, xx = np.mgrid[y0 - half:y0 + half + 1, x0 - half:x0 + half + 1]
    return lum[y0 - half:y0 + half + 1, x0 - half:x0 + half + 1], xx.astype(float), yy.astype(float)


def _free(xx: np.ndarray, yy: np.ndarray, others_px: np.ndarray, others_r_px: np.ndarray) -> np.ndarray:
    """Pixels of the window on no other ball's disc (a neighbour's own glints are not this ball's spot)."""
    keep = np.ones(xx.shape, bool)
    for o, r in zip(others_px, others_r_px):
        keep &= np.hypot(xx - o[0], yy - o[1]) > r
    return keep


def read_caustic(lum: np.ndarray, camera: CameraModel, center_px, base_z_mm: float, k: np.ndarray, *,
                 min_radius_mm: float = 0.0, others_px: np.ndarray | None = None,
                 others_r_px: np.ndarray | None = None) -> CausticRead | None:
    """The diameter of the ball imaged at ``center_px`` resting on the plane z = ``base_z_mm``, from its caustic:
    the brightest point near the path ``contact(R) + R * k`` (R over ``R_SEARCH_MM``) outside the ball's own disc
    (at least ``min_radius_mm``: the ball's other reads bound it from below). None where no spot stands out."""
    c_px = np.asarray(center_px, float)
    radii = np.arange(R_SEARCH_MM[0], R_SEARCH_MM[1] + 1e-9, R_STEP_MM)
    contact = _contact_mm(camera, c_px, base_z_mm, radii)
    path = camera.project_mm(np.column_stack([contact + radii[:, None] * np.asarray(k)[None],
                                              np.full(len(radii), base_z_mm)]))
    # the ball's own disc at each radius: its image scale at the centre
    scale = math.sqrt(abs(np.linalg.det(local_affine(camera, np.array([*contact[0], base_z_mm + radii[0]])))))
    half = int(math.ceil(np.max(np.hypot(*(path - c_px).T)) + 3 * PATH_HALF_WIDTH_PX)) + 1
    got = _window(lum, c_px, half)
    if got is None:
        return None
    win, xx, yy = got
    pts = np.column_stack([xx.ravel(), yy.ravel()])
    # the nearest path point of each pixel (the path is a smooth short curve; a few hundred points)
    d2 = ((pts[:, None, :] - path[None, :, :]) ** 2).sum(-1)
    j = np.argmin(d2, axis=1)
    near = np.sqrt(d2[np.arange(len(pts)), j]) <= PATH_HALF_WIDTH_PX
    r_own = np.maximum(radii[j], min_radius_mm) * scale
    outside = np.hypot(pts[:, 0] - c_px[0], pts[:, 1] - c_px[1]) > r_own + 0.5
    free = _free(xx, yy, others_px if others_px is not None else np.zeros((0, 2)),
                 others_r_px if others_r_px is not None else np.zeros(0)).ravel()
    cand = near & outside & free
    ground = ~near & free & (np.hypot(pts[:, 0] - c_px[0], pts[:, 1] - c_px[1]) > R_SEARCH_MM[1] * scale)
    if cand.sum() < 3 or ground.sum() < 20:
        return None
    vals = win.ravel()
    bg = float(np.median(vals[ground]))
    mad = 1.4826 * float(np.median(np.abs(vals[ground] - bg))) + 1.0
    i = int(np.flatnonzero(cand)[np.argmax(vals[cand])])
    snr = (float(vals[i]) - bg) / mad
    if snr < SPOT_MIN_SNR:
        return None
    cy, cx = np.unravel_index(i, win.shape)
    if cy in (0, win.shape[0] - 1) or cx in (0, win.shape[1] - 1):
        return None
    spot = _spot_centre(win, xx, yy, cy, cx, bg)
    # the radius whose path point is nearest the spot, refined between path points
    m = int(np.argmin(np.hypot(*(path - spot).T)))
    if m in (0, len(radii) - 1):
        return None  # the spot lies at the search's end: beyond any ball's size
    lo, hi = path[m - 1], path[m + 1]
    seg = hi - lo
    t = float(np.clip(np.dot(spot - lo, seg) / max(np.dot(seg, seg), 1e-12), 0.0, 1.0))
    radius = radii[m - 1] + t * (radii[m + 1] - radii[m - 1])
    if np.hypot(*(spot - c_px)) < SPOT_MIN_RADII * radius * scale:
        return None
    px_per_mm = float(np.linalg.norm(seg)) / (radii[m + 1] - radii[m - 1])
    sigma_r = math.hypot(SPOT_SIGMA_SHARE * radius, math.sqrt(2.0) * SPOT_SIGMA_PX / max(px_per_mm, 1e-6))
    return CausticRead(diameter_mm=2.0 * float(radius), sigma_mm=2.0 * sigma_r, snr=snr)


def lamp_offset(lum: np.ndarray, camera: CameraModel, balls: list[tuple[np.ndarray, float, float]],
                others: list[tuple[np.ndarray, float]]) -> np.ndarray | None:
    """The photo's ``k`` (plan mm of the spot's offset from the contact point per mm of radius) from balls of
    known radius: ``balls`` as (image centre px, base z mm, radius mm); ``others`` every ball as (image centre px,
    radius px), left out of each search. Each ball's spot is its brightest point in a ring of 1-4 radii around it,
    kept SPOT_MIN_RADII clear of the ball; the median over the balls, None where fewer than K_MIN_BALLS show a
    spot or they disagree."""
    ks = []
    opx = np.array([o[0] for o in others], float).reshape(-1, 2)
    orad = np.array([o[1] for o in others], float)
    for c_px, base_z, radius in balls:
        c_px = np.asarray(c_px, float)
        contact = _contact_mm(camera, c_px, base_z, np.array([radius]))[0]
        scale = math.sqrt(abs(np.linalg.det(local_affine(camera, np.array([*contact, base_z + radius])))))
        r_px = radius * scale
        got = _window(lum, c_px, int(math.ceil(4.0 * r_px)) + 2)
        if got is None:
            continue
        win, xx, yy = got
        rr = np.hypot(xx - c_px[0], yy - c_px[1])
        self_ = np.hypot(opx[:, 0] - c_px[0], opx[:, 1] - c_px[1]) > 0.5 if len(opx) else np.zeros(0, bool)
        free = _free(xx, yy, opx[self_], orad[self_])
        ring = (rr > r_px + 0.5) & (rr <= 4.0 * r_px) & free
        if ring.sum() < 20:
            continue
        bg = float(np.median(win[ring]))
        mad = 1.4826 * float(np.median(np.abs(win[ring] - bg))) + 1.0
        v = np.where(ring, win, -np.inf)
        cy, cx = np.unravel_index(int(np.argmax(v)), v.shape)
        if (win[cy, cx] - bg) / mad < SPOT_MIN_SNR or cy in (0, win.shape[0] - 1) or cx in (0, win.shape[1] - 1):
            continue
        spot = _spot_centre(win, xx, yy, cy, cx, bg)
        if np.hypot(*(spot - c_px)) < SPOT_MIN_RADII * r_px:
            continue
        q = camera.image_to_table_mm(spot[None], base_z)[0]
        ks.append((q - contact) / radius)
    if len(ks) < K_MIN_BALLS:
        return None
    ks_a = np.array(ks)
    k = np.median(ks_a, axis=0)
    if np.median(np.linalg.norm(ks_a - k, axis=1)) > K_MAX_SCATTER:
        return None
    return k
