"""``tableref track`` end to end: a video (synthetic, and the simulator's sample videos when present) with
``--truth-json`` rest states, one JSON line per shot, the game log and ``--replay``."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from api.cli import main
from geometry.records import scene_to_document
from geometry.types import COLOR_ORDER, TiddlywinksScene, Wink

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_VIDEOS = sorted((ROOT / "sample_images" / "videos").glob("*.json"))
FPS = 15
XS = (-500.0, -300.0, -100.0, 100.0, 300.0, 500.0)
IDS = ("L1", "L2", "S1", "S2", "S3", "S4")


def base_scene() -> TiddlywinksScene:
    ys = dict(zip(COLOR_ORDER, (300.0, 100.0, -100.0, -300.0)))
    return TiddlywinksScene(winks=tuple(
        Wink(wink_id=f"{c.value}-{k}", color=c, size="large" if k[0] == "L" else "small", center_mm=(x, ys[c]))
        for c in COLOR_ORDER for k, x in zip(IDS, XS)))


def with_wink(scene: TiddlywinksScene, wid: str, **kw) -> TiddlywinksScene:
    from dataclasses import replace
    return replace(scene, winks=tuple(replace(w, **kw) if w.wink_id == wid else w for w in scene.winks))


def write_video(path: Path, segments: list[tuple[str, int]]) -> list[tuple[int, int]]:
    """A small mp4 whose 'hand' segments show a moving blob; returns the [first, last] frames of each rest."""
    rng = np.random.default_rng(3)
    h, w = 180, 320
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.dstack([(60 + 30 * np.sin(xx / 17.0))] * 3).astype(np.float32)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), FPS, (w, h))
    assert writer.isOpened()
    rests, i = [], 0
    for kind, n in segments:
        if kind == "rest":
            rests.append((i, i + n - 1))
        for k in range(n):
            f = base.copy()
            if kind == "hand":
                f[(xx - 30 - 20 * k) ** 2 + (yy - 150 + 6 * k) ** 2 < 35 ** 2] = (120, 150, 200)
            f += rng.normal(0, 1.0, f.shape).astype(np.float32)
            writer.write(np.clip(f, 0, 255).astype(np.uint8))
        i += n
    writer.release()
    return rests


@pytest.fixture
def two_shot_video(tmp_path: Path) -> tuple[Path, Path]:
    """Red pots its own red-S1 (bonus shot), then plays red-L1 a little: yellow is due after."""
    rests = write_video(tmp_path / "game.mp4", [("rest", 10), ("hand", 12), ("rest", 15), ("hand", 12),
                                                 ("rest", 15)])
    s0 = base_scene()
    s1 = with_wink(s0, "red-S1", center_mm=(2.0, 1.0), potted=True, z_mm=5.0)
    s2 = with_wink(s1, "red-L1", center_mm=(-470.0, -90.0))
    truth = {"kind": "shot_video", "video": {"path": "game.mp4", "fps": FPS},
             "rest_states": [{"frames": list(r), "scene": scene_to_document(s)} for r, s in zip(rests, (s0, s1, s2))]}
    (tmp_path / "game.json").write_text(json.dumps(truth))
    return tmp_path / "game.mp4", tmp_path / "game.json"


def run_json(capsys, argv: list[str]) -> tuple[int, list[dict]]:
    rc = main(argv)
    out = capsys.readouterr().out
    return rc, [json.loads(line) for line in out.splitlines() if line.strip()]


def test_track_prints_one_line_per_shot_and_replays(two_shot_video, tmp_path, capsys):
    video, truth = two_shot_video
    log = tmp_path / "game.log.jsonl"
    rc, lines = run_json(capsys, ["track", str(video), "--truth-json", str(truth), "--first", "red", "--json",
                                  "--log", str(log)])
    assert rc == 0
    assert [ln["kind"] for ln in lines] == ["start", "rest", "rest"]
    shot1, shot2 = lines[1], lines[2]
    assert shot1["report"]["shot"] == 1 and shot1["report"]["color"] == "red"
    assert shot1["report"]["potted"] == ["red-S1"] and shot1["report"]["moved"] == ["red-S1"]
    assert any(r["rule"] == "TW 5(c)" and r["decision"] == "bonus_shots" for r in shot1["rulings"])
    assert shot1["summary"]["due"] == "red" and shot1["summary"]["shots_left"] == 1
    assert shot2["report"]["color"] == "red" and shot2["report"]["moved"] == ["red-L1"]
    assert shot2["summary"]["due"] == "yellow"
    assert shot1["shot_frames"][0] >= 10 and shot1["shot_frames"][1] == 22
    # The log holds every input and state; replaying it reproduces the same lines.
    rc, replayed = run_json(capsys, ["track", "--replay", str(log), "--json"])
    assert rc == 0
    strip = [{k: v for k, v in ln.items() if k not in ("latency_ms", "latency_cpu_ms")} for ln in lines]
    assert [{k: v for k, v in ln.items() if k not in ("latency_ms", "latency_cpu_ms")} for ln in replayed] == strip


def test_track_infers_first_colour_and_corrections_apply(two_shot_video, tmp_path, capsys):
    video, truth = two_shot_video
    corrections = tmp_path / "fix.json"
    corrections.write_text(json.dumps([{"kind": "pass"}]))
    rc, lines = run_json(capsys, ["track", str(video), "--truth-json", str(truth), "--json", "--correct",
                                  str(corrections)])
    assert rc == 0
    assert lines[1]["report"]["color"] == "red" and "first colour inferred: red" in lines[1]["report"]["notes"]
    assert lines[-1]["kind"] == "correction" and lines[-1]["summary"]["due"] == "blue"


def test_track_needs_a_source(capsys):
    assert main(["track", "--json"]) == 2
    assert "needs a SOURCE" in capsys.readouterr().err


@pytest.mark.parametrize("name, says", [("notes.mp4", "cannot open video source"),
                                        ("notes.jpg", "no frame could be decoded")])
def test_track_refuses_a_file_with_no_frames(tmp_path, capsys, name, says):
    not_video = tmp_path / name  # OpenCV opens a .jpg as an image sequence, then reads no frame from it
    not_video.write_text("these are not frames")
    assert main(["track", str(not_video), "--json"]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.skipif(not SAMPLE_VIDEOS, reason="no simulated sample videos yet (sample_images/videos)")
@pytest.mark.parametrize("truth_path", SAMPLE_VIDEOS[:2], ids=lambda p: p.stem)
def test_sample_video_shot_sets_match_truth(truth_path, capsys):
    if not truth_path.exists():
        pytest.skip(f"{truth_path.name} is being regenerated")
    doc = json.loads(truth_path.read_text())
    video = truth_path.with_name(doc["video"]["path"])
    if not video.exists():
        pytest.skip(f"{video.name} is being regenerated")
    rc, lines = run_json(capsys, ["track", str(video), "--truth-json", str(truth_path), "--json"])
    assert rc == 0
    shots = [ln for ln in lines if ln["kind"] == "rest" and ln["report"]["kind"] == "shot"]
    assert len(shots) == 1
    rep, want = shots[0]["report"], doc["shot"]
    assert rep["color"] == want["color"]
    assert sorted(rep["moved"]) == sorted(want["moved"]) and sorted(rep["potted"]) == sorted(want["potted"])
    assert sorted(rep["out"]) == sorted(want["left_field"]) and rep["disturbed"] == []
