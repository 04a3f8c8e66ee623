"""Hypothesis properties of the tiddlywinks geometry and of rulings under rigid motion (STYLE.md section 8)."""

from __future__ import annotations

import math

import numpy as np
import shapely
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from shapely.geometry import Point

from adjudicator.tiddlywinks import adjudicate
from geometry import tiddlywinks as tw
from geometry.placement import Disc, Stadium, nearest_feasible_boundary_points
from geometry.types import COLOR_ORDER, TiddlywinksScene, Wink

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Bounded to the mat plus a margin so off-field winks occur; finite floats only.
xs = st.floats(-930.0, 930.0, allow_nan=False, allow_infinity=False)
ys = st.floats(-470.0, 470.0, allow_nan=False, allow_infinity=False)
tilts = st.one_of(st.just(0.0), st.floats(0.0, 70.0))
azimuths = st.floats(0.0, 360.0, exclude_max=True)
SYMMETRY_TOL_MM = 1e-6


@st.composite
def winks(draw, wink_id="w"):
    return Wink(
        wink_id=wink_id,
        color=draw(st.sampled_from(COLOR_ORDER)),
        size=draw(st.sampled_from(["large", "small"])),
        center_mm=(draw(xs), draw(ys)),
        tilt_deg=draw(tilts),
        tilt_azimuth_deg=draw(azimuths),
        z_mm=draw(st.floats(0.75, 6.0)),
    )


@FAST
@given(a=winks("a"), b=winks("b"))
@example(
    a=Wink(wink_id="a", color="red", size="large", center_mm=(0, 0)),
    b=Wink(wink_id="b", color="blue", size="small", center_mm=(19, 0)),
)  # touching
def test_gap_and_overlap_are_symmetric(a, b):
    assert math.isclose(tw.gap_mm(a, b), tw.gap_mm(b, a), abs_tol=SYMMETRY_TOL_MM)
    assert math.isclose(tw.overlap_area_mm2(a, b), tw.overlap_area_mm2(b, a), abs_tol=SYMMETRY_TOL_MM)
    assert (tw.gap_mm(a, b) < 0) == (tw.overlap_area_mm2(a, b) > tw.OVERLAP_NOISE_MM2) or abs(
        tw.gap_mm(a, b)
    ) < 1e-3


@FAST
@given(w=winks(), push=st.floats(0.0, 300.0))
@example(w=Wink(wink_id="w", color="red", size="large", center_mm=(903.4, 0)), push=0.0)  # exactly tangent
def test_pushing_outward_never_brings_a_wink_back(w, push):
    d = math.hypot(*w.center_mm)
    if d < 1e-6:
        return
    ux, uy = w.center_mm[0] / d, w.center_mm[1] / d
    pushed = Wink(
        wink_id="w",
        color=w.color,
        size=w.size,
        center_mm=(w.center_mm[0] + push * ux, w.center_mm[1] + push * uy),
        tilt_deg=w.tilt_deg,
        tilt_azimuth_deg=w.tilt_azimuth_deg,
    )
    flat = Wink(
        wink_id="w",
        color=w.color,
        size=w.size,
        center_mm=w.center_mm,
        tilt_deg=w.tilt_deg,
        tilt_azimuth_deg=w.tilt_azimuth_deg,
    )
    assert tw.out_of_bounds_penetration_mm(pushed) >= tw.out_of_bounds_penetration_mm(flat) - 1e-9
    assert tw.edge_distance_to_pot_mm(pushed) >= tw.edge_distance_to_pot_mm(flat) - 1e-6
    if tw.is_out_of_bounds(flat):
        assert tw.is_out_of_bounds(pushed)


@FAST
@given(ws=st.lists(winks(), min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1))
def test_nearest_to_pot_ignores_input_order(ws, seed):
    ws = [Wink(wink_id=f"w{i}", color=w.color, size=w.size, center_mm=w.center_mm) for i, w in enumerate(ws)]
    shuffled = list(ws)
    np.random.default_rng(seed).shuffle(shuffled)
    assert [w.wink_id for w, _ in tw.nearest_to_pot(ws)] == [
        w.wink_id for w, _ in tw.nearest_to_pot(shuffled)
    ]


def _rotate_180(scene: TiddlywinksScene) -> TiddlywinksScene:
    """The whole table turned half round, corners (and so each colour's baseline) carried with it."""
    turned = tuple(
        Wink(
            wink_id=w.wink_id,
            color=w.color,
            size=w.size,
            center_mm=(-w.center_mm[0], -w.center_mm[1]),
            z_mm=w.z_mm,
            tilt_deg=w.tilt_deg,
            tilt_azimuth_deg=(w.tilt_azimuth_deg + 180.0) % 360.0,
            above=w.above,
            potted=w.potted,
            off_mat=w.off_mat,
            unplayed=w.unplayed,
        )
        for w in scene.winks
    )
    corners = {c: (-sx, -sy) for c, (sx, sy) in scene.corner_signs.items()}
    return TiddlywinksScene(
        winks=turned,
        corner_signs=corners,
        eps_mm=scene.eps_mm,
        last_shot_color=scene.last_shot_color,
        potted_out_order=scene.potted_out_order,
    )


@st.composite
def scenes(draw):
    n = draw(st.integers(1, 7))
    ws = []
    for i in range(n):
        w = draw(winks(f"w{i}"))
        state = draw(st.sampled_from(["play", "play", "play", "potted", "unplayed"]))
        ws.append(
            Wink(
                wink_id=w.wink_id,
                color=w.color,
                size=w.size,
                center_mm=w.center_mm,
                z_mm=0.75 + 1.5 * i,
                potted=state == "potted",
                unplayed=state == "unplayed",
            )
        )
    return TiddlywinksScene(winks=tuple(ws), eps_mm=1.0, last_shot_color=draw(st.sampled_from(COLOR_ORDER)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenes())
def test_turning_the_table_half_round_changes_no_ruling(sc):
    before = adjudicate(sc)
    after = adjudicate(_rotate_180(sc))
    assert [(r.rule, r.decision, r.piece_ids) for r in before] == [
        (r.rule, r.decision, r.piece_ids) for r in after
    ]
    for r1, r2 in zip(before, after):
        if r1.target_mm is not None:
            assert math.dist(r1.target_mm, (-r2.target_mm[0], -r2.target_mm[1])) < SYMMETRY_TOL_MM


@settings(max_examples=30, deadline=None)
@given(
    target=st.tuples(xs, ys),
    discs=st.lists(st.tuples(xs, ys, st.floats(5.0, 250.0)), max_size=4),
    live_corners=st.lists(st.sampled_from([(1, 1), (1, -1), (-1, 1), (-1, -1)]), max_size=2, unique=True),
)
def test_nearest_feasible_point_is_exact(target, discs, live_corners):
    """Against dense sampling of the ring: nothing feasible is nearer, and the answer itself is feasible."""
    ring_poly = tw.field_polygon(33.0)
    ds = tuple(Disc((x, y), r) for x, y, r in discs)
    sts = tuple(Stadium(*tw.baseline_segment(c).coords, 111.0) for c in live_corners)
    cands = nearest_feasible_boundary_points(ring_poly, target, ds, sts)
    ring = ring_poly.exterior
    pts = shapely.line_interpolate_point(ring, np.linspace(0.0, ring.length, 10_000))
    xy = shapely.get_coordinates(pts)
    ok = np.ones(len(xy), dtype=bool)
    for d in ds:
        ok &= np.hypot(xy[:, 0] - d.center_mm[0], xy[:, 1] - d.center_mm[1]) >= d.radius_mm - 1e-7
    for c in live_corners:
        ok &= shapely.distance(tw.baseline_segment(c), pts) >= 111.0 - 1e-7
    if not cands:
        assert not ok.any()
        return
    best = cands[0]
    p = Point(best.point_mm)
    assert all(math.dist(best.point_mm, d.center_mm) >= d.radius_mm - 1e-6 for d in ds)
    assert all(tw.baseline_segment(c).distance(p) >= 111.0 - 1e-6 for c in live_corners)
    assert ring.distance(p) < 1e-6
    if ok.any():
        sampled = np.hypot(xy[ok, 0] - target[0], xy[ok, 1] - target[1]).min()
        assert sampled >= best.distance_mm - 1e-6
