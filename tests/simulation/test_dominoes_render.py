"""Dominoes renders: deterministic by seed, truth consistent with the geometry it was built from."""

from __future__ import annotations

import json

import numpy as np
import pytest

from geometry.dominoes import Bone, PlacedTile, find_joins, set_size
from simulation.dominoes import random_scene, render_dominoes_item


def test_scenes_are_legal_layouts_unless_a_bad_join_was_planted():
    for i in range(40):
        rng = np.random.default_rng([77, i])
        scene = random_scene(rng)
        layout = [t for t in scene.tiles if t.tile_id in scene.chain]
        joins = find_joins(layout)
        assert len(joins) >= len(layout) - 1  # a connected line of play
        bad = [j for j in joins if j.matches is False]
        assert (not bad) == scene.layout_legal, f"scene {i}: {len(bad)} bad joins, legal={scene.layout_legal}"
        bones = [t.bone.key() for t in scene.tiles if t.bone is not None]
        assert len(bones) == len(set(bones)), "a set holds each tile once"
        assert len(scene.tiles) <= set_size(scene.max_pips)
        assert all(max(t.bone.a, t.bone.b) <= scene.max_pips for t in scene.tiles if t.bone is not None)


def test_layout_tiles_do_not_overlap():
    from shapely.geometry import Polygon

    for i in range(20):
        scene = random_scene(np.random.default_rng([78, i]))
        polys = [Polygon(t.outline_mm()) for t in scene.tiles]
        for a in range(len(polys)):
            for b in range(a + 1, len(polys)):
                assert polys[a].intersection(polys[b]).area < 1.0


def test_render_is_deterministic_and_truth_projects_into_the_image(tmp_path):
    a = render_dominoes_item(tmp_path / "a", seed=5, index=1, size_wh_px=(640, 480))
    b = render_dominoes_item(tmp_path / "b", seed=5, index=1, size_wh_px=(640, 480))
    assert a.read_bytes() == b.read_bytes()
    truth = json.loads(a.with_suffix(".json").read_text())
    assert truth["game"] == "dominoes" and truth["image"]["size_wh_px"] == [640, 480]
    for t in truth["tiles"]:
        px = np.asarray(t["outline_px"])
        assert (px[:, 0] > 0).all() and (px[:, 0] < 640).all() and (px[:, 1] > 0).all() and (px[:, 1] < 480).all()
        assert (t["pips"] is None) == (not t["face_up"])
    # the truth's joins are the geometry's joins of the truth's tiles
    tiles = [PlacedTile(tile_id=t["id"], center_mm=tuple(t["center_mm"]), angle_deg=t["angle_deg"],
                        width_mm=t["width_mm"], length_mm=t["length_mm"],
                        bone=None if t["pips"] is None else Bone.parse(t["pips"]), face_up=t["face_up"])
             for t in truth["tiles"] if t["in_layout"]]
    assert len(find_joins(tiles)) == len(truth["layout"]["joins"])


@pytest.mark.parametrize("variant", ["american", "british"])
def test_variant_sets(variant):
    scene = random_scene(np.random.default_rng(3), variant=variant)
    assert scene.variant == variant
    if variant == "american":
        assert scene.max_pips == 6
