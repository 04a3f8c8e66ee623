"""Tiddlywinks judges beyond the RULES.md cases: uncertainty, referrals, ordering, and the Ruling type."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tw_scenes import FLAT_Z_MM, STACK_STEP_MM, W, free_turn_trigger, potted, scene, two_winks_squopped

from adjudicator.tiddlywinks import (
    adjudicate,
    judge_first_contact,
    judge_free_turns,
    judge_game_ceases,
    judge_out_of_bounds,
    judge_piles,
    judge_pot_out_separation,
    judge_pot_supported,
    judge_score,
    judge_squidge_off,
    judge_squops,
    judge_under_pot_base,
    playable_winks,
    replacement_point,
)
from adjudicator.types import AdjudicatorError, Decision, Ruling, TiddlywinksParams
from geometry import tiddlywinks as tw
from geometry.types import Color

B, G, R, Y = Color.BLUE, Color.GREEN, Color.RED, Color.YELLOW


# --- Ruling ---------------------------------------------------------------------------------------------


def test_ruling_to_dict_shape():
    r = Ruling(
        game="tiddlywinks",
        rule="TW 7(a)",
        decision=Decision.REPLACE_AT,
        explanation="Put it back.",
        piece_ids=["w"],
        evidence={"move_mm": 1.23456},
        confidence=0.9,
        frame_idx=3,
        interpretations=("TW I-3",),
        colors=(R,),
        target_mm=(1, 2),
    )
    assert r.to_dict() == {
        "game": "tiddlywinks",
        "rule": "TW 7(a)",
        "decision": "replace_at",
        "explanation": "Put it back.",
        "piece_ids": ["w"],
        "evidence": {"move_mm": 1.235},
        "confidence": 0.9,
        "frame_idx": 3,
        "interpretations": ["TW I-3"],
        "colors": ["red"],
        "target_mm": [1.0, 2.0],
    }


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"rule": "7(a)"}, "clause"),
        ({"evidence": {"gap": 1.0}}, "unit suffix"),
        ({"confidence": 1.5}, "confidence"),
        ({"explanation": ""}, "explanation"),
        ({"interpretations": ("I-3",)}, "interpretation"),
    ],
)
def test_ruling_rejects(kw, message):
    base = {"game": "tiddlywinks", "rule": "TW 7(a)", "decision": Decision.OUT, "explanation": "Out."}
    with pytest.raises(AdjudicatorError, match=message):
        Ruling(**{**base, **kw})


# --- squidge-off ----------------------------------------------------------------------------------------


def test_squidge_off_wink_not_over_baseline_is_replayed():
    # blue's corner is (-x, +y); this wink straddles its baseline
    straddling = W("b", "blue", "large", -805, 420)
    assert not tw.is_completely_over_baseline(straddling, (-1, 1))
    v = judge_squidge_off(scene(straddling, W("g", "green", "small", 0, 60), W("r", "red", "large", 0, -80)))
    assert v.replay == (B,) and v.winner is None and v.decision is Decision.UNDECIDED
    assert [r.decision for r in v.rulings] == [Decision.REPLAY, Decision.UNDECIDED]


def test_squidge_off_margin_from_sigma_when_scene_has_no_eps():
    # sigma 0.3 each -> eps = 2 * sqrt(0.18) = 0.85 mm
    def verdict(gap_mm):
        return judge_squidge_off(
            scene(
                W("b", "blue", "large", 41, 0, position_sigma_mm=0.3),
                W("g", "green", "large", 0, -(41 + gap_mm), position_sigma_mm=0.3),
                eps_mm=None,
            )
        )

    assert verdict(0.8).decision is Decision.TOO_CLOSE_TO_CALL
    near = verdict(0.9)
    assert near.winner is B
    assert near.rulings[-1].evidence["eps_mm"] == pytest.approx(2 * math.sqrt(0.18), abs=1e-9)
    assert 0.5 < near.rulings[-1].confidence < 1.0


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.floats(20.0, 400.0), min_size=2, max_size=4), sigma=st.floats(0.0, 2.0))
@example(keys=[30.0, 30.5], sigma=0.0)
@example(keys=[30.0, 31.0], sigma=0.0)
def test_squidge_off_never_calls_a_winner_inside_eps(keys, sigma):
    colors = ("blue", "green", "red", "yellow")
    winks = [W(c[0], c, "large", 0.0, k + 11.0, position_sigma_mm=sigma) for c, k in zip(colors, keys)]
    v = judge_squidge_off(scene(*winks, eps_mm=None))
    eps = max(2 * math.sqrt(2) * sigma, 0.5)
    ordered = sorted(keys)
    if v.winner is not None:
        assert ordered[1] - ordered[0] > eps - 1e-9
        assert v.ranking[0].color.value == colors[keys.index(ordered[0])]
    else:
        assert ordered[1] - ordered[0] <= eps + 1e-9
        assert len(v.resquidge) >= 2


def test_squidge_off_names_no_winner_while_a_colour_in_the_game_is_unseen():
    # red is clearly nearest of the winks seen, but blue's squidged wink is not in the picture (behind the pot,
    # potted out of sight...): it could be nearest, so the umpire looks; once it is seen, the ranking decides
    seen = (W("g", "green", "small", 0, 90), W("r", "red", "large", 0, -50))
    v = judge_squidge_off(scene(*seen), unseen=(B,))
    assert v.winner is None and v.decision is Decision.UNDECIDED
    assert v.rulings[-1].colors == (B,) and v.rulings[-1].rule == "TW 5(a)"
    assert [r.color for r in v.ranking] == [Color.RED, Color.GREEN]  # the seen winks still ranked for the umpire
    assert judge_squidge_off(scene(*seen)).winner is Color.RED
    # a colour named unseen but present in the scene is not missing
    assert judge_squidge_off(scene(*seen), unseen=(Color.RED,)).winner is Color.RED


def test_squidge_off_one_wink_per_colour():
    with pytest.raises(AdjudicatorError, match="one wink per colour"):
        judge_squidge_off(scene(W("b1", "blue", "large", 50, 0), W("b2", "blue", "small", 0, 50)))


# --- squops and piles -----------------------------------------------------------------------------------


def test_pile_of_three_with_same_colour_squop():
    sc = scene(
        W("b1", "blue", "large", 100, 100, z_mm=FLAT_Z_MM),
        W("b3", "blue", "small", 112, 100, z_mm=FLAT_Z_MM + STACK_STEP_MM),
        W("r3", "red", "small", 124, 104, z_mm=FLAT_Z_MM + 2 * STACK_STEP_MM),
    )
    squops = judge_squops(sc)
    assert [(r.piece_ids, r.decision) for r in squops] == [
        (("b3", "b1"), Decision.SQUOPPED),
        (("r3", "b3"), Decision.SQUOPPED),
    ]
    assert "same colour" in squops[0].explanation and "same colour" not in squops[1].explanation
    (pile,) = judge_piles(sc)
    assert pile.rule == "TW 1(a)(vi)" and pile.piece_ids == ("b1", "b3", "r3") and "r3" in pile.explanation
    assert [w.wink_id for w in playable_winks(sc, B)] == []
    assert judge_first_contact(sc, "r3", R).decision is Decision.LEGAL
    assert judge_first_contact(sc, "b3", B).decision is Decision.ILLEGAL
    assert judge_first_contact(sc, "r3", B).decision is Decision.ILLEGAL


def test_squop_within_eps_is_too_close_and_unknown_order_is_undecided():
    touching = scene(W("a", "blue", "large", 0, 200), W("b", "red", "small", 18.5, 200, z_mm=2.25))
    assert [r.decision for r in judge_squops(touching)] == [Decision.TOO_CLOSE_TO_CALL]
    level = scene(W("a", "blue", "large", 0, 200), W("b", "red", "small", 10, 200))
    (r,) = judge_squops(level)
    assert r.decision is Decision.UNDECIDED and "TW I-13" in r.interpretations
    assert judge_squops(two_winks_squopped())[0].decision is Decision.SQUOPPED


# --- out of bounds --------------------------------------------------------------------------------------


def test_replacement_equally_near_is_referred():
    sc = scene(W("w", "red", "large", 300, 470, off_mat=True), W("s", "blue", "small", 300, 400))
    rep = replacement_point(sc, sc.wink("w"), (300, 457.2))
    assert rep.ambiguous and rep.point_mm is None
    rulings = judge_out_of_bounds(sc, crossings_mm={"w": (300, 457.2)})
    assert [r.decision for r in rulings] == [Decision.OUT, Decision.REFER_TO_UMPIRE]


def test_replacement_with_no_legal_spot_is_referred():
    ring = tw.field_polygon(33.0).exterior
    blockers = [
        W(f"x{i}", "blue", "small", *ring.interpolate(d).coords[0])
        for i, d in enumerate(range(0, int(ring.length), 150))
    ]
    sc = scene(W("w", "red", "large", 300, 470, off_mat=True), *blockers)
    assert replacement_point(sc, sc.wink("w"), (300, 457.2)).candidates == ()
    assert judge_out_of_bounds(sc)[-1].decision is Decision.REFER_TO_UMPIRE


def test_out_winks_are_replaced_one_after_another():
    sc = scene(
        W("r1", "red", "large", 300, 470, off_mat=True),
        W("r2", "red", "large", 310, 470, off_mat=True),
        last_shot_color=G,
    )
    rulings = judge_out_of_bounds(sc)
    spots = [r.target_mm for r in rulings if r.decision is Decision.REPLACE_AT]
    assert len(spots) == 2
    assert math.dist(*spots) - 22.0 >= 100.0 - 1e-6
    assert not any(r.decision is Decision.FORFEIT for r in rulings)  # green played, red winks left


def test_unplayed_baseline_blocks_replacement_but_played_one_does_not():
    w = W("w", "red", "small", 930, 150, off_mat=True)
    assert replacement_point(scene(w), w, (914.4, 150)).point_mm == pytest.approx((884.4, 150), abs=1e-9)
    live = scene(w, W("g5", "green", "small", 895, 440, unplayed=True))
    assert replacement_point(live, w, (914.4, 150)).point_mm == pytest.approx((884.4, 112.11), abs=0.01)


# --- pot ------------------------------------------------------------------------------------------------


def test_under_pot_base_edge_cases():
    assert judge_under_pot_base(scene(W("c", "red", "small", 0.2, 0)))[0].decision is Decision.REFER_TO_UMPIRE
    assert (
        judge_under_pot_base(scene(W("t", "red", "small", 26.5, 0)))[0].decision is Decision.TOO_CLOSE_TO_CALL
    )
    assert judge_under_pot_base(scene(W("ok", "red", "small", 27.5, 0))) == ()


def test_pot_supported_wink_laid_flat_and_lands_on_top():
    leaning = W("p", "red", "small", 31, 0, tilt_deg=40, tilt_azimuth_deg=180, z_mm=5)
    (r,) = judge_pot_supported(scene(leaning))
    assert r.rule == "TW 7(b)" and r.target_mm == pytest.approx((27.0, 0.0), abs=1e-9)
    (r2,) = judge_pot_supported(scene(leaning, W("u", "blue", "small", 25, 15)))
    assert r2.piece_ids == ("p", "u") and "lands on top of u" in r2.explanation
    away = W("q", "red", "small", 31, 0, tilt_deg=25, tilt_azimuth_deg=0, z_mm=5)
    assert judge_pot_supported(scene(away)) == ()


def test_pot_out_close_pair_moves_and_no_rulings_before_pot_out():
    pair = (W("y1", "yellow", "large", -150, 40), W("g3", "green", "small", -150, 60))
    assert judge_pot_out_separation(scene(*pair)) == ()
    sc = scene(*pair, *potted("blue", 6), potted_out_order=((B,),), eps_mm=0.5)
    (move,) = judge_pot_out_separation(sc)
    assert move.decision is Decision.MOVE and move.evidence["gap_after_mm"] == pytest.approx(2.0, abs=1e-6)
    moved = sc.wink(move.piece_ids[0])
    assert math.dist(move.target_mm, (0, 0)) == pytest.approx(math.dist(moved.center_mm, (0, 0)), abs=1e-9)


# --- scores, free turns, end ----------------------------------------------------------------------------


def test_pot_out_scores_in_progress_and_equal_sides():
    sc = scene(*potted("blue", 6), W("g", "green", "small", 100, 0), potted_out_order=((B,),))
    assert judge_score(sc).decision is Decision.GAME_CONTINUES
    tie = scene(W("g", "green", "small", 100, 0), potted_out_order=((B, Y), (R, G)))
    r = judge_score(tie)
    assert r.decision is Decision.SCORE and "TW I-11" in r.interpretations
    assert (r.evidence["blue_red_points"], r.evidence["green_yellow_points"]) == (3.5, 3.5)
    unknown = scene(*potted("blue", 6), *potted("red", 6, 7), W("g", "green", "small", 100, 0))
    assert judge_score(unknown).decision is Decision.UNDECIDED


def test_singles_scores_per_colour_and_side():
    sc = scene(W("b", "blue", "small", potted=True), W("g", "green", "small", 100, 0), game_type="singles")
    r = judge_score(sc)
    assert r.evidence["blue_points"] == 4 and r.evidence["green_points"] == 2
    assert r.evidence["blue_red_points"] == 4.5 and r.evidence["green_yellow_points"] == 2.5


def test_unplayed_wink_prevents_free_turns():
    base = free_turn_trigger()
    sc = scene(*base.winks, W("r9", "red", "small", 895, -440, unplayed=True), last_shot_color=G)
    r = judge_free_turns(sc)
    assert r.decision is Decision.NO_FREE_TURNS and "unplayed" in r.explanation
    assert judge_game_ceases(sc).decision is Decision.GAME_CONTINUES


def test_free_turns_without_known_shooter_names_the_side():
    r = judge_free_turns(free_turn_trigger(last_shot_color=None))
    assert r.decision is Decision.FREE_TURNS and r.colors == ("green", "yellow")


def test_adjudicate_runs_judges_in_rule_order():
    sc = scene(
        W("a", "blue", "large", 100, 100),
        W("b", "red", "small", 115, 100, z_mm=2.25),
        W("o", "green", "large", 905, 0),
        W("u", "yellow", "small", 20, 5),
        *potted("blue", 4, 3),
        potted_out_order=((B,),),
    )
    rules = [r.rule for r in adjudicate(sc)]
    assert rules == ["TW 6(a)", "TW 7(a)", "TW 7(a)", "TW 7(b)", "TW 8", "TW 10(a)", "TW 11(a)", "TW 6(b)"]
    assert all(r.frame_idx == 7 for r in adjudicate(sc, TiddlywinksParams(frame_idx=7)))


def test_rulings_hash_by_value_so_frames_can_be_deduplicated():
    a = adjudicate(two_winks_squopped())
    b = adjudicate(two_winks_squopped())
    assert set(a) == set(b) and len(set(a + b)) == len(a)
    moved = adjudicate(scene(*(w for w in two_winks_squopped().winks if w.wink_id == "A")))
    assert set(moved) != set(a)


def test_off_mat_wink_with_unknown_exit_is_referred_unless_the_crossing_is_given():
    sc = scene(W("w", "red", "large", 0, 0, off_mat=True))
    assert [r.decision for r in judge_out_of_bounds(sc)] == [Decision.OUT, Decision.REFER_TO_UMPIRE]
    given_exit = judge_out_of_bounds(sc, crossings_mm={"w": (300, 457.2)})
    assert given_exit[-1].target_mm == pytest.approx((300, 424.2), abs=1e-9)
