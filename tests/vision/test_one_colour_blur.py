"""tw_5961_001's one-colour pair (seed 5959) at about 2 mm per pixel, where the two winks blur into one blob: a third
candidate beside two found winks of its colour is an echo of their union unless some of its colour is left that they
cannot explain (as beside one); and an order resting on one read alone, where a wink's size is unconfirmed and its
other size cannot be fitted to check the order against, is left undecided (TW I-13), not claimed."""

import math

import pytest
from piles import synth_pile
from synth import default_camera, render

from vision.tiddlywinks import measure_tiddlywinks

#: A wink found where it lies (the bench's gate is 5 mm; the raised small one is read large, up to 1.7 mm off).
FOUND_TOL_MM = 2.5
#: blue-S3 resting on blue-L2, 10.7 mm apart (11.5 deg); moved to where the synth camera sees it at 2.1 mm per pixel
#: (2.26 mm in that photo)
PILE = (("blue-L2", "blue", "large", (-42.73, -413.64)), ("blue-S3", "blue", "small", (-34.33, -420.21)))


def _read(seed, offset_mm, size_px=(880, 495)):
    """The pile drawn and measured: its blue winks, each wink of the truth with the one found nearest to it."""
    winks = synth_pile(PILE, offset_mm)
    cam = default_camera(*size_px)
    m = measure_tiddlywinks(render(winks, cam, seed=seed), cam)
    blue = [f for f in m.winks if f.color == "blue"]
    found = [min(blue, key=lambda f: math.dist(f.center_mm, w.center_mm)) for w in winks]
    for w, f in zip(winks, found):
        assert math.dist(f.center_mm, w.center_mm) < FOUND_TOL_MM, w.wink_id
    return blue, found


def _claimed_wrong_way(lower, upper) -> bool:
    return upper.wink_id in lower.above and lower.order_confidence.get(upper.wink_id, 0.0) >= 0.75


def test_a_one_colour_pair_blurred_into_one_blob_is_read_as_two_winks_not_three():
    # issue 4 (tw_5961_001): the label search found a large wink on the raised small one and two smalls inside the
    # large one; the second small was taken beside two found winks of its colour on the coarse free-area test
    # alone (the found winks placed within a pixel explain all but 0.069 of its disc, where a lower wink leaves its
    # crescent); main then reported three blue winks, the large one missed and its pair unjudged
    blue, (lower, upper) = _read(2, (300.0, 100.0))
    assert len(blue) == 2 and lower is not upper
    assert lower.size == "large"
    assert not _claimed_wrong_way(lower, upper)  # one colour, barely resolved: undecided, never the wrong way


def test_a_one_colour_order_on_one_read_and_an_unfittable_size_is_not_claimed():
    # main read both winks large (the raised small one 1.6 mm off, its size unconfirmed, not fittable at the small
    # radius) and claimed the large one over it at 0.91: the cut rim alone 2.7 sigma the wrong way, the shadow 0.0,
    # no other cue read
    blue, (lower, upper) = _read(3, (250.0, 100.0))
    assert len(blue) == 2 and lower is not upper
    assert not _claimed_wrong_way(lower, upper)


@pytest.mark.parametrize("seed, offset_mm", [(4, (300.0, 100.0)), (7, (300.0, 100.0)), (3, (250.0, 100.0)),
                                             (6, (250.0, 100.0))])
def test_a_one_colour_order_on_a_size_no_read_tested_is_not_claimed(seed, offset_mm):
    # issue 4: at 1280x720 (1.44 mm per pixel) the raised, tilted small upper is fitted large, flat, 1.5-2.0 mm off;
    # the scene has too few clean winks to measure the image's edge offset, so no read tested its radius, yet main
    # took its size_confidence of 1.0 (the default) as confirmed and claimed the large one over it at 0.85-0.99 on
    # rims that size put millimetres off (cut rim 2.5-3.8 sigma the wrong way, the other cues faint)
    blue, (lower, upper) = _read(seed, offset_mm, (1280, 720))
    assert len(blue) == 2 and lower is not upper
    assert not _claimed_wrong_way(lower, upper)
