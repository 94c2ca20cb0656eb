"""Hosted for many visitors, in real Chromium: a few visitors at once under a server budget
(the load test of bench/load_test.py, small) keep their data apart and the server within its
budget; a visitor's data and settings come back after a reload and in another tab at the same
address; the upload boxes say what is loaded. No timing is asserted."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from tests.e2e.conftest import ROOT

pytestmark = pytest.mark.e2e
SERVER_MB = 700


def test_a_few_visitors_at_once_stay_apart_and_within_the_budget(tmp_path):
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.async_api")
    pytest.importorskip("psutil")
    out = tmp_path / "load.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "load_test.py"),
            "--visitors",
            "3",
            "--lines",
            "20000",
            "--queries",
            "200",
            "--server-mb",
            str(SERVER_MB),
            "--wait-after",
            "0",
            "--timeout",
            "300",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = json.loads(out.read_text())
    assert report["server alive"], done.stdout[-2000:]
    assert report["errors"] == [], report["errors"]
    assert report["own runs shown"] == 3  # every visitor saw its own runs ...
    assert report["isolated"] is True  # ... and no other visitor's
    assert report["rss peak MB"] <= SERVER_MB, report
    assert report["rss at boards MB"] > report["rss idle MB"]  # the visitors' data really was there


def _settle(page) -> None:
    page.locator('[data-testid="stMain"] h1').first.wait_for()
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000
    )
    page.wait_for_timeout(600)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000
    )


@pytest.mark.parametrize("lang, loaded", [("en", "Loaded: bm25 ("), ("es", "Cargado: bm25 (")])
def test_a_reload_and_a_new_tab_bring_the_data_back(server, new_page, lang, loaded):
    page = new_page(1280, 800)
    page.goto(f"{server}/data?lang={lang}")
    _settle(page)
    page.get_by_role(
        "button", name=re.compile("Load sample data|Cargar datos de ejemplo")
    ).first.click()
    _settle(page)
    page.get_by_text(loaded).first.wait_for()
    address = page.url
    assert re.search(r"[?&]s=[\w-]{16,}", address), address
    page.reload()
    _settle(page)
    page.get_by_text(loaded).first.wait_for()  # the runs box says what is loaded after the reload
    status = page.locator('[data-testid="stMain"]').inner_text()
    assert "bm25, dense, hybrid" in status
    other = new_page(800, 900)  # another tab (another session) at the same address
    other.goto(address)
    _settle(other)
    other.get_by_text(loaded).first.wait_for()
    # an address without the token: a new session, nothing loaded
    fresh = new_page(1280, 800)
    fresh.goto(f"{server}/data?lang={lang}")
    _settle(fresh)
    assert fresh.get_by_text(loaded).count() == 0
