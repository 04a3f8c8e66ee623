"""``tableref bench --game tiddlywinks-video [DIR]``: the live tracker's figures on simulated shot videos.

For the lead to register in ``api/commands/bench.py``: ``lines = bench_tiddlywinks_video(video_dir)``, print.

Figures (each with its condition and PASS/FAIL):

1. motion-gate throughput on 1080p frames, one core (``cv2.setNumThreads(1)``), decode excluded: >= 30 fps;
2. per video, two runs of the whole tracker (gate -> rest -> ``apply_rest``):
   - *truth-fed*: rest states from the truth JSON with the detector's naming simulated (ids replaced by
     shuffled anonymous ones after the first rest), so identity keeping is really tested;
   - *vision*: ``api.tracking.analyze_rest_frame`` on the rest frame with the truth camera (after the first
     rest only the winks where the picture changed are fitted again, see ``vision.rest_change``);
   the colour due is the truth's shooter (the umpire enters the squidge-off winner);
   for each: moved / potted / out / disturbed sets exactly equal to the truth (the simulator never disturbs,
   so truth disturbed = {}) for >= 95 % of shots, no identity swap, rest -> rulings latency <= 300 ms.

Last measured (3 sample + 17 fresh videos, seed 4242, loaded 2-core machine): vision 20/20 exact, 0 swaps,
latency median 225 ms, max 305 ms of one core's CPU (before the pixel evidence: 17/20, 2 swaps, 300 / 415 ms).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from api.tracking import TrackConfig, TruthFeed, track_stream
from geometry.types import Color
from vision.motion import MotionGate, MotionParams

GATE_FPS_MIN = 30.0
LATENCY_MAX_MS = 300.0
SETS_EXACT_MIN_RATIO = 0.95
ID_MATCH_MM = 12.0  # a game wink is "the same" truth wink within this plan distance
DEFAULT_VIDEO_DIR = Path("sample_images/videos")


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def gate_fps_1080p(video: Path | None, n_frames: int = 240) -> float:
    """Frames per second of the motion gate alone on 1920x1080 frames (from ``video`` resized, else noise)."""
    cv2.setNumThreads(1)
    frames: list[np.ndarray] = []
    if video is not None:
        cap = cv2.VideoCapture(str(video))
        while len(frames) < 60:
            ok, f = cap.read()
            if not ok:
                break
            frames.append(cv2.resize(f, (1920, 1080), interpolation=cv2.INTER_LINEAR))
        cap.release()
    if not frames:
        rng = np.random.default_rng(0)
        frames = [rng.integers(0, 255, (1080, 1920, 3), dtype=np.uint8) for _ in range(8)]
    gate = MotionGate(MotionParams.for_fps(30.0))
    t = time.perf_counter()
    for i in range(n_frames):
        gate.update(frames[i % len(frames)], i)
    return n_frames / (time.perf_counter() - t)


class _AnonymousTruth(TruthFeed):
    """Truth whose later rest states carry detector-style ids (shuffled), as a detector would name them."""

    def __init__(self, doc: Any, seed: int) -> None:
        super().__init__(doc)
        self._rng = np.random.default_rng(seed)
        self._first = True

    def scene_at(self, frame_idx: int) -> dict[str, Any]:
        doc = super().scene_at(frame_idx)
        if self._first:
            self._first = False
            return doc
        doc = json.loads(json.dumps(doc))
        order = self._rng.permutation(len(doc["pieces"]))
        names = {p["id"]: f"det{int(k):02d}" for p, k in zip(doc["pieces"], order)}
        for p in doc["pieces"]:
            p["id"] = names[p["id"]]
            p["above"] = [names[a] for a in p.get("above", [])]
        doc["squops"] = [[names[a], names[b]] for a, b in doc.get("squops", [])]
        doc["piles"] = [[names[a] for a in pile] for pile in doc.get("piles", [])]
        return doc


def _id_map(game_doc: dict[str, Any], truth_doc: dict[str, Any]) -> dict[str, str]:
    """Game ids -> truth ids by nearest same-colour, same-size wink (potted ones by colour and size only)."""
    truth = [p for p in truth_doc["pieces"]]
    out: dict[str, str] = {}
    used: set[str] = set()
    for p in game_doc["pieces"]:
        cands = [t for t in truth if t["color"] == p["color"] and t["size"] == p["size"] and t["id"] not in used
                 and t["potted"] == p["potted"]]
        if not cands:
            continue
        best = min(cands, key=lambda t: math.dist(t["center_mm"], p["center_mm"]))
        if p["potted"] or math.dist(best["center_mm"], p["center_mm"]) <= ID_MATCH_MM:
            out[p["id"]] = best["id"]
            used.add(best["id"])
    return out


def run_video(json_path: Path, mode: str) -> dict[str, Any]:
    """Track one shot video (``mode`` 'truth' or 'vision'); returns per-shot set checks and latencies."""
    doc = json.loads(json_path.read_text())
    video = json_path.with_name(doc["video"]["path"])
    truth_states = doc["rest_states"]
    cal = doc.get("calibration")
    feed = _AnonymousTruth(doc, seed=len(json_path.name)) if mode == "truth" else None
    t0 = time.perf_counter()
    tracker = track_stream(str(video), calibration=cal if mode == "vision" else None, truth=feed,
                           config=TrackConfig(first=Color(doc["shot"]["color"]), time_limit_s=None))
    wall_s = time.perf_counter() - t0
    start = next((r for r in tracker.records if r["kind"] == "start"), None)
    shots = [r for r in tracker.records if r["kind"] == "rest" and r["report"]["kind"] == "shot"]
    truth_shot = doc["shot"]
    res: dict[str, Any] = {"video": json_path.stem, "mode": mode, "shots": len(shots), "wall_s": wall_s,
                           "latency_ms": [r["latency_ms"] for r in tracker.records if "latency_ms" in r],
                           "latency_cpu_ms": [r["latency_cpu_ms"] for r in tracker.records if "latency_cpu_ms" in r]}
    if start is None or not shots:
        res.update(exact=False, swap=False, why="no shot found")
        return res
    id_map = _id_map(start["state"]["scene"], truth_states[0]["scene"])
    rep = shots[0]["report"]

    def mapped(key: str) -> list[str]:
        return sorted(id_map.get(i, f"?{i}") for i in rep.get(key, []))

    got = {"moved": mapped("moved"), "potted": mapped("potted"), "out": mapped("out"),
           "disturbed": mapped("disturbed")}
    want = {"moved": sorted(truth_shot["moved"]), "potted": sorted(truth_shot["potted"]),
            "out": sorted(truth_shot["left_field"]), "disturbed": []}
    res["got"], res["want"] = got, want
    res["exact"] = got == want and len(shots) == 1
    # Identity: every game wink mapped to a truth wink at the start must sit where that truth wink ends.
    final_truth = {p["id"]: p for p in truth_states[-1]["scene"]["pieces"]}
    final_game = {p["id"]: p for p in shots[-1]["state"]["scene"]["pieces"]}
    swaps = []
    for gid, tid in id_map.items():
        g, t = final_game.get(gid), final_truth.get(tid)
        if g is None or t is None or t["potted"] or t["off_mat"] or t.get("unplayed"):
            continue  # in the pot, off the mat or in hand behind a baseline: where exactly does not matter
        if math.dist(g["center_mm"], t["center_mm"]) > ID_MATCH_MM:
            swaps.append(f"{gid}->{tid}")
    res["swap"] = bool(swaps)
    res["swaps"] = swaps
    return res


#: Fresh shot videos: seed, frame size, and the outcomes and felts they cycle through.
FRESH_VIDEO_SEED = 4242
FRESH_VIDEO_SIZE = (1280, 720)
FRESH_OUTCOMES = ("pot", "knock", "off")
FRESH_MATS = ("green", "beige", "grey", "beige", "green")


def fresh_videos(n: int, cache: Path, log=print) -> Path:
    """``n`` simulated shot videos (about 40 s of CPU each at 720p), rendered once into ``cache`` and kept."""
    from simulation.generate import make_rig
    from simulation.shot_video import render_shot_video
    d = Path(cache) / f"videos_{FRESH_VIDEO_SIZE[0]}x{FRESH_VIDEO_SIZE[1]}_seed{FRESH_VIDEO_SEED}"
    for i in range(n):
        name = f"fresh_{i:02d}_{FRESH_OUTCOMES[i % len(FRESH_OUTCOMES)]}"
        if (d / f"{name}.json").exists():
            continue
        log(f"rendering fresh shot video {i + 1}/{n} into {d} (cached for later runs) ...")
        rig = make_rig(f"fresh_video{i}", FRESH_VIDEO_SEED * 100 + i, FRESH_VIDEO_SIZE,
                       mat_color=FRESH_MATS[i % len(FRESH_MATS)])
        render_shot_video(d, name, rig, np.random.default_rng([FRESH_VIDEO_SEED, i]),
                          outcome=FRESH_OUTCOMES[i % len(FRESH_OUTCOMES)])
    return d


def _shot_docs(d: Path, limit: int | None = None) -> list[Path]:
    docs = sorted(p for p in d.glob("*.json") if (json.loads(p.read_text()).get("kind") == "shot_video"))
    return docs[:limit] if limit is not None else docs


def bench_tiddlywinks_video(video_dir: Path | str | None = None, modes: tuple[str, ...] = ("truth", "vision"),
                            fresh: int = 0, cache: Path | None = None, log=print) -> list[str]:
    """Lines to print: gate throughput at 1080p, then per mode the shot-set accuracy, swaps and latency."""
    d = Path(video_dir) if video_dir is not None else DEFAULT_VIDEO_DIR
    docs = _shot_docs(d)
    lines = [f"tiddlywinks-video: {len(docs)} shot video(s) in {d}"]
    if fresh > 0 and cache is not None:
        fd = fresh_videos(fresh, cache, log)
        extra = _shot_docs(fd, fresh)
        docs += extra
        lines.append(f"  + {len(extra)} fresh {FRESH_VIDEO_SIZE[0]}x{FRESH_VIDEO_SIZE[1]} shot video(s) in {fd}")
    first_video = None
    if docs:
        first_video = docs[0].with_name(json.loads(docs[0].read_text())["video"]["path"])
    fps = gate_fps_1080p(first_video)
    lines.append(f"motion gate 1080p, one core: {fps:.0f} fps (>= {GATE_FPS_MIN:.0f}) {_verdict(fps >= GATE_FPS_MIN)}")
    for mode in modes:
        results = []
        for p in docs:
            try:
                results.append(run_video(p, mode))
            except Exception as exc:  # noqa: BLE001 - a bench reports a crash as a failed video, loudly
                results.append({"video": p.stem, "mode": mode, "shots": 0, "exact": False, "swap": False,
                                "latency_ms": [], "why": f"ERROR {type(exc).__name__}: {exc}"})
        if not results:
            continue
        exact = sum(1 for r in results if r["exact"])
        swaps = sum(1 for r in results if r["swap"])
        ratio = exact / len(results)
        lines.append(f"[{mode}] shot sets exact (moved/potted/out/disturbed): {exact}/{len(results)} = "
                     f"{ratio:.0%} (>= {SETS_EXACT_MIN_RATIO:.0%}) {_verdict(ratio >= SETS_EXACT_MIN_RATIO)}")
        lines.append(f"[{mode}] identity swaps: {swaps} video(s) (= 0) {_verdict(swaps == 0)}")
        lat = [v for r in results for v in r["latency_ms"]]
        cpu = [v for r in results for v in r.get("latency_cpu_ms", [])]
        if cpu:
            # the verdict is on one core's CPU time: wall time on this shared machine also counts other jobs
            worst = max(cpu)
            lines.append(f"[{mode}] rest -> rulings latency, one core CPU time ({len(cpu)} rests): median "
                         f"{statistics.median(cpu):.0f} ms, max {worst:.0f} ms (<= {LATENCY_MAX_MS:.0f}) "
                         f"{_verdict(worst <= LATENCY_MAX_MS)}; wall time on this machine: median "
                         f"{statistics.median(lat):.0f} ms, max {max(lat):.0f} ms")
        elif lat:
            worst = max(lat)
            lines.append(f"[{mode}] rest -> rulings latency: median {statistics.median(lat):.0f} ms, max "
                         f"{worst:.0f} ms (<= {LATENCY_MAX_MS:.0f}) {_verdict(worst <= LATENCY_MAX_MS)}")
        for r in results:
            if not r["exact"] or r["swap"]:
                lines.append(f"  {r['video']}: shots {r['shots']} got {r.get('got')} want {r.get('want')} "
                             f"swaps {r.get('swaps', [])} {r.get('why', '')}".rstrip())
    return lines
