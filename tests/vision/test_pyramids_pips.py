"""The moulded pips tell a lying piece's size (vision/pyramids_pips): each size shows its own count."""

from __future__ import annotations

import numpy as np
import pytest

from geometry.pyramids import PIP_LAYOUT_MM, PyramidPose, pip_sites_mm, pips, upright_pose
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import IceScene, Lighting, lying_piece, render_ice_scene
from vision.pyramids import DEFAULT_PARAMS, _pip_rival, _Verdict, apex_aligned_lying, assumed_overhead_camera
from vision.pyramids_fit import PieceHypothesis
from vision.pyramids_pips import PipMap, pip_contrast

MM_PER_PX = 0.4  # about the bench's 1080p scale at the middle of the view
SITE_TOL_MM = 1e-9
# Dot contrast (median responses) a face showing its pips beats the other counts' sites by, at least: the
# bench's lying pieces show 7-17 at their true poses; a few units of noise stay below this.
SEEN_CONTRAST = 4.0


def _lying_photo(size: str, seed: int = 5):
    rng = np.random.default_rng(seed)
    cam = assumed_overhead_camera((320, 240), MM_PER_PX)
    piece = lying_piece("p1", "green", size, (0.0, 0.0), 0.6)
    linear = render_ice_scene(IceScene(pieces=(piece,)), cam, Lighting.random(rng), rng, supersample=2)
    photo = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    pose = PyramidPose(size=size, rotation=piece.rotation, base_center_mm=tuple(piece.base_center_mm))
    return cam, photo, pose


@pytest.mark.parametrize("count", [1, 2, 3])
def test_pip_sites_sit_on_each_face_at_the_layouts_height_and_spacing(count):
    pose = upright_pose("medium", (10.0, -5.0), 0.3)
    up_mm, _, spacing_mm = PIP_LAYOUT_MM["medium"]
    sites = pip_sites_mm(pose, count)
    corners, apex = pose.corners_mm(), pose.apex_mm()
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        normal = np.cross(b - a, apex - a)
        along = (b - a) / np.linalg.norm(b - a)
        for s in sites[i]:
            assert abs((s - a) @ normal) / np.linalg.norm(normal) == pytest.approx(0.0, abs=SITE_TOL_MM)
            off = s - a - ((s - a) @ along) * along  # distance from the base edge's line, within the face
            assert np.linalg.norm(off) == pytest.approx(up_mm, abs=1e-6)
        gaps = np.linalg.norm(np.diff(sites[i], axis=0), axis=1)
        np.testing.assert_allclose(gaps, spacing_mm, atol=1e-6)


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_a_lying_piece_shows_its_own_sizes_pip_count(size):
    cam, photo, pose = _lying_photo(size)
    contrast = pip_contrast(PipMap(photo, MM_PER_PX), cam, pose)
    own = contrast[pips(size)]
    assert own >= SEEN_CONTRAST
    assert all(own > v for n, v in contrast.items() if n != pips(size))


def _shrunk_fit(size: str, true_size: str) -> PieceHypothesis:
    """A lying fit of ``size`` on the rendered piece's axis and apex: how a silhouette that lost the dark open
    base end is fitted by a smaller size."""
    return apex_aligned_lying(PieceHypothesis("lying", true_size, (0.0, 0.0, 0.6)), size)


@pytest.mark.parametrize(("size", "read_as"), [("large", "medium"), ("medium", "small")])
def test_a_lying_piece_fitted_one_size_smaller_does_not_show_that_sizes_pips(size, read_as):
    """Where the shrunk fit puts its own pips the face is plain plastic; the true size's pips show."""
    cam, photo, pose = _lying_photo(size)
    pm = PipMap(photo, MM_PER_PX)
    shrunk = _shrunk_fit(read_as, size).pose()
    assert pip_contrast(pm, cam, pose)[pips(size)] - pip_contrast(pm, cam, shrunk)[pips(read_as)] >= SEEN_CONTRAST


@pytest.mark.parametrize(("size", "read_as"), [("large", "medium"), ("medium", "small")])
def test_a_lying_piece_read_one_size_smaller_is_flagged_by_its_pips(size, read_as):
    """The silhouette scores the smaller size a little better (a lost face); the true size's fit, close behind,
    shows its pips: the verdict is flagged, never scored silently. The true size read is left alone."""
    cam, photo, pose = _lying_photo(size)
    pm = PipMap(photo, MM_PER_PX)
    true_fit = PieceHypothesis("lying", size, (0.0, 0.0, 0.6))
    assert true_fit.pose().apex_mm() == pytest.approx(pose.apex_mm(), abs=1e-6)
    shrunk = _shrunk_fit(read_as, size)
    wrong = _Verdict(pieces=[shrunk], iou=0.85, runner_up_iou=0.8, runner_up_desc="",
                     singles=[(0.85, [shrunk]), (0.8, [true_fit])])
    assert _pip_rival(pm, cam, shrunk, wrong, DEFAULT_PARAMS) is not None
    # in a pair (no single fits to compare) the larger size sharing its apex still shows the pips
    paired = _Verdict(pieces=[shrunk, true_fit], iou=0.85, runner_up_iou=0.8, runner_up_desc="")
    assert _pip_rival(pm, cam, shrunk, paired, DEFAULT_PARAMS) is not None
    right = _Verdict(pieces=[true_fit], iou=0.85, runner_up_iou=0.8, runner_up_desc="",
                     singles=[(0.85, [true_fit]), (0.8, [shrunk])])
    assert _pip_rival(pm, cam, true_fit, right, DEFAULT_PARAMS) is None
