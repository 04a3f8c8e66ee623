"""Issue 4 (stop 38): a flagged wink's arc read that moves its disc over another colour's pigment no found wink
explains is refused (``vision.foreign_pigment``).

tw_6363_001 (seed 6363, 4K): red-L1 on the felt, red-L2 on it, yellow-S1 on red-L2 tilted 59 deg, green-L2 on top.
yellow-S1 was found at its place as a small wink, then moved 6.2 mm by its arc's size read onto the missed red-L2
(the arc was red-L2's rim) as a yellow large: red-L2 was reported yellow, and red-L1 claimed over it (truth: the
other way round). The move is refused and the arc taken for the rim of the red wink whose pigment it bounds. The
photo is drawn again whole as the bench renders it (``_redrawn``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from calibration.camera import CameraModel
from simulation.generate import render_tiddlywinks_seeded
from vision.colour import COLOR_NAMES
from vision.foreign_pigment import foreign_share, leave_open, refuse_foreign_moves
from vision.ortho import OrthoGrid
from vision.tiddlywinks import measure_tiddlywinks
from vision.winks import WinkCandidate

MATCH_MM = 3.0  # a found wink stands for the truth wink within this (the pile's centres lie 4.6-11 mm apart)


def _redrawn(tmp: Path, seed: int, item: int, size_wh_px: tuple[int, int]) -> tuple[np.ndarray, dict]:
    """Item ``item`` of the bench's fresh set drawn from ``seed`` at ``size_wh_px``, as ``generate_tiddlywinks``
    renders it."""
    import cv2
    jpg = render_tiddlywinks_seeded(tmp, seed, item, size_wh_px=size_wh_px)
    return cv2.imread(str(jpg)), json.loads(jpg.with_suffix(".json").read_text())


@pytest.fixture(scope="module")
def pile_6363(tmp_path_factory):
    img, doc = _redrawn(tmp_path_factory.mktemp("tw6363"), 6363, 1, (3840, 2160))
    m = measure_tiddlywinks(img, CameraModel.from_dict(doc["calibration"]["camera"]))
    return m, {p["id"]: p for p in doc["pieces"]}


def _near(m, c):
    return [w for w in m.winks if not w.potted and math.dist(w.center_mm, c) < MATCH_MM]


def test_a_steep_upper_is_not_moved_onto_the_missed_wink_beside_it(pile_6363):
    m, truth = pile_6363
    yellow = _near(m, truth["yellow-S1"]["center_mm"])
    assert len(yellow) == 1 and yellow[0].color == "yellow"
    assert yellow[0].size == "small" or yellow[0].size_confidence < 0.9
    # the red large beside it is not reported yellow (its colour read rests on the steep yellow's pixels): it is
    # found red, where the arc of its rim puts it
    red = _near(m, truth["red-L2"]["center_mm"])
    assert len(red) == 1 and red[0].color == "red"


def test_no_order_in_the_steep_pile_is_claimed_the_wrong_way(pile_6363):
    m, truth = pile_6363

    def who(w):
        t = min(truth.values(), key=lambda t: math.dist(t["center_mm"], w.center_mm))
        return t["id"] if math.dist(t["center_mm"], w.center_mm) < MATCH_MM else None
    by_id = {w.wink_id: w for w in m.winks}
    pile = ("red-L1", "red-L2", "yellow-S1", "green-L2")
    for w in m.winks:
        for lid, conf in w.order_confidence.items():
            if lid not in w.above or conf < 0.75 or lid not in by_id:
                continue
            up, lo = who(w), who(by_id[lid])
            if up in pile and lo in pile:
                assert up not in truth[lo]["above"], (w.wink_id, lid, conf)


# --- the rule itself, on a labelled orthophoto ---------------------------------------------------------------------

GRID = OrthoGrid.covering(-40.0, 40.0, -40.0, 40.0, 1.25, 1.5)
RED, YELLOW = COLOR_NAMES.index("red") + 1, COLOR_NAMES.index("yellow") + 1


def _labels(discs) -> np.ndarray:
    """An orthophoto's labels with each (centre, radius, label) disc painted in turn (later ones on top)."""
    lab = np.zeros((GRID.height_px, GRID.width_px), np.uint8)
    cc, rr = np.meshgrid(np.arange(GRID.width_px), np.arange(GRID.height_px))
    xy = GRID.table_from_ortho(np.stack([cc.ravel(), rr.ravel()], axis=1)).reshape(GRID.height_px, GRID.width_px, 2)
    for c, r, k in discs:
        lab[((xy - np.asarray(c)) ** 2).sum(axis=2) <= r * r] = k
    return lab


def _moved(color, c0, size0, c1, size1):
    w = WinkCandidate(color=color, size=size1, center_mm=np.array(c1, float), votes=1.0, size_confidence=0.95,
                      arc_sigma_mm=0.8)
    return w, {id(w): (np.array(c0, float), size0, 0.6, None, None)}


def test_a_move_onto_another_colours_unexplained_pigment_is_undone():
    # a small yellow at (6, 0) beside a red large at (0, 0) that no found wink stands for: the arc put it large on it
    labels = _labels([((0.0, 0.0), 11.0, RED), ((6.0, 0.0), 8.0, YELLOW)])
    w, before = _moved("yellow", (6.0, 0.0), "small", (1.0, 0.0), "large")
    assert foreign_share(w.center_mm, 11.0, "yellow", [], labels, GRID) > 0.15
    kept, owners = refuse_foreign_moves([w], before, [w], labels, GRID)
    assert kept == []
    assert w.size == "small" and np.allclose(w.center_mm, (6.0, 0.0)) and w.size_confidence == 0.6
    assert w.arc_sigma_mm is None
    # the arc was the red wink's rim: a red large where its circle lies, its size flagged
    assert len(owners) == 1 and owners[0].color == "red" and owners[0].size == "large"
    assert np.linalg.norm(owners[0].center_mm - (1.0, 0.0)) < 0.01 and owners[0].size_confidence < 0.9


def test_a_move_onto_its_own_colour_or_onto_a_found_wink_is_kept():
    # its own colour all round the new disc: kept
    labels = _labels([((1.0, 0.0), 11.0, YELLOW)])
    w, before = _moved("yellow", (3.0, 0.0), "small", (1.0, 0.0), "large")
    assert refuse_foreign_moves([w], before, [w], labels, GRID) == ([w], [])
    # the red beside it is a found wink's (it covers that part of the new disc): kept
    labels = _labels([((-9.0, 0.0), 11.0, RED), ((1.0, 0.0), 11.0, YELLOW), ((-9.0, 0.0), 11.0, RED)])
    red = WinkCandidate(color="red", size="large", center_mm=np.array((-9.0, 0.0)), votes=1.0)
    w, before = _moved("yellow", (3.0, 0.0), "small", (1.0, 0.0), "large")
    assert refuse_foreign_moves([w], before, [w, red], labels, GRID) == ([w], [])
    assert w.size == "large"


def test_the_orders_of_a_wink_known_from_an_arc_alone_are_left_undecided():
    a = WinkCandidate(color="red", size="large", center_mm=np.zeros(2), votes=1.0, wink_id="red-L1",
                      above=["red-L2"], order_confidence={"red-L2": 1.0, "green-L1": 0.95})
    b = WinkCandidate(color="red", size="large", center_mm=np.array((10.0, 0.0)), votes=1.0, wink_id="red-L2",
                      order_confidence={"red-L1": 1.0})
    leave_open([a, b], [b])
    assert a.order_confidence == {"red-L2": 0.5, "green-L1": 0.95} and b.order_confidence == {"red-L1": 0.5}
