"""Every Ice Tiddly Winks test case of RULES.md 5.5 (IT-T1 ... IT-T7), table-driven, the case id as the test id."""

from __future__ import annotations

import pytest

from adjudicator.ice_winks import adjudicate, judge_launch, judge_piece_score, judge_result
from adjudicator.types import Decision
from geometry.pyramids import IcePiece, StartLine

# Red's start line along y = -300 mm, the red stash area towards the table edge at y < -300.
RED_LINE = StartLine(color="red", p0_mm=(-500.0, -300.0), p1_mm=(500.0, -300.0), stash_point_mm=(0.0, -400.0))
BLUE_LINE = StartLine(color="blue", p0_mm=(-500.0, 300.0), p1_mm=(500.0, 300.0), stash_point_mm=(0.0, 400.0))


def piece(pid, color, size, pose="upright", xy=(0.0, 0.0), **kw) -> IcePiece:
    return IcePiece(piece_id=pid, color=color, size=size, pose=pose, center_mm=xy, **kw)


SMALL_LYING = piece("s1", "blue", "small", "lying", (10.0, 0.0), axis_tilt_deg=105.7)
SCORE_CASES = [
    ("IT-T1", piece("m1", "red", "medium", axis_tilt_deg=1.0), {}, 2),
    (
        "IT-T2",
        piece("l1", "red", "large", "standing_on_lying", axis_tilt_deg=25.0, supported_by=("table", "s1")),
        {"s1": SMALL_LYING},
        6,
    ),
    ("IT-T3", piece("s2", "red", "small", "lying", axis_tilt_deg=105.7), {}, 0),
]


@pytest.mark.parametrize(("case", "p", "others", "points"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score_cases(case, p, others, points):
    r = judge_piece_score(p, {p.piece_id: p, **others})
    assert r.rule == "IT Score"
    assert r.decision is Decision.SCORE
    assert r.evidence["score_points"] == pytest.approx(points)


LAUNCH_CASES = [
    ("IT-T4", piece("m2", "red", "medium", xy=(0.0, -340.0)), Decision.REPLAY),
    ("IT-T5", piece("m3", "red", "medium", xy=(0.0, 380.0)), Decision.LEGAL),
    ("IT-T6", piece("m4", "red", "medium", xy=(0.0, 900.0), on_table=False), Decision.REPLAY),
]


@pytest.mark.parametrize(("case", "p", "decision"), LAUNCH_CASES, ids=[c[0] for c in LAUNCH_CASES])
def test_launch_cases(case, p, decision):
    r = judge_launch(p, (RED_LINE, BLUE_LINE))
    assert r.rule == "IT Launch"
    assert r.decision is decision


def test_it_t7_scores_and_winner():
    lying = piece("b0", "blue", "small", "lying", (50.0, 0.0))
    pieces = [
        piece("r1", "red", "small"),
        piece("r2", "red", "small"),
        piece("r3", "red", "large"),
        piece("r4", "red", "medium", "standing_on_lying", axis_tilt_deg=20.0, supported_by=("table", "b0")),
        piece("b1", "blue", "medium"),
        piece("b2", "blue", "medium"),
        piece("b3", "blue", "medium"),
        lying,
    ]
    scores, rulings = adjudicate(pieces)
    assert scores == {"blue": 6, "red": 9}
    assert rulings[-1].decision is Decision.WINNER and rulings[-1].colors == ("red",)


def test_it_i1_partly_on_lying_piece_doubles_by_support_not_label():
    under = piece("u", "blue", "small", "lying")
    top = piece("t", "red", "medium", "upright", axis_tilt_deg=12.0, supported_by=("table", "u"))
    assert judge_piece_score(top, {"u": under, "t": top}).evidence["score_points"] == pytest.approx(4)


def test_it_i2_stacked_on_upright_scores_single_and_both_count():
    lower = piece("lo", "red", "large")
    upper = piece("up", "red", "small", "nested", supported_by=("lo",))
    scores, _ = adjudicate([lower, upper])
    assert scores == {"red": 4}


def test_it_i3_hidden_is_undecided_and_not_counted():
    outer = piece("o", "red", "large")
    inner = piece("i", "blue", "small", "nested", hidden=True)
    scores, rulings = adjudicate([outer, inner])
    assert scores == {"blue": 0, "red": 3}
    assert any(r.decision is Decision.UNDECIDED and r.interpretations == ("IT I-3",) for r in rulings)


def test_it_i4_straddling_start_line_is_decided_by_centroid_and_close_calls_are_flagged():
    inside = piece("a", "red", "large", xy=(0.0, -305.0))
    on_line = piece("b", "red", "large", xy=(0.0, -300.5))
    assert judge_launch(inside, (RED_LINE,)).decision is Decision.REPLAY
    assert judge_launch(on_line, (RED_LINE,)).decision is Decision.TOO_CLOSE_TO_CALL
    assert judge_piece_score(inside, {"a": inside}, (RED_LINE,)).evidence["score_points"] == pytest.approx(0)


def test_it_i5_i6_off_table_and_launcher_score_nothing():
    off = piece("a", "red", "large", on_table=False)
    launcher = piece("b", "red", "large", is_launcher=True)
    for p in (off, launcher):
        assert judge_piece_score(p, {p.piece_id: p}).evidence["score_points"] == pytest.approx(0)


def test_it_i7_equal_top_scores_share_the_win():
    r = judge_result({"red": 5, "blue": 5, "green": 2})
    assert r.decision is Decision.WINNER and r.colors == ("blue", "red") and r.interpretations == ("IT I-7",)


def test_flagged_piece_is_referred_never_guessed():
    p = piece("a", "red", "large", flagged=True, confidence=0.4)
    assert judge_piece_score(p, {"a": p}).decision is Decision.REFER_TO_UMPIRE


def test_tilt_at_upright_limit_is_too_close_to_call():
    p = piece("a", "red", "large", axis_tilt_deg=5.3)
    assert judge_piece_score(p, {"a": p}).decision is Decision.TOO_CLOSE_TO_CALL


def test_result_waits_for_undecided_pieces_that_could_change_the_winner():
    pieces = [piece("r", "red", "small"), piece("b", "blue", "large", flagged=True, confidence=0.3)]
    scores, rulings = adjudicate(pieces)
    assert scores == {"blue": 0, "red": 1}
    assert rulings[-1].decision is Decision.UNDECIDED and rulings[-1].piece_ids == ("b",)
    # a lead no undecided piece can close stands
    scores, rulings = adjudicate([*pieces, piece("r2", "red", "large"), piece("r3", "red", "large")])
    assert rulings[-1].decision is Decision.WINNER and rulings[-1].colors == ("red",)
