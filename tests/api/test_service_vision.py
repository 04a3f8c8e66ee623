"""The service on the real vision pipeline, on a sample still: the same document as the library call."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest
from fastapi.testclient import TestClient
from service_fakes import AUTH, service_settings

from api.app import create_app
from api.pipeline import VisionPipeline, jsonable

REPO = Path(__file__).resolve().parents[2]
VOLATILE = ("timing_ms",)  # wall-clock measurements differ between two runs


def sample_still() -> Path:
    for folder in ("tiddlywinks", "synthetic"):
        stills = sorted(p for p in (REPO / "sample_images" / folder).glob("*")
                        if p.suffix.lower() in (".png", ".jpg", ".jpeg") and p.with_suffix(".json").is_file())
        if stills:
            return stills[0]
    pytest.skip("no sample stills under sample_images/ yet")


def test_analyze_matches_the_library_document(db_path: Path) -> None:
    from api.analysis import analyze_tiddlywinks_photo
    still = sample_still()
    expected = jsonable(analyze_tiddlywinks_photo(cv2.imread(str(still), cv2.IMREAD_COLOR)))
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        r = c.post("/v1/analyze", files={"image": (still.name, still.read_bytes(), "image/jpeg")})
        assert r.status_code == 200, r.text
        got = r.json()
        assert {k: v for k, v in got.items() if k not in VOLATILE} == \
            {k: v for k, v in expected.items() if k not in VOLATILE}
        assert all(ruling["rule"].startswith("TW ") for ruling in got["rulings"])
        gid = c.post("/v1/games", json={}, headers=AUTH).json()["id"]
        pushed = c.post(f"/v1/games/{gid}/frames", headers=AUTH,
                        files={"image": (still.name, still.read_bytes(), "image/jpeg")}).json()
        stored = [item["ruling"] for item in pushed["new_rulings"]]
        assert stored and all({**x, "frame_idx": None} in got["rulings"] for x in stored)
