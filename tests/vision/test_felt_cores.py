"""Winks of the felt's hue found from their pigment core, read by their rim in chromaticity (vision/felt_cores.py)."""

import json
import math
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from vision.colour import CLASS_NEUTRAL
from vision.felt_cores import chroma_profiles
from vision.tiddlywinks import measure_tiddlywinks

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"


def test_a_green_wink_whose_halo_joins_a_neighbours_is_found_by_its_core():
    # issue 4 (rigA_03_edges): green winks waiting in their corner on green felt; the labels colour only their
    # cores, and the neutral halo (blend and shadow) of the small one joins the large one beside it, so neither
    # the circle search nor the lone-disc search saw it (the code before missed it)
    truth = json.loads((SAMPLES / "rigA_03_edges.json").read_text())
    m = measure_tiddlywinks(cv2.imread(str(SAMPLES / "rigA_03_edges.jpg")),
                            CameraModel.from_dict(truth["calibration"]["camera"]))
    want = next(p for p in truth["pieces"] if p["id"] == "green-S1")
    near = [w for w in m.winks if math.dist(w.center_mm, want["center_mm"]) < 5.0]
    assert len(near) == 1
    assert near[0].color == "green" and not near[0].potted
    assert math.dist(near[0].center_mm, want["center_mm"]) < 1.5
    assert near[0].confidence <= 0.8  # found by its rim alone: flagged
    # nothing is added where there is no wink
    pieces = [p for p in truth["pieces"] if truth["render"]["visible_px"].get(p["id"], 0) >= 12]
    assert all(any(math.dist(w.center_mm, p["center_mm"]) < 6.0 or (w.potted and p["potted"]) for p in pieces)
               for w in m.winks)


def test_a_shadow_moves_the_felt_in_lab_chroma_far_less_than_a_pigment_does():
    # pixels of rigA_03_edges beside green-S1: the felt, the shadow the wink casts on it, the wink's top. In BGR
    # the shadow departs from the felt about as far as the wink does (a lightness rim fit takes it for the wink);
    # in Lab's chromatic plane it stays near the felt
    felt, shadow, pigment = np.array([[49.0, 96.0, 47.0], [30.0, 85.0, 30.0], [62.0, 128.0, 39.0]])
    assert np.linalg.norm(shadow - felt) > 0.7 * np.linalg.norm(pigment - felt)
    ab = chroma_profiles(np.stack([felt, shadow, pigment])[None].astype(np.float32))[0]
    assert np.all(ab[:, 0] == 0.0)
    assert np.linalg.norm(ab[2] - ab[0]) > 2.5 * np.linalg.norm(ab[1] - ab[0])


def test_a_lone_wink_of_the_felts_hue_the_labels_left_neutral_is_found_by_its_inside(monkeypatch):
    # issue 4 (tw_9092_000 green-S4): a lone green wink on green felt, its pigment short of the labels' margin, so
    # every pixel of it is neutral and its blurred disc too small for the lone-disc search (the code before
    # missed it); its inside, more of the felt's own hue, seeds the chromatic rim fit
    import synth

    monkeypatch.setitem(synth.WINK_BGR, "green", (60, 150, 45))  # the felt (60, 120, 45), a little greener
    cam = synth.default_camera()
    want = (120.0, 130.0)
    winks = [synth.SynthWink("blue-L1", "blue", "large", (-300.0, 100.0)),
             synth.SynthWink("red-S1", "red", "small", (250.0, -120.0)),
             synth.SynthWink("yellow-S1", "yellow", "small", (-200.0, -200.0)),
             synth.SynthWink("green-S1", "green", "small", want)]
    m = measure_tiddlywinks(synth.render(winks, cam, seed=4), cam)
    at = np.round(m.grid.ortho_from_table(np.array([want]))[0]).astype(int)
    assert m.colour.labels[at[1], at[0]] == CLASS_NEUTRAL  # the case: no pixel of the felt's class
    near = [w for w in m.winks if math.dist(w.center_mm, want) < 5.0]
    assert len(near) == 1
    assert near[0].color == "green" and math.dist(near[0].center_mm, want) < 1.5
    assert near[0].confidence <= 0.8  # found by its rim alone: flagged
    assert len(m.winks) == len(winks)
