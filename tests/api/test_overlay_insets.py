"""The umpire's picture: magnified insets of piles, undecided orders and the pot, placed off the mat."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
from synth import SynthWink, default_camera, render

from api.overlay import annotate_tiddlywinks, draw_insets, focus_regions, inset_camera
from calibration.camera import CameraModel
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM


def _piece(pid, color, size, c, cam, potted=False):
    r = 11.0 if size == "large" else 8.0
    return {"id": pid, "color": color, "size": size, "center_mm": list(c), "radius_mm": r, "z_mm": 0.75,
            "uncertainty_mm": 0.2, "confidence": 0.95, "potted": potted, "off_mat": False,
            "center_px": cam.project_mm(np.array([[c[0], c[1], 1.5]]))[0].tolist()}


def _document(cam: CameraModel, winks: list[SynthWink], piles, squops, undecided=(), rulings=()):
    corners = cam.project_mm(np.array([[-MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM], [MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM],
                                       [MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM], [-MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM]]))
    return {"calibration": {"camera": cam.to_dict(), "source": "truth"}, "mat": {"corners_px": corners.tolist()},
            "pot": {"center_mm": [0.0, 0.0]},
            "pieces": [_piece(w.wink_id, w.color, w.size, w.center_mm, cam, w.potted) for w in winks],
            "piles": [list(p) for p in piles], "squops": [list(s) for s in squops],
            "undecided_orders": [list(u) for u in undecided], "rulings": list(rulings)}


@pytest.fixture(scope="module")
def squop_scene():
    cam = default_camera(1920, 1080)
    winks = [SynthWink("red-L1", "red", "large", (400.0, 150.0)),
             SynthWink("blue-S1", "blue", "small", (412.0, 152.0), z_mm=2.0, above=["red-L1"]),
             SynthWink("yellow-S1", "yellow", "small", (-300.0, -100.0)),
             SynthWink("green-S1", "green", "small", (-291.0, -95.0))]
    frame = render(winks, cam, seed=4)
    doc = _document(cam, winks, piles=[("blue-S1", "red-L1"), ("green-S1", "yellow-S1")],
                    squops=[("blue-S1", "red-L1")], undecided=[("green-S1", "yellow-S1", 0.55)])
    return cam, frame, doc


def test_inset_camera_is_the_cut_magnified():
    cam = CameraModel.look_at(eye_mm=(100.0, -700.0, 1900.0), target_mm=(0, 0, 0), focal_px=1700.0,
                              image_size_wh_px=(1920, 1080), dist=(-0.12, 0.05, 0.001, -0.002, 0.0))
    pts = np.array([[400.0, 150.0, 1.5], [395.0, 160.0, 0.0], [410.0, 140.0, 38.0]])
    for origin, zoom in (((1300.5, 200.25), 5.0), ((-20.0, 900.0), 2.5)):
        want = zoom * (cam.project_mm(pts) - np.array(origin) + 0.5) - 0.5
        got = inset_camera(cam, origin, zoom, 280).project_mm(pts)
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_focus_regions_put_undecided_first_and_skip_a_quiet_scene(squop_scene):
    cam, _, doc = squop_scene
    regions = focus_regions(cam, doc)
    assert [r.undecided for r in regions] == [True, False]
    assert regions[0].label.startswith("P2") and "umpire looks" in regions[0].label
    quiet = dict(doc, piles=[], squops=[], undecided_orders=[])
    assert focus_regions(cam, quiet) == []
    potted = dict(quiet, pieces=[dict(p, potted=True) if p["id"] == "red-L1" else p for p in doc["pieces"]])
    assert [r.label for r in focus_regions(cam, potted)] == ["pot: 1 potted"]


def test_insets_magnify_the_right_place_and_stay_off_the_mat(squop_scene):
    cam, frame, doc = squop_scene
    img = frame.copy()
    placed = draw_insets(img, frame, cam, doc)
    assert len(placed) == 2
    mat = np.zeros(frame.shape[:2], np.uint8)
    cv2.fillPoly(mat, [np.round(np.asarray(doc["mat"]["corners_px"])).astype(np.int32)], 1)
    boxes = []
    for ins in placed:
        sx, sy = ins.slot_px
        side = ins.side_px
        boxes.append((sx, sy, sx + side, sy + side))
        assert ins.zoom >= 2.0
        # along the picture's border, not over the middle of the mat (the mat fills most of this view)
        assert mat[sy:sy + side, sx:sx + side].mean() < 0.6
        assert sx <= 10 or sy <= 10 or sx + side >= 1910 or sy + side >= 1070
        # no wink lies under an inset
        for p in doc["pieces"]:
            x, y = p["center_px"]
            assert not (sx <= x < sx + side and sy <= y < sy + side), (p["id"], ins.slot_px)
        # the magnified wink shows where the inset's camera puts it, in its own colour
        pid, away = ("blue-S1", 1.0) if ins.focus.label.startswith("P1") else ("yellow-S1", -1.0)
        p = next(q for q in doc["pieces"] if q["id"] == pid)
        # 3 mm from the wink's centre, away from its partner and clear of the drawn arrows and marks
        probe = np.array([[p["center_mm"][0] + 3.0 * away, p["center_mm"][1], 1.5]])
        u, v = ins.camera.project_mm(probe)[0]
        inside = img[int(round(sy + v)), int(round(sx + u))]
        x, y = cam.project_mm(probe)[0]
        full = frame[int(round(y)), int(round(x))]
        assert np.abs(inside.astype(int) - full.astype(int)).max() < 40
    (a0, b0, a1, b1), (c0, d0, c1, d1) = boxes
    assert a1 <= c0 or c1 <= a0 or b1 <= d0 or d1 <= b0  # insets do not overlap


def test_annotated_picture_keeps_its_size_and_frame_untouched(squop_scene):
    cam, frame, doc = squop_scene
    before = frame.copy()
    out = annotate_tiddlywinks(frame, doc)
    assert out.shape == frame.shape and np.array_equal(frame, before)
    # insets change the picture beyond the mat; without groups to show, the border stays as photographed
    quiet = annotate_tiddlywinks(frame, dict(doc, piles=[], squops=[], undecided_orders=[]))
    changed = np.abs(out.astype(int) - quiet.astype(int)).max(axis=2) > 0
    assert changed[:, :300].any() or changed[:, -300:].any() or changed[:200].any() or changed[-200:].any()
