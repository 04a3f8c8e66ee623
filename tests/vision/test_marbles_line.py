"""The drop line scribed in the sand (MB P3), found on rendered rings: angle, offset and honest uncertainty."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from vision.marbles_line import ScribedLineNotFoundError, find_scribed_line

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "marbles"


def _load(name: str):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    frame = cv2.imread(str(SAMPLES / f"{name}.jpg"))
    camera = CameraModel.from_dict(truth["calibration"]["camera"])
    balls = [(p["center_mm"], p["diameter_mm"] / 2) for p in truth["pieces"]]
    return truth, frame, camera, balls


@pytest.mark.parametrize("name", ["marbles_08_tolleys_centre", "marbles_04_group25_line"])
def test_line_found_along_the_groove(name):
    truth, frame, camera, balls = _load(name)
    line = find_scribed_line(frame, camera, balls)
    p0, p1 = np.asarray(truth["scribed_line"]["p0_mm"]), np.asarray(truth["scribed_line"]["p1_mm"])
    u = (p1 - p0) / np.linalg.norm(p1 - p0)
    n = np.array([-u[1], u[0]])
    assert math.degrees(math.acos(min(1.0, abs(float(n @ np.asarray(line.normal)))))) < 0.5
    mid = np.add(line.p0_mm, line.p1_mm) / 2  # the fitted line passes within the groove's wander (+-3 mm)
    assert abs(float((mid - p0) @ n)) < 3.0
    assert line.length_mm > 1000.0 and 0.5 < line.offset_sigma_mm < 4.0
    for p in truth["pieces"]:
        if p["kind"] == "tolley":
            true_d = abs(float((np.asarray(p["center_mm"]) - p0) @ n))
            assert abs(line.distance_mm(p["center_mm"]) - true_d) <= 2 * line.offset_sigma_mm


def test_no_line_is_refused_not_invented():
    _, frame, camera, balls = _load("marbles_06_midgame")
    with pytest.raises(ScribedLineNotFoundError, match="no straight groove"):
        find_scribed_line(frame, camera, balls)
