"""Projected outlines of round solids and sub-pixel edge fitting of their plan position.

A wink is a disc of known radius between two heights; the pot is a cup whose widest parts are its top rim
(r 24 at z 38) and its base (r 19 at z 0). The image silhouette of either is the convex hull of its two
projected rims (the widest sections), so only rim points that are hull vertices are true silhouette points.
The fit moves the plan centre (2 unknowns, plus optionally a common edge offset) until the model silhouette
meets the measured sub-pixel edge crossings along the outline normals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from calibration.camera import CameraModel


@dataclass(frozen=True, slots=True)
class RoundSolid:
    """Two horizontal (or equally tilted) circles: ``(r_top, z_top)`` and ``(r_bottom, z_bottom)`` at a centre.

    ``z_*`` are heights of the rim centres above the mat; ``tilt_deg`` tilts both rims about the centre,
    rising towards ``tilt_azimuth_deg``.
    """

    r_top_mm: float
    z_top_mm: float
    r_bottom_mm: float
    z_bottom_mm: float
    tilt_deg: float = 0.0
    tilt_azimuth_deg: float = 0.0


def rim_points_mm(center_mm: np.ndarray, radius_mm: float, z_mm: float, angles: np.ndarray,
                  tilt_deg: float = 0.0, azimuth_deg: float = 0.0) -> np.ndarray:
    """3-D points of a circle (angles measured in plan from +x), tilted to rise towards ``azimuth_deg``."""
    c = np.asarray(center_mm, float)
    if tilt_deg == 0.0:
        return np.column_stack([c[0] + radius_mm * np.cos(angles), c[1] + radius_mm * np.sin(angles),
                                np.full(len(angles), z_mm)])
    t = math.radians(tilt_deg)
    a = math.radians(azimuth_deg)
    rel = angles - a
    du = radius_mm * np.cos(rel)
    dv = radius_mm * np.sin(rel)
    ca, sa = math.cos(a), math.sin(a)
    x = c[0] + du * math.cos(t) * ca - dv * sa
    y = c[1] + du * math.cos(t) * sa + dv * ca
    return np.column_stack([x, y, z_mm + du * math.sin(t)])


@dataclass(slots=True)
class Outline:
    """Silhouette sample points of a solid at one plan centre, with their outward image normals."""

    angles: np.ndarray  # plan angle of each point (rad)
    points_px: np.ndarray  # (N, 2)
    normals_px: np.ndarray  # (N, 2) unit, outward
    jac: np.ndarray  # (N, 2): d(normal offset, px) / d(centre x, y, mm)
    jac_full: np.ndarray  # (N, 2, 2): d(point px) / d(centre mm), columns x, y
    is_top: np.ndarray  # (N,) bool: the point lies on the top rim
    center_px: np.ndarray


@lru_cache(maxsize=8)
def _angles(n: int) -> np.ndarray:
    a = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    a.setflags(write=False)
    return a


@lru_cache(maxsize=8)
def _unit_circle(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Cosines and sines of ``_angles(n)`` (an outline is drawn tens of times per frame)."""
    a = _angles(n)
    cos, sin = np.cos(a), np.sin(a)
    cos.setflags(write=False)
    sin.setflags(write=False)
    return cos, sin


def _row_norms(v: np.ndarray) -> np.ndarray:
    """Lengths of the rows of an ``(N, 2)`` array (the same sums as ``np.linalg.norm(v, axis=1)``)."""
    x, y = v[:, 0], v[:, 1]
    return np.sqrt(x * x + y * y)


def _both_rims(c: np.ndarray, solid: RoundSolid, n: int, zc: float) -> np.ndarray:
    """The top rim's ``n`` points, the bottom rim's, and the centre at ``zc`` as one ``(2n + 1, 3)`` array."""
    if solid.tilt_deg != 0.0:
        ang = _angles(n)
        top = rim_points_mm(c, solid.r_top_mm, solid.z_top_mm, ang, solid.tilt_deg, solid.tilt_azimuth_deg)
        bot = rim_points_mm(c, solid.r_bottom_mm, solid.z_bottom_mm, ang, solid.tilt_deg, solid.tilt_azimuth_deg)
        return np.vstack([top, bot, [[c[0], c[1], zc]]])
    # level rims: rim_points_mm's arithmetic on cached cosines and sines
    cos, sin = _unit_circle(n)
    out = np.empty((2 * n + 1, 3))
    out[:n, 0] = c[0] + solid.r_top_mm * cos
    out[:n, 1] = c[1] + solid.r_top_mm * sin
    out[:n, 2] = solid.z_top_mm
    out[n:2 * n, 0] = c[0] + solid.r_bottom_mm * cos
    out[n:2 * n, 1] = c[1] + solid.r_bottom_mm * sin
    out[n:2 * n, 2] = solid.z_bottom_mm
    out[2 * n] = (c[0], c[1], zc)
    return out


def outline(camera: CameraModel, solid: RoundSolid, center_mm: np.ndarray, n: int = 96) -> Outline:
    """Silhouette points: rim points that are vertices of the hull of both projected rims."""
    return outlines(camera, [solid], [center_mm], n)[0]


def outlines(camera: CameraModel, solids: list[RoundSolid], centers_mm: list[np.ndarray], n: int = 96
             ) -> list[Outline]:
    """``outline`` of several solids: one projection of all their rims, then per solid only its hull."""
    ang = _angles(n)
    k_n = len(solids)
    if k_n == 0:
        return []
    m = 2 * n
    d = 0.25
    # per solid: the rims, the centre and the rims moved by d along x and along y (for the plan Jacobian) in
    # one projection: only the hull's points' moved images are used, but one call on all costs less than two
    both = np.empty((k_n, 3 * m + 1, 3))
    # level rims, all solids at once: _both_rims's arithmetic on cached cosines and sines
    c = np.asarray(centers_mm, float).reshape(k_n, 2)
    rz = np.array([(s.r_top_mm, s.z_top_mm, s.r_bottom_mm, s.z_bottom_mm) for s in solids])
    cos, sin = _unit_circle(n)
    for rows, r_col, z_col in ((slice(0, n), 0, 1), (slice(n, m), 2, 3)):
        both[:, rows, 0] = c[:, 0:1] + rz[:, r_col:r_col + 1] * cos
        both[:, rows, 1] = c[:, 1:2] + rz[:, r_col:r_col + 1] * sin
        both[:, rows, 2] = rz[:, z_col:z_col + 1]
    both[:, m, :2] = c
    both[:, m, 2] = 0.5 * (rz[:, 1] + rz[:, 3])
    for j, solid in enumerate(solids):
        if solid.tilt_deg != 0.0:
            both[j, :m + 1] = _both_rims(c[j], solid, n, 0.5 * (solid.z_top_mm + solid.z_bottom_mm))
    both[:, m + 1:2 * m + 1] = both[:, :m]
    both[:, 2 * m + 1:] = both[:, :m]
    both[:, m + 1:2 * m + 1, 0] += d
    both[:, 2 * m + 1:, 1] += d
    allp = camera.project_mm(both.reshape(-1, 3)).reshape(k_n, 3 * m + 1, 2)
    p0 = allp[:, :m]
    cen = allp[:, m]
    on_hull = np.zeros((k_n, m), bool)
    p0_32 = p0.astype(np.float32)
    for j in range(k_n):
        on_hull[j, cv2.convexHull(p0_32[j], returnPoints=False).ravel()] = True
    # Keep, per angle, the rim point that lies on the hull (both may; take the farther from the centre).
    top_on, bot_on = on_hull[:, :n], on_hull[:, n:]
    rel = p0 - cen[:, None, :]
    dist = np.sqrt(rel[..., 0] * rel[..., 0] + rel[..., 1] * rel[..., 1])
    use_bot = bot_on & (~top_on | (dist[:, n:] > dist[:, :n]))
    keep = top_on | bot_on
    degenerate = keep.sum(axis=1) < 3  # a degenerate hull: the whole top rim
    keep[degenerate] = True
    use_bot[degenerate] = False
    kk, sel = np.nonzero(keep)  # solid, angle index: solid by solid, angles ascending
    idx = sel + n * use_bot[kk, sel]
    pts = p0[kk, idx]
    cen_k = cen[kk]
    counts = keep.sum(axis=1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # outward normal from the neighbours along the hull order (by angle around the projected centre)
    order = np.lexsort((np.arctan2(pts[:, 1] - cen_k[:, 1], pts[:, 0] - cen_k[:, 0]), kk))
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    ps = pts[order]
    pos = np.arange(len(order)) - starts[kk]  # place within its own solid's sorted run
    cnt = counts[kk]
    nxt = starts[kk] + (pos + 1) % cnt
    prv = starts[kk] + (pos - 1) % cnt
    tang = ps[nxt] - ps[prv]
    nrm = np.empty_like(tang)
    nrm[:, 0] = tang[:, 1]
    nrm[:, 1] = -tang[:, 0]
    nrm /= np.maximum(_row_norms(nrm), 1e-9)[:, None]
    flip = (nrm * (ps - cen_k)).sum(axis=1) < 0
    nrm[flip] *= -1
    nrm = nrm[inv]
    # the plan Jacobian by finite differences, at the kept rim points
    jx = (allp[kk, m + 1 + idx] - pts) / d
    jy = (allp[kk, 2 * m + 1 + idx] - pts) / d
    jac = np.empty((len(idx), 2))
    jac[:, 0] = (jx * nrm).sum(axis=1)
    jac[:, 1] = (jy * nrm).sum(axis=1)
    jac_full = np.stack([jx, jy], axis=2)
    is_top = idx < n
    out = []
    for j, (s0, c) in enumerate(zip(starts.tolist(), counts.tolist())):
        sl = slice(s0, s0 + c)
        out.append(Outline(angles=ang[sel[sl]], points_px=pts[sl], normals_px=nrm[sl], jac=jac[sl],
                           jac_full=jac_full[sl], is_top=is_top[sl], center_px=cen[j]))
    return out


@dataclass(slots=True)
class EdgeSamples:
    offsets_px: np.ndarray  # (N,) measured crossing along the normal (nan where invalid)
    contrast: np.ndarray  # (N,) |inside - outside| (0..255 units)
    inside_bgr: np.ndarray  # (N, 3)
    outside_bgr: np.ndarray  # (N, 3)


def sample_profiles(image_bgr: np.ndarray, points_px: np.ndarray, normals_px: np.ndarray,
                    half_px: float = 6.0, step_px: float = 0.5) -> np.ndarray:
    """Bilinear samples along each normal: ``(N, T, 3)`` float32 at offsets ``-half..half``."""
    t = np.arange(-half_px, half_px + 1e-9, step_px, dtype=np.float32)
    mx = (points_px[:, 0:1] + normals_px[:, 0:1] * t[None, :]).astype(np.float32)
    my = (points_px[:, 1:2] + normals_px[:, 1:2] * t[None, :]).astype(np.float32)
    prof = cv2.remap(image_bgr, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return prof.astype(np.float32)


def _mean_of_samples(profiles: np.ndarray, cols: range) -> np.ndarray:
    """``profiles[:, cols].mean(axis=1)`` for a few columns: the same sums in the same order, without the
    reduction machinery that costs more than the arithmetic on a hundred profiles."""
    acc = profiles[:, cols[0]].copy()
    for j in cols[1:]:
        acc += profiles[:, j]
    acc /= len(cols)
    return acc


@lru_cache(maxsize=8)
def _profile_offsets(half_px: float, step_px: float) -> np.ndarray:
    t = np.arange(-half_px, half_px + 1e-9, step_px)
    t.setflags(write=False)
    return t


def edge_crossings(profiles: np.ndarray, half_px: float, step_px: float, ref_px: float = 1.5,
                   level: float = 0.35) -> EdgeSamples:
    """Sub-pixel position where each profile leaves the outside colour (``level`` of the full contrast).

    The measure is the colour distance from the profile's own outer end (the mat, possibly in shadow), so a
    darker side wall or bevel still counts as the wink; any fixed level only changes the apparent radius,
    which the fit absorbs, not the centre. The crossing nearest the model position (offset 0) is used.
    """
    n, tn, _ = profiles.shape
    t = _profile_offsets(float(half_px), float(step_px))
    k = max(1, int(round(ref_px / step_px)))
    inside = _mean_of_samples(profiles, range(k))
    outside = _mean_of_samples(profiles, range(tn - k, tn))
    dio = inside - outside
    contrast = np.sqrt(np.einsum("ij,ij->i", dio, dio))
    dp = profiles - outside[:, None, :]
    dp *= dp  # squared, summed channel by channel: einsum's sums, without its cost on a last axis of 3
    dist = np.sqrt(dp[..., 0] + dp[..., 1] + dp[..., 2])
    good = (contrast > 0) & (contrast < np.inf)
    if good.all():
        s = dist / contrast[:, None]
    else:  # a profile without contrast has no crossing: divided by nothing (no 0/0 to silence)
        s = np.zeros_like(dist)
        s[good] = dist[good] / contrast[good, None]
    above = s >= level
    cross = above[:, :-1] > above[:, 1:]  # above, then not
    offs = np.full(n, np.nan)
    # the outermost crossing (the wink's silhouette against the outside): the first one from the outer end
    jb = cross[:, ::-1].argmax(axis=1)
    rows = np.flatnonzero(cross.any(axis=1) & good)
    if len(rows):
        jj = (tn - 2) - jb[rows]
        s0 = s[rows, jj]
        # a crossing has s0 >= level > s1, so its span s0 - s1 is never zero
        offs[rows] = t[jj] + (s0 - level) / (s0 - s[rows, jj + 1]) * step_px
    return EdgeSamples(offsets_px=offs, contrast=contrast, inside_bgr=inside, outside_bgr=outside)


def _solve_sym(M: list[list[float]], v: list[float]) -> list[float] | None:
    """``M x = v`` for a symmetric 2x2 or 3x3 ``M`` (nested lists of floats) by its adjugate (None when
    singular): a general LAPACK call, or numpy arithmetic on two or three numbers, costs more in overhead than
    this whole fit on a hundred outline samples."""
    if len(M) == 2:
        (a, b), (c, d) = M
        det = a * d - b * c
        if det == 0.0 or not math.isfinite(det):
            return None
        return [(d * v[0] - b * v[1]) / det, (a * v[1] - c * v[0]) / det]
    (a, b, c), (d, e, f), (g, h, i) = M
    adj = [[e * i - f * h, c * h - b * i, b * f - c * e],
           [f * g - d * i, a * i - c * g, c * d - a * f],
           [d * h - e * g, b * g - a * h, a * e - b * d]]
    det = a * adj[0][0] + b * adj[1][0] + c * adj[2][0]
    if det == 0.0 or not math.isfinite(det):
        return None
    return [(r0 * v[0] + r1 * v[1] + r2 * v[2]) / det for r0, r1, r2 in adj]


def _adjugate(M: np.ndarray) -> tuple[np.ndarray, float]:
    # on Python floats (the same IEEE doubles): numpy scalar arithmetic costs several times more per operation
    if M.shape[0] == 2:
        (a, b), (c, d) = M.tolist()
        return np.array([[d, -b], [-c, a]]), a * d - b * c
    (a, b, c), (d, e, f), (g, h, i) = M.tolist()
    adj = [[e * i - f * h, c * h - b * i, b * f - c * e],
           [f * g - d * i, a * i - c * g, c * d - a * f],
           [d * h - e * g, b * g - a * h, a * e - b * d]]
    return np.array(adj), a * adj[0][0] + b * adj[1][0] + c * adj[2][0]


#: Added to the normal matrix's diagonal (as a ridge of 1e-9 times the identity): a degenerate outline stays solvable.
_RIDGE = 1e-9


def solve_shift(jac: np.ndarray, offsets_px: np.ndarray, weights: np.ndarray, fit_bias: bool,
                bias_px: float = 0.0, huber_px: float = 0.7) -> tuple[np.ndarray, float, np.ndarray, float]:
    """Weighted robust least squares: ``offset_k = bias + jac_k . delta``.

    Returns ``(delta_mm, bias_px, cov_mm2, rms_px)``. The design matrix is held transposed (its columns as
    contiguous rows) and the 2x2 or 3x3 normal equations are solved on Python floats: a few numpy calls per
    reweighting, which is what a fit on a hundred samples costs.
    """
    ok = np.isfinite(offsets_px) & (weights > 0)
    n = int(np.count_nonzero(ok))
    if n < (4 if fit_bias else 3):
        return np.zeros(2), bias_px, np.full((2, 2), np.inf), float("nan")
    p = 3 if fit_bias else 2
    At = np.ones((p, n))  # the bias column all ones
    At[:2] = jac[ok].T
    y = offsets_px[ok] - (0.0 if fit_bias else bias_px)
    w0 = weights[ok]
    w = w0
    x: list[float] = []
    for it in range(3):
        if it and not (w != w_prev).any():
            break  # the weights did not change: neither would the solution (the usual case, no residual > huber)
        w_prev = w
        Aw = At * w
        M = (Aw @ At.T).tolist()
        for i in range(p):
            M[i][i] += _RIDGE
        x_new = _solve_sym(M, (Aw @ y).tolist())
        if x_new is None:
            return np.zeros(2), bias_px, np.full((2, 2), np.inf), float("nan")
        x = x_new
        r = y - np.dot(x, At)  # the residuals of the latest solution: the final one's when the loop ends
        a = np.abs(r)
        w = w0 * np.minimum(1.0, huber_px / np.maximum(a, 1e-9))
        w[a > 6 * huber_px] = 0.0
    n_used = int(np.count_nonzero(w))  # the weights are never negative
    dof = max(1, n_used - p)
    wrr = float(w @ (r * r))
    rms = math.sqrt(wrr / max(float(w.sum()), 1e-9) * n_used / dof)
    adj, det = _adjugate((At * w) @ At.T)
    if det == 0.0 or not math.isfinite(det):
        cov = np.full((2, 2), np.inf)
    else:
        cov = adj[:2, :2] / det * wrr / dof
    bias = float(x[2]) if fit_bias else bias_px
    return np.array(x[:2]), bias, cov, rms


def _inverse_batch(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverses of ``(S, 3, 3)`` symmetric matrices by their adjugate, and whether each is invertible (a
    singular one's inverse is NaN): closed forms on ``S``-long columns cost less than LAPACK's setup."""
    a, b, c = m[:, 0, 0], m[:, 0, 1], m[:, 0, 2]
    e, f, i = m[:, 1, 1], m[:, 1, 2], m[:, 2, 2]
    adj = np.empty_like(m)
    adj[:, 0, 0] = e * i - f * f
    adj[:, 0, 1] = adj[:, 1, 0] = c * f - b * i
    adj[:, 0, 2] = adj[:, 2, 0] = b * f - c * e
    adj[:, 1, 1] = a * i - c * c
    adj[:, 1, 2] = adj[:, 2, 1] = b * c - a * f
    adj[:, 2, 2] = a * e - b * b
    det = a * adj[:, 0, 0] + b * adj[:, 1, 0] + c * adj[:, 2, 0]
    ok = (det != 0.0) & np.isfinite(det)
    return adj / np.where(ok, det, np.nan)[:, None, None], ok


def solve_shifts(jac: np.ndarray, offsets_px: np.ndarray, weights: np.ndarray, starts: np.ndarray,
                 fit_bias: np.ndarray, bias_px: np.ndarray, huber_px: float = 0.7
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``solve_shift`` for many outlines at once: their samples stacked, outline ``s`` from ``starts[s]`` to
    the next start (each non-empty), ``fit_bias`` and ``bias_px`` per outline.

    Returns ``(delta_mm (S, 2), bias_px (S,), cov_mm2 (S, 2, 2), rms_px (S,))`` as ``solve_shift`` does one
    by one (to rounding): every outline's normal equations are sums over its segment (``np.add.reduceat``), so
    a frame's whole fit costs a few dozen numpy calls, not a few dozen per wink. An outline without a fitted
    bias is the same 3x3 system with its bias column zero and a unit diagonal there, so its bias solves to 0.
    """
    n_s, n = len(starts), len(offsets_px)
    seg = np.repeat(np.arange(n_s), np.diff(np.append(starts, n)))
    fit_bias = np.asarray(fit_bias, bool)
    bias_in = np.asarray(bias_px, float)
    ok = np.isfinite(offsets_px) & (weights > 0)
    n_ok = np.add.reduceat(ok.astype(float), starts)
    enough = n_ok >= np.where(fit_bias, 4, 3)
    # the design matrix (jacobian, bias column) and the observations, side by side
    a = np.empty((len(offsets_px), 4))
    a[:, :2] = jac
    a[:, 2] = fit_bias[seg]
    a[:, 3] = np.where(ok, offsets_px - np.where(fit_bias, 0.0, bias_in)[seg], 0.0)
    design, y = a[:, :3], a[:, 3]
    # the absent bias's unit diagonal, and the same with the ridge on every diagonal entry
    absent = np.zeros((n_s, 3, 3))
    absent[:, 2, 2] = np.where(fit_bias, 0.0, 1.0)
    ridged = absent + _RIDGE * np.eye(3)
    w0 = np.where(ok, weights, 0.0)
    # every sample's products of the design columns and observation, once: each reweighting then sums them
    prods = (a[:, :, None] * a[:, None, :]).reshape(n, 16)

    def normal(w: np.ndarray, diagonal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = np.add.reduceat(prods * w[:, None], starts, axis=0).reshape(n_s, 4, 4)
        return s[:, :3, :3] + diagonal, s[:, :3, 3]

    w = w0
    for it in range(3):
        if it and not (w != w_prev).any():
            break  # no weight changed anywhere: neither would any solution
        w_prev = w
        # with the ridge every system is positive definite: LAPACK's batched solve never meets a zero pivot
        m, v = normal(w, ridged)
        x = np.linalg.solve(m, v[:, :, None])[:, :, 0]
        r = y - np.einsum("ni,ni->n", design, x[seg])
        ar = np.abs(r)
        w = w0 * np.minimum(1.0, huber_px / np.maximum(ar, 1e-9))
        w[ar > 6 * huber_px] = 0.0
    n_used, wrr, w_sum = np.add.reduceat(np.column_stack([w > 0, w * r * r, w]), starts, axis=0).T
    dof = np.maximum(1.0, n_used - np.where(fit_bias, 3, 2))
    rms = np.sqrt(wrr / np.maximum(w_sum, 1e-9) * n_used / dof)
    inv, inv_ok = _inverse_batch(normal(w, absent)[0])
    cov = inv[:, :2, :2] * (wrr / dof)[:, None, None]
    fine = enough & np.isfinite(x).all(axis=1)
    cov[~(fine & inv_ok)] = np.inf
    delta = np.where(fine[:, None], x[:, :2], 0.0)
    bias = np.where(fine & fit_bias, x[:, 2], bias_in)
    rms = np.where(fine, rms, np.nan)
    return delta, bias, cov, rms
