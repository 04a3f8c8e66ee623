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


def test_a_label_disc_of_the_felts_hue_without_pigment_or_rim_is_dropped_and_a_blurred_wink_kept(monkeypatch):
    # issue 4 (tw_3436_000: green felt, 1.7 px motion blur): the blur lowers the felt's pixel noise, so the labels
    # gave the felt's class to the shade at the mat's end and made ragged discs of it (the code before kept
    # them as winks). Shade moves the felt in lightness; a wink's pigment moves it in chroma, however blurred.
    from types import SimpleNamespace

    import synth
    from vision.felt_cores import felt_label_rims
    from vision.winks import WinkCandidate

    monkeypatch.setitem(synth.WINK_BGR, "green", (60, 165, 45))
    cam = synth.default_camera()
    wink, shade = (120.0, 130.0), (-260.0, -90.0)
    img = synth.render([synth.SynthWink("green-S1", "green", "small", wink)], cam, seed=5).astype(np.float32)
    # the shade: felt a quarter darker on one side, fading over a wink's width
    q = cam.project_mm(np.array([[*shade, 0.0]]))[0]
    yy, xx = np.mgrid[0:img.shape[0], 0:img.shape[1]]
    g = (1 / (1 + np.exp(-(xx - q[0]) / 5.0)) * np.exp(-(yy - q[1]) ** 2 / (2 * 20.0 ** 2)))[..., None]
    img *= 1.0 - 0.25 * g
    kernel = np.zeros((5, 5), np.float32)
    kernel[2, :] = 1.0 / 5.0  # motion blur along the image rows
    img = cv2.filter2D(np.clip(img, 0, 255).astype(np.uint8), -1, kernel)
    cands = []
    for at, size in ((wink, "small"), (shade, "large")):
        c = WinkCandidate(color="green", size=size, center_mm=np.array(at), votes=0.5)
        c.edge_support, c.own_fraction = 0.5, 0.9
        cands.append(c)
    cs = SimpleNamespace(mat_class=2)  # green felt
    dropped = felt_label_rims(cands, cs, img, cam)
    assert [c.center_mm.tolist() for c in dropped] == [list(shade)]
    # the wink is kept by its pigment when its coarse centre is off by most of its radius (no rim fits there)
    cands[0].center_mm = np.array(wink) + (5.0, 0.0)
    assert [c.center_mm.tolist() for c in felt_label_rims(cands, cs, img, cam)] == [list(shade)]
    # a candidate the labels show whole is not asked
    cands[1].edge_support = 0.9
    assert felt_label_rims(cands, cs, img, cam) == []
