"""Wink identity between rest states and the shot diff (geometry.matching)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from geometry.matching import associate, diff_rest_states
from geometry.types import Color, TiddlywinksScene, Wink

POSITION_TOL_MM = 1e-6


def w(wid, color, size, x, y, **kw) -> Wink:
    return Wink(wink_id=wid, color=color, size=size, center_mm=(x, y), **kw)


def scene(*winks) -> TiddlywinksScene:
    return TiddlywinksScene(winks=tuple(winks))


def test_wink_tilted_onto_another_keeps_its_id():
    """A red small wink hops onto a blue one and rests tilted over it (a squop): still the same wink."""
    before = scene(w("r1", "red", "small", 100, 0), w("r2", "red", "small", 130, 40),
                   w("b1", "blue", "small", 160, 0))
    after = scene(w("x", "red", "small", 148, 2, z_mm=2.0, tilt_deg=8.0, tilt_azimuth_deg=180.0, above=("z",)),
                  w("y", "red", "small", 130, 40), w("z", "blue", "small", 160, 0, above=()))
    d = diff_rest_states(before, after, played_color=Color.RED)
    ids = {v.wink_id: v for v in d.after.winks}
    assert ids["r1"].center_mm == (148.0, 2.0) and ids["r1"].tilt_deg == 8.0
    assert ids["r2"].center_mm == (130.0, 40.0)
    assert d.moved == ("r1",) and d.played_id == "r1" and d.disturbed == ()
    assert d.squops_made == (("r1", "b1"),) and d.squops_broken == ()


def test_squop_broken_and_knocked_wink_is_not_disturbed():
    before = scene(w("g1", "green", "large", 0, 200, z_mm=2.0, above=("y1",)),
                   w("y1", "yellow", "small", 12, 200, above=()),
                   w("g2", "green", "small", 300, 200))
    # g1 is played off the pile, runs into g2, which slides on.
    after = scene(w("a", "green", "large", 280, 200, above=()), w("b", "yellow", "small", 12, 200, above=()),
                  w("c", "green", "small", 420, 210))
    d = diff_rest_states(before, after, played_color=Color.GREEN)
    assert d.squops_broken == (("g1", "y1"),) and d.squops_made == ()
    assert set(d.moved) == {"g1", "g2"} and d.disturbed == () and d.played_id == "g1"


def test_disturbed_is_outside_the_played_pile_and_every_path():
    before = scene(w("b1", "blue", "small", -300, 0), w("r1", "red", "large", 300, 100))
    after = scene(w("b1", "blue", "small", -250, 0), w("r1", "red", "large", 310, 100))
    d = diff_rest_states(before, after, played_color=Color.BLUE)
    assert d.disturbed == ("r1",) and d.played_id == "b1"


def test_potted_and_out_and_vanished():
    before = scene(w("b1", "blue", "small", 200, 0), w("b2", "blue", "small", 850, 0),
                   w("b3", "blue", "large", -600, 0), w("y1", "yellow", "small", 0, 0, potted=True),
                   w("g1", "green", "small", -400, -300))
    after = scene(w("p", "blue", "small", 2, 1, potted=True), w("q", "blue", "small", 940, 10, off_mat=True),
                  w("r", "blue", "large", -600, 0))  # y1 hidden in the pot; g1 not seen (occluded)
    d = diff_rest_states(before, after, played_color=Color.BLUE, played_id="b1")
    assert d.potted == ("b1",) and d.out == ("b2",) and d.disturbed == ("b2",)
    assert d.missing == () and set(d.unseen) == {"g1"}
    ids = {v.wink_id for v in d.after.winks}
    assert {"y1", "g1"} <= ids  # the potted wink stays potted, the unseen one stays where it was


def test_vanished_played_wink_is_missing_not_unseen():
    before = scene(w("b1", "blue", "small", 200, 0), w("g1", "green", "small", -400, -300))
    after = scene(w("g", "green", "small", -400, -300))
    d = diff_rest_states(before, after, played_color=Color.BLUE)
    assert d.missing == ("b1",) and d.moved == ("b1",) and d.played_id == "b1"


def test_no_swap_when_a_wink_passes_a_still_one_of_its_group():
    """b1 slides past b2 (same colour and size) close by: the plain-distance cost keeps b2 still."""
    before = scene(w("b1", "blue", "small", 0, 0), w("b2", "blue", "small", 100, 17))
    after = scene(w("s", "blue", "small", 100, 17), w("t", "blue", "small", 200, 0))
    a = associate(before, after)
    assert a.pairs == {"s": "b2", "t": "b1"}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 4), step=st.floats(0.0, 40.0))
def test_well_separated_winks_never_swap_and_order_does_not_matter(seed, n, step):
    """Winks at least 2 x (move + 16 mm) apart, each moved by at most ``step``: identity kept; shuffling the
    input order changes nothing."""
    rng = np.random.default_rng(seed)
    spacing = 2 * (step + 16.0) + 1.0
    before_w, after_w = [], []
    k = 0
    for color in ("blue", "green"):
        for size in ("small", "large"):
            for i in range(n):
                x, y = -800 + spacing * k, float(rng.uniform(-50, 50))
                ang = rng.uniform(0, 2 * np.pi)
                before_w.append(w(f"{color}-{size}-{i}", color, size, x, y))
                after_w.append(w(f"det{k}", color, size, x + step * np.cos(ang), y + step * np.sin(ang)))
                k += 1
    truth = {f"det{j}": b.wink_id for j, b in enumerate(before_w)}
    base = associate(scene(*before_w), scene(*after_w))
    assert base.pairs == truth
    perm_b = [before_w[i] for i in rng.permutation(len(before_w))]
    perm_a = [after_w[i] for i in rng.permutation(len(after_w))]
    again = associate(scene(*perm_b), scene(*perm_a))
    assert again.pairs == base.pairs and again.missing == base.missing and again.appeared == base.appeared


def test_appeared_wink_gets_a_fresh_id():
    before = scene(w("b1", "blue", "small", 0, 100))
    after = scene(w("b1", "blue", "small", 0, 100), w("b1x", "blue", "small", 400, 100))
    d = diff_rest_states(before, after, played_color=Color.BLUE)
    assert d.appeared == ("b1x",) and d.moved == ()
    moved = replace(after, winks=(after.winks[1], after.winks[0]))
    assert diff_rest_states(before, moved).appeared == ("b1x",)


def test_colour_misread_at_the_same_spot_keeps_the_identity():
    """The detector calls a blue wink yellow in the later frame: same spot, so the same (blue) wink."""
    before = scene(w("b1", "blue", "small", -600, 200), w("y1", "yellow", "small", 300, 0))
    after = scene(w("d0", "yellow", "small", -601, 199), w("d1", "yellow", "small", 320, 0))
    d = diff_rest_states(before, after, played_color=Color.YELLOW)
    b1 = next(x for x in d.after.winks if x.wink_id == "b1")
    assert b1.color is Color.BLUE and d.moved == ("y1",) and d.appeared == () and d.missing == ()


def test_only_a_playable_wink_is_paired_beyond_the_gate():
    """A far jump of a wink that was not played is two detector events (unseen + appeared), not a move."""
    before = scene(w("b1", "blue", "small", -600, 200), w("g1", "green", "small", 300, 0))
    after = scene(w("d0", "blue", "small", 200, -300), w("d1", "green", "small", 320, 0))
    d = diff_rest_states(before, after, played_color=Color.GREEN)
    assert d.moved == ("g1",) and d.unseen == ("b1",) and d.appeared == ("d0",)
    d2 = diff_rest_states(before, after, played_color=Color.BLUE)
    assert "b1" in d2.moved and d2.displacement_mm["b1"] > 800


def test_unplayed_winks_rearranged_behind_the_baseline_are_not_moves():
    before = scene(w("g1", "green", "small", 850, 400, unplayed=True), w("g2", "green", "small", 100, 0))
    after = scene(w("a", "green", "small", 860, 420, unplayed=True), w("b", "green", "small", 150, 0))
    d = diff_rest_states(before, after, played_color=Color.GREEN)
    assert d.moved == ("g2",) and d.disturbed == ()


def test_a_wink_potted_and_read_at_the_other_size_in_the_cup_is_the_same_wink():
    """In the cup only part of a wink shows: a large blue gone from the mat and a small blue new in the pot are
    one wink, potted (not one out and one appeared)."""
    before = scene(w("b1", "blue", "large", 300, 100), w("g1", "green", "small", -400, -300))
    after = scene(w("p", "blue", "small", 3, -2, potted=True), w("g", "green", "small", -400, -300))
    d = diff_rest_states(before, after, played_color=Color.BLUE)
    assert d.potted == ("b1",) and d.out == () and d.missing == () and d.appeared == ()
    # a green wink new in the pot does not explain a blue one gone
    after2 = scene(w("p", "green", "small", 3, -2, potted=True), w("g", "green", "small", -400, -300))
    d2 = diff_rest_states(before, after2, played_color=Color.BLUE)
    assert d2.missing == ("b1",) and d2.appeared != ()


def test_equipment_caps_a_colour_at_six_not_each_size():
    """Three 'large' blue winks are likelier a size misread than a phantom: kept while the colour has six; a
    seventh blue wink is a phantom and the least confident goes."""
    from geometry.matching import trim_to_equipment
    six = [w(f"b{i}", "blue", "large" if i < 3 else "small", 100.0 * i, 0, confidence=0.9) for i in range(6)]
    kept, dropped = trim_to_equipment(scene(*six))
    assert dropped == () and len(kept.winks) == 6
    kept, dropped = trim_to_equipment(scene(*six, w("bx", "blue", "small", 900, 0, confidence=0.5)))
    assert dropped == ("bx",) and len(kept.winks) == 6


# --- pixel evidence (RestChange): where the picture changed between the two rest frames ---------------------


def changed_at(*discs, pot_changed_ratio=None, off_mat_blobs_mm=()):
    """A RestChange whose changed cells are the given (x, y, r) discs in mm."""
    from geometry.rest_change import RestChange
    return RestChange.from_discs(discs, pot_changed_ratio=pot_changed_ratio, off_mat_blobs_mm=off_mat_blobs_mm)


def test_rest_change_round_trips_and_answers_by_distance():
    from geometry.rest_change import RestChange
    c = changed_at((100, 50, 10), pot_changed_ratio=0.25, off_mat_blobs_mm=((-980.0, 0.0),))
    again = RestChange.from_dict(c.to_dict())
    assert np.array_equal(again.grid, c.grid) and again.pot_changed_ratio == 0.25
    assert again.off_mat_blobs_mm == ((-980.0, 0.0),)
    assert c.changed_within((100, 50), 1.0) and c.changed_within((100, 70), 11.0)
    assert not c.changed_within((100, 75), 11.0) and not c.changed_within((-300, 0), 30.0)


def test_phantom_detection_that_jumps_where_nothing_changed_is_not_a_move():
    """A detector phantom (or a wink re-read 15 mm away) where no pixel changed: not moved, identity kept;
    without the pixels it would count as a (disturbed) move."""
    before = scene(w("b1", "blue", "small", -300, 0), w("g1", "green", "small", 200, 100),
                   w("ph", "yellow", "large", 500, -200, confidence=0.4))
    after = scene(w("d0", "blue", "small", -200, 0), w("d1", "green", "small", 200, 100),
                  w("d2", "yellow", "large", 515, -200, confidence=0.4))
    change = changed_at((-300, 0, 10), (-200, 0, 10))
    d = diff_rest_states(before, after, played_color=Color.BLUE, change=change)
    assert d.moved == ("b1",) and d.disturbed == () and d.appeared == ()
    assert next(x for x in d.after.winks if x.wink_id == "ph").center_mm == (500.0, -200.0)
    blind = diff_rest_states(before, after, played_color=Color.BLUE)
    assert "ph" in blind.moved and "ph" in blind.disturbed


def test_detection_new_where_nothing_changed_is_no_destination_of_the_played_wink():
    """b1 is potted unseen; a blue phantom appears where the picture did not change: b1 did not go there."""
    before = scene(w("b1", "blue", "small", -300, 0), w("b2", "blue", "small", 300, 200))
    after = scene(w("d0", "blue", "small", 300, 200), w("d1", "blue", "small", -250, -150))
    d = diff_rest_states(before, after, played_color=Color.BLUE, change=changed_at((-300, 0, 10)))
    assert d.missing == ("b1",) and d.moved == ("b1",) and d.appeared == ("d1",)
    blind = diff_rest_states(before, after, played_color=Color.BLUE)
    assert blind.missing == () and blind.displacement_mm["b1"] > 100


def test_identity_through_a_squop_read_at_the_other_size():
    """r1 (small) is played onto b1 and rests tilted over it, beside r2 (small, untouched); the detector reads
    the squopping wink as large. Blind, r1 vanishes (taken off the mat) and a seventh red appears; with the
    pixels, the only arrival where the picture changed is r1, still small, squopping b1, and r2 kept still."""
    before = scene(w("r1", "red", "small", 0, 0), w("r2", "red", "small", 95, 20),
                   w("b1", "blue", "large", 75, -6))
    after = scene(w("x", "red", "large", 70, -4, z_mm=2.0, tilt_deg=8.0, above=("z",)),
                  w("y", "red", "small", 95, 20), w("z", "blue", "large", 75, -6, above=()))
    change = changed_at((0, 0, 9), (70, -4, 12))
    d = diff_rest_states(before, after, played_color=Color.RED, change=change)
    ids = {v.wink_id: v for v in d.after.winks}
    assert ids["r1"].center_mm == (70.0, -4.0) and ids["r1"].size.value == "small"
    assert ids["r2"].center_mm == (95.0, 20.0) and ids["b1"].center_mm == (75.0, -6.0)
    assert d.moved == ("r1",) and d.missing == () and d.appeared == ()
    assert d.played_id == "r1" and d.squops_made == (("r1", "b1"),)
    blind = diff_rest_states(before, after, played_color=Color.RED)
    assert blind.missing == ("r1",) and blind.appeared == ("x",)
