"""Two-colour squops judged where their colours meet (vision/stacking.py)."""

import cv2
import numpy as np
import pytest

from synth import SynthWink, default_camera, render, squop_tilt
from vision.winks import WinkCandidate, WinkDetectorParams


def _photo(up_colour: str, lo_colour: str, dy_mm: float = 11.0):
    """A coarse, defocused photo (1600 px wide, 1.3 mm a pixel, blurred 1.5 px) of small U tilted on small L,
    ``dy_mm`` apart: the lens is 5 mm deep, four pixels, its inner samples mixed with both sides."""
    lo = SynthWink("L", lo_colour, "small", (200.0, 100.0))
    up = squop_tilt(SynthWink("U", up_colour, "small", (200.0, 100.0 - dy_mm)), lo)
    cam = default_camera(1600, 900)
    img = cv2.GaussianBlur(render([lo, up], cam, seed=3), (0, 0), 1.5)
    return img, cam, lo, up


def _cands(lo: SynthWink, up: SynthWink, shift_u_mm=(0.0, 0.0), shift_l_mm=(0.0, 0.0)):
    out = []
    for s, shift in ((lo, shift_l_mm), (up, shift_u_mm)):
        c = WinkCandidate(color=s.color, size=s.size, center_mm=np.array(s.center_mm, float) + shift, votes=1.0,
                          wink_id=s.wink_id)
        c.sigma_mm = 0.4
        out.append(c)
    return out


@pytest.mark.parametrize("up_colour, lo_colour", [("blue", "green"), ("green", "blue")])
def test_where_two_colours_meet_says_which_wink_is_on_top(up_colour, lo_colour):
    from vision.stacking import colour_boundary_z
    img, cam, lo, up = _photo(up_colour, lo_colour)
    l, u = _cands(lo, up)
    assert colour_boundary_z([l, u], u, l, img, cam) > 4.0
    assert colour_boundary_z([l, u], l, u, img, cam) < -4.0  # the same read, the pair named the other way
    # centres read 2 mm off each, towards each other: the boundary is still at U's rim, not L's
    l, u = _cands(lo, up, (0.0, 2.0), (0.0, -2.0))
    assert colour_boundary_z([l, u], u, l, img, cam) > 4.0


def test_a_boundary_where_neither_order_puts_it_says_nothing():
    from vision.stacking import colour_boundary_z
    img, cam, lo, up = _photo("blue", "green")
    # each centre read 2 mm off, away from the other: the boundary lies 2 mm from where either order puts it
    l, u = _cands(lo, up, (0.0, -2.0), (0.0, 2.0))
    assert colour_boundary_z([l, u], u, l, img, cam) is None
    assert colour_boundary_z([l, u], l, u, img, cam) is None


@pytest.mark.parametrize("up_colour, lo_colour", [("blue", "green"), ("yellow", "red")])
def test_a_two_colour_pair_whose_rims_cannot_be_compared_is_ordered_where_their_colours_meet(monkeypatch, up_colour,
                                                                                             lo_colour):
    # the coarse read left the pair open (its lens's colour unread, as on tw_7172_001 where a third wink hides the
    # upper's own part), and the cut rims cannot be compared (a rim along a third wink's outline, or both arcs reading
    # the one blurred boundary): the review orders it from where the two colours meet, the right way round
    import vision.stacking as stacking
    monkeypatch.setattr(stacking, "cut_rim_evidence", lambda *a, **k: None)
    img, cam, lo, up = _photo(up_colour, lo_colour)
    for named_up in ("L", "U"):  # whichever way the open order was first put
        l, u = _cands(lo, up)
        first_up, first_lo = (u, l) if named_up == "U" else (l, u)
        first_up.above, first_up.order_confidence, first_lo.order_confidence = [first_lo.wink_id], \
            {first_lo.wink_id: 0.5}, {first_up.wink_id: 0.5}
        stacking.review_order([l, u], img, cam, WinkDetectorParams(), 2.0)
        assert u.above == ["L"] and not l.above
        assert u.order_confidence["L"] >= 0.75
