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


def test_a_squidge_off_with_a_colour_waiting_but_its_squidged_wink_unseen_names_no_winner():
    # seed 9495's squidge-off render: blue's and yellow's squidged winks lie behind a pot, unseen; their unplayed
    # winks wait behind their baselines, so both colours are in the game. Red was named winner with confidence,
    # though blue's hidden wink was nearer.
    from api.analysis import squidge_off_verdict
    from geometry.types import Color, TiddlywinksScene, Wink

    def wink(wid, color, x, y, **kw):
        return Wink(wink_id=wid, color=Color(color), size="small", center_mm=(x, y), **kw)

    waiting = [wink(f"{c}-W{i}", c, sx * 880.0, sy * (330.0 + 20 * i), unplayed=True)
               for c, sx, sy in (("blue", -1, 1), ("green", 1, 1), ("red", 1, -1), ("yellow", -1, -1))
               for i in range(1, 4)]
    squidged = [wink("red-L2", "red", 28.7, -13.8), wink("green-S2", "green", 52.4, -2.0)]
    verdict = squidge_off_verdict(TiddlywinksScene(winks=(*waiting, *squidged)))
    assert verdict["winner"] is None and verdict["decision"] == "undecided"
    assert verdict["rulings"][-1]["colors"] == ["blue", "yellow"]
    assert [r["color"] for r in verdict["ranking"]] == ["red", "green"]
    # with every colour's squidged wink seen, the nearest wins
    seen = [wink("blue-S1", "blue", -60.0, 30.0), wink("yellow-S4", "yellow", -70.0, -40.0)]
    assert squidge_off_verdict(TiddlywinksScene(winks=(*waiting, *squidged, *seen)))["winner"] == "red"
