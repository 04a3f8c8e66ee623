"""Dominoes geometry: tile outlines, joins between touching ends, free ends, standard pip grids."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

import geometry.dominoes as gd
from geometry.dominoes import Bone, PlacedTile, find_joins, free_ends, pip_layout, set_size
from geometry.types import GeometryError

W = 24.0


def tile(tid, x, y, angle, a, b, w=W):
    return PlacedTile(tile_id=tid, center_mm=(x, y), angle_deg=angle, width_mm=w, length_mm=2 * w, bone=Bone(a=a, b=b))


def test_doctests_pass():
    assert doctest.testmod(gd).failed == 0


def test_set_sizes():
    assert [set_size(n) for n in (6, 9, 12)] == [28, 55, 91]


def test_outline_is_a_w_by_2w_rectangle_any_angle():
    rng = np.random.default_rng(3)
    for _ in range(20):
        t = tile("t", *rng.uniform(-200, 200, 2), rng.uniform(0, 360), 1, 2)
        c = np.asarray(t.outline_mm())
        sides = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
        np.testing.assert_allclose(sorted(sides), [W, W, 2 * W, 2 * W], atol=1e-6)
        np.testing.assert_allclose(c.mean(axis=0), t.center_mm, atol=1e-6)
        np.testing.assert_allclose(t.end_center_mm("b"), np.add(t.center_mm, np.multiply(t.axis, W)), atol=1e-6)


def test_straight_chain_joins_and_free_ends():
    tiles = [tile("t0", 0, 0, 0, 1, 5), tile("t1", 2 * W + 1, 0, 0, 5, 3), tile("t2", 4 * W + 2, 0, 180, 6, 3)]
    joins = find_joins(tiles)
    assert len(joins) == 2
    assert all(j.matches for j in joins)
    assert free_ends(tiles, joins) == (("t0", "a"), ("t2", "a"))


def test_joins_ignore_rotation_and_translation_of_the_whole_layout():
    base = [tile("t0", 0, 0, 0, 1, 5), tile("t1", 2 * W + 1, 0, 0, 5, 3), tile("t2", 3 * W + 1.5, 1.5 * W, 90, 3, 2)]
    ref = {(j.tile_id, j.half, j.other_id, j.other_half) for j in find_joins(base)}
    assert len(ref) == 2
    rng = np.random.default_rng(11)
    for _ in range(10):
        th = rng.uniform(0, 2 * math.pi)
        dx, dy = rng.uniform(-500, 500, 2)
        moved = []
        for t in base:
            x, y = t.center_mm
            moved.append(PlacedTile(tile_id=t.tile_id, center_mm=(x * math.cos(th) - y * math.sin(th) + dx,
                                                                 x * math.sin(th) + y * math.cos(th) + dy),
                                    angle_deg=t.angle_deg + math.degrees(th), width_mm=W, length_mm=2 * W,
                                    bone=t.bone))
        assert {(j.tile_id, j.half, j.other_id, j.other_half) for j in find_joins(moved)} == ref


def test_crosswise_double_in_the_line():
    # 5-4 | 4-4 laid across | 4-0 : both neighbours touch the double's long sides
    tiles = [tile("a", -1.5 * W - 1, 0, 0, 5, 4), tile("d", 0, 0, 90, 4, 4), tile("c", 1.5 * W + 1, 0, 0, 4, 0)]
    joins = find_joins(tiles)
    assert len(joins) == 2 and all(j.matches and j.crosswise for j in joins)
    assert set(free_ends(tiles, joins)) == {("a", "a"), ("c", "b")}


def test_bad_join_is_seen_and_gap_beyond_tolerance_is_not_a_join():
    tiles = [tile("t0", 0, 0, 0, 1, 5), tile("t1", 2 * W + 1, 0, 0, 4, 3)]
    (j,) = find_joins(tiles)
    assert j.matches is False and (j.pips, j.other_pips) == (5, 4)
    far = [tile("t0", 0, 0, 0, 1, 5), tile("t1", 2 * W + 0.2 * W, 0, 0, 5, 3)]
    assert find_joins(far) == ()


def test_pip_layouts_lie_on_the_grid_and_count_right():
    for n in range(13):
        pts = pip_layout(n)
        assert len(pts) == n == len(set(pts))
        assert all(0 < u < 1 and 0 < v < 1 for u, v in pts)
    with pytest.raises(GeometryError, match="0..12"):
        pip_layout(13)


def test_bad_tiles_are_named_errors():
    with pytest.raises(GeometryError, match="face down"):
        PlacedTile(tile_id="x", center_mm=(0, 0), angle_deg=0, face_up=False, bone=Bone(a=1, b=1))
    with pytest.raises(GeometryError, match="finite"):
        PlacedTile(tile_id="x", center_mm=(math.nan, 0), angle_deg=0)
    with pytest.raises(GeometryError, match="'a' or 'b'"):
        PlacedTile(tile_id="x", center_mm=(0, 0), angle_deg=0).end_center_mm("c")
    with pytest.raises(GeometryError, match="whole numbers"):
        Bone.parse("1.5-2")


def test_a_tile_one_length_beyond_an_open_end_is_a_gap_in_the_line():
    """DM P2 needs every join seen: a lone tile a tile's length past an open end had one unseen between them."""
    from geometry.dominoes import tiles_beyond_free_ends

    line = [tile("t0", 0, 0, 0, 1, 5), tile("t1", 2 * W + 1, 0, 0, 5, 3)]
    cases = {
        "in line, one tile missing": (tile("x", 6 * W + 3, 0, 0, 4, 6), True),
        "round a corner, one tile missing": (tile("x", 4 * W + 2, 2.5 * W, 90, 4, 6), True),
        "two tiles missing": (tile("x", 8 * W + 4, 0, 0, 4, 6), False),
        "a hand beside the line": (tile("x", 2 * W + 1, 2 * W, 0, 4, 6), False),
        "off past the other end, out of reach": (tile("x", -2 * W - 10, 4 * W, 90, 4, 6), False),
        "past the other end, round a corner": (tile("x", -1.5 * W - 2, 2.5 * W + 2, 90, 4, 6), True),
        "round a corner with no room for a tile": (tile("x", -1.5 * W - 1, 2 * W + 1, 90, 4, 6), False),
    }
    for name, (extra, expected) in cases.items():
        tiles = [*line, extra]
        joins = find_joins(tiles)
        gaps = tiles_beyond_free_ends(tiles, joins, free_ends(tiles, joins))
        assert bool(gaps) is expected, name
        if expected:
            assert all(g.other_id == "x" for g in gaps), name
