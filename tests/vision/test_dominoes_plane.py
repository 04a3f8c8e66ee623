"""Dominoes vision: the plane of the tile tops fitted to all the read tiles, a reading from an outline found
short in it flagged (a 4-6 read 4-4 on a held-out render), and bars the lamp's glare washes out found again."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.vision.test_dominoes_placement import FELT_BGR, IVORY_BGR, TILE_W_PX, _draw_tile, _inside
from vision.dominoes import (
    DEFAULT_DOMINO_PARAMS,
    _Bar,
    _candidate,
    _distrust_short,
    _under_glare,
    detect_dominoes,
)
from vision.dominoes_pips import centre_bar_ratio
from vision.dominoes_plane import SHORT_TILE_RATIO, fit_tile_plane

# a camera tilted about the image's x axis: the far side of a 900 x 700 top view shrunk to 70 %
_TOP_WH = (900, 700)
_H_IMAGE_FROM_TOP = cv2.getPerspectiveTransform(
    np.float32([[0, 0], [900, 0], [900, 700], [0, 700]]), np.float32([[135, 60], [765, 60], [900, 700], [0, 700]]))
_TILES = [((160, 170), 0, (1, 3)), ((450, 150), 90, (2, 5)), ((700, 200), 30, (3, 3)), ((250, 450), 60, (6, 2)),
          ((470, 480), 0, (4, 6)), ((720, 520), 120, (5, 1)), ((130, 620), 0, (0, 4))]


def _oblique(top: np.ndarray) -> np.ndarray:
    return cv2.warpPerspective(top, _H_IMAGE_FROM_TOP, _TOP_WH, flags=cv2.INTER_LINEAR, borderValue=FELT_BGR)


def _to_image(quad_top: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.float32(quad_top).reshape(-1, 1, 2), _H_IMAGE_FROM_TOP).reshape(-1, 2)


def _scene():
    top = np.zeros((_TOP_WH[1], _TOP_WH[0], 3), np.uint8)
    top[:] = FELT_BGR
    quads_top = [_draw_tile(top, c, a, p) for c, a, p in _TILES]
    return _oblique(top), [_to_image(q).astype(np.float64) for q in quads_top]


def test_the_plane_makes_every_tile_the_same_rectangle_and_shows_one_outlined_short():
    _, quads = _scene()
    plane = fit_tile_plane(quads, _TOP_WH)
    assert plane is not None
    assert plane.aspect_ratio == pytest.approx(2.0, abs=0.05)
    for q in quads:  # the image's tiles differ by up to 30 % in size; in the plane they are one
        assert plane.size_ratios(q) == pytest.approx((1.0, 1.0), abs=0.03)
    # the 4-6 with its 6 end pulled in by a third of the width (its outer pip row lost)
    q = quads[4].copy()
    q[2:] += (q[:2][::-1] - q[2:]) * (0.33 / 2)
    width_ratio, length_ratio = plane.size_ratios(q)
    assert width_ratio == pytest.approx(1.0, abs=0.03) and length_ratio < SHORT_TILE_RATIO
    # one bad quad among them does not move the plane
    again = fit_tile_plane(quads[:4] + [q] + quads[5:], _TOP_WH)
    assert again is not None and again.size_ratios(quads[4]) == pytest.approx((1.0, 1.0), abs=0.03)


def test_too_few_tiles_or_tiles_that_are_no_one_rectangle_give_no_plane():
    _, quads = _scene()
    assert fit_tile_plane(quads[:2], _TOP_WH) is None
    rng = np.random.default_rng(5)
    jumbled = [q + rng.normal(0, 0.12 * TILE_W_PX, q.shape) for q in quads]  # outlines off by a tenth and more
    assert fit_tile_plane(jumbled, _TOP_WH) is None


def test_a_four_six_read_four_four_from_a_short_outline_is_flagged_not_read():
    img, quads = _scene()
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)
    cands = [_candidate(img, lab, q, 0.5, False, DEFAULT_DOMINO_PARAMS) for q in quads]
    assert all(c is not None and c[0][0] == 2 for c in cands)
    # the outline of the 4-6 found short at its 6 end, past the outer pip row: what is left reads 4-4
    q = quads[4].copy()
    q[2:] += (q[:2][::-1] - q[2:]) * (0.36 / 2)
    short = _candidate(img, lab, q, 0.5 / 0.82, False, DEFAULT_DOMINO_PARAMS)
    assert short is not None and (short[5].pips, short[6].pips) == (4, 4), "the case the gate is for"
    plane = fit_tile_plane([c[1] for c in cands], _TOP_WH)
    out, flagged = _distrust_short(cands[:4] + [short] + cands[5:], plane)
    assert len(flagged) == 1 and flagged[0][1] is short[1]
    assert flagged[0][5].pips is None and flagged[0][6].pips is None and "short" in flagged[0][5].reason
    assert [c[0][0] for c in out] == [2, 2, 2, 2, 0, 2, 2]  # the true outlines still read


def test_a_blank_half_found_short_still_reads_blank():
    # every pattern but the blank has a pip within half a width of the bar, which a short end leaves in view:
    # the 0-4 outlined short at its blank end keeps its reading (the 4-6 short at its 6 end does not, above)
    img, quads = _scene()
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)
    cands = [_candidate(img, lab, q, 0.5, False, DEFAULT_DOMINO_PARAMS) for q in quads]
    q = quads[6].copy()
    q[:2] += (q[2:][::-1] - q[:2]) * 0.14  # a quarter width short at the blank end (0.86 of the length)
    short = _candidate(img, lab, q, (0.5 - 0.14) / 0.86, False, DEFAULT_DOMINO_PARAMS)
    assert short is not None and (short[5].pips, short[6].pips) == (0, 4)
    plane = fit_tile_plane([c[1] for c in cands], _TOP_WH)
    assert plane.size_ratios(short[1])[1] < SHORT_TILE_RATIO
    out, flagged = _distrust_short(cands[:6] + [short], plane)
    assert not flagged and out[6][0][0] == 2


def _glare(img: np.ndarray, centre, radius_px: float, strength: float) -> np.ndarray:
    """The lamp's reflection: white light added, strongest at ``centre``, fading over ``radius_px``."""
    yy, xx = np.mgrid[0:img.shape[0], 0:img.shape[1]]
    lift = strength * np.exp(-((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / (2 * radius_px ** 2))
    return np.clip(img.astype(np.float32) + lift[..., None], 0, 255).astype(np.uint8)


def _glared_row():
    """Five ivory tiles in a row on felt, the middle one's bar under a glare patch that lifts its ink to the
    face's own lightness."""
    img = np.zeros((400, 900, 3), np.uint8)
    img[:] = FELT_BGR
    tiles = [((130 + 160 * k, 200), 90, p) for k, p in enumerate([(1, 2), (3, 4), (3, 5), (6, 1), (2, 2)])]
    quads = [_draw_tile(img, c, a, p, ink=(120, 120, 120) if k == 2 else (25, 25, 25))
             for k, (c, a, p) in enumerate(tiles)]
    return _glare(img, (450, 200), 0.3 * TILE_W_PX, 120.0), quads, [p for _, _, p in tiles]


def test_a_bar_washed_out_by_glare_still_counts_against_the_face_around_it():
    img, quads, _ = _glared_row()
    face = np.float32(cv2.cvtColor(np.uint8([[IVORY_BGR]]), cv2.COLOR_BGR2LAB)[0, 0])
    assert centre_bar_ratio(img, quads[2], 0.5, face, False) > 0.5
    assert centre_bar_ratio(img, quads[0], 0.5, face, False) > 0.5


def test_a_tile_whose_bar_is_under_glare_is_found_and_read():
    img, quads, pips = _glared_row()
    found = detect_dominoes(img)
    for quad, p in zip(quads, pips):
        hits = [d for d in found if _inside(quad, d.center_px)]
        assert len(hits) == 1 and hits[0].pips is not None and sorted(hits[0].pips) == sorted(p), (p, hits)


def test_a_stroke_with_no_glare_about_it_gets_no_second_look():
    img, quads, _ = _glared_row()
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)
    ivory_l = float(cv2.cvtColor(np.uint8([[IVORY_BGR]]), cv2.COLOR_BGR2LAB)[0, 0, 0])
    bar_at = [(q[0] + q[1] + q[2] + q[3]) / 4 for q in quads]
    across = np.array([1.0, 0.0])  # the bars run across the tiles, which point up and down the picture
    glared = _Bar(np.asarray(bar_at[2]), across, 0.7 * TILE_W_PX, 4.0, True)
    plain = _Bar(np.asarray(bar_at[0]), across, 0.7 * TILE_W_PX, 4.0, True)
    assert _under_glare(lab, glared, ivory_l)
    assert not _under_glare(lab, plain, ivory_l)
    assert not _under_glare(lab, glared, None)  # no ivory tile read: nothing to compare with
