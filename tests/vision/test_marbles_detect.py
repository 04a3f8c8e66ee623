"""Ring marbles on the committed photos of sample_images/marbles (simulator truth beside each): counts,
on/off ring, marble vs tolley and positions in ring-frame millimetres, with the photo's camera as calibration;
and the ring found without one from its rim ellipse."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from calibration.camera import CameraModel
from vision.marbles import analyze_marbles
from vision.marbles_ring import detect_ring

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "marbles"
POSITION_TOL_MM = 5.0  # under a marble's radius (6.35 mm): each ball is placed on its own, not a neighbour's
MATCH_MM = 8.0
RING_CENTER_TOL_PX = 0.5

# image -> whether every marble count (on and off the ring) must be exact
CASES = {
    "marbles_01_group49_centre": True,  # the close-packed 49, zoomed in
    "marbles_03_group13": True,
    "marbles_06_midgame": False,  # whole ring, 6 px marbles, some knocked off onto earth
    "marbles_08_tolleys_centre": True,
}


def _load(name: str):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    frame = cv2.imread(str(SAMPLES / f"{name}.jpg"))
    return frame, truth, CameraModel.from_dict(truth["calibration"]["camera"])


@pytest.fixture(scope="module")
def analysed():
    cv2.setNumThreads(1)
    out = {}
    for name in CASES:
        frame, truth, cam = _load(name)
        out[name] = (truth, analyze_marbles(frame, cam, image_path=name))
    return out


def _pairs(truth, doc):
    A = np.array([p["center_mm"] for p in truth["pieces"]], float)
    B = np.array([p["center_mm"] for p in doc["pieces"]], float).reshape(-1, 2)
    D = np.linalg.norm(A[:, None] - B[None], axis=2)
    r, c = linear_sum_assignment(D)
    return [(truth["pieces"][i], doc["pieces"][j], D[i, j]) for i, j in zip(r, c) if D[i, j] <= MATCH_MM]


@pytest.mark.parametrize("name", list(CASES))
def test_counts(analysed, name):
    truth, doc = analysed[name]
    if CASES[name]:
        for key in ("marbles_on_ring", "marbles_off_ring", "tolleys_on_ring"):
            assert doc["counts"][key] == truth["counts"][key], key
    else:
        # whole-ring photos: within 3 of the truth, a ball whose kind is too close to call counting as either
        total_t = truth["counts"]["marbles_on_ring"] + truth["counts"]["marbles_off_ring"]
        rng = doc["count_ranges"]
        lo = rng["marbles_on_ring"][0] + rng["marbles_off_ring"][0]
        hi = rng["marbles_on_ring"][1] + rng["marbles_off_ring"][1]
        assert lo - 3 <= total_t <= hi + 3


@pytest.mark.parametrize("name", list(CASES))
def test_each_piece_kind_on_ring_and_position(analysed, name):
    truth, doc = analysed[name]
    pairs = _pairs(truth, doc)
    assert len(pairs) >= 0.9 * len(truth["pieces"])
    assert all(t["on_ring"] == f["on_ring"] for t, f, _ in pairs)
    kind_ok = sum(t["kind"] == f["kind"] for t, f, _ in pairs)
    # whole-ring photos give a marble 6 px: 12.7 vs 16-19 mm is then 6 vs 8-9 px, and tolleys are missed
    # (KNOWN LIMIT, see the bench); zoomed photos must classify every ball
    assert kind_ok >= (0.85 * len(pairs) if not CASES[name] else len(pairs))
    errs = np.array([d for _, _, d in pairs])
    assert np.median(errs) <= POSITION_TOL_MM / 2 and np.percentile(errs, 90) <= POSITION_TOL_MM


def test_document_shape(analysed):
    truth, doc = analysed["marbles_08_tolleys_centre"]
    assert doc["ring"]["center_px"] == pytest.approx(truth["ring"]["center_px"], abs=RING_CENTER_TOL_PX)
    for key in ("center", "axes"):
        assert doc["ring"]["ellipse_px"][key] == pytest.approx(truth["ring"]["ellipse_px"][key], abs=1.0)
    p = doc["pieces"][0]
    for key in ("id", "kind", "center_mm", "diameter_mm", "on_ring", "confidence", "center_px"):
        assert key in p
    assert {q["kind"] for q in doc["pieces"]} <= {"marble", "tolley"}
    assert all(0.0 <= q["confidence"] <= 1.0 for q in doc["pieces"])
    tolleys = [q for q in doc["pieces"] if q["kind"] == "tolley"]
    assert all(15.0 <= q["diameter_mm"] <= 21.0 for q in tolleys)


def test_ring_from_rim_without_calibration():
    frame, truth, _ = _load("marbles_06_midgame")
    ring = detect_ring(frame)
    e_t, e_f = truth["ring"]["ellipse_px"], ring.ellipse_px
    # the fitted ellipse is the projected ring edge within 3 % of its size
    size = 0.5 * sum(e_t["axes"])
    assert math.dist(e_f["center"], e_t["center"]) <= 0.03 * size
    assert 0.5 * sum(e_f["axes"]) == pytest.approx(size, rel=0.03)
    assert ring.source in ("ring_outline", "ring_sand_edge")
