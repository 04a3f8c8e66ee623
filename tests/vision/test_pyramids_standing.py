"""Pieces standing on lying ones (IT I-1, score double), rendered by the simulator: the fit must find the pair
from the lying piece read beside the standing one, not from the whole blob (vision/pyramids._fit_blob), and
must not make one up where a lying piece lies alone (its walls would pass through the lying piece)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.pyramids import pips
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import (
    PYRAMID_SIZES,
    IceScene,
    IceSceneSpec,
    Lighting,
    generate_ice_tiddlywinks,
    ice_camera,
    ice_truth,
    lying_piece,
    render_ice_scene,
    upright_piece,
    write_image_and_truth,
)
from vision.pyramids import detect_pyramids

MATCH_GATE_MM = 12.0  # plan centroid of a detection within this of the truth piece's (the bench's gate)


@pytest.fixture(scope="module")
def standing_scene(tmp_path_factory):
    # three small lying pieces, each with a small piece standing on it, nothing else on the table; the code
    # before this test found 4 pieces of the 6 (one standing, one upright, a lying small and a lying medium):
    # the lying fits of a whole blob are pulled off their axes by the leaning piece's faces
    out = tmp_path_factory.mktemp("standing")
    spec = IceSceneSpec(upright=0, lying=0, standing_on_lying=3, stacked=0, covered=0, start_lines=0)
    jpg, _ = generate_ice_tiddlywinks(np.random.default_rng([27, 2]), out, "standing", (1920, 1080), spec=spec)
    truth = json.loads(jpg.with_suffix(".json").read_text())
    dets = detect_pyramids(cv2.imread(str(jpg)), CameraModel.from_dict(truth["calibration"]["camera"]))
    return truth, dets


def _matched(truth, dets):
    out = []
    for p in truth["pieces"]:
        c = np.vstack([np.asarray(p["base_corners_mm"]), np.asarray(p["apex_mm"])[None]])[:, :2].mean(axis=0)
        d = [np.linalg.norm(np.asarray(x.plan_centroid_mm) - c) for x in dets]
        j = int(np.argmin(d))
        out.append((p, dets[j] if d[j] <= MATCH_GATE_MM else None))
    return out


def test_each_piece_standing_on_a_lying_one_is_read_so_and_scores_double(standing_scene):
    truth, dets = standing_scene
    standing = [(p, d) for p, d in _matched(truth, dets) if p["pose"] == "standing_on_lying"]
    assert len(standing) == 3
    for p, d in standing:
        assert d is not None, p["id"]
        assert (d.pose, d.size) == ("standing_on_lying", p["size"]), p["id"]
        assert d.points == 2 * pips(p["size"])


def test_the_lying_pieces_under_them_are_read_lying_and_score_nothing(standing_scene):
    truth, dets = standing_scene
    for p, d in _matched(truth, dets):
        if p["pose"] == "lying":
            assert d is not None and (d.pose, d.size) == ("lying", p["size"]), p["id"]
            assert d.points == 0
    assert len(dets) == len(truth["pieces"])


@pytest.fixture(scope="module")
def lone_lying_scene(tmp_path_factory):
    # a cyan large piece lying alone, a small upright 3 mm beyond its far end (rng [28, 5]); the code before
    # this test read it as the lying piece with a small one 'standing' on it (flagged: a close alternative)
    # besides the upright: the small piece's walls passed 5-7 mm through the lying one
    rng = np.random.default_rng([28, 5])
    camera = ice_camera(rng, (1920, 1080))
    lying = lying_piece("p1", "cyan", "large", (0.0, 0.0), float(rng.uniform(0, 2 * math.pi)))
    far = float(lying.vertices_mm()[:, 0].max())
    upright = upright_piece("p2", "cyan", "small", (far + 3.0 + PYRAMID_SIZES["small"][0] / 2, 0.0), 0.0)
    scene = IceScene(pieces=(lying, upright))
    linear = render_ice_scene(scene, camera, Lighting.random(rng), rng, supersample=3)
    bgr = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    jpg, _ = write_image_and_truth(tmp_path_factory.mktemp("lone"), "lone", bgr, ice_truth(scene, camera))
    truth = json.loads(jpg.with_suffix(".json").read_text())
    dets = detect_pyramids(cv2.imread(str(jpg)), CameraModel.from_dict(truth["calibration"]["camera"]))
    return truth, dets


def test_a_lone_lying_piece_has_no_piece_standing_on_it(lone_lying_scene):
    truth, dets = lone_lying_scene
    assert [d.pose for d in dets if d.pose == "standing_on_lying"] == []
    assert len(dets) == 2
    for p, d in _matched(truth, dets):
        assert d is not None and (d.pose, d.size) == (p["pose"], p["size"]), p["id"]
        assert d.points == (pips(p["size"]) if p["pose"] == "upright" else 0)


@pytest.fixture(scope="module")
def half_hidden_lying():
    """ice_03: a yellow large piece (p6) leaning on a purple medium one (p5) lying with its apex under it."""
    name = "ice_03_standing_on_lying"
    samples = Path(__file__).resolve().parents[2] / "sample_images" / "ice_tiddlywinks"
    truth = json.loads((samples / f"{name}.json").read_text())
    frame = cv2.imread(str(samples / f"{name}.jpg"))
    cam = CameraModel.from_dict(truth["calibration"]["camera"])
    # crop around the pair: the camera's principal point moves with the crop
    by_id = {p["id"]: p for p in truth["pieces"]}
    cx, cy = (round(v) for v in np.mean([by_id["p5"]["center_px"], by_id["p6"]["center_px"]], axis=0))
    x0, y0 = cx - 160, cy - 120
    d = cam.to_dict()
    d["K"][0][2] -= x0
    d["K"][1][2] -= y0
    d["image_size_wh_px"] = [320, 240]
    crop = np.ascontiguousarray(frame[y0 : y0 + 240, x0 : x0 + 320])
    pair = {p["id"]: p for p in truth["pieces"] if p["id"] in ("p5", "p6")}
    return pair, detect_pyramids(crop, CameraModel.from_dict(d))


def test_a_lying_piece_half_hidden_by_the_one_leaning_on_it_is_read_with_it(half_hidden_lying):
    # what the leaning piece leaves of the lying one is its open-base end: the code before this test read that
    # part alone as a lying piece centred on it (the wrong size, turned round), found no rest for the leaning
    # piece on it, and read the pair as two upright pieces (flagged)
    truth, dets = half_hidden_lying
    assert len(dets) == 2
    for p, d in _matched({"pieces": list(truth.values())}, dets):
        assert d is not None, p["id"]
        assert (d.pose, d.size) == (p["pose"], p["size"]), p["id"]
