"""The hex lattice from the gaps between tiles, when the board's outline cannot give it (RULES.md 2.3 frames).

On a table as dark as the tiles the silhouette is only known roughly (``vision.tantrix_tiles.band_hull``) and its
outline has no straight edges to rectify from. The tiles still meet along thin gaps and a 5 mm side, a honeycomb
of lines periodic on the lattice of tile centres: the lightness inside the board, high-passed and with the link
bands masked out, has its strongest Fourier components at that lattice's reciprocal vectors. Two of them 60
degrees apart fix the image -> U affine map (the local plane; the re-fit to the tiles read adds the perspective),
their phases the origin up to the gaps' sign and the three cosets of centres and vertices: every
candidate is returned and the reader keeps the one that reads most faces.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

SQ3 = math.sqrt(3.0)
# Two reciprocal vectors 60 degrees apart (cycles per U unit), for the two strongest shells of the gaps' spectrum:
# every hexagon edge lies on a line at a multiple of half the centre pitch (sqrt(3)/2 circumradii) along an edge
# normal (length 2/sqrt(3)), and rows of tiles lie 1.5 circumradii apart (length 2/3, 30 degrees off the normals).
# Which one a peak is depends on the gaps' width and the blur; both are tried.
_B_EDGES = np.column_stack([[2.0 / SQ3, 0.0], [1.0 / SQ3, 1.0]])
_B_ROWS = np.column_stack([[1.0 / SQ3, 1.0 / 3.0], [1.0 / SQ3, -1.0 / 3.0]])
_A1, _A2 = np.array([SQ3, 0.0]), np.array([SQ3 / 2.0, -1.5])
# (basis, origin offsets its phases cannot tell apart): edge lines (centres and the two vertex kinds), rows, and
# the rows' second harmonic (half the centre lattice)
_READINGS = ((_B_EDGES, [np.zeros(2), np.array([0.0, 1.0]), np.array([0.0, 2.0])]),
             (_B_ROWS, [np.zeros(2)]),
             (2.0 * _B_ROWS, [np.zeros(2), _A1 / 2.0, _A2 / 2.0, (_A1 + _A2) / 2.0]))
# A tile's side is 6-9 band reaches (5-6 mm bands on 26.6 mm sides; a reach is a half-width plus a pixel):
# lines of edges sqrt(3)/2 sides apart lie this many reaches apart.
LINE_SPACING_REACHES = (4.0, 14.0)
# Directions of the second component searched this far either side of 60 degrees from the first (a tilted view
# shears the lattice).
SHEAR_TOL_DEG = 20.0
# A phone over a table (tilt <= ~45 degrees) foreshortens the lattice by less than this ratio of its two axes.
MAX_ANISOTROPY = 2.0
# A triple's three lengths differ by less than this ratio: a view tilted 45 degrees foreshortens directions 60
# degrees apart by up to 1.26 (the next shells of the spectrum differ by 1.15-1.32, so the third, the difference
# of the other two, must agree as well).
MAX_TRIPLE_RATIO = 1.3
# The gaps' difference of Gaussians (px): a gap is a line a few pixels wide.
GAP_DOG_SIGMAS_PX = (1.0, 3.0)
# Local maxima of the spectrum considered for the lattice's triple.
MAX_PEAKS = 12


def _dft(sig: np.ndarray, q: np.ndarray, at: np.ndarray = np.zeros(2)) -> complex:
    """Fourier coefficient of ``sig`` (rows, cols) at frequency ``q`` = (cycles/px along x, along y), its phase
    taken at the pixel ``at`` (x, y)."""
    rows, cols = sig.shape
    ex = np.exp(-2j * np.pi * q[0] * (np.arange(cols) - at[0]))
    ey = np.exp(-2j * np.pi * q[1] * (np.arange(rows) - at[1]))
    return complex(ey @ sig @ ex)


def gap_lattice_candidates(L: np.ndarray, region: np.ndarray, bands: np.ndarray, reach_px: int
                           ) -> list[np.ndarray]:
    """Image -> U maps (3x3, affine) putting hex centres on the tiles, from the gaps inside ``region`` (bool).

    Empty when no lattice-like pair of components stands out.
    """
    ys, xs = np.nonzero(region)
    if len(xs) < 100 or reach_px <= 0:
        return []
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    crop_l = L[y0:y1, x0:x1].astype(np.float32)
    # the gaps are lines a few pixels wide: a difference of Gaussians keeps them and drops the table's mottling
    hp = cv2.GaussianBlur(crop_l, (0, 0), GAP_DOG_SIGMAS_PX[0]) - cv2.GaussianBlur(crop_l, (0, 0), GAP_DOG_SIGMAS_PX[1])
    # the bands' own edges are masked out, as far as the difference of Gaussians spreads them (2 outer sigmas):
    # wider, and the gaps, which every band end crosses at an edge midpoint, are masked out with them
    k = 2 * (reach_px + int(math.ceil(2 * GAP_DOG_SIGMAS_PX[1]))) + 1
    keep = region[y0:y1, x0:x1] & ~(cv2.dilate(bands[y0:y1, x0:x1].astype(np.uint8),
                                               cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))) > 0)
    window = cv2.GaussianBlur(keep.astype(np.float32), (0, 0), float(reach_px))
    hp = np.clip(hp, -15.0, 15.0)  # a glare streak or a shadow edge must not dominate the spectrum
    sig = hp * window
    sig -= window * float(np.sum(sig) / max(float(np.sum(window)), 1e-6))
    wr, wc = np.nonzero(window > 0.5 * float(window.max())) if window.max() > 0 else (np.zeros(1), np.zeros(1))
    mid = np.array([wc.mean(), wr.mean()])  # where the gaps are seen (crop px)
    rows, cols = sig.shape
    n = int(2 ** math.ceil(math.log2(2 * max(rows, cols))))
    spec = np.abs(np.fft.fft2(sig, s=(n, n))) ** 2
    fy, fx = np.meshgrid(np.fft.fftfreq(n), np.fft.fftfreq(n), indexing="ij")
    f = np.hypot(fx, fy)
    lo, hi = 1.0 / (LINE_SPACING_REACHES[1] * reach_px), 1.0 / (LINE_SPACING_REACHES[0] * reach_px)
    band = (f >= lo) & (f <= hi) & ((fy > 0) | ((fy == 0) & (fx > 0)))  # one half-plane
    if not band.any():
        return []
    # the lattice's components come in threes, 60 degrees apart and of one length (up to the view's
    # foreshortening), the third the difference of the other two: the strongest such triple of local maxima
    masked = np.where(band, spec, 0.0).astype(np.float32)
    peaks = np.argwhere((masked > 0) & (masked >= cv2.dilate(masked, np.ones((5, 5), np.uint8))))
    peaks = peaks[np.argsort(-masked[peaks[:, 0], peaks[:, 1]])][:MAX_PEAKS]
    qs = [_refine_peak(spec, (int(r), int(c)), n) for r, c in peaks]
    qs += [-q for q in qs]
    best = None
    for i, qi in enumerate(qs[:len(peaks)]):
        for qj in qs:
            turn = math.degrees(math.atan2(qi[0] * qj[1] - qi[1] * qj[0], float(qi @ qj)))
            lengths = np.hypot(*np.array([qi, qj, qj - qi]).T)
            if abs(abs(turn) - 60.0) > SHEAR_TOL_DEG or lengths.max() > MAX_TRIPLE_RATIO * lengths.min():
                continue
            score = sum(_power(spec, q, n) for q in (qi, qj, qj - qi))
            if best is None or score > best[0]:
                best = (score, qi, qj)
    if best is None:
        return []
    _, q1, q2 = best
    Q = np.column_stack([q1, q2])
    out = []
    for basis, offsets in _READINGS:
        for Qa in (Q, Q[:, ::-1]):
            A = (Qa @ np.linalg.inv(basis)).T  # image cycles = A^T (U cycles)
            sv = np.linalg.svd(A, compute_uv=False)
            if np.linalg.det(A) >= 0 or sv[0] > MAX_ANISOTROPY * sv[1]:
                continue  # image y down, U y up: the map must flip; and a phone over a table foreshortens little
            # phases taken at the board's middle: a frequency a little off (the spectrum's finite resolution, a
            # tilt's perspective) then misplaces the centres least where the tiles are, not across the crop
            phases = np.array([math.atan2(c.imag, c.real) / (2 * np.pi)
                               for c in (_dft(sig, Qa[:, 0], mid), _dft(sig, Qa[:, 1], mid))])
            # the pattern is symmetric about each hex centre, so both coefficients are real there: the phases fix
            # the centre up to the gaps' sign (darker or lighter than the tops: half a period on both) and the
            # offsets these components cannot tell apart
            for shift in (0.0, 0.5):
                t_mid = np.linalg.solve(basis.T, phases + shift)  # b . (A (x - mid) + t) = phase for both b
                for off in offsets:
                    M = np.eye(3)
                    M[:2, :2] = A
                    M[:2, 2] = t_mid - A @ (mid + np.array([x0, y0], float)) + off
                    out.append(M)
    return out


def midpoint_band_share(M: np.ndarray, region: np.ndarray, bands: np.ndarray) -> float:
    """Share of the edge midpoints of the lattice's hexes inside ``region`` that fall on a link band: every edge
    of a tile carries a link end at its midpoint, so the true lattice scores near 1, a shifted or finer one less."""
    Minv = np.linalg.inv(M)
    h, w = region.shape
    corners = np.array([[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]], float)
    cu = _apply(M, corners)
    qr = cu @ np.linalg.inv(np.column_stack([[SQ3, 0.0], [SQ3 / 2.0, -1.5]])).T
    (qlo, rlo), (qhi, rhi) = np.floor(qr.min(axis=0)).astype(int), np.ceil(qr.max(axis=0)).astype(int)
    if (qhi - qlo + 1) * (rhi - rlo + 1) > 200_000:
        return 0.0
    qq, rr = np.meshgrid(np.arange(qlo, qhi + 1), np.arange(rlo, rhi + 1))
    cen = np.column_stack([SQ3 * (qq.ravel() + rr.ravel() / 2.0), -1.5 * rr.ravel()])
    px = np.rint(_apply(Minv, cen)).astype(int)
    ok = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    ok[ok] = region[px[ok, 1], px[ok, 0]]
    if ok.sum() < 3:
        return 0.0
    mids = (cen[ok][:, None, :] + (SQ3 / 2.0) * np.array([[math.cos(math.radians(60 * k)),
                                                             math.sin(math.radians(60 * k))] for k in range(6)])[None]
            ).reshape(-1, 2)
    mp = np.rint(_apply(Minv, mids)).astype(int)
    inside = (mp[:, 0] >= 0) & (mp[:, 0] < w) & (mp[:, 1] >= 0) & (mp[:, 1] < h)
    on = np.zeros(len(mp), bool)
    on[inside] = bands[mp[inside, 1], mp[inside, 0]]
    return float(on.mean())


def _apply(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    q = np.column_stack([pts, np.ones(len(pts))]) @ H.T
    return q[:, :2] / q[:, 2:3]


def _power(spec: np.ndarray, q: np.ndarray, n: int) -> float:
    """Spectral power at the bin nearest frequency ``q`` (cycles/px, x then y)."""
    return float(spec[int(round(q[1] * n)) % n, int(round(q[0] * n)) % n])


def _refine_peak(spec: np.ndarray, idx: tuple[int, int], n: int) -> np.ndarray:
    """Peak frequency (cycles/px, x then y) refined by a parabola through the log power in each axis."""
    r, c = idx
    lg = np.log(spec + 1e-12)

    def off(a, b, cc):
        den = a - 2 * b + cc
        return 0.0 if abs(den) < 1e-12 else float(np.clip(0.5 * (a - cc) / den, -0.5, 0.5))

    dr = off(lg[(r - 1) % n, c], lg[r, c], lg[(r + 1) % n, c])
    dc = off(lg[r, (c - 1) % n], lg[r, c], lg[r, (c + 1) % n])
    fy = ((r + dr + n / 2) % n - n / 2) / n
    fx = ((c + dc + n / 2) % n - n / 2) / n
    return np.array([fx, fy])


# A tile's links leave each edge midpoint square to the edge: sampled this far from the centre towards each
# midpoint (in apothems), a tile shows a band on (nearly) every edge, while an empty hex shows table there even
# beside six tiles (their bands end at the shared edge, more than a band's half-width away).
LINK_END_DEPTH = 0.7
# ... and a hex holds a tile when at least this many of its six edges show one (a glare may wash one).
MIN_LINK_ENDS = 5


def link_end_counts(Minv: np.ndarray, hexes: list[tuple[int, int]], bands: np.ndarray, reach_px: int
                    ) -> np.ndarray:
    """For each hex (q, r), how many of its six edges show a link band just inside the midpoint.

    The bands are grown by half a reach: a lattice fitted to the whole board sits a few pixels off single tiles,
    and a neighbour's band end still stays out of reach (0.3 apothems is about 2.5 reaches).
    """
    if not hexes:
        return np.zeros(0, int)
    k = max(1, reach_px) | 1
    bands = cv2.dilate(bands.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))) > 0
    h, w = bands.shape
    q = np.array([hx[0] for hx in hexes], float)
    r = np.array([hx[1] for hx in hexes], float)
    cen = np.column_stack([SQ3 * (q + r / 2.0), -1.5 * r])
    dirs = np.array([[math.cos(math.radians(60 * k)), math.sin(math.radians(60 * k))] for k in range(6)])
    pts = (cen[:, None, :] + LINK_END_DEPTH * (SQ3 / 2.0) * dirs[None]).reshape(-1, 2)
    px = np.rint(_apply(Minv, pts)).astype(int)
    ok = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    on = np.zeros(len(px), bool)
    on[ok] = bands[px[ok, 1], px[ok, 0]]
    return on.reshape(-1, 6).sum(axis=1)
