"""Tantrix judges: every TX test case of RULES.md 2.6 (case id in the test name), then the edges and properties.

Boards are built by a small backtracking search over the real 56 tiles (``build``), so every test position is
one a real set can show; the judges are then asked about it.
"""

from __future__ import annotations

import random

import pytest

from adjudicator.tantrix import (
    GameResult,
    TantrixParams,
    TpTable,
    apply_penalties,
    color_lines,
    color_score,
    controlled_side_hexes,
    fillable_forced_spaces,
    forced_space_fits,
    is_adjudication_due,
    judge_clock,
    judge_lateness,
    judge_move,
    judge_placement,
    judge_ranking,
    judge_score,
    judge_tournament_points,
    placement_violations,
    rank_players,
    time_penalties,
    tournament_points,
    wrong_call_times,
)
from adjudicator.types import AdjudicatorError, Decision
from geometry.tantrix import EDGE_COUNT, TILES, Board, Hex, LinkColor, neighbour, neighbours, rotate_hex, tile

ALL = tuple(range(1, 57))


def build(hexes, need=None, base=None, exclude=(), candidates=ALL):
    """First board (in tile-number order) adding ``hexes`` to ``base`` with all shared edges matching, distinct
    tiles, and ``need[h][edge] = colour`` on the listed edges."""
    need = need or {}
    base = base or Board()

    def rec(i, board):
        if i == len(hexes):
            return board
        h = hexes[i]
        used = board.numbers() | set(exclude)
        for n in candidates:
            if n in used:
                continue
            for r in board.fitting_rotations(n, h):
                if all(tile(n).edge_color(k, r) is LinkColor.parse(c) for k, c in need.get(h, {}).items()):
                    found = rec(i + 1, board.with_tile(h, n, r))
                    if found is not None:
                        return found
        return None

    board = rec(0, base)
    assert board is not None, "no board of real tiles satisfies the test's constraints"
    return board


def tournament_totals(games):
    out = {}
    for g in games:
        out[g.player_a] = out.get(g.player_a, 0.0) + g.tp_a
        out[g.player_b] = out.get(g.player_b, 0.0) + g.tp_b
    return out


def rules(rulings):
    """Clauses of the broken rules, after the TX A1 verdict."""
    return [r.rule for r in rulings[1:] if r.decision is Decision.ILLEGAL]


def verdict(rulings):
    head = rulings[0]
    assert head.rule == "TX A1"
    return head.decision


def grow_random_board(seed, size):
    """A colour-legal connected board grown by random placements (no restrictions checked)."""
    rng = random.Random(seed)
    numbers = list(ALL)
    rng.shuffle(numbers)
    board = Board({(0, 0): (numbers.pop(), rng.randrange(6))})
    while len(board) < size and numbers:
        spots = sorted(board.empty_neighbours())
        rng.shuffle(spots)
        placed = False
        for h in spots:
            for n in list(numbers):
                rots = board.fitting_rotations(n, h)
                if rots:
                    board = board.with_tile(h, n, rng.choice(rots))
                    numbers.remove(n)
                    placed = True
                    break
            if placed:
                break
        if not placed:
            break
    return board


# --- RULES.md 2.6, one test per case ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clock", "penalties"), [("19:59", 0), ("20:00", 1), ("20:59", 1), ("21:00", 2), ("22:30", 3)]
)
def test_TX_T1_time_penalties(clock, penalties):
    minutes, seconds = clock.split(":")
    t = int(minutes) * 60 + int(seconds)
    assert time_penalties(t) == penalties
    score = judge_clock("A", t)[0]
    assert score.rule == "TX A3"
    assert score.evidence["penalty_points"] == penalties


def _table_with(margin, winner_tp):
    return TpTable(entries=((0, 10.0), (margin, winner_tp), (margin + 10, 20.0)))


def test_TX_T2_penalties_net_to_the_loser():
    params = TantrixParams(tp_table=_table_with(10, 17.0))
    assert apply_penalties((17.0, 3.0), (time_penalties(22 * 60 + 30), time_penalties(20 * 60 + 10))) == (15.0, 5.0)
    tps = tournament_points({"win": 30, "lose": 20}, {"win": 22 * 60 + 30, "lose": 20 * 60 + 10}, params)
    assert tps == pytest.approx({"win": 15.0, "lose": 5.0})
    r = judge_tournament_points({"win": 30, "lose": 20}, {"win": 22 * 60 + 30, "lose": 20 * 60 + 10}, params)[0]
    assert r.decision is Decision.SCORE
    assert r.evidence["win_tournament_points"] == pytest.approx(15.0)


def test_TX_T3_penalties_clamp_at_twenty():
    params = TantrixParams(tp_table=_table_with(20, 19.5))
    assert time_penalties(21 * 60 + 5) == 2
    assert apply_penalties((19.5, 0.5), (0, 2)) == (20.0, 0.0)
    tps = tournament_points({"A": 10, "B": 31}, {"A": 21 * 60 + 5, "B": 900}, params)
    assert tps == pytest.approx({"A": 0.0, "B": 20.0})


def test_TX_T4_clock_over_25_minutes_flags_adjudication():
    assert is_adjudication_due(25 * 60 + 1)
    assert not is_adjudication_due(25 * 60)  # TX I-4: strictly more
    flagged = judge_clock("A", 25 * 60 + 1)
    assert [r.decision for r in flagged] == [Decision.SCORE, Decision.REFER_TO_UMPIRE]
    assert [r.decision for r in judge_clock("A", 25 * 60)] == [Decision.SCORE]


# Ring of 8 hexes around the pair (20, 0), (21, 0), in order; and a 14-hex zigzag line (E, NE, E, NE ...).
RING: tuple[Hex, ...] = ((21, -1), (20, -1), (19, 0), (19, 1), (20, 1), (21, 1), (22, 0), (22, -1))
ZIGZAG: tuple[Hex, ...] = tuple((i - i // 2, -(i // 2)) for i in range(14))


def _edge_towards(a: Hex, b: Hex) -> int:
    return next(k for k in range(EDGE_COUNT) if neighbour(a, k) == b)


def _path_needs(path, color, closed):
    need = {}
    for i, h in enumerate(path):
        edges = {}
        if closed or i > 0:
            edges[_edge_towards(h, path[i - 1])] = color
        if closed or i < len(path) - 1:
            edges[_edge_towards(h, path[(i + 1) % len(path)])] = color
        need[h] = edges
    return need


def test_TX_T5_red_loop_of_8_beats_yellow_line_of_14():
    need = {**_path_needs(RING, "R", closed=True), **_path_needs(ZIGZAG, "Y", closed=False)}
    board = build(list(RING) + list(ZIGZAG), need)
    best_red, best_yellow = color_lines(board, "red")[0], color_lines(board, "yellow")[0]
    assert best_red.is_loop and len(best_red.hexes) == 8
    assert not best_yellow.is_loop and len(best_yellow.hexes) == 14
    assert (color_score(board, "red"), color_score(board, "yellow")) == (16, 14)
    out = judge_score(board, {"A": "red", "B": "yellow"})
    assert [r.evidence["score_points"] for r in out[:2]] == [16, 14]
    assert out[2].decision is Decision.WINNER
    assert out[2].colors == ("A",)
    assert out[2].evidence["margin_points"] == 2


# TX-T6..T8: tiles (0,0), (1,0), (2,0), (3,0), (3,-1); forced space at (2,-1) nobody can fill yet.
ROW = ((0, 0), (1, 0), (2, 0), (3, 0), (3, -1))


@pytest.fixture(scope="module")
def row_board():
    board = build(list(ROW))
    assert board.forced_spaces() == ((2, -1),)
    return board


def _mover(board, h, *, ok=lambda after: True):
    """A tile (and rotation) that matches colours at ``h``, cannot fill (2, -1), and passes ``ok``."""
    for n in ALL:
        if n in board.numbers() or board.fits(n, (2, -1)):
            continue
        for r in board.fitting_rotations(n, h):
            if ok(board.with_tile(h, n, r)):
                return n, r
    raise AssertionError(f"no tile fits {h}")


def _hand_without_fit(board, mover):
    others = [n for n in ALL if n not in board.numbers() and n != mover and not board.fits(n, (2, -1))]
    return (mover, *others[:5])


def _no_blocked(after):
    return not any(after.is_blocked_space(s) for s in after.forced_spaces())


def test_TX_T6_controlled_side_illegal_before_endgame_legal_in_endgame(row_board):
    n, r = _mover(row_board, (0, -1), ok=_no_blocked)
    hand = _hand_without_fit(row_board, n)
    assert fillable_forced_spaces(row_board, hand) == {}
    assert controlled_side_hexes(row_board, (0, -1)) == ((2, -1),)
    before = judge_placement(row_board, (0, -1), n, r, hand=hand)
    assert verdict(before) is Decision.ILLEGAL
    assert rules(before) == ["TX G-5 R3"]
    assert "TX I-2" in before[1].interpretations
    assert verdict(judge_placement(row_board, (0, -1), n, r, hand=hand, endgame=True)) is Decision.LEGAL


def test_TX_T7_fourth_neighbour_on_a_forced_space_is_illegal(row_board):
    n, r = _mover(row_board, (1, -1))
    hand = _hand_without_fit(row_board, n)
    out = judge_placement(row_board, (1, -1), n, r, hand=hand)
    assert verdict(out) is Decision.ILLEGAL
    assert "TX G-5 R2" in rules(out)
    assert "TX G-5 R3" not in rules(out)
    assert verdict(judge_placement(row_board, (1, -1), n, r, hand=hand, endgame=True)) is Decision.LEGAL


def test_TX_T8_cascade_that_stops_is_legal_if_colours_match(row_board):
    assert controlled_side_hexes(row_board, (0, 1)) == ()
    n, r = _mover(row_board, (0, 1), ok=_no_blocked)
    out = judge_placement(row_board, (0, 1), n, r, hand=_hand_without_fit(row_board, n))
    assert verdict(out) is Decision.LEGAL, out
    # every colour-matching tile there: never R2/R3
    for m in ALL:
        if m not in row_board.numbers():
            for rho in row_board.fitting_rotations(m, (0, 1)):
                broken = {v.rule for v in placement_violations(row_board, (0, 1), m, rho)}
                assert not broken & {"TX G-5 R2", "TX G-5 R3"}


def test_TX_T9_forced_space_fit():
    # neighbours at E, NE, NW of (0, 0) showing Y, Y, B towards it (ccw from E)
    need = {(1, 0): {3: "Y"}, (1, -1): {4: "Y"}, (0, -1): {5: "B"}}
    board = build([(1, 0), (1, -1), (0, -1)], need, exclude=(1, 10))
    assert board.is_forced_space((0, 0))
    assert 0 in board.fitting_rotations(1, (0, 0))
    assert board.fits(1, (0, 0))
    assert not board.fits(10, (0, 0))
    assert forced_space_fits(board, (1, 10)) == {(0, 0): (1,)}


def test_TX_T10_head_to_head_breaks_a_tie_on_tps():
    games = [
        GameResult(player_a="A", player_b="B", score_a=30, score_b=26, tp_a=12.0, tp_b=8.0),
        GameResult(player_a="A", player_b="C", score_a=20, score_b=25, tp_a=8.0, tp_b=12.0),
        # B's bigger margins and more wins elsewhere must not outweigh the game between A and B
        GameResult(player_a="B", player_b="D", score_a=40, score_b=10, tp_a=12.0, tp_b=8.0),
    ]
    assert tournament_totals(games)["A"] == tournament_totals(games)["B"]
    ranking = rank_players(games)
    assert ranking.index(["A"]) < ranking.index(["B"])
    r = judge_ranking(games)
    assert r.rule == "TX A4"
    assert r.decision is Decision.WINNER
    assert r.colors.index("A") < r.colors.index("B")


def test_wins_then_margins_break_a_three_way_tie():
    games = [
        GameResult(player_a="A", player_b="B", score_a=30, score_b=26, tp_a=12.0, tp_b=8.0),
        GameResult(player_a="A", player_b="C", score_a=20, score_b=25, tp_a=8.0, tp_b=12.0),
        GameResult(player_a="B", player_b="C", score_a=28, score_b=20, tp_a=12.0, tp_b=8.0),
    ]
    # all level on TPs, among themselves and on wins; margins: B +4, A -1, C -3
    assert rank_players(games) == [["B"], ["A"], ["C"]]


def test_TX_T11_fifteen_minutes_late_defaults():
    r = judge_lateness("B", "A", 15 * 60)
    assert r.decision is Decision.FORFEIT
    assert r.colors == ("B",)
    assert (r.evidence["A_tournament_points"], r.evidence["B_tournament_points"]) == (15.0, 5.0)
    assert judge_lateness("B", "A", 6 * 60).decision is Decision.GAME_CONTINUES


# --- TX A1 beyond the cases -------------------------------------------------------------------------------------


def test_blocked_space_is_illegal_before_endgame_only():
    # three tiles all showing yellow towards (0, 0); the third one creates the blocked space
    need = {(1, 0): {3: "Y"}, (1, -1): {4: "Y"}, (0, -1): {5: "Y"}}
    full = build([(1, 0), (1, -1), (0, -1)], need)
    before = Board({h: p for h, p in full.tiles.items() if h != (0, -1)})
    p = full[(0, -1)]
    out = judge_placement(before, (0, -1), p.number, p.rotation)
    assert "TX G-5 R1" in rules(out)
    assert full.is_blocked_space((0, 0))
    assert "TX G-5 R1" not in rules(judge_placement(before, (0, -1), p.number, p.rotation, endgame=True))


def test_mismatch_and_not_touching_are_illegal_even_in_endgame():
    board = Board({(0, 0): (1, 0)})
    wrong = next(r for r in range(6) if tile(2).edge_color(3, r) is not tile(1).edge_color(0, 0))
    assert "TX G-2" in rules(judge_placement(board, (1, 0), 2, wrong, endgame=True))
    assert "TX G-2" in rules(judge_placement(board, (5, 5), 2, 0, endgame=True))
    assert verdict(judge_placement(board, (0, 0), 2, 0)) is Decision.ILLEGAL  # occupied


def test_free_move_while_a_forced_space_is_fillable(row_board):
    filler = next(n for n in ALL if n not in row_board.numbers() and any(
        not placement_violations(row_board, (2, -1), n, r) for r in row_board.fitting_rotations(n, (2, -1))))
    n, r = _mover(row_board, (0, 1), ok=_no_blocked)
    out = judge_placement(row_board, (0, 1), n, r, hand=(n, filler))
    assert "TX G-4" in rules(out)
    # filling the forced space itself is not a free move
    rf = next(r for r in row_board.fitting_rotations(filler, (2, -1)) if not placement_violations(
        row_board, (2, -1), filler, r))
    assert verdict(judge_placement(row_board, (2, -1), filler, rf, hand=(n, filler))) is Decision.LEGAL
    # without the hand the free-move rule cannot be checked
    blind = judge_placement(row_board, (0, 1), n, r)
    assert any(x.rule == "TX G-4" and x.decision is Decision.UNDECIDED for x in blind)


def test_move_check_names_the_tile_and_rules(row_board):
    n, r = _mover(row_board, (0, -1), ok=_no_blocked)
    after = row_board.with_tile((0, -1), n, r)
    out = judge_move(row_board, after, hand=_hand_without_fit(row_board, n))
    assert out[0].piece_ids == (f"tile-{n}",)
    assert rules(out) == ["TX G-5 R3"]
    two = after.with_tile((-5, 5), next(m for m in ALL if m not in after.numbers()))
    assert judge_move(row_board, two)[0].decision is Decision.UNDECIDED


# --- TX A2 / A3 / A4 edges --------------------------------------------------------------------------------------


def test_single_tiles_and_small_loops():
    # three tiles around one vertex, each showing red on both edges facing the other two: a loop of 3
    hexes = [(0, 0), (1, 0), (1, -1)]
    need = {(0, 0): {0: "R", 1: "R"}, (1, 0): {3: "R", 2: "R"}, (1, -1): {4: "R", 5: "R"}}
    board = build(hexes, need)
    best = color_lines(board, "red")[0]
    assert best.is_loop and best.value == 6
    assert color_score(Board(), "red") == 0


def test_tp_table_validation():
    with pytest.raises(AdjudicatorError):
        TpTable(entries=((0, 11.0),))  # no 10-10 draw
    with pytest.raises(AdjudicatorError):
        TpTable(entries=((0, 10.0), (5, 14.0), (10, 13.0)))  # falls
    with pytest.raises(AdjudicatorError):
        TpTable(entries=((0, 10.0), (5, 21.0)))
    with pytest.raises(AdjudicatorError):
        TpTable.from_pairs({0: (10.0, 10.0), 5: (13.0, 6.0)})
    table = TpTable.from_pairs({0: (10.0, 10.0), 5: (13.0, 7.0), 15: (16.0, 4.0)})
    assert [table.winner_points(m) for m in (0, 4, 5, 14, 40)] == [10.0, 10.0, 13.0, 13.0, 16.0]
    assert judge_tournament_points({"A": 1, "B": 2}, {"A": 0, "B": 0})[0].decision is Decision.UNDECIDED


def test_draw_gives_ten_each_and_wrong_call_moves_thirty_seconds():
    params = TantrixParams(tp_table=_table_with(5, 13.0))
    assert tournament_points({"A": 9, "B": 9}, {"A": 600, "B": 600}, params) == {"A": 10.0, "B": 10.0}
    assert wrong_call_times((600.0, 700.0), 1) == (570.0, 730.0)


def test_level_after_every_tie_break_goes_to_the_controller():
    games = [GameResult(player_a="A", player_b="B", score_a=20, score_b=20, tp_a=10.0, tp_b=10.0)]
    assert rank_players(games) == [["A", "B"]]
    assert judge_ranking(games).decision is Decision.REFER_TO_UMPIRE


# --- properties -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_turning_or_moving_the_whole_board_changes_no_ruling(seed):
    board = grow_random_board(seed, 18)
    assert all(not board.mismatched_edges(h) for h in board)
    rng = random.Random(seed)
    spot = sorted(board.empty_neighbours())[rng.randrange(len(board.empty_neighbours()))]
    free = [n for n in ALL if n not in board.numbers()]
    cand = next(((n, r) for n in free for r in board.fitting_rotations(n, spot)), (free[0], 0))
    base_verdict = [(x.rule, x.decision) for x in judge_placement(board, spot, *cand)]
    scores = {c: color_score(board, c) for c in LinkColor}
    for sixths in range(1, 6):
        turned = board.rotated(sixths).translated(3, -2)
        assert all(not turned.mismatched_edges(h) for h in turned)
        assert {c: color_score(turned, c) for c in LinkColor} == scores
        tspot = rotate_hex(spot, sixths)
        tspot = (tspot[0] + 3, tspot[1] - 2)
        assert [(x.rule, x.decision) for x in judge_placement(turned, tspot, cand[0], cand[1] + sixths)] == \
            base_verdict
        assert len(turned.forced_spaces()) == len(board.forced_spaces())


@pytest.mark.parametrize("seed", range(4))
def test_every_tile_of_a_grown_board_is_a_legal_colour_match(seed):
    board = grow_random_board(100 + seed, 25)
    for h in board:
        rest = Board({x: p for x, p in board.tiles.items() if x != h})
        p = board[h]
        assert "TX G-2" not in {v.rule for v in placement_violations(rest, h, p.number, p.rotation, endgame=True)}


def test_each_colour_component_is_a_path_or_cycle():
    board = grow_random_board(42, 40)
    for c in LinkColor:
        lines = color_lines(board, c)
        assert sum(len(line.hexes) for line in lines) == sum(c in board[h].tile.colors for h in board)
        for line in lines:
            if line.is_loop:
                assert len(line.hexes) >= 3
                assert all(sum(n in line.hexes for n in neighbours(h)) >= 2 for h in line.hexes)
    assert len(TILES) == 56
