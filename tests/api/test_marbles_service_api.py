"""Ring marbles through the service: one shot from two photos, a match followed photo by photo (set-up check,
tolleys named by where they rested, running scores, eliminations, the next shooter, annotated pictures, kept
across a restart), and the annotated picture of any still photo."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.pipeline import VisionPipeline
from calibration.types import TableCalibration
from service_fakes import TOKEN, FakePipeline, service_settings

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "marbles"
MARBLE_MM = 12.7


def close_packed(n: int) -> list[list[float]]:
    """``n`` touching marbles on a hexagonal lattice, nearest the ring centre first."""
    pts = [(MARBLE_MM * (i + 0.5 * j), MARBLE_MM * math.sqrt(3) / 2 * j) for i in range(-6, 7) for j in range(-6, 7)]
    pts.sort(key=lambda p: (math.hypot(*p), p))
    return [[round(x, 3), round(y, 3)] for x, y in pts[:n]]


def ring_doc(marbles_on: int, tolleys: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """An analysis document: ``marbles_on`` marbles close-packed on the ring, tolleys (id -> centre) on it."""
    pieces = [{"id": f"m{i}", "kind": "marble", "center_mm": c, "on_ring": True, "diameter_mm": MARBLE_MM}
              for i, c in enumerate(close_packed(marbles_on))]
    pieces += [{"id": tid, "kind": "tolley", "center_mm": list(c), "on_ring": True, "diameter_mm": 17.0}
               for tid, c in (tolleys or {}).items()]
    return {"game": "marbles", "pieces": pieces,
            "counts": {"marbles_on_ring": marbles_on, "marbles_off_ring": 0,
                       "tolleys_on_ring": len(tolleys or {}), "tolleys_off_ring": 0}}


class ScriptedMarbles(FakePipeline):
    """Each photo is a flat grey whose level picks the document the test scripted for it."""

    def __init__(self) -> None:
        super().__init__()
        self.docs: dict[int, dict[str, Any]] = {}

    def photo(self, doc: dict[str, Any]) -> bytes:
        level = 10 + 5 * len(self.docs)
        self.docs[level] = doc
        img = np.full((240, 320, 3), level, np.uint8)
        img[0, 0] = 0  # not uniform: the fake refuses a uniform frame as 'no mat'
        return cv2.imencode(".png", img)[1].tobytes()

    def analyze(self, game: str, frame_bgr: np.ndarray, calibration: dict[str, Any] | None) -> dict[str, Any]:
        if game != "marbles":
            return super().analyze(game, frame_bgr, calibration)
        self.calls += 1
        return self.docs[int(frame_bgr[5, 5, 0])]


@pytest.fixture
def scripted() -> ScriptedMarbles:
    return ScriptedMarbles()


@pytest.fixture
def mclient(db_path: Path, scripted: ScriptedMarbles):
    with TestClient(create_app(service_settings(db_path), pipeline=scripted)) as c:
        yield c


def _file(data: bytes, name: str = "ring.png") -> tuple[str, bytes, str]:
    return (name, data, "image/png")


def test_one_shot_from_two_photos(mclient, scripted):
    before = scripted.photo(ring_doc(10, {"t1": (300.0, 0.0)}))
    after = scripted.photo(ring_doc(8, {"t7": (-150.0, 40.0)}))  # t1 knocked off; the shooter's tolley rests
    r = mclient.post("/v1/marbles/shot", files={"before": _file(before), "after": _file(after)},
                     data={"shooter": "B", "owners": "t1=A"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["shot"]["marbles_off"] == 2 and out["shot"]["tolleys_knocked_off"] == ["A"]
    assert out["rulings"][0]["rule"] == "MB 5(d)4" and out["scores"] == {"B": 2} and out["eliminated"] == ["A"]
    assert out["before_counts"]["marbles_on_ring"] == 10 and out["after_counts"]["marbles_on_ring"] == 8
    bad = mclient.post("/v1/marbles/shot", files={"before": _file(before), "after": _file(after)},
                       data={"owners": "t1:A"})
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_owner"


def test_match_photo_by_photo(mclient, scripted, db_path):
    r = mclient.post("/v1/marbles/matches", json={"kind": "individual", "players": ["Ann", "Bob"]}, headers=AUTH)
    assert r.status_code == 201, r.text
    mid, s = r.json()["id"], r.json()["summary"]
    assert (s["marbles_start"], s["win_points"], s["next_shooter"]) == (25, 13, "Ann")  # MB 11(b),(c)

    def shot(doc, **form):
        return mclient.post(f"/v1/marbles/matches/{mid}/shots", files={"after": _file(scripted.photo(doc))},
                            data=form, headers=AUTH)

    early = shot(ring_doc(25))
    assert early.status_code == 422 and "no position before this shot" in early.json()["detail"]

    setup = mclient.post(f"/v1/marbles/matches/{mid}/position", files={"image": _file(scripted.photo(ring_doc(25)))},
                         headers=AUTH).json()
    assert [(x["rule"], x["decision"]) for x in setup["rulings"]] == [("MB 11(b)", "legal")]

    # Ann knocks two off and her tolley stays on: she shoots again from where it lies (MB 5(d)4).
    one = shot(ring_doc(23, {"t3": (300.0, 0.0)})).json()
    assert one["rulings"][0]["rule"] == "MB 5(d)4" and one["scores"] == {"Ann": 2}
    assert one["next_shooter"] == "Ann" and one["summary"]["tolleys_on_ring_mm"] == {"Ann": [300.0, 0.0]}
    # She shoots from it (named by position, no id typed) and nothing goes off: it rests there (MB 5(d)3).
    two = shot(ring_doc(23, {"t9": (310.0, 20.0)})).json()
    assert two["shot"]["tolleys_knocked_off"] == [] and two["rulings"][0]["rule"] == "MB 5(d)3"
    assert two["next_shooter"] == "Bob" and two["summary"]["tolleys_on_ring_mm"] == {"Ann": [310.0, 20.0]}
    # Bob knocks one marble and Ann's resting tolley off; his own tolley leaves the ring: Ann is out.
    three = shot(ring_doc(22)).json()
    assert three["rulings"][0]["rule"] == "MB 5(d)2" and three["scores"] == {"Ann": 2, "Bob": 1}
    assert three["eliminated"] == ["Ann"] and three["next_shooter"] == "Bob" and three["marbles_left"] == 22
    assert any(x["decision"] == "forfeit" and x["colors"] == ["Ann"] for x in three["rulings"])

    wrong = shot(ring_doc(22), shooter="Ann")
    assert wrong.status_code == 422 and "eliminated" in wrong.json()["detail"]

    pic = mclient.get(three["annotated_url"])
    assert pic.status_code == 200 and pic.headers["content-type"] == "image/jpeg"
    assert cv2.imdecode(np.frombuffer(pic.content, np.uint8), cv2.IMREAD_COLOR).shape == (240, 320, 3)
    assert mclient.get(f"/v1/marbles/matches/{mid}/records/99/annotated.jpg").status_code == 404

    # Kept across a restart, with every record in order.
    with TestClient(create_app(service_settings(db_path), pipeline=scripted)) as again:
        m = again.get(f"/v1/marbles/matches/{mid}").json()
    assert [x["kind"] for x in m["records"]] == ["position", "shot", "shot", "shot"]
    assert m["summary"]["scores"] == {"Ann": 2, "Bob": 1} and m["summary"]["eliminated"] == ["Ann"]


def test_a_tolley_nobody_rested_is_referred_not_guessed(mclient, scripted):
    mid = mclient.post("/v1/marbles/matches", json={"kind": "tie_break", "players": ["Ann", "Bob"]},
                       headers=AUTH).json()["id"]
    mclient.post(f"/v1/marbles/matches/{mid}/position", headers=AUTH,
                 files={"image": _file(scripted.photo(ring_doc(13, {"t5": (200.0, 0.0)})))})
    out = mclient.post(f"/v1/marbles/matches/{mid}/shots", headers=AUTH,
                       files={"after": _file(scripted.photo(ring_doc(12)))}).json()
    assert out["eliminated"] == [] and out["shot"]["unowned_tolleys_knocked_off"] == ["t5"]
    assert any(x["decision"] == "refer_to_umpire" for x in out["rulings"])


def test_team_match_order_and_errors(mclient):
    teams = {"A1": "Alpha", "A2": "Alpha", "B1": "Beta", "B2": "Beta"}
    r = mclient.post("/v1/marbles/matches", json={"kind": "team", "players": list(teams), "teams": teams},
                     headers=AUTH)
    assert r.status_code == 201 and r.json()["summary"]["order"] == ["A1", "B1", "A2", "B2"]  # MB 9(c)
    assert r.json()["summary"]["marbles_start"] == 49 and r.json()["summary"]["win_points"] == 25
    no_teams = mclient.post("/v1/marbles/matches", json={"kind": "team", "players": ["A", "B"]}, headers=AUTH)
    assert no_teams.status_code == 422 and "teams" in no_teams.json()["detail"]
    bad_order = mclient.post("/v1/marbles/matches", headers=AUTH,
                             json={"kind": "individual", "players": ["A", "B"], "order": ["A", "C"]})
    assert bad_order.status_code == 422 and "playing order" in bad_order.json()["detail"]
    assert mclient.post("/v1/marbles/matches", json={"kind": "individual", "players": ["A", "B"]}).status_code == 401
    assert mclient.get("/v1/marbles/matches/m_nope").status_code == 404


def test_annotated_still_photo(client):
    img = np.random.default_rng(3).integers(0, 255, (200, 300, 3), dtype=np.uint8)
    r = client.post("/v1/analyze/annotated", files={"image": ("t.png", cv2.imencode(".png", img)[1].tobytes(),
                                                                 "image/png")})
    assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
    assert int(r.headers["x-tableref-rulings"]) == 2
    assert cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR).shape == (200, 300, 3)


@pytest.mark.skipif(not (SAMPLES / "marbles_03_group13.jpg").exists(), reason="marbles samples not built")
def test_annotated_marbles_photo_through_the_real_vision(db_path):
    """A stored calibration and a real analysis: the picture comes back at the photo's size."""
    truth = json.loads((SAMPLES / "marbles_03_group13.json").read_text())
    cal = TableCalibration.from_dict({**truth["calibration"], "source": "truth", "reprojection_error_mm": 0.0})
    data = (SAMPLES / "marbles_03_group13.jpg").read_bytes()
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        cal_id = c.app.state.storage.add_calibration("truth", cal.to_dict())["id"]
        r = c.post("/v1/analyze/annotated", files={"image": ("g.jpg", data, "image/jpeg")},
                   data={"game": "marbles", "calibration_id": cal_id})
    assert r.status_code == 200, r.text
    pic = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
    assert pic.shape == cv2.imread(str(SAMPLES / "marbles_03_group13.jpg")).shape
    drawn = np.abs(pic.astype(int) - cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)).max(axis=2) > 80
    assert drawn.mean() > 0.001  # ball outlines and labels, far beyond JPEG noise
