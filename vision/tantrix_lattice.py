"""The table plane and the hex lattice from the tiles' own geometry (RULES.md 2.3 conventions).

Without a calibrated camera the plane is recovered from the outlines: a union of regular hexagons has straight
edges in three directions only, 60 degrees apart on the table. Each family of parallel table lines meets at one
vanishing point in the image; the three points fix the horizon (affine rectification), and requiring the three
families to be 60 degrees apart fixes the metric up to a similarity. In that plane the hexagon side ``s`` and
lattice angle are the common length and direction of the edges; the outline's vertices are honeycomb vertices,
which fixes the lattice origin. The outline vertices then serve as point correspondences for a least-squares
homography from the ideal lattice to the image, which removes what the vanishing points left.

Frames: image pixels (x right, y down); the *unit frame* U has y up (ccw seen from above), one unit = the hexagon
circumradius ``s``, lattice angle 0 and hex (0, 0) of the working lattice at the origin: hex (q, r) centre is
``(sqrt(3) (q + r/2), -1.5 r)``; hexagon vertices lie at 30 + 60 k degrees from the centre, edge k faces 60 k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.tantrix_tiles import Segment

SQ3 = math.sqrt(3.0)
# Centre lattice basis in U (E and SE neighbours) and the finer lattice of centres + vertices (spacing 1).
A1 = np.array([SQ3, 0.0])
A2 = np.array([SQ3 / 2.0, -1.5])
_FINE = np.column_stack([[0.0, 1.0], [SQ3 / 2.0, 0.5]])  # columns e_a, e_b
_FINE_INV = np.linalg.inv(_FINE)
_CENTRE = np.column_stack([A1, A2])
_CENTRE_INV = np.linalg.inv(_CENTRE)


# A table holds 56 tiles: a silhouette spanning more lattice cells than this means a nonsense hexagon size.
MAX_GRID_HEXES = 4000


class LatticeError(ValueError):
    """Too little hexagon outline to fix the table plane or the lattice."""


def apply_h(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a 3x3 homography to (N, 2) points."""
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return np.zeros((0, 2))
    q = np.column_stack([pts, np.ones(len(pts))]) @ np.asarray(H, dtype=np.float64).T
    return q[:, :2] / q[:, 2:3]


def hex_center_u(q: int | np.ndarray, r: int | np.ndarray) -> np.ndarray:
    """Centre of hex (q, r) in U."""
    q = np.asarray(q, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    return np.stack([SQ3 * (q + r / 2.0), -1.5 * r], axis=-1)


def nearest_hex(p_u: np.ndarray) -> np.ndarray:
    """Axial (q, r) of the hex containing each U point (cube rounding)."""
    p = np.asarray(p_u, dtype=np.float64).reshape(-1, 2)
    qr = p @ _CENTRE_INV.T
    q, r = qr[:, 0], qr[:, 1]
    x, z = q, r
    y = -x - z
    rx, ry, rz = np.round(x), np.round(y), np.round(z)
    dx, dy, dz = np.abs(rx - x), np.abs(ry - y), np.abs(rz - z)
    fix_x = (dx > dy) & (dx > dz)
    fix_z = ~fix_x & (dz >= dy)
    rx = np.where(fix_x, -ry - rz, rx)
    rz = np.where(fix_z, -rx - ry, rz)
    return np.column_stack([rx, rz]).astype(int)


def _circ_mean_deg(angles_deg: np.ndarray, period: float, weights: np.ndarray | None = None) -> float:
    a = np.radians(np.asarray(angles_deg, float) * 360.0 / period)
    w = np.ones_like(a) if weights is None else np.asarray(weights, float)
    return float(math.degrees(math.atan2(np.sum(w * np.sin(a)), np.sum(w * np.cos(a)))) * period / 360.0)


def _wrap(x: np.ndarray | float, period: float) -> np.ndarray | float:
    """Into (-period/2, period/2]."""
    return (np.asarray(x) + period / 2.0) % period - period / 2.0


# --- the plane from vanishing points -------------------------------------------------------------------------

def _vanishing_point(lines: np.ndarray, weights: np.ndarray) -> np.ndarray:
    A = lines * np.sqrt(weights)[:, None]
    _, _, vt = np.linalg.svd(A)
    v = vt[-1]
    return v / np.linalg.norm(v)


def _segment_lines(p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    h0 = np.column_stack([p0, np.ones(len(p0))])
    h1 = np.column_stack([p1, np.ones(len(p1))])
    lines = np.cross(h0, h1)
    return lines / np.linalg.norm(lines[:, :2], axis=1, keepdims=True)


def _angle_to_vp(p0: np.ndarray, p1: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Angle (deg) between each segment and the direction from its midpoint to the vanishing point."""
    m = (p0 + p1) / 2.0
    d = p1 - p0
    to_v = v[:2][None, :] - m * v[2]  # homogeneous: direction of v - m*w
    cross = d[:, 0] * to_v[:, 1] - d[:, 1] * to_v[:, 0]
    dot = d[:, 0] * to_v[:, 0] + d[:, 1] * to_v[:, 1]
    return np.degrees(np.abs(np.arctan2(cross, dot)))


def _robust_vp(p0: np.ndarray, p1: np.ndarray, lengths: np.ndarray, max_outlier_deg: float) -> np.ndarray:
    """Vanishing point of one family: the pair of runs whose crossing most length agrees with (a segment
    within ``max_outlier_deg`` of pointing at it), then least squares on those, weighted by length squared."""
    lines = _segment_lines(p0, p1)
    n = len(lines)
    best_keep, best_score = np.ones(n, bool), -1.0
    order = np.argsort(-lengths)[:30]
    for a_i, i in enumerate(order):
        for j in order[a_i + 1:]:
            v = np.cross(lines[i], lines[j])
            nv = np.linalg.norm(v)
            if nv < 1e-12:
                continue
            res = _angle_to_vp(p0, p1, v / nv)
            res = np.minimum(res, 180.0 - res)
            keep = res < max_outlier_deg
            score = float(np.sum(lengths[keep] ** 2))
            if score > best_score:
                best_keep, best_score = keep, score
    keep = best_keep if best_keep.sum() >= 2 else np.ones(n, bool)
    v = _vanishing_point(lines[keep], lengths[keep] ** 2)
    for _ in range(2):
        res = _angle_to_vp(p0, p1, v)
        res = np.minimum(res, 180.0 - res)
        new = res < max_outlier_deg
        if new.sum() < 2 or np.array_equal(new, keep):
            break
        keep = new
        v = _vanishing_point(lines[keep], lengths[keep] ** 2)
    return v


def rectify_from_segments(segments: list[Segment], image_size_wh_px: tuple[int, int],
                          *, max_outlier_deg: float = 4.0, projective: bool = True) -> np.ndarray:
    """Image -> plane homography (metric up to a similarity, y up) from outline segments of hexagon unions.

    ``projective`` False keeps the horizon at infinity (an affine view, the edge directions at the image centre):
    the fallback when the vanishing points of a small or ragged board are too uncertain.
    """
    if len(segments) < 6:
        raise LatticeError(f"only {len(segments)} straight tile edges found; need at least 6")
    w, h = image_size_wh_px
    scale = float(max(w, h))
    N = np.array([[1 / scale, 0, -(w - 1) / 2 / scale], [0, 1 / scale, -(h - 1) / 2 / scale], [0, 0, 1]])
    p0 = apply_h(N, np.array([s.p0 for s in segments]))
    p1 = apply_h(N, np.array([s.p1 for s in segments]))
    lengths = np.hypot(*(p1 - p0).T)
    ang = np.degrees(np.arctan2(p1[:, 1] - p0[:, 1], p1[:, 0] - p0[:, 0])) % 180.0
    alpha = _circ_mean_deg(ang, 60.0, lengths)
    family = np.round((ang - alpha) / 60.0).astype(int) % 3
    vps = []
    for j in range(3):
        sel = family == j
        if sel.sum() < 2:
            raise LatticeError("tile edges do not show three directions; cannot recover the table plane")
        vps.append(_robust_vp(p0[sel], p1[sel], lengths[sel], max_outlier_deg))
    V = np.array(vps)
    _, _, vt = np.linalg.svd(V)
    horizon = vt[-1]
    if abs(horizon[2]) < 1e-9:
        raise LatticeError("the horizon passes through the image centre; the view is too oblique")
    horizon = horizon / horizon[2]
    if not projective:
        horizon = np.array([0.0, 0.0, 1.0])
    Ha = np.array([[1, 0, 0], [0, 1, 0], [horizon[0], horizon[1], 1.0]])
    dirs = []
    for v in vps:
        d = (Ha @ v)[:2]
        dirs.append(d / np.linalg.norm(d))
    u1, u2, u3 = dirs
    coef = np.linalg.lstsq(np.column_stack([u1, u3]), u2, rcond=None)[0]
    a, g = coef
    if a < 0:
        u1, a = -u1, -a
    if g < 0:
        u3, g = -u3, -g
    if a < 1e-6 or g < 1e-6:
        raise LatticeError("tile edge directions are degenerate")
    M = np.column_stack([a * u1, u2])
    E = np.array([[1.0, 0.5], [0.0, SQ3 / 2.0]])
    A = E @ np.linalg.inv(M)
    A3 = np.eye(3)
    A3[:2, :2] = A
    P = A3 @ Ha @ N
    if _orientation(P, (w / 2.0, h / 2.0)) > 0:
        P = np.diag([1.0, -1.0, 1.0]) @ P
    return P


def _orientation(P: np.ndarray, at: tuple[float, float]) -> float:
    """Sign of the Jacobian determinant of image -> plane at a pixel (negative = y flipped = seen from above)."""
    x, y = at
    q = apply_h(P, np.array([[x, y], [x + 1, y], [x, y + 1]]))
    J = np.column_stack([q[1] - q[0], q[2] - q[0]])
    return float(np.linalg.det(J))


def edge_angle_and_side(segments_plane: np.ndarray) -> tuple[float, float]:
    """Lattice angle (deg, edge-0 normal, mod 60) and hexagon side from (N, 2, 2) plane segments.

    An edge facing 60 k + theta runs along 60 k + theta + 90, i.e. theta + 30 mod 60.
    """
    d = segments_plane[:, 1] - segments_plane[:, 0]
    lengths = np.hypot(d[:, 0], d[:, 1])
    ang = np.degrees(np.arctan2(d[:, 1], d[:, 0]))
    a0 = _circ_mean_deg(ang, 60.0, lengths ** 2)
    dev = np.abs(_wrap(ang - a0, 60.0))
    keep = dev < 6.0
    if keep.sum() >= 3:
        a0 = _circ_mean_deg(ang[keep], 60.0, lengths[keep] ** 2)
    long = lengths[keep] if keep.sum() >= 3 else lengths
    # the longest runs are whole sides; a link end or a glare notch cuts others short
    side = 0.95 * float(np.percentile(long, 95))
    theta = float(_wrap(a0 - 30.0, 60.0))
    return theta, side


# --- lattice phase and tiles of one silhouette -----------------------------------------------------------------

def vertex_phase(vertices_u: np.ndarray) -> np.ndarray | None:
    """Origin (mod the fine lattice of centres + vertices) that puts the vertices on honeycomb vertices."""
    if len(vertices_u) == 0:
        return None
    f = vertices_u @ _FINE_INV.T  # fine-lattice coordinates
    ph = np.zeros(2)
    keep = np.ones(len(f), bool)
    for _ in range(3):
        for k in range(2):
            ang = 2 * np.pi * f[keep, k]
            ph[k] = math.atan2(np.sin(ang).sum(), np.cos(ang).sum()) / (2 * np.pi)
        dev = _wrap(f - ph, 1.0)
        dist = np.hypot(*(dev @ _FINE.T).T)
        new = dist < 0.22
        if new.sum() < 2 or np.array_equal(new, keep):
            break
        keep = new
    return _FINE @ ph


def edge_phase(segments_u: np.ndarray) -> np.ndarray | None:
    """Origin (mod the fine lattice) from straight outline runs: every hexagon edge lies on a lattice line.

    Lines with normal at 0, 60 or 120 degrees sit at multiples of the half pitch (sqrt(3)/2) along that normal;
    a length-weighted circular mean per family (outliers such as notches dropped) gives the offset along each
    normal, and two of the three fix the point (the third must agree: n0 - n1 + n2 = 0).
    """
    if len(segments_u) < 3:
        return None
    period = SQ3 / 2.0
    d = segments_u[:, 1] - segments_u[:, 0]
    length = np.hypot(d[:, 0], d[:, 1])
    normal_deg = (np.degrees(np.arctan2(d[:, 1], d[:, 0])) - 90.0) % 180.0
    fam = np.round(normal_deg / 60.0).astype(int) % 3
    mid = segments_u.mean(axis=1)
    phases = []
    for k in range(3):
        sel = fam == k
        if sel.sum() < 1:
            return None
        n = np.array([math.cos(math.radians(60 * k)), math.sin(math.radians(60 * k))])
        v = (mid[sel] @ n) / period
        w = length[sel]
        ph = 0.0
        keep = np.ones(len(v), bool)
        for _ in range(3):
            ang = 2 * np.pi * v[keep]
            ph = math.atan2(np.sum(w[keep] * np.sin(ang)), np.sum(w[keep] * np.cos(ang))) / (2 * np.pi)
            new = np.abs(_wrap(v - ph, 1.0)) < 0.2
            if new.sum() < 1 or np.array_equal(new, keep):
                break
            keep = new
        phases.append(ph)
    # enforce n0 - n1 + n2 = 0 on the phases by spreading the residual
    res = float(_wrap(phases[0] - phases[1] + phases[2], 1.0))
    p0, p1 = phases[0] - res / 3.0, phases[1] + res / 3.0
    N = np.array([[1.0, 0.0], [0.5, SQ3 / 2.0]])
    return np.linalg.solve(N, np.array([p0, p1]) * period)


def lattice_scale(segments_u: np.ndarray, lo: float = 0.8, hi: float = 1.25, step: float = 0.002) -> float:
    """Factor that puts the outline's edges on lattice lines best (the centre pitch, not the top-face side).

    The measured side is short of the pitch by the gaps between tiles and the rounded corners; across a board of
    several tiles that error moves the far edges by half a period. The pitch is the scale at which the edges of
    each direction are most coherent modulo the half pitch (length-weighted resultant).
    """
    if len(segments_u) < 6:
        return 1.0
    period = SQ3 / 2.0
    d = segments_u[:, 1] - segments_u[:, 0]
    length = np.hypot(d[:, 0], d[:, 1])
    normal_deg = (np.degrees(np.arctan2(d[:, 1], d[:, 0])) - 90.0) % 180.0
    fam = np.round(normal_deg / 60.0).astype(int) % 3
    n = np.array([[math.cos(math.radians(60 * k)), math.sin(math.radians(60 * k))] for k in range(3)])
    proj = np.sum(segments_u.mean(axis=1) * n[fam], axis=1) / period  # (N,)
    proj = proj - np.array([np.average(proj[fam == k], weights=length[fam == k]) if np.any(fam == k) else 0.0
                            for k in range(3)])[fam]  # centre each family (keeps the phase slope small)
    kappas = np.arange(lo, hi + 1e-9, step)
    z = np.exp(2j * np.pi * kappas[:, None] * proj[None, :]) * length[None, :]
    score = sum(np.abs(z[:, fam == k].sum(axis=1)) for k in range(3))
    return float(kappas[int(np.argmax(score))])


def origin_candidates(phase_u: np.ndarray) -> list[np.ndarray]:
    """The three cosets: hex centres at the phase point, or at one of the two vertex kinds."""
    ea = _FINE[:, 0]
    return [phase_u, phase_u + ea, phase_u + 2 * ea]


def hex_sample_offsets(radius: float = 0.72) -> np.ndarray:
    """Centre, six points towards the vertices and six towards the edge midpoints (U units)."""
    pts = [(0.0, 0.0)]
    for k in range(6):
        a = math.radians(30 + 60 * k)
        pts.append((radius * math.cos(a), radius * math.sin(a)))
        b = math.radians(60 * k)
        pts.append((radius * SQ3 / 2 * math.cos(b), radius * SQ3 / 2 * math.sin(b)))
    return np.array(pts)


@dataclass(frozen=True, slots=True)
class BlobLattice:
    """Hexes of one silhouette in its own lattice (origin and angle in U)."""

    origin_u: tuple[float, float]
    angle_deg: float  # of this silhouette's lattice relative to U
    hexes: tuple[tuple[int, int], ...]
    centers_u: np.ndarray  # (n, 2) in U
    vertex_pairs: tuple[np.ndarray, np.ndarray]  # measured U vertices and their ideal honeycomb positions


def _rot(deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s], [s, c]])


def fit_blob(vertices_u: np.ndarray, angle_deg: float, inside, segments_u: np.ndarray | None = None,
             phase_u: np.ndarray | None = None) -> BlobLattice | None:
    """Hexes filling a silhouette: the vertex phase fixes the origin up to three cosets, the coset whose hexes
    lie wholly inside the silhouette in the greatest number is the lattice. ``inside(points_u)`` gives (N, 2)
    bools: within the filled silhouette, and not bare table (an enclosed empty hex is filled but bare).
    ``phase_u``: the phase when already known (a lattice fitted to the tiles read), not taken from the outline.
    """
    R = _rot(angle_deg)
    local = vertices_u @ R  # rotate by -angle: R.T @ v for each row
    phase = None if phase_u is None else np.asarray(phase_u, float)
    if phase is None and segments_u is not None and len(segments_u) >= 6:
        phase = edge_phase(segments_u @ R)
    if phase is None:
        phase = vertex_phase(local)
    if phase is None:
        return None
    lo = local.min(axis=0) - 2.0
    hi = local.max(axis=0) + 2.0
    offs = hex_sample_offsets()
    best = None
    for o in origin_candidates(phase):
        corners = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [lo[0], hi[1]], [hi[0], hi[1]]]) - o
        qr = corners @ _CENTRE_INV.T
        qlo, rlo = np.floor(qr.min(axis=0)).astype(int) - 1
        qhi, rhi = np.ceil(qr.max(axis=0)).astype(int) + 1
        if (qhi - qlo + 1) * (rhi - rlo + 1) > MAX_GRID_HEXES:
            raise LatticeError(f"a silhouette spans {(qhi - qlo + 1) * (rhi - rlo + 1)} lattice cells: the hexagon "
                               "size found is not a tile's")
        qq, rr = np.meshgrid(np.arange(qlo, qhi + 1), np.arange(rlo, rhi + 1))
        qq, rr = qq.ravel(), rr.ravel()
        cen = hex_center_u(qq, rr) + o
        ok = (cen[:, 0] > lo[0]) & (cen[:, 0] < hi[0]) & (cen[:, 1] > lo[1]) & (cen[:, 1] < hi[1])
        qq, rr, cen = qq[ok], rr[ok], cen[ok]
        if len(cen) == 0:
            continue
        pts = (cen[:, None, :] + offs[None, :, :]).reshape(-1, 2)
        both = inside(pts @ R.T).reshape(len(cen), len(offs), 2)
        ins = both[..., 0]
        # wholly inside the filled silhouette, and not a filled hole showing bare table
        acc = (ins.sum(axis=1) >= len(offs) - 1) & (both[..., 1].sum(axis=1) >= 6)
        score = (int(acc.sum()), float(ins[acc].mean()) if acc.any() else 0.0)
        if best is None or score > best[0]:
            best = (score, o, qq[acc], rr[acc], cen[acc])
    if best is None or best[0][0] == 0:
        return None
    _, o, qq, rr, cen = best
    # vertices snapped to the honeycomb vertices of accepted hexes
    verts = (cen[:, None, :] + np.array([[math.cos(math.radians(30 + 60 * k)), math.sin(math.radians(30 + 60 * k))]
                                          for k in range(6)])[None]).reshape(-1, 2)
    measured, ideal = [], []
    if len(verts):
        for v in local:
            d = np.hypot(*(verts - v).T)
            i = int(np.argmin(d))
            if d[i] < 0.25:
                measured.append(v @ R.T)
                ideal.append(verts[i] @ R.T)
    return BlobLattice(origin_u=(float(o[0]), float(o[1])), angle_deg=angle_deg,
                       hexes=tuple((int(q), int(r)) for q, r in zip(qq, rr)),
                       centers_u=cen @ R.T,
                       vertex_pairs=(np.array(measured).reshape(-1, 2), np.array(ideal).reshape(-1, 2)))


def refine_homography(measured_img: np.ndarray, ideal_u: np.ndarray, thresh_px: float) -> np.ndarray | None:
    """U -> image homography from vertex correspondences (RANSAC, then least squares on the inliers)."""
    if len(ideal_u) < 8:
        return None
    H, inl = cv2.findHomography(ideal_u.astype(np.float64), measured_img.astype(np.float64), cv2.RANSAC, thresh_px)
    if H is None or inl is None or inl.sum() < 8:
        return None
    m = inl.ravel().astype(bool)
    H2, _ = cv2.findHomography(ideal_u[m], measured_img[m], 0)
    return H2 if H2 is not None else H


HEX_AREA_U = 1.5 * SQ3


def hexagon_u(center: np.ndarray, angle_deg: float, radius: float = 1.0) -> np.ndarray:
    """The six vertices (U) of a hexagon whose edge 0 faces ``angle_deg``."""
    a = np.radians(angle_deg + 30.0 + 60.0 * np.arange(6))
    return np.asarray(center)[None, :] + radius * np.column_stack([np.cos(a), np.sin(a)])


def free_tiles(contour_u: np.ndarray, taken: list[tuple[np.ndarray, float]], *, ppu: float = 20.0
               ) -> list[tuple[np.ndarray, float]]:
    """Hexagons anywhere in a silhouette (hand tiles: any angle, perhaps touching), after removing ``taken``.

    The distance to the outline peaks at a hexagon's centre with the apothem (two touching hexagons meet at a
    neck at most half a side wide), so peaks of at least most of an apothem, 1.4 sides apart, are tile centres;
    each tile's angle is the one whose hexagon best fits the outline around it.
    """
    lo = contour_u.min(axis=0) - 0.5
    hi = contour_u.max(axis=0) + 0.5
    W = int(math.ceil((hi[0] - lo[0]) * ppu)) + 1
    H = int(math.ceil((hi[1] - lo[1]) * ppu)) + 1
    if W * H > 4e6 or W < 4 or H < 4:
        return []

    def to_r(p):
        p = np.asarray(p, float).reshape(-1, 2)
        return np.column_stack([(p[:, 0] - lo[0]) * ppu, (hi[1] - p[:, 1]) * ppu])

    def from_r(p):
        p = np.asarray(p, float).reshape(-1, 2)
        return np.column_stack([lo[0] + p[:, 0] / ppu, hi[1] - p[:, 1] / ppu])

    mask = np.zeros((H, W), np.uint8)
    cv2.fillPoly(mask, [np.rint(to_r(contour_u)).astype(np.int32)], 255)
    for c, a in taken:
        cv2.fillPoly(mask, [np.rint(to_r(hexagon_u(c, a, 1.04))).astype(np.int32)], 0)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    if cv2.countNonZero(mask) < 0.5 * HEX_AREA_U * ppu * ppu:
        return []
    dt = cv2.distanceTransform(mask, cv2.DIST_L2, 5)
    k = int(0.8 * ppu) | 1
    peaks = (dt >= 0.72 * (SQ3 / 2) * ppu) & (dt >= cv2.dilate(dt, np.ones((k, k), np.uint8)) - 1e-3)
    ys, xs = np.nonzero(peaks)
    order = np.argsort(-dt[ys, xs])
    chosen: list[np.ndarray] = []
    for i in order:
        p = np.array([xs[i], ys[i]], float)
        if all(np.hypot(*(p - q)) > 1.4 * ppu for q in chosen):
            chosen.append(p)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = from_r(np.concatenate([c.reshape(-1, 2) for c in contours])) if contours else np.zeros((0, 2))
    out = []
    for p in chosen:
        c = from_r(p)[0]
        out.append((c, hexagon_angle(outline, c)))
    return out


def hexagon_angle(outline_u: np.ndarray, center_u: np.ndarray) -> float:
    """Edge-0 direction (deg, mod 60) of the hexagon centred at ``center_u`` that best fits nearby outline."""
    d = outline_u - center_u
    r = np.hypot(d[:, 0], d[:, 1])
    near = (r > 0.6) & (r < 1.1)
    if near.sum() < 12:
        return 0.0
    phi = np.degrees(np.arctan2(d[near, 1], d[near, 0]))
    r = r[near]
    best = (np.inf, 0.0)
    for a in np.arange(0.0, 60.0, 1.0):
        dev = np.radians(((phi - a + 30.0) % 60.0) - 30.0)
        res = np.sort(np.abs(r - (SQ3 / 2) / np.cos(dev)))
        cost = float(np.mean(res[: max(6, int(0.7 * len(res)))]))
        if cost < best[0]:
            best = (cost, float(a))
    return best[1]
