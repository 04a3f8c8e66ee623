"""Ice Tiddly Winks renders: truth lands on the committed photos, scores follow IT Score, seeds repeat."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from simulation.pyramids import (
    POSES,
    PYRAMID_SIZES,
    IceSceneSpec,
    generate_ice_tiddlywinks,
    lying_piece,
    stacked_piece,
    standing_on_lying_piece,
    upright_piece,
)

SIZES = ("small", "medium", "large")
SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "ice_tiddlywinks"
# a piece's silhouette must differ in mean colour from the table around it by at least this CIE76 delta E
# (yellow and orange plastic over honey-coloured wood come lowest, ~7); the same shape on empty table (grain,
# plank joints) differs by about 2 (median of 9, checked below), at most ~8 over 20 random placements, so a
# wrong camera fails on its first few pieces (a 25 mm shift gives ~2)
MIN_PIECE_DELTA_E = 6.0
MAX_EMPTY_MEDIAN_DELTA_E = 4.0
EMPTY_CONTROLS = 9
POSITION_TOL_MM = 1e-3
PIECE_FIELDS = {
    "id",
    "color",
    "size",
    "pose",
    "points",
    "center_mm",
    "center_px",
    "base_corners_mm",
    "apex_mm",
    "supported_by",
}


def _docs() -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text())) for p in sorted(SAMPLES.glob("*.json"))]


def _window(pts_px: np.ndarray, margin_px: int, shape) -> tuple[slice, slice, np.ndarray]:
    """Rows, columns and top-left pixel of the image window around points, ``margin_px`` wider."""
    h, w = shape[:2]
    x0, y0 = (max(int(v) - margin_px - 2, 0) for v in pts_px.min(axis=0))
    x1, y1 = min(int(pts_px[:, 0].max()) + margin_px + 3, w), min(int(pts_px[:, 1].max()) + margin_px + 3, h)
    return slice(y0, y1), slice(x0, x1), np.array([x0, y0])


def _hull_mask(shape, pts_px: np.ndarray, origin_px=(0, 0)) -> np.ndarray:
    mask = np.zeros(shape[:2], np.uint8)
    hull = cv2.convexHull(np.round((pts_px - np.asarray(origin_px)) * 16).astype(np.int32))
    cv2.fillConvexPoly(mask, hull, 255, cv2.LINE_8, 4)
    return mask


def _inside_and_around(lab, occupied, pts_px: np.ndarray, grow_px: int):
    """Delta E between a hull (eroded by a pixel) and the free table within ``grow_px`` of it."""
    rows, cols, origin = _window(pts_px, grow_px, lab.shape)
    m = _hull_mask((rows.stop - rows.start, cols.stop - cols.start), pts_px, origin)
    inside = cv2.erode(m, np.ones((3, 3), np.uint8))
    grown = cv2.dilate(m, np.ones((grow_px, grow_px), np.uint8))
    around = grown & ~m & ~occupied[rows, cols]
    return inside, around, grown, (rows, cols)


def _contrast(img_lab: np.ndarray, inside: np.ndarray, around: np.ndarray) -> float:
    """CIE76 colour difference between the mean colours of two regions (OpenCV 8-bit Lab)."""
    a = img_lab[inside > 0].reshape(-1, 3).astype(np.float64).mean(axis=0)
    b = img_lab[around > 0].reshape(-1, 3).astype(np.float64).mean(axis=0)
    return float(np.linalg.norm(a - b))


def _piece_px(cam: CameraModel, piece: dict) -> np.ndarray:
    return cam.project_mm(np.vstack([piece["base_corners_mm"], [piece["apex_mm"]]]))


def test_samples_cover_every_pose_and_an_oblique_view():
    docs = _docs()
    assert len(docs) >= 10
    poses = {p["pose"] for _, d in docs for p in d["pieces"]}
    assert poses == set(POSES)
    tilts = [CameraModel.from_dict(d["calibration"]["camera"]).tilt_deg for _, d in docs]
    assert any(30.0 <= t <= 35.0 for t in tilts), tilts
    assert all(t <= 35.0 + 1e-6 for t in tilts)
    for jpg in SAMPLES.glob("*.jpg"):
        assert jpg.with_suffix(".json").exists(), jpg


def test_truth_fields_and_scores():
    for path, doc in _docs():
        assert doc["game"] == "ice-tiddlywinks"
        assert "camera" in doc["calibration"]
        ids = {p["id"] for p in doc["pieces"]}
        scores: dict[str, int] = {}
        for p in doc["pieces"]:
            assert PIECE_FIELDS <= set(p), (path.name, PIECE_FIELDS - set(p))
            pips = PYRAMID_SIZES[p["size"]][2]
            expected = {"upright": pips, "lying": 0, "standing_on_lying": 2 * pips, "nested": pips}[p["pose"]]
            assert p["points"] == expected, (path.name, p["id"])
            assert all(s == "table" or s in ids for s in p["supported_by"])
            scores[p["color"]] = scores.get(p["color"], 0) + p["points"]
            if p["pose"] == "standing_on_lying":
                lower = next(q for q in doc["pieces"] if q["id"] in p["supported_by"])
                assert lower["pose"] == "lying"
        assert doc["scores"] == scores, path.name
        assert set(doc["undecided_piece_ids"]) == {p["id"] for p in doc["pieces"] if p["hidden"]}


def test_truth_projects_onto_rendered_pieces():
    """Each visible piece's projected silhouette (hull of base corners and apex) stands out from the table
    around it; the same shape moved onto empty table does not."""
    rng = np.random.default_rng(7)
    for path, doc in _docs():
        img = cv2.imread(str(path.with_suffix(".jpg")))
        lab = cv2.cvtColor(img, cv2.COLOR_BGR2Lab)
        cam = CameraModel.from_dict(doc["calibration"]["camera"])
        assert img.shape[1::-1] == tuple(cam.image_size_wh_px)
        occupied = np.zeros(img.shape[:2], np.uint8)
        for p in doc["pieces"]:
            hull = cv2.convexHull(np.round(_piece_px(cam, p) * 16).astype(np.int32))
            cv2.fillConvexPoly(occupied, hull, 255, cv2.LINE_8, 4)
        occupied = cv2.dilate(occupied, np.ones((9, 9), np.uint8))
        for line in doc["start_lines"]:  # tape is not a piece: keep it out of the surroundings too
            p0, p1 = np.asarray(line["p0_mm"]), np.asarray(line["p1_mm"])
            ts = np.linspace(0, 1, 400)[:, None]
            pts = cam.project_mm(p0 + ts * (p1 - p0))
            width_px = int(line["width_mm"] / cam.mm_per_px_at((0.0, 0.0)) * 2 + 9)
            cv2.polylines(occupied, [np.round(pts).astype(np.int32)], False, 255, width_px)
        w, h = cam.image_size_wh_px
        for p in doc["pieces"]:
            if p["hidden"]:
                continue
            px = _piece_px(cam, p)
            assert px[:, 0].min() >= 0 and px[:, 0].max() < w and px[:, 1].min() >= 0 and px[:, 1].max() < h
            size = int(max(np.ptp(px[:, 0]), np.ptp(px[:, 1])))
            inside, around, _, win = _inside_and_around(lab, occupied, px, size)
            assert around.any() and inside.any(), (path.name, p["id"])
            c = _contrast(lab[win], inside, around)
            assert c >= MIN_PIECE_DELTA_E, (path.name, p["id"], p["color"], p["pose"], c)
        # negative control: the hull of the first piece moved onto empty table
        shape_px = _piece_px(cam, doc["pieces"][0])
        shape_px = shape_px - shape_px.mean(axis=0)
        size = int(max(np.ptp(shape_px[:, 0]), np.ptp(shape_px[:, 1])))
        empty = []
        for _ in range(400):
            centre = rng.uniform([0.1 * w, 0.1 * h], [0.9 * w, 0.9 * h])
            inside, around, grown, win = _inside_and_around(lab, occupied, shape_px + centre, size)
            if (grown & occupied[win]).any():
                continue
            empty.append(_contrast(lab[win], inside, around))
            if len(empty) == EMPTY_CONTROLS:
                break
        assert len(empty) == EMPTY_CONTROLS, path.name
        assert np.median(empty) < MAX_EMPTY_MEDIAN_DELTA_E, (path.name, empty)


def test_apex_and_base_geometry_of_poses():
    up = upright_piece("a", "red", "large", (10.0, 20.0), 0.3)
    np.testing.assert_allclose(up.apex_mm(), [10.0, 20.0, 44.5], atol=POSITION_TOL_MM)
    np.testing.assert_allclose(up.corners_mm()[:, 2], 0.0, atol=POSITION_TOL_MM)
    lying = lying_piece("b", "blue", "small", (0.0, 0.0), 1.0)
    face = lying.faces_mm()[0]
    np.testing.assert_allclose(face[:, 2], 0.0, atol=POSITION_TOL_MM)  # lies on a whole face
    assert lying.vertices_mm()[:, 2].min() >= -POSITION_TOL_MM
    assert lying.points == 0
    top = None
    for k in range(40):  # some approach directions give an implausible tilt; one of these must work
        top = standing_on_lying_piece("c", "green", "medium", lying, k * 0.157, 0.4)
        if top is not None:
            break
    assert top is not None
    corners = top.corners_mm()
    assert np.sort(corners[:, 2])[:2] == pytest.approx(
        [0.0, 0.0], abs=POSITION_TOL_MM
    )  # an edge on the table
    assert 6.0 <= top.axis_tilt_deg() <= 35.0
    assert top.points == 4  # IT-T2: double
    small_on_large = stacked_piece("d", "red", "small", up)
    assert small_on_large.base_center_mm[2] > 0 and small_on_large.apex_mm()[2] > up.apex_mm()[2]
    assert small_on_large.points == 1  # IT I-2: single
    assert math.isclose(small_on_large.axis_tilt_deg(), 0.0, abs_tol=1e-6)


def test_leaning_piece_rests_on_the_lying_piece_not_through_it():
    """IT I-1's pose as rendered: lowered about its hinge, the base stops on the lying piece, so no part of the
    lying piece is left inside the standing piece's walls (the earlier iterated rest left it up to 6.8 mm in,
    on a fifth of the draws), and the base touches it (no gap: it is what holds the piece up)."""
    from geometry.pyramids import PyramidPose
    from vision.pyramids_physics import tilted_support_gap_mm, wall_penetration_mm

    def pose(p):
        return PyramidPose(size=p.size, rotation=p.rotation, base_center_mm=p.base_center_mm)

    rng = np.random.default_rng(5)
    cut, gap = [], []
    for _ in range(200):
        lying = lying_piece("a", "red", str(rng.choice(SIZES)), (0.0, 0.0), rng.uniform(0, 2 * math.pi))
        top = standing_on_lying_piece(
            "b", "red", str(rng.choice(SIZES)), lying, rng.uniform(0, 2 * math.pi), rng.uniform(0.25, 0.6)
        )
        if top is not None:
            cut.append(wall_penetration_mm(pose(top), pose(lying)))
            gap.append(tilted_support_gap_mm(pose(top), pose(lying)))
    assert len(cut) >= 30
    assert max(cut) < 1.0  # the samples' spacing; the old rest reached 6.8 mm
    assert np.abs(gap).max() < 1.0


def test_deterministic_by_seed(tmp_path):
    spec = IceSceneSpec(upright=2, lying=1, standing_on_lying=1, stacked=1)
    outs = []
    for run, seed in enumerate((5, 5, 6)):
        jpg, js = generate_ice_tiddlywinks(
            np.random.default_rng(seed), tmp_path / str(run), "tiny", (320, 240), spec=spec, supersample=2
        )
        outs.append((jpg.read_bytes(), js.read_text()))
    assert outs[0] == outs[1]
    assert outs[0][0] != outs[2][0]
