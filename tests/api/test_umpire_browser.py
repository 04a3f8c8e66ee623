"""Real-browser check of the umpire page: headless Chromium opens /umpire on a running demo server and sees the
live feed and the rulings render; a screenshot is saved. Skips cleanly without chromium or playwright
(``scripts/install-browser.sh`` installs both; no browser download)."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("TABLEREF_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "out" / "umpire_screenshot.png"
STARTUP_S = 60.0
RENDER_MS = 90_000  # the demo's first analysis runs the real vision pipeline on shared CPUs


def _requirements() -> None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed (scripts/install-browser.sh)")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"chromium not found at {CHROMIUM} (scripts/install-browser.sh)")


def _demo_source(tmp_path: Path) -> list[str]:
    """The demo's own samples when they exist; else a still rendered by the simulator, passed as --source."""
    samples = REPO / "sample_images"
    if any((samples / "videos").glob("*.mp4")) or any((samples / "tiddlywinks").glob("*.jpg")):
        return []
    try:
        from simulation.generate import generate_tiddlywinks
    except ImportError:
        pytest.skip("no sample stills and no simulator to render one")
    paths = [Path(p) for p in generate_tiddlywinks(tmp_path / "sim", count=2, seed=0, size_wh_px=(960, 540))]
    stills = [p for p in paths if p.suffix.lower() in (".png", ".jpg", ".jpeg")]
    if not stills:
        pytest.skip("the simulator rendered no still")
    return ["--source", str(stills[-1])]


def _start_demo(tmp_path: Path, source_args: list[str]) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "api.cli", "demo", "--no-browser", "--port", "0", "--duration", "240",
           "--db", str(tmp_path / "demo.sqlite"), "--hold", "6", *source_args]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    seen = []
    try:
        while True:
            line = lines.get(timeout=STARTUP_S)
            seen.append(line)
            if "umpire page " in line:
                return proc, line.split("umpire page ", 1)[1].strip()
    except queue.Empty:
        proc.kill()
        raise AssertionError("the demo printed no URL:\n" + "".join(seen)) from None


def _correct_from_the_page(page) -> None:
    """The umpire's corrections: a pass is stored in the game's log and heads the Shots panel; a squop declared
    between two tapped winks is stored if they touch, else refused with the gap that forbids it."""
    import re

    page.wait_for_selector("#shots li", timeout=RENDER_MS)  # the tracker's game has started
    assert page.is_hidden("#correct-token")  # the demo's URL carries its token
    page.click("#correct-pass")
    page.wait_for_selector("#correct-status:has-text('stored')", timeout=30_000)
    assert "correction" in page.inner_text("#shots li >> nth=0")
    in_play = page.locator("#winks .chip:not(.away)")
    assert in_play.count() >= 2, page.inner_text("#winks")
    a, b = in_play.nth(0).get_attribute("data-id"), in_play.nth(in_play.count() - 1).get_attribute("data-id")
    page.click(f"#winks .chip[data-id='{a}']")
    page.click(f"#winks .chip[data-id='{b}']")
    page.wait_for_selector("#distance:has-text('gap')", timeout=30_000)
    gap_mm = float(re.search(r"gap (-?[0-9.]+) mm", page.inner_text("#distance")).group(1))
    page.click(f"#correct-winks button:has-text('{a} on {b}')")
    page.wait_for_function("(label) => { const t = document.querySelector('#correct-status').textContent; "
                           "return t.includes(label) && !t.startsWith('sending'); }", arg=f"{a} on {b}",
                           timeout=30_000)
    status = page.inner_text("#correct-status")
    if gap_mm > 6.0:
        assert status.startswith("refused") and "422" in status and "mm apart" in status, status
    else:
        assert status.startswith("stored"), status
        assert "squop" in page.inner_text("#shots li >> nth=0")


def test_umpire_page_shows_feed_and_rulings(tmp_path: Path) -> None:
    _requirements()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    proc, url = _start_demo(tmp_path, _demo_source(tmp_path))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(url)
                try:
                    page.wait_for_function("document.querySelector('#feed').naturalWidth > 0", timeout=RENDER_MS)
                    page.wait_for_selector("#rulings li.ruling .cite", timeout=RENDER_MS)
                    page.wait_for_function("document.querySelectorAll('#score tbody tr').length === 4",
                                           timeout=RENDER_MS)
                except PlaywrightTimeout as exc:  # say what the page showed instead
                    page.screenshot(path=str(tmp_path / "umpire_failure.png"), full_page=True)
                    raise AssertionError(f"the umpire page did not render ({exc}); it showed: "
                                         f"{page.inner_text('header')!r}") from None
                page.wait_for_selector("#source-status:has-text('analysed')", timeout=RENDER_MS)
                _correct_from_the_page(page)
                page.wait_for_timeout(500)  # one more feed frame, so the screenshot shows the overlay
                cite = page.inner_text("#rulings li.ruling .cite")
                assert cite.startswith("TW "), cite
                assert "live" in page.inner_text("#source-status")
                assert page.inner_text("#ws-status") == "rulings: live"
                SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOT), full_page=True)
                shutil.copy(SCREENSHOT, tmp_path / SCREENSHOT.name)
            finally:
                browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    assert SCREENSHOT.stat().st_size > 10_000
