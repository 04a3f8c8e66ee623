"""Pieces stacked on an upright pyramid: found from the colour step at the upper piece's rim (vision/pyramids_stack)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.pyramids import pips, upright_pose
from vision.pyramids import detect_pyramids
from vision.pyramids_stack import StackParams, find_stacked_piece

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "ice_tiddlywinks"
CENTER_TOL_MM = 3.0  # base centre of a found piece against the truth's


def _load(name):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    return (
        cv2.imread(str(SAMPLES / f"{name}.jpg")),
        truth,
        CameraModel.from_dict(truth["calibration"]["camera"]),
    )


def _crop(frame, cam, center_px, half_wh=(120, 100)):
    cx, cy = (round(v) for v in center_px)
    x0, y0, x1, y1 = cx - half_wh[0], cy - half_wh[1], cx + half_wh[0], cy + half_wh[1]
    d = cam.to_dict()
    d["K"][0][2] -= x0
    d["K"][1][2] -= y0
    d["image_size_wh_px"] = [x1 - x0, y1 - y0]
    return np.ascontiguousarray(frame[y0:y1, x0:x1]), CameraModel.from_dict(d)


def _truth_pose(p):
    c = np.asarray(p["base_corners_mm"])
    d = c[1] - c[0]
    return upright_pose(p["size"], p["center_mm"], float(np.arctan2(d[1], d[0])))


@pytest.fixture(scope="module")
def black_white_stack():
    """ice_07: a white medium piece stacked on a black large upright one (p11 on p10)."""
    frame, truth, cam = _load("ice_07_black_white")
    by_id = {p["id"]: p for p in truth["pieces"]}
    lower, upper = by_id["p10"], by_id["p11"]
    assert upper["pose"] == "nested" and upper["supported_by"] == ["p10"]
    crop, crop_cam = _crop(frame, cam, lower["center_px"])
    return lower, upper, detect_pyramids(crop, crop_cam)


def test_stacked_piece_is_found_with_its_size_colour_and_support(black_white_stack):
    lower, upper, dets = black_white_stack
    nested = [d for d in dets if d.pose == "nested"]
    assert len(nested) == 1
    top = nested[0]
    assert top.size == upper["size"]
    assert top.color == upper["color"]
    assert np.linalg.norm(np.subtract(top.center_mm, upper["center_mm"][:2])) < CENTER_TOL_MM
    base = next(d for d in dets if d.piece_id == top.supported_by[0])
    assert base.pose == "upright" and base.size == lower["size"]
    assert base.color == lower["color"]  # measured on its skirt, below the upper piece's rim
    assert top.points == pips(upper["size"])  # a stacked piece scores its own pips, not double


def test_upright_pieces_alone_get_no_stacked_piece():
    frame, truth, cam = _load("ice_01_upright")
    assert all(p["pose"] == "upright" for p in truth["pieces"])
    for p in truth["pieces"]:
        v = find_stacked_piece(frame, cam, _truth_pose(p))
        assert v.verdict == "none", (p["id"], v.evidence.step_norm if v.evidence else None)


def test_stack_evidence_rim_lies_inside_the_lower_piece_and_picks_the_true_size():
    frame, truth, cam = _load("ice_07_black_white")
    by_id = {p["id"]: p for p in truth["pieces"]}
    v = find_stacked_piece(frame, cam, _truth_pose(by_id["p10"]))
    assert v.verdict == "stacked"
    assert v.evidence.size == by_id["p11"]["size"]
    # the upper piece rides up the lower faces: its base centre is above the lower one's, at the same plan point
    np.testing.assert_allclose(v.evidence.upper.base_center_mm[:2], by_id["p10"]["center_mm"][:2], atol=1e-6)
    assert v.evidence.upper.base_center_mm[2] > 5.0
    assert not (v.evidence.cap_sel & v.evidence.skirt_sel).any()


def test_stack_params_are_validated():
    with pytest.raises(ValueError):
        StackParams(min_step=0.5, uncertain_step=0.8)
