"""Ring-marbles geometry (RULES.md 4.1-4.2): constants, the close-packed group, on-ring, drop distance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geometry import marbles as mb

TOL_MM = 1e-6


def test_ring_constants():
    assert mb.RING_RADIUS_MM == pytest.approx(914.4, abs=TOL_MM)
    assert mb.RING_HEIGHT_MM == pytest.approx(76.2, abs=TOL_MM)
    assert mb.MARBLE_DIAMETER_MM == pytest.approx(12.7, abs=TOL_MM)
    assert mb.TOLLEY_MAX_DIAMETER_MM == pytest.approx(19.05, abs=TOL_MM)
    assert mb.MARBLE_DIAMETER_MM < mb.MARBLE_TOLLEY_SPLIT_MM < mb.TOLLEY_MIN_DIAMETER_MM


@pytest.mark.parametrize(("players", "marbles", "wins"), [(3, 25, 13), (7, 29, 15), (9, 37, 19)])
def test_individual_match_sizes(players, marbles, wins):
    assert mb.starting_marbles(players) == marbles
    assert mb.individual_win_points(marbles) == wins


@pytest.mark.parametrize(("n", "enclosing_mm"), [(13, 28.0), (25, 40.0), (37, 44.0), (49, 52.0)])
def test_close_packed_group_radii(n, enclosing_mm):
    pts = mb.close_packed_lattice(n)
    assert len(pts) == n
    outer = float(np.linalg.norm(pts, axis=1).max()) + mb.MARBLE_DIAMETER_MM / 2
    assert outer == pytest.approx(enclosing_mm, abs=3.0)
    d = np.linalg.norm(pts[:, None] - pts[None], axis=2) + np.eye(n) * 1e9
    assert d.min() == pytest.approx(mb.LATTICE_SPACING_MM, abs=1e-6)  # touching, never overlapping
    assert mb.check_close_packed(pts, n).ok


def test_close_packed_rigid_motion_invariant():
    rng = np.random.default_rng(5)
    for _ in range(5):
        a = rng.uniform(0, math.pi)
        off = rng.uniform(-3, 3, 2)
        pts = mb.close_packed_lattice(25, rotation_rad=a, offset_mm=off)
        chk = mb.check_close_packed(pts, 25)
        assert chk.ok and chk.min_contacts >= 2


def test_loose_marble_fails_the_check():
    pts = mb.close_packed_lattice(13)
    pts[-1] *= 2.0  # an outer marble pulled out, away from the group
    chk = mb.check_close_packed(pts, 13)
    assert not chk.ok


def test_off_centre_group_fails_the_check():
    assert not mb.check_close_packed(mb.close_packed_lattice(13) + (30.0, 0.0), 13).ok


@pytest.mark.parametrize(
    ("center", "expected"),
    [((910.0, 0.0), True), ((920.0, 0.0), False), ((0.0, -914.0), None), ((600.0, 600.0), True)],
    ids=["MB-T11 on", "MB-T11 off", "edge", "diagonal"],
)
def test_is_on_ring(center, expected):
    assert mb.is_on_ring(center, eps_mm=1.0) is expected


def test_on_ring_rotation_invariant():
    rng = np.random.default_rng(11)
    for r in (100.0, 900.0, 913.0, 916.0, 1000.0):
        base = mb.is_on_ring((r, 0.0), eps_mm=0.5)
        for a in rng.uniform(0, 2 * math.pi, 8):
            assert mb.is_on_ring((r * math.cos(a), r * math.sin(a)), eps_mm=0.5) is base


def test_drop_distance_symmetric_and_invariant():
    p0, p1 = (-800.0, 5.0), (800.0, 5.0)
    assert mb.drop_distance_mm((0.0, 19.0), p0, p1) == pytest.approx(14.0, abs=TOL_MM)
    assert mb.drop_distance_mm((0.0, 19.0), p1, p0) == pytest.approx(14.0, abs=TOL_MM)
    a = 0.7
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    q = mb.drop_distance_mm(R @ (0.0, 19.0), R @ p0, R @ p1)
    assert q == pytest.approx(14.0, abs=1e-6)
    with pytest.raises(ValueError):
        mb.drop_distance_mm((0.0, 0.0), p0, p0)
