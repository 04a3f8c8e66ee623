"""A small colour region in the cup: a blend of two colours beside it (a fringe), or a pigment of its own."""

import numpy as np

from vision.potted import blend_of_neighbours

CUP_BGR = (120.0, 40.0, 30.0)  # a blue pot's inside
GREEN_BGR = (50.0, 170.0, 60.0)
RED_BGR = (40.0, 40.0, 200.0)
GREEN, RED, YELLOW = 1, 2, 3  # COLOR_NAMES indices


def _cup_scene():
    """A green wink lying over a red one in a blue cup: the red shows as a crescent, and the blur's mix of the
    two along their meeting edge reads yellow."""
    rr, cc = np.mgrid[0:48, 0:48]
    d_green = np.hypot(rr - 24, cc - 27)
    d_red = np.hypot(rr - 24, cc - 19)
    crop = np.empty((48, 48, 3), np.float32)
    crop[:] = CUP_BGR
    cls = np.full((48, 48), -1)
    red = d_red <= 10
    crop[red], cls[red] = RED_BGR, RED
    green = d_green <= 10
    crop[green], cls[green] = GREEN_BGR, GREEN
    fringe = red & (d_green > 10) & (d_green <= 11.5)
    crop[fringe] = (np.array(RED_BGR) + np.array(GREEN_BGR)) / 2
    cls[fringe] = YELLOW
    rng = np.random.default_rng(1)
    crop = np.clip(crop + rng.normal(0, 3, crop.shape), 0, 255).astype(np.uint8)
    return crop, cls, np.ones((48, 48), bool)


def test_a_crescent_of_a_pigment_no_neighbours_mix_is_no_fringe():
    crop, cls, inside = _cup_scene()
    assert not blend_of_neighbours(cls == RED, crop, cls, inside)


def test_the_mix_of_two_colours_where_they_meet_is_a_fringe():
    crop, cls, inside = _cup_scene()
    assert blend_of_neighbours(cls == YELLOW, crop, cls, inside)
