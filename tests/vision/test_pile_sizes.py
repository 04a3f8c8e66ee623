"""A four-wink pile whose two winks of one colour lie one on the other, a third colour between them (seed 4040's
tw_4040_001): a small green on the mat, a small red on it, a small blue on the red, a large red over the blue and
the small red. The two reds' colours join: the small red shows only an arc of its rim, which both radii's
circles cross, and the label stage read it large, 3 mm off (``vision.winks.other_radius_fits_better``)."""

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from synth import SynthWink, default_camera, render

from calibration.camera import CameraModel

import vision.tiddlywinks as tiddlywinks
from vision.tiddlywinks import TiddlywinksParams, measure_tiddlywinks
from vision.winks import set_order

#: The pile's winks as seed 4040 posed them (plan centres, mid-plane heights, tilts, azimuths), bottom-up.
PILE = (
    ("G", "green", "small", (234.4, -158.2), 0.75, 0.0, 0.0),
    ("Rs", "red", "small", (244.1, -165.4), 1.74, 7.2, 144.0),
    ("B", "blue", "small", (251.8, -161.7), 2.88, 15.6, 205.0),
    ("Rl", "red", "large", (250.4, -172.2), 4.81, 21.9, 83.0),
)
#: Which winks lie over which (truth).
UPPER_OF = {"Rl": {"B", "Rs"}, "B": {"Rs"}, "Rs": {"G"}}
#: Where the label stage put the small red in tw_4040_001, read large: 3.1 mm off, across its junction.
LARGE_READ_MM = np.array([247.0, -166.6])
#: A small wink's plan centre in a pile reads within about 1 mm; one read at the other radius is 3 mm off.
PLACE_TOL_MM = 1.5


def _pile() -> list[SynthWink]:
    return [SynthWink(i, c, s, xy, z_mm=z, tilt_deg=t, tilt_azimuth_deg=a) for i, c, s, xy, z, t, a in PILE]


def _measured_with(monkeypatch, stage: str, alter, seed: int):
    """The pile measured with ``tiddlywinks.<stage>`` followed by ``alter(candidates)``: a stage made to go as it
    went on tw_4040_001."""
    real = getattr(tiddlywinks, stage)

    def staged(cands, *args, **kwargs):
        out = real(cands, *args, **kwargs)
        alter(out if isinstance(out, list) else cands)
        return out
    monkeypatch.setattr(tiddlywinks, stage, staged)
    cam = default_camera(3840, 2160)
    return measure_tiddlywinks(render(_pile(), cam, seed=seed), cam)


def _small_red_read_large(cands) -> None:
    """The candidate stage on tw_4040_001: the small red found as a large one, 3 mm off."""
    for c in cands:
        if c.color == "red" and math.dist(c.center_mm, PILE[1][3]) < 4.0:
            c.size, c.center_mm = "large", LARGE_READ_MM.copy()


def _blue_over_the_large_red(winks) -> None:
    """The first (flat) read on tw_4040_001: the blue over the large red, sure (0.97)."""
    blue = next(w for w in winks if w.color == "blue")
    set_order(blue, _large_red(winks), 0.97)


def _large_red(winks):
    return min((w for w in winks if w.color == "red"), key=lambda w: math.dist(w.center_mm, PILE[3][3]))


@pytest.mark.parametrize("seed", [40, 41])
def test_a_small_wink_under_its_twin_read_large_is_refitted_small_where_its_rim_shows(monkeypatch, seed):
    # issue 4 (tw_4040_001): the lower red stayed large 3.3 mm off (and the blue on it was posed at 60 deg on
    # the large disc reaching under its centre); the small radius's circle runs along the arc its rim shows
    m = _measured_with(monkeypatch, "split_twin_blobs", _small_red_read_large, seed)
    reds = [w for w in m.winks if w.color == "red"]
    assert len(reds) == 2
    lower = min(reds, key=lambda w: math.dist(w.center_mm, PILE[1][3]))
    assert math.dist(lower.center_mm, PILE[1][3]) < PLACE_TOL_MM
    assert lower.size == "small"
    # and no order of the pile is claimed the wrong way round
    truth_of = {w.wink_id: min((p for p in PILE if p[1] == w.color),
                               key=lambda p: math.dist(w.center_mm, p[3]))[0] for w in m.winks}
    for w in m.winks:
        for lo in w.above:
            if w.order_confidence.get(lo, 1.0) >= TiddlywinksParams().order_confidence_min:
                assert truth_of[w.wink_id] not in UPPER_OF.get(truth_of[lo], set()), (w.wink_id, lo)


@pytest.mark.parametrize("seed", [40, 41])
def test_a_two_colour_order_in_a_pile_of_three_is_read_again_with_the_posed_rims(monkeypatch, seed):
    # issue 4 (tw_4040_001): the first read takes every wink flat; the large red rests 4.8 mm up, tilted 22 deg,
    # and the flat read put the blue under it over it at 0.97, which no later read looked at again
    m = _measured_with(monkeypatch, "decide_order", _blue_over_the_large_red, seed)
    blue, red = next(w for w in m.winks if w.color == "blue"), _large_red(m.winks)
    claimed = blue.order_confidence.get(red.wink_id, 0.0) >= TiddlywinksParams().order_confidence_min
    assert not (red.wink_id in blue.above and claimed)


SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"


def test_a_wink_the_colours_set_makes_small_is_judged_small_where_its_seen_arc_puts_it():
    # issue 4 (rigB_01_squops): three greens in a pile, green-S2 tilted 29 deg over both large ones, 9 % of its
    # outline seen; every green's size unconfirmed, it was fitted large (posed at 60 deg, 3.7 mm off) and its order
    # over green-L2 left undecided; the set (two large to a colour) read it small only at the end, in place
    truth = json.loads((SAMPLES / "rigB_01_squops.json").read_text())
    m = measure_tiddlywinks(cv2.imread(str(SAMPLES / "rigB_01_squops.jpg")),
                            CameraModel.from_dict(truth["calibration"]["camera"]))
    greens = {p["id"]: p for p in truth["pieces"] if p["color"] == "green"}
    got = {i: min((w for w in m.winks if w.color == "green"), key=lambda w: math.dist(w.center_mm, p["center_mm"]))
           for i, p in greens.items() if i in ("green-L1", "green-L2", "green-S2")}
    s2 = got["green-S2"]
    assert s2.size == "small"
    assert math.dist(s2.center_mm, greens["green-S2"]["center_mm"]) < PLACE_TOL_MM
    for lower in ("green-L1", "green-L2"):
        lo = got[lower]
        assert lo.wink_id in s2.above
        assert s2.order_confidence[lo.wink_id] >= TiddlywinksParams().order_confidence_min
