"""HTTP API of the referee service with a fake pipeline: every endpoint and every bad input is a clear 4xx."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient
from service_fakes import (
    AUTH,
    CORNERS_PX,
    FakePipeline,
    jpeg_bytes,
    png_bytes,
    png_header_only,
    service_settings,
    table_image,
)

from api.app import create_app
from api.pipeline import VisionPipeline

PNG = png_bytes(table_image())


def upload(data: bytes, name: str = "table.png", mime: str = "image/png") -> dict:
    return {"image": (name, data, mime)}


def new_game(client: TestClient, **body: object) -> str:
    r = client.post("/v1/games", json=body, headers=AUTH)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def assert_error(r, status: int, code: str) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["error"] == code
    assert body["detail"]
    return body


# --- meta ----------------------------------------------------------------------------------------------------
def test_health_reports_wal_and_supported_games(client: TestClient) -> None:
    body = client.get("/v1/health").json()
    assert body["status"] == "ok"
    assert body["database"] == "wal"
    assert body["supported_games"] == ["tiddlywinks"]


def test_openapi_is_versioned_and_declares_bearer_auth(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert all(p.startswith("/v1/") for p in spec["paths"])
    for path in ("/v1/analyze", "/v1/squidge-off", "/v1/calibrations", "/v1/calibrations/{calibration_id}",
                 "/v1/games", "/v1/games/{game_id}", "/v1/games/{game_id}/frames", "/v1/games/{game_id}/source",
                 "/v1/games/{game_id}/feed.mjpg", "/v1/games/{game_id}/rulings"):
        assert path in spec["paths"], path
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    assert spec["paths"]["/v1/games"]["post"].get("security")


def test_umpire_page_and_assets_are_served(client: TestClient) -> None:
    r = client.get("/umpire")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    for needle in ('id="feed"', 'id="rulings"', 'id="squop-graph"', 'id="score"', 'id="squidge"',
                   'id="distance"', 'id="source-status"'):
        assert needle in r.text
    assert client.get("/static/umpire.js").status_code == 200
    assert client.get("/static/umpire.css").status_code == 200
    assert client.get("/", follow_redirects=False).headers["location"] == "/umpire"


# --- analyze ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("encode,name,mime", [(png_bytes, "t.png", "image/png"), (jpeg_bytes, "t.jpg", "image/jpeg")])
def test_analyze_returns_the_analysis_document(client: TestClient, encode, name: str, mime: str) -> None:
    r = client.post("/v1/analyze", files=upload(encode(table_image()), name, mime), data={"game": "tiddlywinks"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert {"pieces", "pot", "mat", "rulings", "squidge_off"} <= set(doc)
    assert doc["rulings"][0]["rule"] == "TW 7(a)"


def test_analyze_uses_a_stored_calibration(client: TestClient) -> None:
    cal = client.post("/v1/calibrations/corners", headers=AUTH,
                      json={"corners_px": CORNERS_PX, "image_size_wh_px": [640, 340]}).json()
    r = client.post("/v1/analyze", files=upload(PNG), data={"calibration_id": cal["id"]})
    assert r.status_code == 200
    assert r.json()["calibration"]["source"] == "corners"


def test_analyze_needs_no_token(client: TestClient) -> None:
    assert client.post("/v1/analyze", files=upload(PNG)).status_code == 200


def bmp_truncated() -> bytes:
    import cv2
    _, buf = cv2.imencode(".bmp", table_image())
    return buf.tobytes()[:500]


def webp_truncated() -> bytes:
    import cv2
    _, buf = cv2.imencode(".webp", table_image())
    return buf.tobytes()[:200]


def corrupt_png() -> bytes:
    data = bytearray(PNG)
    data[60:400] = b"\x00" * 340  # garbage in the compressed pixel data, header and IEND intact
    return bytes(data)


BAD_UPLOADS = [
    ("empty", b"", 400, "empty_upload"),
    ("text", b"this is not a picture at all", 415, "not_an_image"),
    ("pdf", b"%PDF-1.4\n" + b"0" * 100, 415, "not_an_image"),
    ("truncated-png", PNG[: len(PNG) // 2], 422, "truncated_image"),
    ("truncated-jpeg", jpeg_bytes(table_image())[:3000], 422, "truncated_image"),
    ("truncated-bmp", bmp_truncated(), 422, "truncated_image"),
    ("truncated-webp", webp_truncated(), 422, "truncated_image"),
    ("header-only-png", PNG[:20], 422, "corrupt_image"),
    ("corrupt-png", corrupt_png(), 422, "corrupt_image"),
    ("jpeg-garbage", b"\xff\xd8\xff" + b"\x13" * 200, 422, "corrupt_image"),
    ("48-megapixels", png_header_only(8000, 6000), 413, "image_too_large"),
    ("no-mat", png_bytes(np.zeros((60, 80, 3), np.uint8)), 422, "no_mat_found"),
]


@pytest.mark.parametrize("data,status,code", [b[1:] for b in BAD_UPLOADS], ids=[b[0] for b in BAD_UPLOADS])
@pytest.mark.parametrize("endpoint", ["/v1/analyze", "/v1/squidge-off"])
def test_bad_uploads_are_clear_4xx(client: TestClient, endpoint: str, data: bytes, status: int, code: str) -> None:
    assert_error(client.post(endpoint, files=upload(data)), status, code)


def test_upload_over_25_megabytes_is_refused(client: TestClient) -> None:
    data = PNG[:8] + b"\x00" * (25 * 1024 * 1024)
    body = assert_error(client.post("/v1/analyze", files=upload(data)), 413, "image_too_large")
    assert "25 MB" in body["detail"]


def test_missing_file_field_is_422(client: TestClient) -> None:
    assert_error(client.post("/v1/analyze", data={"game": "tiddlywinks"}), 422, "invalid_request")


@pytest.mark.parametrize("game,planned", [("marbles", True), ("ice_tiddlywinks", True), ("Ice Tiddlywinks", True),
                                          ("chess", False)])
def test_unsupported_game_lists_supported_games(client: TestClient, game: str, planned: bool) -> None:
    body = assert_error(client.post("/v1/analyze", files=upload(PNG), data={"game": game}), 422,
                        "game_not_supported")
    assert body["supported_games"] == ["tiddlywinks"]
    assert ("not supported yet" in body["detail"]) is planned


def test_unknown_calibration_is_404(client: TestClient) -> None:
    assert_error(client.post("/v1/analyze", files=upload(PNG), data={"calibration_id": "cal_missing"}), 404,
                 "calibration_not_found")


def test_squidge_off_verdict(client: TestClient) -> None:
    r = client.post("/v1/squidge-off", files=upload(PNG))
    assert r.status_code == 200
    assert r.json() == {"winner": "blue", "ranking": [{"color": "blue", "id": "b1", "distance_mm": 12.0}],
                        "resquidge": False}


def test_pipeline_not_installed_is_503(db_path) -> None:
    class NoVision(FakePipeline):
        def analyze(self, game, frame_bgr, calibration):
            return VisionPipeline.analyze(VisionPipeline(), game, frame_bgr, calibration)

    try:
        import vision.tiddlywinks  # noqa: F401
        pytest.skip("the vision pipeline is installed")
    except ImportError:
        pass
    with TestClient(create_app(service_settings(db_path), pipeline=NoVision())) as c:
        assert_error(c.post("/v1/analyze", files=upload(PNG)), 503, "pipeline_unavailable")


def test_dependency_override_replaces_the_pipeline(db_path) -> None:
    from api.deps import get_pipeline

    app = create_app(service_settings(db_path), pipeline=FakePipeline())

    class Other(FakePipeline):
        def analyze(self, game, frame_bgr, calibration):
            return {"pieces": [], "rulings": [], "overridden": True}

    app.dependency_overrides[get_pipeline] = lambda: Other()
    with TestClient(app) as c:
        assert c.post("/v1/analyze", files=upload(PNG)).json()["overridden"] is True


# --- calibrations ----------------------------------------------------------------------------------------------
def test_calibration_endpoints(client: TestClient) -> None:
    r = client.post("/v1/calibrations", files=upload(PNG), headers=AUTH)
    assert r.status_code == 201, r.text
    from_image = r.json()
    assert from_image["source"] == "image" and from_image["id"].startswith("cal_")
    r = client.post("/v1/calibrations/corners", headers=AUTH,
                    json={"corners_px": CORNERS_PX, "image_size_wh_px": [640, 340]})
    assert r.status_code == 201
    from_corners = r.json()
    listed = client.get("/v1/calibrations").json()
    assert [c["id"] for c in listed] == [from_image["id"], from_corners["id"]]
    assert client.get(f"/v1/calibrations/{from_corners['id']}").json() == from_corners


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}],
                         ids=["none", "wrong", "basic"])
def test_calibrating_needs_the_token(client: TestClient, headers: dict) -> None:
    r = client.post("/v1/calibrations", files=upload(PNG), headers=headers)
    assert_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"].startswith("Bearer")
    r = client.post("/v1/calibrations/corners", headers=headers,
                    json={"corners_px": CORNERS_PX, "image_size_wh_px": [640, 340]})
    assert r.status_code == 401


def test_calibration_bad_inputs(client: TestClient) -> None:
    assert_error(client.get("/v1/calibrations/cal_nope"), 404, "calibration_not_found")
    assert_error(client.post("/v1/calibrations", files=upload(b"GIF89a..."), headers=AUTH), 415, "not_an_image")
    assert_error(client.post("/v1/calibrations", headers=AUTH,
                             files=upload(png_bytes(np.full((50, 50, 3), 200, np.uint8)))), 422, "no_mat_found")
    for body in ({"corners_px": CORNERS_PX[:3], "image_size_wh_px": [640, 340]},
                 {"corners_px": CORNERS_PX, "image_size_wh_px": [0, 340]},
                 {"corners_px": CORNERS_PX},
                 {"corners_px": [[1e300, 0], [1, 1], [2, 2], [3, 3]], "image_size_wh_px": [640, 340]}):
        assert_error(client.post("/v1/calibrations/corners", json=body, headers=AUTH), 422, "invalid_request")


def test_real_mat_calibration_refuses_a_photo_without_a_mat(db_path) -> None:
    pytest.importorskip("calibration.mat")
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        blank = png_bytes(np.full((240, 320, 3), 230, np.uint8))
        r = c.post("/v1/calibrations", files=upload(blank), headers=AUTH)
        assert r.status_code == 422, r.text
        assert r.json()["error"] in ("no_mat_found", "analysis_failed")


# --- games -----------------------------------------------------------------------------------------------------
def test_create_list_and_read_games(client: TestClient) -> None:
    gid = new_game(client, game="tiddlywinks", game_type="pairs",
                   players={"blue": "Ann", "green": "Cat", "red": "Bob", "yellow": "Dan"})
    singles = new_game(client, game_type="singles", players={"blue": "Ann", "green": "Cat"})
    games = client.get("/v1/games").json()
    assert [g["id"] for g in games] == [gid, singles]
    assert games[1]["players"] == {"blue": "Ann", "red": "Ann", "green": "Cat", "yellow": "Cat"}
    state = client.get(f"/v1/games/{gid}").json()
    assert state["game"]["status"] == "active" and state["state"] is None and state["rulings"] == []
    assert state["source_status"]["state"] == "none"


def test_game_creation_bad_inputs(client: TestClient) -> None:
    assert_error(client.post("/v1/games", json={}), 401, "unauthorized")
    assert_error(client.post("/v1/games", json={"game": "marbles"}, headers=AUTH), 422, "game_not_supported")
    assert_error(client.post("/v1/games", json={"calibration_id": "cal_x"}, headers=AUTH), 404,
                 "calibration_not_found")
    assert_error(client.post("/v1/games", json={"players": {"purple": "X"}}, headers=AUTH), 422, "invalid_request")
    assert_error(client.post("/v1/games", json={"game_type": "triples"}, headers=AUTH), 422, "invalid_request")
    assert_error(client.post("/v1/games", json={"game_type": "singles", "players": {"blue": "A", "red": "B"}},
                             headers=AUTH), 422, "invalid_players")
    assert_error(client.post("/v1/games", content=b"{not json", headers={**AUTH, "content-type": "application/json"}),
                 422, "invalid_request")


@pytest.mark.parametrize("path", ["", "/rulings", "/events", "/squidge-off", "/distance?a=x&b=y", "/snapshot.jpg",
                                  "/feed.mjpg?max_frames=1"])
def test_unknown_game_is_404(client: TestClient, path: str) -> None:
    assert_error(client.get(f"/v1/games/g_nope{path}"), 404, "game_not_found")


def test_unknown_game_is_404_for_writes(client: TestClient) -> None:
    assert_error(client.post("/v1/games/g_nope/frames", files=upload(PNG), headers=AUTH), 404, "game_not_found")
    assert_error(client.put("/v1/games/g_nope/source", json={"kind": "device", "value": 0}, headers=AUTH), 404,
                 "game_not_found")
    assert_error(client.delete("/v1/games/g_nope/source", headers=AUTH), 404, "game_not_found")


def test_pushed_frames_store_new_rulings_once(client: TestClient) -> None:
    gid = new_game(client)
    first = client.post(f"/v1/games/{gid}/frames", files=upload(PNG), headers=AUTH)
    assert first.status_code == 200, first.text
    assert [r["seq"] for r in first.json()["new_rulings"]] == [1, 2]
    again = client.post(f"/v1/games/{gid}/frames", files=upload(PNG), headers=AUTH).json()
    assert again["new_rulings"] == [] and again["frame_idx"] == 1  # the same position: nothing new
    brighter = png_bytes(np.clip(table_image().astype(int) + 90, 0, 255).astype(np.uint8))
    third = client.post(f"/v1/games/{gid}/frames", files=upload(brighter), headers=AUTH).json()
    assert [r["ruling"]["rule"] for r in third["new_rulings"]] == ["TW 6(a)"]
    rulings = client.get(f"/v1/games/{gid}/rulings").json()
    assert [r["seq"] for r in rulings] == [1, 2, 3]
    assert [r["seq"] for r in client.get(f"/v1/games/{gid}/rulings?after=2").json()] == [3]
    state = client.get(f"/v1/games/{gid}").json()
    assert state["state"]["frame_idx"] == 2
    assert state["summary"]["tiddlies"] == {"blue": 1, "green": 0, "red": 1, "yellow": 4}
    assert state["summary"]["points"]["yellow"] == pytest.approx(4.0)
    assert client.get(f"/v1/games/{gid}/snapshot.jpg").headers["content-type"] == "image/jpeg"


def test_pushed_bad_frames_are_refused_and_change_nothing(client: TestClient) -> None:
    gid = new_game(client)
    assert_error(client.post(f"/v1/games/{gid}/frames", files=upload(b"")), 401, "unauthorized")
    for data, status in ((b"", 400), (b"nope", 415), (PNG[:100], 422), (png_header_only(9000, 9000), 413),
                         (png_bytes(np.zeros((40, 40, 3), np.uint8)), 422)):
        assert client.post(f"/v1/games/{gid}/frames", files=upload(data), headers=AUTH).status_code == status
    state = client.get(f"/v1/games/{gid}").json()
    assert state["state"] is None and state["game"]["frame_count"] == 0


def test_distance_and_squidge_off_of_the_current_position(client: TestClient) -> None:
    gid = new_game(client)
    assert_error(client.get(f"/v1/games/{gid}/distance?a=r1&b=g1"), 409, "no_state")
    assert_error(client.get(f"/v1/games/{gid}/squidge-off"), 409, "no_state")
    client.post(f"/v1/games/{gid}/frames", files=upload(PNG), headers=AUTH)
    d = client.get(f"/v1/games/{gid}/distance", params={"a": "b1", "b": "r1"}).json()
    assert d["center_distance_mm"] == pytest.approx(np.hypot(130.0, 50.0), abs=0.01)
    assert d["gap_mm"] == pytest.approx(np.hypot(130.0, 50.0) - 16.0, abs=0.05)
    assert_error(client.get(f"/v1/games/{gid}/distance?a=b1&b=zz"), 404, "piece_not_found")
    assert_error(client.get(f"/v1/games/{gid}/distance?a=b1"), 422, "invalid_request")
    assert client.get(f"/v1/games/{gid}/squidge-off").json()["winner"] == "blue"


def test_events_record_the_game_history(client: TestClient) -> None:
    gid = new_game(client)
    kinds = [e["kind"] for e in client.get(f"/v1/games/{gid}/events").json()]
    assert kinds == ["created"]


@pytest.mark.parametrize("body,code", [
    ({"kind": "file", "value": "/no/such/video.mp4"}, "source_not_found"),
    ({"kind": "device", "value": "front-camera"}, "invalid_source"),
    ({"kind": "device", "value": 99}, "invalid_source"),
    ({"kind": "url", "value": "file:///etc/passwd"}, "invalid_source"),
    ({"kind": "url", "value": "rtsp://"}, "invalid_source"),
    ({"kind": "smoke-signals", "value": 1}, "invalid_request"),
])
def test_attach_source_bad_inputs(client: TestClient, body: dict, code: str) -> None:
    gid = new_game(client)
    assert_error(client.put(f"/v1/games/{gid}/source", json=body, headers=AUTH), 422, code)


def test_attach_source_needs_the_token(client: TestClient) -> None:
    gid = new_game(client)
    assert_error(client.put(f"/v1/games/{gid}/source", json={"kind": "device", "value": 0}), 401, "unauthorized")
    assert_error(client.delete(f"/v1/games/{gid}/source"), 401, "unauthorized")


def test_reads_can_require_the_token(db_path) -> None:
    app = create_app(service_settings(db_path, require_token_for_reads=True), pipeline=FakePipeline())
    with TestClient(app) as c:
        assert_error(c.get("/v1/games"), 401, "unauthorized")
        assert_error(c.post("/v1/analyze", files=upload(PNG)), 401, "unauthorized")
        assert c.get("/v1/games", headers=AUTH).status_code == 200
        gid = c.post("/v1/games", json={}, headers=AUTH).json()["id"]
        assert c.get(f"/v1/games/{gid}/feed.mjpg?max_frames=1").status_code == 401
        assert c.get(f"/v1/games/{gid}/feed.mjpg?max_frames=1&token={AUTH['Authorization'][7:]}").status_code == 200


def test_generated_token_when_none_is_set(db_path, monkeypatch) -> None:
    monkeypatch.delenv("TABLEREF_TOKEN", raising=False)
    app = create_app(service_settings(db_path, token=None), pipeline=FakePipeline())
    assert app.state.token_generated and len(app.state.token) >= 24
    with TestClient(app) as c:
        assert c.post("/v1/games", json={}, headers={"Authorization": f"Bearer {app.state.token}"}).status_code == 201
