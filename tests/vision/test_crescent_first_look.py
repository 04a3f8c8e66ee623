"""The crescent search's label gate (vision/crescents._may_show_crescents) skips only uppers the first look
skips."""

import math

import numpy as np

import vision.crescents as crescents
from synth import SynthWink, default_camera, render, squop_tilt
from vision.tiddlywinks import measure_tiddlywinks

POSITION_TOL_MM = 0.01  # the same fit on the same picture: float order only


def _lower_found(winks, lower: SynthWink) -> bool:
    return any(w.color == lower.color and w.size == lower.size and math.dist(w.center_mm, lower.center_mm) < 3.0
               for w in winks)


def test_the_label_gate_changes_no_wink_a_crescent_shows(monkeypatch):
    # a small blue wink under a large red one shows only a crescent about 3.5 mm wide beside it (found by the
    # crescent search alone), among lone winks whose first look finds nothing
    cam = default_camera(1920, 1080)
    lower = SynthWink("lo", "blue", "small", (250.0, 120.0))
    upper = squop_tilt(SynthWink("up", "red", "large", (256.5, 120.0)), lower)
    lone = [SynthWink("g1", "green", "large", (-300.0, -150.0)), SynthWink("y1", "yellow", "small", (100.0, -250.0))]
    img = render([lower, upper, *lone], cam, seed=7)
    gated = measure_tiddlywinks(img, cam).winks
    monkeypatch.setattr(crescents, "_may_show_crescents", lambda cps, *args: np.ones(len(cps), bool))
    full = measure_tiddlywinks(img, cam).winks
    monkeypatch.setattr(crescents, "_may_show_crescents", lambda cps, *args: np.zeros(len(cps), bool))
    assert not _lower_found(measure_tiddlywinks(img, cam).winks, lower)  # only the crescent search finds it
    assert _lower_found(gated, lower)
    key = lambda w: (w.color, w.size, round(w.center_mm[0]), round(w.center_mm[1]))  # noqa: E731
    gated, full = sorted(gated, key=key), sorted(full, key=key)
    assert [(w.color, w.size, w.above) for w in gated] == [(w.color, w.size, w.above) for w in full]
    for a, b in zip(gated, full):
        np.testing.assert_allclose(a.center_mm, b.center_mm, atol=POSITION_TOL_MM)
