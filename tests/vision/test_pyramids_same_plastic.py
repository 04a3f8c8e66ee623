"""Pieces of one plastic on each other (issue 7; seed 9393's silent errors): no colour edge between them, so the
pips decide or flag (vision/pyramids._pair_pip_rival, vision/pyramids_stack.larger_piece_under and the lower
piece's settling on its own pips).

The photos are the bench's seed 9393 renders (``generate_ice_tiddlywinks`` with ``default_rng([9393, i])``, as
``tableref bench --seed 9393`` makes them), rendered here at full size: the pips are read against the whole
photo's median dot response, which a crop would change.
"""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from crops import crop_with_camera
from geometry.pyramids import lying_pose, upright_pose
from simulation.pyramids import generate_ice_tiddlywinks
from vision.pyramids import _pair_pip_rival, _Verdict, DEFAULT_PARAMS, detect_pyramids
from vision.pyramids_fit import PieceHypothesis
from vision.pyramids_pips import PipMap
from vision.pyramids_stack import StackParams, find_stacked_piece

SETTLED_TOL_MM = 0.5  # a settling step is 0.25 mm


def _render(tmp_path_factory, index: int):
    out = tmp_path_factory.mktemp(f"ice9393_{index}")
    generate_ice_tiddlywinks(np.random.default_rng([9393, index]), out, "photo", (1920, 1080))
    truth = json.loads((out / "photo.json").read_text())
    return cv2.imread(str(out / "photo.jpg")), truth, CameraModel.from_dict(truth["calibration"]["camera"])


@pytest.fixture(scope="module")
def photo_005(tmp_path_factory):
    return _render(tmp_path_factory, 5)


def _lying_from_truth(p) -> PieceHypothesis:
    # lying_pose: xy the plan centroid of the face it rests on (its vertices on the table), the apex along the
    # plan direction yaw - 90 deg from the base's centre
    v = np.vstack([np.asarray(p["base_corners_mm"]), np.asarray(p["apex_mm"])[None]])
    c = v[v[:, 2] < 0.5, :2].mean(axis=0)
    axis = v[4, :2] - v[:4, :2].mean(axis=0)
    yaw = math.atan2(axis[1], axis[0]) + math.pi / 2
    hyp = PieceHypothesis("lying", p["size"], (float(c[0]), float(c[1]), yaw))
    assert np.allclose(hyp.pose().apex_mm(), p["apex_mm"], atol=0.5)
    return hyp


def test_a_pair_read_with_its_roles_swapped_is_flagged_by_the_lying_pieces_pips(photo_005):
    # p8 (orange small) lies, p9 (orange small) stands on it; main read an orange medium lying at p9's place and a
    # small leaning on it where p8 lies (0.786 against 0.762 for the truth's reading: not flagged)
    frame, truth, cam = photo_005
    by_id = {p["id"]: p for p in truth["pieces"]}
    assert (by_id["p8"]["pose"], by_id["p9"]["pose"]) == ("lying", "standing_on_lying")
    right_lying = _lying_from_truth(by_id["p8"])
    leaning = PieceHypothesis("tilted", "small", (54.6, 116.0, math.radians(-30.0), math.radians(28.0)))
    swapped = [PieceHypothesis("lying", "medium", (55.5, 119.6, math.radians(318.0))),
               PieceHypothesis("tilted", "small", (60.6, 140.1, math.radians(214.0), math.radians(31.0)))]
    # the swapped reading's lying piece covers p9's place, the right one lies where p8 does
    assert math.dist(swapped[0].params[:2], by_id["p9"]["center_mm"][:2]) < 5.0
    pips = PipMap(frame, cam.mm_per_px_at((0.0, 0.0)))

    def verdict(pieces, rival, gap):
        return _Verdict(pieces=pieces, iou=0.786, runner_up_iou=0.786 - gap, runner_up_desc="", rivals=[(0.786 - gap, rival)])

    why = _pair_pip_rival(pips, cam, verdict(swapped, [right_lying, leaning], 0.024), DEFAULT_PARAMS)
    assert why is not None and "small" in why
    # the right reading is not doubted by the swapped one's pips, and a rival far behind is no rival
    assert _pair_pip_rival(pips, cam, verdict([right_lying, leaning], swapped, 0.024), DEFAULT_PARAMS) is None
    assert _pair_pip_rival(pips, cam, verdict(swapped, [right_lying, leaning], 0.2), DEFAULT_PARAMS) is None


def test_a_stacked_piece_of_the_lower_ones_plastic_is_found_from_the_fitted_pose(photo_005):
    # p13 (orange small) sits on p12 (orange large upright) whose own pips show at only 2.6-2.8: the pipeline's
    # fit, 0.4 mm off, was not settled and read the small piece's pips at 3.5 (flagged as possible at most)
    frame, truth, cam = photo_005
    by_id = {p["id"]: p for p in truth["pieces"]}
    low, top = by_id["p12"], by_id["p13"]
    assert top["pose"] == "nested" and top["supported_by"] == ["p12"] and top["color"] == low["color"]
    c = np.asarray(low["base_corners_mm"])
    yaw = math.atan2(c[1][1] - c[0][1], c[1][0] - c[0][0])
    fitted = upright_pose("large", (low["center_mm"][0] - 0.23, low["center_mm"][1] - 0.34), yaw)
    v = find_stacked_piece(frame, cam, fitted, StackParams(), PipMap(frame, cam.mm_per_px_at((0.0, 0.0))))
    assert v.verdict == "stacked" and v.evidence.size == top["size"]
    assert np.linalg.norm(v.evidence.upper.base_center_mm[:2] - np.asarray(top["center_mm"][:2])) < SETTLED_TOL_MM


def test_an_opaque_cap_on_a_piece_the_wood_hides_is_flagged(tmp_path_factory):
    # p15 (black small) sits on p14 (orange medium upright) over red-brown wood: only the black cap is segmented,
    # and main read it a black small on the table, unflagged; the medium's own pips show round it
    frame, truth, cam = _render(tmp_path_factory, 2)
    by_id = {p["id"]: p for p in truth["pieces"]}
    low, top = by_id["p14"], by_id["p15"]
    assert (top["pose"], top["color"], low["color"]) == ("nested", "black", "orange")
    crop, crop_cam = crop_with_camera(frame, cam, low["center_px"])
    dets = detect_pyramids(crop, crop_cam)
    near = [d for d in dets if np.linalg.norm(np.subtract(d.plan_centroid_mm, low["center_mm"][:2])) < 12.0]
    assert near and all(d.flagged for d in near), [(d.color, d.size, d.pose, d.reasons) for d in near]
    assert any("medium piece" in r for d in near for r in d.reasons)
