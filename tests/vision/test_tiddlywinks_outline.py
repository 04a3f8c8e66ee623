"""Issue 4 fixes: sizes from the outline's own edge, same-colour pairs, pots that are not a wink colour, and an
uncertainty that covers the systematic errors (small synthetic renders and the committed samples)."""

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from api.analysis import squidge_off_verdict
from calibration.camera import CameraModel
from geometry import tiddlywinks as tw
from geometry.constants import MAT_HALF_WIDTH_MM
from geometry.records import scene_from_document
from synth import SynthWink, default_camera, render, squop_tilt
from vision.tiddlywinks import measure_tiddlywinks, scene_from_measurement

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"


def _sample(name: str):
    path = SAMPLES / f"{name}.jpg"
    if not path.exists():
        pytest.skip(f"no committed sample {name}")
    doc = json.loads(path.with_suffix(".json").read_text())
    return doc, cv2.imread(str(path)), CameraModel.from_dict(doc["calibration"]["camera"])


def _nearest(found, center_mm, color):
    same = [w for w in found if w.color == color]
    return min(same, key=lambda w: math.dist(w.center_mm, center_mm), default=None)


def test_felt_coloured_winks_at_the_mat_edge_keep_their_size():
    # green on green felt, the outline a few mm from the felt's edge: the mat edge must not pull the fit
    cam = default_camera(1920, 1080)
    W = MAT_HALF_WIDTH_MM
    winks = [SynthWink("gs", "green", "small", (520.0, W - 13.0)),
             SynthWink("gl", "green", "large", (-480.0, -(W - 16.0)))]
    m = measure_tiddlywinks(render(winks, cam, seed=21), cam)
    for t in winks:
        w = _nearest(m.winks, t.center_mm, t.color)
        assert w is not None and math.dist(w.center_mm, t.center_mm) < 1.0
        assert w.size == t.size


def test_same_colour_small_pair_is_two_small_winks():
    # a small wink squopping another of its colour, 6.5 mm apart: one large disc would cover the blob
    cam = default_camera(1920, 1080)
    lower = SynthWink("lo", "yellow", "small", (250.0, 60.0))
    upper = squop_tilt(SynthWink("up", "yellow", "small", (250.0, 66.5)), lower)
    m = measure_tiddlywinks(render([lower, upper], cam, seed=8), cam)
    yellows = [w for w in m.winks if w.color == "yellow"]
    assert len(yellows) == 2
    assert all(w.size == "small" for w in yellows)
    for t in (lower, upper):
        assert min(math.dist(w.center_mm, t.center_mm) for w in yellows) < 2.0


def test_winks_in_a_grey_pot_are_reported_potted():
    # two blue winks in a grey pot (one on the floor, one on the rim) cover much of the opening: the pot's
    # colour comes from its inner wall, so they are not taken for the inside of a blue pot
    doc, frame, cam = _sample("rigB_02_potted")
    m = measure_tiddlywinks(frame, cam)
    potted_truth = [p for p in doc["pieces"] if p["potted"]]
    potted = [w for w in m.winks if w.potted]
    assert len(potted_truth) == 2
    assert sorted(w.color for w in potted) == sorted(p["color"] for p in potted_truth)


def test_self_calibrated_squidge_off_within_a_quarter_millimetre_is_too_close_to_call():
    # rigA_00: true edge gap 0.21 mm between the two nearest winks; with the mat's own calibration the
    # measurement cannot tell them apart and must say so
    doc, frame, _ = _sample("rigA_00_squidge_off")
    truth = scene_from_document(doc)
    keys = sorted(tw.edge_distance_to_pot_mm(w, truth.pot_center_mm) for w in truth.winks if not w.unplayed)
    assert keys[1] - keys[0] < 0.5
    m = measure_tiddlywinks(frame, None)
    verdict = squidge_off_verdict(scene_from_measurement(m))
    assert verdict is not None and verdict["winner"] is None


@pytest.mark.parametrize("name", ["rigA_00_squidge_off", "rigD_00_squidge_off", "rigC_01_squops"])
def test_reported_uncertainty_covers_the_error(name):
    doc, frame, cam = _sample(name)
    m = measure_tiddlywinks(frame, cam)
    z = []
    for p in doc["pieces"]:
        if p["potted"] or (p["off_mat"] and p["unplayed"]):
            continue
        w = _nearest(m.winks, p["center_mm"], p["color"])
        if w is None or w.size != p["size"]:
            continue
        e = math.dist(w.center_mm, p["center_mm"])
        if e < 5.0:
            z.append(e / w.sigma_mm)
    assert len(z) >= 8
    z = np.asarray(z)
    assert float(np.max(z)) < 3.5  # no wink measured far outside its stated uncertainty
    assert float(np.mean(z > 2.0)) <= 0.15
