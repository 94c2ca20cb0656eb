"""The server's memory in a real browser: with the sample loaded and every page but Hash
codes visited (one session, through the menu), the ``streamlit run`` process stays
within the hosting budget (350 MB resident) and has not loaded torch. Skipped without
Chromium. The same helpers measure the figures of BENCHMARKS.md (bench/app_budget.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

pytestmark = pytest.mark.e2e
BUDGET_MB = 350


@pytest.fixture
def app_server():
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("psutil")
    from bench.app_budget import start_server

    proc, url = start_server()
    try:
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(20)


def test_server_memory_after_every_page_but_hash_codes(app_server, browser):
    from bench.app_budget import PAGES, memory_after_pages

    proc, url = app_server
    result = memory_after_pages(browser, url, proc.pid)
    rss = result["rss"]
    assert list(rss)[2:] == list(PAGES)  # every page was opened (after start and the sample)
    assert "Hash codes" not in rss
    assert rss["sample loaded"] > rss["start"]  # the sample really is in memory
    assert result["torch"] is False  # no page but Hash codes loads torch
    assert max(rss.values()) <= BUDGET_MB, rss


@pytest.mark.parametrize("route", ["data", "overview"])
def test_a_dropped_run_reaches_the_painted_leaderboard(app_server, browser, route):
    """Both ways of adding a run end on the Overview's leaderboard in a real browser: dropped
    on the Data page (then the Overview opened from the menu once the sidebar lists it), or
    dropped on the Overview's own drop zone. The grid is painted and its rows name the run
    (the benchmark's helpers wait for each; no timing is asserted)."""
    from bench.app_budget import time_upload

    _, url = app_server
    out = time_upload(browser, url, 20_000, 200, route)
    assert out["run bytes"] > 0
    assert ("listed s" in out) == (route == "data")
    assert 0 < out["painted s"] <= out["rows s"] <= out["finished s"]
