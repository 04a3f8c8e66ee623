"""A wink of a pile placed across the junction of its colour with a same-colour neighbour's, placed again by
the part of its disc that shows (vision/pile_echoes.py)."""

import math

import numpy as np
import pytest
from piles import synth_pile
from synth import SynthWink, default_camera, render

import vision.tiddlywinks as tiddlywinks
from vision.tiddlywinks import measure_tiddlywinks
from vision.winks import WinkCandidate

#: A wink found where it lies: well inside the bench's 5 mm gate.
FOUND_TOL_MM = 2.0
#: ... one placed by its crescent: a few mm of its rim show, and the outlines of the winks over and under it, found
#: to a mm or two in a pile, bound the rest.
CRESCENT_TOL_MM = 3.0
#: Beige felt: a yellow wink is of the felt's hue there (tw_8183_001's mat).
BEIGE_BGR = (120, 150, 165)
#: tw_8183_001's pile, moved to the mat's middle-right: yellow-S4 on the felt, blue-S1 over it, yellow-S2 over
#: blue-S1 and green-L1 over both; of yellow-S2 only a crescent between blue-S1 and green-L1 shows. Each
#: upper wink squops the last wink named (it rises towards that one's centre).
OFFSET_MM = np.array([-150.0, -60.0])
PILE = (("yellow-S4", "yellow", "small", (454.83, 152.47)),
        ("blue-S1", "blue", "small", (463.00, 160.19)),
        ("yellow-S2", "yellow", "small", (471.82, 154.90)),
        ("green-L1", "green", "large", (480.10, 155.76)))


def _pile() -> list[SynthWink]:
    """The pile built bottom-up as the simulator rests it (``rest_on``): each upper wink tilted over the winks
    under it, low edge on the felt: tilts 7.7, 14.6, 14.3 deg, heights within 0.01 mm of tw_8183_001's truth
    (0.75, 1.82, 2.74, 3.45 mm). Drawn flat at those heights, the pile had outlines no physical pile has."""
    return synth_pile(PILE, OFFSET_MM)


#: Where the label circle search put yellow-S2 in tw_8183_001, from where it lies (mm): across the junction.
ECHO_OFFSET_MM = np.array([-7.0, -3.4])


def _with_echo(monkeypatch, where_mm: np.ndarray) -> None:
    """The label stage as it went on tw_8183_001: a yellow small found at ``where_mm``."""
    real = tiddlywinks.find_candidates

    def find(*args, **kwargs):
        cands = real(*args, **kwargs)
        cands = [c for c in cands if not (c.color == "yellow" and math.dist(c.center_mm, where_mm) < 8.0)]
        return [*cands, WinkCandidate(color="yellow", size="small", center_mm=np.array(where_mm, float), votes=1.0)]
    monkeypatch.setattr(tiddlywinks, "find_candidates", find)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_middle_yellow_of_a_pile_is_placed_on_its_crescent_not_across_its_twin(monkeypatch, seed):
    # issue 4 (tw_8183_001): the label circle search put yellow-S2 7 mm off, across the junction of its
    # crescent with yellow-S4 (a false wink and a missed one); its crescent says where it lies
    winks = _pile()
    s2 = next(w for w in winks if w.wink_id == "yellow-S2")
    _with_echo(monkeypatch, np.add(s2.center_mm, ECHO_OFFSET_MM))
    cam = default_camera()
    m = measure_tiddlywinks(render(winks, cam, seed=seed, mat_bgr=BEIGE_BGR), cam)
    for w in winks:
        near = [f for f in m.winks if math.dist(f.center_mm, w.center_mm) < 5.0]
        assert len(near) == 1, w.wink_id
        assert near[0].color == w.color
        tol = CRESCENT_TOL_MM if w is s2 else FOUND_TOL_MM
        assert math.dist(near[0].center_mm, w.center_mm) < tol, w.wink_id
    assert len(m.winks) == len(winks)  # nothing is found where there is no wink
    moved = next(f for f in m.winks if math.dist(f.center_mm, s2.center_mm) < 5.0)
    assert moved.confidence < 1.0  # placed by a crescent: not a confident find


def test_a_lone_pair_of_one_colour_beside_another_is_left_where_it_was_found(monkeypatch):
    # two yellows side by side, a blue over one of them: each disc already explains its colour, nothing moves
    winks = [SynthWink("yellow-S1", "yellow", "small", (-200.0, 40.0)),
             SynthWink("yellow-S2", "yellow", "small", (-184.5, 40.0)),
             SynthWink("blue-S1", "blue", "small", (-196.0, 52.0), z_mm=1.8)]
    cam = default_camera()
    moved = []
    real = tiddlywinks.refit_pile_echoes
    monkeypatch.setattr(tiddlywinks, "refit_pile_echoes", lambda *a, **k: moved.extend(real(*a, **k)) or moved)
    measure_tiddlywinks(render(winks, cam, seed=4, mat_bgr=BEIGE_BGR), cam)
    assert moved == []


def test_raster_iou_equals_the_pointwise_iou():
    """The IoU from raster correlations equals the point-by-centre one, offsets at the radius included."""
    from vision.pile_echoes import _iou, _iou_on_raster
    rng = np.random.default_rng(7)
    step = 0.5
    g = np.arange(-24.0, 24.0 + 1e-9, step)
    gx, gy = np.meshgrid(g, g)
    for r in (11.0, 8.0, 7.3):
        centre = rng.uniform(-900.0, 900.0, 2)
        pts = centre + np.column_stack([gx.ravel(), gy.ravel()])
        use = rng.random(len(pts)) > 0.2
        mine = rng.random(len(pts)) > 0.6
        inside = rng.integers(-1, 3, len(pts))
        hidden = (rng.random(len(pts)) > 0.7) & ~mine & (inside >= 0)
        at = np.flatnonzero(np.hypot(*(pts - centre).T) <= 11.0)
        want = _iou(pts[use], mine[use], hidden[use], inside[use], pts[at], r)
        assert np.array_equal(_iou_on_raster(pts, len(g), step, use, mine, hidden, inside, at, r), want)
