"""Ring-marbles renders: truth lands on the committed photos, counts add up, groups pack, seeds repeat."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from simulation.marbles import (
    LATTICE_SPACING_MM,
    RING_RADIUS_MM,
    MarblesSceneSpec,
    close_packed_group,
    generate_marbles,
    ring_ellipse_px,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "marbles"
MIN_BALL_DELTA_E = 8.0  # CIE76, mean colour of a ball's disc against the surface around it
MAX_EMPTY_MEDIAN_DELTA_E = 4.0  # the same discs on empty sand or ground (median of 9)
EMPTY_CONTROLS = 9
CONTACT_TOL_MM = 1e-6
JSON_ROUNDING_TOL_MM = 2e-3  # truth centres are written to 0.001 mm
CENTROID_TOL_MM = 10.0  # RULES.md 4.1 (INTERP)
PIECE_FIELDS = {"id", "kind", "center_mm", "diameter_mm", "on_ring", "center_px"}


def _docs() -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text())) for p in sorted(SAMPLES.glob("*.json"))]


def _radius_px(cam: CameraModel, piece: dict) -> float:
    c = np.array([*piece["center_mm"], piece["center_z_mm"]])
    depth = float((cam.R @ c + cam.tvec)[2])
    return cam.K[0, 0] * piece["diameter_mm"] / 2 / depth


def _discs(centre_px, radii_px: list[float], shape) -> tuple[list[np.ndarray], tuple[slice, slice]]:
    """Filled discs about ``centre_px`` in the image window that holds the largest of them."""
    h, w = shape[:2]
    reach = int(math.ceil(max(radii_px))) + 2
    x0, y0 = max(int(centre_px[0]) - reach, 0), max(int(centre_px[1]) - reach, 0)
    x1, y1 = min(int(centre_px[0]) + reach + 2, w), min(int(centre_px[1]) + reach + 2, h)
    out = []
    for r in radii_px:
        m = np.zeros((y1 - y0, x1 - x0), np.uint8)
        c16 = (int(round((centre_px[0] - x0) * 16)), int(round((centre_px[1] - y0) * 16)))
        cv2.circle(m, c16, int(round(r * 16)), 255, -1, cv2.LINE_8, 4)
        out.append(m)
    return out, (slice(y0, y1), slice(x0, x1))


def _contrast(img_lab: np.ndarray, inside: np.ndarray, around: np.ndarray) -> float:
    """CIE76 colour difference between the mean colours of two regions (OpenCV 8-bit Lab)."""
    a = img_lab[inside > 0].reshape(-1, 3).astype(np.float64).mean(axis=0)
    b = img_lab[around > 0].reshape(-1, 3).astype(np.float64).mean(axis=0)
    return float(np.linalg.norm(a - b))


def test_samples_cover_the_required_scenes():
    docs = [d for _, d in _docs()]
    assert len(docs) >= 8
    on_counts = [d["counts"]["marbles_on_ring"] for d in docs]
    assert 49 in on_counts and 13 in on_counts
    assert any(d["counts"]["marbles_off_ring"] > 0 for d in docs)
    assert any(d["counts"]["tolleys_on_ring"] > 0 for d in docs)
    assert any(d["counts"]["tolleys_off_ring"] > 0 for d in docs)
    assert any("scribed_line" in d for d in docs)
    assert {d["ground"] for d in docs} == {"grass", "earth", "pavement"}


def test_truth_fields_and_counts():
    for path, doc in _docs():
        assert doc["game"] == "marbles"
        ring = doc["ring"]
        assert ring["center_mm"] == [0.0, 0.0] and ring["radius_mm"] == pytest.approx(914.4)
        cam = CameraModel.from_dict(doc["calibration"]["camera"])
        assert ring["ellipse_px"] == ring_ellipse_px(cam)
        np.testing.assert_allclose(ring["center_px"], cam.project_mm(np.zeros((1, 3)))[0], atol=0.01)
        for p in doc["pieces"]:
            assert PIECE_FIELDS <= set(p), (path.name, PIECE_FIELDS - set(p))
            assert p["on_ring"] == (math.hypot(*p["center_mm"]) <= RING_RADIUS_MM)
        pieces = doc["pieces"]
        counts = doc["counts"]
        assert counts["marbles_on_ring"] == sum(p["kind"] == "marble" and p["on_ring"] for p in pieces)
        assert counts["marbles_off_ring"] == sum(p["kind"] == "marble" and not p["on_ring"] for p in pieces)
        assert counts["tolleys_on_ring"] == sum(p["kind"] == "tolley" and p["on_ring"] for p in pieces)
        # no two balls overlap
        xy = np.array([p["center_mm"] for p in pieces])
        r = np.array([p["diameter_mm"] / 2 for p in pieces])
        gap = np.linalg.norm(xy[:, None] - xy[None], axis=2) - (r[:, None] + r[None])
        np.fill_diagonal(gap, np.inf)
        assert gap.min() >= -JSON_ROUNDING_TOL_MM, path.name


def test_truth_projects_onto_rendered_balls():
    """Each ball's projected disc stands out from the sand or ground around it; empty discs do not."""
    rng = np.random.default_rng(3)
    for path, doc in _docs():
        img = cv2.imread(str(path.with_suffix(".jpg")))
        lab = cv2.cvtColor(img, cv2.COLOR_BGR2Lab)
        cam = CameraModel.from_dict(doc["calibration"]["camera"])
        occupied = np.zeros(img.shape[:2], np.uint8)
        discs = []
        for p in doc["pieces"]:
            rpx = _radius_px(cam, p)
            centre = cam.project_mm(np.array([[*p["center_mm"], p["center_z_mm"]]]))[0]
            np.testing.assert_allclose(centre, p["center_px"], atol=0.01)
            discs.append((p, rpx))
            cv2.circle(
                occupied,
                tuple(int(v) for v in np.round(p["center_px"])),
                int(math.ceil(rpx * 1.3 + 2)),
                255,
                -1,
            )
        for p, rpx in discs:
            for reach in (3.0, 6.0, 9.0, 12.0):  # inside a close-packed group, look past its edge
                (inside, outer), win = _discs(
                    p["center_px"], [max(0.65 * rpx, 1.0), reach * rpx + 4], img.shape
                )
                around = outer & ~occupied[win]
                if np.count_nonzero(around) >= 30:
                    break
            assert inside.any() and np.count_nonzero(around) >= 30, (path.name, p["id"])
            c = _contrast(lab[win], inside, around)
            assert c >= MIN_BALL_DELTA_E, (path.name, p["id"], c)
        # negative control: discs of a marble's size on empty surface, away from balls and the rim
        rpx = discs[0][1]
        rim = np.zeros(img.shape[:2], np.uint8)
        e = doc["ring"]["ellipse_px"]
        cv2.ellipse(rim, (tuple(e["center"]), tuple(e["axes"]), e["angle_deg"]), 255, int(rpx * 8 + 40))
        blocked = cv2.dilate(occupied, np.ones((int(6 * rpx + 9),) * 2, np.uint8)) | rim
        empty = []
        for _ in range(600):
            c = rng.uniform(
                [0.1 * img.shape[1], 0.1 * img.shape[0]], [0.9 * img.shape[1], 0.9 * img.shape[0]]
            )
            (inside, own, outer), win = _discs(
                c, [max(0.65 * rpx, 1.0), 1.3 * rpx + 2, 3.0 * rpx + 4], img.shape
            )
            around = outer & ~own
            if (outer & blocked[win]).any():
                continue
            empty.append(_contrast(lab[win], inside, around))
            if len(empty) == EMPTY_CONTROLS:
                break
        assert len(empty) == EMPTY_CONTROLS, path.name
        assert np.median(empty) < MAX_EMPTY_MEDIAN_DELTA_E, (path.name, empty)


@pytest.mark.parametrize("n, enclosing_mm", [(13, 28.0), (25, 40.0), (37, 44.0), (49, 52.0)])
def test_close_packed_groups_meet_the_rules_check(n, enclosing_mm):
    pts = close_packed_group(n, rotation_rad=0.4, offset_mm=(1.5, -2.0))
    assert len(pts) == n
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    touching = np.abs(dist - LATTICE_SPACING_MM) < CONTACT_TOL_MM
    assert (touching.sum(axis=1) >= 2).all()
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(touching[i]):
            if j not in seen:
                seen.add(int(j))
                todo.append(int(j))
    assert len(seen) == n
    assert np.linalg.norm(pts.mean(axis=0)) <= CENTROID_TOL_MM
    enclosing = np.linalg.norm(pts - pts.mean(axis=0), axis=1).max() + LATTICE_SPACING_MM / 2
    assert enclosing == pytest.approx(enclosing_mm, abs=4.0)


def test_deterministic_by_seed(tmp_path):
    spec = MarblesSceneSpec(group=13, scatter_on=3, scatter_off=2, tolleys_on=1, framing="ring")
    outs = []
    for run, seed in enumerate((9, 9, 10)):
        jpg, js = generate_marbles(
            np.random.default_rng(seed), tmp_path / str(run), "tiny", (320, 240), spec=spec, supersample=2
        )
        outs.append((jpg.read_bytes(), js.read_text()))
    assert outs[0] == outs[1]
    assert outs[0][0] != outs[2][0]
