"""The Tantrix reader knows the tiles it missed (issue 10): a board tile it cannot see or read is reported as an
unread tile on its hex, so the referee says "too close to call" instead of judging an empty space.

The board is sample_board(12, 5) from the drawn-scene tests: its tile at hex (0, 1) has five neighbours, so
taking it away leaves a hole the rules forbid (TX G-5 R2) and a reader that misses it gives a wrong "illegal".
"""

from __future__ import annotations

import math

import pytest
from test_tantrix_detect import _lamp_highlight, draw_scene, sample_board, simulated_photo, tally_against_truth

from adjudicator.tantrix import judge_board
from api.tantrix_service import judge_document, reading_document
from geometry.tantrix import Board, Placement
from vision.tantrix import detect_tantrix

WASHED_HEX = (0, 1)


@pytest.fixture(scope="module")
def scene():
    board = sample_board(12, 5)
    img, _, truth = draw_scene(board, tilt_deg=20.0, theta_deg=8.0, seed=2, table_bgr=(150, 170, 180))
    return board, img, truth


def _judge(board: dict) -> bool | None:
    return judge_board(Board({h: Placement(number=n, rotation=r) for h, (n, r) in board.items()})).legal


def test_the_case_matters(scene):
    """The premise: legal as laid, illegal if the reader took the washed tile's hex for an empty space."""
    board, _, _ = scene
    assert _judge(board) is True
    assert _judge({h: v for h, v in board.items() if h != WASHED_HEX}) is False


def test_clean_board_has_no_unread_tile(scene):
    _, img, truth = scene
    doc = judge_document(reading_document(detect_tantrix(img)))
    assert doc["legal"] is True
    assert all(t["number"] is not None for t in doc["tiles"])
    assert len(doc["tiles"]) == len(truth)


@pytest.mark.parametrize("sigma_pitch, peak", [(0.5, 200.0), (0.6, 230.0)])
def test_tile_washed_out_by_a_lamp_is_unread_not_an_empty_space(scene, sigma_pitch, peak):
    """A lamp's highlight over the tile (and half its neighbours): before the safeguard the first was judged
    illegal (the tile missed, its hex a forbidden hole); now it is unread on its hex and no face is wrong."""
    _, img, truth = scene
    t = next(t for t in truth if t["hex"] == WASHED_HEX)
    pitch_px = min(math.dist(t["center_px"], u["center_px"]) for u in truth if u is not t)
    reading = detect_tantrix(_lamp_highlight(img, t["center_px"], sigma_pitch * pitch_px, peak))
    doc = judge_document(reading_document(reading))
    assert doc["legal"] is not False  # never a wrong verdict: legal, or too close to call
    on_it = min(reading.tiles, key=lambda r: math.dist(r.center_px, t["center_px"]))
    assert math.dist(on_it.center_px, t["center_px"]) < 0.25 * pitch_px
    assert on_it.place == "board" and on_it.hex is not None
    assert on_it.number in (None, t["number"])
    for r in reading.tiles:  # no face anywhere is wrong
        if r.number is not None:
            nearest = min(truth, key=lambda u: math.dist(u["center_px"], r.center_px))
            assert r.number == nearest["number"], (r.number, nearest["number"])
    if on_it.number is None:
        assert doc["legal"] is None


def test_tile_washed_by_a_lamp_reads_by_elimination_among_the_numbers_left(tmp_path):
    """Seed 777, board 13: a lamp washes two edges of tile 45 (BBG??Y seen), which then fits 45 and a face already
    read elsewhere on the table about equally; a set holds each number once, so among the numbers left 45 is
    clearly best. The reader before flagged it (the board's scores too close to call); no face is wrong."""
    img, truth = simulated_photo(tmp_path, 777, 13)
    reading = detect_tantrix(img)
    tally = tally_against_truth(reading, truth)
    assert tally["wrong"] == 0 and tally["missed"] == 0
    assert tally["exact"] == len(truth)  # 38 of 39 before


def test_tile_at_the_rim_off_the_fitted_lattice_is_probed_at_its_own_pose(tmp_path):
    """Seed 4242, board 2: at the board's rim a tile whose white link meets a cream table lies a third of a tile
    off the lattice the plane fits mid-board. The reader before posed one hexagon across it and its neighbour,
    left that neighbour unread and missed the tile (the verdict too close to call); each hex is now probed at
    the pose within a third of a tile where its six edge midpoints show link ends, and both read."""
    img, truth = simulated_photo(tmp_path, 4242, 2)
    reading = detect_tantrix(img)
    tally = tally_against_truth(reading, truth)
    assert tally["wrong"] == 0 and tally["missed"] == 0
    assert tally["exact"] == len(truth)  # 43 of 45 before
    assert judge_document(reading_document(reading))["legal"] is True


def _tile(k: int, number: int | None, *, flagged: bool = False):
    from vision.tantrix import TileReading
    return TileReading(tile_id=f"T{k}", number=number, rotation=None if number is None else 0, hex=(k, 0),
                       place="board", player=None, center_px=(10.0 * k, 0.0), center_mm=(k, 0.0), angle_deg=0.0,
                       outline_px=(), edge_colors=(None,) * 6, confidence=0.0 if flagged or number is None else 0.9,
                       flagged=flagged or number is None)


def _reading(tiles):
    from vision.tantrix import TantrixReading
    return TantrixReading(tiles=tuple(tiles), image_size_wh_px=(100, 100), flat_to_flat_mm=30.0,
                          lattice_origin_mm=(0.0, 0.0), lattice_angle_deg=0.0, plane_to_image=((1, 0, 0),) * 3,
                          colorblind=False, source="test")


def test_an_unread_find_beyond_a_complete_set_is_no_tile():
    """All 56 faces read for sure, each once: a 57th find (a hexagon over a link-coloured mat) is not a tile and
    no longer holds the verdict back; it is listed apart, not lost. Short of a sure full set it stays unread."""
    from vision.tantrix import _beyond_a_complete_set
    full = [_tile(n, n) for n in range(1, 57)]
    out = _beyond_a_complete_set(_reading([*full, _tile(57, None)]))
    assert [t.number for t in out.tiles] == list(range(1, 57))
    assert [t.tile_id for t in out.not_tiles] == ["T57"]
    assert reading_document(out)["not_tiles"][0]["id"] == "T57"
    for tiles in (full[:-1] + [_tile(57, None)],                      # 55 read: the unread one may be tile 56
                  full[:-1] + [_tile(56, 55), _tile(57, None)],       # a number read twice: one read is wrong
                  full[:-1] + [_tile(56, 56, flagged=True), _tile(57, None)]):  # the 56th read is doubtful
        kept = _beyond_a_complete_set(_reading(tiles))
        assert kept.not_tiles == () and len(kept.tiles) == len(tiles)
