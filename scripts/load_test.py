#!/usr/bin/env python3
"""Bounded load test of ``POST /v1/analyze`` on loopback: throughput, p50/p99 latency and the error count.

By default it starts its own server (this script, in a child process, on 127.0.0.1 and a free port, with a
temporary SQLite file) and stops it afterwards; ``--url`` targets a running server instead, which must be on
loopback (127.0.0.1, ::1 or localhost). Bounded by ``--requests`` and ``--max-seconds``.

    python scripts/load_test.py --requests 200 --concurrency 8
    python scripts/load_test.py --url http://127.0.0.1:8000 --image sample_images/tiddlywinks/x.png
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[1]
LOOPBACK_NAMES = {"localhost"}


def is_loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_image() -> tuple[bytes, str]:
    """A sample still if the simulator has written some, else a synthetic picture."""
    stills = sorted(p for p in (REPO / "sample_images" / "tiddlywinks").glob("*")
                    if p.suffix.lower() in (".png", ".jpg", ".jpeg"))
    if stills:
        return stills[0].read_bytes(), stills[0].name
    import cv2
    import numpy as np

    rng = np.random.default_rng(0)
    img = np.full((720, 1280, 3), (40, 120, 40), np.uint8)
    img = cv2.add(img, rng.integers(0, 30, size=img.shape, dtype=np.uint8))
    return cv2.imencode(".png", img)[1].tobytes(), "synthetic.png"


# --- the server child ------------------------------------------------------------------------------------------
class DecodeOnlyPipeline:
    """Service overhead only: the upload is decoded and checked, the 'analysis' is an empty scene."""

    supported_games = ("tiddlywinks",)

    def analyze(self, game, frame_bgr, calibration):
        h, w = frame_bgr.shape[:2]
        return {"game": game, "pieces": [], "rulings": [], "image": {"size_wh_px": [w, h]}}

    def calibrate_image(self, frame_bgr):
        return {}

    def calibrate_corners(self, corners_px, image_size_wh_px):
        return {}

    def annotate(self, frame_bgr, document):
        return frame_bgr.copy()


def serve(port: int, pipeline: str, db: str) -> None:
    sys.path.insert(0, str(REPO))
    from api.app import create_app
    from api.commands.serve import bind_socket, run_app
    from api.settings import Settings

    app = create_app(Settings(db_path=Path(db), token="load-test", resume_games=False),
                     pipeline=DecodeOnlyPipeline() if pipeline == "decode" else None)
    run_app(app, bind_socket("127.0.0.1", port), log_level="error")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, timeout_s: float) -> None:
    import httpx2 as httpx

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if httpx.get(f"{url}/v1/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"load_test: server at {url} did not become ready in {timeout_s:.0f} s")


# --- the client ------------------------------------------------------------------------------------------------
def run_load(url: str, image: bytes, name: str, requests: int, concurrency: int, max_seconds: float) -> int:
    import httpx2 as httpx

    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + max_seconds
    counter = iter(range(requests))
    local = threading.local()

    def one(_: int) -> None:
        if time.monotonic() > deadline:
            with lock:
                statuses["skipped (time bound)"] += 1
            return
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(base_url=url, timeout=60.0)
        t0 = time.perf_counter()
        try:
            r = client.post("/v1/analyze", files={"image": (name, image, "application/octet-stream")},
                            data={"game": "tiddlywinks"})
            key = str(r.status_code)
        except httpx.HTTPError as exc:
            key = type(exc).__name__
        dt = time.perf_counter() - t0
        with lock:
            latencies.append(dt)
            statuses[key] += 1

    t_start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, counter))
    wall = time.perf_counter() - t_start
    done = len(latencies)
    errors = sum(n for k, n in statuses.items() if not k.startswith("2") and not k.startswith("skipped"))
    ms = sorted(x * 1000 for x in latencies)

    def pct(p: float) -> float:
        return ms[min(len(ms) - 1, max(0, round(p / 100 * len(ms)) - 1))] if ms else float("nan")

    print(f"target      {url}/v1/analyze  image {name} ({len(image)} bytes)")
    print(f"requests    {done} sent, concurrency {concurrency}, wall {wall:.2f} s")
    print(f"throughput  {done / wall:.1f} req/s" if wall > 0 else "throughput  n/a")
    print(f"latency     p50 {pct(50):.1f} ms   p99 {pct(99):.1f} ms   mean "
          f"{statistics.fmean(ms) if ms else float('nan'):.1f} ms   max {ms[-1] if ms else float('nan'):.1f} ms")
    print(f"errors      {errors}   statuses {dict(sorted(statuses.items()))}")
    return 0 if errors == 0 else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", help="a running server on loopback (default: start one)")
    p.add_argument("--requests", type=int, default=200, help="total requests (default 200)")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight (default 8)")
    p.add_argument("--max-seconds", type=float, default=120.0, help="stop sending after this long (default 120)")
    p.add_argument("--image", type=Path, help="image to upload (default: a sample still or a synthetic one)")
    p.add_argument("--pipeline", choices=["auto", "vision", "decode"], default="auto",
                   help="for the started server: the vision pipeline, or decode-only (service overhead); auto = "
                        "vision if installed")
    p.add_argument("--serve-child", type=int, help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve_child is not None:
        serve(args.serve_child, args.pipeline, args.db)
        return 0
    if not (1 <= args.requests <= 100_000 and 1 <= args.concurrency <= 256):
        raise SystemExit("load_test: --requests must be in [1, 100000] and --concurrency in [1, 256]")
    image, name = (args.image.read_bytes(), args.image.name) if args.image else default_image()
    if args.url:
        url = args.url.rstrip("/")
        if not is_loopback(url):
            raise SystemExit(f"load_test: refusing {url}: only loopback targets (127.0.0.1, ::1, localhost)")
        wait_ready(url, 10.0)
        return run_load(url, image, name, args.requests, args.concurrency, args.max_seconds)

    pipeline = args.pipeline
    if pipeline == "auto":
        sys.path.insert(0, str(REPO))
        try:
            import vision.tiddlywinks  # noqa: F401
            pipeline = "vision"
        except ImportError:
            pipeline = "decode"
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="tableref-load-") as tmp:
        child = subprocess.Popen([sys.executable, __file__, "--serve-child", str(port), "--pipeline", pipeline,
                                  "--db", os.path.join(tmp, "load.sqlite")], cwd=REPO)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(url, 30.0)
            print(f"server      started (pid {child.pid}), pipeline: {pipeline}")
            return run_load(url, image, name, args.requests, args.concurrency, args.max_seconds)
        finally:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()


if __name__ == "__main__":
    sys.exit(main())
