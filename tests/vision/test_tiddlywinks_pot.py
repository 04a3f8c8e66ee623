"""Winks on the pot's rim and in its cup, read at their own heights (vision/pot_rim.py, vision/potted.py)."""

import json
import math
from pathlib import Path

import cv2
import pytest

from calibration.camera import CameraModel
from synth import SynthWink, default_camera, render
from vision.pot_rim import RIM_Z_MM
from vision.tiddlywinks import measure_tiddlywinks

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"


def _sample(name: str):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    m = measure_tiddlywinks(cv2.imread(str(SAMPLES / f"{name}.jpg")),
                            CameraModel.from_dict(truth["calibration"]["camera"]))
    return truth, m


def test_a_wink_on_the_rim_of_a_pot_of_its_own_colour_is_found_there():
    # rigD_03: a blue pot holding a blue wink on its floor (hidden in the pot's own colour) and a blue wink
    # balanced on the rim; the rim wink overhangs the cup and shows its whole outline
    truth, m = _sample("rigD_03_potted")
    rim = [p for p in truth["pieces"] if p["potted"] and p["z_mm"] > 30.0]
    assert [p["color"] for p in rim] == ["blue"]
    got = [w for w in m.winks if w.potted and w.z_mm > 30.0]
    assert len(got) == 1 and got[0].color == "blue" and got[0].size == rim[0]["size"]
    assert got[0].z_mm == pytest.approx(RIM_Z_MM)
    assert math.dist(got[0].center_mm, rim[0]["center_mm"]) < 3.0  # the rim search steps 1 mm by 4 degrees


def test_only_the_wink_on_the_rim_is_read_on_the_rim():
    # rigA_02: a black pot, a small red wink balanced on its rim, a blue and a large green wink on its floor
    truth, m = _sample("rigA_02_potted")
    rim = [p for p in truth["pieces"] if p["potted"] and p["z_mm"] > 30.0]
    assert [(p["color"], p["size"]) for p in rim] == [("red", "small")]
    got = [w for w in m.winks if w.potted and w.z_mm > 30.0]
    assert [(w.color, w.size) for w in got] == [("red", "small")]
    assert math.dist(got[0].center_mm, rim[0]["center_mm"]) < 3.0
    assert sorted(w.color for w in m.winks if w.potted) == sorted(p["color"] for p in truth["pieces"] if p["potted"])


def test_an_empty_rim_and_a_wink_behind_the_pot_are_no_rim_winks():
    # a wink on the mat just behind the pot (as the camera sees it) shows beside the rim in the image, but the
    # pot hides part of its outline: no whole outline at the rim's height
    cam = default_camera(1920, 1080)
    winks = [SynthWink("b", "red", "small", (0.0, 30.0)), SynthWink("n", "blue", "large", (60.0, -10.0))]
    img = render(winks, cam, seed=5)
    m = measure_tiddlywinks(img, cam)
    assert not [w for w in m.winks if w.potted]


def test_winks_in_the_cup_are_sized_by_their_outline_at_their_height():
    # rigA_02: a large green wink lies in the cup on top of another; the cup's colour regions saw it as small
    truth, m = _sample("rigA_02_potted")
    want = sorted((p["color"], p["size"]) for p in truth["pieces"] if p["potted"])
    assert ("green", "large") in want
    assert sorted((w.color, w.size) for w in m.winks if w.potted) == want
    # sized, yet still reported as not measured on the mat's terms: part of the outline is hidden in the cup
    assert all(w.size_confidence <= 0.6 for w in m.winks if w.potted)


def test_a_wink_in_the_cup_covered_but_for_a_crescent_is_counted():
    # a yellow wink on the cup's floor, a red one lying on it shifted by 3 mm (4K): the yellow shows
    # only as a crescent beside the red, too thin for a disc of its own
    cam = default_camera(3840, 2160)
    winks = [SynthWink("y", "yellow", "small", (0.0, 0.0), z_mm=3.25, potted=True),
             SynthWink("r", "red", "small", (3.0, 1.0), z_mm=4.75, potted=True),
             SynthWink("n", "blue", "large", (200.0, -60.0))]
    m = measure_tiddlywinks(render(winks, cam, seed=6), cam)
    assert sorted(w.color for w in m.winks if w.potted) == ["red", "yellow"]
    assert all(math.hypot(*w.center_mm) < 24.0 for w in m.winks if w.potted)
