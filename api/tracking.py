"""Live tiddlywinks tracking: frames -> motion gate -> rest-state analysis -> game state machine -> log.

``track_stream(source, ...)`` reads a video file, a camera device or a URL with ``cv2.VideoCapture``, runs the
motion gate (``vision.motion``) on every frame and, at each rest, the still-photo pipeline
(``vision.tiddlywinks.measure_tiddlywinks``) on the rest frame, or a truth document (``--truth-json``,
``simulation.shot_video`` format) for testing. Each rest frame is also compared with the previous one
(``vision.rest_change``): where the picture changed is the evidence of what the shot touched; the matcher
keeps every wink elsewhere as it was, and only winks near a change are fitted again. The scene goes to ``adjudicator.tiddlywinks_game.apply_rest``;
each event yields one JSON-ready record, and the records form the game log (JSON lines): a ``start`` record
with the initial state, then ``rest`` / ``correction`` records each holding its input, report, rulings and the
full state after it. ``replay_log`` re-runs a log from its inputs and checks every stored state.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from adjudicator.tiddlywinks_game import GameState, apply_correction, apply_rest, new_game, state_summary
from adjudicator.tiddlywinks_turns import TurnState
from adjudicator.types import AdjudicatorError, TiddlywinksParams
from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from geometry.constants import LARGE_WINK_RADIUS_MM, MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
from geometry.matching import dedupe_same_spot, trim_to_equipment
from geometry.records import scene_from_document
from geometry.rest_change import RestChange
from geometry.types import Color, GameType
from vision.motion import MotionEvent, MotionGate, MotionParams
from vision.rest_change import RestChangeMeter
from vision.types import VisionError

LOG_VERSION = 1


class TrackingError(ValueError):
    """A source that cannot be read, a malformed truth file or log; the message names it."""


# --- sources -------------------------------------------------------------------------------------------------


def open_capture(source: str) -> tuple[cv2.VideoCapture, float, bool]:
    """``cv2.VideoCapture`` for a device number, a file or a URL; returns (capture, fps, is_live)."""
    live = source.isdigit() or "://" in source
    cap = cv2.VideoCapture(int(source)) if source.isdigit() else cv2.VideoCapture(source)
    if not cap.isOpened():
        if not live and not Path(source).exists():
            raise FileNotFoundError(2, "no such file", source)
        raise TrackingError(f"cannot open video source {source!r}")
    fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
    return cap, (fps if fps > 0 else 30.0), live


def frames_of(cap: cv2.VideoCapture, max_frames: int | None = None) -> Iterator[np.ndarray]:
    n = 0
    while max_frames is None or n < max_frames:
        ok, frame = cap.read()
        if not ok:
            return
        n += 1
        yield frame


class TruthFeed:
    """Rest-state truth by frame: ``rest_states[]`` of a shot-video truth file (``frames`` [first, last] and
    ``scene``), or a JSON list of such entries."""

    def __init__(self, doc: Any) -> None:
        states = doc.get("rest_states") if isinstance(doc, dict) else doc
        if not isinstance(states, list) or not states:
            raise TrackingError("truth JSON needs a non-empty 'rest_states' list")
        try:
            self.states = sorted(((int(s["frames"][0]), int(s["frames"][1]), s["scene"]) for s in states),
                                 key=lambda t: t[0])
        except (KeyError, TypeError, IndexError) as exc:
            raise TrackingError(f"malformed rest state in truth JSON: {exc}") from None
        self.camera = None
        cal = doc.get("calibration") if isinstance(doc, dict) else None
        if cal and cal.get("camera"):
            self.camera = CameraModel.from_dict(cal["camera"])

    @classmethod
    def from_path(cls, path: str | Path) -> TruthFeed:
        return cls(json.loads(Path(path).read_text()))

    def scene_at(self, frame_idx: int) -> dict[str, Any]:
        """The rest state holding ``frame_idx``, else the latest one that started before it."""
        best = self.states[0][2]
        for f0, f1, scene in self.states:
            if f0 <= frame_idx <= f1:
                return scene
            if f0 <= frame_idx:
                best = scene
        return best


def mat_polygon_px(camera: CameraModel | None, frame_wh: tuple[int, int] | None = None) -> np.ndarray | None:
    """The mat outline in pixels (plus a 40 mm margin, for winks going off), or None without a camera."""
    if camera is None:
        return None
    m = 40.0
    corners = np.array([[-MAT_HALF_LENGTH_MM - m, MAT_HALF_WIDTH_MM + m, 0.0],
                        [MAT_HALF_LENGTH_MM + m, MAT_HALF_WIDTH_MM + m, 0.0],
                        [MAT_HALF_LENGTH_MM + m, -MAT_HALF_WIDTH_MM - m, 0.0],
                        [-MAT_HALF_LENGTH_MM - m, -MAT_HALF_WIDTH_MM - m, 0.0]])
    px = np.asarray(camera.project_mm(corners), dtype=float)
    if frame_wh is not None and tuple(camera.image_size_wh_px) != tuple(frame_wh):
        px *= frame_wh[0] / camera.image_size_wh_px[0]
    return px


def load_calibration(path: str | Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    return json.loads(Path(path).read_text())


def _camera_of(calibration: dict[str, Any] | None) -> CameraModel | None:
    if not calibration:
        return None
    try:
        return CameraModel.from_dict(calibration.get("camera", calibration))
    except (KeyError, TypeError, ValueError):
        return None


# --- the tracker ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class TrackConfig:
    first: Color | None = None  # squidge-off winner; None: the colour of the first shot's played wink
    game_type: GameType = GameType.PAIRS
    time_limit_s: float | None | str = "default"


class Tracker:
    """Holds the game state and the log; feed it rest scenes (documents) and corrections."""

    def __init__(self, config: TrackConfig, log: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.config = config
        self.state: GameState | None = None
        self.records: list[dict[str, Any]] = []
        self._sink = log

    def _emit(self, rec: dict[str, Any]) -> dict[str, Any]:
        self.records.append(rec)
        if self._sink is not None:
            self._sink(rec)
        return rec

    def start(self, scene_doc: dict[str, Any], frame_idx: int | None = None) -> dict[str, Any]:
        scene, dup = dedupe_same_spot(scene_from_document(scene_doc))
        scene, dropped = trim_to_equipment(scene)
        dropped = tuple(sorted(dup + dropped))
        first = self.config.first or scene.squidge_off_winner or Color.BLUE
        self.state = new_game(scene, first, game_type=self.config.game_type,
                              time_limit_s=self.config.time_limit_s)
        return self._emit({"kind": "start", "version": LOG_VERSION, "frame_idx": frame_idx,
                           "first_inferred": self.config.first is None and scene.squidge_off_winner is None,
                           "dropped": list(dropped),
                           "state": self.state.to_dict()})

    def rest(self, scene_doc: dict[str, Any], *, elapsed_s: float | None, frame_idx: int | None = None,
             shot_frames: tuple[int, int] | None = None, played_color: str | None = None,
             latency_ms: float | None = None, latency_cpu_ms: float | None = None,
             change: RestChange | None = None) -> dict[str, Any]:
        """A rest after the first; ``change`` is where the picture changed since the previous rest frame."""
        if self.state is None:
            return self.start(scene_doc, frame_idx)
        t_apply = time.perf_counter()
        c_apply = time.thread_time()
        state = self.state
        notes: list[str] = []
        infer = (self.state.shot_number == 0 and self.config.first is None and played_color is None
                 and self.records and self.records[0].get("first_inferred"))
        scene, dup = dedupe_same_spot(scene_from_document(scene_doc))
        if infer:
            # Started mid-stream without a squidge-off winner: take the first played wink's colour as due.
            from geometry.matching import diff_rest_states
            d = diff_rest_states(state.scene, scene, change=change)
            if d.played_id is not None:
                color = state.scene.wink(d.played_id).color
                if color is not state.due_color:
                    state = replace(state, squidge_off_winner=color, turn=TurnState(color=color))
                    notes.append(f"first colour inferred: {color.value}")
        new, report, rulings = apply_rest(state, scene, elapsed_s=elapsed_s,
                                          played_color=None if played_color is None else Color(played_color),
                                          params=TiddlywinksParams(frame_idx=frame_idx), change=change)
        self.state = new
        out = report.to_dict()
        if dup:
            notes.append(f"same-spot duplicates dropped: {', '.join(dup)}")
        if notes:
            out["notes"] = [*out.get("notes", []), *notes]
        rec = {"kind": "rest", "frame_idx": frame_idx, "shot_frames": list(shot_frames) if shot_frames else None,
               "input": {"scene": scene_doc, "elapsed_s": elapsed_s, "played_color": played_color,
                         "infer_first": bool(infer), "change": None if change is None else change.to_dict()},
               "report": out, "rulings": [r.to_dict() for r in rulings], "summary": state_summary(new),
               "state": new.to_dict()}
        if latency_ms is not None:
            # Rest confirmed -> rulings out: the analysis of the rest frame plus the game step.
            rec["latency_ms"] = round(latency_ms + (time.perf_counter() - t_apply) * 1e3, 1)
        if latency_cpu_ms is not None:
            # the same on one core, whatever else the machine runs (this thread's CPU time)
            rec["latency_cpu_ms"] = round(latency_cpu_ms + (time.thread_time() - c_apply) * 1e3, 1)
        return self._emit(rec)

    def correct(self, correction: dict[str, Any]) -> dict[str, Any]:
        if self.state is None:
            raise TrackingError("no game started: a correction needs a first rest state")
        new, rulings = apply_correction(self.state, correction)
        self.state = new
        return self._emit({"kind": "correction", "input": {"correction": correction},
                           "rulings": [r.to_dict() for r in rulings], "summary": state_summary(new),
                           "state": new.to_dict()})


def shot_line(rec: dict[str, Any]) -> dict[str, Any]:
    """The one JSON line ``tableref track --json`` prints for a record (no full state, no input scene)."""
    if rec["kind"] == "rest_error":
        return dict(rec)
    if rec["kind"] == "start":
        return {"kind": "start", "frame_idx": rec.get("frame_idx"), "state": state_summary(
            GameState.from_dict(rec["state"]))}
    out = {k: v for k, v in rec.items() if k not in ("input", "state")}
    return out


#: A wink candidate this close to a changed spot (beyond its own radius) is measured again at a rest: a wink
#: touching a changed one is fitted with it (its edge and its vertical order bear on the changed wink's fit),
#: and a changed wink's change may lie across its whole diameter: two large radii and the matcher's margin.
FOCUS_MARGIN_MM = 2 * LARGE_WINK_RADIUS_MM + 8.0


def analyze_rest_frame(frame: np.ndarray, calibration: dict[str, Any] | None,
                       change: RestChange | None = None) -> dict[str, Any]:
    """The scene document of a rest frame. With ``change`` (the pixels' record since the last rest), only the
    winks where the picture changed are measured: the others are as the last rest measured them (the matcher
    keeps them, see ``geometry.matching.split_still``), so they are not fitted again."""
    from vision.tiddlywinks import TiddlywinksParams, document_from_measurement, measure_tiddlywinks
    focus = None
    if change is not None:
        def focus(center_mm: tuple[float, float], radius_mm: float) -> bool:
            return change.changed_within(center_mm, radius_mm + FOCUS_MARGIN_MM)
    m = measure_tiddlywinks(frame, calibration, TiddlywinksParams(), focus=focus)
    return document_from_measurement(m)


Analyze = Callable[[np.ndarray, "dict[str, Any] | None", "RestChange | None"], dict[str, Any]]


@dataclass
class RestFollower:
    """One rest frame -> one log record: the step ``track_stream`` and the service's live games share.

    Compares the frame with the previous rest frame (``RestChange``: what the shot touched), reads its scene
    (``analyze``, by default :func:`analyze_rest_frame` focused on the change, or a given truth document) and
    feeds it to the tracker. Without a calibration, the mat self-calibration of the first rest is kept: the
    camera does not move."""

    tracker: Tracker
    calibration: dict[str, Any] | None = None
    camera: CameraModel | None = None
    analyze: Analyze = analyze_rest_frame
    meter: RestChangeMeter = field(default_factory=RestChangeMeter)
    last_doc: dict[str, Any] | None = field(default=None, init=False)  # the scene read at the last rest

    def at_rest(self, frame: np.ndarray, frame_idx: int | None, *, initial: bool = False,
                elapsed_s: float | None = None, shot_frames: tuple[int, int] | None = None,
                doc: dict[str, Any] | None = None, catch: tuple[type[Exception], ...] = (VisionError, CalibrationError),
                ) -> dict[str, Any]:
        """The record of this rest (``start``, ``rest`` or, when the frame cannot be read, ``rest_error``: the
        game state is unchanged then, and the frame is not remembered)."""
        t_rest = time.perf_counter()
        c_rest = time.thread_time()
        tracker = self.tracker
        frame_wh = (frame.shape[1], frame.shape[0])
        small = self.meter.shrink(frame)
        change = None
        if tracker.state is not None and not initial:
            change = self.meter.against_last(small, frame_wh, self.camera, tracker.state.scene.pot_center_mm)
        if doc is None:
            try:
                doc = self.analyze(frame, self.calibration, change)
            except catch as exc:
                # This rest frame cannot be read (mat hidden, calibration lost): say so and wait for the next.
                return tracker._emit({"kind": "rest_error", "frame_idx": frame_idx, "error": str(exc)})
            if self.calibration is None and doc.get("calibration", {}).get("camera"):
                self.calibration = doc["calibration"]
                self.camera = _camera_of(self.calibration)
        if initial or tracker.state is None:
            rec = tracker.start(doc, frame_idx)
        else:
            rec = tracker.rest(doc, elapsed_s=elapsed_s, frame_idx=frame_idx, shot_frames=shot_frames,
                               latency_ms=(time.perf_counter() - t_rest) * 1e3,
                               latency_cpu_ms=(time.thread_time() - c_rest) * 1e3, change=change)
        self.meter.remember(small, self.camera, frame_wh)
        self.last_doc = doc
        return rec


def track_stream(source: str, *, calibration: dict[str, Any] | None = None, truth: TruthFeed | None = None,
                 config: TrackConfig | None = None, on_record: Callable[[dict[str, Any]], None] | None = None,
                 max_frames: int | None = None, motion: MotionParams | None = None) -> Tracker:
    """Follow a game from a video source; every record goes to ``on_record`` as it is made."""
    config = config or TrackConfig()
    cap, fps, live = open_capture(source)
    camera = _camera_of(calibration) or (truth.camera if truth is not None else None)
    gate: MotionGate | None = None
    follower = RestFollower(Tracker(config, on_record), calibration, camera)
    t0 = time.monotonic()
    shot_start: int | None = None
    try:
        for idx, frame in enumerate(frames_of(cap, max_frames)):
            if gate is None:
                h, w = frame.shape[:2]
                gate = MotionGate(motion or MotionParams.for_fps(fps), mat_polygon_px(camera, (w, h)))
            events: list[MotionEvent] = gate.update(frame, idx)
            for ev in events:
                if ev.kind == "shot_start":
                    shot_start = ev.frame_idx
                    continue
                start = shot_start if shot_start is not None else ev.start_idx
                elapsed = (time.monotonic() - t0) if live else (start or 0) / fps
                had_camera = follower.camera is not None
                follower.at_rest(frame, idx, initial=ev.initial, elapsed_s=elapsed,
                                 shot_frames=(start, ev.start_idx) if start is not None else None,
                                 doc=truth.scene_at(idx) if truth is not None else None)
                if not had_camera and follower.camera is not None:
                    # Self-calibrated at this rest: watch only the mat from now on.
                    gate.set_mat_polygon(mat_polygon_px(follower.camera, (frame.shape[1], frame.shape[0])))
                shot_start = None
    finally:
        cap.release()
    if gate is None and max_frames != 0:
        raise TrackingError(f"{source}: no frame could be decoded (not a video, or an empty one)")
    return follower.tracker


# --- the log -----------------------------------------------------------------------------------------------


def write_jsonl(path: str | Path) -> Callable[[dict[str, Any]], None]:
    """A sink appending each record as one JSON line, flushed at once (a crash loses no shot)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fh = p.open("w", encoding="utf-8")

    def sink(rec: dict[str, Any]) -> None:
        fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
        fh.flush()

    return sink


def read_log(path: str | Path) -> list[dict[str, Any]]:
    recs = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            recs.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise TrackingError(f"{path}:{n}: not a JSON line: {exc}") from None
    if not recs or recs[0].get("kind") != "start":
        raise TrackingError(f"{path}: a game log starts with a 'start' record")
    return recs


def replay_log(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Re-run a log from its start state and inputs; returns the new records and any mismatch found
    against the stored states (empty when the log replays exactly)."""
    start = records[0]
    state = GameState.from_dict(start["state"])
    tracker = Tracker(TrackConfig(first=state.squidge_off_winner, game_type=state.game_type,
                                  time_limit_s=state.time_limit_s))
    tracker.state = state
    tracker.records.append(start)
    mismatches: list[str] = []
    for i, rec in enumerate(records[1:], 2):
        inp = rec.get("input", {})
        if rec["kind"] == "rest_error":
            tracker.records.append(rec)
            continue
        if rec["kind"] == "rest":
            if inp.get("infer_first"):
                tracker.records[0] = {**start, "first_inferred": True}
                tracker.config.first = None
            new = tracker.rest(inp["scene"], elapsed_s=inp.get("elapsed_s"), frame_idx=rec.get("frame_idx"),
                               shot_frames=tuple(rec["shot_frames"]) if rec.get("shot_frames") else None,
                               played_color=inp.get("played_color"),
                               change=RestChange.from_dict(inp["change"]) if inp.get("change") else None)
            assert tracker.state is not None
            tracker.config.first = tracker.state.squidge_off_winner
        elif rec["kind"] == "correction":
            new = tracker.correct(inp["correction"])
        else:
            raise TrackingError(f"log record {i}: unknown kind {rec.get('kind')!r}")
        if new["state"] != rec.get("state"):
            mismatches.append(f"record {i}: replayed state differs from the stored one")
    return tracker.records, mismatches


def apply_corrections_file(tracker: Tracker, path: str | Path) -> None:
    """Corrections (a JSON list) applied in order; used by ``tableref track --correct``."""
    for c in json.loads(Path(path).read_text()):
        try:
            tracker.correct(c)
        except (AdjudicatorError, KeyError) as exc:
            raise TrackingError(f"bad correction {c!r}: {exc}") from None
