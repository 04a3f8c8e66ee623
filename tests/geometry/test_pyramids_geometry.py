"""Pyramid sizes and pose geometry in table mm (RULES.md 5.1): apex heights, lying faces, tilted bases."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

import geometry.pyramids as gp
from geometry.pyramids import (
    IcePiece,
    StartLine,
    lying_centroid_mm,
    lying_pose,
    points_for,
    stacked_pose,
    tilted_pose,
    upright_pose,
)
from geometry.types import GeometryError

TOL_MM = 1e-6


@pytest.mark.parametrize(("size", "base", "height"), [("small", 14.3, 25.4), ("medium", 19.8, 34.9),
                                                      ("large", 25.4, 44.5)])
def test_upright_apex_is_at_known_height_above_base_centre(size, base, height):
    p = upright_pose(size, (100.0, -50.0), math.radians(30.0))
    np.testing.assert_allclose(p.apex_mm(), [100.0, -50.0, height], atol=TOL_MM)
    c = p.corners_mm()
    np.testing.assert_allclose(c[:, 2], 0.0, atol=TOL_MM)
    np.testing.assert_allclose(np.linalg.norm(c[1] - c[0]), base, atol=TOL_MM)
    assert p.axis_tilt_deg() == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_lying_piece_rests_on_a_face_whose_centroid_is_given(size):
    rng = np.random.default_rng(3)
    xy, yaw = rng.uniform(-200, 200, 2), rng.uniform(0, 2 * math.pi)
    p = lying_pose(size, xy, yaw)
    v = p.vertices_mm()
    assert v[:, 2].min() == pytest.approx(0.0, abs=TOL_MM)
    # three vertices (two base corners and the apex) touch the table
    assert np.sum(np.abs(v[:, 2]) < 1e-6) == 3
    np.testing.assert_allclose(lying_centroid_mm(p), xy, atol=TOL_MM)
    assert p.axis_tilt_deg() > 90.0


def test_tilted_piece_keeps_its_hinge_on_the_table_and_raises_the_far_edge():
    p = tilted_pose("large", (0.0, 0.0), 0.0, math.radians(25.0))
    z = np.sort(p.corners_mm()[:, 2])
    np.testing.assert_allclose(z[:2], 0.0, atol=TOL_MM)
    assert z[2:] == pytest.approx([25.4 * math.sin(math.radians(25.0))] * 2, abs=1e-9)
    assert p.axis_tilt_deg() == pytest.approx(25.0, abs=1e-9)


def test_stacked_piece_rides_on_the_lower_one_and_refuses_to_cover_it():
    lower = upright_pose("large", (0.0, 0.0), 0.0)
    upper = stacked_pose("small", lower)
    assert 0.0 < upper.base_center_mm[2] < 44.5
    assert upper.apex_mm()[2] > lower.apex_mm()[2]
    with pytest.raises(GeometryError):
        stacked_pose("large", upright_pose("small", (0.0, 0.0), 0.0))


@pytest.mark.parametrize(("size", "pose", "points"), [
    ("small", "upright", 1), ("medium", "upright", 2), ("large", "upright", 3),
    ("small", "standing_on_lying", 2), ("medium", "standing_on_lying", 4), ("large", "standing_on_lying", 6),
    ("large", "lying", 0), ("small", "nested", 1),
])
def test_points_follow_pips_and_the_doubling_rule(size, pose, points):
    assert points_for(size, pose) == points


def test_rigid_motion_leaves_stash_depth_unchanged():
    line = StartLine(color="red", p0_mm=(0.0, 0.0), p1_mm=(100.0, 0.0), stash_point_mm=(0.0, -10.0))
    pts = np.array([[10.0, -40.0], [50.0, 12.0]])
    a = math.radians(37.0)
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    t = np.array([300.0, -120.0])
    moved = StartLine(color="red", p0_mm=R @ line.p0_mm + t, p1_mm=R @ line.p1_mm + t,
                      stash_point_mm=R @ line.stash_point_mm + t)
    np.testing.assert_allclose(moved.depth_into_stash_mm(pts @ R.T + t), line.depth_into_stash_mm(pts), atol=1e-9)


def test_bad_inputs_raise_named_errors():
    with pytest.raises(GeometryError):
        upright_pose("huge", (0, 0), 0)
    with pytest.raises(GeometryError):
        IcePiece(piece_id="a", color="red", size="small", pose="flying", center_mm=(0, 0))
    with pytest.raises(GeometryError):
        StartLine(color="red", p0_mm=(0, 0), p1_mm=(0, 0), stash_point_mm=(1, 1))


def test_doctests():
    assert doctest.testmod(gp).failed == 0
