"""A wink read twice (its outline cut by the mat's edge band) is not reported as a squop of two (seed 8989)."""

import numpy as np

from synth import default_camera
from vision.hidden_twins import forget, hidden_twins
from vision.winks import WinkCandidate, WinkDetectorParams

#: What blur leaves resolvable beyond an upper wink's rim, as the detector uses it.
MIN_CRESCENT_PX = WinkDetectorParams().min_crescent_px


def _wink(wid, color, center_mm, z_mm, cam, above=()):
    w = WinkCandidate(color=color, size="large", center_mm=np.array(center_mm, float), votes=1.0, wink_id=wid,
                      above=list(above), z_mm=z_mm)
    w.order_confidence = {a: 0.8 for a in above}
    w.center_px = cam.project_mm(np.array([[center_mm[0], center_mm[1], z_mm]]))[0]
    return w


def test_a_lower_twin_inside_its_uppers_image_disc_is_dropped_and_forgotten():
    # tw_8990_000: two yellow larges 9.5 mm apart in plan, the upper lifted onto the lower, both fitted to the
    # one outline in the image (their image centres 0.1 px apart): the lower shows nothing of itself
    cam = default_camera(1920, 1080)
    lower = _wink("yellow-L1", "yellow", (-851.5, -446.5), 0.75, cam)
    upper = _wink("yellow-L2", "yellow", (-847.9, -437.7), 2.5, cam, above=("yellow-L1",))
    upper.center_px = lower.center_px + np.array([0.1, 0.03])
    lower.order_confidence = {"yellow-L2": 0.8}
    gone = hidden_twins([upper, lower], cam, MIN_CRESCENT_PX)
    assert gone == [lower]
    forget([upper], gone)
    assert upper.above == [] and upper.order_confidence == {}


def test_a_real_squop_and_another_colour_under_are_kept():
    cam = default_camera(1920, 1080)
    # a same-colour lower wink reaching 4 mm beyond its upper's rim shows a crescent of a few pixels
    lower = _wink("yellow-L1", "yellow", (100.0, 50.0), 0.75, cam)
    upper = _wink("yellow-L2", "yellow", (104.0, 50.0), 2.25, cam, above=("yellow-L1",))
    # a wink of another colour wholly under a large one is another matter (its colour, not this rule)
    small = WinkCandidate(color="red", size="small", center_mm=np.array([-200.0, 0.0]), votes=1.0,
                          wink_id="red-S1")
    big = _wink("blue-L1", "blue", (-200.0, 0.0), 2.25, cam, above=("red-S1",))
    assert hidden_twins([upper, lower, small, big], cam, MIN_CRESCENT_PX) == []
