"""A clear piece that dims the table like a shadow is found by its ridges (vision/pyramids_shade_find.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.pyramids import upright_pose
from vision.pyramids import detect_pyramids
from vision.pyramids_fit import hull_px
from vision.pyramids_shade_find import EDGES, MIN_RIDGE_SUPPORT, RidgeMap

CLEAR_XY_MM = (-60.0, 20.0)
RED_XY_MM = (70.0, -30.0)


def _camera() -> CameraModel:
    return CameraModel.look_at(eye_mm=(-250.0, 0.0, 520.0), target_mm=(0.0, 0.0, 0.0), focal_px=1600.0,
                               image_size_wh_px=(960, 540))


def _wood(seed: int = 5) -> np.ndarray:
    """Pale wood: streaks along x and sensor noise (BGR uint8)."""
    rng = np.random.default_rng(seed)
    h, w = 540, 960
    y = np.arange(h, dtype=np.float32)[:, None]
    streaks = 6.0 * np.sin(y / 7.0 + 0.3 * np.sin(np.arange(w, dtype=np.float32)[None] / 90.0))
    base = np.array([150.0, 175.0, 205.0], np.float32)  # B, G, R
    img = base[None, None] + streaks[..., None] + rng.normal(0.0, 1.5, (h, w, 3)).astype(np.float32)
    return img


def _clear_piece(img: np.ndarray, cam: CameraModel, *, ridges: bool) -> np.ndarray:
    """A clear medium upright piece: the table behind dimmed alike in every channel (grey, as shade is), and,
    with ``ridges``, the walls' edges as thin dark lines; without, the same dimming blurred (a cast shadow)."""
    pose = upright_pose("medium", CLEAR_XY_MM, 0.4)
    hull = np.round(hull_px(cam, pose)).astype(np.int32)
    inside = np.zeros(img.shape[:2], np.float32)
    cv2.fillConvexPoly(inside, hull, 1.0)
    if not ridges:
        inside = cv2.GaussianBlur(inside, (0, 0), 5.0)  # a penumbra of a few px
    out = img * (1.0 - 0.3 * inside[..., None])
    if ridges:
        v = np.round(cam.project_mm(pose.vertices_mm())).astype(np.int32)
        lines = np.zeros(img.shape[:2], np.uint8)
        for i, j in EDGES:
            cv2.line(lines, tuple(int(c) for c in v[i]), tuple(int(c) for c in v[j]), 1, 1, cv2.LINE_AA)
        out[lines > 0] *= 0.8
    return out


def _red_piece(img: np.ndarray, cam: CameraModel) -> np.ndarray:
    """An opaque red large upright piece, lit face and shaded face: a plain blob for the photo's first look."""
    pose = upright_pose("large", RED_XY_MM, 0.2)
    v = cam.project_mm(pose.vertices_mm())
    out = img.copy()
    for k in range(4):
        tri = np.round(v[[k, (k + 1) % 4, 4]]).astype(np.int32)
        cv2.fillConvexPoly(out, tri, (40.0, 40.0, 170.0 + 12.0 * k))
    return out


@pytest.fixture(scope="module")
def cam():
    return _camera()


def _photo(cam, ridges: bool) -> np.ndarray:
    img = _red_piece(_clear_piece(_wood(), cam, ridges=ridges), cam)
    return np.clip(img, 0, 255).astype(np.uint8)


def _near(dets, xy_mm, gate_mm=12.0):
    return [d for d in dets if np.hypot(*(np.asarray(d.center_mm) - xy_mm)) < gate_mm]


def test_clear_piece_cut_as_shade_is_found_and_flagged(cam):
    """The clear piece dims the table by 0.7 in every channel: grey, so the first look cuts it as shade (the
    code before this test found only the red piece). Its ridges show, so the second look finds it, flagged."""
    dets = detect_pyramids(_photo(cam, ridges=True), cam)
    assert len(_near(dets, RED_XY_MM)) == 1
    found = _near(dets, CLEAR_XY_MM)
    assert len(found) == 1, [(d.color, d.size, d.pose, d.center_mm) for d in dets]
    d = found[0]
    assert (d.size, d.pose) == ("medium", "upright")
    assert d.flagged and any("shade" in r for r in d.reasons), d.reasons


def test_soft_shade_of_the_same_silhouette_is_not_a_piece(cam):
    """The same dimming blurred like a cast shadow, without the walls' lines: no piece there."""
    dets = detect_pyramids(_photo(cam, ridges=False), cam)
    assert len(_near(dets, RED_XY_MM)) == 1
    assert _near(dets, CLEAR_XY_MM, 25.0) == []


def test_ridge_support_tells_a_pyramids_lines_from_a_shadows_blur(cam):
    pose = upright_pose("medium", CLEAR_XY_MM, 0.4)
    v, hull = cam.project_mm(pose.vertices_mm()), hull_px(cam, pose)
    lined = RidgeMap(_photo(cam, ridges=True)).inner_edge_support(v, hull)
    soft = RidgeMap(_photo(cam, ridges=False)).inner_edge_support(v, hull)
    assert lined[1] >= 1 and soft[1] == lined[1]
    assert lined[0] >= MIN_RIDGE_SUPPORT > soft[0]
