"""``tableref analyze --game dominoes``, ``tableref dominoes-hands``, the service and the dominoes bench."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from service_fakes import service_settings

from api.app import create_app
from api.bench_dominoes import Tally, baseline_tiles, score
from api.cli import main
from api.dominoes_service import analyze_dominoes_photo, annotate_dominoes, layout_of, settle_hands
from api.pipeline import VisionPipeline
from geometry.dominoes import Bone, PlacedTile

REAL = Path(__file__).resolve().parents[3] / "shared" / "real_images" / "dominoes"


@pytest.fixture(scope="module")
def render(tmp_path_factory) -> Path:
    from simulation.dominoes import render_dominoes_item

    return render_dominoes_item(tmp_path_factory.mktemp("dm"), seed=4242, index=0, size_wh_px=(1280, 960))


def test_analyze_json_has_tiles_layout_and_rulings(render, capsys):
    assert main(["analyze", str(render), "--game", "dominoes", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    truth = json.loads(render.with_suffix(".json").read_text())
    assert doc["game"] == "dominoes"
    assert doc["counts"]["tiles"] == len(doc["tiles"]) > 0
    for t in doc["tiles"]:
        assert len(t["outline_px"]) == 4 and len(t["outline_mm"]) == 4
        assert t["flagged"] == (t["face_up"] and t["pips"] is None)
    truth_pips = sorted(sorted(t["pips"]) for t in truth["tiles"] if t["pips"] is not None)
    read = [sorted(t["pips"]) for t in doc["tiles"] if t["pips"] is not None]
    assert all(p in truth_pips for p in read)
    assert all(r["rule"] == "DM P2" for r in doc["rulings"])
    assert doc["layout"]["legal"] in (True, False, None)


def test_analyze_summary_and_annotation(render, tmp_path, capsys):
    out = tmp_path / "ann.jpg"
    assert main(["analyze", str(render), "--game", "dominoes", "--annotate", str(out)]) == 0
    text = capsys.readouterr().out
    assert "tiles:" in text and "layout:" in text
    frame, ann = cv2.imread(str(render)), cv2.imread(str(out))
    assert ann.shape == frame.shape and np.abs(ann.astype(int) - frame.astype(int)).sum() > 0


def test_bad_join_is_drawn_and_ruled():
    a = PlacedTile(tile_id="A", center_mm=(0.0, 0.0), angle_deg=0.0, bone=Bone(a=1, b=5))
    b = PlacedTile(tile_id="B", center_mm=(49.0, 0.0), angle_deg=0.0, bone=Bone(a=4, b=2))
    lay = layout_of([a, b])
    assert lay["legal"] is False and lay["bad_joins"] == 1
    doc = {"tiles": [{"id": "A", "outline_px": [[0, 0], [40, 0], [40, 20], [0, 20]], "center_px": [20, 10],
                      "face_up": True, "pips": [1, 5]},
                     {"id": "B", "outline_px": [[41, 0], [81, 0], [81, 20], [41, 20]], "center_px": [61, 10],
                      "face_up": True, "pips": [4, 2]}],
           "layout": {"joins": [{"tile": "A", "other": "B", "matches": False}]}}
    img = np.full((40, 100, 3), 128, np.uint8)
    ann = annotate_dominoes(img, doc)
    assert (ann[10, 25:55, 2] > 200).any() and (ann[10, 25:55, 0] < 60).any()  # a red line between the two


def test_bad_input_exits_2_with_a_named_problem(tmp_path, capsys):
    bad = tmp_path / "x.jpg"
    bad.write_bytes(b"not a jpeg")
    assert main(["analyze", str(bad), "--game", "dominoes"]) == 2
    assert "not a readable image" in capsys.readouterr().err
    assert main(["dominoes-hands", str(tmp_path / "missing.jpg")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(ValueError, match="must be a colour image"):
        analyze_dominoes_photo(np.zeros((50, 50), np.uint8))


def test_hands_need_one_photo_per_player(render, capsys):
    assert main(["dominoes-hands", str(render), "--players", "3"]) == 2
    assert "3 players but 1 hand photos" in capsys.readouterr().err


def test_hands_unread_tile_is_not_guessed(render):
    frame = cv2.imread(str(render))
    doc = settle_hands([("a.jpg", frame), ("b.jpg", frame)])
    # the same photo twice: a tie, or undecided when a tile in it is unread
    assert doc["decision"] in ("winner", "undecided")
    if doc["decision"] == "winner":
        assert doc["winners"] == ["a", "b"]
    else:
        assert any(h["unread"] for h in doc["hands"])


@pytest.mark.skipif(not (REAL / "labels.json").exists(), reason="../shared/real_images is not beside the checkout")
def test_hands_from_real_single_tile_photos(capsys):
    paths = [REAL / f"pd_single_img_{n}.jpg" for n in ("0350", "0354", "0359")]
    assert main(["dominoes-hands", *map(str, paths), "--players", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [h["pips"] for h in doc["hands"]] == [2, 4, 5]
    assert doc["winners"] == ["pd_single_img_0350"] and doc["rulings"][0]["rule"] == "DM A3"


@pytest.mark.skipif(not (REAL / "labels.json").exists(), reason="../shared/real_images is not beside the checkout")
def test_hands_in_marked_regions_of_one_photo(tmp_path, capsys):
    # three real single-tile photos side by side: one photo, each hand in its own region
    tiles = [cv2.imread(str(REAL / f"pd_single_img_{n}.jpg")) for n in ("0350", "0354", "0359")]
    photo = tmp_path / "hands.jpg"
    cv2.imwrite(str(photo), np.concatenate(tiles, axis=1))
    w = tiles[0].shape[1]
    regions = [f"--region={p}={i * w},0,{(i + 1) * w - 1},{tiles[0].shape[0]}" for i, p in enumerate("ABC")]
    assert main(["dominoes-hands", str(photo), *regions, "--players", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(h["player"], h["pips"]) for h in doc["hands"]] == [("A", 2), ("B", 4), ("C", 5)]
    assert doc["winners"] == ["A"] and doc["outside_regions"] == []
    # C's region left out: its 5-0 lies in no region and could be A's (2 + 5 > 4), so no winner is named
    assert main(["dominoes-hands", str(photo), *regions[:2], "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["decision"] == "undecided" and [o["tile"] for o in doc["outside_regions"]] == ["5-0"]


@pytest.mark.parametrize("args, problem", [
    (["--region", "A=0,0,10,10"], "mark one region per player"),
    (["--region", "A=0,0,10,10", "--region", "B=5,5,20,20"], "overlap"),
    (["--region", "A=0,0,10", "--region", "B=20,0,30,10"], "expected NAME=X0,Y0,X1,Y1"),
    (["--region", "A=10,0,0,10", "--region", "B=20,0,30,10"], "X1 must exceed X0"),
    (["--region", "A=0,0,10,10", "--region", "A=20,0,30,10"], "each player's name once"),
    (["--region", "A=0,0,10,10", "--region", "B=9000,0,9900,10"], "lies outside"),
])
def test_bad_hand_regions_are_named(render, capsys, args, problem):
    assert main(["dominoes-hands", str(render), *args]) == 2
    assert problem in capsys.readouterr().err


def test_service_analyzes_a_dominoes_photo(render, db_path: Path):
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        r = c.post("/v1/analyze", files={"image": (render.name, render.read_bytes(), "image/jpeg")},
                   data={"game": "dominoes"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["game"] == "dominoes" and doc["tiles"]


def test_bench_scoring_counts_wrong_flagged_and_missed():
    truth = [{"id": "t", "pips": [1, 2], "face_up": True, "outline_px": [[0, 0], [10, 0], [10, 20], [0, 20]]},
             {"id": "u", "pips": [3, 3], "face_up": True, "outline_px": [[20, 0], [30, 0], [30, 20], [20, 20]]},
             {"id": "v", "pips": [0, 0], "face_up": True, "outline_px": [[40, 0], [50, 0], [50, 20], [40, 20]]},
             {"id": "w", "pips": [4, 5], "face_up": True, "outline_px": [[60, 0], [70, 0], [70, 20], [60, 20]]}]
    found = [{"center_px": [5, 10], "pips": [2, 1], "face_up": True},
             {"center_px": [25, 10], "pips": [3, 4], "face_up": True},
             {"center_px": [45, 10], "pips": None, "face_up": True},
             {"center_px": [200, 10], "pips": [0, 1], "face_up": True}]
    t = Tally()
    score(truth, found, t, "x")
    assert (t.exact, t.wrong, t.flagged, t.missed, t.extra) == (1, 1, 1, 1, 1)


def test_baseline_runs_on_a_render(render):
    tiles = baseline_tiles(cv2.imread(str(render)))
    assert isinstance(tiles, list)
    for t in tiles:
        assert len(t["pips"]) == 2


def test_with_the_camera_tiles_land_where_they_lie_on_the_table(render):
    truth = json.loads(render.with_suffix(".json").read_text())
    doc = analyze_dominoes_photo(cv2.imread(str(render)), str(render.with_suffix(".json")))
    assert doc["calibration"]["source"] == "camera"
    errs, width_errs = [], []
    for t in doc["tiles"]:
        if t["pips"] is None:
            continue
        c = np.asarray(t["center_mm"])
        near = min(truth["tiles"], key=lambda x: float(np.linalg.norm(np.asarray(x["center_mm"]) - c)))
        errs.append(float(np.linalg.norm(np.asarray(near["center_mm"]) - c)))
        width_errs.append(abs(t["width_mm"] - near["width_mm"]))
    assert errs, "no tile read"
    assert float(np.median(errs)) < 1.5
    assert float(np.median(width_errs)) < 1.5


def test_layout_with_a_tile_past_an_unseen_one_is_undecided_not_legal():
    """A missed tile between an open end and a lone tile hides two joins: the bad one may be among them."""
    line = [PlacedTile(tile_id="A", center_mm=(0.0, 0.0), angle_deg=0.0, bone=Bone(a=1, b=5)),
            PlacedTile(tile_id="B", center_mm=(49.0, 0.0), angle_deg=0.0, bone=Bone(a=5, b=3))]
    assert layout_of(line)["legal"] is True
    lone = PlacedTile(tile_id="C", center_mm=(147.0, 0.0), angle_deg=0.0, bone=Bone(a=6, b=4))
    lay = layout_of([*line, lone])
    assert lay["legal"] is None and [(g["tile"], g["half"], g["beyond"]) for g in lay["gaps"]] == [("B", "b", "C")]
    # the unseen tile's place: in line, between B's end (x = 73.5) and C (x = 123)
    np.testing.assert_allclose(np.mean(lay["gaps"][0]["unseen_outline_mm"], axis=0), (98.5, 0.0), atol=1.5)
    hand = PlacedTile(tile_id="H", center_mm=(49.0, 80.0), angle_deg=0.0, bone=Bone(a=6, b=4))
    assert layout_of([*line, hand])["legal"] is True  # a hand tile beside the line is no gap


def test_without_a_calibration_tiles_are_measured_in_the_plane_the_read_tiles_fix():
    """Seen obliquely (the far side of the picture at 70 % of the near side's scale), every tile of the set is
    still 24 x 48 mm and the line's joins close: the plane of the tile tops is fitted to the tiles read, not
    assumed square to the camera."""
    from tests.vision.test_dominoes_plane import _scene

    img, _ = _scene()
    doc = analyze_dominoes_photo(img)
    assert doc["calibration"]["source"] == "tile_plane"
    read = [t for t in doc["tiles"] if t["pips"] is not None]
    assert len(read) == 7
    for t in read:
        assert t["width_mm"] == pytest.approx(24.0, abs=0.5) and t["length_mm"] == pytest.approx(48.0, abs=1.0)
