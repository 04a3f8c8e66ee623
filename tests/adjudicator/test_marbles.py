"""British ring marbles (RULES.md 4.5): every MB-T case table-driven with its id, plus each shot position."""

from __future__ import annotations

import pytest

from adjudicator.marbles import (
    MarblesMatch,
    Shot,
    apply_shot,
    individual_match,
    judge_first_player,
    judge_on_ring,
    judge_setup,
    judge_winner,
    next_player,
    team_match,
    team_order,
    tie_break_match,
)
from adjudicator.types import AdjudicatorError, Decision
from geometry.marbles import close_packed_lattice, drop_distance_mm

TEAMS = {"A1": "A", "A2": "A", "B1": "B", "B2": "B"}


def _team(**kw) -> MarblesMatch:
    from dataclasses import replace

    return replace(team_match(TEAMS), **kw)


def _decisions(rulings) -> list[tuple[str, Decision]]:
    return [(r.rule, r.decision) for r in rulings]


# --- MB-T1 ... MB-T11 ----------------------------------------------------------------------------------------


def case_t1():
    m, rs = apply_shot(_team(), Shot(shooter="A1", marbles_off=2, shooter_on_ring=True, tolley_at_mm=(400.0, 0.0)))
    assert _decisions(rs) == [("MB 5(d)4", Decision.BONUS_SHOTS)]
    assert rs[0].evidence["score_points"] == 2 and rs[0].evidence["shoot_again_count"] == 1
    assert rs[0].target_mm == (400.0, 0.0)
    assert m.score("A") == 2 and m.marbles_left == 47


def case_t2():
    m, rs = apply_shot(_team(), Shot(shooter="A1", marbles_off=1, shooter_on_ring=False))
    assert _decisions(rs) == [("MB 5(d)2", Decision.SCORE)]
    assert rs[0].evidence["shoot_again_count"] == 0 and m.score("A") == 1


def case_t3():
    m = _team(resting=frozenset({"A1"}))
    m, rs = apply_shot(m, Shot(shooter="B1", marbles_off=0, shooter_on_ring=False, tolleys_off=("A1",)))
    assert ("MB 5(d)3", Decision.FORFEIT) in _decisions(rs)
    assert "A1" in m.eliminated and m.score("B") == 0


def case_t4():
    m = _team(resting=frozenset({"B2"}))
    m, rs = apply_shot(m, Shot(shooter="A1", marbles_off=0, shooter_on_ring=True, tolleys_off=("B2",)))
    assert _decisions(rs)[0] == ("MB 5(d)4", Decision.BONUS_SHOTS)
    assert rs[0].evidence["score_points"] == 0 and "MB I-5" in rs[0].interpretations
    assert "B2" in m.eliminated


def case_t5():
    m = _team(scores={"A": 3}, turn_points=3, resting=frozenset({"A2"}))
    m, rs = apply_shot(m, Shot(shooter="A1", marbles_off=2, shooter_on_ring=True, tolleys_off=("A2",),
                               foul="cabbaging"))
    got = _decisions(rs)
    assert got[0] == ("MB 7", Decision.ILLEGAL) and rs[0].evidence["kept_points"] == 3
    assert ("MB 7", Decision.REPLACE_AT) in got  # marbles back near the centre
    assert next(r for r in rs if r.decision is Decision.REPLACE_AT).target_mm == (0.0, 0.0)
    assert ("MB 7", Decision.FORFEIT) in got and "A2" in m.eliminated
    assert m.score("A") == 3 and m.marbles_left == 49 and "A1" not in m.resting


def case_t6():
    m = _team(fouls={"A1": 2})
    m, rs = apply_shot(m, Shot(shooter="A1", marbles_off=0, shooter_on_ring=False, foul="fudging"))
    assert ("MB 7", Decision.FORFEIT) in _decisions(rs) and "A1" in m.eliminated


def case_t7():
    m, rs = apply_shot(_team(scores={"A": 23}, marbles_left=10),
                       Shot(shooter="A1", marbles_off=2, shooter_on_ring=False))
    assert ("MB 9(g)", Decision.WINNER) in _decisions(rs)
    assert m.winner == "A" and m.score("A") == 25
    with pytest.raises(AdjudicatorError):
        apply_shot(m, Shot(shooter="B1", marbles_off=1, shooter_on_ring=False))


def case_t8():
    m = individual_match([f"p{i}" for i in range(9)])
    assert (m.marbles_start, m.win_points) == (37, 19)
    m = MarblesMatch(**{**{k: getattr(m, k) for k in m.__slots__}, "scores": {"p0": 17}})
    m, rs = apply_shot(m, Shot(shooter="p0", marbles_off=2, shooter_on_ring=False))
    assert ("MB 11(c)", Decision.WINNER) in _decisions(rs) and m.winner == "p0"


def case_t9():
    m = individual_match(["A", "B", "C"])
    from dataclasses import replace

    m = replace(m, scores={"A": 11, "B": 11, "C": 2}, marbles_left=1)
    m, rs = apply_shot(m, Shot(shooter="C", marbles_off=1, shooter_on_ring=False))
    tie = next(r for r in rs if r.decision is Decision.REPLAY)
    assert tie.rule == "MB 11(d)" and set(tie.colors) == {"A", "B"}
    assert tie.evidence["tie_break_marbles_count"] == 13 and tie.evidence["win_points"] == 7
    tb = tie_break_match(["A", "B"])
    assert (tb.marbles_start, tb.win_points) == (13, 7)


def case_t10():
    r = judge_first_player({"A": 14.0, "B": 9.0})
    assert r.rule == "MB 9(f)" and r.decision is Decision.WINNER and r.colors[0] == "B"


def case_t11():
    assert judge_on_ring("m1", (910.0, 0.0), position_sigma_mm=0.5).decision is Decision.IN
    assert judge_on_ring("m1", (920.0, 0.0), position_sigma_mm=0.5).decision is Decision.OUT


CASES = {f"MB-T{i}": globals()[f"case_t{i}"] for i in range(1, 12)}


@pytest.mark.parametrize("case_id", list(CASES))
def test_rules_case(case_id):
    CASES[case_id]()


# --- every shot position, eliminations, wins, the drop -----------------------------------------------------


@pytest.mark.parametrize(
    ("position", "shot", "decision", "points", "again"),
    [
        ("MB 5(d)1", Shot(shooter="A1", marbles_off=0, shooter_on_ring=False), Decision.SCORE, 0, 0),
        ("MB 5(d)2", Shot(shooter="A1", marbles_off=3, shooter_on_ring=False), Decision.SCORE, 3, 0),
        ("MB 5(d)3", Shot(shooter="A1", marbles_off=0, shooter_on_ring=True), Decision.SCORE, 0, 0),
        ("MB 5(d)4", Shot(shooter="A1", marbles_off=1, shooter_on_ring=True), Decision.BONUS_SHOTS, 1, 1),
    ],
    ids=["MB 5(d)1", "MB 5(d)2", "MB 5(d)3", "MB 5(d)4"],
)
def test_shot_positions(position, shot, decision, points, again):
    m, rs = apply_shot(_team(), shot)
    assert (rs[0].rule, rs[0].decision) == (position, decision)
    assert rs[0].evidence["score_points"] == points and rs[0].evidence["shoot_again_count"] == again
    assert ("A1" in m.resting) == (position == "MB 5(d)3")  # MB P2: the tolley rests for the next turn


def test_resting_tolley_knocked_off_next_turn_eliminates_owner():
    m, _ = apply_shot(_team(), Shot(shooter="A1", marbles_off=0, shooter_on_ring=True))  # position 3
    m, _rs = apply_shot(m, Shot(shooter="B1", marbles_off=1, shooter_on_ring=False, tolleys_off=("A1",)))
    assert "A1" in m.eliminated and m.score("B") == 1
    assert next_player(m, team_order(("A1", "A2"), ("B1", "B2")), "B1") == "A2"  # A1 skipped (MB 9(c))
    with pytest.raises(AdjudicatorError):
        apply_shot(m, Shot(shooter="A1", marbles_off=0, shooter_on_ring=False))


def test_foul_on_opponent_tolley_returns_it():
    m = _team(resting=frozenset({"B1"}))
    m, rs = apply_shot(m, Shot(shooter="A1", marbles_off=0, shooter_on_ring=False, tolleys_off=("B1",),
                               foul="blocking"))
    assert "B1" not in m.eliminated
    assert any(r.decision is Decision.REPLACE_AT and r.colors == ("B1",) for r in rs)


def test_individual_win_more_than_half():
    m = individual_match(["A", "B", "C"])  # 25 marbles, 13 wins
    from dataclasses import replace

    m, rs = apply_shot(replace(m, scores={"A": 12}), Shot(shooter="A", marbles_off=1, shooter_on_ring=False))
    assert m.winner == "A" and rs[-1].rule == "MB 11(c)"


def test_everyone_eliminated_is_undecided():
    m = _team(eliminated=frozenset(TEAMS))
    rs = judge_winner(m)
    assert rs[0].decision is Decision.UNDECIDED and "MB I-7" in rs[0].interpretations


@pytest.mark.parametrize(
    ("drops", "decision", "first"),
    [
        ({"A": 14.0, "B": 9.0}, Decision.WINNER, "B"),
        ({"A": 9.2, "B": 9.0}, Decision.TOO_CLOSE_TO_CALL, None),
        ({"A": 3.0, "B": 30.0}, Decision.WINNER, "A"),
    ],
    ids=["B closer", "too close", "A closer"],
)
def test_tolley_drop(drops, decision, first):
    r = judge_first_player(drops, position_sigma_mm=0.5)
    assert r.decision is decision
    if first:
        assert r.colors[0] == first


def test_tolley_drop_measured_from_line():
    line = ((-884.0, 10.0), (884.0, 10.0))
    d = {"A": drop_distance_mm((100.0, 24.0), *line), "B": drop_distance_mm((-50.0, 1.0), *line)}
    assert d["A"] == pytest.approx(14.0, abs=1e-9) and d["B"] == pytest.approx(9.0, abs=1e-9)
    assert judge_first_player(d).colors[0] == "B"


def test_individual_order_ties_redrop():
    r = judge_first_player({"A": 5.0, "B": 20.0, "C": 20.3}, team_match=False, position_sigma_mm=0.5)
    assert r.decision is Decision.TOO_CLOSE_TO_CALL and set(r.colors) == {"B", "C"}


def test_on_ring_too_close_to_call():
    r = judge_on_ring("m1", (914.0, 0.0), position_sigma_mm=0.5)
    assert r.decision is Decision.TOO_CLOSE_TO_CALL and "MB I-1" in r.interpretations


@pytest.mark.parametrize("n", [13, 25, 37, 49])
def test_setup_close_packed(n):
    assert judge_setup(close_packed_lattice(n, rotation_rad=0.3, offset_mm=(2.0, -1.0)), n).decision is Decision.LEGAL
    short = close_packed_lattice(n - 1)
    assert judge_setup(short, n).decision is Decision.ILLEGAL
