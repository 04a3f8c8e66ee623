"""``tableref demo``: the referee service on localhost with a simulated game playing as a live feed.

No camera and no other service: the feed is a video from ``sample_images/videos/`` (looped), or the stills of
``sample_images/tiddlywinks/`` shown in turn; storage is a local SQLite file. When the vision pipeline is not
installed the demo replays the simulator's truth JSON (beside each still) through the rule engine instead, and
says so.
"""

from __future__ import annotations

import argparse
import json
import webbrowser
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from api.commands.serve import bind_socket, print_token, run_app, url_of

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT / "sample_images"
VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".webm", ".mov")
STILL_SUFFIXES = (".png", ".jpg", ".jpeg")
DEMO_PLAYERS = {"blue": "Ann", "red": "Bob", "green": "Cat", "yellow": "Dan"}


def find_videos(root: Path) -> list[Path]:
    return sorted(p for p in (root / "videos").glob("*") if p.suffix.lower() in VIDEO_SUFFIXES)


def find_stills(root: Path) -> list[Path]:
    """Stills with their truth JSON beside them."""
    return sorted(p for p in (root / "tiddlywinks").glob("*")
                  if p.suffix.lower() in STILL_SUFFIXES and p.with_suffix(".json").is_file())


def vision_available() -> bool:
    try:
        import vision.tiddlywinks  # noqa: F401
    except ImportError:
        return False
    return True


class TruthReplayPipeline:
    """Stand-in for vision in the demo: matches each frame to the nearest known still and returns that still's
    truth document, judged by the rule engine. Not a detector; it only makes the demo show rulings."""

    supported_games: tuple[str, ...] = ("tiddlywinks",)
    _THUMB_W = 64

    def __init__(self, stills: list[Path]) -> None:
        from api.pipeline import VisionPipeline

        self._vision = VisionPipeline()
        self._entries: list[tuple[np.ndarray, dict[str, Any]]] = []
        for path in stills:
            img = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if img is None:
                continue
            doc = json.loads(path.with_suffix(".json").read_text())
            self._entries.append((self._thumb(img), doc))

    def _thumb(self, frame: np.ndarray) -> np.ndarray:
        h, w = frame.shape[:2]
        small = cv2.resize(frame, (self._THUMB_W, max(1, h * self._THUMB_W // w)), interpolation=cv2.INTER_AREA)
        return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)

    def analyze(self, game: str, frame_bgr: np.ndarray, calibration: dict[str, Any] | None) -> dict[str, Any]:
        from api.routes.errors import ApiError

        t = self._thumb(frame_bgr)
        best = min(self._entries, key=lambda e: float(np.mean(np.abs(e[0] - t))) if e[0].shape == t.shape
                   else float("inf"), default=None)
        if best is None or best[0].shape != t.shape:
            raise ApiError(422, "no_mat_found", "demo truth replay: this frame is not one of the sample stills")
        doc = dict(best[1])
        doc["analysis_source"] = "truth replay (vision pipeline not installed)"
        doc.setdefault("rulings", self._judge(doc))
        return doc

    @staticmethod
    def _judge(doc: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            from adjudicator.tiddlywinks import adjudicate
            from geometry.records import scene_from_document
        except ImportError:
            return []
        return [r.to_dict() for r in adjudicate(scene_from_document(doc))]

    def calibrate_image(self, frame_bgr: np.ndarray) -> dict[str, Any]:
        return self._vision.calibrate_image(frame_bgr)

    def calibrate_corners(self, corners_px: list[list[float]], image_size_wh_px: tuple[int, int]) -> dict[str, Any]:
        return self._vision.calibrate_corners(corners_px, image_size_wh_px)

    def annotate(self, frame_bgr: np.ndarray, document: dict[str, Any] | None) -> np.ndarray:
        return self._vision.annotate(frame_bgr, document)


def choose_source(args: argparse.Namespace, use_vision: bool) -> tuple[dict[str, Any], list[Path]]:
    """The demo's frame source spec and the stills it knows (for truth replay)."""
    stills = find_stills(SAMPLES)
    if args.source:
        path = Path(args.source).resolve()
        if not path.is_file():
            raise SystemExit(f"tableref: error: no such file: {args.source}")
        if path.suffix.lower() in STILL_SUFFIXES:
            return {"kind": "stills", "paths": [str(path)], "hold_s": args.hold, "loop": True}, [path]
        return {"kind": "file", "value": str(path), "loop": True, "hold_end_s": args.hold}, stills
    videos = find_videos(SAMPLES)
    if use_vision and videos:
        return {"kind": "file", "value": str(videos[0]), "loop": True, "hold_end_s": args.hold}, stills
    if stills:
        return {"kind": "stills", "paths": [str(p) for p in stills[: args.max_stills]], "hold_s": args.hold,
                "loop": True}, stills
    if videos:
        return {"kind": "file", "value": str(videos[0]), "loop": True, "hold_end_s": args.hold}, stills
    raise SystemExit(f"tableref: error: no sample images or videos under {SAMPLES} (the simulator writes "
                     f"them to sample_images/tiddlywinks/ and sample_images/videos/)")


def handle(args: argparse.Namespace) -> int:
    from api.app import create_app
    from api.settings import Settings

    use_vision = args.pipeline == "vision" or (args.pipeline == "auto" and vision_available())
    spec, stills = choose_source(args, use_vision)
    pipeline = None if use_vision else TruthReplayPipeline(stills)
    settings = Settings(db_path=Path(args.db), still_frames=3, resume_games=True)
    app = create_app(settings, pipeline=pipeline)
    sock = bind_socket(args.host, args.port)
    base = url_of(sock)

    def started() -> None:
        storage, games = app.state.storage, app.state.games
        demo = [g for g in storage.list_games() if g["players"] == DEMO_PLAYERS and g["status"] == "active"]
        if demo and demo[-1]["source"] == spec:
            game_id = demo[-1]["id"]  # resumed by the app with its rulings
            demo = demo[:-1]
        else:
            game_id = None
        for old in demo:  # an earlier demo on another feed: keep its record, stop its feed
            games.detach(old["id"])
            storage.set_status(old["id"], "finished")
        if game_id is None:
            game_id = storage.add_game(game="tiddlywinks", game_type="pairs", players=DEMO_PLAYERS,
                                       calibration_id=None)["id"]
            storage.add_event(game_id, "created", {"demo": True})
            games.attach(game_id, spec)
        url = f"{base}/umpire?game={game_id}"
        if app.state.token_generated:  # a local demo's own token: the page's corrections work out of the box
            url += f"&token={app.state.token}"
        print(f"tableref demo: umpire page {url}", flush=True)
        feed = spec.get("value") or f"{len(spec.get('paths', []))} sample stills"
        analysis = "vision pipeline" if use_vision else "truth replay (vision pipeline not installed)"
        print(f"  game {game_id}; feed: {feed}; analysis: {analysis}", flush=True)
        print(f"  database: {settings.db_path}; API docs: {base}/docs", flush=True)
        print_token(app)
        if not args.no_browser:
            webbrowser.open(url)

    return run_app(app, sock, duration_s=args.duration, log_level="warning", on_started=started)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="run the referee on localhost with a simulated game (no camera)",
                              description="Start the referee service on localhost with a simulated game from "
                                          "sample_images/ playing as a live feed, and print the umpire page URL.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument("--db", default="var/demo.sqlite", help="SQLite file (default var/demo.sqlite)")
    p.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="stop by itself after S seconds")
    p.add_argument("--source", default=None, help="play this video or image instead of the samples")
    p.add_argument("--hold", type=float, default=6.0, metavar="S",
                   help="seconds each sample still is shown, and the end of a video is held before it restarts")
    p.add_argument("--max-stills", type=int, default=12, help="at most this many sample stills")
    p.add_argument("--pipeline", choices=["auto", "vision", "truth"], default="auto",
                   help="analysis: the vision pipeline, or a replay of the samples' truth (auto: vision if "
                        "installed)")
    p.set_defaults(handler=handle)
