"""Issue 8 (stop 36): a ball is parted from its cast shadow where the two make one blob too large or too long.

The scenes are the simulator's: seed 1129's items 2 and 6 drawn again whole, as the bench renders them (each its
camera at 6.4-6.8 px per marble, its sand, lamp, photo settings and JPEG; with the other balls taken away the
photo's later draws, hence its blur and noise, differ, and main reads both places right). Under their low lamps a
ball and its shadow make one blob: 1129_006's 18.2 mm swirl tolley with its shadow covers more than the largest
single ball's blob may and holds a disc of 1.6 marble radii, so main fitted it a close-packed group of four
marbles; 1129_002's two marbles 3 mm apart, one's shadow reaching the other, make a chain 2.4 times as long as wide
whose disc-averaged departure has one peak (in the shadow between them), so main found one of the two.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.vision.marbles_renders import redrawn_marbles
from vision.marbles import analyze_marbles

MATCH_MM = 8.0  # the bench's matching distance


def _found_near(doc, near_mm, within_mm):
    return [p for p in doc["pieces"] if math.dist(p["center_mm"], near_mm) < within_mm]


@pytest.mark.parametrize(("seed", "item", "near_mm", "within_mm", "n_balls"), [
    pytest.param(1129, 6, (18.9, 363.9), math.inf, 1, id="tolley_with_its_shadow_is_no_group"),
    pytest.param(1129, 2, (219.0, -239.0), math.inf, 2, id="marble_beside_its_neighbours_shadow"),
])
def test_a_ball_and_its_cast_shadow_are_read_as_the_ball(seed, item, near_mm, within_mm, n_balls):
    photo, cam, kept = redrawn_marbles(seed, item, near_mm, within_mm)
    kept = [b for b in kept if math.dist(b.center_mm[:2], near_mm) < 45.0]
    assert len(kept) == n_balls
    doc = analyze_marbles(photo, cam)
    found = _found_near(doc, near_mm, 45.0)
    assert len(found) == n_balls, [p["center_mm"] for p in found]
    assert not any(p["in_group"] for p in found)
    for b in kept:  # each ball found on its own disc, not in its shadow
        assert min(math.dist(b.center_mm[:2], p["center_mm"]) for p in found) < MATCH_MM, b.piece_id


def test_the_sand_in_any_light_has_no_colour_of_its_own_and_a_ball_has():
    from vision.marbles_shade import shade_free_chroma

    rng = np.random.default_rng(0)
    sand = np.array([170.0, 131.0, 150.0])  # OpenCV 8-bit CIELAB: L* 66.7, a* 3, b* 22
    for _ in range(20):  # the same sand under any share of the light: its XYZ scaled, a* and b* with L* + 16
        k = rng.uniform(0.2, 1.5)
        s = k ** (1.0 / 3.0)
        lit = np.array([2.55 * (s * (sand[0] / 2.55 + 16) - 16), 128 + s * 3.0, 128 + s * 22.0])
        assert float(shade_free_chroma(lit, sand)) == pytest.approx(0.0, abs=0.01)
    # a white cat's eye 13 lighter and 13 bluer than the sand (1129_002's clear marble) keeps its departure
    ball = np.array([sand[0] + 18.0, 129.0, 137.0])
    assert float(shade_free_chroma(ball, sand)) > 10.0
