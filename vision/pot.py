"""Pot detection: the cup's silhouette (top rim r 24 at z 38, base r 19 on the mat) matched, then edge-fitted.

The silhouette of a pot at a plan centre is predicted from the camera (so a tilted view's tall ellipse is
expected, not searched for); it is matched against the non-mat mask near the mat centre, then its plan
centre is refined on sub-pixel edges where the pot meets the mat. A wink whose image centre lies inside the
projected top opening is inside the cup or on its rim: potted (TW 5(c)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import POT_BASE_RADIUS_MM, POT_HEIGHT_MM, POT_TOP_RADIUS_MM
from vision.colour import CLASS_BG, ColourScene
from vision.ortho import OrthoGrid
from vision.silhouette import RoundSolid, rim_points_mm

POT_SOLID = RoundSolid(r_top_mm=POT_TOP_RADIUS_MM, z_top_mm=POT_HEIGHT_MM, r_bottom_mm=POT_BASE_RADIUS_MM,
                       z_bottom_mm=0.0)


@dataclass(frozen=True, slots=True)
class PotParams:
    search_radius_mm: float = 60.0  # the pot stands at the mat centre (TW 4) and is recentred when moved
    ring_mm: float = 8.0  # mat ring around the silhouette used by the match
    min_match: float = 0.45  # silhouette fill minus ring fill
    n_outline: int = 120
    refine_iterations: int = 3
    probe_mm: float = 3.0
    displaced_mm: float = 8.0  # beyond this from the mat centre the detection is believed: the pot moved
    placement_sigma_mm: float = 0.5  # how well a pot stands on the centre mark
    rim_search_mm: float = 12.0  # top-rim search around the silhouette match


@dataclass(slots=True)
class PotDetection:
    found: bool
    center_mm: np.ndarray
    center_px: np.ndarray
    sigma_mm: float
    confidence: float
    silhouette_px: np.ndarray  # (N, 2) polygon
    opening_px: np.ndarray  # (N, 2) polygon of the top rim
    displaced: bool = False  # found clearly away from the mat centre (moved, not yet recentred)


def pot_polygons(camera: CameraModel, center_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ang = np.linspace(0, 2 * np.pi, 90, endpoint=False)
    top = camera.project_mm(rim_points_mm(center_mm, POT_TOP_RADIUS_MM, POT_HEIGHT_MM, ang))
    bot = camera.project_mm(rim_points_mm(center_mm, POT_BASE_RADIUS_MM, 0.0, ang))
    hull = cv2.convexHull(np.vstack([top, bot]).astype(np.float32)).reshape(-1, 2)
    return hull.astype(np.float64), top


def _silhouette_template(camera: CameraModel, grid: OrthoGrid, ring_mm: float):
    hull, _ = pot_polygons(camera, np.zeros(2))
    xy = camera.image_to_table_mm(hull, grid.z_mm)
    cr = xy / grid.mm_per_px * np.array([1.0, -1.0])  # ortho offsets from the pot centre
    pad = ring_mm / grid.mm_per_px + 2
    lo = cr.min(axis=0) - pad
    hi = cr.max(axis=0) + pad
    size = np.ceil(hi - lo).astype(int) + 1
    inside = np.zeros((size[1], size[0]), np.uint8)
    pts = np.round((cr - lo) * 16).astype(np.int32)
    cv2.fillPoly(inside, [pts], 1, shift=4)
    k = max(3, int(round(2 * ring_mm / grid.mm_per_px)) | 1)
    grown = cv2.dilate(inside, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    ring = (grown > 0) & (inside == 0)
    tmpl = inside.astype(np.float32) / max(1, int(inside.sum())) - ring.astype(np.float32) / max(1, int(ring.sum()))
    return tmpl, -lo  # template, and the position of the pot centre inside it


def detect_pot(frame_bgr: np.ndarray, camera: CameraModel, cs: ColourScene, grid: OrthoGrid,
               params: PotParams = PotParams(), mm_per_px: float = 1.0,
               trust_centre_mark: bool = True) -> PotDetection:
    """Find the pot near the mat centre.

    ``trust_centre_mark``: the calibration's origin is the true mat centre (a measured calibration), so a pot
    found near it is taken to stand on the centre mark (TW 4). With a self-calibration from the mat outline the
    origin itself is uncertain by about a millimetre; the pot's own rim, seen in the same frame as the winks,
    is then the better reference for distances to the pot.
    """
    tmpl, origin = _silhouette_template(camera, grid, params.ring_mm)
    c0 = grid.ortho_from_table(np.zeros((1, 2)))[0]
    rad = params.search_radius_mm / grid.mm_per_px
    th, tw_ = tmpl.shape
    x0 = int(max(0, c0[0] - rad - origin[0]))
    y0 = int(max(0, c0[1] - rad - origin[1]))
    x1 = int(min(grid.width_px, c0[0] + rad - origin[0] + tw_))
    y1 = int(min(grid.height_px, c0[1] + rad - origin[1] + th))
    fg = (cs.labels[y0:y1, x0:x1] != CLASS_BG).astype(np.float32)
    # Not matched (a clear pot, a pot the colour of the felt): the rules put it on the centre mark (TW 4), so
    # it is assumed there, with low confidence, rather than ignored.
    default = PotDetection(True, np.zeros(2), camera.project_mm(np.array([[0.0, 0.0, POT_HEIGHT_MM]]))[0],
                           params.placement_sigma_mm, 0.3, *pot_polygons(camera, np.zeros(2)))
    if fg.shape[0] < th or fg.shape[1] < tw_:
        return default
    score = cv2.matchTemplate(fg, tmpl, cv2.TM_CCORR)
    _, best, _, loc = cv2.minMaxLoc(score)
    if best < params.min_match:
        return default
    # sub-pixel peak
    lx, ly = loc
    dx = dy = 0.0
    if 0 < lx < score.shape[1] - 1:
        a, b, c = score[ly, lx - 1], score[ly, lx], score[ly, lx + 1]
        dx = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0.0
    if 0 < ly < score.shape[0] - 1:
        a, b, c = score[ly - 1, lx], score[ly, lx], score[ly + 1, lx]
        dy = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0.0
    col = x0 + lx + dx + origin[0]
    row = y0 + ly + dy + origin[1]
    center = grid.table_from_ortho(np.array([[col, row]]))[0]
    center, sigma, rim_score, rim_raw = fit_top_rim(frame_bgr, camera, center, params)
    sil, opening = pot_polygons(camera, center)
    cpx = camera.project_mm(np.array([[center[0], center[1], POT_HEIGHT_MM]]))[0]
    displaced = float(np.linalg.norm(center)) > params.displaced_mm
    if displaced:
        # believe a moved pot only if its rim is clearly stronger there than on the centre mark
        from dataclasses import replace
        _, _, _, raw0 = fit_top_rim(frame_bgr, camera, np.zeros(2), replace(params, rim_search_mm=2.0))
        displaced = rim_score > 0.3 and rim_raw > 1.5 * raw0
    if not displaced and trust_centre_mark:
        # TW 4: the pot stands at the mat centre and is recentred at once when moved (TW 7(b)); a detection
        # within the displacement threshold agrees with that and the rule position is the better estimate.
        center = np.zeros(2)
        sigma = params.placement_sigma_mm
        sil, opening = pot_polygons(camera, center)
        cpx = camera.project_mm(np.array([[0.0, 0.0, POT_HEIGHT_MM]]))[0]
    return PotDetection(True, center, cpx, float(sigma), float(min(1.0, best, rim_score)), sil, opening,
                        displaced=displaced)


def _rim_score_map(gx: np.ndarray, gy: np.ndarray, px0: np.ndarray, nrm: np.ndarray, jac: np.ndarray,
                   x0: float, y0: float, steps: np.ndarray) -> np.ndarray:
    """Mean normal gradient along the projected rim for each plan shift of ``_shift_grid(x0, y0, steps)``
    (robust to a few strong outliers)."""
    # the rim points of every shift, per image axis (the same sums as an einsum over both, at a quarter the
    # cost); the shifts are a grid, so each product of a rim point's Jacobian and a shift's x (or y) is made
    # once per grid column (or row) and only the sums per shift
    n = len(steps)
    ax, by = (x0 + steps)[:, None], (y0 + steps)[:, None]

    def shifted(axis: int) -> np.ndarray:
        along_x, along_y = jac[None, :, axis, 0] * ax, jac[None, :, axis, 1] * by  # (n, N) each
        summed = (along_x[:, None, :] + along_y[None, :, :]).reshape(n * n, -1)
        return (px0[None, :, axis] + summed).astype(np.float32)
    mx, my = shifted(0), shifted(1)
    sx = cv2.remap(gx, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    sy = cv2.remap(gy, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    g = np.abs(sx * nrm[None, :, 0] + sy * nrm[None, :, 1])
    return np.minimum(g, _row_percentile(g, 90)[:, None]).mean(axis=1)


def _row_percentile(a: np.ndarray, q: float) -> np.ndarray:
    """``np.percentile(a, q, axis=1)`` of finite values (its linear interpolation, in ``a``'s dtype as numpy
    does for a plain-number ``q``): the two order statistics, without the general function's fixed cost (most of
    the rim search's), from a sort of each row (numpy's vectorised sort of a row of a hundred takes half the time
    of a partition at two places; the same values)."""
    vi = (a.shape[1] - 1) * (q / 100.0)
    lo = int(math.floor(vi))
    hi = min(lo + 1, a.shape[1] - 1)
    gamma = vi - lo
    part = np.sort(a, axis=1)
    below, above = part[:, lo], part[:, hi]
    diff = above - below
    if gamma >= 0.5:
        return above - diff * (1 - gamma)
    return below + diff * gamma


def _shift_grid(x0: float, y0: float, steps: np.ndarray) -> np.ndarray:
    """Plan shifts ``(x0 + a, y0 + b)`` for every ``a`` then every ``b`` of ``steps`` (``a`` the outer loop)."""
    n = len(steps)
    out = np.empty((n * n, 2))
    out[:, 0] = np.repeat(x0 + steps, n)
    out[:, 1] = np.tile(y0 + steps, n)
    return out


def fit_top_rim(frame_bgr: np.ndarray, camera: CameraModel, center0: np.ndarray,
                params: PotParams) -> tuple[np.ndarray, float, float, float]:
    """Plan centre of the pot from its top rim (r 24 at z 38), the sharpest circle it shows.

    The projected rim is slid over the gradient image (coarse then fine grid of plan shifts) to the place
    where the image steps most strongly across it. Returns (centre, sigma_mm, score in [0, 1], raw score).
    """
    n = params.n_outline
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    c0 = np.asarray(center0, float)
    rim = rim_points_mm(c0, POT_TOP_RADIUS_MM, POT_HEIGHT_MM, ang)
    px0, jac = camera.project_with_jacobian(rim)  # (n, 2 px, 2 mm)
    tang = np.roll(px0, -1, axis=0) - np.roll(px0, 1, axis=0)
    nrm = np.column_stack([tang[:, 1], -tang[:, 0]])
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-9)
    # ROI of the gradient image around the rim with the search margin
    mmpp = camera.mm_per_px_at(tuple(c0), POT_HEIGHT_MM)
    pad = int(params.rim_search_mm / mmpp) + 6
    x0 = max(0, int(px0[:, 0].min()) - pad)
    y0 = max(0, int(px0[:, 1].min()) - pad)
    x1 = min(frame_bgr.shape[1], int(px0[:, 0].max()) + pad)
    y1 = min(frame_bgr.shape[0], int(px0[:, 1].max()) + pad)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return c0, 5.0, 0.0, 0.0
    roi = cv2.cvtColor(frame_bgr[y0:y1, x0:x1], cv2.COLOR_BGR2Lab).astype(np.float32)
    roi = cv2.GaussianBlur(roi, (0, 0), max(0.8, 0.6 / mmpp))
    gxs = [cv2.Sobel(roi[..., i], cv2.CV_32F, 1, 0, ksize=3) / 8 for i in range(3)]
    gys = [cv2.Sobel(roi[..., i], cv2.CV_32F, 0, 1, ksize=3) / 8 for i in range(3)]
    # colour gradient: the channel with the larger response at each pixel keeps its sign
    mag = [gx * gx + gy * gy for gx, gy in zip(gxs, gys)]
    best_c = np.argmax(np.stack(mag), axis=0)
    gx = np.choose(best_c, gxs).astype(np.float32)
    gy = np.choose(best_c, gys).astype(np.float32)
    p_local = px0 - (x0, y0)
    R = params.rim_search_mm
    coarse = np.arange(-R, R + 1e-9, 1.0)
    dd = _shift_grid(0.0, 0.0, coarse)
    sc = _rim_score_map(gx, gy, p_local, nrm, jac, 0.0, 0.0, coarse)
    best = dd[int(np.argmax(sc))]
    fine = np.arange(-1.5, 1.5 + 1e-9, 0.1)
    dd2 = _shift_grid(best[0], best[1], fine)
    sc2 = _rim_score_map(gx, gy, p_local, nrm, jac, best[0], best[1], fine)
    k = int(np.argmax(sc2))
    # weighted centroid of the top of the score surface for a sub-grid estimate
    top = sc2 >= sc2[k] - 0.02 * max(sc2[k], 1e-6)
    wts = sc2[top] - sc2[top].min() + 1e-6
    delta = (dd2[top] * wts[:, None]).sum(axis=0) / wts.sum()
    # sharpness of the peak -> sigma: score drop over 1 mm
    ring = np.linalg.norm(dd2 - dd2[k], axis=1)
    drop = sc2[k] - float(np.mean(sc2[(ring > 0.9) & (ring < 1.1)])) if np.any((ring > 0.9) & (ring < 1.1)) else 0
    sigma = float(np.clip(0.25 * sc2[k] / max(drop, 1e-6) * mmpp, 0.15, 5.0))
    contrast = float(np.median(np.hypot(gx, gy)))
    score = float(np.clip((sc2[k] - contrast) / (sc2[k] + 1e-6), 0.0, 1.0))
    return c0 + delta, sigma, score, float(sc2[k])


def _labels_at(labels: np.ndarray, grid: OrthoGrid, xy_mm: np.ndarray) -> np.ndarray:
    cr = np.rint(grid.ortho_from_table(xy_mm)).astype(int)
    h, w = labels.shape
    ok = (cr[:, 0] >= 0) & (cr[:, 0] < w) & (cr[:, 1] >= 0) & (cr[:, 1] < h)
    out = np.full(len(cr), 255, np.uint8)
    out[ok] = labels[cr[ok, 1], cr[ok, 0]]
    return out


def inside_polygon(poly_px: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    c = poly_px.astype(np.float32).reshape(-1, 1, 2)
    return np.array([cv2.pointPolygonTest(c, (float(p[0]), float(p[1])), False) >= 0 for p in pts_px], bool)
