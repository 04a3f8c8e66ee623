"""The live game state machine (issue 6): turns, bonus shots, forfeits, free turns, the clock, pot-outs, the
end, corrections and the JSON round-trip, all on rest states in table mm (RULES.md TW A2-A9)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from adjudicator.tiddlywinks_game import (
    GameState,
    apply_correction,
    apply_rest,
    apply_shot,
    new_game,
)
from adjudicator.types import Decision
from geometry.types import COLOR_ORDER, Color, TiddlywinksScene, Wink

XS = (-500.0, -300.0, -100.0, 100.0, 300.0, 500.0)
YS = {Color.BLUE: 300.0, Color.GREEN: 100.0, Color.RED: -100.0, Color.YELLOW: -300.0}
IDS = ("L1", "L2", "S1", "S2", "S3", "S4")


def wid(color: Color, k: str) -> str:
    return f"{color.value}-{k}"


def full_scene() -> TiddlywinksScene:
    """All 24 winks in play, flat, 200 mm apart (no squops)."""
    winks = [Wink(wink_id=wid(c, k), color=c, size="large" if k.startswith("L") else "small",
                  center_mm=(x, YS[c])) for c in COLOR_ORDER for k, x in zip(IDS, XS)]
    return TiddlywinksScene(winks=tuple(winks))


def move(scene: TiddlywinksScene, wink_id: str, **changes) -> TiddlywinksScene:
    if "center_mm" in changes:
        changes["center_mm"] = tuple(changes["center_mm"])
    return replace(scene, winks=tuple(replace(w, **changes) if w.wink_id == wink_id else w for w in scene.winks))


def nudge(scene: TiddlywinksScene, wink_id: str, dx: float = 20.0) -> TiddlywinksScene:
    w = scene.wink(wink_id)
    return move(scene, wink_id, center_mm=(w.center_mm[0] + dx, w.center_mm[1]))


def pot(scene: TiddlywinksScene, wink_id: str, k: int = 0) -> TiddlywinksScene:
    return move(scene, wink_id, center_mm=(3.0 * k, 2.0), potted=True, z_mm=5.0)


def shoot(state: GameState, after: TiddlywinksScene, elapsed_s: float | None = None):
    return apply_rest(state, after, elapsed_s=elapsed_s)


def decisions(rulings) -> list[tuple[str, Decision]]:
    return [(r.rule, r.decision) for r in rulings]


def test_plain_turn_passes_clockwise():
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    assert state.due_color is Color.BLUE
    state, report, _rulings = shoot(state, nudge(state.scene, "blue-S1"))
    assert report.kind == "shot" and report.color is Color.BLUE and report.wink == "blue-S1"
    assert report.diff.moved == ("blue-S1",) and report.diff.disturbed == ()
    assert state.due_color is Color.GREEN and state.turn.shots_left == 1 and state.shot_number == 1


@pytest.mark.parametrize("case", ["TW-T14"])
def test_pot_and_off_in_one_shot_forfeits_the_bonus(case):
    """TW-T14: a blue shot pots a blue wink and sends another off: +1, then that bonus is forfeited."""
    # blue-L1 squops blue-S2 (a pile): the shot pots L1 and sends S2 off the mat.
    scene = move(full_scene(), "blue-S2", center_mm=(-488.0, 300.0), above=())
    scene = move(scene, "blue-L1", z_mm=2.2, above=("blue-S2",))
    state = new_game(scene, Color.BLUE, time_limit_s=None)
    after = move(pot(state.scene, "blue-L1"), "blue-S2", center_mm=(-460.0, 500.0), off_mat=True, z_mm=-3,
                 above=())
    state, report, rulings = shoot(state, after)
    assert report.diff.potted == ("blue-L1",) and report.diff.out == ("blue-S2",)
    assert ("TW 5(c)", Decision.BONUS_SHOTS) in decisions(rulings)
    assert ("TW 7(a)", Decision.FORFEIT) in decisions(rulings)
    assert report.shots_left == 0
    assert state.due_color is Color.GREEN and state.turn.forfeits == ()
    # The off wink goes back at its TW 7(a) spot: seen there, it is a placement, not a shot.
    (placement,) = state.pending
    assert placement.wink_id == "blue-S2"
    back = move(after, "blue-S2", center_mm=placement.target_mm, off_mat=False, z_mm=0.75)
    state2, report2, _ = shoot(state, back)
    assert report2.kind == "placement" and report2.placed == ("blue-S2",)
    assert state2.pending == () and state2.due_color is Color.GREEN and state2.shot_number == 1


def test_off_without_bonus_forfeits_next_turn():
    """TW 7(a): no bonus pending, so blue's next turn is forfeited (it still counts as a turn)."""
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    after = move(state.scene, "blue-S2", center_mm=(120.0, 500.0), off_mat=True)
    state, _, _ = shoot(state, after)
    assert state.turn.forfeits == (Color.BLUE,)
    target = state.pending[0].target_mm
    scene = move(state.scene, "blue-S2", center_mm=target, off_mat=False, z_mm=0.75)
    for color in (Color.GREEN, Color.RED, Color.YELLOW):
        assert state.due_color is color
        scene = nudge(scene, wid(color, "S1"))
        state, report, rulings = shoot(state, scene)
        assert report.kind == "shot"
    assert ("TW 7(a)", Decision.FORFEIT) in decisions(rulings)
    assert state.due_color is Color.GREEN and state.turn.forfeits == ()


@pytest.mark.parametrize("case", ["TW-T22"])
def test_two_own_winks_potted_give_two_more_shots(case):
    """TW-T22: a red shot pots two red winks (a pile) and one blue: +2 shots, blue not counted."""
    scene = move(full_scene(), "blue-S3", center_mm=(-76.0, -100.0), above=())
    scene = move(scene, "red-S2", center_mm=(-88.0, -100.0), z_mm=2.2, above=("blue-S3",))
    scene = move(scene, "red-S1", z_mm=3.7, above=("red-S2",))
    state = new_game(scene, Color.RED, time_limit_s=None)
    after = pot(pot(pot(state.scene, "red-S1", 0), "red-S2", 1), "blue-S3", 2)
    state, report, rulings = shoot(state, after)
    assert set(report.diff.potted) == {"red-S1", "red-S2", "blue-S3"}
    assert state.due_color is Color.RED and state.turn.shots_left == 2
    assert ("TW 5(c)", Decision.BONUS_SHOTS) in decisions(rulings)
    # Two more red shots, then yellow.
    for _ in range(2):
        state, _, _ = shoot(state, nudge(state.scene, "red-L1"))
    assert state.due_color is Color.YELLOW


def test_wrong_colour_is_flagged_not_guessed():
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    state, report, rulings = shoot(state, nudge(state.scene, "green-S1"))
    assert ("TW 12", Decision.REFER_TO_UMPIRE) in decisions(rulings)
    assert "colour_mismatch" in report.notes and state.due_color is Color.GREEN
    # The umpire says it was green out of turn and blue is still due: the game goes on from that.
    state, _ = apply_correction(state, {"kind": "turn", "color": "blue", "shots_left": 1})
    assert state.due_color is Color.BLUE


def test_disturbed_wink_is_reported_with_its_spot_and_put_back():
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    after = nudge(nudge(state.scene, "blue-S1"), "yellow-L2", dx=30.0)  # far from blue-S1's path
    state, report, rulings = shoot(state, after)
    assert report.diff.disturbed == ("yellow-L2",)
    (r,) = [r for r in rulings if r.rule == "TW 5(b)"]
    assert r.decision is Decision.REPLACE_AT and r.target_mm == (-300.0, -300.0)
    back = move(after, "yellow-L2", center_mm=(-300.5, -299.5))
    state, report, _ = shoot(state, back)
    assert report.kind == "placement" and report.placed == ("yellow-L2",)


def test_knocked_wink_is_not_disturbed():
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    # blue-S1 at (-100, 300) slides into blue-S2 at (100, 300), which goes on to (250, 300).
    after = move(move(state.scene, "blue-S1", center_mm=(85.0, 300.0)), "blue-S2", center_mm=(250.0, 300.0))
    state, report, _rulings = shoot(state, after)
    assert set(report.diff.moved) == {"blue-S1", "blue-S2"} and report.diff.disturbed == ()
    assert report.wink == "blue-S1"


def test_ids_survive_detector_renaming():
    """A detector names winks its own way; the game keeps its ids."""
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    after = nudge(state.scene, "blue-S1")
    shuffled = replace(after, winks=tuple(replace(w, wink_id=f"det{i}")
                                          for i, w in enumerate(reversed(after.winks))))
    state, report, _ = shoot(state, shuffled)
    assert report.diff.moved == ("blue-S1",)
    assert {w.wink_id for w in state.scene.winks} == {w.wink_id for w in full_scene().winks}


def free_turn_scene() -> TiddlywinksScene:
    """TW-T20 setup: blue all squopped; red's last free wink about to be squopped by green-L2; free winks
    after the shot: green 1 (S1), yellow 2 (L1, L2)."""
    s = full_scene()
    for c, keep in ((Color.BLUE, "S4"), (Color.RED, "S4"), (Color.GREEN, "S1"), (Color.YELLOW, "L2")):
        for i, k in enumerate(IDS):
            if k not in (keep, "L1", "L2") or (c in (Color.BLUE, Color.RED) and k != keep):
                s = pot(s, wid(c, k), i)
    # green-L1 squops blue-S4.
    s = move(s, "blue-S4", center_mm=(400.0, 0.0), above=())
    s = move(s, "green-L1", center_mm=(410.0, 0.0), z_mm=2.2, above=("blue-S4",))
    s = move(s, "red-S4", center_mm=(-400.0, 0.0), above=())
    return s


@pytest.mark.parametrize("case", ["TW-T20"])
def test_free_turns_counted_and_failed(case):
    scene = free_turn_scene()
    state = new_game(scene, Color.GREEN, time_limit_s=None)
    # Green squops red's last free wink.
    after = move(scene, "green-L2", center_mm=(-390.0, 0.0), z_mm=2.2, above=("red-S4",))
    state, _, rulings = shoot(state, after)
    (ft,) = [r for r in rulings if r.decision is Decision.FREE_TURNS and r.rule == "TW 11(a)"
             and r.evidence.get("free_turns_count")]
    assert ft.evidence["free_turns_count"] == 4 and ft.colors == ("yellow", "green", "yellow", "green")
    # Red cannot play and passes; yellow takes free turn 1.
    assert state.due_color is Color.YELLOW and state.in_free_turn and len(state.free_turns) == 3
    seen = []
    for _ in range(4):
        seen.append(state.due_color)
        color = state.due_color
        free_wink = wid(color, "L1") if color is Color.YELLOW else wid(color, "S1")
        state, _report, rulings = shoot(state, nudge(state.scene, free_wink, dx=-15.0))
    assert seen == [Color.YELLOW, Color.GREEN, Color.YELLOW, Color.GREEN]
    assert ("TW 11(d)", Decision.REFER_TO_UMPIRE) in decisions(rulings)


def test_freeing_shot_ends_free_turns():
    scene = free_turn_scene()
    state = new_game(scene, Color.GREEN, time_limit_s=None)
    after = move(scene, "green-L2", center_mm=(-390.0, 0.0), z_mm=2.2, above=("red-S4",))
    state, _, _ = shoot(state, after)
    assert state.due_color is Color.YELLOW and state.squopping_side == "green-yellow"
    # Yellow-L1 (at -500, -300) knocks green-L1 off blue-S4? Too far: let green's turn do it instead.
    state, _, _ = shoot(state, nudge(state.scene, "yellow-L1", dx=-15.0))
    assert state.due_color is Color.GREEN
    freed = move(state.scene, "green-L1", center_mm=(410.0, 60.0), z_mm=0.75, above=())
    state, _report, rulings = shoot(state, freed)
    assert ("TW 11", Decision.NO_FREE_TURNS) in decisions(rulings)
    assert state.squopping_side is None and state.free_turns == () and state.keep_free_side == "green-yellow"
    # red-S4 is still under green-L2, so red passes and yellow plays.
    assert state.due_color is Color.YELLOW


@pytest.mark.parametrize("case", ["TW-T21"])
def test_time_limit_rounds(case):
    """TW-T21: winner green; time expires during yellow's turn; 22 more turns, then the game ends (A8)."""
    state = new_game(full_scene(), Color.GREEN, time_limit_s=100.0)
    order = []
    expiry_turns = None
    dx = 10.0
    while not state.ended:
        color = state.due_color
        # Shots every 10 s from 10 s (the clock starts at the first); the 11th (yellow) at 110 s is inside the
        # limit, the 12th (blue) at 130 s is past it: expiry fell in yellow's turn (TW I-8).
        order.append(color)
        k = len(order)
        t = 10.0 * k + (10.0 if k >= 12 else 0.0) - (5.0 if k == 11 else 0.0)
        dx = -dx
        state, _report, rulings = shoot(state, nudge(state.scene, wid(color, "S1"), dx=dx), elapsed_s=t)
        if expiry_turns is None and state.expired_in is not None:
            assert state.expired_in is Color.YELLOW and color is Color.BLUE
            assert ("TW 9(b)", Decision.TURNS_REMAINING) in decisions(rulings)
            expiry_turns = len(order) - 1
        assert len(order) < 200
    assert order[expiry_turns - 1] is Color.YELLOW
    after_expiry = order[expiry_turns:]
    assert len(after_expiry) == 22
    assert [c.value for c in after_expiry[:2]] == ["blue", "green"]
    assert after_expiry[-1] is Color.GREEN
    assert state.end_reason == "time" and state.final_score["rule"] == "TW 10(b)"


def test_pot_out_order_and_score():
    """TW 8 / TW 10(a): green then red potted out earlier; blue's sixth wink makes three: G4 R2 B1 Y0 ->
    green-yellow 4, blue-red 3, plus the transfer point: 5-2."""
    scene = full_scene()
    for c in (Color.GREEN, Color.RED):
        for i, k in enumerate(IDS):
            scene = pot(scene, wid(c, k), i)
    for i, k in enumerate(IDS[:5]):
        scene = pot(scene, wid(Color.BLUE, k), i)
    scene = move(scene, "blue-S4", center_mm=(120.0, 0.0))
    state = new_game(scene, Color.BLUE, time_limit_s=100.0)
    state = replace(state, pot_out_order=((Color.GREEN,), (Color.RED,)))
    state, _report, _rulings = shoot(state, pot(state.scene, "blue-S4", 6), elapsed_s=500.0)
    assert state.pot_out_order[-1] == (Color.BLUE,)
    assert state.ended and state.end_reason == "pot_out" and state.expired_in is None
    ev = state.final_score["evidence"]
    assert ev["green_yellow_points"] == pytest.approx(5.0) and ev["blue_red_points"] == pytest.approx(2.0)


def test_first_pot_out_stops_the_clock():
    scene = full_scene()
    for i, k in enumerate(IDS[:5]):
        scene = pot(scene, wid(Color.BLUE, k), i)
    scene = move(scene, "blue-S4", center_mm=(120.0, 0.0))
    state = new_game(scene, Color.BLUE, time_limit_s=100.0)
    state, _, rulings = shoot(state, pot(state.scene, "blue-S4", 6), elapsed_s=0.0)
    assert state.pot_out_order == ((Color.BLUE,),) and ("TW 8", Decision.GAME_CONTINUES) in decisions(rulings)
    # Blue is potted out: its bonus shot cannot be played, green is due; time no longer runs out.
    assert state.due_color is Color.GREEN
    state, _, _ = shoot(state, nudge(state.scene, "green-S1"), elapsed_s=1000.0)
    assert state.expired_in is None and state.turns_left is None and not state.ended


def cyclic_scene() -> TiddlywinksScene:
    """One wink of each colour in a square, each over the next (B>G>R>Y), Y's order not yet known; the rest
    potted."""
    s = full_scene()
    for c in COLOR_ORDER:
        for i, k in enumerate(IDS[:5]):
            s = pot(s, wid(c, k), i)
    square = {Color.BLUE: (300.0, 0.0), Color.GREEN: (313.0, 0.0), Color.RED: (313.0, 13.0),
              Color.YELLOW: (300.0, 13.0)}
    nxt = {Color.BLUE: "green-S4", Color.GREEN: "red-S4", Color.RED: "yellow-S4", Color.YELLOW: None}
    for c, p in square.items():
        s = move(s, wid(c, "S4"), center_mm=p, above=(nxt[c],) if nxt[c] else ())
    return s


def test_correction_marking_a_squop_ends_the_game():
    """The umpire marks yellow over blue: every unpotted wink is squopped (TW 6(b)); final score by A8."""
    state = new_game(cyclic_scene(), Color.YELLOW, time_limit_s=None)
    # Yellow's wink is squopped by red's, so yellow passes at once and blue is due.
    assert state.due_color is Color.BLUE and not state.ended
    state, rulings = apply_correction(state, {"kind": "squop", "upper": "yellow-S4", "lower": "blue-S4"})
    assert ("TW 6(b)", Decision.GAME_CEASES) in decisions(rulings)
    assert state.ended and state.end_reason == "game_ceases" and state.final_score["rule"] == "TW 10(b)"


def test_correction_then_play_goes_on():
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    state, _ = apply_correction(state, {"kind": "wink", "id": "red-S1", "potted": True, "center_mm": [1, 1]})
    assert state.scene.wink("red-S1").potted
    state, report, _ = shoot(state, nudge(state.scene, "blue-S1"))
    assert report.diff.moved == ("blue-S1",) and state.due_color is Color.GREEN


def test_correction_refuses_a_squop_that_cannot_be():
    """A declared squop of winks 200 mm apart, or of a potted wink, is refused with the reason; the state is
    unchanged (the umpire corrects the position first)."""
    import re

    from adjudicator.types import AdjudicatorError
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    with pytest.raises(AdjudicatorError, match=re.escape("mm apart (edge to edge)")) as far:
        apply_correction(state, {"kind": "squop", "upper": "blue-L1", "lower": "blue-L2"})
    assert "178.0 mm" in str(far.value)  # 200 mm between centres less two 11 mm large radii
    potted, _ = apply_correction(state, {"kind": "wink", "id": "red-S1", "potted": True, "center_mm": [1, 1]})
    with pytest.raises(AdjudicatorError, match="red-S1 is potted"):
        apply_correction(potted, {"kind": "squop", "upper": "blue-S1", "lower": "red-S1"})
    # Moved next to it first, the same squop is accepted.
    near, _ = apply_correction(state, {"kind": "wink", "id": "blue-L2", "center_mm": [-482.0, 300.0]})
    squopped, _ = apply_correction(near, {"kind": "squop", "upper": "blue-L1", "lower": "blue-L2"})
    assert squopped.scene.wink("blue-L1").above == ("blue-L2",)


def test_state_json_round_trip():
    state = new_game(free_turn_scene(), Color.GREEN, time_limit_s=1200.0)
    after = move(state.scene, "green-L2", center_mm=(-390.0, 0.0), z_mm=2.2, above=("red-S4",))
    state, _, _ = shoot(state, after, elapsed_s=3.0)
    d = state.to_dict()
    again = GameState.from_dict(json.loads(json.dumps(d)))
    assert again.to_dict() == d
    assert again.free_turns == state.free_turns and again.turn == state.turn


def test_apply_shot_direct_signature():
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    before = state.scene
    new, report, _rulings = apply_shot(state, before, nudge(before, "blue-L1"), Color.BLUE, 12.0)
    assert report.color is Color.BLUE and new.clock_start_s == 12.0 and new.due_color is Color.GREEN


def _without(scene: TiddlywinksScene, wink_id: str) -> TiddlywinksScene:
    return replace(scene, winks=tuple(w for w in scene.winks if w.wink_id != wink_id))


def test_a_wink_vanishing_into_a_pot_that_hides_its_colour_is_taken_as_potted():
    """A blue pot hides blue winks: a blue wink not seen after blue's shot most likely went in (TW 5(c) bonus),
    and the umpire is asked to confirm; the same wink vanishing with a grey pot is taken as off the mat."""
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    hidden = replace(_without(state.scene, "blue-S1"), pot_hides_color=Color.BLUE)
    s1, report, rulings = shoot(state, hidden)
    assert report.diff.potted == ("blue-S1",) and report.diff.out == ()
    assert s1.scene.wink("blue-S1").potted and s1.due_color is Color.BLUE  # the bonus shot
    assert ("TW 5(c)", Decision.REFER_TO_UMPIRE) in decisions(rulings)
    plain = _without(state.scene, "blue-S1")
    s2, report2, rulings2 = shoot(state, plain)
    assert report2.diff.out == ("blue-S1",) and not s2.scene.wink("blue-S1").potted
    assert ("TW 7(a)", Decision.REFER_TO_UMPIRE) in decisions(rulings2)


def test_a_pot_hiding_a_colour_refers_that_colours_potted_count():
    """TW 5(c) from a still: the scene says the pot hides blue, so the count of potted blue winks is the umpire's."""
    from adjudicator.tiddlywinks import adjudicate
    hidden = replace(full_scene(), pot_hides_color=Color.BLUE)
    refer = [r for r in adjudicate(hidden) if r.rule == "TW 5(c)" and r.decision is Decision.REFER_TO_UMPIRE]
    assert len(refer) == 1 and refer[0].colors == ("blue",)
    assert not any(r.rule == "TW 5(c)" and r.decision is Decision.REFER_TO_UMPIRE for r in adjudicate(full_scene()))


def _changed(*discs, pot_changed_ratio=None, off_mat_blobs_mm=()):
    """Pixel evidence: the (x, y, r) mm discs changed between the two rest frames."""
    from geometry.rest_change import RestChange
    return RestChange.from_discs(discs, pot_changed_ratio=pot_changed_ratio, off_mat_blobs_mm=off_mat_blobs_mm)


def test_off_mat_shot_beside_a_pot_of_its_colour_is_out_by_the_pixels():
    """Blue's wink at (-100, 300) vanishes; the pot hides blue winks. The pot's opening did not change and the
    table just off the mat did: it left the field (TW 7(a): blue forfeits its next shot), not potted. When the
    cup changed and nothing off the mat did, the same vanishing is a pot (TW 5(c) bonus)."""
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    gone = replace(_without(state.scene, "blue-S1"), pot_hides_color=Color.BLUE)
    off = _changed((-100, 300, 12), (-120, 520, 12), pot_changed_ratio=0.0, off_mat_blobs_mm=((-120.0, 520.0),))
    s1, report, rulings = apply_rest(state, gone, elapsed_s=1.0, change=off)
    assert report.diff.out == ("blue-S1",) and report.diff.potted == ()
    assert s1.scene.wink("blue-S1").off_mat and not s1.scene.wink("blue-S1").potted
    assert ("TW 7(a)", Decision.REFER_TO_UMPIRE) in decisions(rulings)
    assert Color.BLUE in s1.turn.forfeits
    into = _changed((-100, 300, 12), pot_changed_ratio=0.3)
    s2, report2, rulings2 = apply_rest(state, gone, elapsed_s=1.0, change=into)
    assert report2.diff.potted == ("blue-S1",) and s2.due_color is Color.BLUE
    assert ("TW 5(c)", Decision.REFER_TO_UMPIRE) in decisions(rulings2)


def test_a_wink_vanishing_where_a_detected_wink_landed_off_the_mat_keeps_the_pot_rule():
    """The only change off the mat is where a wink is seen (another one knocked off): it is no trace of the
    vanished blue one, so with an unchanged pot and no other trace the pot's hidden colour decides."""
    from adjudicator.tiddlywinks_game import vanished_destinations
    scene0 = full_scene()
    after = move(_without(scene0, "blue-S1"), "green-S1", center_mm=(-100, 520), off_mat=True)
    ch = _changed(pot_changed_ratio=0.0, off_mat_blobs_mm=((-101.0, 521.0),))
    into, off, why = vanished_destinations(scene0, after, ("blue-S1",), Color.BLUE, ch)
    assert into == ("blue-S1",) and off == () and "neither" in why["blue-S1"]
    into, off, _ = vanished_destinations(scene0, after, ("blue-S1",), None, ch)
    assert into == () and off == ("blue-S1",)


def test_a_wink_vanishing_with_its_colour_one_the_cup_may_hide_is_taken_as_potted():
    """The still says the cup may hide a blue wink from this camera (``pot_may_hide``: a colour short of its six
    whose missing wink fits behind the wall or under the winks in the cup). With no pixels between the rest
    frames, blue's vanished wink is taken as potted (TW 5(c), referred) with that reason, not off the mat; a
    vanished green wink, a colour the cup cannot hide, is still taken as off the mat (TW 7(a))."""
    state = new_game(full_scene(), Color.BLUE, time_limit_s=None)
    gone = replace(_without(state.scene, "blue-S1"), pot_may_hide=(Color.BLUE,))
    s1, report, rulings = shoot(state, gone)
    assert report.diff.potted == ("blue-S1",) and report.diff.out == ()
    assert s1.scene.wink("blue-S1").potted and s1.due_color is Color.BLUE  # the bonus shot
    refer = [r for r in rulings if r.rule == "TW 5(c)" and r.decision is Decision.REFER_TO_UMPIRE
             and "blue-S1" in r.explanation]
    assert refer and "cup can hide a blue wink" in refer[0].explanation
    other = replace(_without(state.scene, "blue-S1"), pot_may_hide=(Color.GREEN,))
    s2, report2, rulings2 = shoot(state, other)
    assert report2.diff.out == ("blue-S1",) and not s2.scene.wink("blue-S1").potted
    assert ("TW 7(a)", Decision.REFER_TO_UMPIRE) in decisions(rulings2)
