"""The image's own frame as the second starting plane (issue 10, held-out seed 606 board 7).

A board seen nearly square-on gives vanishing points far outside the image, ill-conditioned, and the soft shadow
along one side of every tile bends the short outline runs they rest on: the plane from the outline alone was 13 %
anisotropic on tx_606_007 (tilt 7.6 degrees), so the lattice missed the tiles and the board was refused by name.
The reader then starts again from the image's own frame (square pixels), and the re-fit to the tiles read supplies
the tilt; the plane that reads more board faces stands.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_tantrix_detect import _match, draw_scene, sample_board, simulated_photo, tally_against_truth

import vision.tantrix as tantrix
from vision.tantrix import TantrixVisionError, detect_tantrix

# A plane 30 % squashed along the image's x: what ill-conditioned vanishing points hand the lattice fit.
SQUASH = 0.7


def _squashed(segments, size_wh, **_):
    w, h = size_wh
    s = float(max(w, h))
    return np.array([[SQUASH / s, 0.0, -SQUASH * (w - 1) / 2.0 / s], [0.0, -1.0 / s, (h - 1) / 2.0 / s],
                     [0.0, 0.0, 1.0]])


@pytest.fixture(scope="module")
def low_tilt_scene():
    board = sample_board(19, seed=8)
    return draw_scene(board, tilt_deg=6.0, theta_deg=4.0, seed=9)


def test_the_case_matters(low_tilt_scene, monkeypatch):
    """Premise: from the squashed plane alone (no square-on restart) the board is refused by name."""
    img, _, _ = low_tilt_scene
    monkeypatch.setattr(tantrix, "rectify_from_segments", _squashed)
    monkeypatch.setattr(tantrix, "_image_frame", lambda size_wh: _squashed([], size_wh))
    with pytest.raises(TantrixVisionError, match="lattice found does not fit"):
        detect_tantrix(img)


def test_square_on_restart_reads_the_board_a_bad_plane_missed(low_tilt_scene, monkeypatch):
    img, _, truth = low_tilt_scene
    monkeypatch.setattr(tantrix, "rectify_from_segments", _squashed)
    reading = detect_tantrix(img)
    for t, r in _match(reading, truth, gate_px=20.0):
        assert r.number == t["number"] and not r.flagged


def test_held_out_low_tilt_board_606_007_is_read(tmp_path):
    """The simulated board the reader before refused ("the hex lattice found does not fit"): all 33 tiles."""
    img, truth = simulated_photo(tmp_path, 606, 7)
    tally = tally_against_truth(detect_tantrix(img), truth)
    assert tally["wrong"] == 0
    assert tally["exact"] == len(truth)
