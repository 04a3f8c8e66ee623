"""Which of two touching pieces lies and which stands on it (vision/pyramids._pair_lying_reads, _same_reading).

A piece standing on a lying one hides one end of it; what is left of the lying piece's long triangle may fit an
upright or tilted piece as well as a lying one, and the pair search then put the lying piece under the wrong one
of the two (on the bench: ice_fresh_004 p10/p11, 022, 014, 003, the roles swapped). The scene here is the bench's
ice_fresh_004 (seed 7007, item 4) rendered through a 320 x 240 window of its camera around that pair.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.camera import CameraModel
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids import (
    IceSceneSpec,
    Lighting,
    ice_camera,
    ice_truth,
    random_ice_scene,
    render_ice_scene,
)
from vision.pyramids import _same_reading, detect_pyramids
from vision.pyramids_fit import PieceHypothesis

MATCH_GATE_MM = 12.0  # plan centroid of a detection within this of the truth piece's (the bench's gate)
WINDOW_WH_PX = (320, 240)


def _bench_scene_window(seed: int, index: int, centre_mm, wh=WINDOW_WH_PX):
    """The bench's Ice render ``default_rng([seed, index])`` (``generate_ice_tiddlywinks``'s draws), seen through a
    ``wh`` window of its camera centred on ``centre_mm``: the same pieces, light and wood, fewer pixels."""
    rng = np.random.default_rng([seed, index])
    spec = IceSceneSpec(upright=int(rng.integers(4, 9)), lying=int(rng.integers(1, 4)),
                        standing_on_lying=int(rng.integers(0, 3)), stacked=int(rng.integers(0, 2)),
                        covered=int(rng.integers(0, 2)), start_lines=int(rng.integers(0, 2)))
    full = ice_camera(rng, (1920, 1080), tilt_range_deg=(0.0, 35.0))
    scene = random_ice_scene(rng, full, spec)
    lighting = Lighting.random(rng)
    c = full.project_mm(np.array([[centre_mm[0], centre_mm[1], 5.0]]))[0]
    d = full.to_dict()
    k = np.array(d["K"], float)
    k[0, 2] -= round(c[0] - wh[0] / 2)  # a window of the sensor: the principal point moves, the lens does not
    k[1, 2] -= round(c[1] - wh[1] / 2)
    cam = CameraModel.from_dict({**d, "K": k.tolist(), "image_size_wh_px": list(wh)})
    linear = render_ice_scene(scene, cam, lighting, rng, supersample=3)
    photo = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    return photo, cam, ice_truth(scene, cam)


def _centroid(p) -> np.ndarray:
    return np.vstack([np.asarray(p["base_corners_mm"]), np.asarray(p["apex_mm"])[None]])[:, :2].mean(axis=0)


@pytest.fixture(scope="module")
def white_on_cyan():
    # a white medium piece leaning on the apex end of a cyan medium lying one; the code before this test read
    # them as two upright pieces here (and on the full bench photo the white one lying, the cyan one on it)
    photo, cam, truth = _bench_scene_window(7007, 4, (-51.51, -40.76))
    pieces = {p["id"]: p for p in truth["pieces"]}
    return pieces["p10"], pieces["p11"], detect_pyramids(photo, cam)


def _nearest(truth_piece, dets):
    c = _centroid(truth_piece)
    d = [float(np.linalg.norm(np.asarray(x.plan_centroid_mm) - c)) for x in dets]
    j = int(np.argmin(d))
    return dets[j], d[j]


def test_the_lying_piece_is_read_lying_and_the_other_standing_on_it(white_on_cyan):
    lying, standing, dets = white_on_cyan
    assert (lying["pose"], standing["pose"]) == ("lying", "standing_on_lying")
    low, d_low = _nearest(lying, dets)
    top, d_top = _nearest(standing, dets)
    assert d_low <= MATCH_GATE_MM and d_top <= MATCH_GATE_MM
    assert (low.pose, low.size) == ("lying", "medium")
    assert (top.pose, top.size) == ("standing_on_lying", "medium")
    assert low.piece_id in top.supported_by


def test_a_pair_with_its_pieces_elsewhere_is_another_reading():
    # the same kinds and sizes with the lying piece under the other one: not the same verdict, so it counts as
    # the runner-up that flags a close call; a refit a millimetre off is the same verdict
    a = [PieceHypothesis("lying", "medium", (0.0, 0.0, 0.0)),
         PieceHypothesis("tilted", "medium", (0.0, -25.0, 0.0, math.radians(18.0)))]
    swapped = [PieceHypothesis("lying", "medium", (0.0, -30.0, math.pi)),
               PieceHypothesis("tilted", "medium", (0.0, 5.0, math.pi, math.radians(18.0)))]
    nudged = [PieceHypothesis("lying", "medium", (1.0, 0.5, 0.02)),
              PieceHypothesis("tilted", "medium", (0.5, -25.5, 0.0, math.radians(20.0)))]
    assert not _same_reading(a, swapped)
    assert _same_reading(a, nudged) and _same_reading(nudged, a)
