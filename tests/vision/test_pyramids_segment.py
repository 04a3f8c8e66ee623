"""Three-way segmentation of pyramids: a faint tint is told from grey shade; uncertain pixels are neutral in
the silhouette fit (vision/pyramids_segment.py, vision/pyramids_fit.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import Polygon

from calibration.camera import CameraModel
from geometry.pyramids import upright_pose
from vision.pyramids_fit import BlobFitter, fit_single, hull_px, shadow_hull_px
from vision.pyramids_segment import (
    chroma_zscore,
    difference_map,
    foreground_mask,
    shadow_mask,
    table_reference_bgr,
    uncertain_mask,
)


def _srgb8(lin: np.ndarray) -> np.ndarray:
    return np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * np.clip(lin, 0, None) ** (1 / 2.4) - 0.055) * 255


def _wood_photo(rng: np.random.Generator) -> np.ndarray:
    """Orange wood with grain; a faint yellow plastic (a tint multiplying the light) at rows/cols 60-100, and a
    grey shade (the same wood at 55 % light) at rows 60-100, cols 200-240. BGR uint8."""
    h, w = 300, 400
    wood = ((np.array([150.0, 100.0, 55.0]) / 255 + 0.055) / 1.055) ** 2.4  # linear RGB
    grain = 1.0 + 0.06 * np.repeat(rng.normal(size=(h, 1)), w, axis=1) + 0.02 * rng.normal(size=(h, w))
    lin = wood[None, None] * grain[..., None]
    lin[60:100, 60:100] *= (0.95, 0.85, 0.55)
    lin[60:100, 200:240] *= 0.55
    rgb = _srgb8(lin) + rng.normal(0.0, 1.5, size=lin.shape)
    return np.clip(rgb, 0, 255).astype(np.uint8)[..., ::-1].copy()


def test_a_faint_tint_stands_out_in_chroma_where_grey_shade_does_not():
    rng = np.random.default_rng(3)
    frame = _wood_photo(rng)
    ref = table_reference_bgr(frame, 151)
    z = chroma_zscore(frame, ref)
    tint, shade, table = z[65:95, 65:95], z[65:95, 205:235], z[200:, :]
    assert np.median(tint) > 4.0
    assert np.median(shade) < 2.0
    assert np.percentile(table, 99) < 3.0
    # the Lab distance misses that tint: it is below the strict foreground threshold
    strict, _ = foreground_mask(difference_map(frame, ref), 6.0, 4.0, shadow_mask(frame, ref, 0.25, 0.15))
    assert strict[65:95, 65:95].mean() < 0.1
    # ... so next to a certain piece it is uncertain, not table; far from any piece it is table
    certain = np.zeros(frame.shape[:2], np.uint8)
    certain[100:110, 60:100] = 1
    unshaded, _ = foreground_mask(difference_map(frame, ref), 6.0, 4.0)
    u = uncertain_mask(certain, unshaded, z, 3.0, reach_px=50)
    assert u[65:95, 65:95].mean() > 0.8
    assert u[65:95, 205:235].mean() < 0.05  # grey shade 100 px from the certain pixels: beyond reach
    assert u[200:, :].mean() < 0.01
    assert not (u & certain).any()


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_a_face_lost_to_shade_does_not_shrink_the_fit_when_it_is_uncertain(size):
    cam = CameraModel.look_at(eye_mm=(0.0, -500.0, 900.0), target_mm=(0.0, 0.0, 0.0), focal_px=1400.0,
                              image_size_wh_px=(1920, 1080))
    pose = upright_pose(size, (5.0, -3.0), 0.4)
    hull = Polygon(hull_px(cam, pose))
    apex = cam.project_mm(pose.apex_mm()[None])[0]
    c = cam.project_mm(pose.corners_mm())
    faces = [Polygon([apex, c[k], c[(k + 1) % 4]]).buffer(0).intersection(hull) for k in range(4)]
    lost = max(faces, key=lambda f: f.area)  # the shaded face the segmentation could not claim
    blob = hull.difference(lost)
    blob = max(getattr(blob, "geoms", [blob]), key=lambda g: g.area)
    # the piece's cast shadow beside it is just as uncertain
    shadow = Polygon(shadow_hull_px(cam, pose, np.array([0.5, -0.4]))).difference(hull)
    pts = np.asarray(blob.exterior.coords)[:-1]

    iou, (best,) = fit_single(BlobFitter(cam, blob, None, lost.union(shadow)), pts)[0]
    assert (best.kind, best.size) == ("upright", size)
    assert math.dist(best.params[:2], (5.0, -3.0)) < 1.5
    assert iou > 0.9
    # counted as table (the two-way mask), the lost face pulls the fit to another piece
    _, (two_way,) = fit_single(BlobFitter(cam, blob), pts)[0]
    assert (two_way.kind, two_way.size) != ("upright", size) or math.dist(two_way.params[:2], (5.0, -3.0)) > 3.0
