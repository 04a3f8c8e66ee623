"""``tableref analyze`` and ``tableref squidge-off`` on a small synthetic photograph with a stored calibration."""

import json
import math
import sys
from pathlib import Path

import cv2
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
from synth import SynthWink, default_camera, render

from api.cli import main
from calibration.types import TableCalibration


@pytest.fixture(scope="module")
def squidge_off_photo(tmp_path_factory):
    """One wink per colour near the pot: red clearly nearest (edge 6 mm from the axis... 25 mm from the base)."""
    d = tmp_path_factory.mktemp("squidge")
    cam = default_camera(1920, 1080)
    winks = [SynthWink("r", "red", "small", (0.0, -52.0)),      # key 44
             SynthWink("b", "blue", "large", (75.0, 10.0)),      # key 64.7
             SynthWink("g", "green", "small", (-70.0, 40.0)),    # key 72.6
             SynthWink("y", "yellow", "large", (-20.0, 110.0))]  # key 100.8
    img = render(winks, cam, seed=9)
    img_path = d / "squidge.jpg"
    cv2.imwrite(str(img_path), img)
    cal_path = d / "cal.json"
    TableCalibration.from_camera(cam).to_json(cal_path)
    return img_path, cal_path


def test_analyze_json_document(squidge_off_photo, capsys, tmp_path):
    img_path, cal_path = squidge_off_photo
    out_jpg = tmp_path / "ann.jpg"
    assert main(["analyze", str(img_path), "--game", "tiddlywinks", "--calibration", str(cal_path), "--json",
                 "--annotate", str(out_jpg)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["pieces"]) == 4
    assert {p["color"] for p in doc["pieces"]} == {"red", "blue", "green", "yellow"}
    red = next(p for p in doc["pieces"] if p["color"] == "red")
    assert math.dist(red["center_mm"], (0.0, -52.0)) < 0.6
    assert red["size"] == "small" and red["potted"] is False and red["out_of_bounds"] is False
    assert doc["calibration"]["source"] == "truth"
    assert isinstance(doc["rulings"], list)
    annotated = cv2.imread(str(out_jpg))
    assert annotated is not None and annotated.shape[:2] == (1080, 1920)


def test_analyze_summary_without_json(squidge_off_photo, capsys):
    img_path, cal_path = squidge_off_photo
    assert main(["analyze", str(img_path), "--calibration", str(cal_path)]) == 0
    text = capsys.readouterr().out
    assert "4 winks" in text


def test_squidge_off_names_the_nearest_colour(squidge_off_photo, capsys):
    img_path, cal_path = squidge_off_photo
    assert main(["squidge-off", str(img_path), "--calibration", str(cal_path), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["winner"] == "red"
    assert verdict["resquidge"] == []
    ranking = {r["color"]: r for r in verdict["ranking"]}
    assert ranking["red"]["distance_mm"] == pytest.approx(44.0, abs=0.6)
    assert all(r["uncertainty_mm"] < 1.0 for r in verdict["ranking"])


def test_analyze_missing_file_is_a_clean_error(capsys):
    assert main(["analyze", "/nonexistent/photo.jpg"]) == 2
    assert "no such file" in capsys.readouterr().err
