"""Tantrix renders: plausible positions, deterministic by seed, truth consistent with what is drawn."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from geometry.tantrix import EDGE_COUNT, TILE_COUNT, Board, Placement, neighbours
from simulation.photo import PhotoSettings
from simulation.tantrix import (
    ILLEGAL_FRACTION,
    board_size_for,
    camera_for,
    hex_center_mm,
    is_planted_illegal,
    layout_scene,
    random_tantrix_scene,
    render_tantrix_item,
    render_tantrix_scene,
)
from simulation.tantrix_boards import HAND_SIZE, breaks_restrictions, cascade_overflow, deal

# hue (OpenCV 0..180) of each printed link colour after the photo pipeline; white is the unsaturated one
_HUES = {"red": 2.0, "yellow": 25.0, "green": 66.0, "blue": 111.0}


def _classify(bgr_pixel: np.ndarray) -> str:
    h, s, v = cv2.cvtColor(bgr_pixel.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_BGR2HSV)[0, 0]
    if s < 70 and v > 120:
        return "white"
    return min(_HUES, key=lambda k: min(abs(float(h) - _HUES[k]), 180 - abs(float(h) - _HUES[k])))


def _board_from_truth(truth: dict) -> Board:
    return Board({tuple(t["hex"]): (t["number"], t["rotation"])
                  for t in truth["tiles"] if t["place"] == "board"})


@pytest.mark.parametrize("n_tiles", [10, 27, 44, 56])
def test_legal_positions_follow_the_rules_of_play(n_tiles):
    for i, hands in enumerate((True, False)):
        d = deal(np.random.default_rng([31, n_tiles, i]), n_tiles, hands_visible=hands)
        b = d.board
        assert d.defect is None and b.is_connected()
        assert len(b) >= min(n_tiles, 40)  # small boards exact; big ones may stop a few tiles short
        assert all(not b.mismatched_edges(h) for h in b), "every shared edge matches (TX G-2)"
        numbers = [*b.numbers(), *d.hands["A"], *d.hands["B"]]
        assert len(numbers) == len(set(numbers)) and all(1 <= n <= TILE_COUNT for n in numbers)
        if not d.bag_empty:
            assert not [h for h in b.empty_neighbours() if b.neighbour_count(h) >= 4], "R2/R3"
            assert not [h for h in b.forced_spaces() if b.is_blocked_space(h)], "R1"
            if hands:
                assert len(d.hands["A"]) == len(d.hands["B"]) == HAND_SIZE
                # every forced space a tile could fill legally was filled (TX G-4)
                tiles = {h: (p.number, p.rotation) for h, p in b.tiles.items()}
                for s in b.forced_spaces():
                    for n in (*d.hands["A"], *d.hands["B"]):
                        assert all(breaks_restrictions(tiles, s, n, r) for r in b.fitting_rotations(n, s))
        else:
            assert len(b) + 2 * HAND_SIZE >= TILE_COUNT


@pytest.mark.parametrize("defect", ["mismatch", "four_neighbours", "blocked_space"])
def test_planted_defects_are_what_they_say(defect):
    d = deal(np.random.default_rng([32, len(defect)]), 24, defect=defect, hands_visible=True)
    b = d.board
    assert d.defect == defect and d.defect_hexes and not d.bag_empty
    h = d.defect_hexes[0]
    if defect == "mismatch":
        assert b.mismatched_edges(h)
    elif defect == "four_neighbours":
        assert h not in b and b.neighbour_count(h) >= 4
    else:
        assert b.is_blocked_space(h)


def test_planted_defects_keep_boards_of_at_least_ten_tiles():
    for i in range(12):
        d = deal(np.random.default_rng([35, i]), 10, defect="four_neighbours", hands_visible=bool(i % 2))
        assert len(d.board) >= 10 and d.defect is not None


def test_cascade_finds_the_controlled_side_of_rules_case_tx_t6():
    filled = {(0, 0), (1, 0), (2, 0), (3, 0), (3, -1)}
    assert cascade_overflow(filled, (0, -1))  # TX-T6: fills (1,-1), giving (2,-1) four neighbours
    assert not cascade_overflow(filled, (0, 1))  # TX-T8


def test_sets_spread_board_sizes_and_plant_the_illegal_share():
    sizes = [board_size_for(4, i) for i in range(40)]
    assert min(sizes) <= 13 and max(sizes) >= 53 and all(10 <= n <= 56 for n in sizes)
    counts = np.histogram(sizes, bins=4, range=(10, 57))[0]
    assert counts.min() >= 7, f"sizes bunch: {counts}"
    share = np.mean([is_planted_illegal(4, i) for i in range(100)])
    assert abs(share - ILLEGAL_FRACTION) <= 0.03


def test_render_is_deterministic_and_frames_every_tile(tmp_path):
    opts = dict(n_tiles=12, hands=True, size_wh_px=(480, 270))
    a = render_tantrix_item(tmp_path / "a", seed=3, index=2, **opts)
    b = render_tantrix_item(tmp_path / "b", seed=3, index=2, **opts)
    assert a.name == "tx_3_002.jpg" and a.read_bytes() == b.read_bytes()
    assert a.with_suffix(".json").read_bytes() == b.with_suffix(".json").read_bytes()
    truth = json.loads(a.with_suffix(".json").read_text())
    assert truth["game"] == "tantrix" and truth["image"]["size_wh_px"] == [480, 270]
    board_v = [t["center_px"][1] for t in truth["tiles"] if t["place"] == "board"]
    for t in truth["tiles"]:
        px = np.asarray(t["outline_px"])
        assert (px >= 0).all() and (px[:, 0] < 480).all() and (px[:, 1] < 270).all(), "whole board in frame"
        if t["player"] == "A":  # A's hand lies nearest the image bottom
            assert t["center_px"][1] > max(board_v)
        if t["player"] == "B":
            assert t["center_px"][1] < min(board_v)


def test_same_seed_same_bytes_in_another_process(tmp_path):
    """Nothing may hang on the process's hash seed (set iteration order): two fresh interpreters agree."""
    import os
    import subprocess
    import sys

    code = ("import sys; from simulation.tantrix import render_tantrix_item; "
            "render_tantrix_item(sys.argv[1], seed=8, index=1, n_tiles=14, hands=True, "
            "size_wh_px=(320, 180))")
    root = Path(__file__).resolve().parents[2]
    for sub, hash_seed in (("a", "1"), ("b", "2")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", code, str(tmp_path / sub)], cwd=root, env=env, check=True)
    for ext in (".jpg", ".json"):
        a, b = (tmp_path / sub / f"tx_8_001{ext}" for sub in ("a", "b"))
        assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("colorblind,tilt", [(False, 33.0), (True, 8.0)])
def test_truth_matches_the_links_drawn_at_every_edge(colorblind, tilt):
    """Sample each board tile just inside each edge midpoint (projected through the truth camera): the drawn
    link colour is the truth placement's edge colour; each tile sits on its hex and turns by its rotation."""
    rng = np.random.default_rng([33, int(colorblind)])
    scene = random_tantrix_scene(rng, n_tiles=20, illegal=False, hands=True, colorblind=colorblind)
    cam = camera_for(scene, rng, (960, 540), tilt_deg=tilt)
    bgr, truth = render_tantrix_scene(scene, cam, rng, settings=PhotoSettings(read_noise_electrons=1.0),
                                      glare=False)
    cam = CameraModel.from_dict(truth["calibration"]["camera"])
    f = truth["tile_geometry"]["flat_to_flat_mm"]
    z = truth["tile_geometry"]["thickness_mm"]
    lat = truth["lattice"]
    checked = 0
    for t in truth["tiles"]:
        if t["place"] != "board":
            continue
        nominal = hex_center_mm(tuple(t["hex"]), tuple(lat["origin_mm"]), lat["angle_deg"], lat["pitch_mm"])
        assert math.dist(nominal, t["center_mm"]) <= 1.5 * math.sqrt(2) + 1e-6
        turn = (t["angle_deg"] - lat["angle_deg"] - 60 * t["rotation"] + 180) % 360 - 180
        assert abs(turn) <= 3.0 + 1e-6
        place = Placement(number=t["number"], rotation=t["rotation"])
        for k in range(EDGE_COUNT):
            a = math.radians(t["angle_deg"] - 60 * t["rotation"] + 60 * k)  # lattice edge k of this tile
            p = (t["center_mm"][0] + 0.42 * f * math.cos(a), t["center_mm"][1] + 0.42 * f * math.sin(a), z)
            u, v = cam.project_mm(np.asarray([p]))[0]
            seen = _classify(bgr[int(round(v)), int(round(u))])
            want = place.edge_color(k).value
            assert seen == ("white" if colorblind and want == "green" else want), (t["id"], k)
            assert t["edge_colors"][k] == seen
            checked += 1
    assert checked == 6 * sum(t["place"] == "board" for t in truth["tiles"])
    board = _board_from_truth(truth)
    assert all(not board.mismatched_edges(h) for h in board)
    assert truth["colorblind"] is colorblind and truth["defect"] is None


def test_layout_leaves_tiles_apart_and_neighbours_on_the_lattice():
    from shapely.geometry import Polygon

    from simulation.tantrix import hex_outline_mm

    rng = np.random.default_rng(34)
    scene = layout_scene(rng, deal(rng, 30, hands_visible=True))
    polys = [Polygon(hex_outline_mm(t.center_mm, t.angle_deg, scene.circumradius_mm)) for t in scene.tiles]
    for i in range(len(polys)):
        for j in range(i + 1, len(polys)):
            assert polys[i].intersection(polys[j]).area < 0.5, "tiles never overlap"
    pos = {t.hex: np.asarray(t.center_mm) for t in scene.tiles if t.hex is not None}
    for h, c in pos.items():
        for n in neighbours(h):
            if n in pos:
                assert abs(np.linalg.norm(pos[n] - c) - scene.pitch_mm) <= 2 * 1.5 * math.sqrt(2) + 0.5


def test_committed_samples_cover_the_brief_and_their_truth_holds():
    from simulation.tantrix_samples import SAMPLES

    root = Path(__file__).resolve().parents[2] / "sample_images" / "tantrix"
    files = sorted(root.iterdir())
    assert sum(p.stat().st_size for p in files) <= 3 * 1024 * 1024
    truths = {name: json.loads((root / f"{name}.json").read_text()) for name, _ in SAMPLES}
    for name, truth in truths.items():
        img = cv2.imread(str(root / f"{name}.jpg"))
        assert img is not None and img.shape[:2] == (1080, 1920)
        assert truth["image"]["size_wh_px"] == [1920, 1080]
        b = _board_from_truth(truth)
        clashes = [h for h in b if b.mismatched_edges(h)]
        holes = [h for h in b.empty_neighbours() if b.neighbour_count(h) >= 4]
        blocked = [h for h in b.forced_spaces() if b.is_blocked_space(h)]
        if truth["defect"] is None:
            assert not clashes and (truth["bag_empty"] or not (holes or blocked)), name
        else:
            h = tuple(truth["defect_hexes"][0])
            assert {"mismatch": h in clashes, "four_neighbours": h in holes, "blocked_space": h in blocked}[
                truth["defect"]], name
    boards = [sum(t["place"] == "board" for t in tr["tiles"]) for tr in truths.values()]
    assert min(boards) <= 15 and max(boards) >= 50
    assert any(tr["colorblind"] for tr in truths.values()) and any(tr["defect"] for tr in truths.values())
    assert max(tr["camera_tilt_deg"] for tr in truths.values()) >= 30
    assert any(t["place"] == "hand" for tr in truths.values() for t in tr["tiles"])


def test_simulate_cli_writes_tantrix_photos_with_truth(tmp_path, capsys):
    from api.cli import main

    rc = main(["simulate", "--game", "tantrix", "--count", "1", "--seed", "7", "--out", str(tmp_path),
               "--size", "480x270"])  # seed 7 starts with a 14-tile board: quick
    assert rc == 0
    printed = capsys.readouterr().out.split()
    assert [p.rsplit("/", 1)[-1] for p in printed] == ["tx_7_000.jpg"]
    for name in ("tx_7_000",):
        truth = json.loads((tmp_path / f"{name}.json").read_text())
        assert truth["image"]["path"] == f"{name}.jpg"
        assert set(truth) >= {"game", "image", "tile_geometry", "colorblind", "lattice", "players", "tiles",
                              "bag_empty", "calibration"}
        assert all(set(t) >= {"id", "number", "rotation", "hex", "place", "player", "center_mm", "center_px",
                              "angle_deg", "confidence", "flagged"} for t in truth["tiles"])


def test_render_board_photographs_the_given_position_even_an_illegal_one():
    from simulation.tantrix import render_board

    board = Board({(0, 0): (1, 0), (1, 0): (10, 3), (0, 1): (43, 2)})  # colours need not match
    bgr, truth = render_board(board, hands={"A": (5, 6)}, seed=4, size_wh_px=(480, 270), glare=False)
    assert bgr.shape == (270, 480, 3)
    assert _board_from_truth(truth) == board
    assert sorted(t["number"] for t in truth["tiles"] if t["player"] == "A") == [5, 6]
    assert truth["bag_empty"] is False and truth["defect"] is None
