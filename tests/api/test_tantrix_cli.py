"""Tantrix wiring: the scene document and its verdict, ``analyze --game tantrix``, ``tantrix-move``, the service
route and the bench's scoring, from positions built of the real 56 tiles.

The reader is stood in for by a reading made from a truth document (``fake_reading``), so these tests check the
wiring, not the vision; a pixel mapping of 2 px/mm from straight above keeps them fast.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.bench_tantrix import Tally, bench_images, score_board
from api.cli import main
from api.pipeline import VisionPipeline
from api.tantrix_service import board_of, judge_document, judge_move_documents, parse_players, reading_document
from geometry.tantrix import EDGE_COUNT, Board, Placement, neighbours

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_fakes import service_settings  # noqa: E402

F2F_MM = 46.0
S_MM = F2F_MM / math.sqrt(3.0)
PX_PER_MM = 2.0
SIZE_WH = (640, 480)
H_PLANE = ((PX_PER_MM, 0.0, SIZE_WH[0] / 2), (0.0, -PX_PER_MM, SIZE_WH[1] / 2), (0.0, 0.0, 1.0))


def grow(seed: int, size: int) -> tuple[Board, list[int]]:
    """A colour-matched connected board of real tiles, and the tiles left over."""
    rng = random.Random(seed)
    pool = list(range(1, 57))
    rng.shuffle(pool)
    board = Board({(0, 0): (pool.pop(), rng.randrange(6))})
    while len(board) < size:
        for h in sorted(board.empty_neighbours(), key=lambda h: (board.neighbour_count(h) < 3, rng.random())):
            n = next((n for n in pool if board.fitting_rotations(n, h)), None)
            if n is not None and board.neighbour_count(h) < 4:
                board = board.with_tile(h, n, rng.choice(board.fitting_rotations(n, h)))
                pool.remove(n)
                break
    return board, pool


def hex_mm(h) -> tuple[float, float]:
    return (S_MM * math.sqrt(3.0) * (h[0] + h[1] / 2.0), -1.5 * S_MM * h[1])


def to_px(p) -> list[float]:
    return [SIZE_WH[0] / 2 + PX_PER_MM * p[0], SIZE_WH[1] / 2 - PX_PER_MM * p[1]]


def truth_doc(board: Board, hands: dict[str, list[int]] | None = None, players=("red", "yellow")) -> dict:
    """A scene document in the contract's shape for ``board`` (lattice at the origin, angle 0)."""
    tiles = []
    for k, (h, p) in enumerate(sorted(board.tiles.items())):
        c = hex_mm(h)
        outline = [to_px((c[0] + S_MM * math.cos(math.radians(30 + 60 * v)),
                          c[1] + S_MM * math.sin(math.radians(30 + 60 * v)))) for v in range(6)]
        tiles.append({"id": f"T{k + 1}", "number": p.number, "rotation": p.rotation, "hex": list(h), "place": "board",
                      "player": None, "center_mm": list(c), "center_px": to_px(c), "angle_deg": 60.0 * p.rotation,
                      "confidence": 1.0, "flagged": False, "outline_px": outline,
                      "edge_colors": [p.edge_color(e).value for e in range(EDGE_COUNT)]})
    for player, row in (hands or {}).items():
        y = -110.0 if player == "A" else 110.0
        for i, n in enumerate(row):
            c = (-150.0 + 50 * i, y)
            tiles.append({"id": f"T{len(tiles) + 1}", "number": n, "rotation": 0, "hex": None, "place": "hand",
                          "player": player, "center_mm": list(c), "center_px": to_px(c), "angle_deg": 0.0,
                          "confidence": 1.0, "flagged": False,
                          "edge_colors": [Placement(number=n).edge_color(e).value for e in range(EDGE_COUNT)]})
    return {"game": "tantrix", "image": {"path": None, "size_wh_px": list(SIZE_WH)},
            "tile_geometry": {"flat_to_flat_mm": F2F_MM, "thickness_mm": 5.0}, "colorblind": False,
            "lattice": {"origin_mm": [0.0, 0.0], "angle_deg": 0.0},
            "players": {"A": {"color": players[0]}, "B": {"color": players[1]}}, "tiles": tiles,
            "bag_empty": False, "defect": None}


@dataclass(frozen=True)
class FakeTile:
    tile_id: str
    number: int | None
    rotation: int | None
    hex: tuple[int, int] | None
    place: str
    player: str | None
    center_px: tuple[float, float]
    center_mm: tuple[float, float]
    angle_deg: float
    outline_px: tuple
    edge_colors: tuple
    confidence: float
    flagged: bool


@dataclass(frozen=True)
class FakeReading:
    tiles: tuple
    image_size_wh_px: tuple
    flat_to_flat_mm: float
    lattice_origin_mm: tuple
    lattice_angle_deg: float
    plane_to_image: tuple
    colorblind: bool
    source: str


def fake_reading(doc: dict, *, turn: int = 0, shift=(0, 0)) -> FakeReading:
    """What a reader would return for ``doc``, in a lattice frame turned ``turn`` sixths and shifted."""
    tiles = []
    for t in doc["tiles"]:
        h = t["hex"]
        if h is not None:
            q, r = h
            for _ in range(turn % 6):
                q, r = q + r, -q
            h = (q + shift[0], r + shift[1])
        rot = None if t["rotation"] is None else (t["rotation"] + turn) % 6
        tiles.append(FakeTile(t["id"], t["number"], rot, h, t["place"], t["player"], tuple(t["center_px"]),
                              tuple(t["center_mm"]), t["angle_deg"], tuple(map(tuple, t.get("outline_px") or [])),
                              tuple(t["edge_colors"]), t["confidence"], t["flagged"]))
    return FakeReading(tuple(tiles), SIZE_WH, F2F_MM, (0.0, 0.0), 0.0, H_PLANE, False, "fake")


@pytest.fixture
def position() -> tuple[Board, list[int]]:
    return grow(3, 14)


@pytest.fixture
def fake_vision(monkeypatch):
    """``vision.tantrix`` replaced by a reader that returns the reading of ``current["doc"]``."""
    current: dict = {}
    mod = types.ModuleType("vision.tantrix")
    mod.detect_tantrix = lambda frame, camera=None, **kw: fake_reading(current[frame.shape[1]])
    monkeypatch.setitem(sys.modules, "vision.tantrix", mod)
    return current


def write_photo(path: Path, width: int = SIZE_WH[0]) -> Path:
    cv2.imwrite(str(path), np.full((SIZE_WH[1], width, 3), 40, np.uint8))
    return path


# --- the document and its verdict --------------------------------------------------------------------------------


def test_a_legal_position_is_judged_with_scores_and_forced_spaces(position):
    board, pool = position
    doc = judge_document(truth_doc(board, {"A": pool[:6], "B": pool[6:12]}))
    assert doc["legal"] is True and doc["endgame"] is False
    assert doc["rulings"][0]["rule"] == "TX A1" and doc["rulings"][0]["decision"] == "legal"
    assert set(doc["scores"]) == {"red", "yellow", "blue", "green"}
    assert doc["player_scores"] == {"A": doc["scores"]["red"], "B": doc["scores"]["yellow"]}
    assert [tuple(f["hex"]) for f in doc["forced_spaces"]] == list(board.forced_spaces())
    for f in doc["forced_spaces"]:
        assert set(f["fits"]) == {"A", "B"}
        for player, fits in f["fits"].items():
            assert fits == [n for n in (pool[:6] if player == "A" else pool[6:12]) if board.fits(n, tuple(f["hex"]))]
    assert doc["counts"] == {"board": 14, "hand": 12, "unread": 0, "flagged": 0}


def test_a_mismatch_is_an_illegal_edge_and_an_unread_tile_is_too_close_to_call(position):
    board, _ = position
    doc = truth_doc(board)
    t = doc["tiles"][0]
    h = tuple(t["hex"])
    k = next(k for k, n in enumerate(neighbours(h)) if n in board)
    t["rotation"] = next(r for r in range(6) if Placement(number=t["number"], rotation=r).edge_color(k)
                         is not board.facing_colors(h)[k])
    bad = judge_document(doc)
    assert bad["legal"] is False
    assert any(h == tuple(e["hex"]) or h == tuple(e["other_hex"]) for e in bad["illegal_edges"])
    assert any(r["rule"] == "TX G-2" and r["decision"] == "illegal" for r in bad["rulings"])
    unread = truth_doc(board)
    unread["tiles"][3].update(number=None, rotation=None, flagged=True)
    j = judge_document(unread)
    assert j["legal"] is None and j["rulings"][0]["decision"] == "too_close_to_call"
    assert tuple(unread["tiles"][3]["hex"]) in board_of(unread)["unread"]


def test_a_number_read_twice_goes_to_the_umpire(position):
    board, _ = position
    doc = truth_doc(board)
    doc["tiles"][1]["number"] = doc["tiles"][0]["number"]
    doc["tiles"][1]["confidence"] = 0.4
    out = judge_document(doc)
    assert out["legal"] is None
    assert any(r["decision"] == "refer_to_umpire" and "read twice" in r["explanation"] for r in out["rulings"])


def test_the_reading_becomes_the_contract_document(position):
    board, _ = position
    truth = truth_doc(board)
    doc = reading_document(fake_reading(truth), image_path="x.jpg")
    assert doc["game"] == "tantrix" and doc["image"] == {"path": "x.jpg", "size_wh_px": list(SIZE_WH)}
    assert doc["lattice"] == {"origin_mm": [0.0, 0.0], "angle_deg": 0.0}
    assert doc["tile_geometry"]["flat_to_flat_mm"] == F2F_MM
    for a, b in zip(doc["tiles"], truth["tiles"]):
        assert (a["id"], a["number"], a["rotation"], a["hex"], a["place"]) == \
               (b["id"], b["number"], b["rotation"], b["hex"], b["place"])
    assert judge_document(doc, players={"A": "red", "B": "yellow"})["player_scores"] == \
        judge_document(truth)["player_scores"]


def test_parse_players():
    assert parse_players("red, Yellow") == {"A": "red", "B": "yellow"}
    assert parse_players("white,blue") == {"A": "green", "B": "blue"}
    for bad in ("red", "red,red", "red,pink"):
        with pytest.raises(ValueError):
            parse_players(bad)


# --- a move --------------------------------------------------------------------------------------------------------


def _move_docs(board: Board, pool: list[int], *, h, n, rot):
    before = truth_doc(board, {"A": [n, *pool[:5]], "B": pool[5:11]})
    after = truth_doc(board.with_tile(h, n, rot), {"A": pool[:5], "B": pool[5:11]})
    return before, after


def test_move_names_the_tile_placed_in_another_frame(position):
    board, pool = position
    h = next(e for e in sorted(board.empty_neighbours()) if board.neighbour_count(e) == 1)
    n = next(n for n in pool if board.fitting_rotations(n, h))
    rot = board.fitting_rotations(n, h)[0]
    before, after = _move_docs(board, [x for x in pool if x != n], h=h, n=n, rot=rot)
    shifted = copy.deepcopy(after)
    for t in shifted["tiles"]:  # the second photo's reader numbers the grid in its own frame
        if t["hex"] is not None:
            q, r = t["hex"]
            t["hex"], t["rotation"] = [q + r + 4, -q - 1], (t["rotation"] + 1) % 6
    out = judge_move_documents(judge_document(before), judge_document(shifted))
    assert out["placed"]["number"] == n and tuple(out["placed"]["hex"]) == h and out["placed"]["rotation"] == rot
    assert out["placed"]["player"] == "A"
    assert out["moved"] == [] and out["vanished"] == []
    assert out["rulings"][0]["rule"] == "TX A1"


def test_move_cli_names_every_rule_broken_and_vanished_tiles(position, tmp_path, capsys):
    board, pool = position
    h = next(e for e in sorted(board.empty_neighbours()) if board.neighbour_count(e) == 1)
    n = next(n for n in pool if any(not board.fitting_rotations(n, h) or r not in board.fitting_rotations(n, h)
                                    for r in range(6)))
    rot = next(r for r in range(6) if r not in board.fitting_rotations(n, h))
    before, after = _move_docs(board, [x for x in pool if x != n], h=h, n=n, rot=rot)
    (tmp_path / "b.json").write_text(json.dumps(before))
    (tmp_path / "a.json").write_text(json.dumps(after))
    assert main(["tantrix-move", str(tmp_path / "b.json"), str(tmp_path / "a.json"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["placed"]["number"] == n and out["legal"] is False
    assert any(r["rule"] == "TX G-2" and r["decision"] == "illegal" and "mismatches" in r["explanation"]
               for r in out["rulings"])
    # a tile gone between the photos: no single placement, the umpire looks
    gone = copy.deepcopy(after)
    gone["tiles"] = [t for t in gone["tiles"] if t["number"] != board[(0, 0)].number]
    (tmp_path / "g.json").write_text(json.dumps(gone))
    assert main(["tantrix-move", str(tmp_path / "b.json"), str(tmp_path / "g.json")]) == 0
    text = capsys.readouterr().out
    assert "vanished: tiles" in text and str(board[(0, 0)].number) in text and "undecided" in text


def test_move_cli_bad_input_is_a_named_error(tmp_path, capsys):
    (tmp_path / "x.json").write_text(json.dumps({"game": "dominoes", "tiles": []}))
    assert main(["tantrix-move", str(tmp_path / "x.json"), str(tmp_path / "x.json")]) == 2
    assert "not a Tantrix scene document" in capsys.readouterr().err
    assert main(["tantrix-move", str(tmp_path / "nope.json"), str(tmp_path / "x.json")]) == 2


# --- analyze, the service route ----------------------------------------------------------------------------------


def test_analyze_cli_json_annotate_and_players(position, fake_vision, tmp_path, capsys):
    board, pool = position
    fake_vision[SIZE_WH[0]] = truth_doc(board, {"A": pool[:6], "B": pool[6:12]})
    photo = write_photo(tmp_path / "p.jpg")
    out_img = tmp_path / "out.jpg"
    assert main(["analyze", str(photo), "--game", "tantrix", "--json", "--annotate", str(out_img),
                 "--players", "blue,green"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["game"] == "tantrix" and doc["legal"] is True
    assert doc["players"] == {"A": {"color": "blue"}, "B": {"color": "green"}}
    assert doc["player_scores"] == {"A": doc["scores"]["blue"], "B": doc["scores"]["green"]}
    assert len(doc["tiles"]) == 26 and doc["calibration"]["source"] == "fake"
    drawn = cv2.imread(str(out_img))
    assert drawn is not None and drawn.shape[:2] == (SIZE_WH[1], SIZE_WH[0])
    assert (np.abs(drawn.astype(int) - 40).sum(axis=2) > 60).sum() > 1000  # something was drawn
    assert main(["analyze", str(photo), "--game", "tantrix"]) == 0
    assert "tiles on the board" in capsys.readouterr().out


def test_analyze_cli_bad_input(fake_vision, tmp_path, capsys):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image")
    assert main(["analyze", str(bad), "--game", "tantrix"]) == 2
    assert "not a readable image" in capsys.readouterr().err
    photo = write_photo(tmp_path / "p.jpg")
    assert main(["analyze", str(photo), "--game", "tantrix", "--players", "red"]) == 2
    assert "--players" in capsys.readouterr().err
    assert main(["analyze", str(photo), "--game", "tantrix", "--calibration", str(bad)]) == 2
    assert "calibration" in capsys.readouterr().err


def test_service_analyzes_a_tantrix_photo(position, fake_vision, tmp_path, db_path):
    board, _ = position
    fake_vision[SIZE_WH[0]] = truth_doc(board)
    photo = write_photo(tmp_path / "p.jpg")
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        r = c.post("/v1/analyze", files={"image": ("p.jpg", photo.read_bytes(), "image/jpeg")},
                   data={"game": "tantrix"})
        assert r.status_code == 200, r.text
        doc = r.json()
        assert doc["game"] == "tantrix" and doc["legal"] is True
        assert all(x["rule"].startswith("TX ") for x in doc["rulings"])
        assert "tantrix" in json.dumps(c.get("/openapi.json").json())


# --- the bench's scoring -----------------------------------------------------------------------------------------


def test_bench_scores_tiles_in_the_readers_own_frame(position):
    board, pool = position
    truth = truth_doc(board, {"A": pool[:3], "B": []})
    tj = judge_document(truth)
    players = {"A": "red", "B": "yellow"}  # the bench gives the read board the truth's players, as --players does
    read = judge_document(reading_document(fake_reading(truth, turn=2, shift=(5, -3))), players=players)
    t = Tally()
    score_board("b0", truth, tj, read, t)
    assert (t.tiles, t.face_rot_ok, t.hex_ok, t.rot_ok, t.missed, t.extra) == (17, 17, 14, 14, 0, 0)
    assert (t.legal_ok, t.players_ok, t.board_ok) == (1, 1, 1) and not t.failures
    # one misread face, one missed tile: named in the failures
    wrong = copy.deepcopy(truth)
    wrong["tiles"][2]["number"] = next(n for n in pool[3:] if n not in board.numbers())
    del wrong["tiles"][5]
    t2 = Tally()
    score_board("b1", truth, tj, judge_document(reading_document(fake_reading(wrong)), players=players), t2)
    assert (t2.face_ok, t2.wrong, t2.missed) == (15, 1, 1)
    assert any("b1: T3" in f and "read as" in f for f in t2.failures)
    assert any("b1: T6" in f and "missed" in f for f in t2.failures)


def test_bench_runs_end_to_end_on_a_fake_reader(position, fake_vision, tmp_path):
    board, pool = position
    paths = []
    for k, width in enumerate((640, 648)):
        truth = truth_doc(board if k == 0 else grow(9, 20)[0])
        fake_vision[width] = truth
        p = write_photo(tmp_path / f"tx_{k}.jpg", width)
        p.with_suffix(".json").write_text(json.dumps(truth))
        paths.append(p)
    ours, base = bench_images(paths, lambda s: None)
    assert ours.boards == 2 and ours.face_rot_ok == ours.tiles == 34
    assert ours.legal_ok == 2 and len(ours.times_ms) == 2
    assert base["tiles"] == 34 and base["face_ok"] == 0  # a blank photo shows the baseline no colour


# --- the real reader on the simulator's samples --------------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tantrix"


def test_analyze_a_sample_photo_with_the_real_reader_finds_the_blocked_space(tmp_path, capsys):
    photo = SAMPLES / "tantrix_06_illegal_blocked.jpg"
    truth = json.loads(photo.with_suffix(".json").read_text())
    assert truth["defect"] == "blocked_space"
    out_img = tmp_path / "out.jpg"
    assert main(["analyze", str(photo), "--game", "tantrix", "--json", "--players", "red,yellow",
                 "--annotate", str(out_img)]) == 0
    doc = json.loads(capsys.readouterr().out)
    # never a false "legal" on a board the simulator made illegal; here the blocked space itself is found
    assert doc["legal"] is False
    assert any(r["rule"] == "TX G-5 R1" and r["decision"] == "illegal" for r in doc["rulings"])
    assert sum(f["blocked"] for f in doc["forced_spaces"]) == 1
    truth_board = sum(t["place"] == "board" for t in truth["tiles"])
    assert abs(doc["counts"]["board"] - truth_board) <= 2
    assert cv2.imread(str(out_img)) is not None


def test_service_analyzes_a_sample_photo_with_the_real_reader(db_path):
    photo = SAMPLES / "tantrix_01_small_hands.jpg"
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        r = c.post("/v1/analyze", files={"image": (photo.name, photo.read_bytes(), "image/jpeg")},
                   data={"game": "tantrix"})
    assert r.status_code == 200, r.text
    doc = r.json()
    # the truth board is legal: the service may send it to the umpire (unread tiles) but never call it illegal
    assert doc["game"] == "tantrix" and doc["tiles"] and doc["legal"] in (True, None)
    assert set(doc["scores"]) == {"red", "yellow", "blue", "green"}


def test_bench_counts_a_crashing_reader_against_every_figure(position, monkeypatch, tmp_path):
    board, _ = position
    mod = types.ModuleType("vision.tantrix")

    def boom(frame, camera=None, **kw):
        raise MemoryError("lattice search too large")

    mod.detect_tantrix = boom
    monkeypatch.setitem(sys.modules, "vision.tantrix", mod)
    p = write_photo(tmp_path / "tx_0.jpg")
    p.with_suffix(".json").write_text(json.dumps(truth_doc(board)))
    ours, _ = bench_images([p], lambda s: None)
    assert (ours.crashed, ours.boards, ours.missed, ours.legal_ok, ours.face_ok) == (1, 1, 14, 0, 0)
    assert "reader failed: MemoryError" in ours.failures[0]


def test_a_photo_without_tiles_is_not_called_legal():
    doc = judge_document({"game": "tantrix", "tiles": []})
    assert doc["legal"] is None and doc["rulings"][0]["decision"] == "undecided"
