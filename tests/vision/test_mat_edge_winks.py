"""Winks lying over the mat's edge (issue 4): the unsearched band along the edge is unread, not felt."""

import math

import pytest

from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
from synth import SynthWink, default_camera, render
from vision.tiddlywinks import measure_tiddlywinks

#: Found centre within this of the truth (a wink cut by the mat edge shows part of its outline).
EDGE_WINK_TOL_MM = 2.0


def test_winks_overhanging_the_mat_edge_are_found():
    # centres 1-3 mm inside the edge: about half of each disc lies over the edge band and the table beyond;
    # the felt part shows a clean disc of the wink's colour, which must not be rejected for "felt inside"
    cam = default_camera(1920, 1080)
    L, W = MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
    winks = [SynthWink("b", "blue", "small", (-(L - 2.5), -60.0)),
             SynthWink("y", "yellow", "small", (L - 1.5, 40.0)),
             SynthWink("r", "red", "small", (300.0, W - 2.0)),
             SynthWink("bl", "blue", "large", (-250.0, -(W - 3.0)))]
    m = measure_tiddlywinks(render(winks, cam, seed=5), cam)
    for t in winks:
        near = [w for w in m.winks if w.color == t.color and math.dist(w.center_mm, t.center_mm) < 6.0]
        assert len(near) == 1, (t.wink_id, [(w.color, w.center_mm) for w in m.winks])
        assert math.dist(near[0].center_mm, t.center_mm) < EDGE_WINK_TOL_MM
        # a size claimed sure is right (half an outline may leave it flagged: then the umpire looks)
        assert near[0].size == t.size or near[0].size_confidence < 0.9
    # nothing is invented along the edge
    assert len(m.winks) == len(winks)


@pytest.mark.parametrize("size", ["small", "large"])
def test_a_wink_over_the_mat_edge_has_its_size_read_from_its_rim_against_the_table(size):
    # half of each rim lies over the table beyond the mat, the rest on the felt's border: the rim is read
    # against what lies beyond it on each ray (felt or table), clear of the mat's edge line, and decided
    cam = default_camera(1920, 1080)
    L, W = MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
    winks = [SynthWink("b", "blue", size, (-(L - 2.5), -60.0)),
             SynthWink("y", "yellow", size, (L - 1.5, 40.0)),
             SynthWink("r", "red", size, (300.0, W - 2.0)),
             SynthWink("bl", "blue", size, (-250.0, -(W - 4.0)))]
    m = measure_tiddlywinks(render(winks, cam, seed=7), cam)
    sure = 0
    for t in winks:
        near = [w for w in m.winks if w.color == t.color and math.dist(w.center_mm, t.center_mm) < 6.0]
        assert len(near) == 1
        if near[0].size_confidence >= 0.9:
            assert near[0].size == t.size, t.wink_id  # never a confident wrong size
            sure += 1
    assert sure >= 3  # most rims show enough arc against the felt and the table to decide


@pytest.mark.parametrize("table_bgr", [(60, 70, 190), (70, 80, 175)])
def test_a_table_of_a_wink_colour_bleeding_over_the_mat_edge_is_no_wink(table_bgr):
    # a 720-px photo of the whole table from 45 degrees (about 3 mm per pixel at the far side), on a red table:
    # the camera's blur spreads the table's colour a few mm over the felt along the edge, a wink-coloured strip.
    # With the unread band only 2 ortho pixels wider than the searched edge, the strip's straight inner side
    # voted for winks all along the far side (held-out seed 6161: red winks along the mat's ends)
    cam = default_camera(720, 405, tilt_deg=45.0)
    winks = [SynthWink("b", "blue", "small", (-300.0, 60.0)), SynthWink("y", "yellow", "large", (250.0, -80.0))]
    m = measure_tiddlywinks(render(winks, cam, seed=3, table_bgr=table_bgr), cam)
    L, W = MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
    at_edge = [(w.color, w.center_mm) for w in m.winks
               if min(L - abs(w.center_mm[0]), W - abs(w.center_mm[1])) < 12.0]
    assert at_edge == []
