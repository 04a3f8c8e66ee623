"""Live games: motion gate, video sources, reconnects, WebSocket rulings, MJPEG feed, persistence and resume.

Waiting for the source thread polls a condition with a generous limit; nothing here measures speed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from service_fakes import (
    AUTH,
    CrashingPipeline,
    FakePipeline,
    png_bytes,
    service_settings,
    table_image,
    write_video,
)

from api.app import create_app
from api.live import GameManager, MotionGate, score_summary
from api.storage import Storage

WAIT_S = 20.0  # upper bound for the source thread to reach a state; tests finish as soon as it does


def wait_for(cond: Callable[[], object], what: str) -> object:
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def still_then_moving_video(path: Path, seed: int = 1) -> Path:
    """A clip: the table at rest, a 'shot' (moving blob), at rest again in a new position."""
    rng = np.random.default_rng(seed)
    base = table_image(seed)
    frames = [base] * 12
    for i in range(8):
        f = base.copy()
        f[50:150, 40 + i * 40:140 + i * 40] = rng.integers(0, 255, size=3)
        frames.append(f)
    later = np.clip(base.astype(int) + 90, 0, 255).astype(np.uint8)
    frames += [later] * 12
    write_video(str(path), frames, fps=50.0)
    return path


def new_game(client: TestClient) -> str:
    return client.post("/v1/games", json={"players": {"blue": "Ann"}}, headers=AUTH).json()["id"]


# --- motion gate -----------------------------------------------------------------------------------------------
def test_motion_gate_fires_once_per_rest() -> None:
    rng = np.random.default_rng(3)
    still = table_image(3)
    gate = MotionGate(threshold=2.0, still_frames=3, width_px=64)
    fired = [gate.update(still) for _ in range(6)]
    assert fired == [False, False, True, False, False, False]
    moving = [gate.update(rng.integers(0, 255, size=still.shape, dtype=np.uint8)) for _ in range(3)]
    assert not any(moving) and not gate.at_rest
    other = table_image(4)
    assert [gate.update(other) for _ in range(4)] == [False, False, False, True]


def test_motion_gate_ignores_sensor_noise_below_threshold() -> None:
    rng = np.random.default_rng(5)
    still = table_image(5).astype(np.int16)
    gate = MotionGate(threshold=2.0, still_frames=4, width_px=64)
    noisy = [np.clip(still + rng.integers(-3, 4, size=still.shape), 0, 255).astype(np.uint8) for _ in range(5)]
    assert [gate.update(f) for f in noisy] == [False, False, False, True, False]


# --- score summary (TW A8) ---------------------------------------------------------------------------------------
def test_score_summary_tw_a8_shares_tied_places() -> None:
    pieces = ([{"color": "blue", "potted": True}] * 2 + [{"color": "red", "potted": True}] * 2
              + [{"color": "green"}] * 3 + [{"color": "green", "squopped": True}]
              + [{"color": "yellow", "unplayed": True}])
    s = score_summary({"pieces": pieces})
    assert s["tiddlies"] == {"blue": 6, "red": 6, "green": 3, "yellow": 0}
    assert s["points"] == {"blue": 3.0, "red": 3.0, "green": 1.0, "yellow": 0.0}
    assert s["partnerships"] == {"blue-red": 6.0, "green-yellow": 1.0}
    assert score_summary({"score": {"points": {"blue": 4}}})["source"] == "adjudicator"


# --- sources ----------------------------------------------------------------------------------------------------
def test_video_source_rulings_arrive_on_the_websocket(client: TestClient, tmp_path: Path) -> None:
    video = still_then_moving_video(tmp_path / "shot.avi")
    gid = new_game(client)
    with client.websocket_connect(f"/v1/games/{gid}/ws") as ws:
        assert ws.receive_json()["type"] == "status"
        r = client.put(f"/v1/games/{gid}/source", json={"kind": "file", "value": str(video)}, headers=AUTH)
        assert r.status_code == 200, r.text
        assert r.json()["source"]["kind"] == "file"
        rulings = []
        while len(rulings) < 3:
            msg = ws.receive_json()
            if msg["type"] == "ruling":
                rulings.append(msg)
    assert [m["seq"] for m in rulings] == [1, 2, 3]  # two at the first rest, the changed one at the second
    assert rulings[2]["ruling"]["rule"] == "TW 6(a)"
    wait_for(lambda: client.get(f"/v1/games/{gid}").json()["source_status"]["state"] == "ended", "end of file")
    state = client.get(f"/v1/games/{gid}").json()
    assert state["source_status"]["analyses"] == 2
    assert [r["seq"] for r in state["rulings"]] == [1, 2, 3]
    kinds = [e["kind"] for e in client.get(f"/v1/games/{gid}/events").json()]
    assert kinds[:3] == ["created", "source_attached", "source_live"] and kinds[-1] == "source_ended"


def test_websocket_replays_stored_rulings_after_seq(client: TestClient) -> None:
    gid = new_game(client)
    client.post(f"/v1/games/{gid}/frames", files={"image": ("t.png", png_bytes(table_image()), "image/png")},
                headers=AUTH)
    with client.websocket_connect(f"/v1/games/{gid}/ws?after=1") as ws:
        first = ws.receive_json()
        assert first["type"] == "ruling" and first["seq"] == 2
        assert ws.receive_json()["type"] == "status"


def test_websocket_unknown_game_is_closed_4404(client: TestClient) -> None:
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect) as info, client.websocket_connect("/v1/games/g_nope/ws") as ws:
        ws.receive_json()
    assert info.value.code == 4404


def test_websocket_needs_token_when_reads_are_protected(db_path: Path) -> None:
    from starlette.websockets import WebSocketDisconnect

    app = create_app(service_settings(db_path, require_token_for_reads=True), pipeline=FakePipeline())
    with TestClient(app) as c:
        gid = c.post("/v1/games", json={}, headers=AUTH).json()["id"]
        with pytest.raises(WebSocketDisconnect) as info, c.websocket_connect(f"/v1/games/{gid}/ws") as ws:
            ws.receive_json()
        assert info.value.code == 4401
        with c.websocket_connect(f"/v1/games/{gid}/ws?token={AUTH['Authorization'][7:]}") as ws:
            assert ws.receive_json()["type"] == "status"


def test_mjpeg_feed_streams_annotated_jpegs(client: TestClient, tmp_path: Path) -> None:
    gid = new_game(client)
    r = client.get(f"/v1/games/{gid}/feed.mjpg?max_frames=1")  # before any frame: the waiting picture
    assert r.status_code == 200 and r.headers["content-type"].startswith("multipart/x-mixed-replace")
    assert r.content.startswith(b"--frame\r\nContent-Type: image/jpeg") and b"\xff\xd8" in r.content
    video = still_then_moving_video(tmp_path / "feed.avi")
    client.put(f"/v1/games/{gid}/source", json={"kind": "file", "value": str(video), "loop": True}, headers=AUTH)
    wait_for(lambda: client.get(f"/v1/games/{gid}/snapshot.jpg").status_code == 200, "a feed frame")
    r = client.get(f"/v1/games/{gid}/feed.mjpg?max_frames=3")
    assert r.content.count(b"--frame\r\n") == 3
    assert client.delete(f"/v1/games/{gid}/source", headers=AUTH).status_code == 204
    assert client.get(f"/v1/games/{gid}").json()["source_status"]["state"] == "none"


def test_dropped_source_reconnects_with_backoff(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "s.sqlite")
    manager = GameManager(storage, service_settings(tmp_path / "s.sqlite"), lambda: FakePipeline())
    gid = storage.add_game(game="tiddlywinks", game_type="pairs", players={}, calibration_id=None)["id"]
    try:
        manager.attach(gid, {"kind": "url", "value": "rtsp://127.0.0.1:9/none"})
        wait_for(lambda: manager.status(gid)["attempts"] >= 3, "three reconnect attempts")
        status = manager.status(gid)
        assert status["state"] == "reconnecting" and status["retry_in_s"] > 0
        delays = [e["data"]["retry_in_s"] for e in storage.list_events(gid) if e["kind"] == "source_error"]
        assert delays[:3] == pytest.approx([0.05, 0.1, 0.2])  # doubling, capped at reconnect_max_s
    finally:
        manager.shutdown()
        storage.close()


def test_live_loop_survives_a_crashing_pipeline(db_path: Path, tmp_path: Path) -> None:
    video = still_then_moving_video(tmp_path / "crash.avi")
    with TestClient(create_app(service_settings(db_path), pipeline=CrashingPipeline())) as c:
        gid = new_game(c)
        c.put(f"/v1/games/{gid}/source", json={"kind": "file", "value": str(video)}, headers=AUTH)
        wait_for(lambda: c.get(f"/v1/games/{gid}").json()["source_status"]["state"] == "ended", "end of file")
        status = c.get(f"/v1/games/{gid}").json()["source_status"]
        assert status["errors"] == 2 and status["frames_read"] == 32 and "detector bug" in status["last_error"]
        kinds = [e["kind"] for e in c.get(f"/v1/games/{gid}/events").json()]
        assert kinds.count("analysis_crash") == 2


def test_live_loop_records_refused_frames_as_events(db_path: Path, tmp_path: Path) -> None:
    write_video(str(tmp_path / "dark.avi"), [np.zeros((120, 160, 3), np.uint8)] * 10, fps=50.0)
    with TestClient(create_app(service_settings(db_path), pipeline=FakePipeline())) as c:
        gid = new_game(c)
        c.put(f"/v1/games/{gid}/source", json={"kind": "file", "value": str(tmp_path / "dark.avi")}, headers=AUTH)
        wait_for(lambda: c.get(f"/v1/games/{gid}").json()["source_status"]["state"] == "ended", "end of file")
        errors = [e for e in c.get(f"/v1/games/{gid}/events").json() if e["kind"] == "analysis_error"]
        assert errors and errors[0]["data"]["error"] == "no_mat_found"


# --- persistence ------------------------------------------------------------------------------------------------
def test_restart_keeps_games_and_acknowledged_rulings(db_path: Path) -> None:
    png = png_bytes(table_image())
    with TestClient(create_app(service_settings(db_path), pipeline=FakePipeline())) as c:
        gid = new_game(c)
        acked = c.post(f"/v1/games/{gid}/frames", files={"image": ("t.png", png, "image/png")}, headers=AUTH).json()
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with TestClient(create_app(service_settings(db_path), pipeline=FakePipeline())) as c:
        state = c.get(f"/v1/games/{gid}").json()
        assert [r["ruling"] for r in state["rulings"]] == [r["ruling"] for r in acked["new_rulings"]]
        # The resumed game remembers its position: the same frame brings no duplicate rulings.
        again = c.post(f"/v1/games/{gid}/frames", files={"image": ("t.png", png, "image/png")}, headers=AUTH)
        assert again.json()["new_rulings"] == [] and again.json()["frame_idx"] == 1


def test_restart_resumes_attached_sources(db_path: Path, tmp_path: Path) -> None:
    video = still_then_moving_video(tmp_path / "loop.avi")
    with TestClient(create_app(service_settings(db_path), pipeline=FakePipeline())) as c:
        gid = new_game(c)
        c.put(f"/v1/games/{gid}/source", json={"kind": "file", "value": str(video), "loop": True}, headers=AUTH)
        wait_for(lambda: c.get(f"/v1/games/{gid}/rulings").json(), "a first ruling")
    with TestClient(create_app(service_settings(db_path), pipeline=FakePipeline())) as c:
        assert c.get(f"/v1/games/{gid}").json()["game"]["source"]["value"] == str(video.resolve())
        wait_for(lambda: c.get(f"/v1/games/{gid}").json()["source_status"]["frames_read"] > 0, "resumed frames")
        kinds = [e["kind"] for e in c.get(f"/v1/games/{gid}/events").json()]
        assert "resumed" in kinds


def test_storage_round_trip(tmp_path: Path) -> None:
    s = Storage(tmp_path / "r.sqlite")
    cal = s.add_calibration("corners", {"a": 1})
    g = s.add_game(game="tiddlywinks", game_type="singles", players={"blue": "A"}, calibration_id=cal["id"])
    stored = s.record_analysis(g["id"], {"pieces": []}, [{"rule": "TW 5(a)"}], 0)
    assert stored[0]["seq"] == 1
    s.close()
    s = Storage(tmp_path / "r.sqlite")
    assert s.get_calibration(cal["id"])["calibration"] == {"a": 1}
    assert s.get_game(g["id"])["state"] == {"pieces": []}
    assert json.dumps(s.list_rulings(g["id"])[0]["ruling"]) == '{"rule": "TW 5(a)"}'
    s.close()


def test_score_summary_prefers_the_rule_engines_score_ruling() -> None:
    ev = {"blue_tiddlies": 6.0, "green_tiddlies": 9.0, "red_tiddlies": 3.0, "yellow_tiddlies": 2.0,
          "green_points": 4.0, "blue_points": 2.0, "red_points": 1.0, "yellow_points": 0.0,
          "blue_red_points": 3.0, "green_yellow_points": 4.0}
    doc = {"pieces": [], "rulings": [{"rule": "TW 10(b)", "decision": "score", "piece_ids": [], "evidence": ev}]}
    s = score_summary(doc)
    assert s["source"] == "rule engine, TW 10(b)"
    assert s["tiddlies"]["green"] == 9.0 and s["partnerships"] == {"blue-red": 3.0, "green-yellow": 4.0}


def test_ruling_identity_ignores_noise_but_not_a_changed_score() -> None:
    from api.live import ruling_key

    squop = {"rule": "TW 6(a)", "decision": "squopped", "piece_ids": ["b1", "g1"], "evidence": {"overlap_mm2": 3.0}}
    assert ruling_key(squop) == ruling_key({**squop, "evidence": {"overlap_mm2": 3.2}, "confidence": 0.7})
    score = {"rule": "TW 10(b)", "decision": "score", "piece_ids": [], "evidence": {"blue_points": 4.0}}
    assert ruling_key(score) != ruling_key({**score, "evidence": {"blue_points": 2.0}})


def test_motion_gate_on_a_simulated_shot_video() -> None:
    import cv2

    videos = sorted((Path(__file__).resolve().parents[2] / "sample_images" / "videos").glob("*.mp4"))
    if not videos:
        pytest.skip("no simulated shot videos under sample_images/videos yet")
    cap = cv2.VideoCapture(str(videos[0]))
    gate, fired = MotionGate(), []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        fired.append(gate.update(frame))
    cap.release()
    # At rest before the shot and after it: analysed at least twice, never on every frame.
    assert 2 <= sum(fired) <= 4, [i for i, f in enumerate(fired) if f]


# --- tiddlywinks shot by shot (the same rest step as ``tableref track``) -----------------------------------------
KNOCK_VIDEO = Path(__file__).resolve().parents[2] / "sample_images" / "videos" / "shot_01_knock.mp4"


def rest_frames_of(video: Path) -> list[np.ndarray]:
    """The table at rest before the hand comes in (frame 2) and after the shot (the last frame)."""
    import cv2

    cap = cv2.VideoCapture(str(video))
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    return [frames[2], frames[-1]]


@pytest.mark.skipif(not KNOCK_VIDEO.is_file(), reason="no simulated shot video sample_images/videos/shot_01_knock")
def test_tiddlywinks_shot_is_stored_served_published_and_corrected(db_path: Path) -> None:
    from api.pipeline import VisionPipeline
    from api.tracking import replay_log

    truth = json.loads(KNOCK_VIDEO.with_suffix(".json").read_text())["shot"]  # green knocks a red wink
    before, after = rest_frames_of(KNOCK_VIDEO)
    app = create_app(service_settings(db_path), pipeline=VisionPipeline())
    with TestClient(app) as c:
        gid = new_game(c)
        assert c.post(f"/v1/games/{gid}/corrections", json={"kind": "pass"}, headers=AUTH).json()["error"] \
            == "no_game_started"
        with c.websocket_connect(f"/v1/games/{gid}/ws") as ws:
            assert ws.receive_json()["type"] == "status"
            for frame in (before, after):
                r = c.post(f"/v1/games/{gid}/frames", headers=AUTH,
                           files={"image": ("rest.png", png_bytes(frame), "image/png")})
                assert r.status_code == 200, r.text
            shots = []
            while len(shots) < 2:
                msg = ws.receive_json()
                if msg["type"] == "shot":
                    shots.append(msg)
        assert [m["kind"] for m in shots] == ["start", "rest"]
        report = shots[1]["report"]
        assert report["color"] == truth["color"] == "green"
        assert sorted(w.split("-")[0] for w in report["moved"]) == sorted(w.split("-")[0] for w in truth["moved"])
        assert report["potted"] == [] and report["out"] == []

        served = c.get(f"/v1/games/{gid}/shots").json()
        assert [s["seq"] for s in served] == [1, 2] and served[1]["report"] == report
        full = c.get(f"/v1/games/{gid}/shots?full=true").json()
        _, mismatches = replay_log([{k: v for k, v in s.items() if k not in ("seq", "created_at")} for s in full])
        assert mismatches == []
        assert c.get(f"/v1/games/{gid}").json()["state"]["game_state"]["shots"] == 1

        played = report["played_wink"]
        bad = c.post(f"/v1/games/{gid}/corrections", json={"kind": "wink", "id": "nope", "potted": True},
                     headers=AUTH)
        assert bad.status_code == 422 and bad.json()["error"] == "invalid_correction"
        assert c.post(f"/v1/games/{gid}/corrections", json={"kind": "squop", "upper": played},
                      headers=AUTH).json()["error"] == "invalid_request"
        fixed = c.post(f"/v1/games/{gid}/corrections", json={"kind": "wink", "id": played, "potted": True},
                       headers=AUTH)
        assert fixed.status_code == 200, fixed.text
        assert fixed.json()["kind"] == "correction" and fixed.json()["summary"]["potted"]["green"] == 1
        assert c.get(f"/v1/games/{gid}").json()["state"]["game_state"]["potted"]["green"] == 1
    # After a restart the game goes on from its stored log, correction included.
    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        passed = c.post(f"/v1/games/{gid}/corrections", json={"kind": "pass"}, headers=AUTH).json()
        assert passed["summary"]["potted"]["green"] == 1 and passed["seq"] == 4
        assert passed["correction"] == {"kind": "pass"}
        assert [s["kind"] for s in c.get(f"/v1/games/{gid}/shots").json()] == ["start", "rest", "correction", "correction"]


def test_other_pipelines_keep_the_per_frame_path(client: TestClient) -> None:
    gid = new_game(client)
    client.post(f"/v1/games/{gid}/frames", files={"image": ("t.png", png_bytes(table_image()), "image/png")},
                headers=AUTH)
    assert client.get(f"/v1/games/{gid}/shots").json() == []
    r = client.post(f"/v1/games/{gid}/corrections", json={"kind": "pass"}, headers=AUTH)
    assert r.status_code == 409 and r.json()["error"] == "no_tracker"


@pytest.mark.skipif(not KNOCK_VIDEO.is_file(), reason="no simulated shot video sample_images/videos/shot_01_knock")
def test_tiddlywinks_video_source_is_followed_shot_by_shot(db_path: Path) -> None:
    from api.pipeline import VisionPipeline

    with TestClient(create_app(service_settings(db_path), pipeline=VisionPipeline())) as c:
        gid = new_game(c)
        with c.websocket_connect(f"/v1/games/{gid}/ws") as ws:
            r = c.put(f"/v1/games/{gid}/source", json={"kind": "file", "value": str(KNOCK_VIDEO)}, headers=AUTH)
            assert r.status_code == 200, r.text
            while True:
                msg = ws.receive_json()
                if msg["type"] == "shot" and msg.get("report", {}).get("kind") == "shot":
                    break
        assert msg["report"]["color"] == "green" and msg["report"]["shot"] == 1
        assert sorted(w.split("-")[0] for w in msg["report"]["moved"]) == ["green", "red"]
        wait_for(lambda: c.get(f"/v1/games/{gid}").json()["source_status"]["state"] == "ended", "end of file")
        kinds = [s["kind"] for s in c.get(f"/v1/games/{gid}/shots").json()]
        assert kinds[0] == "start" and kinds.count("start") == 1 and "rest" in kinds
