"""Tiddlywinks geometry against the exact numbers of RULES.md 1.2-1.3."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geometry import tiddlywinks as tw
from geometry.types import GeometryError, TiddlywinksScene, Wink

EXACT_MM = 1e-3  # RULES.md prints three decimals


def W(i, color, size, x, y, **kw):
    return Wink(wink_id=i, color=color, size=size, center_mm=(x, y), **kw)


def test_field_octagon_vertices_and_area():
    expected = [
        (914.4, -215.861),
        (914.4, 215.861),
        (793.730, 457.2),
        (-793.730, 457.2),
        (-914.4, 215.861),
        (-914.4, -215.861),
        (-793.730, -457.2),
        (793.730, -457.2),
    ]
    got = list(tw.field_polygon().exterior.coords)[:-1]
    np.testing.assert_allclose(np.array(got), np.array(expected), atol=EXACT_MM)
    assert tw.field_polygon().area == pytest.approx(1_614_010, abs=1)
    assert tw.mat_polygon().area == pytest.approx(1_672_254.7, abs=0.1)


@pytest.mark.parametrize(
    "inset_mm, short_edge_vertex, long_edge_vertex",
    [
        # RULES.md 1.2 prints the d = 33 short-edge vertex as (±884.4, ±208.070): x is L - d = 881.4 (its y and
        # the half-plane form agree with 881.4; 884.4 is the d = 30 value).
        (33.0, (881.4, 208.070), (773.335, 424.2)),
        (30.0, (884.4, 208.779), (775.189, 427.2)),
    ],
)
def test_inset_field_vertices(inset_mm, short_edge_vertex, long_edge_vertex):
    coords = list(tw.field_polygon(inset_mm).exterior.coords)
    assert any(p == pytest.approx(short_edge_vertex, abs=EXACT_MM) for p in coords)
    assert any(p == pytest.approx(long_edge_vertex, abs=EXACT_MM) for p in coords)


def test_corner_triangle_and_baseline():
    tri = tw.corner_triangle((1, 1))
    assert tri.area == pytest.approx(14_561.2, abs=0.1)
    assert tw.baseline_segment((1, 1)).length == pytest.approx(269.826, abs=EXACT_MM)
    assert tw.field_polygon().area + 4 * tri.area == pytest.approx(tw.mat_polygon().area, abs=0.01)


def test_behind_and_over_baseline():
    corner = W("y", "yellow", "small", 880, 400)
    assert tw.is_behind_baseline(corner, (1, 1)) and not tw.is_behind_baseline(corner, (-1, -1))
    assert tw.is_completely_over_baseline(corner, (-1, -1))
    straddle = W("g", "green", "large", 805, 420)
    assert not tw.is_behind_baseline(straddle, (1, 1)) and not tw.is_completely_over_baseline(
        straddle, (1, 1)
    )
    in_hand = W("h", "green", "small", 0, 0, off_mat=True, unplayed=True)
    assert tw.is_behind_baseline(in_hand, (1, 1))


def test_tilted_footprint_is_foreshortened_along_its_slope():
    w = W("t", "red", "large", 0, 0, tilt_deg=60, tilt_azimuth_deg=90)
    minx, miny, maxx, maxy = tw.footprint(w).bounds
    assert (maxx - minx) / 2 == pytest.approx(11.0, abs=EXACT_MM)
    assert (maxy - miny) / 2 == pytest.approx(5.5, abs=EXACT_MM)
    assert tw.support_mm(w, [0.0, 1.0]) == pytest.approx(5.5, abs=1e-9)


def test_pot_helpers():
    assert tw.is_under_pot_base(W("u", "red", "small", 20, 5))
    assert not tw.is_under_pot_base(W("p", "red", "small", 20, 5, potted=True))
    assert tw.radial_position_mm((0, 0), 5) is None
    full = TiddlywinksScene(winks=tuple(W(f"b{i}", "blue", "small", 0, 0, potted=True) for i in range(6)))
    assert tw.is_potted_out(full, "blue") and not tw.is_potted_out(full, "red")


def test_scene_rejects_bad_corner_signs():
    with pytest.raises(GeometryError, match="corner_signs"):
        TiddlywinksScene(
            winks=(), corner_signs={"blue": (1, 1), "green": (1, 1), "red": (1, -1), "yellow": (-1, -1)}
        )


def test_records_round_trip_keeps_game_facts():
    from geometry.records import scene_from_document, scene_to_document

    sc = TiddlywinksScene(
        winks=(W("a", "blue", "large", 10, 20),),
        unplayed_corners=("green",),
        last_shot_color="red",
        eps_mm=0.7,
    )
    back = scene_from_document(scene_to_document(sc))
    assert (back.unplayed_corners, back.last_shot_color, back.eps_mm) == (
        sc.unplayed_corners,
        sc.last_shot_color,
        0.7,
    )
    assert math.isclose(back.winks[0].center_mm[1], 20.0)


def test_records_radius_override_only_when_not_nominal():
    from geometry.records import scene_from_document

    pieces = [{"id": "a", "color": "red", "size": "large", "center_mm": [0, 0], "radius_mm": 8.0},
              {"id": "b", "color": "red", "size": "small", "center_mm": [50, 0], "radius_mm": 8.0}]
    sc = scene_from_document({"pieces": pieces})
    assert (sc.wink("a").radius_mm, sc.wink("b").radius_mm) == (8.0, 8.0)
    assert sc.wink("b").radius_override_mm is None


def test_a_resting_winks_tilt_and_height_are_the_simulators_physical_rest():
    # every upper wink of random squop scenes: the simulator rests it by clearing its underside over the
    # supports' faces (simulation.tiddlywinks_scenes.rest_on); the geometry's closed form from the mat contact
    # (r cos t - h sin t behind the centre) and each support's highest face point under the footprint agrees
    from simulation.tiddlywinks_scenes import random_scene
    n = 0
    for seed in range(6):
        scene = random_scene(np.random.default_rng([31, seed]), "squops")
        by_id = {w.wink_id: w for w in scene.winks}
        for w in scene.winks:
            if not w.above or w.tilt_deg == 0.0 or w.potted:
                continue
            a = math.radians(w.tilt_azimuth_deg)
            toward = np.array([math.cos(a), math.sin(a)])
            faces = np.vstack([tw.face_points_mm(s.center_mm, s.radius_mm, s.z_mm, s.tilt_deg, s.tilt_azimuth_deg)
                               for s in (by_id[i] for i in w.above)])
            t = tw.resting_tilt_over_rad(w.center_mm, w.radius_mm, toward, faces)
            assert math.degrees(t) == pytest.approx(w.tilt_deg, abs=0.05), w.wink_id
            assert tw.resting_mid_height_mm(w.radius_mm, t) == pytest.approx(w.z_mm, abs=0.01)
            n += 1
    assert n >= 10
