"""Balls touching a line (a paving joint, the rim's edge, the ring's shadow border) on the ground: the line is
opened away so the ball stands apart (it was merged into one long blob and lost), and what is left of lines
alone, even where two meet, is no ball."""

from __future__ import annotations

import numpy as np

from vision.marbles import DEFAULT_PARAMS, _blobs, _distance_to_triangle, _is_rim_sand

MARBLE_PX = 9.0
LINE_OPEN_PX = DEFAULT_PARAMS.line_open_marbles * MARBLE_PX


def _scene(ball: bool, line_px: int = 4) -> np.ndarray:
    """A vertical joint and a horizontal one meeting it (a T), and maybe a ball on the vertical joint."""
    rng = np.random.default_rng(5)
    mag = np.abs(rng.normal(0.0, 1.0, (160, 160))).astype(np.float32)
    mag[:, 60:60 + line_px] += 20.0  # joint, thinner than half a marble (2-4 px at 9 px per marble)
    mag[120:120 + line_px, 60:160] += 20.0  # a second joint meeting it
    if ball:
        yy, xx = np.mgrid[:160, :160]
        mag[(xx - 62) ** 2 + (yy - 50) ** 2 <= (0.55 * MARBLE_PX) ** 2] += 30.0  # ball with its soft edge
    return mag


def _balls(mag: np.ndarray) -> list:
    region = np.ones(mag.shape, bool)
    blobs = _blobs(mag, region, 8.0, 0.35 * np.pi * (0.5 * MARBLE_PX) ** 2, MARBLE_PX, LINE_OPEN_PX)
    return [b for b in blobs if b.inner_radius_px >= DEFAULT_PARAMS.line_ball_inner_radius * 0.5 * MARBLE_PX]


def test_without_opening_the_ball_is_merged_into_the_joint():
    blobs = _blobs(_scene(True), np.ones((160, 160), bool), 8.0, 10.0, MARBLE_PX)
    assert len(blobs) == 1 and blobs[0].area_px > 160 * 4  # one blob the length of the joint


def test_ball_on_a_joint_stands_apart_at_its_centre():
    found = _balls(_scene(True))
    assert len(found) == 1
    assert np.hypot(*(found[0].center_ortho - (62.0, 50.0))) <= 1.5  # px: 2 mm at 9 px per marble


def test_joints_alone_and_where_they_meet_are_no_ball():
    for width in (2, 3, 4):
        assert _balls(_scene(False, width)) == []


SAND_AB = np.array([134.0, 150.0])  # beige sand (OpenCV 8-bit CIELAB a*, b*)
GRASS_AB = np.array([112.0, 150.0])  # green ground


def _ab_image(core_ab) -> tuple[np.ndarray, np.ndarray]:
    lab_ab = np.tile(GRASS_AB.astype(np.float32), (40, 40, 1))
    lab_ab[18:23, 18:23] = core_ab
    band = np.zeros((40, 40), bool)
    band[10:30, :] = True  # the strip beside the hidden ground and the rim's foot
    return lab_ab, band


def test_rim_edge_mixing_sand_ground_and_shade_is_the_rim():
    for mix in (0.5 * (SAND_AB + GRASS_AB), 0.6 * SAND_AB + 0.4 * 128.0, SAND_AB):
        lab_ab, band = _ab_image(mix)
        assert _is_rim_sand((20, 20), band, lab_ab, SAND_AB, GRASS_AB, MARBLE_PX, DEFAULT_PARAMS)


def test_blue_ball_at_the_rims_foot_is_a_ball_and_away_from_it_is_never_the_rim():
    lab_ab, band = _ab_image(np.array([140.0, 100.0]))  # blue glass: b* well below grey
    assert not _is_rim_sand((20, 20), band, lab_ab, SAND_AB, GRASS_AB, MARBLE_PX, DEFAULT_PARAMS)
    lab_ab, band = _ab_image(SAND_AB)
    band[:] = False
    assert not _is_rim_sand((20, 20), band, lab_ab, SAND_AB, GRASS_AB, MARBLE_PX, DEFAULT_PARAMS)


def test_distance_to_triangle():
    a, b, c = np.array([0.0, 0.0]), np.array([10.0, 0.0]), np.array([0.0, 10.0])
    assert _distance_to_triangle(np.array([2.0, 2.0]), a, b, c) == 0.0
    assert abs(_distance_to_triangle(np.array([5.0, -3.0]), a, b, c) - 3.0) < 1e-9
    assert abs(_distance_to_triangle(np.array([10.0, 10.0]), a, b, c) - 50 ** 0.5) < 1e-9
    # a degenerate triangle (ground as grey as the shade) is its edges
    assert abs(_distance_to_triangle(np.array([5.0, 1.0]), a, b, b) - 1.0) < 1e-9
