"""Who plays first from a photo of the drop (MB 9(f)): ``tableref marbles-drop`` and ``POST /v1/marbles/drop``."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.cli import main
from api.pipeline import VisionPipeline
from calibration.types import TableCalibration
from service_fakes import service_settings

SAMPLE = Path(__file__).resolve().parents[2] / "sample_images" / "marbles" / "marbles_08_tolleys_centre"
pytestmark = pytest.mark.skipif(not SAMPLE.with_suffix(".jpg").exists(), reason="marbles samples not built")


def _truth_first() -> tuple[dict, str]:
    """The truth and the id of the tolley nearest the scribed line."""
    truth = json.loads(SAMPLE.with_suffix(".json").read_text())
    p0, p1 = (np.asarray(truth["scribed_line"][k]) for k in ("p0_mm", "p1_mm"))
    n = np.array([-(p1 - p0)[1], (p1 - p0)[0]]) / np.linalg.norm(p1 - p0)
    tolleys = [p for p in truth["pieces"] if p["kind"] == "tolley"]
    return truth, min(tolleys, key=lambda p: abs(float((np.asarray(p["center_mm"]) - p0) @ n)))["center_mm"]


def test_cli_names_the_tolley_nearest_the_line(tmp_path, capsys):
    truth, first_xy = _truth_first()
    cam = tmp_path / "cam.json"
    cam.write_text(json.dumps(truth["calibration"]["camera"]))
    out_jpg = tmp_path / "drop.jpg"
    assert main(["marbles-drop", str(SAMPLE.with_suffix(".jpg")), "--calibration", str(cam), "--owner", "t1=Ann",
                 "--json", "--annotate", str(out_jpg)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["distance_mm"] for d in doc["drops"]] == sorted(d["distance_mm"] for d in doc["drops"])
    ruling = doc["rulings"][0]
    assert ruling["rule"] == "MB 9(f)" and ruling["decision"] == "winner"
    nearest = doc["drops"][0]
    assert np.linalg.norm(np.subtract(nearest["center_mm"], first_xy)) < 10.0
    assert ruling["colors"][0] == nearest["player"] and any(d["player"] == "Ann" for d in doc["drops"])
    assert cv2.imread(str(out_jpg)).shape == (1080, 1920, 3)
    assert main(["marbles-drop", str(SAMPLE.with_suffix(".jpg")), "--calibration", str(cam),
                 "--owner", "t9=Zed"]) == 2
    assert "no tolley on the ring with id t9" in capsys.readouterr().err


def test_service_drop(db_path):
    truth, _ = _truth_first()
    cal = TableCalibration.from_dict({**truth["calibration"], "source": "truth", "reprojection_error_mm": 0.0})
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        cal_id = c.app.state.storage.add_calibration("truth", cal.to_dict())["id"]
        r = c.post("/v1/marbles/drop", files={"image": ("d.jpg", SAMPLE.with_suffix(".jpg").read_bytes(), "image/jpeg")},
                   data={"calibration_id": cal_id, "individual": "true"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["scribed_line"]["length_mm"] > 1000 and len(doc["drops"]) == 3
    assert doc["rulings"][0]["interpretations"] == ["MB I-2", "MB I-3"]
