"""A pot whose inside is a wink colour hides potted winks of that colour: the analysis says so, never guesses."""

import json
from pathlib import Path

import cv2
import pytest

from api.analysis import analyze_tiddlywinks_photo
from calibration.camera import CameraModel

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"


def _analyze(name: str) -> dict:
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    frame = cv2.imread(str(SAMPLES / f"{name}.jpg"))
    return analyze_tiddlywinks_photo(frame, CameraModel.from_dict(truth["calibration"]["camera"]))


def test_a_blue_pot_refers_the_blue_potted_count_to_the_umpire():
    doc = _analyze("rigD_03_potted")  # a blue pot with blue winks inside (the truth says so)
    assert doc["pot"]["hides_color"] == "blue"
    refer = [r for r in doc["rulings"] if r["rule"] == "TW 5(c)" and r["decision"] == "refer_to_umpire"]
    assert len(refer) == 1 and refer[0]["colors"] == ["blue"]


@pytest.mark.parametrize("name", ["rigA_02_potted", "rigB_02_potted", "rigE_01_potted"])
def test_a_pot_of_no_wink_colour_hides_nothing(name):
    truth = json.loads((SAMPLES / f"{name}.json").read_text())
    doc = _analyze(name)
    assert doc["pot"]["hides_color"] is None
    assert not any(r["decision"] == "refer_to_umpire" and r["rule"] == "TW 5(c)" for r in doc["rulings"])
    assert truth["pieces"]  # the sample is a real scene
