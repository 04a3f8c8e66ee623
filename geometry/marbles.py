"""British ring marbles in the ring frame (RULES.md section 4): constants, close-packed group, predicates.

Ring frame: origin at the ring centre on the ring's top plane (z = 0), z up, millimetres. A ball's plan centre
is its contact point with the surface it rests on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geometry.constants import FOOT_MM, INCH_MM, MIN_EPS_MM

RING_DIAMETER_MM = 6 * FOOT_MM  # 1828.8 (MB 1)
RING_RADIUS_MM = RING_DIAMETER_MM / 2  # R = 914.4 (MB 1)
RING_HEIGHT_MM = 3 * INCH_MM  # 76.2, raised about 3 in (MB 1)
MARBLE_DIAMETER_MM = INCH_MM / 2  # 12.7 (MB 3)
TOLLEY_MAX_DIAMETER_MM = 0.75 * INCH_MM  # 19.05 (MB 4)
# Tolleys in use are 16-19 mm; a ball is called a tolley above the midpoint between a marble and the smallest
# tolley we expect (INTERP: 16 mm is the smallest glass tolley on sale).
TOLLEY_MIN_DIAMETER_MM = 16.0
MARBLE_TOLLEY_SPLIT_MM = (MARBLE_DIAMETER_MM + TOLLEY_MIN_DIAMETER_MM) / 2  # 14.35
LATTICE_SPACING_MM = MARBLE_DIAMETER_MM  # touching marbles (RULES.md 4.1)
GROUP_CENTROID_TOL_MM = 10.0  # close-packed group centred on the ring (RULES.md 4.1, INTERP)
CONTACT_TOL_MM = 1.0  # two marbles touch when their centres are within spacing + this (INTERP)

TEAM_MATCH_MARBLES = 49  # MB 9(e)
TEAM_WIN_POINTS = 25  # MB 9(g)
TIE_BREAK_MARBLES = 13  # MB 11(d)
TIE_BREAK_WIN_POINTS = 7  # MB 11(d)
INDIVIDUAL_MIN_MARBLES = 25  # MB 11(b)


def starting_marbles(players: int) -> int:
    """Marbles in an individual match of ``players`` players: max(4p + 1, 25) (MB 11(b)).

    >>> starting_marbles(3), starting_marbles(7), starting_marbles(9)
    (25, 29, 37)
    """
    if players < 2:
        raise ValueError(f"an individual match needs at least 2 players, got {players}")
    return max(4 * players + 1, INDIVIDUAL_MIN_MARBLES)


def individual_win_points(marbles: int) -> int:
    """Points that win an individual match: more than half the starting marbles (MB 11(c)).

    >>> individual_win_points(25), individual_win_points(29), individual_win_points(37)
    (13, 15, 19)
    """
    return marbles // 2 + 1


def close_packed_lattice(
    n: int, *, rotation_rad: float = 0.0, offset_mm=(0.0, 0.0), spacing_mm: float = LATTICE_SPACING_MM
) -> np.ndarray:
    """Plan centres (n, 2) of the ``n`` triangular-lattice points nearest the ring centre (MB 9(e), 11(b)).

    Shells at equal distance are cut in angle order, so a count between shell sizes is still deterministic.

    >>> pts = close_packed_lattice(7)
    >>> round(float(np.linalg.norm(pts, axis=1).max()), 1)
    12.7
    """
    if n < 0:
        raise ValueError(f"marble count must be >= 0, got {n}")
    k = math.ceil(math.sqrt(max(n, 1))) + 2
    ii, jj = np.meshgrid(np.arange(-k, k + 1), np.arange(-k, k + 1))
    pts = np.column_stack([(ii + 0.5 * jj).ravel(), (jj * math.sqrt(3) / 2).ravel()]) * spacing_mm
    c, s = math.cos(rotation_rad), math.sin(rotation_rad)
    pts = pts @ np.array([[c, s], [-s, c]]) + np.asarray(offset_mm, float)
    order = np.lexsort((np.arctan2(pts[:, 1], pts[:, 0]), np.round(np.linalg.norm(pts, axis=1), 6)))
    return pts[order[:n]]


def plan_radius_mm(center_mm) -> float:
    """Plan distance of a ball's contact point from the ring centre.

    >>> plan_radius_mm((300.0, 400.0))
    500.0
    """
    return float(math.hypot(float(center_mm[0]), float(center_mm[1])))


def ring_margin_mm(center_mm) -> float:
    """Signed distance inside the ring edge: positive on the ring, negative off it (MB P1).

    >>> round(ring_margin_mm((910.0, 0.0)), 1), round(ring_margin_mm((920.0, 0.0)), 1)
    (4.4, -5.6)
    """
    return RING_RADIUS_MM - plan_radius_mm(center_mm)


def is_on_ring(center_mm, eps_mm: float = MIN_EPS_MM) -> bool | None:
    """MB P1 with MB I-1: True on the ring, False knocked off, None when within ``eps_mm`` of the edge.

    >>> is_on_ring((910.0, 0.0)), is_on_ring((920.0, 0.0)), is_on_ring((914.5, 0.0))
    (True, False, None)
    """
    m = ring_margin_mm(center_mm)
    if abs(m) <= eps_mm:
        return None
    return m > 0


def drop_distance_mm(center_mm, line_p0_mm, line_p1_mm) -> float:
    """MB P3: perpendicular plan distance from a dropped tolley's centre to the scribed line.

    >>> drop_distance_mm((5.0, 9.0), (-100.0, 0.0), (100.0, 0.0))
    9.0
    """
    p = np.asarray(center_mm, float)[:2]
    a = np.asarray(line_p0_mm, float)[:2]
    b = np.asarray(line_p1_mm, float)[:2]
    u = b - a
    length = float(np.linalg.norm(u))
    if length <= 0:
        raise ValueError(f"scribed line needs two distinct points, got {a.tolist()} and {b.tolist()}")
    return float(abs(u[0] * (p[1] - a[1]) - u[1] * (p[0] - a[0])) / length)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupCheck:
    """The close-packed opening group measured against RULES.md 4.1."""

    count: int
    expected: int
    connected: bool
    min_contacts: int
    centroid_offset_mm: float

    @property
    def ok(self) -> bool:
        return (
            self.count == self.expected
            and self.connected
            and (self.count < 2 or self.min_contacts >= 2)
            and self.centroid_offset_mm <= GROUP_CENTROID_TOL_MM
        )


def check_close_packed(centers_mm, expected: int, *, contact_tol_mm: float = CONTACT_TOL_MM) -> GroupCheck:
    """Count, contact graph and centring of the marbles in the opening group (MB 9(e), 11(b)).

    >>> check_close_packed(close_packed_lattice(13), 13).ok
    True
    """
    pts = np.asarray(centers_mm, float).reshape(-1, 2)
    n = len(pts)
    if n == 0:
        return GroupCheck(count=0, expected=expected, connected=False, min_contacts=0, centroid_offset_mm=math.inf)
    d = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    touch = (d <= LATTICE_SPACING_MM + contact_tol_mm) & ~np.eye(n, dtype=bool)
    seen = {0}
    stack = [0]
    while stack:
        i = stack.pop()
        for j in np.flatnonzero(touch[i]):
            if int(j) not in seen:
                seen.add(int(j))
                stack.append(int(j))
    return GroupCheck(
        count=n,
        expected=expected,
        connected=len(seen) == n,
        min_contacts=int(touch.sum(1).min()),
        centroid_offset_mm=float(np.linalg.norm(pts.mean(0))),
    )
