"""SQLite persistence of calibrations, games, rulings, events and photo-by-photo matches (stdlib ``sqlite3``, WAL mode).

Every write commits before it returns with ``synchronous=FULL``, so a ruling the API or a WebSocket has
acknowledged survives a crash or restart. One connection shared across threads behind a lock: the service
writes a few rows per ruling, far below what would need a pool.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from collections.abc import Callable
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calibrations (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    source TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    game TEXT NOT NULL,
    game_type TEXT NOT NULL,
    players TEXT NOT NULL,
    calibration_id TEXT,
    status TEXT NOT NULL,
    source TEXT,
    frame_count INTEGER NOT NULL DEFAULT 0,
    state TEXT
);
CREATE TABLE IF NOT EXISTS rulings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    created_at REAL NOT NULL,
    frame_idx INTEGER,
    data TEXT NOT NULL,
    UNIQUE (game_id, seq)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL REFERENCES games(id),
    created_at REAL NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS shots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    created_at REAL NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (game_id, seq)
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    game TEXT NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS match_records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id TEXT NOT NULL REFERENCES matches(id),
    seq INTEGER NOT NULL,
    created_at REAL NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    image BLOB,
    UNIQUE (match_id, seq)
);
CREATE INDEX IF NOT EXISTS shots_game ON shots (game_id, seq);
CREATE INDEX IF NOT EXISTS rulings_game ON rulings (game_id, seq);
CREATE INDEX IF NOT EXISTS events_game ON events (game_id, id);
"""


def new_id(prefix: str) -> str:
    """A short random id such as ``g_1f3a9c0d2b``."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


class Storage:
    """The service's SQLite store; thread-safe, every method commits."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        with self._lock:
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @property
    def journal_mode(self) -> str:
        with self._lock:
            return str(self._db.execute("PRAGMA journal_mode").fetchone()[0])

    # calibrations -------------------------------------------------------------------------------------------
    def add_calibration(self, source: str, data: dict[str, Any]) -> dict[str, Any]:
        cal_id = new_id("cal")
        now = time.time()
        with self._lock:
            self._db.execute("INSERT INTO calibrations (id, created_at, source, data) VALUES (?, ?, ?, ?)",
                             (cal_id, now, source, json.dumps(data)))
        return {"id": cal_id, "created_at": now, "source": source, "calibration": data}

    def get_calibration(self, cal_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM calibrations WHERE id = ?", (cal_id,)).fetchone()
        return None if row is None else _calibration_row(row)

    def list_calibrations(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM calibrations ORDER BY created_at, id").fetchall()
        return [_calibration_row(r) for r in rows]

    # games --------------------------------------------------------------------------------------------------
    def add_game(self, *, game: str, game_type: str, players: dict[str, str],
                 calibration_id: str | None) -> dict[str, Any]:
        game_id = new_id("g")
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT INTO games (id, created_at, updated_at, game, game_type, players, calibration_id, status)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'active')",
                (game_id, now, now, game, game_type, json.dumps(players), calibration_id))
        game_row = self.get_game(game_id)
        assert game_row is not None
        return game_row

    def get_game(self, game_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
        return None if row is None else _game_row(row)

    def list_games(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM games ORDER BY created_at, id").fetchall()
        return [_game_row(r) for r in rows]

    def set_source(self, game_id: str, source: dict[str, Any] | None) -> None:
        with self._lock:
            self._db.execute("UPDATE games SET source = ?, updated_at = ? WHERE id = ?",
                             (None if source is None else json.dumps(source), time.time(), game_id))

    def set_status(self, game_id: str, status: str) -> None:
        with self._lock:
            self._db.execute("UPDATE games SET status = ?, updated_at = ? WHERE id = ?",
                             (status, time.time(), game_id))

    def next_frame_idx(self, game_id: str) -> int:
        """Reserve the next frame index of a game (counts every analysed frame)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT frame_count FROM games WHERE id = ?", (game_id,)).fetchone()
                idx = int(row[0]) if row else 0
                self._db.execute("UPDATE games SET frame_count = ? WHERE id = ?", (idx + 1, game_id))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return idx

    def record_analysis(self, game_id: str, state: dict[str, Any], new_rulings: list[dict[str, Any]],
                        frame_idx: int | None) -> list[dict[str, Any]]:
        """Store a game's latest analysis and its new rulings in one transaction; returns the stored rulings
        with their per-game ``seq``."""
        now = time.time()
        stored: list[dict[str, Any]] = []
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM rulings WHERE game_id = ?",
                                       (game_id,)).fetchone()
                seq = int(row[0])
                for ruling in new_rulings:
                    seq += 1
                    self._db.execute(
                        "INSERT INTO rulings (game_id, seq, created_at, frame_idx, data) VALUES (?, ?, ?, ?, ?)",
                        (game_id, seq, now, frame_idx, json.dumps(ruling)))
                    stored.append({"seq": seq, "created_at": now, "frame_idx": frame_idx, "ruling": ruling})
                self._db.execute("UPDATE games SET state = ?, updated_at = ? WHERE id = ?",
                                 (json.dumps(state), now, game_id))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return stored

    def list_rulings(self, game_id: str, after_seq: int = 0, limit: int = 1000) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM rulings WHERE game_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (game_id, after_seq, limit)).fetchall()
        return [{"seq": r["seq"], "created_at": r["created_at"], "frame_idx": r["frame_idx"],
                 "ruling": json.loads(r["data"])} for r in rows]

    # shots ---------------------------------------------------------------------------------------------------
    def add_shot(self, game_id: str, record: dict[str, Any]) -> dict[str, Any]:
        """Append one record of a live game's log (``api.tracking``: start, rest, correction, rest_error)."""
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM shots WHERE game_id = ?",
                                       (game_id,)).fetchone()
                seq = int(row[0]) + 1
                self._db.execute("INSERT INTO shots (game_id, seq, created_at, kind, data) VALUES (?, ?, ?, ?, ?)",
                                 (game_id, seq, now, str(record.get("kind")), json.dumps(record)))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return {"seq": seq, "created_at": now, "record": record}

    def list_shots(self, game_id: str, after_seq: int = 0, limit: int = 100000) -> list[dict[str, Any]]:
        """A live game's log in order, each record whole (its input and state: the log replays)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM shots WHERE game_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (game_id, after_seq, limit)).fetchall()
        return [{"seq": r["seq"], "created_at": r["created_at"], "record": json.loads(r["data"])} for r in rows]

    # matches (photo-by-photo games: ring marbles) -------------------------------------------------------------
    def add_match(self, game: str, state: dict[str, Any]) -> dict[str, Any]:
        match_id = new_id("m")
        now = time.time()
        with self._lock:
            self._db.execute("INSERT INTO matches (id, created_at, updated_at, game, state) VALUES (?, ?, ?, ?, ?)",
                             (match_id, now, now, game, json.dumps(state)))
        return {"id": match_id, "created_at": now, "updated_at": now, "game": game, "state": state}

    def get_match(self, match_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        return None if row is None else _match_row(row)

    def list_matches(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM matches ORDER BY created_at, id").fetchall()
        return [_match_row(r) for r in rows]

    def advance_match(self, match_id: str, step: Callable[[dict[str, Any]], tuple[dict[str, Any], str,
                      dict[str, Any], bytes | None]]) -> dict[str, Any]:
        """Apply ``step`` to the stored state and append its record, atomically: ``step(state)`` returns the new
        state, the record's kind, the record and an optional image; two shots posted at once are applied one
        after the other, each to the state the other left. Exceptions from ``step`` leave nothing written."""
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
                if row is None:
                    raise KeyError(match_id)
                state, kind, record, image = step(json.loads(row["state"]))
                seq = int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM match_records WHERE match_id = ?",
                                           (match_id,)).fetchone()[0]) + 1
                self._db.execute(
                    "INSERT INTO match_records (match_id, seq, created_at, kind, data, image) VALUES (?, ?, ?, ?, ?, ?)",
                    (match_id, seq, now, kind, json.dumps(record), image))
                self._db.execute("UPDATE matches SET state = ?, updated_at = ? WHERE id = ?",
                                 (json.dumps(state), now, match_id))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return {"seq": seq, "created_at": now, "kind": kind, "record": record, "state": state}

    def list_match_records(self, match_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, created_at, kind, data, image IS NOT NULL AS has_image FROM match_records "
                "WHERE match_id = ? ORDER BY seq", (match_id,)).fetchall()
        return [{"seq": r["seq"], "created_at": r["created_at"], "kind": r["kind"], "record": json.loads(r["data"]),
                 "has_image": bool(r["has_image"])} for r in rows]

    def match_record_image(self, match_id: str, seq: int) -> bytes | None:
        with self._lock:
            row = self._db.execute("SELECT image FROM match_records WHERE match_id = ? AND seq = ?",
                                   (match_id, seq)).fetchone()
        return None if row is None or row["image"] is None else bytes(row["image"])

    # events -------------------------------------------------------------------------------------------------
    def add_event(self, game_id: str, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        now = time.time()
        with self._lock:
            cur = self._db.execute("INSERT INTO events (game_id, created_at, kind, data) VALUES (?, ?, ?, ?)",
                                   (game_id, now, kind, json.dumps(data or {})))
        return {"id": cur.lastrowid, "created_at": now, "kind": kind, "data": data or {}}

    def list_events(self, game_id: str, after_id: int = 0, limit: int = 1000) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM events WHERE game_id = ? AND id > ? ORDER BY id LIMIT ?",
                (game_id, after_id, limit)).fetchall()
        return [{"id": r["id"], "created_at": r["created_at"], "kind": r["kind"], "data": json.loads(r["data"])}
                for r in rows]


def _calibration_row(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "created_at": row["created_at"], "source": row["source"],
            "calibration": json.loads(row["data"])}


def _match_row(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "created_at": row["created_at"], "updated_at": row["updated_at"], "game": row["game"],
            "state": json.loads(row["state"])}


def _game_row(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"], "created_at": row["created_at"], "updated_at": row["updated_at"], "game": row["game"],
        "game_type": row["game_type"], "players": json.loads(row["players"]),
        "calibration_id": row["calibration_id"], "status": row["status"],
        "source": None if row["source"] is None else json.loads(row["source"]),
        "frame_count": row["frame_count"],
        "state": None if row["state"] is None else json.loads(row["state"]),
    }
