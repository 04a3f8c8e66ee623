"""Turn, shot and round bookkeeping (TW A2, TW A6, TW A9) as pure state functions."""

from __future__ import annotations

import pytest

from adjudicator.tiddlywinks import TurnState, free_turn_schedule, turns_after_expiry
from adjudicator.types import AdjudicatorError
from geometry.types import Color

B, G, R, Y = Color.BLUE, Color.GREEN, Color.RED, Color.YELLOW


def test_plain_shot_ends_turn_and_next_colour_is_clockwise():
    t = TurnState(color=Y).after_shot()
    assert t.ended
    nxt = t.next_turn()
    assert (nxt.color, nxt.shots_left) == (B, 1)


def test_forfeit_without_bonus_costs_the_next_turn_but_the_turn_counts():
    t = TurnState(color=R).after_shot(left_field=[R])
    assert t.ended and t.forfeits == (R,)
    t = t.next_turn()  # yellow, unaffected
    assert (t.color, t.shots_left, t.forfeits) == (Y, 1, (R,))
    for _ in range(3):  # yellow, blue, green each play one plain shot
        t = t.after_shot().next_turn()
    assert (t.color, t.shots_left, t.forfeits) == (R, 0, ())
    assert t.next_turn().color is Y


def test_other_colours_leaving_or_potting_change_nothing():
    t = TurnState(color=B).after_shot(potted=[G, Y], left_field=[R])
    assert t.ended and t.forfeits == ()


def test_two_bonus_shots_one_forfeited():
    t = TurnState(color=G).after_shot(potted=[G, G], left_field=[G])
    assert t.shots_left == 1 and t.forfeits == ()


def test_no_shot_after_the_turn_ended():
    with pytest.raises(AdjudicatorError, match="no shot left"):
        TurnState(color=B).after_shot().after_shot()
    assert TurnState(color=B, shots_left=3).after_pass().ended


@pytest.mark.parametrize(
    "winner, expiry, first, count",
    [
        (G, Y, (B, G), 22),
        (G, G, (R, Y, B, G), 20),
        (B, G, (R, Y, B), 23),
    ],
)
def test_turns_after_expiry(winner, expiry, first, count):
    turns = turns_after_expiry(winner, expiry)
    assert turns[: len(first)] == first and len(turns) == count and turns[-1] is winner


def test_free_turn_schedule_after_an_opponent_turn():
    # red's own shot left blue-red all squopped: green-yellow's next turn is yellow's
    assert free_turn_schedule("green-yellow", R, 1) == (Y,)
    assert free_turn_schedule("blue-red", Y, 3) == (B, R, B)
    with pytest.raises(AdjudicatorError):
        free_turn_schedule("blue-green", Y, 3)


def test_judge_shot_defers_a_forfeit_to_the_next_turn():
    from adjudicator.tiddlywinks import judge_shot

    after, (ruling,) = judge_shot(TurnState(color=Y), left_field=[Y, B])
    assert after.ended and after.forfeits == (Y,)
    assert ruling.rule == "TW 7(a)" and "its next shot" in ruling.explanation
    assert judge_shot(TurnState(color=Y), left_field=[B]) == (TurnState(color=Y, shots_left=0, shots_played=1), ())
