"""Tiddlywinks shapes (mat, field of play, baselines, pot, wink footprints) and states (RULES.md 1.2-1.3).

Every function is pure and works in table millimetres. Predicates answer the rule exactly as written (a
tangent wink is in, TW I-2); deciding under measurement uncertainty is the adjudicator's job, so the
measurements behind each predicate (penetration, gaps, distances) are exposed as numbers too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import shapely
from shapely import affinity
from shapely.geometry import LineString, Point, Polygon

from geometry.constants import (
    BASELINE_DISTANCE_MM,
    MAT_HALF_LENGTH_MM,
    MAT_HALF_WIDTH_MM,
    POT_BASE_RADIUS_MM,
    POT_TOP_RADIUS_MM,
    WINK_THICKNESS_MM,
    WINKS_PER_COLOR,
)
from geometry.types import Color, TiddlywinksScene, Wink

# Quadrant segments for disc polygons: 64 per quarter keeps the chord error of an 11 mm disc under 1 um.
_QUAD_SEGS = 64
# Plan overlap below this is polygon round-off of tangent discs, not a squop.
OVERLAP_NOISE_MM2 = 1e-6

_SQRT5 = math.sqrt(5.0)


def corner_normal(sign: tuple[int, int]) -> np.ndarray:
    """Unit diagonal direction of the corner with signs ``(sx, sy)``: the outward normal of its baseline."""
    sx, sy = sign
    return np.array([2.0 * sx, 1.0 * sy]) / _SQRT5


@cache
def field_half_planes() -> tuple[tuple[tuple[float, float], float], ...]:
    """The field of play F as half-planes ``n . p <= limit`` (RULES.md 1.2), outward unit normals."""
    planes: list[tuple[tuple[float, float], float]] = [
        ((1.0, 0.0), MAT_HALF_LENGTH_MM),
        ((-1.0, 0.0), MAT_HALF_LENGTH_MM),
        ((0.0, 1.0), MAT_HALF_WIDTH_MM),
        ((0.0, -1.0), MAT_HALF_WIDTH_MM),
    ]
    for sx in (1, -1):
        for sy in (1, -1):
            n = corner_normal((sx, sy))
            planes.append(((float(n[0]), float(n[1])), BASELINE_DISTANCE_MM))
    return tuple(planes)


@cache
def mat_polygon() -> Polygon:
    """The 1828.8 x 914.4 mm mat (TW 3)."""
    return shapely.box(-MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM, MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM)


@cache
def field_polygon(inset_mm: float = 0.0) -> Polygon:
    """The field of play F (a convex octagon), optionally offset inward by ``inset_mm`` (TW 7(a)).

    >>> round(field_polygon().area)
    1614010
    """
    L = MAT_HALF_LENGTH_MM - inset_mm
    W = MAT_HALF_WIDTH_MM - inset_mm
    b = (BASELINE_DISTANCE_MM - inset_mm) * _SQRT5  # 2|x| + |y| <= b
    pts = [(L, -(b - 2 * L)), (L, b - 2 * L), ((b - W) / 2, W), (-(b - W) / 2, W),
           (-L, b - 2 * L), (-L, -(b - 2 * L)), (-(b - W) / 2, -W), ((b - W) / 2, -W)]
    return Polygon(pts)


@cache
def corner_triangle(sign: tuple[int, int]) -> Polygon:
    """The part of the mat beyond the baseline of corner ``sign`` (not field of play)."""
    sx, sy = sign
    b = BASELINE_DISTANCE_MM * _SQRT5
    return Polygon([
        (sx * MAT_HALF_LENGTH_MM, sy * MAT_HALF_WIDTH_MM),
        (sx * MAT_HALF_LENGTH_MM, sy * (b - 2 * MAT_HALF_LENGTH_MM)),
        (sx * (b - MAT_HALF_WIDTH_MM) / 2, sy * MAT_HALF_WIDTH_MM),
    ])


@cache
def baseline_segment(sign: tuple[int, int]) -> LineString:
    """The drawn baseline of corner ``sign``: from the short edge to the long edge (269.826 mm)."""
    sx, sy = sign
    b = BASELINE_DISTANCE_MM * _SQRT5
    return LineString([(sx * MAT_HALF_LENGTH_MM, sy * (b - 2 * MAT_HALF_LENGTH_MM)),
                       (sx * (b - MAT_HALF_WIDTH_MM) / 2, sy * MAT_HALF_WIDTH_MM)])


def pot_base_disc(pot_center_mm: tuple[float, float] = (0.0, 0.0)) -> Polygon:
    return Point(pot_center_mm).buffer(POT_BASE_RADIUS_MM, quad_segs=_QUAD_SEGS)


# --- wink footprints -------------------------------------------------------------------------------------

def ellipse_axes_mm(wink: Wink) -> tuple[float, float]:
    """Plan semi-axes (along the tilt direction, across it): a tilted disc foreshortens along its slope."""
    r = wink.radius_mm
    return r * math.cos(math.radians(wink.tilt_deg)), r


def support_mm(wink: Wink, direction: np.ndarray) -> float:
    """max over the footprint of ``direction . (p - c)``: the reach of the footprint along a unit vector."""
    a, b = ellipse_axes_mm(wink)
    if a == b:
        return b
    t = math.radians(wink.tilt_azimuth_deg)
    u = np.array([math.cos(t), math.sin(t)])
    v = np.array([-u[1], u[0]])
    return float(math.hypot(a * float(direction @ u), b * float(direction @ v)))


def footprint(wink: Wink) -> Polygon:
    """The wink's plan projection: a disc, or an ellipse when tilted."""
    disc = Point(0.0, 0.0).buffer(wink.radius_mm, quad_segs=_QUAD_SEGS)
    a, b = ellipse_axes_mm(wink)
    if a != b:
        disc = affinity.scale(disc, xfact=a / b, yfact=1.0, origin=(0, 0))
        disc = affinity.rotate(disc, wink.tilt_azimuth_deg, origin=(0, 0))
    return affinity.translate(disc, *wink.center_mm)


def midplane_height_mm(wink: Wink, point_mm: tuple[float, float]) -> float:
    """Height of the wink's mid-plane above the mat at a plan point (a tilted wink rises along its azimuth)."""
    t = math.radians(wink.tilt_azimuth_deg)
    dx = point_mm[0] - wink.center_mm[0]
    dy = point_mm[1] - wink.center_mm[1]
    return wink.z_mm + math.tan(math.radians(wink.tilt_deg)) * (dx * math.cos(t) + dy * math.sin(t))


# --- a wink resting on another --------------------------------------------------------------------------

#: The steepest rest considered (a wink on a tall pile); beyond it no support holds a wink's edge on the mat.
MAX_REST_TILT_RAD = math.radians(60.0)


def resting_mid_height_mm(radius_mm: float, tilt_rad: float) -> float:
    """Height of the mid-plane centre of a disc tilted ``tilt_rad`` whose low bottom edge touches the mat.

    That edge is the bottom face's rim, half a thickness under the mid-plane along the tilted normal: the
    mid-plane rim there stands ``h cos t`` above the mat, not ``h / cos t``."""
    return radius_mm * math.sin(tilt_rad) + WINK_THICKNESS_MM / 2 * math.cos(tilt_rad)


def resting_tilt_rad(radius_mm: float, along_mm, height_mm):
    """The tilt at which a disc, its low bottom edge on the mat, rests its underside on a support point
    ``height_mm`` above the mat and ``along_mm`` from its plan centre towards the side it rises to (arrays:
    one tilt per point).

    The underside is the plane through the mat contact, which lies ``r cos t - h sin t`` behind the plan centre
    (the bottom rim, half a thickness ``h`` below the mid-plane rim): it stands ``tan t (r cos t - h sin t + s)``
    high at ``s``. The smallest tilt that clears the support: that height rises with the tilt (bisection)."""
    h = WINK_THICKNESS_MM / 2
    s = np.asarray(along_mm, float)
    z = np.asarray(height_mm, float)

    def under(t: np.ndarray) -> np.ndarray:
        return np.tan(t) * (radius_mm * np.cos(t) - h * np.sin(t) + s)

    lo = np.zeros(np.broadcast(s, z).shape)
    hi = np.full(lo.shape, MAX_REST_TILT_RAD)
    for _ in range(32):
        mid = 0.5 * (lo + hi)
        low = under(mid) < z
        lo = np.where(low, mid, lo)
        hi = np.where(low, hi, mid)
    t = np.where(z <= 0.0, 0.0, hi)
    return float(t) if t.ndim == 0 else t


def face_points_mm(center_mm, radius_mm: float, z_mm: float, tilt_deg: float, azimuth_deg: float,
                   n_ring: int = 48) -> np.ndarray:
    """Points (N, 3) on a wink's top face: its centre, two inner rings and its rim. The face is the mid-plane
    disc moved half a thickness along the tilted normal, so a tilted wink's top lies a little back in plan."""
    t, a = math.radians(tilt_deg), math.radians(azimuth_deg)
    ea = np.array([math.cos(a), math.sin(a), 0.0])
    normal = np.array([-math.sin(t) * ea[0], -math.sin(t) * ea[1], math.cos(t)])
    up = np.array([math.cos(t) * ea[0], math.cos(t) * ea[1], math.sin(t)])  # up the slope
    across = np.cross(normal, up)
    top = np.array([center_mm[0], center_mm[1], z_mm]) + WINK_THICKNESS_MM / 2 * normal
    phi = np.linspace(0.0, 2 * math.pi, n_ring, endpoint=False)
    ring = np.cos(phi)[:, None] * up + np.sin(phi)[:, None] * across
    return np.vstack([top[None, :], *(top + f * radius_mm * ring for f in (0.35, 0.7, 1.0))])


def resting_tilt_over_rad(center_mm, radius_mm: float, toward: np.ndarray, face_mm: np.ndarray) -> float:
    """The tilt of a disc at plan ``center_mm`` rising along the unit vector ``toward`` whose underside rests on
    the highest of the support points ``face_mm`` (N, 3) under its footprint (0 if none lies under it).

    The footprint shortens along the slope (r cos t) as the tilt grows: a point holds the disc up to its own
    resting tilt, or to the tilt at which the footprint's edge leaves it (the rim then rests on it)."""
    g = np.asarray(face_mm, float)[:, :2] - np.asarray(center_mm, float)
    s = g @ toward
    across = g @ np.array([-toward[1], toward[0]])
    half_chord = radius_mm * np.sqrt(np.maximum(1.0 - (across / radius_mm) ** 2, 0.0))  # footprint's reach at t = 0
    under = np.abs(s) < half_chord
    if not under.any():
        return 0.0
    t = np.atleast_1d(resting_tilt_rad(radius_mm, s[under], face_mm[under, 2]))
    leaves = np.arccos(np.clip(np.abs(s[under]) / half_chord[under], 0.0, 1.0))
    return float(np.minimum(t, leaves).max())


# --- measurements and predicates on single winks --------------------------------------------------------

def edge_distance_to_pot_mm(wink: Wink, pot_center_mm: tuple[float, float] = (0.0, 0.0)) -> float:
    """TW P1: plan distance from the pot axis to the wink's nearest edge (negative if it covers the axis).

    >>> edge_distance_to_pot_mm(Wink(wink_id="b", color="blue", size="large", center_mm=(60, 0)))
    49.0
    """
    d = math.dist(wink.center_mm, pot_center_mm)
    if wink.tilt_deg == 0.0:
        return d - wink.radius_mm
    fp = footprint(wink)
    p = Point(pot_center_mm)
    return fp.exterior.distance(p) * (-1.0 if fp.contains(p) else 1.0)


def out_of_bounds_penetration_mm(wink: Wink) -> float:
    """TW P2: how far the footprint reaches beyond the field of play (> 0 means out; tangent is 0).

    >>> round(out_of_bounds_penetration_mm(Wink(wink_id="w", color="red", size="large", center_mm=(905, 0))), 3)
    1.6
    """
    c = np.asarray(wink.center_mm)
    return max(float(np.asarray(n) @ c) + support_mm(wink, np.asarray(n)) - limit
               for n, limit in field_half_planes())


def is_out_of_bounds(wink: Wink) -> bool:
    return out_of_bounds_penetration_mm(wink) > 0.0


def baseline_margin_mm(wink: Wink, sign: tuple[int, int]) -> float:
    """Signed distance of the footprint's nearest point beyond the baseline of corner ``sign``.

    >= 0: wholly behind that baseline (TW P3); the opposite reach gives TW P4.
    """
    n = corner_normal(sign)
    return float(n @ np.asarray(wink.center_mm)) - support_mm(wink, n) - BASELINE_DISTANCE_MM


def is_behind_baseline(wink: Wink, sign: tuple[int, int]) -> bool:
    """TW P3: footprint wholly in the corner triangle of ``sign`` (on the mat), or off the mat in hand."""
    if wink.off_mat and wink.unplayed:
        return True
    if baseline_margin_mm(wink, sign) < 0.0:
        return False
    c = np.asarray(wink.center_mm)
    sx, sy = sign
    return (sx * c[0] + support_mm(wink, np.array([sx, 0.0])) <= MAT_HALF_LENGTH_MM
            and sy * c[1] + support_mm(wink, np.array([0.0, sy])) <= MAT_HALF_WIDTH_MM)


def over_baseline_margin_mm(wink: Wink, sign: tuple[int, int]) -> float:
    """TW P4 measurement: how far the footprint's farthest point stays on the field side of the baseline."""
    n = corner_normal(sign)
    return BASELINE_DISTANCE_MM - (float(n @ np.asarray(wink.center_mm)) + support_mm(wink, n))


def is_completely_over_baseline(wink: Wink, sign: tuple[int, int]) -> bool:
    """TW P4: the whole footprint is on the field side of the baseline it was played from."""
    return over_baseline_margin_mm(wink, sign) >= 0.0


def pot_base_clearance_mm(wink: Wink, pot_center_mm: tuple[float, float] = (0.0, 0.0)) -> float:
    """TW P8 measurement: |c| - (19 + r); negative means the footprint meets the pot base disc."""
    return math.dist(wink.center_mm, pot_center_mm) - (POT_BASE_RADIUS_MM + wink.radius_mm)


def is_under_pot_base(wink: Wink, pot_center_mm: tuple[float, float] = (0.0, 0.0)) -> bool:
    """TW P8: an unpotted wink whose footprint meets the pot's base disc."""
    return not wink.potted and pot_base_clearance_mm(wink, pot_center_mm) < 0.0


# --- pairs ------------------------------------------------------------------------------------------------

def gap_mm(a: Wink, b: Wink) -> float:
    """TW P10: edge-to-edge plan distance; negative when flat footprints overlap.

    >>> gap_mm(Wink(wink_id="a", color="red", size="large", center_mm=(0, 0)),
    ...        Wink(wink_id="b", color="blue", size="small", center_mm=(30, 0)))
    11.0
    """
    if a.tilt_deg == 0.0 and b.tilt_deg == 0.0:
        return math.dist(a.center_mm, b.center_mm) - a.radius_mm - b.radius_mm
    fa, fb = footprint(a), footprint(b)
    if fa.intersects(fb):
        return -math.sqrt(fa.intersection(fb).area)
    return fa.distance(fb)


def overlap_area_mm2(a: Wink, b: Wink) -> float:
    """Plan overlap area of two footprints (symmetric)."""
    flat = a.tilt_deg == 0.0 and b.tilt_deg == 0.0
    if flat and math.dist(a.center_mm, b.center_mm) >= a.radius_mm + b.radius_mm:
        return 0.0
    return footprint(a).intersection(footprint(b)).area


@dataclass(frozen=True, slots=True)
class SquopRelation:
    """``upper_id`` lies over part of ``lower_id`` (TW P6); ``overlap_mm2`` is their plan overlap."""

    upper_id: str
    lower_id: str
    overlap_mm2: float
    height_difference_mm: float | None


def _vertical_order(a: Wink, b: Wink, overlap: Polygon) -> tuple[Wink, Wink, float | None]:
    """Which of two overlapping winks is higher where they overlap: explicit ``above`` first, then heights."""
    if a.above is not None and b.wink_id in a.above:
        return a, b, None
    if b.above is not None and a.wink_id in b.above:
        return b, a, None
    p = overlap.representative_point()
    ha = midplane_height_mm(a, (p.x, p.y))
    hb = midplane_height_mm(b, (p.x, p.y))
    return (a, b, ha - hb) if ha >= hb else (b, a, hb - ha)


def squop_relations(scene: TiddlywinksScene) -> tuple[SquopRelation, ...]:
    """All squop relations among unpotted winks on the mat (TW P6): plan overlap and a vertical order.

    Where a wink declares ``above`` (from the camera's occlusion reasoning or the umpire), that list is
    authoritative for its pairs, including a pair with the pot-supported hovering wink of TW-T7.
    """
    live = [w for w in scene.winks if w.on_field_candidate and not w.unplayed]
    if len(live) < 2:
        return ()
    polys = {w.wink_id: footprint(w) for w in live}
    tree = shapely.STRtree([polys[w.wink_id] for w in live])
    out: list[SquopRelation] = []
    for i, j in zip(*tree.query([polys[w.wink_id] for w in live], predicate="intersects")):
        if i >= j:
            continue
        a, b = live[i], live[j]
        overlap = polys[a.wink_id].intersection(polys[b.wink_id])
        if overlap.area <= OVERLAP_NOISE_MM2:
            continue
        declared = ((a.above is not None and b.wink_id in a.above)
                    or (b.above is not None and a.wink_id in b.above))
        explicit_none = (a.above is not None and b.above is not None and not declared)
        if explicit_none:
            # Both winks' supports are known and neither lies on the other: touching only in plan round-off.
            continue
        upper, lower, dz = _vertical_order(a, b, overlap)
        out.append(SquopRelation(upper.wink_id, lower.wink_id, float(overlap.area), dz))
    out.sort(key=lambda r: (r.upper_id, r.lower_id))
    return tuple(out)


def piles(relations: tuple[SquopRelation, ...]) -> tuple[frozenset[str], ...]:
    """TW P7: connected components of the squop graph (only components with two or more winks)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in relations:
        parent[find(r.upper_id)] = find(r.lower_id)
    groups: dict[str, set[str]] = {}
    for x in list(parent):
        groups.setdefault(find(x), set()).add(x)
    return tuple(sorted((frozenset(g) for g in groups.values()), key=lambda g: sorted(g)))


def nearest_to_pot(winks: list[Wink] | tuple[Wink, ...],
                   pot_center_mm: tuple[float, float] = (0.0, 0.0)) -> list[tuple[Wink, float]]:
    """Winks with their TW P1 key, nearest first; ties keep id order so input order never matters."""
    keyed = [(w, edge_distance_to_pot_mm(w, pot_center_mm)) for w in winks]
    return sorted(keyed, key=lambda t: (t[1], t[0].wink_id))


def corner_sign_of(scene: TiddlywinksScene, color: Color) -> tuple[int, int]:
    return scene.corner_signs[Color(color)]


# --- game-state helpers -----------------------------------------------------------------------------------

# A leaning wink whose nearest edge is within this of the pot's top-rim circle rests against the pot (TW P9).
POT_CONTACT_TOLERANCE_MM = 1.0


def is_in_play(wink: Wink) -> bool:
    """On the mat and already played: not potted, not off the mat, not unplayed behind a baseline."""
    return not (wink.potted or wink.off_mat or wink.unplayed)


def squopped_ids(relations: tuple[SquopRelation, ...]) -> frozenset[str]:
    """Ids of winks with some wink over them (TW P6)."""
    return frozenset(r.lower_id for r in relations)


def squopping_ids(relations: tuple[SquopRelation, ...]) -> frozenset[str]:
    """Ids of winks lying over some wink (TW P6)."""
    return frozenset(r.upper_id for r in relations)


def is_potted_out(scene: TiddlywinksScene, color: Color) -> bool:
    """TW P11: all six winks of ``color`` are potted (by anyone)."""
    winks = scene.winks_of(color)
    return len(winks) >= WINKS_PER_COLOR and all(w.potted for w in winks)


def is_pot_supported(wink: Wink, relations: tuple[SquopRelation, ...] = (),
                     pot_center_mm: tuple[float, float] = (0.0, 0.0), min_tilt_deg: float = 3.0) -> bool:
    """TW P9: tilted, rising towards the pot, its edge at the pot wall, and neither squopping nor squopped.

    >>> is_pot_supported(Wink(wink_id="w", color="red", size="small", center_mm=(31, 0), tilt_deg=20,
    ...                       tilt_azimuth_deg=180))
    True
    """
    if wink.potted or wink.tilt_deg < min_tilt_deg:
        return False
    if wink.wink_id in squopped_ids(relations) | squopping_ids(relations):
        return False
    dx, dy = pot_center_mm[0] - wink.center_mm[0], pot_center_mm[1] - wink.center_mm[1]
    t = math.radians(wink.tilt_azimuth_deg)
    rises_towards_pot = dx * math.cos(t) + dy * math.sin(t) > 0.0
    return rises_towards_pot and edge_distance_to_pot_mm(wink, pot_center_mm) <= (
        POT_TOP_RADIUS_MM + POT_CONTACT_TOLERANCE_MM)


def radial_position_mm(center_mm: tuple[float, float], distance_mm: float,
                       pot_center_mm: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float] | None:
    """The point at ``distance_mm`` from the pot on the ray through ``center_mm`` (None on the axis).

    >>> radial_position_mm((3, 4), 10)
    (6.0, 8.0)
    """
    dx, dy = center_mm[0] - pot_center_mm[0], center_mm[1] - pot_center_mm[1]
    d = math.hypot(dx, dy)
    if d == 0.0:
        return None
    return (pot_center_mm[0] + dx / d * distance_mm, pot_center_mm[1] + dy / d * distance_mm)
