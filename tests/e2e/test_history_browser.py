"""Real browser: with a deployer's shared store, an evaluation saved from the command line
shows on the History page and the sample history loads with one click; without one, the
page keeps a per-session history and offers no path input. Skipped without Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from metrics_core.cli import main
from metrics_core.history import HistoryStore
from tests.e2e.conftest import streamlit_server

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium")


@pytest.fixture
def server(tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    store = tmp_path / "home" / "history.sqlite3"  # the deployer's store
    with streamlit_server(
        {"RANKLAB_HOME": str(tmp_path / "home"), "RANKLAB_HISTORY_STORE": str(store)}
    ) as url:
        yield url, store


def test_saved_evaluation_shows_in_history(server, browser, tmp_path):
    # the session's shared browser (tests/e2e/conftest.py): one Playwright per session
    from playwright.sync_api import expect

    url, store = server
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d2 1 2.0 x\nq1 Q0 d1 2 1.0 x\nq2 Q0 d3 1 1.0 x\n")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url + "/history")
        # empty store: the sample history is shown, and can be loaded
        expect(page.get_by_text("sample history").first).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="Load sample history into my history").click()
        expect(page.get_by_text("Load sample history into my history")).to_have_count(
            0, timeout=30_000
        )
        with HistoryStore(store) as s:
            assert s.count_evaluations() == 6

        code = main(
            [
                "history",
                "add",
                "--suite",
                "browser-suite",
                "--qrels",
                str(tmp_path / "qrels.txt"),
                "--run",
                str(tmp_path / "run.txt"),
                "--name",
                "cli-run-xyz",
                "--store",
                str(store),
            ]
        )
        assert code == 0
        page.goto(url + "/history")
        expect(page.get_by_text("Overall").first).to_be_visible(timeout=60_000)
        # the comparative report lists 7 evaluations now, the new one included
        page.get_by_text("Suite").first.wait_for(timeout=30_000)
        metric = page.locator('[data-testid="stMetricValue"]').first
        expect(metric).to_have_text("7", timeout=30_000)
        # the Suite select of the page (the sidebar has selects of its own)
        page.locator('[data-testid="stSelectbox"]').filter(has_text="Suite").get_by_role(
            "combobox"
        ).click()
        page.get_by_role("option", name="browser-suite").click()
        expect(metric).to_have_text("1", timeout=30_000)
    finally:
        context.close()


@pytest.fixture
def session_server(tmp_path):
    """The app as hosted by default: no deployer's store."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    with streamlit_server(
        {"RANKLAB_HOME": str(tmp_path / "home"), "RANKLAB_HISTORY_STORE": None}
    ) as url:
        yield url, tmp_path / "home"


def test_history_without_any_path_input(session_server, browser):
    from playwright.sync_api import expect

    url, home = session_server
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(url + "/history")
        expect(page.get_by_text("this browser session only").first).to_be_visible(timeout=60_000)
        main = page.locator('[data-testid="stMain"]')
        # no text box at all on the page (selects are comboboxes, the uploader a file input)
        expect(main.locator('[data-testid="stTextInput"]')).to_have_count(0)
        expect(main.get_by_text("Store file")).to_have_count(0)
        expect(main.locator('input[type="file"]')).to_have_count(1)
        text = main.inner_text()
        assert str(home.parent) not in text and ".sqlite3" not in text and "/root" not in text
        page.get_by_role("button", name="Load sample history into my history").click()
        expect(page.get_by_text("Load sample history into my history")).to_have_count(
            0, timeout=30_000
        )
        expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text(
            "6", timeout=30_000
        )
        assert not home.exists()  # the session's history stays in memory, nothing on disk
        with page.expect_download() as info:
            page.get_by_role("button", name="Download history").click()
        data = Path(info.value.path()).read_bytes()
        with HistoryStore.from_bytes(data) as restored:
            assert restored.count_evaluations() == 6
    finally:
        context.close()
