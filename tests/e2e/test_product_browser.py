"""The explorer as one product, in Chromium: the leaderboard's first screen at 1280x800, the
sidebar collapsed at 800 px, no page naming the internal spec documents, no request leaving
the server at page load, and the HTML report opened offline."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import ROOT  # noqa: F401  (the fixtures come from conftest)
from ui.common.navigation import SECTIONS

pytestmark = pytest.mark.e2e

TITLES = [title for entries in SECTIONS.values() for _path, title, _icon, _url in entries]
SPEC_WORDS = re.compile(r"\bseed\s*\d{3}|§|nan / audit", re.IGNORECASE)


def _idle(page) -> None:
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && document.querySelector('[data-testid=\"stSidebarNav\"]')",
        timeout=60_000,
    )
    time.sleep(0.8)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000
    )


def _context(browser, width: int, **kw):
    ctx = browser.new_context(viewport={"width": width, "height": 800}, accept_downloads=True, **kw)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    return ctx, page


def _load_sample(page, base: str) -> None:
    page.goto(base + "/home")
    _idle(page)
    page.get_by_role("button", name="Load sample data").click()
    page.get_by_text("Sample loaded").first.wait_for()
    _idle(page)


def _open(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    _idle(page)


def _in_viewport(box, height: int = 800) -> bool:
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_leaderboard_first_screen_at_1280x800(server, browser):
    ctx, page = _context(browser, 1280)
    outside = []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if not r.url.startswith(server)
            and not r.url.startswith("data:")
            and not r.url.startswith("blob:")
            else None
        ),
    )
    try:
        _load_sample(page, server)
        _open(page, "Overview")
        page.locator('[data-testid="stMetric"]').first.wait_for()
        grid = page.locator('[data-testid="stDataFrame"]').first
        box = grid.bounding_box()
        assert _in_viewport(box), box
        # every run is a row of the grid (its accessible table), and the grid has no inner
        # scrolling: the element is as tall as its rows
        rows = grid.locator('[role="row"]')
        # the cards can be drawn right after the grid: wait until the grid's accessible rows
        # exist (its last run's row) before reading them
        rows.filter(has_text="hybrid").first.wait_for(state="attached")
        texts = [rows.nth(i).inner_text() for i in range(rows.count())]
        for run in ("bm25 (baseline)", "dense", "hybrid"):
            assert any(run in t for t in texts), texts
        for band in ("95% CI", "tie band", "unjudged band"):  # the bands, on the first screen
            assert any(band in t for t in texts), texts
        assert box["height"] >= 35 * 7 - 2
        legend = page.get_by_text("significantly different from the baseline bm25").first
        assert _in_viewport(legend.bounding_box()), legend.bounding_box()
        assert "n = 48" in legend.inner_text()
        status = page.get_by_text("Conventions: trec_eval defaults").first
        assert _in_viewport(status.bounding_box())
        # the cards of the headline measure repeat the board's first column: with the tie and
        # unjudged bands the board (12 rows on the sample) fills the first screen and the cards
        # follow right under the legend
        legend_box = legend.bounding_box()
        for run in ("bm25", "dense", "hybrid"):
            card = page.locator('[data-testid="stMetric"]', has_text=f"{run} · ").first
            card_box = card.bounding_box()
            assert card_box is not None and card_box["y"] >= legend_box["y"], run
            assert card_box["y"] < legend_box["y"] + legend_box["height"] + 200, (run, card_box)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator('[data-testid="stAppDeployButton"]').count() == 0  # toolbarMode viewer
        assert outside == [], outside  # icons and fonts are bundled: nothing fetched elsewhere
    finally:
        ctx.close()


def test_sidebar_starts_collapsed_at_800px(server, browser):
    ctx, page = _context(browser, 800)
    try:
        page.goto(server + "/overview")
        page.wait_for_selector('[data-testid="stApp"]')
        page.locator('[data-testid="stExpandSidebarButton"]').wait_for(timeout=30_000)
        # the sidebar slides shut: wait for the end of the transition
        page.wait_for_function(
            "() => { const s = document.querySelector('[data-testid=\"stSidebar\"]');"
            " if (!s) return true; const r = s.getBoundingClientRect();"
            " return r.width === 0 || r.right <= 0; }",
            timeout=10_000,
        )
        box = page.locator('[data-testid="stSidebar"]').bounding_box()
        assert box is None or box["width"] == 0 or box["x"] + box["width"] <= 0, box
        # the status line is on the page itself, visible without the sidebar
        assert _in_viewport(page.get_by_text("Conventions:").first.bounding_box())
    finally:
        ctx.close()


def test_no_page_names_the_spec_documents(server, browser):
    ctx, page = _context(browser, 1280)
    try:
        _load_sample(page, server)
        for title in TITLES:
            _open(page, title)
            text = page.locator('[data-testid="stMain"]').inner_text()
            text += page.locator('[data-testid="stSidebar"]').inner_text()
            found = SPEC_WORDS.findall(text)
            assert not found, (title, found)
            assert page.locator('[data-testid="stException"]').count() == 0, title
    finally:
        ctx.close()


def test_html_report_opens_offline_without_console_errors(server, browser, tmp_path):
    ctx, page = _context(browser, 1280)
    try:
        _load_sample(page, server)
        _open(page, "Overview")
        with page.expect_download(timeout=120_000) as info:
            page.get_by_role("button", name="Download report (HTML)").click()
        path = tmp_path / "report.html"
        info.value.save_as(str(path))
    finally:
        ctx.close()
    offline = browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
    try:
        report = offline.new_page()
        errors, requests = [], []
        report.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        report.on("pageerror", lambda e: errors.append(str(e)))
        report.on(
            "request",
            lambda r: (
                requests.append(r.url)
                if not r.url.startswith("file:") and not r.url.startswith("data:")
                else None
            ),
        )
        report.goto(path.as_uri())
        report.wait_for_selector(".main-svg")
        assert errors == [] and requests == [], (errors, requests)
        assert report.locator(".figure .main-svg").count() >= 2
        body = report.locator("body").inner_text()
        assert "bm25 (baseline)" in body and "Versions" in body and "Digest" in body
    finally:
        offline.close()
