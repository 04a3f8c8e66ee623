"""Contact of a tilted pyramid with the lying piece it rests on (vision/pyramids_physics), in table mm."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geometry.pyramids import base_mm, lying_pose, tilted_pose, upright_pose
from vision.pyramids_physics import (
    interpenetration_mm,
    surface_points_mm,
    tilted_support_gap_mm,
    wall_penetration_mm,
)

CONTACT_TOL_MM = 0.3  # sampling of the lying piece's surface (10 steps per face edge)


def _beside(lying, size, tilt_rad, overlap_ratio=0.3):
    """A piece facing the lying one along +x, its hinge ``overlap_ratio`` of its base short of the lying piece."""
    near_x = float(surface_points_mm(lying)[:, 0].min())
    overlap_mm = overlap_ratio * base_mm(size)
    # tilted_pose raises the base towards yaw + 90 deg: yaw = -90 deg raises it along +x
    return tilted_pose(size, (near_x - overlap_mm, 0.0), -math.pi / 2, tilt_rad)


def _distance_to_base(tilted, lying):
    """Independent check: nearest distance from the lying piece's surface to the base square (a plate)."""
    h = 0.5 * float(np.linalg.norm(tilted.corners_mm()[1] - tilted.corners_mm()[0]))
    local = (surface_points_mm(lying, 40) - tilted.base_center_mm[None]) @ tilted.rotation
    clamped = np.column_stack(
        [np.clip(local[:, 0], -h, h), np.clip(local[:, 1], -h, h), np.zeros(len(local))]
    )
    return float(np.min(np.linalg.norm(local - clamped, axis=1)))


def _resting_tilt(lying, size):
    lo, hi = math.radians(1.0), math.radians(60.0)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        g = tilted_support_gap_mm(_beside(lying, size, mid), lying)
        lo, hi = (lo, mid) if g > 0 else (mid, hi)
    return 0.5 * (lo + hi)


@pytest.mark.parametrize(
    "lower_size,upper_size", [("medium", "large"), ("large", "small"), ("small", "medium")]
)
def test_a_resting_base_touches_the_lying_piece(lower_size, upper_size):
    # the lying piece's apex points at the standing one (apex along yaw - 90 deg: here towards -x, 20 deg off)
    lying = lying_pose(lower_size, (0.0, 0.0), math.radians(-70.0))
    tilt = _resting_tilt(lying, upper_size)
    assert math.radians(5.0) < tilt < math.radians(40.0)  # a pose a real piece can rest in
    top = _beside(lying, upper_size, tilt)
    assert tilted_support_gap_mm(top, lying) == pytest.approx(0.0, abs=CONTACT_TOL_MM)
    assert _distance_to_base(top, lying) < 0.5
    # tipped further back the base floats above the lying piece; tipped forward it would cut into it
    assert tilted_support_gap_mm(_beside(lying, upper_size, tilt + math.radians(5.0)), lying) > 0.5
    assert tilted_support_gap_mm(_beside(lying, upper_size, tilt - math.radians(5.0)), lying) < 0.0


def test_a_base_with_nothing_under_it_has_no_support():
    lying = lying_pose("medium", (0.0, 0.0), 0.0)
    far = tilted_pose("medium", (200.0, 0.0), -math.pi / 2, math.radians(20.0))
    assert tilted_support_gap_mm(far, lying) > 100.0


def test_pieces_on_the_table_cannot_pass_through_each_other():
    lying = lying_pose("large", (0.0, 0.0), 0.0)
    # an upright piece standing in the middle of a lying one, or two pieces lying on the same spot: impossible
    assert interpenetration_mm(lying, upright_pose("small", (0.0, 5.0), 0.3)) > 3.0
    assert interpenetration_mm(lying, lying_pose("medium", (0.0, 0.0), 1.0)) > 3.0
    # side by side, a millimetre apart: no overlap
    gap_x = float(surface_points_mm(lying)[:, 0].max()) + 1.0 + base_mm("small") / 2
    assert interpenetration_mm(lying, upright_pose("small", (gap_x, 0.0), 0.0)) == pytest.approx(0.0, abs=1e-9)
    # symmetric in its arguments
    other = lying_pose("medium", (12.0, 3.0), 0.7)
    assert interpenetration_mm(lying, other) == pytest.approx(interpenetration_mm(other, lying), abs=1e-9)


@pytest.mark.parametrize(
    "lower_size,upper_size", [("medium", "large"), ("large", "small"), ("small", "medium")]
)
def test_a_resting_piece_touches_the_lying_one_with_its_rim_not_through_its_walls(lower_size, upper_size):
    lying = lying_pose(lower_size, (0.0, 0.0), math.radians(-70.0))
    top = _beside(lying, upper_size, _resting_tilt(lying, upper_size))
    assert wall_penetration_mm(top, lying) == pytest.approx(0.0, abs=CONTACT_TOL_MM)


def test_a_piece_set_over_the_middle_of_a_lying_one_cuts_through_it():
    # the fit's phantom (ice_fresh_004): a lying piece read too small, a small piece 'standing' over the rest of
    # its silhouette; its base touches the lying piece (the support test passes) but its walls pass through it
    lying = lying_pose("medium", (0.0, 0.0), 0.0)
    centre = surface_points_mm(lying)[:, :2].mean(axis=0)
    top = tilted_pose("small", (float(centre[0]) - 4.0, float(centre[1])), -math.pi / 2, math.radians(15.0))
    assert wall_penetration_mm(top, lying) > 3.0
    # far from it, the walls are clear by about the distance
    far = tilted_pose("small", (200.0, 0.0), -math.pi / 2, math.radians(15.0))
    assert wall_penetration_mm(far, lying) < -100.0
