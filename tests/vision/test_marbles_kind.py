"""A single ball's kind read against its own photo's marbles (vision.marbles_kind, vision.marbles._photo_kinds)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.marbles import MARBLE_DIAMETER_MM
from vision.marbles import (DEFAULT_PARAMS, KIND_SURE, BallDetection, _joined_doubts, _joined_marble_probabilities,
                            _kind_confidence, _photo_kinds, _size_sigma_mm)
from vision.marbles_kind import MIN_REFERENCE_BALLS, join_reads, photo_scale

SAMPLE = Path(__file__).resolve().parents[2] / "sample_images" / "marbles" / "marbles_06_midgame.json"
NATIVE_PX = 6.5  # a whole-ring photo: the kinds are hardest here
BIAS_TOL_MM = 0.4  # the median of 60 reads scattered 0.8 mm lands well within half a sigma


@pytest.fixture(scope="module")
def camera() -> CameraModel:
    return CameraModel.from_dict(json.loads(SAMPLE.read_text())["calibration"]["camera"])


def _marble_reads(rng: np.random.Generator, n: int, bias_mm: float, scatter_mm: float) -> np.ndarray:
    return MARBLE_DIAMETER_MM + bias_mm + rng.normal(0.0, scatter_mm, n)


def _ball(camera: CameraModel, i: int, read_mm: float) -> BallDetection:
    """A single ball on the ring top as the detector leaves it: kind by the size model's split on ``read_mm``."""
    xy = (-600.0 + 60.0 * i, 150.0)
    px = camera.project_mm(np.array([[xy[0], xy[1], MARBLE_DIAMETER_MM / 2]]))[0]
    kc = _kind_confidence(read_mm, NATIVE_PX, DEFAULT_PARAMS)
    return BallDetection(kind="tolley" if read_mm > 14.35 else "marble", center_mm=xy,
                         center_z_mm=MARBLE_DIAMETER_MM / 2, diameter_mm=MARBLE_DIAMETER_MM, on_ring=True,
                         ring_margin_mm=300.0, center_px=(float(px[0]), float(px[1])), confidence=kc,
                         position_sigma_mm=1.0, kind_confidence=kc, measured_diameter_mm=float(read_mm),
                         size_sigma_mm=_size_sigma_mm(NATIVE_PX, DEFAULT_PARAMS))


def test_photo_scale_is_measured_on_the_marbles_not_the_tolleys():
    rng = np.random.default_rng(3)
    marbles = _marble_reads(rng, 60, -2.0, 0.8)
    scale = photo_scale(np.concatenate([marbles, [15.5, 16.8]]), 0.3)
    assert scale is not None and scale.n_read == 62
    # the marbles below the tolley cut: the few read beyond median + 1.65 mm (2 sigmas) are left out ...
    assert 55 <= scale.n_marbles <= 60
    assert scale.bias_mm == pytest.approx(-2.0, abs=BIAS_TOL_MM)
    # ... but their scatter is not read small for it (a half-MAD of 30 reads is good to about a fifth)
    assert scale.scatter_mm == pytest.approx(0.8, rel=0.3)


def test_no_photo_scale_from_too_few_balls_or_a_bulk_of_tolleys():
    rng = np.random.default_rng(4)
    assert photo_scale(_marble_reads(rng, MIN_REFERENCE_BALLS - 1, 0.0, 0.5), 0.3) is None
    # a photo of tolleys alone (a drop for who plays first): their sizes are no marble's
    assert photo_scale(rng.uniform(16.0, 19.0, 8) + rng.normal(0.0, 0.3, 8), 0.3) is None


def test_in_a_photo_reading_large_a_marble_read_as_a_tolley_is_flagged_not_called(camera):
    rng = np.random.default_rng(5)
    reads = list(_marble_reads(rng, 20, 1.5, 0.6))  # a photo whose reads run 1.5 mm large (its shadows counted)
    marble_read = MARBLE_DIAMETER_MM + 1.5 + 2.3  # its worst-read marble, 16.5 mm
    balls = [_ball(camera, i, r) for i, r in enumerate([*reads, marble_read])]
    # the size model alone calls it a tolley outright
    assert balls[-1].kind == "tolley" and balls[-1].kind_confidence >= KIND_SURE
    out = _photo_kinds(camera, balls, DEFAULT_PARAMS)
    assert out[-1].kind_confidence < KIND_SURE


def test_the_photo_check_never_changes_a_kind_nor_makes_one_surer(camera):
    rng = np.random.default_rng(8)
    reads = [*_marble_reads(rng, 20, -2.5, 0.6), 15.3, 16.8, 13.9]
    balls = [_ball(camera, i, r) for i, r in enumerate(reads)]
    out = _photo_kinds(camera, balls, DEFAULT_PARAMS)
    assert [b.kind for b in out] == [b.kind for b in balls]
    assert all(o.kind_confidence <= b.kind_confidence + 1e-12 for o, b in zip(out, balls))
    assert [o.center_mm for o in out] == [b.center_mm for b in balls]
    # the photo's marbles, read as its marbles read, stay called
    assert sum(o.kind_confidence >= KIND_SURE for o in out[:20]) >= 18


def test_in_a_photo_of_scattered_reads_a_large_read_is_flagged_not_called(camera):
    rng = np.random.default_rng(6)
    reads = list(_marble_reads(rng, 20, 0.0, 2.2))  # a photo whose marbles read anywhere from 9 to 17 mm
    balls = [_ball(camera, i, r) for i, r in enumerate([*reads, 16.8])]
    # the size model's fixed sigma calls a 16.8 mm read a tolley outright
    assert balls[-1].kind == "tolley" and balls[-1].kind_confidence >= KIND_SURE
    out = _photo_kinds(camera, balls, DEFAULT_PARAMS)
    assert out[-1].kind_confidence < KIND_SURE


def test_balls_without_a_whole_read_and_sparse_photos_keep_the_detectors_kinds(camera):
    balls = [_ball(camera, i, r) for i, r in enumerate([12.0, 12.5, 16.9])]
    assert _photo_kinds(camera, balls, DEFAULT_PARAMS) == balls  # too few marbles to measure the photo
    rng = np.random.default_rng(7)
    balls = [_ball(camera, i, r) for i, r in enumerate(_marble_reads(rng, 10, -2.5, 0.6))]
    cut = replace(_ball(camera, 10, 13.0), size_sigma_mm=None)  # a lower bound (cut by unseen ground)
    out = _photo_kinds(camera, [*balls, cut], DEFAULT_PARAMS)
    assert out[-1] == cut



# --- each read calibrated on the photo's own marbles, then joined (vision.marbles_kind.join_reads) ---------------

# A whole-ring photo's three reads, biased as marbles_06 measured them: the area reads marbles ~5.8 mm small, the
# outline about true, the blurred-sphere fit 0.4 mm large (each scattered about 1 mm there: 1.4-1.7 in that photo)
READ_BIAS_MM = (-5.8, -0.2, 0.4)
READ_SCATTER_MM = (1.0, 1.2, 1.1)


def _reads(rng: np.random.Generator, true_mm: float, n: int) -> np.ndarray:
    return true_mm + np.array(READ_BIAS_MM) + rng.normal(0.0, 1.0, (n, 3)) * np.array(READ_SCATTER_MM)


def _read_ball(camera: CameraModel, i: int, reads: np.ndarray) -> BallDetection:
    """A single ball as the detector leaves it before the join: sized by its reads' plain mean (area and outline
    averaged, then with the blurred-sphere fit)."""
    b = _ball(camera, i, 0.5 * (0.5 * (reads[0] + reads[1]) + reads[2]))
    return replace(b, size_reads_mm=tuple(float(v) for v in reads))


def test_joined_reads_are_calibrated_each_on_the_photos_marbles():
    rng = np.random.default_rng(21)
    reads = np.vstack([_reads(rng, MARBLE_DIAMETER_MM, 40), _reads(rng, 17.5, 3)])
    reads[::4, 2] = np.nan  # not every ball has every read
    got = join_reads(reads)
    assert got is not None
    for b, s, want_b, want_s in zip(got.bias_mm, got.scatter_mm, READ_BIAS_MM, READ_SCATTER_MM):
        assert b == pytest.approx(want_b, abs=0.8) and s == pytest.approx(want_s, rel=0.6)
    # the joined read is better than any one read alone, and its bias is gone
    assert got.scale.scatter_mm < min(READ_SCATTER_MM)
    assert got.scale.bias_mm == pytest.approx(0.0, abs=0.5)
    assert np.all(got.diameter_mm[-3:] > 15.0)


def test_a_marble_the_plain_mean_calls_a_tolley_outright_is_flagged_by_its_joined_reads(camera):
    rng = np.random.default_rng(22)
    marbles = _reads(rng, MARBLE_DIAMETER_MM, 40)
    # a marble whose blurred-sphere fit took its tinted shadow in (20.7 mm) and whose outline ran 3 mm out
    odd = MARBLE_DIAMETER_MM + np.array([READ_BIAS_MM[0] + 2.0, 3.0, 8.0])
    tolleys = _reads(rng, 17.5, 2)
    balls = [_read_ball(camera, i, r) for i, r in enumerate([*marbles, odd, *tolleys])]
    assert balls[40].kind == "tolley" and balls[40].kind_confidence >= KIND_SURE  # the plain mean: 16.5 mm
    p_marble = _joined_marble_probabilities(balls, {})
    out = _joined_doubts(balls, p_marble)
    assert out[40].kind_confidence < KIND_SURE
    # a second opinion never changes a kind nor makes one surer, and the joined reads still find the tolleys
    assert [b.kind for b in out] == [b.kind for b in balls]
    assert all(o.kind_confidence <= b.kind_confidence + 1e-12 for o, b in zip(out, balls))
    assert p_marble[41] < 0.5 and p_marble[42] < 0.5


def test_a_ball_whose_reads_disagree_beyond_their_errors_is_a_guess(camera):
    rng = np.random.default_rng(23)
    marbles = _reads(rng, MARBLE_DIAMETER_MM, 40)
    # a ball at the rim's edge: its outline took the rim (9 mm) while area and sphere fit took the grass (21 mm)
    broken = np.array([21.0 + READ_BIAS_MM[0], 8.8, 21.0 + READ_BIAS_MM[2]])
    balls = [_read_ball(camera, i, r) for i, r in enumerate([*marbles, broken])]
    assert balls[-1].kind_confidence >= KIND_SURE  # the plain mean calls it a tolley outright
    assert _joined_marble_probabilities(balls, {})[len(balls) - 1] == 0.5


def test_no_second_opinion_in_a_photo_of_too_few_single_balls(camera):
    rng = np.random.default_rng(24)
    balls = [_read_ball(camera, i, r) for i, r in enumerate(_reads(rng, MARBLE_DIAMETER_MM, MIN_REFERENCE_BALLS - 1))]
    assert _joined_marble_probabilities(balls, {}) == {}


def test_reads_that_disagree_by_millimetres_leave_the_kind_too_close_to_call():
    # seed 1471_010's clear 16.7 mm tolley at the rim's foot (6.6 px per marble): area 7.9, outline 16.1, blurred
    # sphere 12.7 mm, a 12.3 mm marble at 0.935 by the size model's 1.33 mm sigma. Three reads that far apart know
    # their mean to 2.4 mm, not 1.3: too close to call. A ball whose reads agree keeps its confidence.
    from calibration.camera import CameraModel
    from vision.marbles import KIND_SURE, BallDetection, _placed, _read_spread_doubts, _split_confidence
    cam = CameraModel.look_at(eye_mm=(0.0, -600.0, 2350.0), target_mm=(0.0, 0.0, 0.0), focal_px=6.6 * 2424.0 / 12.7,
                              image_size_wh_px=(960, 720))

    def ball(x: float, reads: tuple[float, float, float]) -> BallDetection:
        d = float(np.mean(reads))
        conf = _split_confidence(d, 1.33)
        px = cam.project_mm(np.array([[x, 0.0, 6.35]]))[0]
        return BallDetection(**_placed(cam, px, d, 0.0), center_px=(float(px[0]), float(px[1])), confidence=conf,
                             position_sigma_mm=0.5, kind_confidence=conf, measured_diameter_mm=d, size_sigma_mm=1.33,
                             size_reads_mm=reads)

    split, agree = ball(-50.0, (7.86, 16.12, 12.68)), ball(50.0, (10.9, 11.4, 12.1))
    assert split.kind_confidence >= KIND_SURE and agree.kind_confidence >= KIND_SURE
    out = _read_spread_doubts([split, agree])
    assert out[0].kind == "marble" and out[0].kind_confidence < KIND_SURE
    assert out[1] == agree


def test_the_photo_scale_is_measured_on_the_plain_reads_of_balls_read_with_their_sky_shadow(camera):
    """A photo whose marbles scatter widely by the plain fit (its faint ones read large), the faint ones read about
    12 mm with their sky shadow: the scale measured on the new reads is a narrow one and calls a marble misread at
    17.5 mm a tolley surely; measured on the plain reads, as every ball is read, it doubts that call as before."""
    rng = np.random.default_rng(6)
    plain = list(_marble_reads(rng, 20, 0.0, 2.2))
    faint = [i for i, r in enumerate(plain) if r > 14.0]
    assert len(faint) >= 5
    new = [12.0 + 0.3 * rng.normal() if i in faint else r for i, r in enumerate(plain)]
    balls = [_ball(camera, i, r) for i, r in enumerate([*new, 17.5])]
    plain_mm = [plain[i] if i in faint else None for i in range(len(new))] + [None]
    assert _photo_kinds(camera, balls, DEFAULT_PARAMS)[-1].kind_confidence >= KIND_SURE  # why: the narrow scale
    as_plain = _photo_kinds(camera, [_ball(camera, i, r) for i, r in enumerate([*plain, 17.5])], DEFAULT_PARAMS)
    out = _photo_kinds(camera, balls, DEFAULT_PARAMS, plain_mm)
    assert out[-1].kind_confidence == pytest.approx(as_plain[-1].kind_confidence, abs=1e-9)
    assert out[-1].kind_confidence < KIND_SURE
    assert [o.measured_diameter_mm for o in out] == [b.measured_diameter_mm for b in balls]
