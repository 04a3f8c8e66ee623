"""A link band under a lamp's highlight read with the highlight taken away (vision.tantrix_links; issue 10).

A glossy tile's highlight adds the lamp's light to band and black alike: in linear light the band minus the black
beside it, plus the tile's usual black, is the band's own colour. Before, a band washed pale (chroma a third of its
links' elsewhere) still had its hue but cost every colour as a pale link, and a tile with four or five such edges
was left unread: seed 7676 boards 13 and 16 (held out, run once), one tile each, made a legal board "too close to
call" and a player's score wrong.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from test_tantrix_detect import simulated_photo, tally_against_truth

from api.tantrix_service import judge_document, reading_document
from vision.tantrix import detect_tantrix
from vision.tantrix_links import LinkParams, _without_highlight

RED_LIN_BGR = (0.03, 0.04, 0.55)
BLACK_LIN_BGR = (0.012, 0.012, 0.013)


def _lab(lin_bgr) -> np.ndarray:
    return cv2.cvtColor(np.array(lin_bgr, np.float32).reshape(1, 1, 3), cv2.COLOR_LBGR2Lab).reshape(3)


def test_highlight_added_to_band_and_black_is_taken_away():
    glare = np.array([0.45, 0.45, 0.42])  # a warm lamp, well below clipping
    band = _lab(np.array(RED_LIN_BGR) + glare)
    flank = _lab(np.array(BLACK_LIN_BGR) + glare)
    pale, true = np.hypot(*band[1:]), _lab(RED_LIN_BGR)
    assert pale < 0.6 * np.hypot(*true[1:])  # the premise: washed pale
    out = _without_highlight(band.reshape(1, 1, 1, 3).astype(np.float64), flank.reshape(1, 1, 3),
                             _lab(BLACK_LIN_BGR), LinkParams())[0, 0, 0]
    np.testing.assert_allclose(out, true, atol=1.0)


def test_clipped_band_says_nothing():
    band = np.array([[[[99.5, 2.0, 3.0]]]])
    out = _without_highlight(band, np.array([[[90.0, 0.0, 0.0]]]), _lab(BLACK_LIN_BGR), LinkParams())
    assert np.isnan(out).all()


def test_tile_washed_by_a_broad_highlight_is_read(tmp_path):
    """Seed 7676 board 16: tile 37 under a lamp, five of its bands pale; before: unread (one edge seen) and
    player A's score 6 instead of 9."""
    img, truth = simulated_photo(tmp_path, 7676, 16)
    reading = detect_tantrix(img)
    tally = tally_against_truth(reading, truth)
    assert tally["wrong"] == 0 and tally["missed"] == 0
    assert tally["exact"] == len(truth)
    t37 = next(t for t in truth if t["number"] == 37)
    r37 = min(reading.tiles, key=lambda r: math.dist(r.center_px, t37["center_px"]))
    assert r37.number == 37 and not r37.flagged
    doc = judge_document(reading_document(reading))
    assert doc["legal"] is False  # the truth: a planted defect elsewhere


def test_band_beside_another_link_is_not_corrected():
    """A white link (colour-blind set) whose darker flank is a lit yellow link: taking that away would make the
    white blue. Such samples say nothing."""
    band = _lab((0.8, 0.8, 0.8))
    flank = _lab((0.05, 0.6, 0.65))
    out = _without_highlight(band.reshape(1, 1, 1, 3).astype(np.float64), flank.reshape(1, 1, 3),
                             _lab(BLACK_LIN_BGR), LinkParams())
    assert np.isnan(out).all()
