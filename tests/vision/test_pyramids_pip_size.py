"""A lying piece read one size small takes the size its pips name (issue 7, ``pyramids._pip_size``).

The table seen through the open base shortens a lying piece's silhouette from its base end; the apex end and the
row of moulded pips at each face's foot stay where the true size puts them. A larger reading on the apex whose
pips read their count's whole pattern clearly replaces the smaller one; a piece read at its true size is left.
The bench photo is the development set's ice_fresh_000 (``generate_ice_tiddlywinks`` with
``default_rng([7007, 0])``, as ``tableref bench`` makes it).
"""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.pyramids import base_mm, pips
from simulation.pyramids import generate_ice_tiddlywinks
from vision.pyramids import DEFAULT_PARAMS, _pip_size, _Verdict, apex_aligned_lying, detect_pyramids
from vision.pyramids_fit import PieceHypothesis
from vision.pyramids_pips import PipMap, count_pattern, named_count, pip_contrast

from tests.vision.test_pyramids_pips import MM_PER_PX, _lying_photo

# how far the switched piece's plan centroid may lie from the truth's (mm): the open-base reading's own error
CENTRE_TOL_MM = 4.0


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_a_lying_piece_at_its_true_pose_reads_its_own_counts_pattern(size):
    cam, photo, pose = _lying_photo(size)
    n, amplitude, cos = named_count(pip_contrast(PipMap(photo, MM_PER_PX), cam, pose))
    assert n == pips(size)
    assert amplitude >= DEFAULT_PARAMS.pip_switch_amplitude
    assert cos >= DEFAULT_PARAMS.pip_switch_cos


def test_the_patterns_of_a_row_of_two_and_of_three_are_opposite():
    # the other counts' sites share positions with the true row's: a row of three lifts count 1 too
    np.testing.assert_allclose(count_pattern(3), -count_pattern(2))
    assert count_pattern(3)[0] == pytest.approx(0.5)


@pytest.mark.parametrize(("size", "read_as"), [("large", "medium"), ("medium", "small"), ("large", "small")])
def test_a_lying_piece_read_smaller_on_its_apex_takes_the_size_its_pips_name(size, read_as):
    cam, photo, pose = _lying_photo(size)
    pm = PipMap(photo, MM_PER_PX)
    shrunk = apex_aligned_lying(PieceHypothesis("lying", size, (0.0, 0.0, 0.6)), read_as)
    verdict = _Verdict(pieces=[shrunk], iou=0.85, runner_up_iou=0.8, runner_up_desc="")
    larger = _pip_size(pm, cam, shrunk, verdict, DEFAULT_PARAMS)
    assert larger is not None and larger.size == size
    assert np.linalg.norm(larger.pose().apex_mm() - pose.apex_mm()) < 1e-6


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_a_lying_piece_read_at_its_true_size_is_left(size):
    cam, photo, _ = _lying_photo(size)
    pm = PipMap(photo, MM_PER_PX)
    true_fit = PieceHypothesis("lying", size, (0.0, 0.0, 0.6))
    larger = [apex_aligned_lying(true_fit, s) for s in ("medium", "large") if base_mm(s) > base_mm(size)]
    verdict = _Verdict(pieces=[true_fit], iou=0.85, runner_up_iou=0.8, runner_up_desc="", size_readings=larger)
    assert _pip_size(pm, cam, true_fit, verdict, DEFAULT_PARAMS) is None


def test_the_development_sets_green_large_read_medium_is_read_large(tmp_path_factory):
    # ice_fresh_000 p7, a green large lying alone: main read it medium (flagged): the foreground lost its base
    # end, and the large put on the medium's apex shows three pips at 8.3 median responses (the medium's own two
    # at -0.3), the pattern of a row of three (3.8 / -8.2 / 8.3)
    out = tmp_path_factory.mktemp("ice7007_0")
    generate_ice_tiddlywinks(np.random.default_rng([7007, 0]), out, "photo", (1920, 1080))
    truth = json.loads((out / "photo.json").read_text())
    cam = CameraModel.from_dict(truth["calibration"]["camera"])
    p = {q["id"]: q for q in truth["pieces"]}["p7"]
    assert (p["size"], p["pose"], p["color"]) == ("large", "lying", "green")
    # the plan centroid of the piece's five vertices, as the bench matches pieces
    plan = np.vstack([np.asarray(p["base_corners_mm"]), np.asarray(p["apex_mm"])[None]])[:, :2].mean(axis=0)
    dets = detect_pyramids(cv2.imread(str(out / "photo.jpg")), cam)
    near = [d for d in dets if d.pose == "lying" and math.dist(d.plan_centroid_mm, plan) < 15.0]
    assert near, "the lying piece was not found"
    d = min(near, key=lambda d: math.dist(d.plan_centroid_mm, plan))
    assert d.size == "large", (d.size, d.reasons)
    assert math.dist(d.plan_centroid_mm, plan) < CENTRE_TOL_MM
