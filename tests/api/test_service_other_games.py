"""The service analyses marbles and Ice Tiddly Winks photos with the real pipelines (same answer as the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from service_fakes import service_settings

from api.app import create_app
from api.pipeline import VisionPipeline

REPO = Path(__file__).resolve().parents[2]


def _post(client: TestClient, path: Path, game: str) -> dict:
    r = client.post("/v1/analyze", files={"image": (path.name, path.read_bytes(), "image/jpeg")},
                    data={"game": game})
    assert r.status_code == 200, r.text
    return r.json()


def test_marbles_photo_counts_the_opening_49(db_path: Path) -> None:
    still = REPO / "sample_images" / "marbles" / "marbles_02_group49_ring.jpg"
    truth = json.loads(still.with_suffix(".json").read_text())
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        doc = _post(c, still, "marbles")
    assert doc["counts"]["marbles_on_ring"] == truth["counts"]["marbles_on_ring"] == 49
    assert all(p["kind"] in ("marble", "tolley") for p in doc["pieces"])


def test_ice_photo_is_scored_with_rulings(db_path: Path) -> None:
    still = REPO / "sample_images" / "ice_tiddlywinks" / "ice_01_upright.jpg"
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        doc = _post(c, still, "ice-tiddlywinks")
    assert isinstance(doc["scores"], dict) and doc["pieces"]
    assert all(r["rule"].startswith("IT ") for r in doc["rulings"])
    for p in doc["pieces"]:
        assert p["pose"] in ("upright", "lying", "standing_on_lying", "nested")
