"""A single ball's diameter from the blurred-sphere model at 6-7 px per marble, where the silhouette reads small."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.marbles import MARBLE_DIAMETER_MM, MARBLE_TOLLEY_SPLIT_MM
from vision.marbles import detect_marbles
from vision.marbles_size import blurred_disc, fit_ball, local_affine, model_fits, photo_lab

MARBLE_PX = 6.5  # a marble spans 6.5 of the photo's pixels: a whole-ring view at 1080p
# The model alone: a uniform disc, so a limb shaded darker reads a ball up to ~1 mm small and a shadow beside it
# up to ~1 mm large; still on the right side of the marble/tolley split, and its errors differ from the
# silhouette's, which is why the detector averages the two
SIZE_TOL_MM = 1.3
EYE_MM = (0.0, 0.0, 2400.0)
TOLLEY_MM = 16.8


def _camera(size=(480, 360)) -> CameraModel:
    focal = MARBLE_PX * (EYE_MM[2] - MARBLE_DIAMETER_MM / 2) / MARBLE_DIAMETER_MM
    return CameraModel.look_at(eye_mm=EYE_MM, target_mm=(0.0, 0.0, 0.0), focal_px=focal, image_size_wh_px=size)


def _photo(camera: CameraModel, balls: list[tuple[float, float, float, tuple]], *, psf_px: float = 1.0,
           shadow: bool = True, seed: int = 3) -> np.ndarray:
    """Sand with grain, each ball (x, y, diameter, linear BGR) a shaded disc 4x supersampled with a shadow trailing
    towards +x; lens blur on the linear light, sRGB encoding, then a JPEG round trip (colour at half resolution)."""
    w, h = camera.image_size_wh_px
    s = 4
    yy, xx = np.mgrid[:h * s, :w * s].astype(np.float32) / s - (s - 1) / (2 * s)
    img = np.empty((h * s, w * s, 3), np.float32)
    img[:] = (0.31, 0.51, 0.67)  # linear BGR of a pale sand
    for x, y, d, bgr in balls:
        c = camera.project_mm(np.array([[x, y, d / 2]]))[0]
        r_px = d / 2 / camera.mm_per_px_at((x, y), d / 2)
        ground = camera.project_mm(np.array([[x, y, 0.0]]))[0]
        sh = ((xx - ground[0] - 0.6 * r_px) ** 2 + (yy - ground[1]) ** 2) <= (0.9 * r_px) ** 2
        if shadow:
            img[sh] *= 0.6  # the shadow keeps the sand's colour
        rho2 = ((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / r_px**2
        disc = rho2 <= 1.0
        shade = (1.0 - 0.35 * rho2[disc])[:, None]  # a sphere darkens towards its limb
        img[disc] = np.asarray(bgr, np.float32) * shade
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    img = cv2.GaussianBlur(img, (0, 0), psf_px)
    img = np.where(img <= 0.0031308, 12.92 * img, 1.055 * np.power(np.clip(img, 0, 1), 1 / 2.4) - 0.055) * 255
    img += np.random.default_rng(seed).normal(0, 3, (h, w, 1)).astype(np.float32)
    ok, buf = cv2.imencode(".jpg", np.clip(img, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 88])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


BALLS = [(-60.0, -40.0, MARBLE_DIAMETER_MM, (0.05, 0.26, 0.58)), (55.0, -45.0, TOLLEY_MM, (0.30, 0.05, 0.35)),
         (-50.0, 50.0, 18.5, (0.06, 0.30, 0.10)), (60.0, 45.0, MARBLE_DIAMETER_MM, (0.52, 0.19, 0.05))]


def test_blurred_disc_is_half_at_a_straight_edge_and_less_on_a_small_one():
    assert blurred_disc(np.array([100.0]), 100.0, 1.0)[0] == pytest.approx(0.5, abs=0.01)
    # a small disc loses more of its blurred edge to the curvature: below half at its own rim
    assert blurred_disc(np.array([3.0]), 3.0, 1.0)[0] < 0.47


def test_local_affine_straight_down_is_the_scale_there():
    cam = _camera()
    A = local_affine(cam, np.array([0.0, 0.0, MARBLE_DIAMETER_MM / 2]))
    assert math.sqrt(abs(np.linalg.det(A))) * MARBLE_DIAMETER_MM == pytest.approx(MARBLE_PX, rel=0.01)


@pytest.mark.parametrize("shadow", [False, True])
@pytest.mark.parametrize("i", range(len(BALLS)))
def test_fit_reads_each_ball_true_at_six_and_a_half_pixels(i, shadow):
    cam = _camera()
    lab = photo_lab(_photo(cam, BALLS, shadow=shadow))
    x, y, d, _ = BALLS[i]
    f = fit_ball(lab, cam, np.array([x + 1.5, y - 1.0, MARBLE_DIAMETER_MM / 2]),
                 radius_guess_mm=0.5 * MARBLE_TOLLEY_SPLIT_MM)
    assert f is not None
    assert f.diameter_mm == pytest.approx(d, abs=SIZE_TOL_MM)
    assert (f.diameter_mm > MARBLE_TOLLEY_SPLIT_MM) == (d > MARBLE_TOLLEY_SPLIT_MM)


def test_photo_psf_is_measured_from_the_balls():
    cam = _camera()
    lab = photo_lab(_photo(cam, BALLS, psf_px=1.2, shadow=False))
    ctrs = np.array([[x, y, MARBLE_DIAMETER_MM / 2] for x, y, _, _ in BALLS])
    fits, psf = model_fits(lab, cam, ctrs, np.ones(len(BALLS), bool))
    sizes = [None if f is None else f.diameter_mm for f in fits]
    assert psf is not None and 0.8 < psf[0] < 1.8  # the lens blur plus the pixel and JPEG's own
    assert psf[1] >= psf[0] - 0.1  # JPEG halves colour's resolution: colour is never sharper
    for (_, _, d, _), got in zip(BALLS, sizes):
        assert got is not None and (got > MARBLE_TOLLEY_SPLIT_MM) == (d > MARBLE_TOLLEY_SPLIT_MM)


def test_detector_tells_tolleys_from_marbles_at_six_and_a_half_pixels():
    cam = _camera()
    found = detect_marbles(_photo(cam, BALLS), cam)
    got = {}
    for x, y, d, _ in BALLS:
        near = [b for b in found if math.dist(b.center_mm, (x, y)) < 8.0]
        assert len(near) == 1, (x, y, d)
        got[d] = near[0]
    for d, b in got.items():
        assert b.kind == ("tolley" if d > MARBLE_TOLLEY_SPLIT_MM else "marble"), (d, b.measured_diameter_mm)
        assert b.measured_diameter_mm == pytest.approx(d, abs=1.5)
