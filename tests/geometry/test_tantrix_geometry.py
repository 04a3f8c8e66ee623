"""Tantrix tiles and the axial hex grid (RULES.md 2.1, 2.3)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from geometry.tantrix import (
    DIRECTIONS,
    EDGE_COUNT,
    TILE_TABLE,
    TILES,
    Board,
    hex_groups,
    LinkColor,
    LinkShape,
    Placement,
    TantrixError,
    Tile,
    hex_distance,
    identify_face,
    link_shape,
    neighbour,
    opposite_edge,
    rotate_hex,
    tile,
)

TRIPLES = {
    frozenset("RYB"): set(range(1, 15)),
    frozenset("RYG"): set(range(15, 24)) | set(range(31, 36)),
    frozenset("RBG"): set(range(24, 31)) | set(range(36, 43)),
    frozenset("YBG"): set(range(43, 57)),
}


def test_there_are_56_tiles_numbered_1_to_56():
    assert sorted(TILES) == list(range(1, 57))


@pytest.mark.parametrize("number", range(1, 57))
def test_link_shapes_derived_from_edges_match_the_table(number):
    _, links = TILE_TABLE[number]
    derived = {f"{c.letter}{int(s)}" for c, s in tile(number).links().items()}
    assert derived == set(links.split())


def test_faces_are_distinct_under_rotation():
    patterns = [t.canonical_pattern() for t in TILES.values()]
    assert len(set(patterns)) == 56


def test_no_face_is_a_rotation_of_another_tile_at_any_rotation():
    seen = Counter(t.rotated_edges(r) for t in TILES.values() for r in range(EDGE_COUNT))
    owners = {}
    for t in TILES.values():
        for r in range(EDGE_COUNT):
            owners.setdefault(t.rotated_edges(r), set()).add(t.number)
    assert all(len(v) == 1 for v in owners.values())
    assert sum(seen.values()) == 56 * EDGE_COUNT


def test_colour_triples_and_counts_follow_the_equipment_section():
    for triple, numbers in TRIPLES.items():
        members = {n for n, t in TILES.items() if {c.letter for c in t.colors} == set(triple)}
        assert members == numbers
        shapes = Counter(tuple(sorted(int(s) for s in TILES[n].links().values())) for n in members)
        assert shapes == {(1, 1, 1): 2, (1, 1, 3): 3, (2, 2, 3): 3, (1, 2, 2): 6}
    for color in LinkColor:
        assert sum(color in t.colors for t in TILES.values()) == 42


def test_white_is_the_colour_blind_alias_of_green():
    assert LinkColor.parse("white") is LinkColor.GREEN
    assert LinkColor.parse("W") is LinkColor.GREEN
    face = "".join("W" if c is LinkColor.GREEN else c.letter for c in TILES[22].rotated_edges(4))
    assert identify_face(face) == (22, 4)


@pytest.mark.parametrize("number", range(1, 57))
def test_identify_face_round_trips_every_rotation(number):
    for r in range(EDGE_COUNT):
        assert identify_face(TILES[number].rotated_edges(r)) == (number, r)


def test_bad_tiles_and_colours_are_errors():
    with pytest.raises(TantrixError):
        tile(57)
    with pytest.raises(TantrixError):
        LinkColor.parse("purple")
    with pytest.raises(TantrixError):
        Tile(number=1, edges=tuple("YYYRBR"))
    with pytest.raises(TantrixError):
        identify_face("YYYYYY")


def test_neighbour_directions_and_opposite_edges():
    assert DIRECTIONS == ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
    for k in range(EDGE_COUNT):
        n = neighbour((2, -3), k)
        assert hex_distance(n, (2, -3)) == 1
        assert neighbour(n, opposite_edge(k)) == (2, -3)


def test_rotate_hex_turns_directions_ccw_and_keeps_distances():
    rng = random.Random(7)
    for k in range(EDGE_COUNT):
        assert rotate_hex(DIRECTIONS[k]) == DIRECTIONS[(k + 1) % EDGE_COUNT]
    for _ in range(50):
        a = (rng.randint(-9, 9), rng.randint(-9, 9))
        b = (rng.randint(-9, 9), rng.randint(-9, 9))
        assert rotate_hex(a, 6) == a
        assert hex_distance(rotate_hex(a, 2), rotate_hex(b, 2)) == hex_distance(a, b)


def test_link_shapes_by_edge_gap():
    assert [link_shape(0, k) for k in range(1, 6)] == [
        LinkShape.SHARP, LinkShape.GENTLE, LinkShape.STRAIGHT, LinkShape.GENTLE, LinkShape.SHARP]


def test_rotation_shows_the_sequence_shifted():
    t = tile(1)  # YYBRBR
    assert [t.edge_color(k, 0).letter for k in range(6)] == list("YYBRBR")
    assert [t.edge_color(k, 1).letter for k in range(6)] == list("RYYBRB")
    assert Placement(number=1, rotation=7).rotation == 1


def test_board_rejects_duplicates_and_occupied_hexes():
    with pytest.raises(TantrixError):
        Board({(0, 0): (1, 0), (1, 0): (1, 2)})
    board = Board({(0, 0): (1, 0)})
    with pytest.raises(TantrixError):
        board.with_tile((0, 0), 2)


def test_forced_space_predicates():
    board = Board({(1, 0): (1, 0), (1, -1): (2, 0), (0, -1): (3, 0)})
    assert board.neighbour_count((0, 0)) == 3
    assert board.is_forced_space((0, 0))
    assert (0, 0) in board.forced_spaces()
    assert not board.is_forced_space((1, 0))  # occupied
    assert board.is_connected()
    assert not Board({(0, 0): (1, 0), (5, 5): (2, 0)}).is_connected()


def test_hex_groups_largest_first_then_by_least_hex():
    """Edge neighbours join a group, a hex two steps away does not; the Tantrix (largest) comes first."""
    occupied = [(5, 5), (0, 0), (1, 0), (0, 1), (-3, 0), (-2, -1), (9, 9)]
    groups = hex_groups(occupied)
    assert groups == (frozenset({(0, 0), (1, 0), (0, 1)}), frozenset({(-3, 0), (-2, -1)}),
                      frozenset({(5, 5)}), frozenset({(9, 9)}))
    assert hex_groups([(0, 0), (2, -1)]) == (frozenset({(0, 0)}), frozenset({(2, -1)}))  # not adjacent
    assert hex_groups([]) == ()


def test_rotating_a_board_keeps_facing_colours_consistent():
    board = Board({(1, 0): (4, 2), (1, -1): (9, 5), (0, -1): (12, 1)})
    for sixths in range(1, 6):
        turned = board.rotated(sixths)
        facing = board.facing_colors((0, 0))
        turned_facing = turned.facing_colors((0, 0))
        assert {(k + sixths) % 6: c for k, c in facing.items()} == turned_facing
