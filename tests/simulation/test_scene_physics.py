"""Scene generators make states that can physically rest, with the geometry the rules need."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geometry import tiddlywinks as tw
from geometry.records import scene_to_document
from geometry.types import DEFAULT_CORNER_SIGNS, Color, Wink
from simulation.tiddlywinks_scenes import SCENE_KINDS, random_scene, rest_on

REST_TOL_MM = 0.01


def test_squop_rests_on_mat_and_on_the_lower_wink():
    lower = Wink(wink_id="a", color=Color.RED, size="large", center_mm=(0.0, 0.0))
    # Upper small wink 12 mm away, rising towards the lower one (+x).
    z, tilt = rest_on((-12.0, 0.0), 8.0, 0.0, [lower])
    th = math.radians(tilt)
    # Low edge (bottom corner) touches the mat.
    assert 8.0 * math.sin(th) + 0.75 * math.cos(th) == pytest.approx(z, abs=REST_TOL_MM)
    assert z - 8.0 * math.sin(th) - 0.75 * math.cos(th) == pytest.approx(0.0, abs=REST_TOL_MM)
    # Underside meets the lower wink's top rim (x = -11, z = 1.5).
    under = z - 0.75 / math.cos(th) + math.tan(th) * (-11.0 - (-12.0))
    assert under == pytest.approx(1.5, abs=REST_TOL_MM)


@pytest.mark.parametrize("kind", SCENE_KINDS)
def test_generated_scenes_are_physical(kind):
    rng = np.random.default_rng(11)
    for _ in range(3):
        scene = random_scene(rng, kind)
        doc = scene_to_document(scene)
        assert len(scene.winks) == 24
        flat = [w for w in scene.winks if not w.potted and not (w.off_mat and w.unplayed) and w.tilt_deg == 0]
        for i, a in enumerate(flat):  # flat winks never interpenetrate
            for b in flat[i + 1:]:
                assert tw.gap_mm(a, b) > 0, (a.wink_id, b.wink_id)
        for w in scene.winks:
            if w.unplayed and not w.off_mat:
                assert tw.is_behind_baseline(w, DEFAULT_CORNER_SIGNS[w.color]), w.wink_id
            if w.tilt_deg > 0:
                assert w.above, w.wink_id
        if kind == "squops":
            assert doc["squops"] and any(len(p) >= 3 for p in doc["piles"])
            colors = {p["id"]: p["color"] for p in doc["pieces"]}
            assert any(colors[u] == colors[l] for u, l in doc["squops"])


def test_squidge_off_has_a_near_tie():
    for seed in range(5):
        scene = random_scene(np.random.default_rng(seed), "squidge_off")
        played = [w for w in scene.winks if not w.unplayed]
        assert len(played) == 4 and len({w.color for w in played}) == 4
        gaps = sorted(tw.edge_distance_to_pot_mm(w) - 19.0 for w in played)
        assert 0.5 - 1e-9 <= gaps[0] <= 5.5
        assert gaps[1] - gaps[0] <= 1.0
