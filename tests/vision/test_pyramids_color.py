"""Pyramid colour read against the table's lightness and saturation (vision/pyramids_color.py)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.pyramids import lying_pose
from simulation.pyramids import IceSceneSpec, generate_ice_tiddlywinks
from tests.vision.test_pyramids_detect import _matches
from vision.pyramids import detect_pyramids
from vision.pyramids_color import classify_descriptor, tint_rival, walls_crossed


def _render_and_detect(out, seed, *, upright, lying, colors):
    """A 960 x 540 render of a few upright and lying pieces of the given plastics, its truth and detections."""
    spec = IceSceneSpec(upright=upright, lying=lying, standing_on_lying=0, stacked=0, covered=0, colors=colors)
    jpg, js = generate_ice_tiddlywinks(np.random.default_rng(seed), out, "scene", size_wh=(960, 540), spec=spec,
                                       tilt_range_deg=(0.0, 15.0))
    frame, truth = cv2.imread(str(jpg)), json.loads(Path(js).read_text())
    return truth, detect_pyramids(frame, CameraModel.from_dict(truth["calibration"]["camera"]))


@pytest.fixture(scope="module")
def yellow_and_orange_on_light_wood(tmp_path_factory):
    """A render (seed [8080, 3], used by no bench) of yellow and orange pieces on light wood, where the ratio
    shows each plastic's full tint: the code before this test, its prototypes pooled over every table (over
    dark wood the walls' own scattered light fades yellow's tint), read two of its upright yellows orange."""
    return _render_and_detect(tmp_path_factory.mktemp("ice_color"), [8080, 3], upright=5, lying=2,
                              colors=("yellow", "orange", "clear", "white"))


def test_yellow_and_orange_on_light_wood_keep_their_colours(yellow_and_orange_on_light_wood):
    truth, dets = yellow_and_orange_on_light_wood
    for pid, det in _matches(truth, dets).items():
        color = next(p["color"] for p in truth["pieces"] if p["id"] == pid)
        assert det is not None, pid
        assert det.color == color, (pid, det.color)


@pytest.mark.parametrize("camera_side, walls", [(1, 1), (-1, 2)])
def test_walls_crossed_sees_a_lying_piece_through_its_open_base_from_the_base_side(camera_side, walls):
    """The middle of the face a large piece lies on, seen from 400 mm beyond its open base (camera_side 1): the
    ray enters through the opening and meets only that face; from beyond its apex (-1) it crosses an upper wall
    first."""
    pose = lying_pose("large", (0.0, 0.0), 0.0)
    v = pose.vertices_mm()
    on_table = v[np.abs(v[:, 2]) < 1e-6]  # two base corners and the apex
    toward_base = v[:4].mean(axis=0)[:2] - v[4, :2]
    toward_base /= np.linalg.norm(toward_base)
    cam = CameraModel.look_at(eye_mm=(*(camera_side * 400.0 * toward_base), 500.0), target_mm=(0.0, 0.0, 0.0),
                              focal_px=1500.0, image_size_wh_px=(800, 600))
    x, y = np.round(cam.project_mm(on_table.mean(axis=0)[None])[0]).astype(int)
    assert walls_crossed(cam.project_mm(v), (600, 800))[y, x] == walls


@pytest.fixture(scope="module")
def tinted_lying_pieces(tmp_path_factory):
    """A render (seed [1212, 4], used by no bench) of blue, purple and cyan pieces, four of them lying: the code
    before this test read its small lying cyan piece green, the colour pooled over its whole outline, the open
    base's barely tinted pixels included."""
    return _render_and_detect(tmp_path_factory.mktemp("ice_lying_color"), [1212, 4], upright=2, lying=5,
                              colors=("blue", "purple", "cyan", "clear"))


def test_tinted_lying_pieces_keep_their_colours(tinted_lying_pieces):
    truth, dets = tinted_lying_pieces
    lying = {p["id"]: p["color"] for p in truth["pieces"] if p["pose"] == "lying" and p["color"] != "clear"}
    assert len(lying) == 4
    for pid, det in _matches(truth, dets).items():
        if pid in lying:
            assert det is not None, pid
            assert det.color == lying[pid], (pid, det.color)


@pytest.fixture(scope="module")
def cyan_and_green_lying(tmp_path_factory):
    """A render (seed [3141, 5], used by no bench) of cyan and green pieces, four lying. The code before this
    test read its lying cyan p4 and p5 green, at colour confidence near 1 (flagged only for their poses' close
    alternatives): its prototypes move with the table's luminance alone. Allowing for the table's tint (its log
    R / B: a thin wall's own scattered light weighs more where the table is less red) they read cyan."""
    return _render_and_detect(tmp_path_factory.mktemp("ice_cyan_green"), [3141, 5], upright=2, lying=4,
                              colors=("cyan", "green"))


def test_lying_cyans_read_green_have_their_colour_flagged(cyan_and_green_lying):
    truth, dets = cyan_and_green_lying
    colors = {p["id"]: p["color"] for p in truth["pieces"]}
    matched = _matches(truth, dets)
    assert colors["p4"] == "cyan" and matched.get("p4") is not None
    for pid, det in matched.items():
        assert det is not None, pid
        assert det.color == colors[pid] or det.flagged, (pid, det.color)
    for pid in ("p4", "p5"):  # cyan, or its colour flagged as such, not only its pose
        assert matched[pid].color == "cyan" or any("tint" in r for r in matched[pid].reasons), pid


def test_the_table_tint_names_a_rival_colour_over_pale_wood_only():
    """One ratio (ice_fresh_014 p8's, on its truth outline): over pale wood cyan once the table's tint is allowed
    for, over red-brown wood green either way (the table's blue is dim there, so the wall's scattered blue
    light weighs more in cyan's ratio)."""
    x = np.array([-1.09, 0.37, 0.72, -0.54, -2.21, -1.54])
    assert classify_descriptor(np.array([*x, 0.6]))[0] == "green"
    assert tint_rival(np.array([*x, 0.6]), "green") == "cyan"
    assert tint_rival(np.array([*x, 1.8]), "green") is None
