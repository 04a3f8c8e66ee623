"""A one-colour order resting on one read alone, where a wink's size is unconfirmed and its other size cannot be
fitted to check the order against, is left undecided (TW I-13), not claimed."""

import math

from piles import synth_pile
from synth import default_camera, render

from vision.tiddlywinks import measure_tiddlywinks

#: tw_5961_001's pile (seed 5959), moved: blue-S3 resting on blue-L2, 10.7 mm apart (11.5 deg), at 2.1 mm per pixel
PILE = (("blue-L2", "blue", "large", (-42.73, -413.64)), ("blue-S3", "blue", "small", (-34.33, -420.21)))
OFFSET_MM = (250.0, 100.0)


def test_a_one_colour_order_on_one_read_and_an_unfittable_size_is_not_claimed():
    # main read both winks large (the raised small one 1.6 mm off, size unconfirmed, its small size not fittable)
    # and claimed the large one over it at 0.91: the cut rim alone 2.7 sigma the wrong way, the shadow 0.0, no other
    # cue read
    winks = synth_pile(PILE, OFFSET_MM)
    cam = default_camera(880, 495)
    m = measure_tiddlywinks(render(winks, cam, seed=3), cam)
    blue = [f for f in m.winks if f.color == "blue"]
    assert len(blue) == 2
    lower = min(blue, key=lambda f: math.dist(f.center_mm, winks[0].center_mm))
    upper = next(f for f in blue if f is not lower)
    assert math.dist(lower.center_mm, winks[0].center_mm) < 2.5
    assert math.dist(upper.center_mm, winks[1].center_mm) < 2.5
    assert not (upper.wink_id in lower.above and lower.order_confidence.get(upper.wink_id, 0.0) >= 0.75)
