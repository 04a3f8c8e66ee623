"""``tableref serve`` and ``tableref demo`` start, print their URL, answer, and stop by themselves."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import httpx2 as httpx
import numpy as np
from service_fakes import table_image, write_video

REPO = Path(__file__).resolve().parents[2]
RUN_S = 10.0  # --duration: the command stops by itself
LIMIT_S = 120.0  # generous bound for slow shared machines


def run_until_url(cmd: list[str], pattern: str, env: dict | None = None) -> tuple[subprocess.Popen, str, list[str]]:
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        m = re.search(pattern, line)
        if m:
            return proc, m.group(1), lines
    proc.wait(10)
    raise AssertionError("no URL printed:\n" + "".join(lines))


def test_serve_prints_url_and_token_and_stops_by_itself(tmp_path: Path) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if k != "TABLEREF_TOKEN"}
    proc, base, lines = run_until_url(
        [sys.executable, "-m", "api.cli", "serve", "--port", "0", "--duration", str(RUN_S), "--db",
         str(tmp_path / "serve.sqlite"), "--log-level", "warning"], r"service on (http://127\.0\.0\.1:\d+)", env)
    try:
        assert httpx.get(f"{base}/v1/health", timeout=10).json()["database"] == "wal"
        rest = proc.stdout.read()  # EOF when the server stops by itself (communicate() would drop buffered lines)
        proc.wait(LIMIT_S)
    finally:
        proc.kill()
    token = re.search(r"token \(.*\): (\S+)", "".join(lines) + rest)
    assert token, "".join(lines) + rest
    assert proc.returncode == 0


def test_demo_plays_a_video_and_stops_by_itself(tmp_path: Path) -> None:
    video = tmp_path / "demo.avi"
    write_video(str(video), [table_image(1)] * 10 + [np.zeros((340, 640, 3), np.uint8)] * 10, fps=25.0)
    proc, url, _ = run_until_url(
        [sys.executable, "-m", "api.cli", "demo", "--no-browser", "--port", "0", "--duration", str(RUN_S),
         "--db", str(tmp_path / "demo.sqlite"), "--source", str(video), "--pipeline", "truth"],
        r"umpire page (http://127\.0\.0\.1:\d+/umpire\?game=\S+)")
    try:
        base, query = url.split("/umpire?")
        params = urllib.parse.parse_qs(query)
        game_id = params["game"][0]
        assert params["token"][0]  # the demo's own token, so the page's corrections work
        assert httpx.get(url, timeout=10).status_code == 200
        state = httpx.get(f"{base}/v1/games/{game_id}", timeout=10).json()
        assert state["game"]["source"]["kind"] == "file" and state["game"]["source"]["loop"] is True
        proc.stdout.read()
        proc.wait(LIMIT_S)
    finally:
        proc.kill()
    assert proc.returncode == 0


def test_load_script_reports_throughput_latency_and_errors() -> None:
    out = subprocess.run([sys.executable, "scripts/load_test.py", "--requests", "12", "--concurrency", "3",
                          "--pipeline", "decode"], check=False, cwd=REPO, capture_output=True, text=True,
                         timeout=LIMIT_S)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"throughput\s+[\d.]+ req/s", out.stdout)
    assert re.search(r"latency\s+p50 [\d.]+ ms\s+p99 [\d.]+ ms", out.stdout)
    assert re.search(r"errors\s+0 ", out.stdout)


def test_load_script_refuses_targets_off_loopback() -> None:
    out = subprocess.run([sys.executable, "scripts/load_test.py", "--url", "http://192.0.2.1:8000"], check=False,
                         cwd=REPO, capture_output=True, text=True, timeout=LIMIT_S)
    assert out.returncode != 0 and "only loopback" in out.stderr
