"""Two small winks of one colour overlapping by about half, on a large wink of that colour: the outline of the
two, read as one disc between them, is split into both even though they overlap the large one
(vision/union_rims._two_discs)."""

import math

import pytest

from synth import SynthWink, default_camera, render, squop_tilt
from vision.tiddlywinks import measure_tiddlywinks

#: A wink found where it lies: the upper small, raised about 3.5 mm and tilted, reads up to 1.8 mm off in plan
#: (its outline seen from the side); the bench's gate is 5 mm.
FOUND_TOL_MM = 2.5


@pytest.mark.parametrize("color, large_to_middle_mm, middle_to_top_mm, seed",
                         [("blue", 13.0, 8.5, 22), ("red", 14.5, 7.5, 23)])
def test_a_same_colour_pair_read_as_one_disc_beside_a_third_is_split(color, large_to_middle_mm,
                                                                      middle_to_top_mm, seed):
    # issue 4 (tw_9899_001): small over small over large, one colour; the two smalls 7.5-8.5 mm apart read as
    # one disc between them, and the code before kept it whole because the lower small overlaps the large one
    cam = default_camera(1920, 1080)
    large = SynthWink("L", color, "large", (200.0, 100.0))
    a, b = math.radians(36.0), math.radians(100.0)
    mid_c = (200.0 + large_to_middle_mm * math.cos(a), 100.0 + large_to_middle_mm * math.sin(a))
    middle = squop_tilt(SynthWink("M", color, "small", mid_c), large)
    top = squop_tilt(SynthWink("T", color, "small", (mid_c[0] + middle_to_top_mm * math.cos(b),
                                                       mid_c[1] + middle_to_top_mm * math.sin(b))), middle)
    top.z_mm += middle.z_mm - 0.3  # it rests on the middle one, itself raised on the large one
    winks = [w for w in measure_tiddlywinks(render([large, middle, top], cam, seed=seed), cam).winks
             if w.color == color]
    assert len(winks) == 3
    for truth in (large, middle, top):
        near = [w for w in winks if math.dist(w.center_mm, truth.center_mm) < FOUND_TOL_MM]
        assert len(near) == 1, truth.wink_id
