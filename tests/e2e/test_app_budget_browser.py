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
