"""Committed calibration frames and shot videos: detectable board where the truth says, readable videos."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from simulation.calibration_frames import charuco_board

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
CORNER_TOL_PX = 0.75  # median distance between detected ChArUco corners and the truth projections
RIG_DIRS = sorted(p for p in (SAMPLES / "calibration").glob("*") if p.is_dir())
VIDEO_DOCS = sorted((SAMPLES / "videos").glob("*.json"))


def test_every_rig_has_calibration_frames_flat_and_tilted():
    tw_rigs = {json.loads(p.read_text())["render"]["rig"] for p in (SAMPLES / "tiddlywinks").glob("*.json")}
    video_rigs = {json.loads(p.read_text())["render"]["rig"] for p in VIDEO_DOCS}
    assert tw_rigs | video_rigs <= {d.name for d in RIG_DIRS}
    for d in RIG_DIRS:
        docs = [json.loads(p.read_text()) for p in sorted(d.glob("*_board_*.json"))]
        tilts = [doc["board"]["tilt_deg"] for doc in docs]
        assert min(tilts) < 1.0 and max(tilts) > 20.0, d.name
        cams = {json.dumps(doc["calibration"]["camera"]) for doc in docs}
        assert len(cams) == 1, f"{d.name}: frames of one rig must share the camera"


def test_board_is_detected_where_the_truth_projects_it():
    # A tilted (held) frame of the first 1080p rig: large enough for the detector.
    docs = sorted((RIG_DIRS[0]).glob("*_board_*.json"))
    detector = cv2.aruco.CharucoDetector(charuco_board())
    checked = 0
    for path in docs:
        doc = json.loads(path.read_text())
        img = cv2.imread(str(path.with_name(doc["image"]["path"])))
        corners, ids, _, _ = detector.detectBoard(img)
        if ids is None or len(ids) < 6:
            continue
        truth = dict(zip(doc["board"]["charuco_corner_ids"], doc["board"]["charuco_corners_px"]))
        err = [np.linalg.norm(np.asarray(truth[int(i)]) - c.ravel()) for i, c in zip(ids.ravel(), corners)
               if int(i) in truth]
        assert len(err) >= 6
        assert np.median(err) < CORNER_TOL_PX, (path.name, np.median(err))
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("path", VIDEO_DOCS, ids=[p.stem for p in VIDEO_DOCS])
def test_video_reads_back_and_truth_lists_rest_states(path):
    doc = json.loads(path.read_text())
    cap = cv2.VideoCapture(str(path.with_name(doc["video"]["path"])))
    n = 0
    shape = None
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        shape = frame.shape
        n += 1
    assert n == doc["video"]["frame_count"]
    assert [shape[1], shape[0]] == doc["video"]["size_wh_px"]
    states = doc["rest_states"]
    assert len(states) >= 2 and states[0]["frames"][0] == 0 and states[-1]["frames"][1] == n - 1
    before = {p["id"]: p for p in states[0]["scene"]["pieces"]}
    after = {p["id"]: p for p in states[-1]["scene"]["pieces"]}
    shot = doc["shot"]
    assert shot["moved"] and shot["wink"] in shot["moved"]
    for wid in shot["moved"]:
        assert before[wid]["center_mm"] != after[wid]["center_mm"]
    for wid in shot["potted"]:
        assert after[wid]["potted"] and not before[wid]["potted"]
    for wid in shot["left_field"]:
        assert after[wid]["off_mat"] or after[wid]["out_of_bounds"]
    CameraModel.from_dict(doc["calibration"]["camera"])
    assert {"pot", "knock", "off"} >= {json.loads(p.read_text())["shot"]["outcome"] for p in VIDEO_DOCS}
