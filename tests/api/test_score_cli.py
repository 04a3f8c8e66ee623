"""``tableref score IMAGE --game ice-tiddlywinks`` on a committed sample with its truth as the calibration."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from api.cli import main
from api.ice_service import annotate_ice, format_ice_report, score_ice_photo
from calibration.camera import CameraModel

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "ice_tiddlywinks"
NAME = "ice_01_upright"


def test_score_cli_json_and_annotation(tmp_path, capsys):
    img, cal = SAMPLES / f"{NAME}.jpg", SAMPLES / f"{NAME}.json"
    out = tmp_path / "ann.jpg"
    rc = main(["score", str(img), "--game", "ice-tiddlywinks", "--calibration", str(cal), "--json",
               "--annotate", str(out)])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    truth = json.loads(cal.read_text())
    assert set(doc["scores"]) >= {c for c, v in truth["scores_visible"].items() if v}
    for p in doc["pieces"]:
        assert {"id", "color", "size", "pose", "points", "center_px", "confidence", "flagged"} <= set(p)
        assert p["size"] in ("small", "medium", "large")
        assert p["pose"] in ("upright", "lying", "standing_on_lying", "nested")
    # every piece that scores was decided; flagged pieces are referred, never silently scored
    assert all(p["points"] == 0 for p in doc["pieces"] if p["flagged"])
    assert any(r["rule"] == "IT Score" and r["decision"] == "winner" for r in doc["rulings"])
    assert cv2.imread(str(out)).shape == cv2.imread(str(img)).shape


def test_start_line_in_mm_returns_own_stash_pieces_unscored():
    truth = json.loads((SAMPLES / f"{NAME}.json").read_text())
    frame = cv2.imread(str(SAMPLES / f"{NAME}.jpg"))
    cam = CameraModel.from_dict(truth["calibration"]["camera"])
    doc = score_ice_photo(frame, cam)
    scored = [p for p in doc["pieces"] if p["points"] > 0]
    assert scored
    p = scored[0]
    x, y = p["center_mm"]
    # that colour's start line 30 mm beside the piece, its stash on the piece's side
    line = {"color": p["color"], "p0": [x - 500.0, y + 30.0], "p1": [x + 500.0, y + 30.0], "frame": "mm",
            "stash_point": [x, y - 100.0]}
    doc2 = score_ice_photo(frame, cam, start_lines=[line])
    again = next(q for q in doc2["pieces"] if q["id"] == p["id"])
    assert again["points"] == 0
    assert any(r["rule"] == "IT Launch" and r["decision"] == "replay" and r["piece_ids"] == [p["id"]]
               for r in doc2["rulings"])
    assert doc2["scores"][p["color"]] <= doc["scores"][p["color"]] - p["points"]  # others may be in it too
    ann = annotate_ice(frame, doc2)
    assert ann.shape == frame.shape and not np.shares_memory(ann, frame)


def test_pixel_start_line_without_calibration_is_a_named_error(tmp_path, capsys):
    img = tmp_path / "blank.jpg"
    cv2.imwrite(str(img), np.full((200, 300, 3), 120, np.uint8))
    rc = main(["score", str(img), "--start-line", "red:0,0,100,0"])
    assert rc == 2
    assert "calibration" in capsys.readouterr().err


def test_report_lines_carry_conditions_and_baseline():
    tally = {k: 1 for k in ("pieces", "pose_n", "found", "pose_ok", "size_ok", "color_ok", "images", "score_ok")}
    tally.update(flagged=0, extra=0, score_resolved_ok=1, silent_wrong=0, silent_extra=0, missed=0)
    lines = format_ice_report({"ours": tally, "baseline": tally, "failures": [], "times": {"1920x1080": [1.0]},
                               "n_images": 1})
    assert "calibrated camera" in lines[0]
    assert all("baseline" in line for line in lines[1:5]) and all("PASS" in line for line in lines[1:5])


def test_bench_tally_breaks_each_piece_down_by_the_verdict_it_got_wrong():
    from api.ice_service import _new_tally, _tally_image

    def piece(pid, x, size, pose="upright", color="red"):
        return {"id": pid, "color": color, "size": size, "pose": pose, "points": 0, "hidden": False,
                "base_corners_mm": [[x - 5, -5, 0], [x + 5, -5, 0], [x + 5, 5, 0], [x - 5, 5, 0]],
                "apex_mm": [x, 0, 30]}

    truth = {"pieces": [piece("a", 0, "large"), piece("b", 100, "small"), piece("c", 200, "medium")],
             "scores_visible": {"red": 6}}
    found = [{"xy": np.array([0.5, 0.0]), "color": "red", "size": "medium", "pose": "upright", "points": 2,
              "flagged": True},
             {"xy": np.array([100.0, 1.0]), "color": "blue", "size": "small", "pose": "lying", "points": 0},
             {"xy": np.array([400.0, 0.0]), "color": "red", "size": "small", "pose": "upright", "points": 1}]
    tally, fails = _new_tally(), []
    _tally_image(truth, found, tally, "img", fails)
    assert (tally["wrong_size_flagged"], tally["wrong_size_silent"]) == (1, 0)
    assert (tally["wrong_pose_silent"], tally["wrong_color_silent"]) == (1, 1)
    assert (tally["missed"], tally["extra"], tally["silent_wrong"]) == (1, 1, 1)
    lines = format_ice_report({"ours": tally, "baseline": tally, "failures": fails, "times": {}, "n_images": 1})
    assert any("wrong size 1 (1 flagged)" in line and "missed 1" in line for line in lines)
