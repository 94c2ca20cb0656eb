"""Real-browser check of the Compare page: the table renders and clicking a per-query bar
stores that query for the per-query page. Skips without Debian's chromium."""

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed"),
]


def _largest_loss():
    import metrics_core as mc
    from metrics_core.stats.deltas import per_query_deltas
    from tests.app.test_compare_page import _data

    qrels, runs, _ = _data()
    evs = {ev.run_name: ev for ev in mc.evaluate_many(qrels, runs, ["AP"])}
    return per_query_deltas(evs["bm25"].per_query, evs["dense"].per_query, "AP").index[0]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def server():
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "tests/apps/compare_seeded.py"),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_compare_page_in_browser(server, browser):
    # the session's shared browser (tests/e2e/conftest.py): one Playwright per session
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    try:
        page = context.new_page()
        page.goto(server)
        page.get_by_text("Every run vs bm25").first.wait_for(timeout=60000)
        page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=60000)
        assert page.locator("[data-testid='stException']").count() == 0
        plots = page.locator(".js-plotly-plot")
        plots.nth(1).wait_for(timeout=30000)
        # the first bar is the largest loss (a non-zero bar, so it has an area to click)
        plots.nth(1).scroll_into_view_if_needed()
        plots.nth(1).locator("g.point path").first.click(force=True)
        try:
            page.get_by_text("Selected query:").first.wait_for(timeout=30000)
        except Exception:
            page.screenshot(path="/tmp/compare_browser_fail.png")
            raise
        text = page.get_by_text("Selected query:").inner_text()
        assert text.startswith(f"Selected query: {_largest_loss()} ")
    finally:
        context.close()
