"""Live games: frame sources, the motion gate, and the per-game loop that turns frames into stored rulings.

Kept apart from the routes so a later issue can replace :class:`MotionGate` with real shot-splitting. The loop
never dies on bad input: a source that drops is reopened with exponential backoff (its status is shown on the
umpire page), and a frame the pipeline refuses becomes an ``analysis_error`` event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from api.pipeline import Pipeline, encode_jpeg, jsonable
from api.routes.errors import ApiError
from api.settings import Settings
from api.storage import Storage
from api.tracking import RestFollower, TrackConfig, Tracker, shot_line

log = logging.getLogger("tableref.live")


class MotionGate:
    """Fires once each time the picture comes to rest.

    At rest means: the mean absolute difference between consecutive downscaled grey frames stays below
    ``threshold`` (grey levels, 0-255) for ``still_frames`` frames in a row. The mean is taken over each
    ``tile_px`` square of the downscaled frame and the largest counts: a wink is a few pixels at that scale, and a
    whole-frame mean would drown it (a sliding wink in the simulator's shot videos moves a tile's mean by 2-15
    grey levels, the whole frame's by 0.2, no more than compression noise). After firing, the gate waits for
    motion before it can fire again, so a still table is analysed once, not on every frame.
    """

    def __init__(self, threshold: float = 1.0, still_frames: int = 5, width_px: int = 160, tile_px: int = 8) -> None:
        self.threshold = threshold
        self.still_frames = still_frames
        self.width_px = width_px
        self.tile_px = tile_px
        self._prev: np.ndarray | None = None
        self._still = 0
        self._fired = False
        self.last_diff: float | None = None

    @property
    def at_rest(self) -> bool:
        return self._still >= self.still_frames

    def _small_grey(self, frame_bgr: np.ndarray) -> np.ndarray:
        h, w = frame_bgr.shape[:2]
        scale = self.width_px / float(w)
        small = cv2.resize(frame_bgr, (self.width_px, max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
        return grey.astype(np.float32)

    def _largest_tile_mean(self, diff: np.ndarray) -> float:
        t = self.tile_px
        rows, cols = diff.shape[0] // t, diff.shape[1] // t
        if rows == 0 or cols == 0:
            return float(diff.mean())
        return float(diff[: rows * t, : cols * t].reshape(rows, t, cols, t).mean(axis=(1, 3)).max())

    def update(self, frame_bgr: np.ndarray) -> bool:
        """Feed one frame; True exactly when the picture has just come to rest."""
        grey = self._small_grey(frame_bgr)
        if self._prev is not None and self._prev.shape == grey.shape:
            self.last_diff = self._largest_tile_mean(np.abs(grey - self._prev))
            moving = self.last_diff >= self.threshold
        else:
            self.last_diff = None
            moving = self._prev is not None  # a change of frame size counts as motion
        self._prev = grey
        if moving:
            self._still = 0
            self._fired = False
            return False
        self._still += 1
        if self._still >= self.still_frames and not self._fired:
            self._fired = True
            return True
        return False


# --- sources ---------------------------------------------------------------------------------------------------
class SourceError(ValueError):
    """A frame source that cannot be opened or read."""


def source_label(spec: dict[str, Any]) -> str:
    kind = spec.get("kind")
    if kind == "stills":
        return f"stills ({len(spec.get('paths', []))} images)"
    return f"{kind} {spec.get('value')}"


class CaptureSource:
    """An OpenCV ``VideoCapture`` on a device index, a video file or a stream URL."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.kind = spec["kind"]
        self.loop = bool(spec.get("loop", False))
        value = spec["value"]
        self.is_file = self.kind == "file"
        target: int | str = int(value) if self.kind == "device" else str(value)
        self.cap = cv2.VideoCapture(target)
        if not self.cap.isOpened():
            self.cap.release()
            raise SourceError(f"cannot open {source_label(spec)}")
        fps = float(self.cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = fps if 1.0 <= fps <= 240.0 else 25.0
        # A looping file may hold its last frame a while (the table at rest after the shot) before restarting.
        self.hold_end_frames = round(float(spec.get("hold_end_s", 0.0)) * self.fps)
        self._last: np.ndarray | None = None
        self._held = 0

    def read(self) -> np.ndarray | None:
        ok, frame = self.cap.read()
        if ok and frame is not None:
            self._last = frame
            return frame
        if self.is_file and self.loop:
            if self._last is not None and self._held < self.hold_end_frames:
                self._held += 1
                return self._last
            self._held = 0
            self.cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, frame = self.cap.read()
            if ok and frame is not None:
                return frame
        return None

    def release(self) -> None:
        self.cap.release()


class StillsSource:
    """Still images shown in turn, each held for ``hold_s`` seconds: a table at rest between shots."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.is_file = True
        self.loop = bool(spec.get("loop", True))
        self.fps = float(spec.get("fps", 10.0))
        self.hold_frames = max(1, round(float(spec.get("hold_s", 5.0)) * self.fps))
        self.frames = []
        for p in spec.get("paths", []):
            img = cv2.imread(str(p), cv2.IMREAD_COLOR)
            if img is not None:
                self.frames.append(img)
        if not self.frames:
            raise SourceError(f"none of the still images could be read: {spec.get('paths')}")
        self._i = 0

    def read(self) -> np.ndarray | None:
        idx = self._i // self.hold_frames
        if idx >= len(self.frames):
            if not self.loop:
                return None
            self._i, idx = 0, 0
        self._i += 1
        return self.frames[idx]

    def release(self) -> None:
        self.frames = []


def open_source(spec: dict[str, Any]) -> CaptureSource | StillsSource:
    if spec.get("kind") == "stills":
        return StillsSource(spec)
    if spec.get("kind") in ("device", "file", "url"):
        return CaptureSource(spec)
    raise SourceError(f"unknown source kind {spec.get('kind')!r}")


# --- broadcasting ----------------------------------------------------------------------------------------------
class Hub:
    """Fan-out of JSON messages from any thread to asyncio subscribers (WebSocket handlers)."""

    def __init__(self, max_queue: int = 1000) -> None:
        self._subs: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()
        self._lock = threading.Lock()
        self.max_queue = max_queue

    def subscribe(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue]:
        sub = (asyncio.get_running_loop(), asyncio.Queue(self.max_queue))
        with self._lock:
            self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: tuple[asyncio.AbstractEventLoop, asyncio.Queue]) -> None:
        with self._lock:
            self._subs.discard(sub)

    def publish(self, message: dict[str, Any]) -> None:
        with self._lock:
            subs = list(self._subs)
        for loop, queue in subs:
            def put(q: asyncio.Queue = queue) -> None:
                try:
                    q.put_nowait(message)
                except asyncio.QueueFull:  # a client that stopped reading: it re-syncs from ?after=seq
                    pass
            try:
                loop.call_soon_threadsafe(put)
            except RuntimeError:  # its loop has closed
                self.unsubscribe((loop, queue))


class FeedBox:
    """The latest annotated JPEG of a game, with a version counter the MJPEG stream polls."""

    def __init__(self) -> None:
        self.jpeg: bytes | None = None
        self.version = 0
        self._lock = threading.Lock()

    def put(self, jpeg: bytes) -> None:
        with self._lock:
            self.jpeg = jpeg
            self.version += 1

    def get(self) -> tuple[int, bytes | None]:
        with self._lock:
            return self.version, self.jpeg


# --- score summary ----------------------------------------------------------------------------------------------
_COLORS = ("blue", "green", "red", "yellow")
_PLACE_POINTS = (4.0, 2.0, 1.0, 0.0)


def score_summary(document: dict[str, Any] | None) -> dict[str, Any]:
    """Per-colour tiddlies and points of a position as if play stopped now (TW A8, TW 10(b)).

    Tiddlies = 3 per potted wink + 1 per unsquopped wink on the field; unplayed winks count 0. Places earn
    4/2/1/0 and tied colours share the points of the places they occupy. A document that carries its own
    ``score`` (from the rule engine) is passed through instead.
    """
    if document and isinstance(document.get("score"), dict):
        return {"source": "adjudicator", **document["score"]}
    for ruling in (document or {}).get("rulings", []):
        from_engine = _score_from_ruling(ruling) if isinstance(ruling, dict) else None
        if from_engine is not None:
            return from_engine
    tiddlies = {c: 0 for c in _COLORS}
    for p in (document or {}).get("pieces", []):
        color = p.get("color")
        if color not in tiddlies:
            continue
        if p.get("potted"):
            tiddlies[color] += 3
        elif not (p.get("off_mat") or p.get("unplayed") or p.get("squopped")):
            tiddlies[color] += 1
    ranked = sorted(_COLORS, key=lambda c: -tiddlies[c])
    points: dict[str, float] = {}
    i = 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and tiddlies[ranked[j]] == tiddlies[ranked[i]]:
            j += 1
        share = sum(_PLACE_POINTS[i:j]) / (j - i)
        for c in ranked[i:j]:
            points[c] = share
        i = j
    return {"source": "TW A8 (provisional, no pot-out)", "tiddlies": tiddlies, "points": points,
            "partnerships": {"blue-red": points["blue"] + points["red"],
                             "green-yellow": points["green"] + points["yellow"]}}


def _score_from_ruling(ruling: dict[str, Any]) -> dict[str, Any] | None:
    """The rule engine's score ruling (``TW 10(a)``/``TW 10(b)``, decision ``score``) as a summary."""
    ev = ruling.get("evidence")
    if ruling.get("decision") != "score" or not isinstance(ev, dict):
        return None
    if not all(f"{c}_points" in ev for c in _COLORS):
        return None
    summary: dict[str, Any] = {"source": f"rule engine, {ruling.get('rule', '')}".strip(", ")}
    if all(f"{c}_tiddlies" in ev for c in _COLORS):
        summary["tiddlies"] = {c: ev[f"{c}_tiddlies"] for c in _COLORS}
    summary["points"] = {c: ev[f"{c}_points"] for c in _COLORS}
    summary["partnerships"] = {"blue-red": ev.get("blue_red_points"), "green-yellow": ev.get("green_yellow_points")}
    if ruling.get("explanation"):
        summary["explanation"] = ruling["explanation"]
    return summary


def ruling_key(ruling: dict[str, Any]) -> str:
    """Identity of a ruling across frames: the same clause, decision and pieces is the same ruling."""
    if "rule" in ruling:
        pieces = ruling.get("piece_ids") or ruling.get("pieces") or []
        # A game-level ruling (score, game ceases) names no pieces: its measurements are what it says.
        extra = ruling.get("evidence") if not pieces else ruling.get("interpretations")
        return json.dumps([ruling.get("rule"), ruling.get("decision"), sorted(map(str, pieces)), extra],
                          sort_keys=True, default=str)
    return json.dumps({k: v for k, v in ruling.items() if k not in ("frame_idx", "confidence", "evidence")},
                      sort_keys=True, default=str)


def log_line(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored tracker record as served and published: ``shot_line`` (``tableref track --json``) with its
    ``seq``, and a correction's input (what the umpire changed)."""
    rec = stored["record"]
    out = {"seq": stored["seq"], "created_at": stored["created_at"], **shot_line(rec)}
    if rec.get("kind") == "correction":
        out["correction"] = rec.get("input", {}).get("correction")
    return out


# --- per-game loop ----------------------------------------------------------------------------------------------
@dataclass
class SourceStatus:
    state: str = "none"  # none | connecting | live | reconnecting | ended | stopped | error
    detail: str = ""
    attempts: int = 0
    retry_in_s: float | None = None
    frames_read: int = 0
    last_frame_at: float | None = None
    at_rest: bool = False
    overlay: bool = False  # the feed shows the analysis of the current rest
    motion: float | None = None
    analyses: int = 0
    errors: int = 0
    last_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class GameLive:
    """In-memory live state of one game."""

    game_id: str
    hub: Hub = field(default_factory=Hub)
    feed: FeedBox = field(default_factory=FeedBox)
    status: SourceStatus = field(default_factory=SourceStatus)
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_keys: set[str] | None = None
    runner: SourceRunner | None = None
    follower: RestFollower | None = None  # tiddlywinks: the game state machine fed at each rest
    started_at: float | None = None  # wall time of the tracker's start record (the game clock's zero)


class GameManager:
    """Owns the live state of every game: analysis of frames, ruling persistence and broadcast, sources."""

    def __init__(self, storage: Storage, settings: Settings, pipeline: Callable[[], Pipeline]) -> None:
        self.storage = storage
        self.settings = settings
        self.pipeline = pipeline
        self._games: dict[str, GameLive] = {}
        self._lock = threading.Lock()

    def live(self, game_id: str) -> GameLive:
        with self._lock:
            g = self._games.get(game_id)
            if g is None:
                g = self._games[game_id] = GameLive(game_id)
            return g

    def process_frame(self, game_id: str, frame_bgr: np.ndarray, origin: str = "push") -> dict[str, Any]:
        """Analyse one still frame of a game, store and broadcast its new rulings.

        Raises :class:`ApiError` when the pipeline refuses the frame (the caller decides whether that is a
        4xx or a logged event).
        """
        game = self.storage.get_game(game_id)
        if game is None:
            raise ApiError(404, "game_not_found", f"no game with id {game_id!r}")
        g = self.live(game_id)
        calibration = self._calibration_of(game)
        pipeline = self.pipeline()
        if game["game"] == "tiddlywinks" and callable(getattr(pipeline, "rest_scene", None)):
            return self._track_rest(game, g, frame_bgr, origin, calibration, pipeline)
        with g.lock:
            document = jsonable(pipeline.analyze(game["game"], frame_bgr, calibration))
            frame_idx = self.storage.next_frame_idx(game_id)
            if g.last_keys is None:
                prev = (game.get("state") or {}).get("rulings", [])
                g.last_keys = {ruling_key(r) for r in prev if isinstance(r, dict)}
            rulings = [r for r in document.get("rulings", []) if isinstance(r, dict)]
            keys = [ruling_key(r) for r in rulings]
            fresh, seen = [], set()
            for r, k in zip(rulings, keys):
                if k not in g.last_keys and k not in seen:
                    fresh.append({**r, "frame_idx": frame_idx if r.get("frame_idx") is None else r["frame_idx"]})
                    seen.add(k)
            g.last_keys = set(keys)
            state = {**document, "frame_idx": frame_idx, "origin": origin, "analysed_at": time.time()}
            stored = self.storage.record_analysis(game_id, state, fresh, frame_idx)
            g.status.analyses += 1
        for item in stored:
            g.hub.publish({"type": "ruling", **item})
        g.hub.publish({"type": "analysis", "frame_idx": frame_idx, "new_rulings": len(stored),
                       "summary": score_summary(document)})
        return {"frame_idx": frame_idx, "document": document, "new_rulings": stored}

    def _calibration_of(self, game: dict[str, Any]) -> dict[str, Any] | None:
        cal = self.storage.get_calibration(game["calibration_id"]) if game["calibration_id"] else None
        return cal["calibration"] if cal else None

    # tiddlywinks: shot by shot ---------------------------------------------------------------------------
    def _follower(self, game: dict[str, Any], g: GameLive, calibration: dict[str, Any] | None,
                  pipeline: Any) -> RestFollower:
        """The game's tracker: from its stored log after a restart (play goes on from the last stored state),
        else a fresh one that starts at the next rest."""
        if g.follower is not None:
            return g.follower
        from adjudicator.tiddlywinks_game import GameState
        from geometry.types import GameType

        rows = self.storage.list_shots(game["id"])
        with_state = [r for r in rows if isinstance(r["record"].get("state"), dict)]
        if with_state:
            state = GameState.from_dict(with_state[-1]["record"]["state"])
            tracker = Tracker(TrackConfig(first=state.squidge_off_winner, game_type=state.game_type,
                                          time_limit_s=state.time_limit_s))
            tracker.state = state
            tracker.records = [r["record"] for r in rows]
            g.started_at = with_state[0]["created_at"]
        else:
            tracker = Tracker(TrackConfig(game_type=GameType(game["game_type"])))

        def analyze(frame: np.ndarray, cal: dict[str, Any] | None, change: Any) -> dict[str, Any]:
            # The first rest is read whole, as a photo with its rulings (squops, squidge-off); later ones only
            # where the picture changed since the last rest.
            if tracker.state is None:
                return jsonable(pipeline.analyze("tiddlywinks", frame, cal))
            return pipeline.rest_scene(frame, cal, change)

        g.follower = RestFollower(tracker, calibration, analyze=analyze)
        return g.follower

    def _store_record(self, game_id: str, g: GameLive, rec: dict[str, Any], frame_idx: int | None,
                      origin: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        """Store one tracker record, the game's current document and the record's rulings; publish them."""
        shot = self.storage.add_shot(game_id, rec)
        if rec["kind"] == "start":
            g.started_at = shot["created_at"]
        follower = g.follower
        assert follower is not None and follower.tracker.state is not None
        from adjudicator.tiddlywinks_game import state_summary
        from geometry.records import scene_to_document

        # A start record has no rulings of its own: the photo analysis of the first rest has them.
        found = (follower.last_doc or {}).get("rulings", []) if rec["kind"] == "start" else rec.get("rulings", [])
        rulings = [{**r, "frame_idx": frame_idx if r.get("frame_idx") is None else r["frame_idx"]} for r in found]
        document = {**(follower.last_doc or {}), **scene_to_document(follower.tracker.state.scene),
                    "rulings": found, "game_state": rec.get("summary") or state_summary(follower.tracker.state),
                    "shot": shot_line(rec)}
        document = jsonable(document)
        state = {**document, "frame_idx": frame_idx, "origin": origin, "analysed_at": time.time()}
        stored = self.storage.record_analysis(game_id, state, rulings, frame_idx)
        g.last_keys = {ruling_key(r) for r in rulings}
        message = {"type": "shot", **log_line(shot)}
        return document, stored, message

    def _publish(self, g: GameLive, stored: list[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
        for item in stored:
            g.hub.publish({"type": "ruling", **item})
        for m in messages:
            g.hub.publish(m)

    def _track_rest(self, game: dict[str, Any], g: GameLive, frame_bgr: np.ndarray, origin: str,
                    calibration: dict[str, Any] | None, pipeline: Any) -> dict[str, Any]:
        """A tiddlywinks rest frame through the same step as ``tableref track`` (``RestFollower``): compared
        with the last rest, measured where it changed, refereed as a shot; the record is the game's log."""
        game_id = game["id"]
        with g.lock:
            follower = self._follower(game, g, calibration, pipeline)
            elapsed = None if g.started_at is None else time.time() - g.started_at
            frame_idx = self.storage.next_frame_idx(game_id)
            rec = follower.at_rest(frame_bgr, frame_idx, elapsed_s=elapsed, catch=())
            document, stored, message = self._store_record(game_id, g, rec, frame_idx, origin)
            g.status.analyses += 1
        self._publish(g, stored, [message, {"type": "analysis", "frame_idx": frame_idx, "new_rulings": len(stored),
                                            "summary": score_summary(document)}])
        return {"frame_idx": frame_idx, "document": document, "new_rulings": stored, "shot": message}

    def correct(self, game_id: str, correction: dict[str, Any]) -> dict[str, Any]:
        """An umpire's correction of a tiddlywinks game (``Tracker.correct``); play goes on from it."""
        from adjudicator.types import AdjudicatorError

        game = self.storage.get_game(game_id)
        if game is None:
            raise ApiError(404, "game_not_found", f"no game with id {game_id!r}")
        if game["game"] != "tiddlywinks":
            raise ApiError(409, "not_tracked", f"corrections apply to tiddlywinks games, not {game['game']!r}")
        g = self.live(game_id)
        pipeline = self.pipeline()
        if not callable(getattr(pipeline, "rest_scene", None)):
            raise ApiError(409, "no_tracker", "this service's pipeline does not follow games shot by shot")
        with g.lock:
            follower = self._follower(game, g, self._calibration_of(game), pipeline)
            if follower.tracker.state is None:
                raise ApiError(409, "no_game_started", "no rest state yet: a correction needs the game started")
            try:
                rec = follower.tracker.correct(correction)
            except (AdjudicatorError, KeyError, TypeError, ValueError) as exc:
                raise ApiError(422, "invalid_correction", f"correction {correction!r} refused: {exc}") from None
            document, stored, message = self._store_record(game_id, g, rec, None, "correction")
        self._publish(g, stored, [message])
        return message

    def publish_feed(self, game_id: str, frame_bgr: np.ndarray, document: dict[str, Any] | None) -> None:
        """Annotate a frame with a document's overlay and make it the game's current feed picture."""
        try:
            shown = self.pipeline().annotate(frame_bgr, document) if document else frame_bgr
        except Exception:  # an overlay bug must not stop the feed: show the plain frame, keep the traceback
            log.exception("overlay failed on game %s", game_id)
            shown = frame_bgr
        h, w = shown.shape[:2]
        if w > self.settings.feed_width_px:
            shown = cv2.resize(shown, (self.settings.feed_width_px, max(1, int(h * self.settings.feed_width_px / w))),
                               interpolation=cv2.INTER_AREA)
        self.live(game_id).feed.put(encode_jpeg(shown))

    def status(self, game_id: str) -> dict[str, Any]:
        return self.live(game_id).status.to_dict()

    # sources ------------------------------------------------------------------------------------------------
    def attach(self, game_id: str, spec: dict[str, Any], *, persist: bool = True) -> None:
        self.detach(game_id, persist=False)
        if persist:
            self.storage.set_source(game_id, spec)
            self.storage.add_event(game_id, "source_attached", {"source": spec})
        g = self.live(game_id)
        g.status = SourceStatus(state="connecting", detail=source_label(spec))
        runner = SourceRunner(self, game_id, spec)
        g.runner = runner
        runner.start()

    def detach(self, game_id: str, *, persist: bool = True) -> None:
        g = self.live(game_id)
        runner, g.runner = g.runner, None
        if runner is not None:
            runner.stop()
        if persist:
            self.storage.set_source(game_id, None)
            self.storage.add_event(game_id, "source_detached", {})
            g.status = SourceStatus(state="none")

    def resume(self) -> list[str]:
        """Re-attach the saved sources of active games (after a restart); returns their ids."""
        resumed = []
        for game in self.storage.list_games():
            if game["status"] == "active" and game["source"]:
                self.attach(game["id"], game["source"], persist=False)
                self.storage.add_event(game["id"], "resumed", {"source": game["source"]})
                resumed.append(game["id"])
        return resumed

    def shutdown(self) -> None:
        with self._lock:
            games = list(self._games.values())
        for g in games:
            if g.runner is not None:
                g.runner.stop(join=False)
        for g in games:
            if g.runner is not None:
                g.runner.join(5.0)


class SourceRunner:
    """One game's source: a reader thread (frames, motion gate, annotated feed, reconnects) and an analysis
    thread, so the feed keeps moving while a frame at rest is analysed.

    The analysis thread holds one slot: when the table comes to rest again before the last analysis is done,
    the newest rest replaces the waiting one. The feed shows the overlay only of the analysis of the current
    rest; while that is pending, or while pieces move, it shows the plain frame.
    """

    def __init__(self, manager: GameManager, game_id: str, spec: dict[str, Any]) -> None:
        self.manager = manager
        self.game_id = game_id
        self.spec = spec
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"source-{game_id}", daemon=True)
        self._worker = threading.Thread(target=self._work, name=f"analysis-{game_id}", daemon=True)
        self._slot_lock = threading.Lock()
        self._slot: tuple[np.ndarray, int] | None = None
        self._slot_ready = threading.Event()
        self._reader_done = threading.Event()
        self._doc: dict[str, Any] | None = None
        self._doc_rest = -1

    def start(self) -> None:
        self._worker.start()
        self._thread.start()

    def stop(self, join: bool = True) -> None:
        self._stop.set()
        self._slot_ready.set()
        if join:
            self.join(5.0)

    def join(self, timeout: float) -> None:
        for thread in (self._thread, self._worker):
            if thread.is_alive() and threading.current_thread() is not thread:
                thread.join(timeout)

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        try:
            self.manager.storage.add_event(self.game_id, kind, data)
        except Exception:  # the store is gone (shutdown): the loop must not die for a log line
            log.exception("could not store event %s", kind)
        self.manager.live(self.game_id).hub.publish({"type": "status", "status": self.status.to_dict()})

    @property
    def status(self) -> SourceStatus:
        return self.manager.live(self.game_id).status

    # analysis thread ------------------------------------------------------------------------------------
    def _submit(self, frame: np.ndarray, rest_id: int) -> None:
        with self._slot_lock:
            self._slot = (frame.copy(), rest_id)
        self._slot_ready.set()

    def _work(self) -> None:
        while True:
            self._slot_ready.wait(0.5)
            with self._slot_lock:
                item, self._slot = self._slot, None
                self._slot_ready.clear()
            if self._stop.is_set():
                return
            if item is None:
                if self._reader_done.is_set():
                    return  # the reader has ended and nothing waits: done
                continue
            frame, rest_id = item
            document = self._analyse(frame)
            if document is not None:
                with self._slot_lock:
                    self._doc, self._doc_rest = document, rest_id
                try:
                    self.manager.publish_feed(self.game_id, frame, document)
                except Exception:  # the feed is cosmetic here; the reader publishes again within a frame
                    log.exception("feed update failed on game %s", self.game_id)

    def _current_doc(self, rest_id: int) -> dict[str, Any] | None:
        with self._slot_lock:
            return self._doc if self._doc_rest == rest_id else None

    # reader thread --------------------------------------------------------------------------------------
    def _run(self) -> None:
        s = self.manager.settings
        gate = MotionGate(s.motion_threshold, s.still_frames, s.motion_width_px, s.motion_tile_px)
        backoff = s.reconnect_initial_s
        source = None
        rest_id = 0
        last_feed = 0.0
        ended = False
        try:
            while not self._stop.is_set():
                if source is None:
                    try:
                        source = open_source(self.spec)
                    except (SourceError, cv2.error, OSError, ValueError) as exc:
                        self.status.attempts += 1
                        self.status.state, self.status.detail = "reconnecting", str(exc)
                        self.status.retry_in_s = backoff
                        self._event("source_error", {"detail": str(exc), "retry_in_s": backoff})
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, s.reconnect_max_s)
                        continue
                    self.status.state, self.status.detail = "live", source_label(self.spec)
                    self.status.retry_in_s = None
                    self._event("source_live", {"source": source_label(self.spec)})
                t0 = time.monotonic()
                frame = source.read()
                if frame is None:
                    source.release()
                    source = None
                    if self.spec.get("kind") in ("file", "stills") and not self.spec.get("loop", False):
                        ended = True
                        return
                    self.status.state, self.status.detail = "reconnecting", "stream dropped"
                    self.status.retry_in_s = backoff
                    self._event("source_dropped", {"retry_in_s": backoff})
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, s.reconnect_max_s)
                    continue
                backoff = s.reconnect_initial_s
                self.status.frames_read += 1
                self.status.last_frame_at = time.time()
                try:
                    if gate.update(frame):
                        rest_id += 1
                        self._submit(frame, rest_id)
                    self.status.at_rest, self.status.motion = gate.at_rest, gate.last_diff
                    now = time.monotonic()
                    if now - last_feed >= 1.0 / s.feed_fps:
                        doc = self._current_doc(rest_id) if gate.at_rest else None
                        self.manager.publish_feed(self.game_id, frame, doc)
                        self.status.overlay = doc is not None
                        last_feed = now
                except Exception as exc:  # a bug on one frame (odd frame shape, store error) must not end the loop
                    log.exception("live loop error on game %s", self.game_id)
                    self.status.errors += 1
                    self.status.last_error = f"{type(exc).__name__}: {exc}"
                if getattr(source, "is_file", False):  # play files in real time, as a camera would
                    self._stop.wait(max(0.0, 1.0 / source.fps - (time.monotonic() - t0)))
        finally:
            if source is not None:
                source.release()
            self._reader_done.set()
            self._slot_ready.set()
            if ended:
                # The end of a file: let the last rest's analysis finish, then say so.
                if threading.current_thread() is not self._worker:
                    self._worker.join()
                self.status.state, self.status.detail = "ended", "end of file"
                self._event("source_ended", {})
            elif self._stop.is_set():
                self.status.state = "stopped"

    def _analyse(self, frame: np.ndarray) -> dict[str, Any] | None:
        try:
            return self.manager.process_frame(self.game_id, frame, origin="source")["document"]
        except ApiError as exc:
            self.status.errors += 1
            self.status.last_error = exc.detail
            self._event("analysis_error", {"error": exc.code, "detail": exc.detail})
        except Exception as exc:  # a pipeline bug: logged with its traceback and shown; the feed keeps going
            log.exception("analysis crashed on game %s", self.game_id)
            self.status.errors += 1
            self.status.last_error = f"{type(exc).__name__}: {exc}"
            self._event("analysis_crash", {"detail": self.status.last_error})
        return None
