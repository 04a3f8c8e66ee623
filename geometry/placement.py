"""Exact nearest feasible points on a convex polygon's boundary, away from discs and segment buffers.

Used for the TW 7(a) replacement spot: candidates lie on the field boundary offset inward, each other wink
forbids an open disc and each live baseline an open stadium (segment buffer). The feasible set along every
edge is an interval difference computed in closed form, so the answer is exact to float precision rather
than to a polygonised buffer's chord error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shapely.geometry import Polygon

# Two points closer than this are the same candidate (a vertex shared by two edges).
SAME_POINT_MM = 1e-6


@dataclass(frozen=True, slots=True)
class Disc:
    """Open disc ``|p - center| < radius`` that a candidate point must avoid."""

    center_mm: tuple[float, float]
    radius_mm: float


@dataclass(frozen=True, slots=True)
class Stadium:
    """Open buffer ``dist(p, segment) < radius`` of a segment that a candidate point must avoid."""

    start_mm: tuple[float, float]
    end_mm: tuple[float, float]
    radius_mm: float


@dataclass(frozen=True, slots=True)
class Candidate:
    """A local minimum of the distance to the target over the feasible part of the boundary."""

    point_mm: tuple[float, float]
    distance_mm: float


def _disc_interval(a: tuple[float, float], u: tuple[float, float], disc: Disc) -> tuple[float, float] | None:
    """Open parameter interval where ``a + t u`` (unit ``u``) lies inside ``disc``; None if it never does."""
    wx, wy = a[0] - disc.center_mm[0], a[1] - disc.center_mm[1]
    b = u[0] * wx + u[1] * wy
    c = wx * wx + wy * wy - disc.radius_mm**2
    disc_ = b * b - c
    if disc_ <= 0.0:
        return None
    s = math.sqrt(disc_)
    return (-b - s, -b + s)


Vec = tuple[float, float]


def _slab_interval(
    a: Vec, u: Vec, origin: Vec, normal: Vec, lo: float, hi: float
) -> tuple[float, float] | None:
    """Parameter interval where ``lo < normal . (a + t u - origin) < hi``."""
    p0 = normal[0] * (a[0] - origin[0]) + normal[1] * (a[1] - origin[1])
    du = normal[0] * u[0] + normal[1] * u[1]
    if abs(du) < 1e-15:
        return (-math.inf, math.inf) if lo < p0 < hi else None
    t1, t2 = (lo - p0) / du, (hi - p0) / du
    return (min(t1, t2), max(t1, t2))


def _stadium_interval(a: Vec, u: Vec, st: Stadium) -> tuple[float, float] | None:
    """Open interval of a line inside a stadium: a convex set, so the union of its three parts' intervals."""
    parts = [
        _disc_interval(a, u, Disc(st.start_mm, st.radius_mm)),
        _disc_interval(a, u, Disc(st.end_mm, st.radius_mm)),
    ]
    sx, sy = st.end_mm[0] - st.start_mm[0], st.end_mm[1] - st.start_mm[1]
    length = math.hypot(sx, sy)
    if length > 0:
        v = (sx / length, sy / length)
        n = (-v[1], v[0])
        along = _slab_interval(a, u, st.start_mm, v, 0.0, length)
        across = _slab_interval(a, u, st.start_mm, n, -st.radius_mm, st.radius_mm)
        if along is not None and across is not None:
            lo, hi = max(along[0], across[0]), min(along[1], across[1])
            parts.append((lo, hi) if lo < hi else None)
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return (min(p[0] for p in parts), max(p[1] for p in parts))


def _feasible_intervals(length: float, excluded: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Closed sub-intervals of [0, length] outside the union of open ``excluded`` intervals."""
    out: list[tuple[float, float]] = []
    start = 0.0
    for lo, hi in sorted(excluded):
        if hi <= start:
            continue
        if lo >= start:
            out.append((start, min(lo, length)))
        start = hi
        if start > length:
            return out
    out.append((start, length))
    return out


def nearest_feasible_boundary_points(
    polygon: Polygon,
    target_mm: tuple[float, float],
    discs: tuple[Disc, ...] = (),
    stadiums: tuple[Stadium, ...] = (),
) -> tuple[Candidate, ...]:
    """Local minima of the distance to ``target_mm`` over the feasible part of ``polygon``'s boundary.

    A point is feasible if it lies in no open disc and no open stadium (touching is allowed). The result is
    sorted nearest first; the first entry is the nearest feasible point, later ones are the alternatives an
    umpire would weigh when they are about as near. Empty when the whole boundary is excluded.

    >>> sq = Polygon([(0, 0), (10, 0), (10, 10), (0, 10)])
    >>> [c.point_mm for c in nearest_feasible_boundary_points(sq, (5, -1), discs=(Disc((5, 0), 2),))][:2]
    [(3.0, 0.0), (7.0, 0.0)]
    """
    coords = list(polygon.exterior.coords)[:-1]
    if polygon.exterior.is_ccw is False:
        coords.reverse()
    n = len(coords)
    tx, ty = target_mm
    edges = []
    for i in range(n):
        a, b = coords[i], coords[(i + 1) % n]
        length = math.dist(a, b)
        if length == 0.0:
            continue
        u = ((b[0] - a[0]) / length, (b[1] - a[1]) / length)
        excluded = [
            iv
            for iv in (
                *(_disc_interval(a, u, d) for d in discs),
                *(_stadium_interval(a, u, s) for s in stadiums),
            )
            if iv is not None
        ]
        edges.append((a, u, length, _feasible_intervals(length, excluded)))

    candidates: list[Candidate] = []
    m = len(edges)
    for k, (a, u, length, intervals) in enumerate(edges):
        t_proj = (tx - a[0]) * u[0] + (ty - a[1]) * u[1]
        for lo, hi in intervals:
            t = min(max(t_proj, lo), hi)
            p = (a[0] + t * u[0], a[1] + t * u[1])
            if t == hi and hi == length:
                # At the edge's end vertex: a local minimum only if the next edge, feasible from its start,
                # does not lead closer to the target.
                na, nu, _, nint = edges[(k + 1) % m]
                if nint and nint[0][0] == 0.0 and (nu[0] * (na[0] - tx) + nu[1] * (na[1] - ty)) < 0.0:
                    continue
            if t == lo and lo == 0.0:
                _, pu, plen, pint = edges[(k - 1) % m]
                # Previous edge feasible up to its end (this vertex) and moving back along it gets closer.
                if pint and pint[-1][1] == plen and (pu[0] * (a[0] - tx) + pu[1] * (a[1] - ty)) > 0.0:
                    continue
            candidates.append(Candidate((p[0], p[1]), math.dist(p, target_mm)))
    unique: list[Candidate] = []
    for c in sorted(candidates, key=lambda c: (c.distance_mm, c.point_mm)):
        if all(math.dist(c.point_mm, o.point_mm) > SAME_POINT_MM for o in unique):
            unique.append(c)
    return tuple(unique)
