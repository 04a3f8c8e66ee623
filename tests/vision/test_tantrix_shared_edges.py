"""A link's colour on a shared edge is seen twice (issue 10): a board tile whose own side of two or more edges is
washed out is read from its neighbours' side, but only when every edge it cannot see is seen across, so a
mismatched edge (TX A1) under the wash leaves the tile unread rather than read as a face that hides it. Probes
(tiles found only by their silhouette) are corroborated through chains of agreeing edges.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_tantrix_detect import simulated_photo, tally_against_truth

from api.tantrix_service import judge_document, reading_document
from geometry.tantrix import EDGE_COUNT, TILES, neighbour, opposite_edge, tile
from vision.tantrix import _corroborated, _Tile, detect_tantrix
from vision.tantrix_lattice import hex_center_u
from vision.tantrix_links import (
    _CLASS_OF,
    HUE_PROTOTYPES_DEG,
    ColourModel,
    FaceRead,
    LinkParams,
    read_faces,
)
from vision.tantrix_shared_edges import read_from_neighbour_sides

PARAMS = LinkParams()
MODEL = ColourModel(hues_deg=HUE_PROTOTYPES_DEG, colorblind=False, chroma=(60.0, 60.0, 60.0, 60.0))
CENTRE = (0, 0)
FACE = (12, 0)  # tile 12 as laid at the centre hex


def _lab(cls: int) -> np.ndarray:
    """A link band of class ``cls`` as this image shows it (lightness 60, chroma 60 at the class's hue)."""
    h = math.radians(HUE_PROTOTYPES_DEG[cls])
    return np.array([60.0, 60.0 * math.cos(h), 60.0 * math.sin(h)])


def _classes(number: int, rotation: int) -> list[int]:
    return [_CLASS_OF[c] for c in tile(number).rotated_edges(rotation)]


def _two_unseen_edges() -> tuple[int, int]:
    """Two edges of FACE with different colours: with both unseen, two faces fit the four seen edges."""
    cls = _classes(*FACE)
    return next((a, b) for a in range(EDGE_COUNT) for b in range(a + 1, EDGE_COUNT) if cls[a] != cls[b])


def _scene(seen_across: dict[int, int]) -> tuple[list[FaceRead], list, np.ndarray]:
    """The centre tile with two edges washed out (NaN), and one unread neighbour per entry of ``seen_across``
    (edge of the centre tile -> the class the neighbour's own band shows across it)."""
    cls = _classes(*FACE)
    a, b = _two_unseen_edges()
    edge_lab = np.full((1 + len(seen_across), EDGE_COUNT, 3), np.nan)
    edge_lab[0] = [_lab(c) for c in cls]
    edge_lab[0, [a, b]] = np.nan
    hexes = [CENTRE]
    for n, (k, c) in enumerate(seen_across.items(), start=1):
        edge_lab[n, opposite_edge(k)] = _lab(c)
        hexes.append(neighbour(CENTRE, k))
    faces = read_faces(edge_lab, MODEL, PARAMS)
    return faces, hexes, edge_lab


def test_the_case_matters():
    """The premise: with two differently coloured edges unseen, the centre tile's own pixels leave it unread."""
    faces, _, _ = _scene({})
    assert faces[0].number is None and faces[0].flagged


def test_washed_edges_are_read_from_the_neighbours_side():
    a, b = _two_unseen_edges()
    cls = _classes(*FACE)
    faces, hexes, edge_lab = _scene({a: cls[a], b: cls[b]})
    out = read_from_neighbour_sides(faces, hexes, edge_lab, MODEL, PARAMS)
    assert (out[0].number, out[0].rotation) == FACE and not out[0].flagged
    assert out[0].edge_classes[a] is None and out[0].edge_classes[b] is None  # still what its own pixels show


def test_a_mismatch_under_the_wash_leaves_the_tile_unread():
    """The neighbour across one washed edge shows the other washed edge's colour (a mismatched edge, TX A1): no
    face fits both neighbours, and none is read that would hide the fault."""
    a, b = _two_unseen_edges()
    cls = _classes(*FACE)
    faces, hexes, edge_lab = _scene({a: cls[b], b: cls[b]})
    assert read_from_neighbour_sides(faces, hexes, edge_lab, MODEL, PARAMS)[0].number is None


@pytest.mark.parametrize("which", [0, 1])
def test_a_washed_edge_no_neighbour_sees_leaves_the_tile_unread(which):
    """Only one washed edge seen across (the other on an open side): a mismatch at the seen one could hide
    behind the swap at the other, so nothing is read."""
    edges = _two_unseen_edges()
    k = edges[which]
    faces, hexes, edge_lab = _scene({k: _classes(*FACE)[k]})
    assert read_from_neighbour_sides(faces, hexes, edge_lab, MODEL, PARAMS)[0].number is None


def test_a_number_read_elsewhere_is_not_read_again():
    a, b = _two_unseen_edges()
    cls = _classes(*FACE)
    faces, hexes, edge_lab = _scene({a: cls[a], b: cls[b]})
    faces[1] = FaceRead(FACE[0], 0, faces[1].edge_classes, 10.0, 0.0, False)  # tile 12 read on another hex
    assert read_from_neighbour_sides(faces, hexes, edge_lab, MODEL, PARAMS)[0].number is None


def _matching_face(at: tuple[int, int], read: dict) -> tuple[int, int]:
    """A face for hex ``at`` whose edges match every face in ``read`` around it (numbers not reused)."""
    used = {n for n, _ in read.values()}
    for n in TILES:
        for r in range(EDGE_COUNT):
            if n in used:
                continue
            ok = all(tile(n).edge_color(k, r) is tile(read[neighbour(at, k)][0]).edge_color(
                opposite_edge(k), read[neighbour(at, k)][1]) for k in range(EDGE_COUNT) if neighbour(at, k) in read)
            if ok:
                return n, r
    raise AssertionError("no matching face")


def _read(n: int, r: int) -> FaceRead:
    return FaceRead(n, r, tuple(_classes(n, r)), 20.0, 0.0, False)


def test_probes_are_corroborated_through_a_chain_of_agreeing_edges():
    """Seen tile at (0, 0); probes at (1, 0) and (2, 0) in a row: the far probe touches only the near one. The
    reader before kept the near probe and left the far one unread (1212_018: two tiles under a lamp's streak)."""
    hexes = [(0, 0), (1, 0), (2, 0)]
    read: dict = {}
    for hx in hexes:
        read[hx] = _matching_face(hx, read)
    tiles = [_Tile(hex_center_u(*hx), 0.0, hx, 0) for hx in hexes]
    seen = [_read(*read[(0, 0)])]
    out = _corroborated([_read(*read[(1, 0)]), _read(*read[(2, 0)])], seen, tiles)
    assert [(f.number, f.rotation) for f in out] == [read[(1, 0)], read[(2, 0)]]
    # no seen tile to start the chain from: both stay unread
    alone = _corroborated([_read(*read[(1, 0)]), _read(*read[(2, 0)])], [FaceRead(None, None, (None,) * 6, 0.0,
                                                                                    9.0, True)], tiles)
    assert all(f.number is None for f in alone)
    # the far probe's face clashing with the near probe's shared edge: the far one stays unread
    clash = next((n, r) for n in TILES for r in range(EDGE_COUNT) if n not in {v[0] for v in read.values()}
                 and tile(n).edge_color(3, r) is not tile(read[(1, 0)][0]).edge_color(0, read[(1, 0)][1]))
    out = _corroborated([_read(*read[(1, 0)]), _read(*clash)], seen, tiles)
    assert out[0].number == read[(1, 0)][0] and out[1].number is None


def test_board_under_a_lamp_reads_washed_tiles_from_their_neighbours(tmp_path):
    """Seed 606, board 18: a lamp's spot washes two edges each of tiles 12 and 19; 19's are seen across from
    read neighbours. The reader before left both unread (both players' scores wrong); no face is wrong."""
    img, truth = simulated_photo(tmp_path, 606, 18)
    reading = detect_tantrix(img)
    tally = tally_against_truth(reading, truth)
    assert tally["wrong"] == 0 and tally["missed"] == 0
    assert tally["exact"] >= len(truth) - 1  # 52 of 54 before
    t19 = next(t for t in truth if t["number"] == 19)
    on_it = min(reading.tiles, key=lambda r: math.dist(r.center_px, t19["center_px"]))
    assert on_it.number == 19
    assert judge_document(reading_document(reading))["legal"] is False  # the planted fault still seen


def test_a_tile_when_every_number_is_read_elsewhere_stays_unread():
    """A phantom beside a full set of 56: its links match a face perfectly, but every number is taken, so it is
    reported unread rather than read as a face another tile already shows."""
    edge_lab = np.array([[_lab(c) for c in _classes(*FACE)]])
    assert read_faces(edge_lab, MODEL, PARAMS)[0].number == FACE[0]  # the premise: a clean read on its own
    taken = frozenset(range(1, 57))
    with np.errstate(invalid="raise"):
        face = read_faces(edge_lab, MODEL, PARAMS, exclude=taken)[0]
    assert face.number is None and face.flagged


def test_a_band_not_found_is_no_white_link_in_a_colour_blind_set():
    """Seed 6565 #24: where a colour-blind tile's band was not found, its edge sample is the tile's own black
    (hueless and dark). White is the one class such a sample could match by lightness; it counted ~44 units for
    white against red, which read tile 19 as tile 32 with a wrong 'illegal'. It must cost every class alike."""
    from vision.tantrix_links import class_costs
    blind = ColourModel(hues_deg=HUE_PROTOTYPES_DEG, colorblind=True, chroma=(60.0, 60.0, 60.0, 0.0))
    black = np.array([28.0, 1.2, 1.6])
    shaded_white = np.array([PARAMS.white_min_l - 6.0, 1.0, 2.0])  # a white link in shade is still white
    costs = class_costs(np.stack([black, shaded_white, _lab(0)]), blind, PARAMS)
    assert np.ptp(costs[0]) == 0.0
    assert costs[1].argmin() == 3 and costs[2].argmin() == 0
