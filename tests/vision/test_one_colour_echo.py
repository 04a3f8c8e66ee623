"""A one-colour pair at low resolution read as three discs: a third candidate beside two found winks of its colour
is an echo of their blurred union unless some of its colour is left that they cannot explain (as beside one)."""

import math

from piles import synth_pile
from synth import default_camera, render

from vision.tiddlywinks import measure_tiddlywinks

#: A wink found where it lies (the bench's gate is 5 mm; the raised small one is read large, 1.7 mm off).
FOUND_TOL_MM = 2.5
#: tw_5961_001's pile (seed 5959), moved: blue-S3 resting on blue-L2, 10.7 mm apart (11.5 deg); about 2.1 mm per
#: pixel there, as in that photo's far half (2.26 mm)
PILE = (("blue-L2", "blue", "large", (-42.73, -413.64)), ("blue-S3", "blue", "small", (-34.33, -420.21)))
OFFSET_MM = (300.0, 100.0)


def test_a_one_colour_pair_blurred_into_one_blob_is_read_as_two_winks_not_three():
    # issue 4 (tw_5961_001): the label search found a large wink on the raised small one and two smalls inside the
    # large one; the second small was taken beside two found winks of its colour by the coarse free-area test
    # alone (unexplained share, the found winks placed within a pixel: 0.069 of its disc, where a lower wink
    # leaves its crescent); main then reported three blue winks, the large one missed and its pair unjudged
    winks = synth_pile(PILE, OFFSET_MM)
    cam = default_camera(880, 495)
    m = measure_tiddlywinks(render(winks, cam, seed=2), cam)
    blue = [f for f in m.winks if f.color == "blue"]
    assert len(blue) == 2
    for w in winks:
        got = [f for f in blue if math.dist(f.center_mm, w.center_mm) < FOUND_TOL_MM]
        assert len(got) == 1, w.wink_id
    lower = min(blue, key=lambda f: math.dist(f.center_mm, winks[0].center_mm))
    upper = next(f for f in blue if f is not lower)
    assert lower.size == "large"
    # one colour, barely resolved: left undecided, never claimed the wrong way
    assert not (upper.wink_id in lower.above and lower.order_confidence.get(upper.wink_id, 0.0) >= 0.75)
