"""Winks the colour labels left neutral, found by their shape (vision/felt_discs.py)."""

import json
import math
from pathlib import Path

import cv2
import pytest

from calibration.camera import CameraModel
from vision.tiddlywinks import FAINT_OUTLINE_SIGMA_MM, measure_tiddlywinks

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"


@pytest.mark.parametrize("name, wink_id", [("rigD_02_play", "green-S4"), ("rigE_00_squops", "green-S1")])
def test_a_green_wink_on_noisy_green_felt_is_found_by_its_shape(name, wink_id):
    # the wink is lighter than the felt, but by less than the labels' margin for the felt's own hue on this
    # noisy felt: its pixels are neutral foreground, a lone disc of a small wink's radius
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    m = measure_tiddlywinks(cv2.imread(str(SAMPLES / f"{name}.jpg")),
                            CameraModel.from_dict(truth["calibration"]["camera"]))
    want = next(p for p in truth["pieces"] if p["id"] == wink_id)
    near = [w for w in m.winks if math.dist(w.center_mm, want["center_mm"]) < 5.0]
    assert len(near) == 1
    got = near[0]
    assert (got.color, got.size) == ("green", "small")
    assert math.dist(got.center_mm, want["center_mm"]) < 1.0
    # found by its shape alone: its uncertainty and confidence say so
    assert got.sigma_mm >= FAINT_OUTLINE_SIGMA_MM and got.confidence <= 0.8
    # and nothing else is added: every found wink is a wink of the truth
    pieces = [p for p in truth["pieces"] if truth["render"]["visible_px"].get(p["id"], 0) >= 12]
    assert all(any(math.dist(w.center_mm, p["center_mm"]) < 5.0 or (w.potted and p["potted"]) for p in pieces)
               for w in m.winks)
