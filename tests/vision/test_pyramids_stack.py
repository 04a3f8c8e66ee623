"""Pieces stacked on an upright pyramid: found from the colour step at the upper piece's rim, or from its pips
(vision/pyramids_stack)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from crops import crop_with_camera
from geometry.pyramids import PyramidPose, pips, upright_pose
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import IceScene, Lighting, render_ice_scene, stacked_piece, upright_piece
from simulation.pyramids_marbles_common import oblique_camera
from vision.pyramids import detect_pyramids
from vision.pyramids_pips import PipMap
from vision.pyramids_stack import StackParams, find_stacked_piece

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "ice_tiddlywinks"
CENTER_TOL_MM = 3.0  # base centre of a found piece against the truth's
SETTLED_TOL_MM = 0.4  # a settling step is 0.25 mm


def _load(name):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    return (
        cv2.imread(str(SAMPLES / f"{name}.jpg")),
        truth,
        CameraModel.from_dict(truth["calibration"]["camera"]),
    )


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
    crop, crop_cam = crop_with_camera(frame, cam, lower["center_px"])
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


def _same_plastic_photo(color: str, lower_size: str, upper_size: str, seed: int):
    """A stack of one plastic and a bare piece like its lower one, rendered by the simulator 25 deg off vertical
    at about the bench's 1080p scale (0.45 mm/px)."""
    rng = np.random.default_rng(seed)
    cam = oblique_camera(
        rng, target_mm=(0.0, 0.0, 0.0), distance_mm=1200.0, tilt_deg=25.0, focal_px=1200.0 / 0.45,
        image_size_wh_px=(360, 240),
    )
    lower = upright_piece("p1", color, lower_size, (-25.0, 0.0), 0.4)
    top = stacked_piece("p2", color, upper_size, lower)
    bare = upright_piece("p3", color, lower_size, (30.0, 5.0), 1.0)
    linear = render_ice_scene(IceScene(pieces=(lower, top, bare)), cam, Lighting.random(rng), rng, supersample=2)
    photo = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    return cam, photo, lower, top, bare


@pytest.mark.parametrize(
    "color, lower_size, upper_size, seed",
    [("green", "large", "small", 1), ("purple", "medium", "small", 2), ("blue", "large", "medium", 3)],
)
def test_a_stack_of_one_plastic_is_found_by_its_pips(color, lower_size, upper_size, seed):
    # its cap steps from the skirt by less than the shading (one more wall of the same tint): only the upper
    # piece's own pips, just above its rim, show it; the bare piece beside it has none there
    cam, photo, lower, top, bare = _same_plastic_photo(color, lower_size, upper_size, seed)
    dets = detect_pyramids(photo, cam)
    nested = [d for d in dets if d.pose == "nested"]
    assert len(nested) == 1, [(d.color, d.size, d.pose, d.center_mm) for d in dets]
    found = nested[0]
    assert (found.color, found.size) == (color, upper_size)
    assert np.linalg.norm(np.subtract(found.center_mm, top.base_center_mm[:2])) < CENTER_TOL_MM
    base = next(d for d in dets if d.piece_id == found.supported_by[0])
    assert (base.pose, base.size, base.color) == ("upright", lower_size, color)
    assert np.linalg.norm(np.subtract(base.center_mm, lower.base_center_mm[:2])) < CENTER_TOL_MM
    bare_det = min(dets, key=lambda d: np.linalg.norm(np.subtract(d.center_mm, bare.base_center_mm[:2])))
    assert bare_det.pose == "upright" and bare_det.piece_id not in {p for d in nested for p in d.supported_by}


def test_a_lower_piece_fitted_off_by_its_stacks_overhang_is_settled_on_its_own_pips():
    # a silhouette fit pulled 0.8 mm by the upper piece's overhang misses the upper pips (they span ~1.5 px);
    # settled on the lower piece's own pips, the upper piece's rim and pips fall where they are
    cam, photo, lower, top, _ = _same_plastic_photo("purple", "medium", "small", 2)
    pose = PyramidPose(size=lower.size, rotation=lower.rotation, base_center_mm=lower.base_center_mm)
    off = PyramidPose(size=lower.size, rotation=lower.rotation, base_center_mm=pose.base_center_mm + [0.6, -0.55, 0])
    pip_map = PipMap(photo, cam.mm_per_px_at((0.0, 0.0)))
    v = find_stacked_piece(photo, cam, off, StackParams(), pip_map)
    assert v.verdict == "stacked" and v.evidence.size == "small"
    assert np.linalg.norm(v.evidence.upper.base_center_mm[:2] - top.base_center_mm[:2]) < SETTLED_TOL_MM
