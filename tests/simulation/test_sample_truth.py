"""The committed sample images against their truth: outlines land on the rendered pieces, truth is complete."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry import tiddlywinks as tw
from geometry.records import scene_from_document
from simulation.tiddlywinks_render import mat_corners_mm

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
TW_DOCS = sorted((SAMPLES / "tiddlywinks").glob("*.json"))
PIECE_FIELDS = {"id", "color", "size", "center_mm", "radius_mm", "uncertainty_mm", "z_mm", "tilt_deg",
                "tilt_azimuth_deg", "potted", "off_mat", "unplayed", "out_of_bounds", "behind_baseline", "squopped",
                "squopping", "above", "confidence"}
INSIDE_RATIO = 0.55  # sample the wink's top face within this share of its radius
RING_GAP_MM = 3.0  # outside ring this far beyond the wink's edge
CLEARANCE_MM = 8.0  # pieces with anything else this close are skipped (the ring must see only felt)
MIN_COLOR_DISTANCE = 20.0  # BGR levels between median inside and median outside
PIXEL_TOL = 0.01  # px, re-projection of recorded pixel truth


def _load(path: Path) -> tuple[dict, np.ndarray, CameraModel]:
    doc = json.loads(path.read_text())
    img = cv2.imread(str(path.with_name(doc["image"]["path"])))
    return doc, img, CameraModel.from_dict(doc["calibration"]["camera"])


def test_samples_exist_and_cover_the_required_scenes():
    kinds = [json.loads(p.read_text())["render"]["scene_kind"] for p in TW_DOCS]
    assert len(TW_DOCS) >= 20
    for kind, minimum in {"squidge_off": 4, "squops": 4, "potted": 2, "edges": 2, "unplayed": 2}.items():
        assert kinds.count(kind) >= minimum, kind
    sizes = {tuple(json.loads(p.read_text())["image"]["size_wh_px"]) for p in TW_DOCS}
    assert {(1920, 1080), (3840, 2160)} <= sizes


@pytest.mark.parametrize("path", TW_DOCS, ids=[p.stem for p in TW_DOCS])
def test_truth_is_complete_and_consistent(path):
    doc, img, cam = _load(path)
    assert img is not None and [img.shape[1], img.shape[0]] == doc["image"]["size_wh_px"]
    assert doc["calibration"]["source"] == "truth" and doc["calibration"]["reprojection_error_mm"] == 0
    again = CameraModel.from_dict(json.loads(json.dumps(cam.to_dict())))
    for key in ("K", "dist", "rvec", "tvec"):
        np.testing.assert_allclose(getattr(again, key), getattr(cam, key), atol=1e-12)
    for piece in doc["pieces"]:
        assert PIECE_FIELDS <= set(piece), piece["id"]
    np.testing.assert_allclose(doc["mat"]["corners_px"], cam.project_mm(mat_corners_mm()), atol=PIXEL_TOL)
    pc = doc["pot"]["center_mm"]
    np.testing.assert_allclose(doc["pot"]["center_px"], cam.project_mm(np.array([[pc[0], pc[1], 0.0]]))[0],
                               atol=PIXEL_TOL)
    scene = scene_from_document(doc)
    assert sorted(w.wink_id for w in scene.winks) == sorted(p["id"] for p in doc["pieces"])
    assert len(scene.winks) == 24


def _isolated_flat_winks(doc: dict) -> list[dict]:
    pieces = [p for p in doc["pieces"] if not (p["off_mat"] and p["unplayed"])]
    lines = [(tw.corner_normal(s), 914.4) for s in ((1, 1), (1, -1), (-1, 1), (-1, -1))]
    pot = np.asarray(doc["pot"]["center_mm"])
    out = []
    for p in pieces:
        if p["potted"] or p["tilt_deg"] != 0 or p["squopped"] or p["squopping"]:
            continue
        c, r = np.asarray(p["center_mm"]), p["radius_mm"]
        reach = r + RING_GAP_MM + CLEARANCE_MM
        if any(math.dist(c, q["center_mm"]) < reach + q["radius_mm"] for q in pieces if q is not p):
            continue
        # The pot (38 mm high) can hide a wink behind it from an oblique camera.
        if math.dist(c, pot) < 24 + 38 * math.tan(math.radians(40)) + reach:
            continue
        if min(914.4 - abs(c[0]), 457.2 - abs(c[1])) < reach:
            continue
        if any(abs(n @ c - off) < reach + 3 for n, off in lines):
            continue
        out.append(p)
    return out


def _expected_hue_ok(color: str, bgr: np.ndarray) -> bool:
    b, g, r = bgr
    return {"red": r > g and r > b, "blue": b > r and b > g, "green": g > r and g > b,
            "yellow": r > b and g > b}[color]


@pytest.mark.parametrize("path", TW_DOCS, ids=[p.stem for p in TW_DOCS])
def test_projected_outlines_land_on_rendered_winks(path):
    doc, img, cam = _load(path)
    h, w = img.shape[:2]
    winks = _isolated_flat_winks(doc)
    assert winks, "no isolated flat wink to check"
    ang = np.linspace(0, 2 * math.pi, 16, endpoint=False)
    checked = 0
    for p in winks:
        c, r = np.asarray(p["center_mm"]), p["radius_mm"]
        inside = np.array([[c[0], c[1], 1.5]] + [[c[0] + INSIDE_RATIO * r * math.cos(a),
                                                   c[1] + INSIDE_RATIO * r * math.sin(a), 1.5] for a in ang[::2]])
        ring = np.column_stack([c[0] + (r + RING_GAP_MM) * np.cos(ang), c[1] + (r + RING_GAP_MM) * np.sin(ang),
                                np.zeros(len(ang))])
        pin = np.round(cam.project_mm(inside)).astype(int)
        pout = np.round(cam.project_mm(ring)).astype(int)
        if (pin.min() < 0 or pout.min() < 0 or pin[:, 0].max() >= w or pout[:, 0].max() >= w
                or pin[:, 1].max() >= h or pout[:, 1].max() >= h):
            continue
        med_in = np.median(img[pin[:, 1], pin[:, 0]].astype(float), axis=0)
        med_out = np.median(img[pout[:, 1], pout[:, 0]].astype(float), axis=0)
        assert np.linalg.norm(med_in - med_out) > MIN_COLOR_DISTANCE, (p["id"], med_in, med_out)
        assert _expected_hue_ok(p["color"], med_in), (p["id"], p["color"], med_in)
        checked += 1
    assert checked >= 1
