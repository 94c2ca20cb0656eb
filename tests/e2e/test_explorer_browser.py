"""The explorer in a real browser: uploads through the drop zone, and cold deep links."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.e2e.conftest import ROOT
from ui.common.navigation import SECTIONS

pytestmark = pytest.mark.e2e

SAMPLE = ROOT / "sample_data" / "ranking"
PAGES = [(url, title, path) for entries in SECTIONS.values() for path, title, _icon, url in entries]
# Each page's st.title, to know the right page rendered.
HEADINGS = {
    "pages/home.py": "RankLab",
    "pages/data.py": "Data",
    "pages/overview.py": "Overview",
    "pages/per_query.py": "Per query",
    "pages/breakdown.py": "Breakdown",
    "pages/clicks.py": "Click feedback",
    "pages/learn.py": "Measures explained",
}


def _wait_for_app(page) -> None:
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && document.querySelector('[data-testid=\"stSidebarNav\"]')",
        timeout=30_000,
    )


def test_upload_through_drop_zone_matches_cli(server, page):
    qrels, run = SAMPLE / "qrels.txt", SAMPLE / "bm25.txt"
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "metrics_core",
            "evaluate",
            "--qrels",
            str(qrels),
            "--run",
            str(run),
            "-m",
            "RR",
            "--format",
            "json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    expected = json.loads(cli.stdout)["runs"][0]["aggregate"]["RR"]

    page.goto(server + "/data")
    _wait_for_app(page)
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.nth(0).set_input_files(str(qrels))
    page.get_by_text("qrels: 50 queries").first.wait_for()
    inputs.nth(1).set_input_files(str(run))
    page.get_by_text("runs: bm25").first.wait_for()
    page.get_by_text("Diagnostics").first.wait_for()

    page.locator('[data-testid="stSidebarNav"] a', has_text="Overview").click()
    card = page.locator(
        '[data-testid="stMetric"]', has_text="bm25 · MRR"
    )  # the mean of RR reads MRR
    card.wait_for()
    shown = card.locator('[data-testid="stMetricValue"]').inner_text().strip()
    assert shown == f"{expected:.4f}"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_bad_upload_shows_error_and_keeps_data(server, page, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 8)
    page.goto(server + "/data")
    _wait_for_app(page)
    page.get_by_role("button", name="Load sample data").click()
    page.get_by_text("runs: bm25").first.wait_for(
        timeout=90_000
    )  # every sample loads: slow on a busy machine
    page.locator('[data-testid="stFileUploader"] input[type="file"]').nth(1).set_input_files(
        str(junk)
    )
    page.locator('[data-testid="stAlertContentError"]').first.wait_for()
    assert "junk.bin" in page.locator('[data-testid="stAlertContentError"]').first.inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("runs: bm25").count() >= 1


#: Pages whose sidebar shows their own section's data (what it starts with), not the rankings'.
OWN_SECTION_PAGES = {
    "pages/detection.py": "scores: Sample data",
    "pages/calibration.py": "scores: Sample data",
    "pages/dynamic_k.py": "candidates: Sample data",
    "pages/hashing.py": "hash codes: none",
}


@pytest.mark.parametrize("url,title,path", PAGES, ids=[p[0] for p in PAGES])
def test_cold_deep_link(browser, fresh_server, url, title, path):
    """Each page opened by its URL as the first request of a freshly started server."""
    base = fresh_server
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{base}/{url}")
        _wait_for_app(page)
        if path in HEADINGS:  # pages of other sections: the frame checks below still apply
            page.locator("h1", has_text=HEADINGS[path]).first.wait_for(timeout=30_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        # the shared frame ran: the sidebar shows what is loaded (and, on a ranking page,
        # the conventions; the pages of other sections show their own data instead)
        if path in OWN_SECTION_PAGES:
            page.locator('[data-testid="stSidebar"]').get_by_text(
                OWN_SECTION_PAGES[path]
            ).first.wait_for()
            assert page.get_by_text("qrels: none").count() == 0
        else:
            page.get_by_role("button", name="Reset to trec_eval defaults").wait_for()
            page.get_by_text("qrels: none").first.wait_for()
        # the app's own menu (st.navigation's titles), not one made from file names
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.get_by_text("Measures explained").first.wait_for()
        assert nav.get_by_text("app", exact=True).count() == 0
    finally:
        context.close()
