"""The board-level judge: a photographed Tantrix position under TX A1 (G-2, G-3, G-5), TX P5 and TX A2.

Positions are built from the real 56 tiles (``build`` and ``grow_random_board`` of the rule-engine tests), so
every board is one a real set can show.
"""

from __future__ import annotations

import pytest
from test_tantrix import ALL, build, grow_random_board

from adjudicator.tantrix import (
    align_board,
    best_hex_transform,
    color_score,
    endgame_from_counts,
    forced_space_fits,
    judge_board,
)
from adjudicator.types import Decision
from geometry.tantrix import Board, LinkColor, Placement, neighbours, rotate_hex

# three tiles facing (0, 0) from E, NE and NW: (0, 0) is a forced space
AROUND = ((1, 0), (1, -1), (0, -1))


def head(j):
    assert j.rulings[0].rule == "TX A1"
    return j.rulings[0].decision


def by_rule(j, rule, decision=None):
    return [r for r in j.rulings if r.rule == rule and (decision is None or r.decision is decision)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_grown_legal_board_is_legal_and_scored(seed):
    board = grow_random_board(seed, 20)
    j = judge_board(board, hands={"A": (), "B": ()}, endgame=False)
    # a board grown without restrictions may hold a blocked or 4-neighbour space; only those may make it illegal
    illegal = {r.rule for r in j.rulings[1:] if r.decision is Decision.ILLEGAL}
    assert illegal <= {"TX G-5 R1", "TX G-5 R2"}
    assert j.legal is (not illegal)
    assert head(j) is (Decision.ILLEGAL if illegal else Decision.LEGAL)
    assert j.scores == {c.value: color_score(board, c) for c in LinkColor}
    assert j.scores_exact
    # in the endgame the restrictions lapse: a colour-matched connected board is legal
    assert judge_board(board, endgame=True).legal is True


def test_a_mismatched_edge_names_both_tiles_and_the_edge():
    board = build([(0, 0), (1, 0)])
    p = board[(1, 0)]
    # turn the E tile until its W edge no longer matches
    r = next(r for r in range(6) if Placement(number=p.number, rotation=r).edge_color(3) is not
             board[(0, 0)].edge_color(0))
    bad = Board({(0, 0): board[(0, 0)], (1, 0): Placement(number=p.number, rotation=r)})
    j = judge_board(bad, endgame=False)
    assert j.legal is False and head(j) is Decision.ILLEGAL
    (m,) = by_rule(j, "TX G-2", Decision.ILLEGAL)
    assert set(m.piece_ids) == {f"tile-{board[(0, 0)].number}", f"tile-{p.number}"}
    assert "E edge" in m.explanation and "(1, 0)" in m.explanation and "mismatch" in m.explanation


def test_a_tile_not_touching_the_tantrix_is_illegal_even_in_the_endgame():
    board = build([(0, 0), (1, 0), (2, 0)])
    far = next(n for n in ALL if n not in board.numbers())
    j = judge_board(board.with_tile((5, 5), far, 0), endgame=True)
    assert j.legal is False
    (g,) = by_rule(j, "TX G-2", Decision.ILLEGAL)
    assert g.piece_ids == (f"tile-{far}",) and "do not touch the Tantrix of 3 tiles" in g.explanation


def test_forced_spaces_list_the_hand_tiles_that_fit():
    board = build(list(AROUND))
    assert board.forced_spaces() == ((0, 0),)
    free = [n for n in ALL if n not in board.numbers()]
    hands = {"A": tuple(free[:6]), "B": tuple(free[6:12])}
    j = judge_board(board, hands=hands)
    assert set(j.forced_spaces) == {(0, 0)}
    for player, hand in hands.items():
        assert j.forced_spaces[(0, 0)][player] == forced_space_fits(board, hand)[(0, 0)]
    (g3,) = by_rule(j, "TX G-3")
    assert "forced space (0, 0)" in g3.explanation and "A can fill it with" in g3.explanation
    assert g3.evidence["fitting_tiles_count"] == sum(len(v) for v in j.forced_spaces[(0, 0)].values())


def test_TX_P3_a_blocked_forced_space_is_illegal_before_the_endgame_only():
    need = {(1, 0): {3: "R"}, (1, -1): {4: "R"}, (0, -1): {5: "R"}}  # all three face (0, 0) with red
    board = build(list(AROUND), need)
    assert board.is_blocked_space((0, 0))
    j = judge_board(board, endgame=False)
    assert j.legal is False
    (r1,) = by_rule(j, "TX G-5 R1", Decision.ILLEGAL)
    assert "three red links" in r1.explanation and "TX P3" in r1.explanation
    assert judge_board(board, endgame=True).legal is True


def test_an_empty_hex_with_four_neighbours_is_illegal_before_the_endgame_only():
    board = build([(1, 0), (1, -1), (0, -1), (-1, 0)])
    assert board.neighbour_count((0, 0)) == 4
    j = judge_board(board, endgame=False)
    (r2,) = by_rule(j, "TX G-5 R2", Decision.ILLEGAL)
    assert r2.evidence["neighbours_count"] == 4 and "(0, 0)" in r2.explanation and "TX I-2" in r2.interpretations
    assert judge_board(board, endgame=True).legal is True


def test_TX_P5_endgame_is_inferred_from_board_and_hands():
    assert endgame_from_counts(44, (6, 6))[0] is True
    assert endgame_from_counts(50, (3, 3))[0] is True
    assert endgame_from_counts(40, (6, 6))[0] is False
    assert endgame_from_counts(44, None)[0] is True  # six each while the bag lasts (TX P7)
    assert endgame_from_counts(43, None)[0] is False
    # a 4-neighbour hole is illegal before the endgame, not when the hands show the bag is empty
    board = build([(1, 0), (1, -1), (0, -1), (-1, 0)])
    rest = [n for n in ALL if n not in board.numbers()]
    early = judge_board(board, hands={"A": rest[:6], "B": rest[6:12]})
    assert early.endgame is False and early.legal is False
    late = judge_board(board, hands={"A": rest[:26], "B": rest[26:]})
    assert late.endgame is True and late.legal is True
    (p5,) = by_rule(late, "TX P5")
    assert "inferred" in p5.explanation and "= 56 tiles" in p5.explanation


def test_unread_or_doubtful_tiles_give_too_close_to_call_not_a_false_verdict():
    board = grow_random_board(4, 12)
    lone = next(h for h in sorted(board.empty_neighbours()) if board.neighbour_count(h) == 1)
    j = judge_board(board, unread=[lone], endgame=True)
    assert j.legal is None and head(j) is Decision.TOO_CLOSE_TO_CALL
    assert j.rulings[0].evidence["unread_count"] == 1 and not j.scores_exact
    # a mismatch against a doubtful tile is too close to call; one between sure tiles stays illegal
    h = next(iter(board))
    n = next(x for x in neighbours(h) if x in board)
    p = board[n]
    k = next(k for k in range(6) if n == neighbours(h)[k])
    r = next(r for r in range(6) if Placement(number=p.number, rotation=r).edge_color((k + 3) % 6)
             is not board[h].edge_color(k))
    bad = Board({**board.tiles, n: Placement(number=p.number, rotation=r)})
    unsure = judge_board(bad, doubtful=[n], endgame=True)
    assert unsure.legal is None
    assert by_rule(unsure, "TX G-2", Decision.TOO_CLOSE_TO_CALL) and not by_rule(unsure, "TX G-2", Decision.ILLEGAL)
    assert judge_board(bad, endgame=True).legal is False
    other = next(x for x in board if x not in (h, n) and all(y not in (h, n) for y in neighbours(x)))
    assert judge_board(bad, doubtful=[other], endgame=True).legal is False


def test_players_scores_and_the_winner():
    board = grow_random_board(5, 25)
    j = judge_board(board, players={"A": "red", "B": "yellow"}, endgame=True)
    assert j.player_scores == {"A": color_score(board, "red"), "B": color_score(board, "yellow")}
    scored = by_rule(j, "TX A2")
    assert len(scored) == 4  # colours, A, B, winner/draw
    assert scored[0].evidence["red_points"] == j.scores["red"]


def test_the_verdict_does_not_depend_on_the_frame():
    board = grow_random_board(6, 18)
    j0 = judge_board(board, endgame=False)
    moved = board.rotated(2).translated(3, -4)
    j1 = judge_board(moved, endgame=False)
    assert (j0.legal, j0.scores, len(j0.forced_spaces)) == (j1.legal, j1.scores, len(j1.forced_spaces))
    assert align_board(moved, board) == board


def test_best_hex_transform_recovers_rotation_and_translation_despite_an_outlier():
    src = [(0, 0), (1, 0), (1, -1), (2, -1), (0, 1)]
    dst = [rotate_hex(h, 4) for h in src]
    dst = [(q + 2, r - 1) for q, r in dst]
    dst[-1] = (9, 9)
    s, t, n = best_hex_transform(zip(src, dst))
    assert (s, t, n) == (4, (2, -1), 4)
