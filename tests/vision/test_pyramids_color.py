"""Pyramid colour read against the table's lightness (vision/pyramids_color.py)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from simulation.pyramids import IceSceneSpec, generate_ice_tiddlywinks
from tests.vision.test_pyramids_detect import _matches
from vision.pyramids import detect_pyramids


@pytest.fixture(scope="module")
def yellow_and_orange_on_light_wood(tmp_path_factory):
    """A render (seed [8080, 3], used by no bench) of yellow and orange pieces on light wood, where the ratio
    shows each plastic's full tint: the code before this test, its prototypes pooled over every table (over
    dark wood the walls' own scattered light fades yellow's tint), read two of its upright yellows orange."""
    spec = IceSceneSpec(upright=5, lying=2, standing_on_lying=0, stacked=0, covered=0,
                        colors=("yellow", "orange", "clear", "white"))
    out = tmp_path_factory.mktemp("ice_color")
    jpg, js = generate_ice_tiddlywinks(
        np.random.default_rng([8080, 3]), out, "light_wood", size_wh=(960, 540), spec=spec,
        tilt_range_deg=(0.0, 15.0),
    )
    frame, truth = cv2.imread(str(jpg)), json.loads(Path(js).read_text())
    return truth, detect_pyramids(frame, CameraModel.from_dict(truth["calibration"]["camera"]))


def test_yellow_and_orange_on_light_wood_keep_their_colours(yellow_and_orange_on_light_wood):
    truth, dets = yellow_and_orange_on_light_wood
    for pid, det in _matches(truth, dets).items():
        color = next(p["color"] for p in truth["pieces"] if p["id"] == pid)
        assert det is not None, pid
        assert det.color == color, (pid, det.color)
