"""A flagged wink's size read with its colour's set: two large and four small to a colour (TW 2)."""

import json
import math
from pathlib import Path

import cv2
import pytest

from calibration.camera import CameraModel
from vision.size_sets import SizeRead, sizes_by_colour_set
from vision.tiddlywinks import measure_tiddlywinks

FLAGGED = 0.6  # the pipeline's flagged size confidence
SURE = 0.9  # from here a size counts as measured
SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"
MATCH_MM = 5.0


def _sure(color, size, n):
    return [SizeRead(color, size, True) for _ in range(n)]


def test_two_sure_large_make_any_other_wink_of_the_colour_small_and_sure():
    reads = _sure("red", "large", 2) + _sure("red", "small", 1) + [SizeRead("red", "large", False, 0.9)]
    v = sizes_by_colour_set(reads, FLAGGED)
    assert v[:3] == [None, None, None]
    assert v[3].size == "small" and v[3].confidence >= SURE and v[3].bound_by_set


def test_four_sure_small_make_a_fifth_wink_large():
    reads = _sure("blue", "small", 4) + [SizeRead("blue", "small", False, 0.2)]
    v = sizes_by_colour_set(reads, FLAGGED)[4]
    assert v.size == "large" and v.confidence >= SURE


def test_the_bound_is_only_as_sure_as_the_reads_it_rests_on():
    reads = _sure("red", "large", 2) + [SizeRead("red", "large", False, 0.9)]
    v = sizes_by_colour_set(reads, FLAGGED, reliability=0.9)[2]
    assert v.size == "small" and v.confidence < SURE


def test_flagged_winks_of_one_colour_respect_the_bound_together_weakest_gives_way():
    # six greens seen, three sure small: exactly two of the three flagged "large" are large
    reads = _sure("green", "small", 3) + [SizeRead("green", "large", False, f) for f in (1.0, 0.8, 1.0)]
    v = sizes_by_colour_set(reads, FLAGGED)[3:]
    assert [x.size for x in v] == ["large", "small", "large"]
    assert all(x.confidence <= FLAGGED for x in v)  # the set does not say which: all stay flagged


def test_fewer_than_six_seen_leaves_a_flagged_guess_flagged():
    reads = _sure("yellow", "large", 1) + [SizeRead("yellow", "large", False, 0.5)]
    v = sizes_by_colour_set(reads, FLAGGED)[1]
    assert v.size == "large" and v.confidence <= FLAGGED


def test_a_colour_past_its_bound_is_read_wink_by_wink():
    # three sure large (one read is wrong, or a phantom): no assignment fits, nothing is decided by the set
    reads = _sure("red", "large", 3) + [SizeRead("red", "large", False, 0.9)]
    v = sizes_by_colour_set(reads, FLAGGED)[3]
    assert v.size == "large" and v.confidence <= FLAGGED and not v.bound_by_set


def test_colours_are_separate_sets():
    reads = _sure("red", "large", 2) + [SizeRead("blue", "large", False, 0.9)]
    v = sizes_by_colour_set(reads, FLAGGED)[2]
    assert v.size == "large" and v.confidence <= FLAGGED


@pytest.mark.skipif(not (SAMPLES / "rigB_01_squops.jpg").exists(), reason="no committed sample")
def test_a_green_pile_holds_no_third_large_green():
    # rigB_01: a small green on a green pile, flagged, was guessed large beside two flagged large greens
    path = SAMPLES / "rigB_01_squops.jpg"
    doc = json.loads(path.with_suffix(".json").read_text())
    m = measure_tiddlywinks(cv2.imread(str(path)), CameraModel.from_dict(doc["calibration"]["camera"]))
    greens = [w for w in m.winks if w.color == "green"]
    assert sum(w.size == "large" for w in greens) <= 2
    truth = next(p for p in doc["pieces"] if p["id"] == "green-S2")
    d, w = min((math.dist(truth["center_mm"], w.center_mm), w) for w in greens)
    assert d < MATCH_MM
    assert w.size == "small"
