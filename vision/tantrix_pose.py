"""A hand tile's pose from its outline: a black regular hexagon of known size on whatever lies beneath it.

Hand tiles lie at any angle, often on a coloured felt mat (TX 1) that hugs their silhouette, so the silhouette's
distance peaks and the link bands alone can leave the pose a good part of a tile off. In the rectified plane a tile
is a hexagon of circumradius 1 (U units); its top is black and hueless apart from the link bands, which meet the
edges at their midpoints. What lies around it (cloth, mat, wood) is lighter or coloured. So the pose is where a
hexagonal ring template sees most contrast: the "distance from black" (Lab) low just inside the six edges (away
from the band at each midpoint) and high just outside them. The outer ring starts beyond the tile's visible side
(5 mm thick, seen under a tilt) so the side does not pull the fit; the link bands then settle the last few
hundredths (``refine_poses``).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.tantrix_lattice import apply_h

APOTHEM_U = math.sqrt(3.0) / 2.0
#: Ring just inside the edges (hex-norm distance from the centre, U), and the band-free part of each edge.
INNER_U = (0.60, 0.80)
MIN_EDGE_OFFSET_U = 0.20  # link bands are ~0.2 U wide around each edge midpoint
#: Ring just outside: beyond a 5 mm side seen at up to ~45 degrees (0.19 U * 0.7 past the apothem).
OUTER_U = (1.02, 1.18)
PPU = 20.0  # template pixels per U
SEARCH_U = 0.7  # a pose further off than this is another tile
ANGLE_STEP_DEG = 2.0
MAX_DISTANCE_FROM_BLACK = 50.0  # Lab units: glare or a bright link do not outweigh a whole edge


def _ring_kernel(angle_deg: float) -> np.ndarray:
    """Correlation kernel: +1 spread over the outer ring, -1 over the inner ring (band-free parts)."""
    half = int(math.ceil(OUTER_U[1] / APOTHEM_U * PPU)) + 1
    ys, xs = np.mgrid[-half:half + 1, -half:half + 1] / PPU
    phi = np.radians(angle_deg + 60.0 * np.arange(6))
    proj = xs[..., None] * np.cos(phi) + ys[..., None] * np.sin(phi)  # (k, k, 6) along each edge normal
    k = np.argmax(proj, axis=-1)
    d = np.take_along_axis(proj, k[..., None], axis=-1)[..., 0]
    tang = -xs * np.sin(phi[k]) + ys * np.cos(phi[k])
    inner = (d >= INNER_U[0]) & (d <= INNER_U[1]) & (np.abs(tang) >= MIN_EDGE_OFFSET_U)
    outer = (d >= OUTER_U[0]) & (d <= OUTER_U[1])
    ker = np.zeros(d.shape, np.float32)
    ker[outer] = 1.0 / outer.sum()
    ker[inner] = -1.0 / inner.sum()
    return ker


_KERNELS = {round(a, 3): _ring_kernel(a) for a in np.arange(0.0, 60.0, ANGLE_STEP_DEG)}


def _rectified(lab: np.ndarray, H_u2img: np.ndarray, corner_u: np.ndarray, size_wh: tuple[int, int]) -> np.ndarray:
    """Lab resampled on a U grid of PPU pixels per unit from ``corner_u`` (outside the image: NaN)."""
    S = np.array([[1.0 / PPU, 0.0, corner_u[0]], [0.0, 1.0 / PPU, corner_u[1]], [0.0, 0.0, 1.0]])
    return cv2.warpPerspective(lab, H_u2img @ S, size_wh, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=(np.nan,) * 3)


def fit_hexagons(lab: np.ndarray, H_u2img: np.ndarray, centers_u: np.ndarray, angles_deg: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best (centre, angle) of each tile's hexagon near its given pose, and the ring contrast there (Lab units).

    Angles come back mod 60 near the given ones (the face's rotation is read later from the links).
    """
    c_out = np.asarray(centers_u, float).copy()
    a_out = np.asarray(angles_deg, float).copy()
    score = np.zeros(len(c_out))
    half = int(math.ceil((SEARCH_U + OUTER_U[1] / APOTHEM_U) * PPU)) + 2
    n = 2 * half + 1
    win = int(round(SEARCH_U * PPU))
    for i, c in enumerate(c_out):
        # patch pixel (x, y) -> U: c + ((x, y) - half) / PPU, sampled through the plane -> image map
        patch = _rectified(lab, H_u2img, c - half / PPU, (n, n))
        if np.isnan(patch[..., 0]).mean() > 0.2:
            continue
        D = _distance_from_black(patch)
        best = (-np.inf, 0.0, 0.0, 0.0)
        for a, ker in _KERNELS.items():
            resp = cv2.filter2D(D, -1, ker, borderType=cv2.BORDER_CONSTANT)
            sub = resp[half - win:half + win + 1, half - win:half + win + 1]
            yy, xx = np.mgrid[-win:win + 1, -win:win + 1]
            sub = np.where(xx * xx + yy * yy <= win * win, sub, -np.inf)
            j = int(np.argmax(sub))
            y, x = divmod(j, sub.shape[1])
            if sub[y, x] > best[0]:
                best = (float(sub[y, x]), a, (x - win) / PPU, (y - win) / PPU)
        s, a, dx, dy = best
        if not np.isfinite(s):
            continue
        c_out[i] = c + [dx, dy]
        # keep the angle near the given one (same edge labelling), mod 60
        a_out[i] = a_out[i] + ((a - a_out[i] + 30.0) % 60.0 - 30.0)
        score[i] = s
    return c_out, a_out, score


def _distance_from_black(patch: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """Lab distance from the tiles' black (the darkest few per cent of ``where``), capped; NaN -> 0."""
    L, A, B = patch[..., 0], patch[..., 1], patch[..., 2]
    sel = L if where is None else L[where]
    black = np.nanpercentile(sel, 5) if np.isfinite(sel).any() else 0.0
    D = np.sqrt((L - black) ** 2 + A ** 2 + B ** 2)
    return np.nan_to_num(np.minimum(D, MAX_DISTANCE_FROM_BLACK), nan=0.0).astype(np.float32)


#: Two hexagons of circumradius 1 that do not overlap have centres at least two apothems apart (touching).
MIN_SPACING_U = 2.0 * APOTHEM_U * 0.95


def find_hexagons(lab: np.ndarray, H_u2img: np.ndarray, contour_u: np.ndarray, taken_u: np.ndarray,
                  min_score: float, *, max_cells: int = 4_000_000) -> list[tuple[np.ndarray, float, float]]:
    """Further tiles inside a silhouette: where the ring template responds at least ``min_score`` (Lab units),
    away from every hexagon already taken and from each other. Returns (centre_u, angle_deg mod 60, score).

    Close hand tiles merge into one silhouette whose distance peaks fall between them; the template sees each
    tile's own black edges instead.
    """
    lo = contour_u.min(axis=0) - 0.3
    hi = contour_u.max(axis=0) + 0.3
    W = int(math.ceil((hi[0] - lo[0]) * PPU)) + 1
    H = int(math.ceil((hi[1] - lo[1]) * PPU)) + 1
    if W * H > max_cells or W < 8 or H < 8:
        return []
    patch = _rectified(lab, H_u2img, lo, (W, H))
    mask = np.zeros((H, W), np.uint8)
    cv2.fillPoly(mask, [np.rint((contour_u - lo) * PPU).astype(np.int32)], 255)
    D = _distance_from_black(patch, mask > 0)
    resp = np.full((H, W), -np.inf, np.float32)
    angle = np.zeros((H, W), np.float32)
    for a, ker in _KERNELS.items():
        r = cv2.filter2D(D, -1, ker, borderType=cv2.BORDER_CONSTANT)
        better = r > resp
        resp[better] = r[better]
        angle[better] = a
    # a tile's centre lies most of an apothem inside the silhouette
    dt = cv2.distanceTransform(mask, cv2.DIST_L2, 5) / PPU
    resp[dt < 0.6 * APOTHEM_U] = -np.inf
    yy, xx = np.mgrid[0:H, 0:W]
    for c in np.asarray(taken_u, float).reshape(-1, 2):
        cx, cy = (c - lo) * PPU
        resp[(xx - cx) ** 2 + (yy - cy) ** 2 < (MIN_SPACING_U * PPU) ** 2] = -np.inf
    out = []
    while True:
        j = int(np.argmax(resp))
        y, x = divmod(j, W)
        if not resp[y, x] >= min_score:
            break
        out.append((lo + np.array([x, y], float) / PPU, float(angle[y, x]), float(resp[y, x])))
        resp[(xx - x) ** 2 + (yy - y) ** 2 < (MIN_SPACING_U * PPU) ** 2] = -np.inf
    return out


__all__ = ["fit_hexagons", "find_hexagons"]
