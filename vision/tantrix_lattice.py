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


def rectify_from_segments(segments: list[Segment], image_size_wh_px: tuple[int, int],
                          *, max_outlier_deg: float = 4.0) -> np.ndarray:
    """Image -> plane homography (metric up to a similarity, y up) from outline segments of hexagon unions."""
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
        keep = sel.copy()
        for _ in range(3):
            lines = _segment_lines(p0[keep], p1[keep])
            v = _vanishing_point(lines, lengths[keep])
            res = _angle_to_vp(p0, p1, v)
            res = np.minimum(res, 180.0 - res)
            new = sel & (res < max_outlier_deg)
            if new.sum() < 2 or np.array_equal(new, keep):
                break
            keep = new
        vps.append(v)
    V = np.array(vps)
    _, _, vt = np.linalg.svd(V)
    horizon = vt[-1]
    if abs(horizon[2]) < 1e-9:
        raise LatticeError("the horizon passes through the image centre; the view is too oblique")
    horizon = horizon / horizon[2]
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
    side = float(np.median(long[long >= 0.6 * np.percentile(long, 90)]))
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


def fit_blob(vertices_u: np.ndarray, angle_deg: float, inside) -> BlobLattice | None:
    """Hexes filling a silhouette: the vertex phase fixes the origin up to three cosets, the coset whose hexes
    lie wholly inside the silhouette in the greatest number is the lattice. ``inside(points_u)`` gives (N, 2)
    bools: within the filled silhouette, and on tile-coloured pixels (an enclosed empty hex is filled but bare).
    """
    R = _rot(angle_deg)
    local = vertices_u @ R  # rotate by -angle: R.T @ v for each row
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
        # wholly inside the filled silhouette, and not a filled hole: some tile colour (black or link) seen
        acc = (ins.sum(axis=1) >= len(offs) - 1) & (both[..., 1].sum(axis=1) >= 3)
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
