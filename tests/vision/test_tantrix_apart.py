"""A board tile lying a hex apart from the Tantrix is told from a hand tile by how it sits on the lattice
(vision.tantrix_apart; issue 10).

Seed 7676 board 28 (held out, run once): a tile laid beside a forced space, a hex apart from the rest, was read as a
hand tile, so the fourth neighbour it gives the space (TX G-5 R2) went unseen and the board was called legal. The
drawn scenes below put one extra tile two lattice steps from a legal board: snapped to the lattice it is a board
tile (not touching the Tantrix: illegal), turned well off the lattice it is a hand tile (legal), and in between
the referee cannot tell and says so.
"""

from __future__ import annotations

import math

import pytest
from test_tantrix_detect import draw_scene, hex_center_mm, sample_board, simulated_photo

from api.tantrix_service import judge_document, reading_document
from geometry.tantrix import hex_distance, neighbours
from vision.tantrix import detect_tantrix

F_MM, GAP_MM, THETA_DEG = 46.0, 0.6, 10.0


def _apart_hex(board: dict) -> tuple[int, int]:
    """An empty hex two steps from the board (one empty hex between), lowest on the table so hands stay clear."""
    ring = {n for h in board for n in neighbours(h)} - set(board)
    apart = {n for e in ring for n in neighbours(e)} - set(board) - ring
    assert all(min(hex_distance(a, b) for b in board) == 2 for a in apart)
    return max(apart, key=lambda h: (h[1], h[0]))


@pytest.fixture(scope="module")
def board_and_spare():
    board = sample_board(12, 5)
    used = {n for n, _ in board.values()}
    return board, next(n for n in range(1, 57) if n not in used)


def _read_with_extra(board, number: int, twist_deg: float, shift_mm: float = 0.0):
    hx = _apart_hex(board)
    c = hex_center_mm(*hx, (F_MM + GAP_MM) / math.sqrt(3.0), THETA_DEG)
    hand = {"A": [(number, (float(c[0]) + shift_mm, float(c[1])), THETA_DEG + twist_deg)]}
    img, _, truth = draw_scene(board, hand, f_mm=F_MM, gap_mm=GAP_MM, theta_deg=THETA_DEG, tilt_deg=18.0, seed=4)
    reading = detect_tantrix(img)
    extra = min(reading.tiles, key=lambda r: math.dist(r.center_px, truth[-1]["center_px"]))
    return reading, extra, judge_document(reading_document(reading))


def test_tile_snapped_to_the_lattice_a_hex_apart_is_on_the_board(board_and_spare):
    """Before: read as a hand tile and the board called legal; the tile does not touch the Tantrix (TX G-2)."""
    board, spare = board_and_spare
    reading, extra, doc = _read_with_extra(board, spare, twist_deg=1.0)
    assert extra.number == spare
    assert extra.place == "board" and extra.hex is not None and not extra.flagged
    assert doc["legal"] is False
    assert any(r["rule"] == "TX G-2" and r["decision"] == "illegal" for r in doc["rulings"])


def test_tile_turned_off_the_lattice_stays_in_the_hand(board_and_spare):
    board, spare = board_and_spare
    _, extra, doc = _read_with_extra(board, spare, twist_deg=27.0)
    assert extra.number == spare and extra.place == "hand" and extra.hex is None
    assert doc["legal"] is True


def test_tile_neither_snapped_nor_clearly_off_makes_the_board_too_close_to_call(board_and_spare):
    """Turned 3 degrees and 7 mm off its node: beyond a laid tile's misplacement, within what seats a tile
    inside the board's silhouette. Before: a hand tile and a confident 'legal'."""
    board, spare = board_and_spare
    _, extra, doc = _read_with_extra(board, spare, twist_deg=3.0, shift_mm=7.0)
    assert extra.number == spare
    assert extra.flagged and extra.place == "board"
    assert doc["legal"] is None


def test_lone_board_tile_beside_a_forced_space_is_seen(tmp_path):
    """Seed 7676 board 28: tile 47 crowds a forced space (TX G-5 R2), a hex apart from the Tantrix."""
    img, truth = simulated_photo(tmp_path, 7676, 28)
    reading = detect_tantrix(img)
    t47 = next(t for t in truth if t["number"] == 47)
    r47 = min(reading.tiles, key=lambda r: math.dist(r.center_px, t47["center_px"]))
    assert r47.number == 47 and r47.place == "board"
    doc = judge_document(reading_document(reading))
    assert doc["legal"] is False
