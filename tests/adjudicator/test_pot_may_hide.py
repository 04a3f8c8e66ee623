"""A colour short of its six whose missing wink the cup can hide: the potted count is the umpire's (TW 5(c))."""

from adjudicator.tiddlywinks import judge_pot_contents
from geometry.records import scene_from_document, scene_to_document
from adjudicator.types import Decision
from geometry.types import Color, TiddlywinksScene, Wink


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
