"""A colour short of its six whose missing wink the cup can hide: the potted count is the umpire's (TW 5(c))."""

import pytest

from adjudicator.tiddlywinks import judge_pot_contents
from geometry.records import scene_from_document, scene_to_document
from adjudicator.types import Decision
from geometry.types import Color, GeometryError, TiddlywinksScene, Wink


def _scene(**kw) -> TiddlywinksScene:
    return TiddlywinksScene(winks=(Wink(wink_id="red-L1", color=Color.RED, size="large", center_mm=(1.0, 2.0),
                                        potted=True),), **kw)


def test_a_colour_the_cup_may_hide_is_referred_to_the_umpire():
    rulings = judge_pot_contents(_scene(pot_may_hide=("green",)))
    assert [(r.rule, r.decision, r.colors) for r in rulings] == [("TW 5(c)", Decision.REFER_TO_UMPIRE,
                                                                  (Color.GREEN,))]
    assert "hidden in the pot" in rulings[0].explanation
    assert judge_pot_contents(_scene()) == ()  # a cup that hides nothing refers nothing


def test_a_colour_the_pot_already_hides_is_referred_once():
    rulings = judge_pot_contents(_scene(pot_hides_color="blue", pot_may_hide=("blue", "yellow")))
    assert [r.colors for r in rulings] == [(Color.BLUE,), (Color.YELLOW,)]


def test_the_document_keeps_the_colours_the_cup_may_hide():
    doc = scene_to_document(_scene(pot_may_hide=("yellow", "green")))
    assert doc["pot"]["may_hide"] == ["yellow", "green"]
    assert scene_from_document(doc).pot_may_hide == (Color.YELLOW, Color.GREEN)


def test_the_share_of_the_cup_out_of_view_goes_with_the_referral_and_the_document():
    (ruling,) = judge_pot_contents(_scene(pot_may_hide=("green",), pot_floor_hidden_share=0.42))
    assert ruling.evidence == {"pot_floor_hidden_ratio": 0.42}
    assert "42 % of the cup's floor is out of the camera's view" in ruling.explanation
    doc = scene_to_document(_scene(pot_may_hide=("green",), pot_floor_hidden_share=0.42))
    assert doc["pot"]["floor_hidden_share"] == 0.42
    assert scene_from_document(doc).pot_floor_hidden_share == 0.42
    # unmeasured (a scene typed in by hand): no share claimed anywhere
    assert "floor_hidden_share" not in scene_to_document(_scene())["pot"]
    (plain,) = judge_pot_contents(_scene(pot_may_hide=("green",)))
    assert plain.evidence == {} and "out of the camera's view" not in plain.explanation


@pytest.mark.parametrize("share", [-0.1, 1.5, float("nan")])
def test_a_share_outside_zero_to_one_is_refused_by_name(share):
    with pytest.raises(GeometryError, match="pot_floor_hidden_share"):
        _scene(pot_floor_hidden_share=share)
