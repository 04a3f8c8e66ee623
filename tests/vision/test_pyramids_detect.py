"""detect_pyramids on committed Ice Tiddly Winks samples with their truth (sample_images/ice_tiddlywinks)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from vision.pyramids import analyze_ice_tiddlywinks, detect_pyramids

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "ice_tiddlywinks"
MATCH_GATE_MM = 12.0  # plan centroid of a detection within this of the truth piece's


def _load(name):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    return cv2.imread(str(SAMPLES / f"{name}.jpg")), truth, CameraModel.from_dict(truth["calibration"]["camera"])


def _matches(truth, dets):
    out = {}
    for p in truth["pieces"]:
        if p["hidden"]:
            continue
        v = np.vstack([np.asarray(p["base_corners_mm"]), np.asarray(p["apex_mm"])[None]])[:, :2].mean(axis=0)
        d = [np.linalg.norm(np.asarray(x.plan_centroid_mm) - v) for x in dets]
        j = int(np.argmin(d))
        out[p["id"]] = dets[j] if d[j] <= MATCH_GATE_MM else None
    return out


@pytest.fixture(scope="module")
def upright_scene():
    frame, truth, cam = _load("ice_01_upright")
    return truth, detect_pyramids(frame, cam)


@pytest.fixture(scope="module")
def lying_scene():
    frame, truth, cam = _load("ice_02_lying")
    return truth, detect_pyramids(frame, cam)


def test_upright_pieces_found_with_pose_and_size(upright_scene):
    truth, dets = upright_scene
    m = _matches(truth, dets)
    assert all(d is not None for d in m.values())
    for p in truth["pieces"]:
        assert m[p["id"]].pose == "upright", p["id"]
        assert m[p["id"]].size == p["size"], p["id"]


def test_lying_pieces_found_as_lying_and_score_nothing(lying_scene):
    truth, dets = lying_scene
    m = _matches(truth, dets)
    lying = [p for p in truth["pieces"] if p["pose"] == "lying"]
    assert lying
    ok = sum(m[p["id"]] is not None and m[p["id"]].pose == "lying" for p in lying)
    assert ok >= len(lying) - 1  # the bench reports the real rate; one miss allowed on this photo
    assert all(d.points == 0 for d in dets if d.pose == "lying")


def test_wrong_colour_verdicts_are_few_and_each_detection_is_in_the_image(upright_scene, lying_scene):
    for truth, dets in (upright_scene, lying_scene):
        m = _matches(truth, dets)
        right = sum(d is not None and d.color == p["color"] for p, d in
                    ((p, m[p["id"]]) for p in truth["pieces"] if not p["hidden"]))
        assert right >= 0.8 * len(m)
        w, h = truth["calibration"]["camera"]["image_size_wh_px"]
        for d in dets:
            assert 0 <= d.center_px[0] < w and 0 <= d.center_px[1] < h
            assert 0.0 <= d.confidence <= 1.0


def test_standing_on_lying_piece_is_double_and_flagged_when_unsure():
    frame, truth, cam = _load("ice_03_standing_on_lying")
    # the group p7 (blue lying) + p8 (orange small standing on it), with a margin of table around it
    cx, cy = np.round(np.mean([p["center_px"] for p in truth["pieces"] if p["id"] in ("p7", "p8")], axis=0))
    x0, y0, x1, y1 = int(cx) - 160, int(cy) - 120, int(cx) + 160, int(cy) + 120
    crop = frame[y0:y1, x0:x1]
    d = cam.to_dict()
    d["K"][0][2] -= x0
    d["K"][1][2] -= y0
    d["image_size_wh_px"] = [x1 - x0, y1 - y0]
    dets = detect_pyramids(np.ascontiguousarray(crop), CameraModel.from_dict(d))
    poses = sorted(x.pose for x in dets)
    assert poses == ["lying", "standing_on_lying"]
    top = next(x for x in dets if x.pose == "standing_on_lying")
    assert top.points == 2 * {"small": 1, "medium": 2, "large": 3}[top.size]
    assert top.supported_by[0] == "table" and len(top.supported_by) == 2


def test_without_calibration_every_verdict_is_flagged_with_lower_confidence():
    frame, _, _ = _load("ice_01_upright")
    small = np.ascontiguousarray(frame[300:700, 500:1100])
    doc = analyze_ice_tiddlywinks(small)
    assert doc["calibration"]["source"] == "assumed_overhead"
    assert doc["pieces"]
    assert all(p["flagged"] and p["confidence"] <= 0.5 for p in doc["pieces"])


def test_empty_table_gives_no_pieces():
    rng = np.random.default_rng(5)
    table = np.clip(rng.normal(120, 2, (300, 400, 3)), 0, 255).astype(np.uint8)
    assert detect_pyramids(table) == ()


def test_a_clear_piece_stacked_on_a_tinted_one_is_named_clear():
    # ice_04 p6, a clear small piece on p5, a blue large one: against the table the cap shows blue (the lower
    # walls' tint) yet steps clearly from the blue skirt, which only untinted walls can do
    frame, truth, cam = _load("ice_04_stacked_and_covered")
    cx, cy = np.round(next(p["center_px"] for p in truth["pieces"] if p["id"] == "p5"))
    x0, y0, x1, y1 = int(cx) - 120, int(cy) - 100, int(cx) + 120, int(cy) + 100
    d = cam.to_dict()
    d["K"][0][2] -= x0
    d["K"][1][2] -= y0
    d["image_size_wh_px"] = [x1 - x0, y1 - y0]
    dets = detect_pyramids(np.ascontiguousarray(frame[y0:y1, x0:x1]), CameraModel.from_dict(d))
    assert sorted((x.pose, x.size, x.color) for x in dets) == [("nested", "small", "clear"),
                                                                ("upright", "large", "blue")]
    top = next(x for x in dets if x.pose == "nested")
    assert not any("against the piece beneath" in r for r in top.reasons)


@pytest.mark.parametrize("shape", [(1, 1, 3), (30, 640, 3)], ids=["1px", "thin-strip"])
def test_a_tiny_image_is_refused_by_name(shape):
    from vision.types import VisionError
    with pytest.raises(VisionError, match="too small to show a table of pyramids"):
        detect_pyramids(np.zeros(shape, np.uint8))
