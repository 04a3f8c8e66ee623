"""Fakes and image builders for the referee-service tests (no vision pipeline needed)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from api.pipeline import SUPPORTED_GAMES, basic_overlay, pipeline_error
from api.settings import Settings

TOKEN = "test-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CORNERS_PX = [[40.0, 30.0], [600.0, 30.0], [600.0, 310.0], [40.0, 310.0]]


def service_settings(db_path: Path, **overrides: object) -> Settings:
    base: dict[str, object] = {"token": TOKEN, "db_path": db_path, "still_frames": 2, "reconnect_initial_s": 0.05,
                               "reconnect_max_s": 0.2, "feed_fps": 50.0}
    base.update(overrides)
    return Settings(**base)


class NoMatFoundError(ValueError):
    """Stands in for vision.errors.NoMatFoundError (matched by class name)."""


def _piece(pid: str, color: str, x: float, y: float, **flags: Any) -> dict[str, Any]:
    rec = {"id": pid, "color": color, "size": "small", "center_mm": [x, y], "radius_mm": 8.0,
           "uncertainty_mm": 0.2, "z_mm": 0.75, "tilt_deg": 0.0, "tilt_azimuth_deg": 0.0, "potted": False,
           "off_mat": False, "unplayed": False, "out_of_bounds": False, "behind_baseline": False,
           "squopped": False, "squopping": False, "above": [], "confidence": 0.9}
    rec.update(flags)
    return rec


def fake_document(frame_bgr: np.ndarray) -> dict[str, Any]:
    """A plausible analysis document whose rulings depend on the frame's brightness (so frames differ)."""
    level = int(frame_bgr.mean()) // 32
    h, w = frame_bgr.shape[:2]
    pieces = [
        _piece("b1", "blue", -100.0, 50.0),
        _piece("r1", "red", 30.0, 0.0, squopping=True),
        _piece("g1", "green", 40.0, 5.0, squopped=True, z_mm=0.75),
        _piece("y1", "yellow", 0.0, 0.0, potted=True),
        _piece("y2", "yellow", 930.0, 0.0, out_of_bounds=True),
    ]
    pieces[1]["z_mm"] = 2.25
    pieces[1]["above"] = ["g1"]
    rulings = [
        {"game": "tiddlywinks", "rule": "TW 7(a)", "decision": "OUT_OF_BOUNDS", "piece_ids": ["y2"],
         "evidence": {"penetration_mm": 23.6}, "confidence": 0.95, "explanation": "y2 is out of bounds"},
        {"game": "tiddlywinks", "rule": "TW 6(a)", "decision": f"SQUOPPED_{level}", "piece_ids": ["r1", "g1"],
         "evidence": {"overlap_mm2": 12.0}, "confidence": 0.9, "explanation": "r1 squops g1"},
    ]
    return {
        "game": "tiddlywinks", "game_type": "pairs", "pieces": pieces,
        "pot": {"center_mm": [0.0, 0.0], "center_px": [320.0, 170.0]},
        "squops": [["r1", "g1"]], "piles": [["g1", "r1"]],
        "image": {"path": None, "size_wh_px": [w, h]},
        "mat": {"corners_px": CORNERS_PX},
        "calibration": {"source": "mat", "reprojection_error_mm": 1.0},
        "rulings": rulings,
        "squidge_off": {"winner": "blue", "ranking": [{"color": "blue", "id": "b1", "distance_mm": 12.0}],
                        "resquidge": False},
    }


class FakePipeline:
    """Analyses any frame with a non-uniform picture; a uniform frame has 'no mat'."""

    supported_games = SUPPORTED_GAMES

    def __init__(self) -> None:
        self.calls = 0
        self.calibrations: list[Any] = []

    def analyze(self, game: str, frame_bgr: np.ndarray, calibration: dict[str, Any] | None) -> dict[str, Any]:
        self.calls += 1
        if float(frame_bgr.std()) < 1.0:
            raise pipeline_error(NoMatFoundError("no green felt region larger than 5% of the image"))
        doc = fake_document(frame_bgr)
        if calibration is not None:
            doc["calibration"] = calibration
        return doc

    def calibrate_image(self, frame_bgr: np.ndarray) -> dict[str, Any]:
        if float(frame_bgr.std()) < 1.0:
            raise pipeline_error(NoMatFoundError("no mat in the calibration image"))
        return {"source": "mat", "reprojection_error_mm": 0.8, "camera": {"fake": True}}

    def calibrate_corners(self, corners_px: list[list[float]], image_size_wh_px: tuple[int, int]) -> dict[str, Any]:
        self.calibrations.append(corners_px)
        return {"source": "corners", "reprojection_error_mm": 0.0, "mat_corners_px": corners_px,
                "camera": {"fake": True}}

    def annotate(self, frame_bgr: np.ndarray, document: dict[str, Any] | None) -> np.ndarray:
        return frame_bgr.copy() if document is None else basic_overlay(frame_bgr, document)


class CrashingPipeline(FakePipeline):
    """A pipeline with a bug: every analysis raises."""

    def analyze(self, game: str, frame_bgr: np.ndarray, calibration: dict[str, Any] | None) -> dict[str, Any]:
        self.calls += 1
        raise RuntimeError("detector bug")


def table_image(seed: int = 0, w: int = 640, h: int = 340) -> np.ndarray:
    """A textured picture (non-uniform, so the fake finds a 'mat')."""
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), (40, 120, 40), np.uint8)
    noise = rng.integers(0, 30, size=(h, w, 1), dtype=np.uint8)
    img = cv2.add(img, np.repeat(noise, 3, axis=2))
    cv2.circle(img, (320, 170), 20, (60, 60, 60), -1)
    return img


def png_bytes(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


def jpeg_bytes(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def png_header_only(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims ``width`` x ``height`` (a decompression bomb's header)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + \
        chunk(b"IEND", b"")


def write_video(path: str, frames: list[np.ndarray], fps: float = 25.0) -> None:
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    assert writer.isOpened(), "OpenCV cannot write MJPG video"
    for f in frames:
        writer.write(f)
    writer.release()
