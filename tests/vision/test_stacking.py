"""Stacking order from the cut rim in 3-D (vision/stacking.py): same-colour squops, piles' slivers."""

import copy
import math

import cv2
import numpy as np
import pytest

from synth import SynthWink, default_camera, render, squop_tilt
from vision.stacking import pile_implied_pairs, plan_reach_mm
from vision.tiddlywinks import measure_tiddlywinks
from vision.winks import WinkCandidate, assign_poses


def _by_truth(found, truth):
    out = {}
    for t in truth:
        best = min(found, key=lambda w: math.dist(w.center_mm, t.center_mm))
        assert math.dist(best.center_mm, t.center_mm) < 3.0, t.wink_id
        out[t.wink_id] = best
    return out


@pytest.mark.parametrize("upper_size, lower_size, offset_mm", [("large", "small", 9.0), ("small", "small", 7.5),
                                                               ("large", "large", 10.0)])
def test_a_same_colour_squop_is_ordered_with_confidence_on_an_oblique_camera(upper_size, lower_size, offset_mm):
    # 40 degrees off vertical, the upper wink beyond the lower one: its raised near rim (wall towards the
    # camera) is seen millimetres from where a flat rim would be; only its posed rim shows the cut edge
    cam = default_camera(1920, 1080, tilt_deg=40.0)
    lower = SynthWink("lo", "red", lower_size, (250.0, 120.0))
    upper = squop_tilt(SynthWink("up", "red", upper_size, (252.0, 120.0 + offset_mm)), lower)
    img = render([lower, upper], cam, seed=31)
    m = measure_tiddlywinks(img, cam)
    got = _by_truth(m.winks, [lower, upper])
    up, lo = got["up"], got["lo"]
    assert up.above == (lo.wink_id,) and lo.above == ()
    assert up.order_confidence[lo.wink_id] >= 0.9  # the flat-rim test alone gave 0.79-0.92 here
    assert not any({a, b} == {up.wink_id, lo.wink_id} for a, b, _ in m.undecided_pairs)


def test_plan_reach_of_a_tilted_wink_is_foreshortened_along_its_azimuth_only():
    w = WinkCandidate(color="blue", size="large", center_mm=np.zeros(2), votes=1.0)
    assert plan_reach_mm(w, np.array([1.0, 0.0])) == pytest.approx(11.0)
    w.tilt_deg, w.tilt_azimuth_deg = 30.0, 90.0
    assert plan_reach_mm(w, np.array([0.0, 1.0])) == pytest.approx(11.0 * math.cos(math.radians(30.0)))
    assert plan_reach_mm(w, np.array([0.0, -1.0])) == pytest.approx(11.0 * math.cos(math.radians(30.0)))
    assert plan_reach_mm(w, np.array([1.0, 0.0])) == pytest.approx(11.0)


def _cand(wid, size, x, y, sigma=0.2):
    c = WinkCandidate(color="green", size=size, center_mm=np.array([x, y], float), votes=1.0, wink_id=wid)
    c.sigma_mm = sigma
    return c


def _pile(b_size, a_size, a_xy, a_sigma=0.2):
    """C (large, flat at the origin) under B (12 mm along x, order 0.95) under A (order 0.9), posed."""
    c = _cand("C", "large", 0.0, 0.0)
    b = _cand("B", b_size, 12.0, 0.0)
    a = _cand("A", a_size, *a_xy, sigma=a_sigma)
    b.above, b.order_confidence, c.order_confidence = ["C"], {"C": 0.95}, {"B": 0.95}
    a.above, a.order_confidence, b.order_confidence["A"] = ["B"], {"B": 0.9}, 0.9
    assign_poses([a, b, c])
    return a, b, c


def test_the_top_of_a_pile_lies_over_its_bottom_where_they_overlap_by_a_sliver():
    # C flat; B (small) on C; A (large) on B, reaching 1.5 mm over C's far rim: a sliver no image decides
    a, b, c = _pile("small", "large", (20.5, 0.0))
    assert pile_implied_pairs([a, b, c]) == 1
    assert "C" in a.above and a.order_confidence["C"] == pytest.approx(0.9)  # the chain's weakest link
    # a sliver thinner than the centres' uncertainty is not reported (undecided, it would cost the scene the
    # pile's decided orders)
    a2, b, c = _pile("small", "large", (20.5, 0.0), a_sigma=1.5)
    assert pile_implied_pairs([a2, b, c]) == 0
    assert a2.above == ["B"] and "C" not in a2.order_confidence and "A" not in c.order_confidence


def test_no_pair_is_implied_without_overlap_or_without_a_pile_between():
    a, b, c = _pile("small", "large", (22.5, 0.0))  # 0.5 mm clear of C's rim
    assert pile_implied_pairs([a, b, c]) == 0 and a.above == ["B"]
    # two flat winks whose measured discs overlap a little are touching, not a pile: nothing to imply
    p, q = _cand("P", "small", 0.0, 50.0), _cand("Q", "small", 15.5, 50.0)
    assert pile_implied_pairs([p, q]) == 0 and p.above == [] and q.above == []


def test_a_same_colour_order_the_posed_test_contradicts_is_left_undecided(monkeypatch):
    # the flat-rim test said A is on B (0.8); the posed rims say B is on A: both read the same faint edges,
    # so the referee says 'too close to call' rather than trusting either
    import vision.stacking as stacking
    from vision.winks import WinkDetectorParams
    a = _cand("A", "large", 0.0, 0.0)
    b = _cand("B", "small", 9.0, 0.0)
    a.above, a.order_confidence, b.order_confidence = ["B"], {"B": 0.8}, {"A": 0.8}
    monkeypatch.setattr(stacking, "cut_rim_evidence", lambda *args: (2.0, 30.0, 12, 4.0))
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: None)  # no shadow band to read
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: None)  # nor an edge profile
    monkeypatch.setattr(stacking, "rim_line_z", lambda *args: None)  # nor a line along a rim
    monkeypatch.setattr(stacking, "lens_shade_z", lambda *args: None)  # nor the lens's shade
    monkeypatch.setattr(stacking, "colour_boundary_z", lambda *args: None)  # nor (two colours) where they meet
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0)
    assert b.above == ["A"] and a.above == []
    assert b.order_confidence["A"] < 0.75 and a.order_confidence["B"] < 0.75
    # the shadow band beside B's rim says so too, by itself beyond two standard errors: two reads of other
    # offsets of the rims agree against the flat one, and the order is B on A
    a.above, b.above, a.order_confidence, b.order_confidence = ["B"], [], {"B": 0.8}, {"A": 0.8}
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: -3.0)
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0)
    assert b.above == ["A"] and b.order_confidence["A"] > 0.75
    # a pair of two colours keeps what the posed rims say, however the flat test leaned
    c, d = _cand("C", "large", 0.0, 40.0), _cand("D", "small", 9.0, 40.0)
    d.color = "red"
    c.above, c.order_confidence, d.order_confidence = ["D"], {"D": 0.7}, {"C": 0.7}
    stacking.review_order([c, d], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0)
    assert d.above == ["C"] and d.order_confidence["C"] > 0.9


def test_a_pile_decides_an_order_the_image_left_undecided_but_never_overrules_one_it_decided():
    # A (small) on B (large) on C (large); A and C overlap under B, where only B's rim shows: the image said
    # 'C over A' weakly (0.6), the pile says A over C with its weakest link's confidence
    a, b, c = _pile("large", "small", (9.0, 6.0))
    c.above.append("A")
    c.order_confidence["A"] = a.order_confidence["C"] = 0.6
    assert pile_implied_pairs([a, b, c]) == 1
    assert a.above == ["B", "C"] and c.above == [] and a.order_confidence["C"] == pytest.approx(0.9)
    # the same scene with the image sure of 'C over A' (0.8): that stands
    a.above, c.above = ["B"], ["A"]
    c.order_confidence["A"] = a.order_confidence["C"] = 0.8
    assert pile_implied_pairs([a, b, c]) == 0 and c.above == ["A"] and a.above == ["B"]



def test_a_same_colour_small_wink_mostly_under_a_large_one_is_found_from_the_outline_beyond_its_rim():
    # a crescent about 4 mm (2.5 px) wide at 1.6 mm per pixel: the coarse centre of the red region is pulled
    # towards it, so the crescent search took it for the large wink's blurred rim; the large wink's own rim
    # locates it, and the rest of the outline is the small wink's arc
    cam = default_camera(1280, 720, tilt_deg=20.0)
    lower = SynthWink("lo", "red", "small", (-300.0, -90.0))
    upper = squop_tilt(SynthWink("up", "red", "large", (-307.0, -89.0)), lower)
    img = render([lower, upper], cam, seed=5)
    m = measure_tiddlywinks(img, cam)
    assert len(m.winks) == 2
    got = _by_truth(m.winks, [lower, upper])
    assert got["lo"].size == "small" and got["up"].size == "large"
    assert math.dist(got["lo"].center_mm, lower.center_mm) < 1.0
    assert math.dist(got["up"].center_mm, upper.center_mm) < 1.5  # its tilted, raised rim: the posed fit's error


def test_a_flat_order_read_along_a_third_wink_of_another_colour_does_not_hold_back_the_posed_one(monkeypatch):
    # A and B (yellow) overlap; C (blue) lies along more than half of A's arc inside B, so the flat test's
    # median step there was C's outline (a strong colour step), not the pair's faint one: its 'A on B' is no
    # opinion, and the posed rims, read clear of C, decide
    import vision.stacking as stacking
    from vision.winks import WinkDetectorParams
    a, b, c = _cand("A", "small", 0.0, 0.0), _cand("B", "small", 6.0, 0.0), _cand("C", "small", 5.0, 9.0)
    for w in (a, b):
        w.color = "yellow"
    c.color = "blue"
    a.above, a.order_confidence, b.order_confidence = ["B"], {"B": 0.9}, {"A": 0.9}
    arcs = {}

    def evidence(winks, p, q, image, camera, noise_level, reads=None):
        arcs["A"] = stacking.clear_of_third(p, stacking.rim_angles_inside(p, q), winks, ("A", "B"))
        return 2.0, 30.0, 12, 4.0
    monkeypatch.setattr(stacking, "cut_rim_evidence", evidence)
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: None)  # no shadow band to read
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: None)  # nor an edge profile
    monkeypatch.setattr(stacking, "rim_line_z", lambda *args: None)  # nor a line along a rim
    monkeypatch.setattr(stacking, "lens_shade_z", lambda *args: None)  # nor the lens's shade
    stacking.review_order([a, b, c], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0)
    assert b.above == ["A"] and a.above == []
    assert b.order_confidence["A"] > 0.9
    # the rim samples kept lie clear of C's rim by the width the step is read over
    kept = stacking.top_rim_points(a, arcs["A"], a.radius_mm)[:, :2]
    assert len(kept) and np.all(np.linalg.norm(kept - c.center_mm, axis=1) > c.radius_mm + 2.5)
    # a third wink of the pair's own colour there is as faint as the pair: the flat opinion stands, the order
    # stays undecided
    c.color = "yellow"
    a.above, b.above, a.order_confidence, b.order_confidence = ["B"], [], {"B": 0.9}, {"A": 0.9}
    stacking.review_order([a, b, c], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0)
    assert b.order_confidence["A"] < 0.75


def _simulated(tmp_path, seed: int, index: int, size_wh_px: tuple[int, int], want: dict[str, float]):
    """The bench's simulated photograph ``index`` of ``seed`` at ``size_wh_px``, measured: (its squops, the one
    measured wink of each truth id of ``want`` within that id's gate in mm, the measurement, the truth)."""
    import json

    import cv2

    from calibration.camera import CameraModel
    from simulation.generate import SCENE_KINDS, make_rig, random_scene, render_tiddlywinks_item
    rng = np.random.default_rng([seed, index])
    kind = SCENE_KINDS[index % len(SCENE_KINDS)]
    scene = random_scene(rng, kind)
    name = f"tw_{seed}_{index:03d}"
    rig = make_rig(name, seed * 1000 + index, size_wh_px)
    path = render_tiddlywinks_item(tmp_path, name, scene, rig, rng, kind=kind)
    doc = json.loads(path.with_suffix(".json").read_text())
    truth = {p["id"]: p for p in doc["pieces"]}
    m = measure_tiddlywinks(cv2.imread(str(path)), CameraModel.from_dict(doc["calibration"]["camera"]))
    got = {}
    for tid, gate_mm in want.items():
        near = [w for w in m.winks if w.color == truth[tid]["color"]
                and math.dist(w.center_mm, truth[tid]["center_mm"]) < gate_mm]
        assert len(near) == 1, tid
        got[tid] = near[0]
    return doc["squops"], got, m, truth


def test_a_same_colour_squop_whose_flat_lower_wink_mirrors_the_lamp_is_found_and_ordered(tmp_path):
    # a rendered scene (the simulator's own, seed 7071 #1): a tilted yellow small wink on a flat one at the
    # mat's edge, 5.8 mm apart. The flat one mirrors the lamp and looks pale beside it, off the tilted one's
    # blend line with the felt, and the coarse centre lay between the two: one wink was found, midway
    squops, got, _, _ = _simulated(tmp_path, 7071, 1, (1920, 1080), {"yellow-S2": 1.5, "yellow-S3": 1.5})
    assert ["yellow-S2", "yellow-S3"] in squops
    up, lo = got["yellow-S2"], got["yellow-S3"]
    assert up.size == lo.size == "small"
    assert up.above == (lo.wink_id,) and up.order_confidence[lo.wink_id] >= 0.75


@pytest.mark.parametrize("seed, index, size_wh_px, pile, gate_mm", [
    # a rendered scene (the simulator's own, seed 7070 #1, 4K): a blue small wink tilted ~59 degrees on a
    # yellow large one, a green small wink over both. What shows of the blue wink lies inside the yellow's
    # disc (it is over the yellow), so a search that set aside every sample inside a found wink saw nothing
    # of it, and the pile's three orders were missed (its centre: 2.5 mm, a steeply tilted disc's ellipse)
    (7070, 1, (3840, 2160), ("green-S1", "blue-S2", "yellow-L1"), 2.5),
    # the development set's render 102 #7 (1.2 mm per pixel): a green large wink on a red small one on a blue
    # small one. What shows of the red is a crescent 3 to 4 mm wide inside the blue's disc, which the blur mixes
    # with the blue into hues 20 to 50 degrees off red's (nearer red than blue): read as the blue's own shading,
    # the red was not found and two squops were lost
    (102, 7, (1920, 1080), ("green-L2", "red-S1", "blue-S2"), 3.0),
])
def test_the_middle_wink_of_a_pile_is_found_where_it_shows_inside_the_wink_under_it(tmp_path, seed, index,
                                                                                     size_wh_px, pile, gate_mm):
    top_id, mid_id, bottom_id = pile
    squops, got, m, truth = _simulated(tmp_path, seed, index, size_wh_px, {i: gate_mm for i in pile})
    assert [top_id, mid_id] in squops and [mid_id, bottom_id] in squops
    top, mid, bottom = got[top_id], got[mid_id], got[bottom_id]
    assert mid.size == "small"
    _assert_reported_over(top, mid)
    _assert_reported_over(mid, bottom)
    # a wink found only where it shows inside another is no phantom: nothing else was added near the pile
    assert sum(math.dist(w.center_mm, truth[mid_id]["center_mm"]) < 25.0 for w in m.winks) == 3


def _assert_reported_over(up, lo, order_min: float = 0.75):
    """``up`` is reported over ``lo`` (sure enough to be claimed), and not the other way round."""
    assert lo.wink_id in up.above and up.order_confidence[lo.wink_id] >= order_min
    assert up.wink_id not in lo.above


def test_an_order_is_no_surer_than_the_overlap_it_rests_on():
    # two small discs measured 1 mm into each other: with centres known to 0.2 mm that is an overlap (the
    # order stands); known to 1 mm, they may only touch, and the order is undecided
    from vision.stacking import cap_by_overlap
    a, b = _cand("A", "small", 0.0, 0.0), _cand("B", "small", 15.0, 0.0)
    a.above, a.order_confidence, b.order_confidence = ["B"], {"B": 0.95}, {"A": 0.95}
    assert cap_by_overlap([a, b], lambda w: False) == 0 and a.order_confidence["B"] == pytest.approx(0.95)
    a.sigma_mm = b.sigma_mm = 1.0
    assert cap_by_overlap([a, b], lambda w: False) == 1
    assert a.order_confidence["B"] == b.order_confidence["A"] < 0.75 and a.above == ["B"]
    # a large disc 2 mm into a small one: an overlap if the large size is confirmed; if not, it may be a small
    # wink whose rim is 3 mm nearer its centre, 1 mm clear of the other
    c, d = _cand("C", "small", 0.0, 30.0), _cand("D", "large", 17.0, 30.0)
    c.above, c.order_confidence, d.order_confidence = ["D"], {"D": 0.9}, {"C": 0.9}
    assert cap_by_overlap([c, d], lambda w: False) == 0
    assert cap_by_overlap([c, d], lambda w: w is d) == 1 and c.order_confidence["D"] < 0.75
    # a deep overlap is an overlap whatever the size: a crescent's lower wink keeps its order
    e, f = _cand("E", "large", 0.0, 60.0), _cand("F", "small", 8.0, 60.0)
    e.above, e.order_confidence, f.order_confidence = ["F"], {"F": 0.9}, {"E": 0.9}
    assert cap_by_overlap([e, f], lambda w: True) == 0 and e.order_confidence["F"] == pytest.approx(0.9)


def test_two_far_winks_read_as_overlapping_through_an_unconfirmed_size_are_not_called_a_squop(tmp_path):
    # a rendered scene (the simulator's own, seed 103 #6, about 2.2 mm per pixel at the mat's far corner): two
    # yellow small winks 1.7 mm apart; one was read as large, 3.4 mm off, so the two discs overlapped by 3.8
    # mm and an order was claimed (0.91) where truth has no squop. Both sizes are unconfirmed (3 mm).
    _, got, m, _ = _simulated(tmp_path, 103, 6, (1920, 1080), {"yellow-S1": 5.0, "yellow-S3": 5.0})
    a, b = got["yellow-S1"], got["yellow-S3"]
    for up, lo in ((a, b), (b, a)):
        assert lo.wink_id not in up.above or up.order_confidence[lo.wink_id] < 0.75


def test_a_one_colour_squop_whose_upper_small_wink_may_be_read_large_is_never_ordered_the_wrong_way(tmp_path):
    # a rendered scene (the simulator's own, seed 3273 #1): a green small wink on a green large one. Its rim
    # shows against the felt along half its outline only (the rest lies over its own colour); it was read as
    # large, its centre 2.8 mm off: the cut rim was looked for where it is not, and the lower wink was said to
    # be on top (0.986). Refitted as small to the same arc it fits better, and the cues read the other order
    squops, got, _, _ = _simulated(tmp_path, 3273, 1, (1920, 1080), {"green-S2": 5.0, "green-L2": 3.0})
    assert ["green-S2", "green-L2"] in squops
    up, lo = got["green-S2"], got["green-L2"]
    assert up.wink_id not in lo.above or lo.order_confidence[up.wink_id] < 0.75


def test_the_blurred_echo_of_one_wink_is_no_second_wink_of_its_colour_under_it(tmp_path):
    # a rendered scene (the simulator's own, seed 6162 #0, about 2.7 mm per pixel there): a lone blue large
    # wink, its colour blurred about 1.5 image pixels beyond its rim and its label centre read 2 mm off. The
    # colour beyond the disc at that centre was taken for a small blue wink's crescent, and a squop was claimed
    # (0.98) over a wink that is not there; the found wink, placed within a pixel, explains all of that colour
    squops, got, m, truth = _simulated(tmp_path, 6162, 0, (1920, 1080), {"blue-L2": 3.0})
    big = got["blue-L2"]
    assert big.size == "large" and math.dist(big.center_mm, truth["blue-L2"]["center_mm"]) < 2.0
    assert not any(pair for pair in squops if "blue-L2" in pair)
    assert [w.wink_id for w in m.winks if math.dist(w.center_mm, big.center_mm) < 25.0] == [big.wink_id]
    assert big.above == () and not big.order_confidence


def test_the_middle_wink_of_a_pile_on_a_wink_of_its_own_colour_is_found_from_its_crescent(tmp_path):
    # a rendered scene (the simulator's own, seed 6161 #1, 4K): a green small wink tilted ~15 degrees on another
    # green small one (6.3 mm apart), a yellow large and a blue small wink over it. What shows of the middle
    # wink beyond the lower green's rim lies beside the yellow; a crescent disc overlapping a found wink of its
    # colour was taken for that wink's own colour spilling over, and the disc's edge fit slid onto the lower
    # green's outline: the pile's three orders with it were missed
    squops, got, m, truth = _simulated(tmp_path, 6161, 1, (3840, 2160),
                                       {"green-S1": 1.5, "green-S2": 1.5, "yellow-L1": 1.5})
    assert ["green-S2", "green-S1"] in squops and ["yellow-L1", "green-S2"] in squops
    lower, middle, top = got["green-S1"], got["green-S2"], got["yellow-L1"]
    assert middle is not lower
    assert lower.wink_id in middle.above and middle.order_confidence[lower.wink_id] >= 0.75
    assert middle.wink_id in top.above and top.order_confidence[middle.wink_id] >= 0.75
    # no phantom: the two greens are the only green winks near the pile
    assert sum(w.color == "green" and math.dist(w.center_mm, truth["green-S2"]["center_mm"]) < 25.0
               for w in m.winks) == 2


def _render_pile_4648(tmp_path):
    """seed 4648's squop render (as ``tableref bench --seed 4646`` renders it): a four-high pile, a large
    yellow tilted 39 degrees on a small blue tilted 57 on two greens."""
    import json

    from calibration.camera import CameraModel
    from simulation.generate import render_tiddlywinks_seeded
    path = render_tiddlywinks_seeded(tmp_path, 4648, 1, size_wh_px=(1920, 1080))
    import cv2
    doc = json.loads(path.with_suffix(".json").read_text())
    return cv2.imread(str(path)), CameraModel.from_dict(doc["calibration"]["camera"]), doc


def test_a_tilted_wink_in_a_pile_is_one_wink_and_no_order_under_it_is_asserted_the_wrong_way(tmp_path):
    # the yellow's outline is a 22 x 17 mm ellipse: read as circles it was two yellows, and the flat discs'
    # lens put blue and green over it (0.96 and 0.81, both wrong)
    img, cam, doc = _render_pile_4648(tmp_path)
    truth = {p["id"]: p for p in doc["pieces"]}
    yellow = truth["yellow-L1"]
    m = measure_tiddlywinks(img, cam)
    near = [w for w in m.winks if w.color == "yellow" and math.dist(w.center_mm, yellow["center_mm"]) < 15.0]
    assert len(near) == 1
    y = near[0]
    assert y.size == "large" and math.dist(y.center_mm, yellow["center_mm"]) < 1.0
    pile = [w for w in m.winks if math.dist(w.center_mm, yellow["center_mm"]) < 25.0 and w is not y]
    assert pile
    order_min = 0.75
    for w in pile:
        # every asserted order between the yellow and the winks under it says the yellow is on top
        if y.wink_id in w.above:
            assert w.order_confidence[y.wink_id] < order_min, w.wink_id


def test_a_faint_step_along_an_arc_is_read_from_its_one_colour_direction_and_noise_is_not():
    # one edge between two surfaces steps the same colour way at every angle: a step of 1.5 of the per-sample
    # noise over 12 angles stands out of the same arc without it (whose read, the norm of three channels' medians
    # at the best of five offsets, is about two standard errors: both hypotheses' arcs carry that alike)
    from vision.stacking import arc_step
    rng = np.random.default_rng(7)
    noise_sd = 4.0
    step = np.array([1.5 * noise_sd, 0.0, 0.0])
    flat_z, edge_z = [], []
    for _ in range(200):
        v = rng.normal(0.0, noise_sd, (5, 12, 3))
        e, se = arc_step(v, noise_sd)
        flat_z.append(e / se)
        v[2] += step
        e, se = arc_step(v, noise_sd)
        edge_z.append(e / se)
    assert np.median(flat_z) < 3.0 and np.percentile(edge_z, 10) > np.percentile(flat_z, 75)
    assert np.median(edge_z) > np.median(flat_z) + 1.5


def test_weak_cut_rim_evidence_leaves_a_one_colour_order_undecided(monkeypatch):
    # the posed rims lean 'A on B' by less than two standard errors of the evidence: not claimed
    import vision.stacking as stacking
    from vision.winks import WinkDetectorParams
    a, b = _cand("A", "large", 0.0, 0.0), _cand("B", "small", 9.0, 0.0)
    a.above, a.order_confidence, b.order_confidence = ["B"], {"B": 0.6}, {"A": 0.6}
    monkeypatch.setattr(stacking, "cut_rim_evidence", lambda *args: (1.9, -1.9, 10, 2.5))
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: None)  # no shadow band to read
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: None)  # nor an edge profile
    monkeypatch.setattr(stacking, "rim_line_z", lambda *args: None)  # nor a line along a rim
    monkeypatch.setattr(stacking, "lens_shade_z", lambda *args: None)  # nor the lens's shade
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0)
    assert a.above == ["B"] and 0.5 <= a.order_confidence["B"] < 0.75
    # the same lean beyond three standard errors is
    a.above, a.order_confidence, b.order_confidence = ["B"], {"B": 0.6}, {"A": 0.6}
    monkeypatch.setattr(stacking, "cut_rim_evidence", lambda *args: (4.0, -4.0, 10, 2.5))
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0)
    assert a.above == ["B"] and a.order_confidence["B"] > 0.75


def test_a_one_colour_pair_with_no_visible_cut_is_not_ordered_the_wrong_way(tmp_path):
    # a rendered scene (the simulator's own, seed 6161 #1, 4K, 0.6 mm per pixel): a red small wink tilted 11
    # degrees on a red large one; the cut in the large wink's rim barely shows (a step of about one noise level),
    # and the posed rims' edge reads, taken per sample, said 'large on small' (0.88)
    squops, got, _, _ = _simulated(tmp_path, 6161, 1, (3840, 2160), {"red-S2": 1.5, "red-L1": 1.5})
    assert ["red-S2", "red-L1"] in squops
    up, lo = got["red-S2"], got["red-L1"]
    assert not (up.wink_id in lo.above and lo.order_confidence[up.wink_id] >= 0.75)


def test_a_partly_covered_wink_read_at_the_wrong_size_is_not_put_over_the_wink_on_it(tmp_path):
    # a rendered scene (the simulator's own, seed 3839 #1, 1.3 mm per pixel): a green small wink tilted 31
    # degrees on a red large one, read as small where it shows; along three rim samples the red's misplaced rim
    # met the green's, and the posed test said 'red on green' (0.91)
    squops, got, _, _ = _simulated(tmp_path, 3839, 1, (1920, 1080), {"green-S2": 2.0, "red-L1": 4.0})
    assert ["green-S2", "red-L1"] in squops
    up, lo = got["green-S2"], got["red-L1"]
    assert not (up.wink_id in lo.above and lo.order_confidence[up.wink_id] >= 0.75)


def test_a_tilted_wink_on_a_wink_of_another_colour_is_read_tilted_and_on_top(tmp_path):
    # a rendered scene (the simulator's own, seed 7272 #1, 4K): a blue small wink tilted 41 degrees on a yellow
    # large one (itself on a yellow small and a green). No blue shows beyond a flat disc's rim, so its outline
    # was never fitted: read as a flat large disc 4 mm off, its footprint reached over the yellow, whose colour
    # the lens then showed, and the yellows were put over it (0.84 and 0.99, both wrong)
    squops, got, m, truth = _simulated(tmp_path, 7272, 1, (3840, 2160), {"blue-S2": 3.0, "yellow-L1": 2.0})
    assert ["blue-S2", "yellow-L1"] in squops
    blue, yellow = got["blue-S2"], got["yellow-L1"]
    assert blue.size == "small" and math.dist(blue.center_mm, truth["blue-S2"]["center_mm"]) < 1.0
    assert yellow.wink_id in blue.above and blue.order_confidence[yellow.wink_id] >= 0.75
    for w in m.winks:
        # no wink of the pile asserted over the blue one
        assert blue.wink_id not in w.above or w.order_confidence[blue.wink_id] < 0.75


def _shaded_pair(band_beside: str, step: float = 0.0, band_step: float = -25.0):
    """A photo (from ``synth.default_camera``) of green U (small, tilted, posed) on green L (large, flat), their
    tops of one shade (U's ``step`` brighter), with a 1 mm band (``band_step`` brighter) beside ``band_beside``'s rim
    on the other wink's top (U: the shadow U casts on L; L: a band where no shadow can be, under U's top), or
    inside U's rim all round (U-bevel)."""
    from vision.tilted_outline import inside_footprint
    from vision.winks import top_height_at
    cam = default_camera()
    u, lo = _cand("U", "small", 200.0, 100.0), _cand("L", "large", 212.0, 100.0)
    u.above = ["L"]
    # the photo's pose is fixed (the one the order graph gave before stop 27's resting tilt, 0.26 deg shallower):
    # these reads turn on a few rim pixels, so the scene must not move with the pose formula (on that code,
    # moving U by 0.02 mm moved the no-shadow read from 0.6 to 2.6 and the bevel's from 2.1 to 1.5)
    u.z_mm, u.tilt_deg, u.tilt_azimuth_deg = 2.093678649620611, 9.462322208025617, 0.0
    w, h = cam.image_size_wh_px
    cc, rr = np.meshgrid(np.arange(w, dtype=float), np.arange(h, dtype=float))
    box = (np.abs(cc - cam.project_mm(np.array([[206.0, 100.0, 0.0]]))[0, 0]) < 40) & \
        (np.abs(rr - cam.project_mm(np.array([[206.0, 100.0, 0.0]]))[0, 1]) < 40)
    px = np.column_stack([cc[box], rr[box]])
    img = np.full((h, w, 3), 60, np.float32)
    lum = np.full(len(px), 60.0)
    z_hit = np.full(len(px), 1.5)
    for _ in range(2):  # where each pixel's ray meets the tops (two passes settle the height)
        p = cam.image_to_table_mm(px, z_hit)
        in_u = inside_footprint(p, u.center_mm, u.radius_mm, u.tilt_deg, u.tilt_azimuth_deg)
        in_l = np.linalg.norm(p - lo.center_mm, axis=1) < lo.radius_mm
        z_hit = np.where(in_u, [top_height_at(u, q) for q in p], 1.5)
    lum[in_l] = 120.0
    lum[in_u] = 120.0 + step
    if band_beside == "U":
        band = in_l & ~in_u & inside_footprint(p, u.center_mm, u.radius_mm + 1.0, u.tilt_deg, u.tilt_azimuth_deg)
    elif band_beside == "U-bevel":  # U's bevel, its top's outer 0.75 mm, all round
        band = in_u & ~inside_footprint(p, u.center_mm, u.radius_mm - 0.75, u.tilt_deg, u.tilt_azimuth_deg)
    elif band_beside == "L":
        band = in_u & (np.linalg.norm(p - lo.center_mm, axis=1) > lo.radius_mm) & \
            (np.linalg.norm(p - lo.center_mm, axis=1) < lo.radius_mm + 1.0)
    else:
        band = np.zeros(len(p), bool)
    lum[band] += band_step
    img[box] = lum[:, None]
    rng = np.random.default_rng(4)
    img = np.clip(img + rng.normal(0.0, 3.0, img.shape), 0, 255).astype(np.uint8)
    return cv2.GaussianBlur(img, (0, 0), 0.8), cam, u, lo


def test_the_shadow_band_beside_the_cut_rim_says_which_wink_of_one_colour_is_on_top():
    from vision.stacking import shadow_z
    img, cam, u, lo = _shaded_pair("U")
    assert shadow_z([u, lo], u, lo, img, cam) > 3.0
    assert shadow_z([u, lo], lo, u, img, cam) < -3.0  # the same read, the pair named the other way
    # a dark band beside the lower wink's rim, under the upper's top, is no shadow of the upper: it does not say
    # U is on top
    img, cam, u, lo = _shaded_pair("L")
    assert shadow_z([u, lo], u, lo, img, cam) < 1.0
    # two tops shaded differently (a step across the cut rim) and no band: no shadow either way
    img, cam, u, lo = _shaded_pair("none", step=20.0)
    assert abs(shadow_z([u, lo], u, lo, img, cam)) < 2.0


def test_a_mottled_top_without_a_shadow_is_not_read_as_one():
    # both tops mottled (a smooth shading pattern some pixels across, as plastic under a lamp shows it): the band
    # read along the rim strays with it, though each sample's spread over the square root of their number says
    # it should not; measured where there is no shadow, the stray keeps the read within two standard errors
    from vision.stacking import shadow_z
    crossed = 0
    for seed in range(6):
        img, cam, u, lo = _shaded_pair("none")
        rng = np.random.default_rng(seed)
        field = cv2.GaussianBlur(rng.normal(0.0, 1.0, img.shape[:2]).astype(np.float32), (0, 0), 3.0)
        field *= 12.0 / field.std()
        tops = img[..., 0] > 90  # the felt is 60, the tops 120
        out = img.astype(np.float32)
        out[tops] += field[tops, None]
        crossed += abs(shadow_z([u, lo], u, lo, np.clip(out, 0, 255).astype(np.uint8), cam)) >= 2.0
    assert crossed <= 1  # the error from each sample's spread alone: 4 of the 6


def test_the_edge_profile_across_the_upper_rim_says_which_wink_of_one_colour_is_on_top_whatever_its_polarity(
        monkeypatch):
    # the upper wink's bevel shows along its whole circle, over the lower wink too, dark or lit; the lower's rim
    # under the upper's top has that top on both sides
    from vision.stacking import edge_profile_z
    for band_step in (-25.0, 25.0):
        img, cam, u, lo = _shaded_pair("U-bevel", band_step=band_step)
        assert edge_profile_z([u, lo], u, lo, img, cam) > 2.0
        assert edge_profile_z([u, lo], lo, u, img, cam) < -2.0
    img, cam, u, lo = _shaded_pair("none")
    assert abs(edge_profile_z([u, lo], u, lo, img, cam)) < 2.0
    # seen at 2 mm per pixel the read's inner and outer samples share a pixel: no reading
    monkeypatch.setattr(type(cam), "mm_per_px_at", lambda self, xy: 2.0)
    assert edge_profile_z([u, lo], u, lo, img, cam) is None


def test_rim_and_shadow_cues_count_as_the_surer_unless_they_contradict():
    from vision.stacking import combined_z
    assert combined_z(2.5, 0.3) == 2.5 and combined_z(0.4, -2.2) == -2.2
    assert combined_z(-0.5, 0.8) == 0.8  # neither beyond a standard error: no contradiction
    # each beyond a standard error the other way: weighed together (independent errors)
    assert combined_z(5.0, -1.5) == pytest.approx(3.5 / math.sqrt(2.0))


def test_a_wink_under_one_of_another_colour_is_not_read_as_a_tilted_disc_reaching_over_it(tmp_path):
    # a rendered scene (the simulator's own, seed 4646 #1, 4K): a green small wink, flat, under a yellow large one.
    # Its outline against the felt also fits a large disc tilted over the yellow; but a wink on top shows its
    # colour over all its footprint, and that disc's is mostly yellow: the green stays a flat small wink under it
    squops, got, m, truth = _simulated(tmp_path, 4646, 1, (3840, 2160), {"green-S4": 1.5, "yellow-L1": 1.5})
    assert ["yellow-L1", "green-S4"] in squops
    green, yellow = got["green-S4"], got["yellow-L1"]
    assert green.size == "small"
    assert green.wink_id in yellow.above and yellow.order_confidence[green.wink_id] >= 0.75


def test_an_arcs_error_is_measured_where_there_is_no_edge_and_grows_with_what_neighbours_share():
    # samples that stray independently: an arc's median strays as the per-sample formula says; samples that
    # share a slow shading (a gradient, the blur, JPEG's blocks) stray together, and the arc's measured error
    # is larger than that formula's by the sharing
    from vision.stacking import _MEDIAN_SE_FACTOR, arc_step, no_edge_arc_se
    rng = np.random.default_rng(11)
    sd, n = 3.0, 8
    keep = np.ones(48, bool)
    formula = _MEDIAN_SE_FACTOR * sd / math.sqrt(n)
    alone = [no_edge_arc_se(rng.normal(0.0, sd, (5, 48, 3)), keep, n) for _ in range(20)]
    assert 0.7 * formula < np.median(alone) < 1.3 * formula
    kernel = np.ones(8) / math.sqrt(8)  # each sample shares its shading with its 7 neighbours, same spread
    shared = []
    for _ in range(20):
        raw = rng.normal(0.0, sd, (5, 48 + 7, 3))
        shared.append(no_edge_arc_se(np.apply_along_axis(np.convolve, 1, raw, kernel, "valid"), keep, n))
    assert np.median(shared) > 1.6 * formula
    # an arc no run of clear samples is as long as has no measured error; a measured one bounds the read's
    assert no_edge_arc_se(np.zeros((5, 48, 3)), np.arange(48) % 6 != 0, n) is None
    _, se = arc_step(rng.normal(0.0, sd, (5, n, 3)), sd, null_arc_se=2.0 * formula)
    assert se == 2.0 * formula


def test_a_one_colour_lens_whose_edge_reads_are_within_their_measured_stray_is_left_undecided(tmp_path):
    # a rendered scene (the simulator's own, seed 6062 #1, 1.1 mm per pixel, defocused): a red small wink tilted
    # 7.5 degrees on a red large one, a lens 4.5 mm deep. Along the large wink's hidden rim the tops' shading
    # stepped as much as an edge, which the per-sample error (samples taken as independent) called two standard
    # errors: 'large on small' (0.80), the wrong way
    squops, got, _, _ = _simulated(tmp_path, 6062, 1, (1920, 1080), {"red-S4": 1.5, "red-L2": 1.5})
    assert ["red-S4", "red-L2"] in squops
    up, lo = got["red-S4"], got["red-L2"]
    assert not (up.wink_id in lo.above and lo.order_confidence[up.wink_id] >= 0.75)


def test_the_top_of_a_pile_first_read_small_is_ordered_over_the_winks_it_reaches_once_fitted(tmp_path):
    # a rendered scene (the simulator's own, seed 8181 #1, 4K): a green large wink tilted ~19 degrees over a
    # blue large one and two small ones under that. Its outline cut by the pile, the coarse read made it
    # small, 3 mm short of the blue; the fit found it large, but the order had been judged on the coarse discs
    # only and no pair was ever judged again: the three squops it makes were missed (no order reported)
    squops, got, _, _ = _simulated(tmp_path, 8181, 1, (3840, 2160),
                                   {"green-L1": 1.5, "blue-L1": 1.5, "red-S4": 1.5})
    assert ["green-L1", "blue-L1"] in squops and ["green-L1", "red-S4"] in squops
    assert got["green-L1"].size == "large"
    for lower in ("blue-L1", "red-S4"):
        _assert_reported_over(got["green-L1"], got[lower])


def _label_scene(winks_bottom_up, grid):
    """A label image of flat discs drawn bottom-up (each hides what is under it), as the colour scene
    reads one."""
    from vision.winks import COLOR_NAMES
    labels = np.zeros((grid.height_px, grid.width_px), np.uint8)
    xy = grid.table_from_ortho(np.argwhere(np.ones(labels.shape, bool))[:, ::-1].astype(float))
    for w in winks_bottom_up:
        inside = np.linalg.norm(xy - w.center_mm, axis=1) < w.radius_mm
        labels.reshape(-1)[inside] = COLOR_NAMES.index(w.color) + 1
    return labels


def test_a_pair_that_overlaps_only_as_fitted_is_judged_from_the_colour_its_lens_shows():
    # two discs of other colours 15.5 mm apart: as first read (both small) they barely touch; fitted, one is
    # large and they overlap by 3.5 mm. Inside the lens the label image shows A's colour: A is over B
    from vision.ortho import OrthoGrid
    from vision.stacking import drop_open_pairs
    from vision.winks import WinkDetectorParams, order_new_overlaps
    grid = OrthoGrid.covering(-40.0, 40.0, -40.0, 40.0, 0.5, 0.0)
    a = WinkCandidate(color="green", size="large", center_mm=np.array([0.0, 0.0]), votes=1.0, wink_id="A")
    b = WinkCandidate(color="blue", size="small", center_mm=np.array([15.5, 0.0]), votes=1.0, wink_id="B")
    labels = _label_scene([b, a], grid)
    cam = default_camera(1920, 1080)
    img = np.zeros((1080, 1920, 3), np.uint8)
    assert order_new_overlaps([a, b], labels, grid, img, cam, WinkDetectorParams(), 2.0) == [(a, b)]
    assert a.above == ["B"] and a.order_confidence["B"] >= 0.75 and b.order_confidence["A"] >= 0.75
    # judged once: a pair with an order is left to the reviews that follow
    assert order_new_overlaps([a, b], labels, grid, img, cam, WinkDetectorParams(), 2.0) == []
    # a new pair the reads leave open is taken out again (the coarse read gave it none), a sure one stays
    c = WinkCandidate(color="red", size="small", center_mm=np.array([-15.5, 0.0]), votes=1.0, wink_id="C")
    new = order_new_overlaps([a, b, c], np.zeros_like(labels), grid, img, cam, WinkDetectorParams(), 2.0)
    assert new == [(a, c)] and a.order_confidence["C"] == pytest.approx(0.5)
    assert drop_open_pairs([(a, b), (a, c)]) == 1
    assert a.above == ["B"] and "C" not in a.order_confidence and not c.order_confidence and not c.above


def test_a_third_wink_of_one_colour_of_the_pair_covering_their_lens_does_not_vote_for_it():
    # yellow A over blue B; a blue small wink C on top of both covers two thirds of their lens. Blue seen
    # there is C's, not B's: counted for B it put B over A (the wrong way, 0.64); A's yellow shows where C is
    # not
    from vision.ortho import OrthoGrid
    from vision.winks import judge_pair
    grid = OrthoGrid.covering(-40.0, 40.0, -40.0, 40.0, 0.5, 0.0)
    a = WinkCandidate(color="yellow", size="large", center_mm=np.array([0.0, 0.0]), votes=1.0, wink_id="A")
    b = WinkCandidate(color="blue", size="large", center_mm=np.array([14.0, 0.0]), votes=1.0, wink_id="B")
    c = WinkCandidate(color="blue", size="small", center_mm=np.array([7.0, 6.0]), votes=1.0, wink_id="C")
    labels = _label_scene([b, a, c], grid)
    img, cam = np.zeros((1080, 1920, 3), np.uint8), default_camera(1920, 1080)
    assert judge_pair(a, b, labels, grid, img, cam, 2.0, [a, b, c]) >= 0.75
    # a third wink under both hides nothing: the lens shows the pair's upper wink wherever it is
    c.center_mm = np.array([7.0, -16.0])
    assert judge_pair(a, b, _label_scene([c, b, a], grid), grid, img, cam, 2.0, [a, b, c]) >= 0.75


def test_an_undecided_order_poses_no_wink_of_the_pile():
    # C flat; B on C by a coin's toss (0.5, undecided); A on B, decided (0.9). B's tilt on C would be a guess:
    # B stays flat, and A rests on it as on a B with no order to C at all
    a, b, c = _cand("A", "large", 24.0, 0.0), _cand("B", "small", 12.0, 0.0), _cand("C", "large", 0.0, 0.0)
    b.above, b.order_confidence, c.order_confidence = ["C"], {"C": 0.5}, {"B": 0.5}
    a.above, a.order_confidence, b.order_confidence["A"] = ["B"], {"B": 0.9}, 0.9
    assign_poses([a, b, c], 0.75)
    assert b.tilt_deg == 0.0 and c.tilt_deg == 0.0 and a.tilt_deg > 0.0
    pose_a = (a.z_mm, a.tilt_deg, a.tilt_azimuth_deg)
    b.above = []
    assign_poses([a, b, c], 0.75)
    assert (a.z_mm, a.tilt_deg, a.tilt_azimuth_deg) == pytest.approx(pose_a)
    # decided, the same order tilts B over C, and A rests on the tilted B
    b.above, b.order_confidence["C"], c.order_confidence["B"] = ["C"], 0.9, 0.9
    assign_poses([a, b, c], 0.75)
    assert b.tilt_deg > 5.0 and b.z_mm > c.z_mm + 0.5
    assert (a.z_mm, a.tilt_deg) != pytest.approx(pose_a[:2])


def test_a_reviewed_pair_is_posed_without_the_coin_tosses_elsewhere_in_its_pile():
    # the review poses A on B (the hypothesis, whatever its first read); B on C is a coin's toss (0.5): B stays
    # flat in the hypothesis's pose, and A rests on the flat B; B on C as an opinion (0.7) tilts B
    from vision.stacking import _posed_pair
    a, b, c = _cand("A", "large", 24.0, 0.0), _cand("B", "small", 12.0, 0.0), _cand("C", "large", 0.0, 0.0)
    b.above, b.order_confidence, c.order_confidence = ["C"], {"C": 0.5, "A": 0.5}, {"B": 0.5}
    a.order_confidence = {"B": 0.5}
    up, lo = _posed_pair([a, b, c], a, b)
    assert lo.tilt_deg == 0.0 and up.tilt_deg > 0.0
    assert b.tilt_deg == 0.0 and a.above == [] and a.order_confidence == {"B": 0.5}  # the originals untouched
    b.order_confidence["C"] = c.order_confidence["B"] = 0.7
    up2, lo2 = _posed_pair([a, b, c], a, b)
    assert lo2.tilt_deg > 5.0 and up2.z_mm > up.z_mm


def _with_lone_top(step: float, seed: int):
    """``_shaded_pair`` with U's top ``step`` brighter than L's (a tilt towards or away from the lamp), no band, and
    a third green wink M lying clear (a flat top to measure the no-lens stray on): (the photo as floats, its
    camera, U, L, M, M's pixels, a smooth unit field to mottle tops with)."""
    img, cam, u, lo = _shaded_pair("none", step=step)
    lone = _cand("M", "large", 206.0, 135.0)
    w, h = cam.image_size_wh_px
    cc, rr = np.meshgrid(np.arange(w, dtype=float), np.arange(h, dtype=float))
    p = cam.image_to_table_mm(np.column_stack([cc.ravel(), rr.ravel()]), np.full(w * h, 1.5))
    in_m = (np.linalg.norm(p - lone.center_mm, axis=1) < lone.radius_mm).reshape(h, w)
    out = img.astype(np.float32)
    rng = np.random.default_rng(seed)
    out[in_m] = 120.0 + rng.normal(0.0, 3.0, (int(in_m.sum()), 3))
    field = cv2.GaussianBlur(rng.normal(0.0, 1.0, (h, w)).astype(np.float32), (0, 0), 3.0)
    return out, cam, u, lo, lone, in_m, field / field.std()


def _tilted_shade_pair(step: float, seed: int = 4):
    """``_with_lone_top``'s photo with every top mottled like plastic."""
    out, cam, u, lo, lone, _, field = _with_lone_top(step, seed)
    tops = out[..., 0] > 90  # the felt is 60, the tops 120 and more
    out[tops] += (4.0 * field)[tops, None]
    return np.clip(cv2.GaussianBlur(out, (0, 0), 0.8), 0, 255).astype(np.uint8), cam, u, lo, lone


def test_the_lens_takes_the_shade_of_the_upper_winks_own_top():
    # U lies tilted on L: under one lamp its whole top, the lens over L with it, is another shade than L's flat
    # top, brighter or darker; the lens's shade then says U is on top, named either way round
    from vision.stacking import lens_shade_z
    for step in (40.0, -40.0):  # a 10-degree tilt towards or away from a lamp 45 degrees up: 15-20 % of the shade
        img, cam, u, lo, lone = _tilted_shade_pair(step)
        assert lens_shade_z([u, lo, lone], u, lo, img, cam) > 2.0
        assert lens_shade_z([u, lo, lone], lo, u, img, cam) < -2.0


def test_a_tilt_that_leaves_the_shade_alone_says_nothing_of_the_order():
    # tilted across the lamp's direction, U's top is L's shade: the lens matches both, within the stray of a
    # lens-shaped part of one mottled top (the order stays undecided on this cue)
    from vision.stacking import lens_shade_z
    for seed in range(3):
        img, cam, u, lo, lone = _tilted_shade_pair(0.0, seed=seed)
        assert abs(lens_shade_z([u, lo, lone], u, lo, img, cam)) < 2.0
    # no top of the colour but the pair's, clear, to measure the stray on: no reading
    img, cam, u, lo, lone = _tilted_shade_pair(40.0)
    assert lens_shade_z([u, lo], u, lo, img, cam) is None


def test_the_lens_shade_decides_a_one_colour_order_the_rims_leave_short_of_sure(monkeypatch):
    # the rims lean 'U on L' by one standard error (faint edges, no shadow, no profile): alone, undecided; the
    # lens taking U's own shade (U tilted towards the lamp) settles it. Where the tilt leaves the shade alone, the
    # order stays undecided, not guessed
    import vision.stacking as stacking
    from vision.winks import WinkDetectorParams
    monkeypatch.setattr(stacking, "cut_rim_evidence", lambda *args: (-1.0, 1.0, 10, 2.0))  # a: L, b: U
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: None)
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: None)
    monkeypatch.setattr(stacking, "rim_line_z", lambda *args: None)
    for step, decided in ((40.0, True), (0.0, False)):
        img, cam, u, lo, lone = _tilted_shade_pair(step)
        u.above, u.order_confidence, lo.order_confidence = ["L"], {"L": 0.55}, {"U": 0.55}
        stacking.review_order([u, lo, lone], img, cam, WinkDetectorParams(), noise_level=2.0)
        assert u.above == ["L"] and lo.above == []
        assert (u.order_confidence["L"] >= 0.75) == decided, step


def test_the_dark_line_along_the_upper_rim_says_which_wink_of_one_colour_is_on_top():
    # the upper wink's raised edge casts a dark line on the lower's top along its rim; the lower's rim under the
    # upper has that smooth top on both sides. Read the pair either way round, the line names U
    from vision.stacking import rim_line_z
    img, cam, u, lo = _shaded_pair("U")
    assert rim_line_z([u, lo], u, lo, img, cam) > 2.0
    assert rim_line_z([u, lo], lo, u, img, cam) < -2.0
    # found where a centre 1.2 mm off (its uncertainty 0.8 mm) puts the posed rim beside it
    u2 = copy.copy(u)
    u2.center_mm, u2.sigma_mm = u.center_mm + np.array([-1.2, 0.0]), 0.8
    assert rim_line_z([u2, lo], u2, lo, img, cam) > 2.0
    # two tops shaded differently (a step across the cut rim, as a tilt towards the lamp makes) and no line: no
    # order either way
    img, cam, u, lo = _shaded_pair("none", step=20.0)
    assert abs(rim_line_z([u, lo], u, lo, img, cam)) < 2.0



def test_a_one_colour_squop_in_a_committed_sample_is_ordered_the_right_way():
    # sample rigA_01 (1.35 mm per pixel): a blue small wink tilted 13 degrees on another. The cut rim's step read it
    # 'lower on upper' (1.5 standard errors: its reads near the pair's outline took the felt's blurred tail for an
    # edge) against the edge profile (2.2): undecided. Counted in excess of the steps either side of the rim there,
    # the step says 'upper on lower' (1.4), and the dark line along the upper's rim over the lower (2.5) with it
    import json
    from pathlib import Path

    from calibration.camera import CameraModel
    path = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks" / "rigA_01_squops.jpg"
    doc = json.loads(path.with_suffix(".json").read_text())
    truth = {p["id"]: p for p in doc["pieces"]}
    assert ["blue-S1", "blue-S2"] in doc["squops"]
    m = measure_tiddlywinks(cv2.imread(str(path)), CameraModel.from_dict(doc["calibration"]["camera"]))
    up, lo = ([w for w in m.winks if w.color == "blue" and math.dist(w.center_mm, truth[t]["center_mm"]) < 2.0]
              for t in ("blue-S1", "blue-S2"))
    assert len(up) == len(lo) == 1
    _assert_reported_over(up[0], lo[0])



def test_a_tilted_winks_top_is_sampled_where_its_face_lies_not_as_a_plan_circle():
    # a large wink tilted 15 degrees rising along +x: its top face is an ellipse in plan, r cos t along the rise,
    # centred half a thickness's sin t back. Read as a plan circle of the full radius less the inset, the samples
    # along the rise reach 0.5 mm beyond the inset onto the rim's blur (render 102 #13: 2 of a lens's 12)
    from vision.stacking import _top_points
    w = _cand("U", "large", 0.0, 0.0)
    w.tilt_deg, w.tilt_azimuth_deg = 15.0, 0.0
    inset, step = 1.5, 0.25
    g = _top_points(w, inset, step, [w], (w,))
    t = math.radians(w.tilt_deg)
    along = (g[:, 0] + 0.75 * math.sin(t)) / math.cos(t)  # in the face, from the top face's centre
    assert np.hypot(along, g[:, 1]).max() <= w.radius_mm - inset + 1e-9
    # ... and the face is read up to that inset all round
    assert g[:, 0].max() >= (w.radius_mm - inset) * math.cos(t) - 0.75 * math.sin(t) - step
    assert g[:, 1].max() >= w.radius_mm - inset - step


def test_the_lens_shade_is_weighed_against_strays_of_the_same_colour_direction():
    # U's top 10 grey levels brighter than L's (a tilt towards the lamp); the lone clear top of their colour is
    # mottled in hue only (blue against red, 6 levels): its lens-shaped parts stray across the shade's direction,
    # not along it. Weighed by the strays' lengths the lens read was about one standard error; along the read's
    # own colour axis the mottling is no error of it
    from vision.stacking import lens_shade_z
    for seed in range(3):
        out, cam, u, lo, lone, in_m, field = _with_lone_top(10.0, seed)
        out[in_m] += (6.0 * field)[in_m, None] * np.array([1.0, 0.0, -1.0])
        img = np.clip(cv2.GaussianBlur(out, (0, 0), 0.8), 0, 255).astype(np.uint8)
        assert lens_shade_z([u, lo, lone], u, lo, img, cam) > 2.0
        assert lens_shade_z([u, lo, lone], lo, u, img, cam) < -2.0


def test_a_one_colour_squop_on_a_pile_keeps_its_order_with_the_upper_wink_at_its_resting_tilt(tmp_path):
    # the development set's render 102 #13 (1.2 mm per pixel): a green large wink tilted 15 degrees over a green
    # small one (13 degrees on a blue large one). Only the lens's shade reads the pair (the rims run along the
    # blue's outline). At its physical resting tilt (14.4 degrees, the flat-top formula said 12.3) 2 of the large
    # wink's 12 lens samples fell on its raised rim's blur when its top was sampled as a plan circle, and the order
    # was left undecided (0.72); nor is the red small wink over the red large one ever reported the other way round
    squops, got, _, _ = _simulated(tmp_path, 102, 13, (1920, 1080),
                                   {"green-L1": 2.0, "green-S1": 2.0, "red-S3": 2.0, "red-L2": 2.0})
    assert ["green-L1", "green-S1"] in squops and ["red-S3", "red-L2"] in squops
    up, lo = got["green-L1"], got["green-S1"]
    assert lo.wink_id in up.above and up.order_confidence[lo.wink_id] >= 0.75
    up, lo = got["red-S3"], got["red-L2"]
    assert not (up.wink_id in lo.above and lo.order_confidence[up.wink_id] >= 0.75)


def test_an_order_two_reads_are_sure_of_is_kept_unless_the_other_size_is_sure_of_the_other(monkeypatch):
    # A's size is unconfirmed; refitted small to the same arc, the cues lean 'B on A' (seed 7476 #1: yellow-S2
    # on yellow-S3 read 3.8 sigma on the step and 3.4 on the lens's shade, S3 read large -1.8, left undecided).
    # Two independent sure reads outweigh a size that reads no order surely; a sure contrary read, or one sure
    # read alone (seed 3273 #1: the step alone, at the wrong size), still leaves the pair undecided
    import vision.stacking as stacking
    from vision.winks import WinkDetectorParams
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: None)
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: None)
    monkeypatch.setattr(stacking, "rim_line_z", lambda *args: None)
    for lens, other_z, decided in ((3.0, -1.5, True), (3.0, -2.5, False), (None, -1.5, False)):
        a, b = _cand("A", "large", 0.0, 0.0), _cand("B", "small", 9.0, 0.0)
        a.above, a.order_confidence, b.order_confidence = ["B"], {"B": 0.8}, {"A": 0.8}
        alt_id = []

        def other(w, alt_id=alt_id):
            c = copy.copy(w) if w.wink_id == "A" else None
            if c is not None:
                c.size = "small"
                alt_id.append(id(c))
            return c
        monkeypatch.setattr(stacking, "cut_rim_evidence", lambda winks, p, q, *args, z=other_z, alt_id=alt_id: (
            (z * 2.0, 0.0, 10, 2.0) if id(p) in alt_id else (6.0, 0.0, 10, 2.0)))
        monkeypatch.setattr(stacking, "lens_shade_z",
                            lambda winks, p, q, *args, lens=lens, alt_id=alt_id: None if id(p) in alt_id else lens)
        stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0,
                              other_size=other)
        assert a.above == ["B"]
        assert (a.order_confidence["B"] >= 0.75) == decided, (lens, other_z)


def test_a_one_colour_order_one_cue_reads_at_a_size_the_outline_did_not_confirm_needs_the_other_size_too(
        monkeypatch):
    # tw_5052_001 (seed 5050): A, the upper, fitted large 2.7 mm off (its outline mostly unseen); at that size the
    # four rim cues lean 'A on B' faintly and the lens's shade reads 'B on A' 2.03 standard errors, the flat-rim
    # read agreeing; refitted small the lens cannot be read and the rims lean 'B on A' by 0.73 only. The order
    # rests on the size nobody measured: undecided, not claimed
    import vision.stacking as stacking
    from dataclasses import replace
    from vision.winks import WinkDetectorParams
    a, b = _cand("A", "large", 0.0, 0.0), _cand("B", "small", 0.0, -11.1)
    b.above, a.order_confidence, b.order_confidence = ["A"], {"B": 0.91}, {"A": 0.91}
    big = lambda w: w.radius_mm > 9.0  # noqa: E731
    reads = {"step": (0.4, -0.73), "shadow": (0.41, None), "edge": (0.56, -0.13), "line": (0.24, 0.0),
             "lens": (-2.03, None)}

    def cue(name):
        return lambda winks, a_, b_, *args: reads[name][0 if big(a_) else 1]
    monkeypatch.setattr(stacking, "cut_rim_evidence",
                        lambda winks, a_, b_, *args: (reads["step"][0 if big(a_) else 1], 0.0, 10, 1.0))
    for fn, name in (("shadow_z", "shadow"), ("edge_profile_z", "edge"), ("rim_line_z", "line"),
                     ("lens_shade_z", "lens")):
        monkeypatch.setattr(stacking, fn, cue(name))

    def other_size(w):
        return replace(w, size="small", above=list(w.above), order_confidence=dict(w.order_confidence)) \
            if w is a else None
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), 2.0, 0.75,
                          other_size)
    assert b.order_confidence["A"] < 0.75 and a.order_confidence["B"] < 0.75
    # the small size reading the same order beyond a standard error, the order stands
    b.above, a.above, a.order_confidence, b.order_confidence = ["A"], [], {"B": 0.91}, {"A": 0.91}
    reads["step"] = (0.4, -1.3)
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), 2.0, 0.75,
                          other_size)
    assert b.above == ["A"] and b.order_confidence["A"] > 0.75
    # two sure reads at the fitted size (the step and the lens) hold whatever the other size leans short of sure
    b.above, a.above, a.order_confidence, b.order_confidence = ["A"], [], {"B": 0.91}, {"A": 0.91}
    reads.update(step=(-2.5, 0.6), shadow=(None, None), edge=(None, None), line=(None, None))
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), 2.0, 0.75,
                          other_size)
    assert b.above == ["A"] and b.order_confidence["A"] > 0.75
    # one sure read the others all lean with (dev rigD_01, render 102 #25) holds too: nothing reads against it
    b.above, a.above, a.order_confidence, b.order_confidence = ["A"], [], {"B": 0.91}, {"A": 0.91}
    reads.update(step=(-2.5, 0.5), shadow=(-0.55, None), edge=(-1.03, None), line=(-1.96, None), lens=(None, None))
    stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), 2.0, 0.75,
                          other_size)
    assert b.above == ["A"] and b.order_confidence["A"] > 0.75


def test_a_rim_along_a_third_winks_outline_is_not_read_as_the_pairs_cut_rim():
    # seed 3333 #1's pile, drawn by ``synth``: blue S raised and tilted 19 deg on green L (itself on a flat blue), half
    # under yellow L, whose edge runs within 1.8 mm of green L's rim inside blue S. That edge is yellow against blue,
    # the step a visible green rim would show; read as green's, it left the pair undecided here, and on the render
    # put green over blue at 4.8 standard errors. Read clear of the yellow's outline (the lens's colour holds where
    # too little of a rim is clear of it), blue is over green, and no order is claimed the wrong way
    cam = default_camera(3840, 2160)
    blue_lo = SynthWink("blue-lo", "blue", "small", (191.66, 148.73))
    green = SynthWink("green", "green", "large", (200.20, 155.61), z_mm=1.932, tilt_deg=6.19, tilt_azimuth_deg=218.85,
                      above=["blue-lo"])
    blue = SynthWink("blue", "blue", "small", (209.09, 149.06), z_mm=3.338, tilt_deg=19.19, tilt_azimuth_deg=143.64,
                     above=["green"])
    yellow = SynthWink("yellow", "yellow", "large", (218.65, 146.86), z_mm=3.357, tilt_deg=13.83,
                       tilt_azimuth_deg=167.06, above=["blue", "green"])
    truth = [blue_lo, green, blue, yellow]
    m = measure_tiddlywinks(render(truth, cam, seed=0), cam)
    got = _by_truth(m.winks, truth)
    assert got["green"].wink_id in got["blue"].above and got["blue"].order_confidence[got["green"].wink_id] >= 0.75
    assert got["blue"].wink_id in got["yellow"].above
    upper = {(t.wink_id, lo) for t in truth for lo in t.above} | {("yellow", "blue-lo"), ("blue", "blue-lo")}
    name = {w.wink_id: t for t, w in got.items()}
    for w in m.winks:
        for lo in w.above:
            if w.order_confidence[lo] >= 0.75:
                assert (name[lo], name[w.wink_id]) not in upper, (name[w.wink_id], name[lo])


def test_a_one_colour_pair_read_only_along_and_under_a_third_wink_is_not_ordered_the_wrong_way():
    # tw_2223_001's pile (fresh seed 2222), drawn by ``synth``: yellow S tilted 17 deg on yellow L and a flat blue
    # S, with blue L lying over them all. Both yellows' rims inside each other run along and under blue L's outline;
    # read whole, its edge (blue against yellow) put yellow L over yellow S (0.77 here, 0.95 on the render), the
    # wrong way. Read clear of that outline the rims cannot be compared, and the flat read, taken along it too, is
    # no opinion
    cam = default_camera()
    blue_s = SynthWink("blue-S", "blue", "small", (-302.4, 200.5))
    yellow_l = SynthWink("yellow-L", "yellow", "large", (-300.3, 188.2), z_mm=1.82, tilt_deg=5.6, tilt_azimuth_deg=100,
                         above=["blue-S"])
    yellow_s = SynthWink("yellow-S", "yellow", "small", (-292.6, 200.4), z_mm=3.1, tilt_deg=17.3, tilt_azimuth_deg=238,
                         above=["blue-S", "yellow-L"])
    blue_l = SynthWink("blue-L", "blue", "large", (-294.3, 210.9), z_mm=3.5, tilt_deg=14.6, tilt_azimuth_deg=279,
                       above=["blue-S", "yellow-S"])
    truth = [blue_s, yellow_l, yellow_s, blue_l]
    m = measure_tiddlywinks(render(truth, cam, seed=0), cam)
    got = _by_truth(m.winks, truth)
    ys, yl = got["yellow-S"], got["yellow-L"]
    assert not (ys.wink_id in yl.above and yl.order_confidence[ys.wink_id] >= 0.75)
    assert got["yellow-S"].wink_id in got["blue-L"].above  # the pile's other orders stand
    upper = {(t.wink_id, lo) for t in truth for lo in t.above} | {("blue-L", "yellow-L")}
    name = {w.wink_id: t for t, w in got.items()}
    for w in m.winks:
        for lo in w.above:
            if w.order_confidence[lo] >= 0.75:
                assert (name[lo], name[w.wink_id]) not in upper, (name[w.wink_id], name[lo])


def test_a_one_colour_pair_split_from_one_outline_is_not_ordered_on_one_read_against_the_others_lean(monkeypatch):
    # issue 4 (tw_5729_001): red-S2, tilted 15.5 deg on red-L2, and red-L2 were read as one blob and split by the
    # union of two discs; posed flat under red-L2, its cut rim read 2.66 sigma the wrong way, the other cues -0.12,
    # -0.02, 0 and 0.55: one read alone, claimed at 0.91 the wrong way. Such a pair split from one outline is left
    # undecided; the same reads on a pair not so split are claimed as before, and so is a split pair read by two
    # sure reads, or by one with none against it
    import vision.stacking as stacking
    from vision.winks import WinkDetectorParams
    monkeypatch.setattr(stacking, "cut_rim_evidence", lambda *args: (3.33, 0.0, 10, 1.25))  # 2.66 sigma: A on B
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: -0.12)
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: -0.02)
    monkeypatch.setattr(stacking, "rim_line_z", lambda *args: 0.0)
    monkeypatch.setattr(stacking, "lens_shade_z", lambda *args: 0.55)

    def judged(one_outline):
        a, b = _cand("A", "large", 0.0, 0.0), _cand("B", "small", 9.0, 0.0)
        a.above, a.order_confidence, b.order_confidence = ["B"], {"B": 0.85}, {"A": 0.85}
        stacking.review_order([a, b], np.zeros((10, 10, 3), np.uint8), None, WinkDetectorParams(), noise_level=2.0,
                              one_outline=lambda p, q: one_outline)
        return a.order_confidence["B"]
    assert judged(False) > 0.75
    assert 0.5 <= judged(True) < 0.75
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: 3.0)  # a second sure read, the same way
    assert judged(True) > 0.75
    monkeypatch.setattr(stacking, "edge_profile_z", lambda *args: 0.3)  # every other cue leaning its way
    monkeypatch.setattr(stacking, "shadow_z", lambda *args: 0.12)
    assert judged(True) > 0.75
