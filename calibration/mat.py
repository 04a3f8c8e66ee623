"""Self-calibration from one photo of the mat: outline, focal length, pose and radial distortion.

Method
------
1. Segment (at a small working scale) the large uniform region around the image centre: candidate regions
   from colour thresholds, flood fills and edge-bounded regions; it must be a filled quadrilateral wholly
   inside the image, and of the candidates the one whose outline lies on the strongest edges wins.
2. Sample the four edges at full resolution: along each side's normal, the largest step from felt colour
   towards the colour outside, located to a fraction of a pixel (parabola through the gradient peak).
3. Robust (RANSAC + total least squares) lines, intersected for the corners.
4. Camera: square pixels, principal point first at the image centre; the focal length from the corners'
   homography (Zhang's two orthogonality constraints with one unknown f, least squares), pose by
   ``cv2.solvePnP``. Of the two ways to put the long sides on the quadrilateral, the one whose corners a
   plausible camera reproduces best wins.
5. Refine focal length, k1 and pose together so every edge point lies on its projected mat edge (the edges
   are straight in the world, so distortion is what bends them); then re-sample the edges along the fitted
   curves, add the centrelines of the four baselines (RULES.md 1.2), and refine f, the principal point,
   k1, k2, p1, p2 and the pose, the principal point and higher terms held to priors (``_PRIOR_SIGMAS``).

A camera looking (nearly) straight down cannot show its focal length in one plane: f then falls back to
``MatParams.focal_px`` or ``DEFAULT_FOCAL_WIDTH_RATIO`` of the width, the mat is still mapped exactly at
z = 0, but heights (z = 38 at the pot's rim) carry a few mm of error towards the mat's ends; tilt the camera
10 degrees or more, or calibrate with the ChArUco board.

The mat is symmetric under a half turn, so which long side is +x is a convention: **+x is the end that appears
in the right half of the image** (the (+x) short side has the larger mean image x). ``TableCalibration``
reports it as ``plus_x_end``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Sequence

import cv2
import numpy as np
from scipy.optimize import least_squares

from calibration._fit import fit_line_ransac, intersect_lines, mm_per_px, order_clockwise
from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from calibration.types import MAT_CORNERS_MM, TableCalibration
from geometry.constants import BASELINE_DISTANCE_MM, MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM

#: When the focal length is unobservable (camera looking straight down) it defaults to this fraction of the
#: image width (a 67 degree horizontal field of view, typical of phone and webcam lenses).
DEFAULT_FOCAL_WIDTH_RATIO = 0.75
#: Plausible focal lengths, as a fraction of the image diagonal (diagonal field about 136 down to 14 deg).
FOCAL_DIAGONAL_RANGE = (0.2, 4.0)
#: A referee camera looks down at the mat: a corner assignment implying a steeper view is implausible
#: (a near-affine view of the wrong long side can otherwise fit the corners as well as the right one).
MAX_PLAUSIBLE_TILT_DEG = 70.0


class MatNotFoundError(CalibrationError):
    """No mat-shaped region could be found in the photo."""


# Below this a 16 mm wink on a 6 ft mat spans under a pixel: no edge fit or colour read is possible.
MIN_FRAME_SIDE_PX = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class MatParams:
    """Parameters of the mat finder and self-calibration (defaults suit 640-4000 px wide photos)."""

    work_width_px: int = 640  # segmentation scale
    center_window_ratio: float = 0.4  # the felt colour is the median of this central fraction of the image
    lightness_weight: float = 0.5  # weight of Lab L against a, b: shading changes L more than hue
    # Candidate felt masks (see ``_segment``): colour-distance thresholds (Lab units; Otsu's clipped to the
    # range, plus ``threshold_steps`` more from half its low end), flood-fill neighbour steps (Lab units), and
    # edge thresholds as multiples of the felt's median gradient.
    threshold_range: tuple[float, float] = (8.0, 45.0)
    threshold_steps: int = 10
    flood_tolerances: tuple[float, ...] = (0.4, 0.6, 0.9, 1.3, 2.0)
    gradient_factors: tuple[float, ...] = (1.5, 2.0, 3.0, 4.5, 7.0)
    close_ratio: float = 0.02  # closing kernel / working width: bridges baselines, winks, the pot
    min_area_ratio: float = 0.04  # the mat covers at least this fraction of the image
    min_fill_ratio: float = 0.85  # region area / area of its quadrilateral
    samples_per_side: int = 160
    search_ratio: float = 0.02  # first edge search half-width / image diagonal
    refine_search_px: float = 6.0  # second pass, along the fitted curves
    # Intrinsics fitted in the final pass (any of f, cx, cy, k1, k2, p1, p2); the principal point, k2 and the
    # tangential terms are held near their priors, so they only move when the edges' curvature demands it.
    free_intrinsics: tuple[str, ...] = ("f", "cx", "cy", "k1", "k2", "p1", "p2")
    use_baselines: bool = True
    focal_px: float | None = None  # a known focal length; None = estimate it
    seed: int = 0  # RANSAC
    # A real 6 x 3 ft mat's straight edges fit to well under a millimetre (simulated rigs: 0.15-0.5 mm RMS);
    # an outline that fits worse than this many mm, or this many pixels, is some other uniform region.
    max_residual_mm: float = 2.5
    max_residual_px: float = 2.0
    # Each of the four mat edges must show a felt/table step along at least this fraction of its samples.
    min_edge_fraction: float = 0.3
    # A camera that sees the whole mat stands this far from its centre (mm): outside it the fit is degenerate.
    camera_distance_range_mm: tuple[float, float] = (300.0, 20000.0)


class MatOutline(NamedTuple):
    """The mat as found in a photo: corners clockwise on screen (side i runs from corner i to corner i+1)."""

    corners_px: np.ndarray
    edge_points_px: tuple[np.ndarray, ...]
    felt_bgr: np.ndarray
    area_ratio: float


# --- mat geometry in table mm -----------------------------------------------------------------------------

_C = BASELINE_DISTANCE_MM * math.sqrt(5)  # |2x| + |y| on a baseline
_BASELINE_SEGMENTS_MM = tuple(
    (
        np.array([sx * MAT_HALF_LENGTH_MM, sy * (_C - 2 * MAT_HALF_LENGTH_MM), 0.0]),
        np.array([sx * (_C - MAT_HALF_WIDTH_MM) / 2, sy * MAT_HALF_WIDTH_MM, 0.0]),
    )
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))
)
_EDGE_SEGMENTS_MM = tuple(
    (np.append(MAT_CORNERS_MM[i], 0.0), np.append(MAT_CORNERS_MM[(i + 1) % 4], 0.0)) for i in range(4)
)


# --- finding the outline ---------------------------------------------------------------------------------


def _lab(image_bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image_bgr.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)


class _Candidate(NamedTuple):
    quad: np.ndarray  # working-scale corners
    region: np.ndarray  # uint8 mask
    area_ratio: float
    fill: float
    alt_quad: np.ndarray | None = None  # from the hull's four longest sides (corners cut off by baselines)


def _largest_quad(hull: np.ndarray, max_vertices: int = 14) -> np.ndarray | None:
    """The largest quadrilateral on a convex hull's vertices: the corners of a rectangle seen in perspective,
    even when its outline is ragged or has a cut corner (Douglas-Peucker alone may keep a wrong vertex)."""
    peri = cv2.arcLength(hull.astype(np.float32).reshape(-1, 1, 2), True)
    pts = hull
    for eps in np.geomspace(0.002, 0.05, 12):
        if len(pts) <= max_vertices:
            break
        pts = cv2.approxPolyDP(hull.astype(np.float32).reshape(-1, 1, 2), eps * peri, True).reshape(-1, 2)
    if len(pts) < 4:
        return None
    idx = np.array(list(itertools.combinations(range(len(pts)), 4)))
    q = pts[idx]  # (M, 4, 2), in hull order, so each is a convex quadrilateral
    x, y = q[..., 0], q[..., 1]
    area = 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1))
    return q[int(np.argmax(area))].astype(np.float64)


def _long_sides_quad(hull: np.ndarray) -> np.ndarray | None:
    """Corners where the hull's four longest sides (in hull order) meet: the mat's corners when the region
    lost its corner triangles behind the baselines."""
    c = (
        cv2.approxPolyDP(
            hull.astype(np.float32).reshape(-1, 1, 2),
            0.01 * cv2.arcLength(hull.astype(np.float32).reshape(-1, 1, 2), True),
            True,
        )
        .reshape(-1, 2)
        .astype(np.float64)
    )
    if len(c) < 4:
        return None
    lengths = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
    keep = np.sort(np.argsort(lengths)[-4:])
    lines = []
    for i in keep:
        a, b = c[i], c[(i + 1) % len(c)]
        d = (b - a) / max(np.linalg.norm(b - a), 1e-9)
        lines.append((a, np.array([-d[1], d[0]])))
    try:
        return np.array([intersect_lines(*lines[i - 1], *lines[i]) for i in range(4)])
    except np.linalg.LinAlgError:
        return None


def _central_component(mask: np.ndarray, window: tuple[slice, slice]) -> np.ndarray | None:
    """The connected component (uint8 mask) covering most of the central window, or None."""
    n, labels = cv2.connectedComponents(mask, connectivity=4)
    counts = np.bincount(labels[window].ravel(), minlength=n)
    counts[0] = 0
    if n <= 1 or counts.max() == 0:
        return None
    return (labels == int(np.argmax(counts))).astype(np.uint8)


def _quad_from_mask(mask: np.ndarray, window: tuple[slice, slice], p: MatParams) -> _Candidate | str:
    """The felt quadrilateral in a candidate felt mask, or the reason it is not a mat."""
    sh, sw = mask.shape
    k = max(3, int(p.close_ratio * sw) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    region = _central_component(mask, window)
    if region is None:
        return "nothing near the image centre has a uniform colour"
    # Pieces cut off by thin lines (the baselines' corner triangles, winks on the edge) rejoin the felt; the
    # table beyond the mat's edge, which touches the image border, does not.
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    near = np.unique(labels[(cv2.dilate(region, disc) > 0) & (mask > 0)])
    x, y, bw, bh, area = (stats[near, i] for i in range(5))
    inside = (x > 0) & (y > 0) & (x + bw < sw) & (y + bh < sh) & (area < 0.1 * region.sum())
    region = (region > 0) | np.isin(labels, near[inside])
    region = cv2.morphologyEx(region.astype(np.uint8), cv2.MORPH_CLOSE, disc)
    # Cut thin bridges to look-alike patches outside (a lamp's highlight, a beige wall).
    region = _central_component(cv2.morphologyEx(region, cv2.MORPH_OPEN, disc), window)
    if region is None:
        return "nothing near the image centre has a uniform colour"
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = max(contours, key=cv2.contourArea)
    area = cv2.contourArea(contour)
    area_ratio = area / (sw * sh)
    if area_ratio < p.min_area_ratio:
        return (
            f"the uniform region at the image centre covers {area_ratio:.1%} of the image "
            f"(need >= {p.min_area_ratio:.0%})"
        )
    pts = contour.reshape(-1, 2)
    on_border = np.mean((pts[:, 0] <= 0) | (pts[:, 1] <= 0) | (pts[:, 0] >= sw - 1) | (pts[:, 1] >= sh - 1))
    if on_border > 0.02:
        return (
            f"the uniform region at the image centre runs off the image ({on_border:.0%} of its outline "
            f"on the border); the whole mat must be in view"
        )
    hull = cv2.convexHull(contour).reshape(-1, 2).astype(np.float64)
    quad = _largest_quad(hull)
    if quad is None:
        return "the uniform region at the image centre is not a quadrilateral"
    fill = area / max(cv2.contourArea(quad.astype(np.float32)), 1e-9)
    if fill < p.min_fill_ratio:
        return (
            f"the uniform region at the image centre fills only {fill:.0%} of its quadrilateral "
            f"(need >= {p.min_fill_ratio:.0%})"
        )
    return _Candidate(quad, region, float(area_ratio), float(fill), _long_sides_quad(hull))


def _edge_support(grad: np.ndarray, quad: np.ndarray) -> float:
    """How strongly the image changes all along a quadrilateral: the weakest side's mean gradient (each
    sample the maximum within 2 px across the side). A region cut short by shading has a weak side."""
    sides = []
    t = np.linspace(0.02, 0.98, 60)
    offsets = np.arange(-2.0, 2.5, 1.0)
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = (b - a) / max(np.linalg.norm(b - a), 1e-9)
        base = a + t[:, None] * (b - a)
        prof = _profiles(grad[..., None], base, np.tile([d[1], -d[0]], (len(t), 1)), offsets)[..., 0]
        sides.append(float(np.mean(prof.max(axis=1))))
    return min(sides)


def _segment(frame_bgr: np.ndarray, p: MatParams) -> tuple[np.ndarray, np.ndarray, float]:
    """The felt quadrilateral at working scale: corners (full-res px, clockwise), felt BGR, area ratio.

    Candidate felt masks: colour distance to the felt (the median of the central window) below a swept
    threshold (Otsu's and a geometric range); flood fills from the most felt-like central pixel with a swept
    step tolerance; and regions bounded by edges (gradient below a swept multiple of the felt's). Flood fills
    and edge regions follow slow shading across the felt but stop at the mat's sharp edge, where a beige felt
    on light wood or a lamp's highlight beside the mat defeats a colour threshold. Each valid region (mat
    sized, inside the image, filling its quadrilateral) offers two quadrilaterals: the largest on its hull,
    and the one through its hull's four longest sides (for a region that lost its corner triangles behind
    the baselines). The quadrilateral whose outline has the strongest edge on its weakest side wins.
    """
    h, w = frame_bgr.shape[:2]
    scale = min(1.0, p.work_width_px / w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.GaussianBlur(cv2.resize(frame_bgr, size, interpolation=cv2.INTER_AREA), (5, 5), 0)
    sh, sw = small.shape[:2]
    lab = _lab(small)
    lab[..., 0] *= p.lightness_weight
    r0, r1 = int(sh * (1 - p.center_window_ratio) / 2), int(sh * (1 + p.center_window_ratio) / 2)
    c0, c1 = int(sw * (1 - p.center_window_ratio) / 2), int(sw * (1 + p.center_window_ratio) / 2)
    window = (slice(r0, r1), slice(c0, c1))
    dist = np.sqrt(np.sum((lab - np.median(lab[window].reshape(-1, 3), axis=0)) ** 2, axis=2))
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)
    grad = np.sqrt(np.sum(gx**2 + gy**2, axis=2)).astype(np.float32)

    otsu, _ = cv2.threshold(
        np.clip(dist * 2.55, 0, 255).astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU
    )
    lo, hi = p.threshold_range
    thresholds = [float(np.clip(otsu / 2.55, lo, hi))] + list(np.geomspace(lo / 2, hi, p.threshold_steps))
    masks = [(dist < t).astype(np.uint8) for t in thresholds]
    seed_rc = np.unravel_index(np.argmin(dist[window]), dist[window].shape)
    seed = (int(seed_rc[1] + c0), int(seed_rc[0] + r0))
    for tol in p.flood_tolerances:
        ff = np.zeros((sh + 2, sw + 2), np.uint8)
        flags = 4 | cv2.FLOODFILL_MASK_ONLY | (1 << 8)
        cv2.floodFill(lab.copy(), ff, seed, (0, 0, 0), (tol,) * 3, (tol,) * 3, flags)
        masks.append(ff[1:-1, 1:-1])
    # Regions bounded by edges: the felt's slow shading stays below these gradients, the mat's edge not.
    g_med = float(np.median(grad[window]))
    masks += [(grad < g_med * f).astype(np.uint8) for f in p.gradient_factors]
    results = [_quad_from_mask(m, window, p) for m in masks]
    valid = [r for r in results if isinstance(r, _Candidate)]
    if not valid:
        raise MatNotFoundError(f"no mat-sized uniform region found: {results[0]}")
    quads = [(c.quad, c) for c in valid] + [(c.alt_quad, c) for c in valid if c.alt_quad is not None]
    quads = [
        (q, c) for q, c in quads if np.all(np.isfinite(q)) and np.all(q > -0.5 * sw) and np.all(q < 1.5 * sw)
    ]
    if not quads:
        raise MatNotFoundError(
            "no mat-sized uniform region found: no candidate quadrilateral lies in the image"
        )
    quad, best = max(quads, key=lambda qc: _edge_support(grad, qc[0]))
    felt_bgr = np.median(small[best.region.astype(bool)].reshape(-1, 3), axis=0).astype(np.float64)
    return order_clockwise((quad + 0.5) / scale - 0.5), felt_bgr, best.area_ratio


def _profiles(image_f32: np.ndarray, base: np.ndarray, normal: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Bilinear samples ``(M, S, C)`` at ``base + s * normal`` for each offset s."""
    if len(base) == 0:  # cv2.remap refuses an empty map: no samples is a valid (empty) answer
        return np.zeros((0, len(offsets), image_f32.shape[2] if image_f32.ndim == 3 else 1), np.float32)
    mx = (base[:, 0:1] + offsets[None, :] * normal[:, 0:1]).astype(np.float32)
    my = (base[:, 1:2] + offsets[None, :] * normal[:, 1:2]).astype(np.float32)
    out = cv2.remap(image_f32, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(len(base), len(offsets), -1)


def _peak(signal: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sub-pixel argmax along axis 1 (parabola through the peak) and the peak values."""
    i = np.clip(np.argmax(signal, axis=1), 1, signal.shape[1] - 2)
    rows = np.arange(len(signal))
    a, b, c = signal[rows, i - 1], signal[rows, i], signal[rows, i + 1]
    den = a - 2 * b + c
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(den < 0, 0.5 * (a - c) / den, 0.0)
    step = offsets[1] - offsets[0]
    return offsets[i] + np.clip(frac, -1, 1) * step, b


def _edge_points(
    image_f32: np.ndarray, base: np.ndarray, normal: np.ndarray, felt_bgr: np.ndarray, half_width_px: float
) -> np.ndarray:
    """Felt-to-outside step along each outward normal; returns the accepted edge points ``(K, 2)``."""
    offsets = np.arange(-half_width_px, half_width_px + 0.25, 0.5)
    prof = _profiles(image_f32, base, normal, offsets)
    outer = prof[:, offsets > half_width_px / 2].reshape(-1, prof.shape[2])
    u = np.median(outer, axis=0) - felt_bgr
    if np.linalg.norm(u) < 1e-6:
        return np.zeros((0, 2))
    # Projection on the felt->outside colour direction is linear in the pixel blend: the edge stays unbiased.
    v = prof @ (u / np.linalg.norm(u))
    g = np.gradient(v, axis=1)
    s, peak = _peak(g, offsets)
    ok = (peak > 0.3 * np.median(peak)) & (np.abs(s) < half_width_px - 1.0)
    return (base + s[:, None] * normal)[ok]


def _ridge_points(
    image_f32: np.ndarray, base: np.ndarray, normal: np.ndarray, half_width_px: float
) -> np.ndarray:
    """Centre of a bright line (a painted baseline) across each normal."""
    if len(base) == 0:
        return np.zeros((0, 2))  # no normals to search (a baseline wholly off the frame)
    offsets = np.arange(-half_width_px, half_width_px + 0.25, 0.5)
    v = _profiles(image_f32, base, normal, offsets).sum(axis=2)
    v = v - np.median(v, axis=1, keepdims=True)
    s, peak = _peak(v, offsets)
    ok = (peak > 0.3 * np.median(peak)) & (peak > 30.0) & (np.abs(s) < half_width_px - 1.0)
    return (base + s[:, None] * normal)[ok]


def find_mat_outline(frame_bgr: np.ndarray, params: MatParams = MatParams()) -> MatOutline:
    """Find the mat's four straight edges (sub-pixel edge points) and their corners; ``MatNotFoundError``."""
    frame = _as_bgr(frame_bgr)
    h, w = frame.shape[:2]
    if min(h, w) < MIN_FRAME_SIDE_PX:
        raise MatNotFoundError(f"image of {w}x{h} px is too small to show a mat "
                               f"(needs at least {MIN_FRAME_SIDE_PX} px on each side)")
    corners, felt_bgr, area_ratio = _segment(frame, params)
    image_f32 = cv2.GaussianBlur(frame.astype(np.float32), (0, 0), 0.8)
    half = max(10.0, params.search_ratio * math.hypot(w, h))
    rng = np.random.default_rng(params.seed)
    t = np.linspace(0.08, 0.92, params.samples_per_side)
    lines, edges = [], []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        base = a + t[:, None] * (b - a)
        pts = _edge_points(image_f32, base, np.tile([d[1], -d[0]], (len(t), 1)), felt_bgr, half)
        if len(pts) < 10:
            raise MatNotFoundError(f"mat edge {i} not found: only {len(pts)} edge points along it")
        c, n, inl = fit_line_ransac(pts, threshold=max(2.0, 0.004 * math.hypot(w, h)), rng=rng)
        lines.append((c, n))
        edges.append(pts[inl])
    corners = np.array([intersect_lines(*lines[i - 1], *lines[i]) for i in range(4)])
    return MatOutline(corners, tuple(edges), felt_bgr, area_ratio)


def _as_bgr(frame: np.ndarray) -> np.ndarray:
    img = np.asarray(frame)
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.ndim != 3 or img.shape[2] not in (3, 4):
        raise CalibrationError(f"expected a BGR image, got an array of shape {img.shape}")
    return img[..., :3] if img.shape[2] == 4 else img


# --- camera from corners ---------------------------------------------------------------------------------


def _K(f: float, size_wh: tuple[int, int]) -> np.ndarray:
    w, h = size_wh
    return np.array([[f, 0.0, (w - 1) / 2], [0.0, f, (h - 1) / 2], [0.0, 0.0, 1.0]])


def focal_from_homography(corners_px: np.ndarray, size_wh: tuple[int, int]) -> float | None:
    """Focal length (px) making the mat's image a view of a rectangle, or None when unobservable.

    With K = diag(f, f, 1) about the image centre, the columns h1, h2 of H (table -> image) satisfy
    h1' W h2 = 0 and h1' W h1 = h2' W h2 with W = diag(1/f^2, 1/f^2, 1): two linear equations in 1/f^2.
    """
    w, h = size_wh
    diag = math.hypot(w, h)
    dst = (np.asarray(corners_px, float) - [(w - 1) / 2, (h - 1) / 2]) / diag
    H = cv2.getPerspectiveTransform((MAT_CORNERS_MM / 1000).astype(np.float32), dst.astype(np.float32))
    h1, h2 = H[:, 0], H[:, 1]
    A = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    B = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
    if A @ A < 1e-18:
        return None
    a = -(A @ B) / (A @ A)  # 1 / f^2 in diagonal units
    if a <= 0:
        return None
    f = diag / math.sqrt(a)
    lo, hi = FOCAL_DIAGONAL_RANGE
    if not lo * diag <= f <= hi * diag:
        return None
    return f


def _pose(corners_px: np.ndarray, K: np.ndarray, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    obj = np.column_stack([MAT_CORNERS_MM, np.zeros(4)])
    ok, rvec, tvec = cv2.solvePnP(obj, corners_px.astype(np.float64), K, dist, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise CalibrationError(f"solvePnP failed for mat corners {corners_px.tolist()}")
    rvec, tvec = cv2.solvePnPRefineLM(obj, corners_px.astype(np.float64), K, dist, rvec, tvec)
    proj, _ = cv2.projectPoints(obj, rvec, tvec, K, dist)
    rms = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - corners_px) ** 2, axis=1))))
    return rvec.ravel(), tvec.ravel(), rms


def _camera_from_clockwise_corners(
    corners_cw: np.ndarray, size_wh: tuple[int, int], focal_px: float | None, ordered: bool = False
) -> tuple[CameraModel, np.ndarray, bool]:
    """Assign the corners to the mat (long sides, +x to the right), fit f and pose.

    Returns the camera, the corners in table order, and whether the focal length was observable.
    """
    w, h = size_wh
    best = None
    shifts = (0,) if ordered else (0, 1)
    for shift in shifts:
        c = np.roll(corners_cw, -shift, axis=0)
        if not ordered and np.mean(c[[1, 2], 0]) < np.mean(c[[0, 3], 0]):
            c = np.roll(c, -2, axis=0)  # +x is the end in the right half of the image
        f = focal_px if focal_px is not None else focal_from_homography(c, size_wh)
        observed = f is not None
        if f is None:
            f = DEFAULT_FOCAL_WIDTH_RATIO * w
        K = _K(f, size_wh)
        rvec, tvec, rms = _pose(c, K, np.zeros(5))
        axis_z = cv2.Rodrigues(rvec)[0][2, 2]  # optical axis . table z (-1 = straight down)
        tilt_deg = math.degrees(math.acos(float(np.clip(-axis_z, -1.0, 1.0))))
        score = rms + (0.0 if observed else 1e-3) + (1e6 if tilt_deg > MAX_PLAUSIBLE_TILT_DEG else 0.0)
        if best is None or score < best[0]:
            best = (score, c, K, rvec, tvec, observed)
    _, c, K, rvec, tvec, observed = best
    camera = CameraModel(K=K, dist=np.zeros(5), rvec=rvec, tvec=tvec, image_size_wh_px=(w, h))
    if camera.center_mm[2] <= 0:
        raise CalibrationError(f"the corners {corners_cw.tolist()} put the camera below the mat")
    return camera, c, observed or focal_px is not None


def from_corners(
    corners_px: Sequence[Sequence[float]] | np.ndarray,
    image_size_wh_px: tuple[int, int],
    *,
    ordered: bool = False,
    focal_px: float | None = None,
) -> TableCalibration:
    """Calibrate from four mat corners clicked by hand (any order unless ``ordered``).

    ``ordered=True`` takes them as (-x,+y), (+x,+y), (+x,-y), (-x,-y); otherwise the long sides are found and
    +x is the end in the right half of the image. No distortion is estimated (four points cannot show it).
    """
    pts = np.asarray(corners_px, dtype=np.float64)
    if pts.shape != (4, 2) or not np.all(np.isfinite(pts)):
        raise CalibrationError(f"need four finite corners (x, y), got {np.asarray(corners_px).tolist()}")
    w, h = (int(v) for v in image_size_wh_px)
    cw = pts if ordered else order_clockwise(pts)
    camera, ordered_px, _ = _camera_from_clockwise_corners(cw, (w, h), focal_px, ordered=ordered)
    obj = np.column_stack([MAT_CORNERS_MM, np.zeros(4)])
    res_px = np.linalg.norm(camera.project_mm(obj) - ordered_px, axis=1)
    res_mm = res_px * mm_per_px(camera, obj)
    return TableCalibration(
        camera=camera,
        source="corners",
        reprojection_error_mm=float(np.sqrt(np.mean(res_mm**2))),
        reprojection_error_px=float(np.sqrt(np.mean(res_px**2))),
        mat_corners_px=ordered_px,
    )


# --- joint refinement on lines ------------------------------------------------------------------------------


class _LineObservations(NamedTuple):
    points_px: np.ndarray  # (M, 2) raw image points
    a_mm: np.ndarray  # (M, 3) a table point of the line each image point lies on
    b_mm: np.ndarray  # (M, 3) another


def _stack(groups: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> _LineObservations:
    pts = np.concatenate([g[0] for g in groups])
    a = np.concatenate([np.tile(g[1], (len(g[0]), 1)) for g in groups])
    b = np.concatenate([np.tile(g[2], (len(g[0]), 1)) for g in groups])
    return _LineObservations(pts, a, b)


def _line_residuals_px(camera: CameraModel, obs: _LineObservations) -> np.ndarray:
    """Distance (undistorted px) from each observed point to the image of its table line."""
    xy = camera.normalized_rays(obs.points_px)
    R, t = camera.R, camera.tvec
    pa = obs.a_mm @ R.T + t
    pb = obs.b_mm @ R.T + t
    a = pa[:, :2] / pa[:, 2:3]
    b = pb[:, :2] / pb[:, 2:3]
    d = b - a
    cross = d[:, 0] * (xy[:, 1] - a[:, 1]) - d[:, 1] * (xy[:, 0] - a[:, 0])
    return camera.K[0, 0] * cross / np.linalg.norm(d, axis=1)


#: Intrinsics the line fit may free, with the prior sigma each is held to about its starting value. The
#: principal point starts at the image centre (or the board's estimate) and stays within about 2 % of the
#: image size, as phone and webcam sensor mounts allow; k2 and the tangential terms are small. f and k1 have
#: no prior: the mat's edges and baselines measure them.
_PRIOR_SIGMAS = {"cx": 0.02, "cy": 0.02, "k2": 0.05, "p1": 0.002, "p2": 0.002}  # cx, cy: fraction of w, h
#: A one-sigma departure from a prior costs as much as a point this far (px) off its line. Edge points scatter
#: about 0.3 px, so a prior weighs like about a hundred points: enough to keep the single-plane trade-off
#: between f, principal point and tangential terms from drifting on small systematic edge errors (chosen on
#: 22 simulator renders: mean worst-grid error 1.6 mm at 0.3 px, 1.1 mm at 3 px).
_PRIOR_WEIGHT_PX = 3.0
_INTRINSIC_NAMES = ("f", "cx", "cy", "k1", "k2", "p1", "p2")


def _check_free(names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in _INTRINSIC_NAMES]
    if unknown:
        raise CalibrationError(
            f"unknown intrinsics {unknown} in free_intrinsics; choose from {_INTRINSIC_NAMES}"
        )


def _intrinsics(camera: CameraModel) -> dict[str, float]:
    K, d = camera.K, camera.dist
    return {"f": K[0, 0], "cx": K[0, 2], "cy": K[1, 2], "k1": d[0], "k2": d[1], "p1": d[2], "p2": d[3]}


def _with(
    values: dict[str, float], rvec: np.ndarray, tvec: np.ndarray, size_wh: tuple[int, int]
) -> CameraModel:
    f = abs(values["f"]) + 1e-9
    K = np.array([[f, 0.0, values["cx"]], [0.0, f, values["cy"]], [0.0, 0.0, 1.0]])
    dist = np.array([values["k1"], values["k2"], values["p1"], values["p2"], 0.0])
    return CameraModel(K=K, dist=dist, rvec=rvec, tvec=tvec, image_size_wh_px=size_wh)


class PlanarPoints(NamedTuple):
    """Extra point observations on a rigid card lying on the mat at an unknown place (e.g. ChArUco corners):
    their table positions as first placed ``(N, 3)`` and where they were seen ``(N, 2)``; the fit may slide
    and turn the card in the mat plane."""

    table_mm: np.ndarray
    image_px: np.ndarray


def _slide(points: PlanarPoints, q: np.ndarray) -> np.ndarray:
    """The card's points turned by q[0] rad about their centroid and moved by (q[1], q[2]) mm."""
    c = points.table_mm.mean(axis=0)
    co, si = math.cos(q[0]), math.sin(q[0])
    d = points.table_mm - c
    x = c[0] + co * d[:, 0] - si * d[:, 1] + q[1]
    y = c[1] + si * d[:, 0] + co * d[:, 1] + q[2]
    return np.column_stack([x, y, points.table_mm[:, 2]])


def _quadratic_under_soft_l1(r: np.ndarray) -> np.ndarray:
    """Residuals r' whose soft-L1 cost 2 (sqrt(1 + r'^2) - 1) equals r^2: Gaussian priors stay Gaussian while
    the point residuals beside them are robust (least_squares applies one loss to all)."""
    return np.sign(r) * np.sqrt((r**2 / 2 + 1) ** 2 - 1)


def _refine(
    camera: CameraModel,
    obs: _LineObservations,
    free: Sequence[str],
    points: PlanarPoints | None = None,
    prior_sigmas: Mapping[str, float] | None = None,
) -> tuple[CameraModel, np.ndarray]:
    """Least squares (soft-L1) over the pose and the ``free`` intrinsics: line points to their projected
    lines, plus optional card points to their projections, each intrinsic held to its start by
    ``prior_sigmas`` (px for f, cx, cy; default ``_PRIOR_SIGMAS``). Returns the camera and the card's slide
    (rad, mm, mm)."""
    size_wh = camera.image_size_wh_px
    start = _intrinsics(camera)
    free = [n for n in _INTRINSIC_NAMES if n in free]
    w, h = size_wh
    if prior_sigmas is None:
        scale = {"cx": w, "cy": h}
        prior_sigmas = {n: s * scale.get(n, 1.0) for n, s in _PRIOR_SIGMAS.items()}
    priors = [(i, start[n], prior_sigmas[n]) for i, n in enumerate(free) if n in prior_sigmas]
    k = len(free)

    def build(x: np.ndarray) -> CameraModel:
        values = dict(start)
        values.update(zip(free, x[:k]))
        return _with(values, x[k : k + 3], x[k + 3 : k + 6], size_wh)

    def fun(x: np.ndarray) -> np.ndarray:
        cam = build(x)
        parts = [_line_residuals_px(cam, obs)]
        if points is not None:
            parts.append((cam.project_mm(_slide(points, x[k + 6 :])) - points.image_px).ravel())
        if priors:
            parts.append(
                _quadratic_under_soft_l1(np.array([(x[i] - c) / s * _PRIOR_WEIGHT_PX for i, c, s in priors]))
            )
        return np.concatenate(parts)

    x0 = [start[n] for n in free] + list(camera.rvec) + list(camera.tvec) + ([0.0] * 3 if points else [])
    sol = least_squares(fun, np.array(x0), loss="soft_l1", f_scale=1.0, x_scale="jac", max_nfev=300)
    return build(sol.x), sol.x[k + 6 :]


def _along_model(
    camera: CameraModel, seg_mm: tuple[np.ndarray, np.ndarray], t: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Image points and outward (clockwise-side) unit normals along a table segment."""
    a, b = seg_mm
    eps = 1e-3
    p = camera.project_mm(a + np.concatenate([t, t + eps])[:, None] * (b - a))
    base, ahead = p[: len(t)], p[len(t) :]
    d = ahead - base
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return base, np.column_stack([d[:, 1], -d[:, 0]])


def _inside(points: np.ndarray, size_wh: tuple[int, int], margin: float = 3.0) -> np.ndarray:
    w, h = size_wh
    return (
        (points[:, 0] > margin)
        & (points[:, 1] > margin)
        & (points[:, 0] < w - 1 - margin)
        & (points[:, 1] < h - 1 - margin)
    )


def calibrate_from_mat(frame_bgr: np.ndarray, params: MatParams = MatParams()) -> TableCalibration:
    """Self-calibrate a camera from one photo of the whole mat (no board): see the module docstring."""
    frame = _as_bgr(frame_bgr)
    h, w = frame.shape[:2]
    _check_free(params.free_intrinsics)
    outline = find_mat_outline(frame, params)
    camera, corners, observed = _camera_from_clockwise_corners(outline.corners_px, (w, h), params.focal_px)
    # Corner i of ``corners`` (table order) came from clockwise corner ``shift``; map the edge sides likewise.
    shift = int(np.argmin(np.linalg.norm(outline.corners_px - corners[0], axis=1)))
    groups = [(outline.edge_points_px[(shift + i) % 4], *_EDGE_SEGMENTS_MM[i]) for i in range(4)]
    free = list(params.free_intrinsics)
    if not observed:  # camera looking straight down: the mat cannot tell focal length from distance
        free = [n for n in free if n not in ("f", "cx", "cy")]
    camera, _ = _refine(camera, _stack(groups), [n for n in free if n in ("f", "k1")])
    cal = refine_on_mat(frame, camera, outline.felt_bgr, params=params, free=free)
    _check_plausible(cal, params)
    return cal


def _check_plausible(cal: TableCalibration, params: MatParams) -> None:
    """Refuse fits that no real mat photo gives: a distant or degenerate camera, corners out of view, or edges
    that are not straight (some other uniform region that happened to be roughly four-sided)."""
    distance = float(np.linalg.norm(cal.camera.center_mm))
    lo, hi = params.camera_distance_range_mm
    if not (np.isfinite(distance) and lo <= distance <= hi):
        raise MatNotFoundError(
            f"no mat-sized uniform region found: the best outline implies a camera {distance / 1000:.1f} m from "
            f"the mat, outside {lo / 1000:.1f}-{hi / 1000:.0f} m")
    w, h = cal.camera.image_size_wh_px
    corners = np.asarray(cal.mat_corners_px, float)
    slack = 0.02 * max(w, h)
    if not np.all(np.isfinite(corners)) or np.any(corners < -slack) or np.any(corners[:, 0] > w - 1 + slack) \
            or np.any(corners[:, 1] > h - 1 + slack):
        raise MatNotFoundError("no mat-sized uniform region found: the fitted mat corners fall outside the image "
                               "(the whole mat must be in view)")
    mm, px = cal.reprojection_error_mm, cal.reprojection_error_px
    if not np.isfinite(mm) or (mm > params.max_residual_mm and (px is None or px > params.max_residual_px)):
        raise MatNotFoundError(
            "no mat-sized uniform region found: the best outline is not a straight-edged 1828.8 x 914.4 mm mat "
            f"(its edges fit to {cal.reprojection_error_mm:.1f} mm RMS, a real mat to under "
            f"{params.max_residual_mm:.1f} mm)")


def refine_on_mat(
    frame_bgr: np.ndarray,
    camera: CameraModel,
    felt_bgr: np.ndarray,
    *,
    params: MatParams = MatParams(),
    free: Sequence[str] | None = None,
    points: PlanarPoints | None = None,
    source: str = "mat",
    prior_sigmas: Mapping[str, float] | None = None,
) -> TableCalibration:
    """Refine a camera already close in the mat's frame: re-sample the mat edges along their fitted (curved)
    images, add the baselines' centrelines and any card ``points``, and fit pose and ``free`` intrinsics."""
    frame = _as_bgr(frame_bgr)
    size = camera.image_size_wh_px
    free = list(params.free_intrinsics if free is None else free)
    _check_free(free)
    image_f32 = cv2.GaussianBlur(frame.astype(np.float32), (0, 0), 0.8)
    t = np.linspace(0.03, 0.97, params.samples_per_side)
    groups = []
    for seg in _EDGE_SEGMENTS_MM:
        base, normal = _along_model(camera, seg, t)
        keep = _inside(base, size)
        pts = _edge_points(image_f32, base[keep], normal[keep], felt_bgr, params.refine_search_px)
        groups.append((pts, *seg))
    side_counts = [len(g[0]) for g in groups]
    if min(side_counts) < params.min_edge_fraction * params.samples_per_side:
        raise MatNotFoundError(
            "no mat-sized uniform region found: the outline's sides do not show a mat edge along their length "
            f"(edge points per side {side_counts} of {params.samples_per_side})")
    if params.use_baselines:
        tb = np.linspace(0.1, 0.9, max(10, params.samples_per_side // 4))
        for seg in _BASELINE_SEGMENTS_MM:
            base, normal = _along_model(camera, seg, tb)
            keep = _inside(base, size)
            pts = _ridge_points(image_f32, base[keep], normal[keep], params.refine_search_px)
            if len(pts) >= 5:
                groups.append((pts, *seg))
    obs = _stack(groups)
    camera, slide = _refine(camera, obs, free, points, prior_sigmas)

    res = _line_residuals_px(camera, obs)
    mad = 1.4826 * np.median(np.abs(res))
    inl = np.abs(res) <= max(3.0 * mad, 0.5)
    xy = camera.image_to_table_mm(obs.points_px[inl])
    res_px = res[inl]
    res_mm = res_px * mm_per_px(camera, np.column_stack([xy, np.zeros(len(xy))]))
    if points is not None:
        card = _slide(points, slide)
        card_px = np.linalg.norm(camera.project_mm(card) - points.image_px, axis=1)
        res_px = np.concatenate([res_px, card_px])
        res_mm = np.concatenate([res_mm, card_px * mm_per_px(camera, card)])
    return TableCalibration(
        camera=camera,
        source=source,
        reprojection_error_mm=float(np.sqrt(np.mean(res_mm**2))),
        reprojection_error_px=float(np.sqrt(np.mean(res_px**2))),
        mat_corners_px=camera.project_mm(MAT_CORNERS_MM),
    )


def plane_corners_from_edges(
    camera: CameraModel, edge_points_px: Sequence[np.ndarray], seed: int = 0
) -> np.ndarray:
    """Mat corners in the camera's z = 0 plane (mm, clockwise from above) from the four sides' edge points."""
    rng = np.random.default_rng(seed)
    lines = []
    for pts in edge_points_px:
        xy = camera.image_to_table_mm(pts)
        c, n, _ = fit_line_ransac(xy, threshold=3.0, rng=rng)
        lines.append((c, n))
    return np.array([intersect_lines(*lines[i - 1], *lines[i]) for i in range(4)])
