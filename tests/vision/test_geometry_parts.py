"""Rectification maps, projected outlines and the sub-pixel edge fit, on exact synthetic inputs."""

import math

import cv2
import numpy as np
import pytest

from synth import default_camera
from vision.ortho import OrthoGrid, ortho_maps
from vision.silhouette import RoundSolid, edge_crossings, outline, sample_profiles, solve_shift
from vision.tiddlywinks import camera_for_frame

POSITION_TOL_MM = 0.15


def test_ortho_maps_follow_the_camera():
    cam = default_camera(1920, 1080)
    grid = OrthoGrid.covering(-300, 300, -200, 200, 1.0, 1.5)
    mx, my = ortho_maps(cam, grid)
    rng = np.random.default_rng(3)
    cr = np.column_stack([rng.uniform(0, grid.width_px - 1, 50), rng.uniform(0, grid.height_px - 1, 50)])
    xy = grid.table_from_ortho(cr)
    want = cam.project_mm(np.column_stack([xy, np.full(50, 1.5)]))
    got = np.column_stack([cv2.remap(mx, cr[:, 0:1].astype(np.float32), cr[:, 1:2].astype(np.float32),
                                     cv2.INTER_LINEAR).ravel(),
                           cv2.remap(my, cr[:, 0:1].astype(np.float32), cr[:, 1:2].astype(np.float32),
                                     cv2.INTER_LINEAR).ravel()])
    assert np.abs(got - want).max() < 0.05  # pixels


def test_ortho_grid_round_trip():
    grid = OrthoGrid.covering(-974.4, 974.4, -517.2, 517.2, 1.0, 1.5)
    xy = np.array([[0.0, 0.0], [123.4, -56.7], [-900.0, 400.0]])
    np.testing.assert_allclose(grid.table_from_ortho(grid.ortho_from_table(xy)), xy, atol=1e-9)


def test_outline_points_are_on_the_hull_and_face_outwards():
    cam = default_camera(1920, 1080, tilt_deg=25.0)
    ol = outline(cam, RoundSolid(11.0, 1.5, 11.0, 0.0), np.array([200.0, 100.0]), 96)
    radial = ol.points_px - ol.center_px
    assert np.all((radial * ol.normals_px).sum(axis=1) > 0)
    hull = cv2.convexHull(ol.points_px.astype(np.float32))
    d = [cv2.pointPolygonTest(hull, (float(p[0]), float(p[1])), True) for p in ol.points_px]
    assert max(abs(v) for v in d) < 1e-3


@pytest.mark.parametrize("shift_mm", [(0.0, 0.0), (0.4, -0.3), (-0.7, 0.2)])
def test_edge_fit_recovers_a_drawn_disc(shift_mm):
    """A disc drawn at a known centre: starting 0.4-0.7 mm off, the known-radius fit lands within 0.15 mm."""
    cam = default_camera(1920, 1080)
    true_c = np.array([150.0, -80.0])
    solid = RoundSolid(11.0, 1.5, 11.0, 0.0)
    img = np.full((1080, 1920, 3), (50, 110, 40), np.uint8)
    ol = outline(cam, solid, true_c, 360)
    cv2.fillPoly(img, [np.round(ol.points_px * 16).astype(np.int32)], (40, 40, 200), cv2.LINE_AA, shift=4)
    img = cv2.GaussianBlur(img, (0, 0), 0.8)
    c = true_c + np.asarray(shift_mm)
    for _ in range(4):
        o = outline(cam, solid, c, 96)
        es = edge_crossings(sample_profiles(img, o.points_px, o.normals_px, 6.0, 0.5), 6.0, 0.5)
        delta, bias, cov, rms = solve_shift(o.jac, es.offsets_px, np.ones(len(o.jac)), True)
        c = c + delta
    assert math.dist(c, true_c) < POSITION_TOL_MM


def test_camera_for_a_resized_frame_scales_the_intrinsics():
    cam = default_camera(1920, 1080)
    half = camera_for_frame(cam, (960, 540))
    p = np.array([[100.0, 50.0, 0.0]])
    np.testing.assert_allclose((cam.project_mm(p) + 0.5) / 2 - 0.5, half.project_mm(p), atol=1e-6)


def test_baseline_distance_is_the_nearest_of_the_four_painted_lines():
    """The distance folds every point into one quadrant; measured against each corner's own line it agrees."""
    from geometry import tiddlywinks as tw
    from vision.winks import baseline_distance_mm

    rng = np.random.default_rng(11)
    pts = rng.uniform([-980.0, -520.0], [980.0, 520.0], (5000, 2))
    want = np.full(len(pts), np.inf)
    for sx in (1, -1):
        for sy in (1, -1):
            a, b = np.asarray(tw.baseline_segment((sx, sy)).coords)
            t = np.clip(((pts - a) @ (b - a)) / float((b - a) @ (b - a)), 0.0, 1.0)
            want = np.minimum(want, np.linalg.norm(pts - (a + t[:, None] * (b - a)), axis=1))
    np.testing.assert_allclose(baseline_distance_mm(pts), want, atol=1e-9)
    # a point on a line's middle is 0 mm from it; 5 mm off it, 5 mm
    a, b = np.asarray(tw.baseline_segment((-1, 1)).coords)
    mid = (a + b) / 2
    normal = np.array([-(b - a)[1], (b - a)[0]]) / np.linalg.norm(b - a)
    assert baseline_distance_mm(mid[None])[0] < 1e-9
    assert abs(baseline_distance_mm((mid + 5.0 * normal)[None])[0] - 5.0) < 1e-9


def test_ground_sampling_distance_is_remembered_per_camera_and_point():
    cam = default_camera(1920, 1080, tilt_deg=25.0)
    near, far = cam.mm_per_px_at((0.0, -300.0)), cam.mm_per_px_at((0.0, 300.0))
    assert near != far  # a tilted camera sees one side of the mat coarser than the other
    assert cam.mm_per_px_at((0.0, -300.0)) == near and cam.mm_per_px_at((0.0, 300.0)) == far
    other = default_camera(3840, 2160, tilt_deg=25.0)
    assert other.mm_per_px_at((0.0, -300.0)) == pytest.approx(near / 2, rel=0.02)


def test_edge_crossing_of_a_step_and_none_without_contrast():
    # a step from 200 (inside) to 40 (outside) between samples 12 and 13 of offsets -6..6 px: the 35 % level of
    # the distance from the outside lies 0.35 of the way back from sample 13; a flat profile has no crossing
    t = np.arange(-6.0, 6.0 + 1e-9, 0.5)
    step = np.where(t <= 0.0, 200.0, 40.0).astype(np.float32)
    prof = np.stack([np.repeat(step[:, None], 3, axis=1), np.full((len(t), 3), 90.0, np.float32)])
    es = edge_crossings(prof, 6.0, 0.5)
    assert es.offsets_px[0] == pytest.approx(0.0 + 0.65 * 0.5, abs=1e-6)
    assert np.isnan(es.offsets_px[1]) and es.contrast[1] == 0.0


def test_shift_fit_recovers_a_known_shift_with_and_without_bias():
    # offsets along unit normals all round a circle: offset_k = bias + n_k . delta
    ang = np.linspace(0.0, 2 * math.pi, 90, endpoint=False)
    jac = np.column_stack([np.cos(ang), np.sin(ang)])
    delta = np.array([0.4, -0.25])
    for fit_bias, bias in ((True, 0.3), (False, 0.0)):
        offs = bias + jac @ delta
        got, b, cov, rms = solve_shift(jac, offs, np.ones(len(ang)), fit_bias)
        np.testing.assert_allclose(got, delta, atol=1e-9)
        assert b == pytest.approx(bias, abs=1e-9) and rms < 1e-9 and np.all(np.isfinite(cov))
    # too few usable samples: no fit (infinite covariance)
    offs = np.full(len(ang), np.nan)
    offs[:2] = 0.0
    assert not np.isfinite(solve_shift(jac, offs, np.ones(len(ang)), True)[2]).any()
