"""Issue 29 in Chromium, English and Spanish: no label, button or link text cut at 1280x800 nor
at 800 px with the sidebar open (Detection's "Predichos positivos" was cut to "Predichos
posit…"), and the interpretation thresholds set once on the comparative table label the
Overview of the same session (the one place to change them, items 6 and 7).

One server for the module. Screenshots go to ``$RANKLAB_SHOTS`` when it is set.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import streamlit_server
from tests.e2e.test_explorer_answers_browser import _idle, _menu, _open, _shot

pytestmark = pytest.mark.e2e

#: Elements of the page (main area and sidebar) whose text is wider than their box and cut by
#: the box (an ellipsis or hidden overflow); tables drawn on a canvas, charts and code aside,
#: and boxes of 1 px or less (the language switch's label, kept for screen readers only).
CUT = """() => [...document.querySelectorAll('[data-testid="stMain"] *, [data-testid="stSidebar"] *')]
 .filter(e => e.offsetParent !== null && e.innerText && e.innerText.trim() && e.clientWidth > 1
   && e.scrollWidth > e.clientWidth + 1
   && (getComputedStyle(e).textOverflow === 'ellipsis'
       || (getComputedStyle(e).overflowX === 'hidden' && e.children.length <= 1))
   && !e.closest('[data-testid="stDataFrame"]') && !e.closest('.stPlotlyChart')
   && !e.closest('pre') && !e.closest('code'))
 .map(e => e.innerText.slice(0, 60))"""
PREDICTED = {"en": "Predicted positive", "es": "Predichos positivos"}
PAGES = ("detection", "history", "clicks", "learn")


@pytest.fixture(scope="module")
def base():
    with streamlit_server() as url:
        yield url


def _settled(page) -> None:
    """Every placeholder of the page drawn (a fragment or a late element replaces a skeleton)."""
    _idle(page)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=90_000
    )
    _idle(page)


def _open_sidebar(page) -> None:
    """At 800 px the sidebar starts shut: open it, as a visitor does, and let it slide in."""
    opener = page.locator('[data-testid="stExpandSidebarButton"]').first
    if opener.count() and opener.is_visible():
        opener.click()
        page.wait_for_function(
            "() => { const s = document.querySelector('[data-testid=\"stSidebar\"]');"
            " return s && s.getBoundingClientRect().right >= 250; }",
            timeout=30_000,
        )
        time.sleep(1.0)  # the main area narrows after the slide


@pytest.mark.parametrize(
    "lang,width,height", [("en", 1280, 800), ("es", 1280, 800), ("en", 800, 900), ("es", 800, 900)]
)
def test_no_text_is_cut(base, browser, lang, width, height):
    expect = pytest.importorskip("playwright.sync_api").expect
    ctx, page = _open(browser, base, "detection", lang, width, height)
    try:
        for path in PAGES:
            if path != "detection":
                page.goto(f"{base}/{path}?lang={lang}")
            _settled(page)
            if path == "detection":  # the operating point's metrics, drawn by a fragment
                expect(
                    page.locator('[data-testid="stMetricLabel"]', has_text=PREDICTED[lang]).first
                ).to_be_visible(timeout=90_000)
            _open_sidebar(page)
            cut = page.evaluate(CUT)
            _shot(page, f"labels_{path}_{lang}_{width}")
            assert cut == [], (path, cut)
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["en", "es"])
def test_thresholds_set_on_the_table_label_the_overview(base, browser, lang):
    expect = pytest.importorskip("playwright.sync_api").expect
    words = {
        "en": ("Load sample data", "Labels and thresholds", "Each run on its own queries", "Good"),
        "es": (
            "Cargar datos de ejemplo",
            "Etiquetas y umbrales",
            "Cada ejecución sobre sus propias consultas",
            "Bueno",
        ),
    }[lang]
    sample, settings, own_queries, good = words
    ctx, page = _open(browser, base, "table", lang, 1280, 800)
    try:
        page.get_by_role("button", name=sample).first.click()
        _idle(page)
        page.get_by_text(settings, exact=True).first.click()
        box = page.locator(".st-key-ranklab-table-good-RR input").first
        expect(box).to_be_visible(timeout=90_000)
        box.fill("0.45")
        box.press("Enter")
        _idle(page)
        # the Overview of the same session (opened from the menu) states and uses them
        _menu(page, "overview")
        page.get_by_text(own_queries).first.click()
        _idle(page)
        main = page.locator('[data-testid="stMain"]')
        expect(main.get_by_text(re.compile(rf"\bRR: {good} ≥ 0\.45\b")).first).to_be_visible(
            timeout=90_000
        )
        link = main.get_by_role(
            "link", name=re.compile("Comparative table|Tabla comparativa")
        ).first
        expect(link).to_be_visible(timeout=30_000)
        _shot(page, f"thresholds_overview_{lang}")
        # back on the table, its box holds the session's threshold
        _menu(page, "table")
        page.get_by_text(settings, exact=True).first.click()
        box = page.locator(".st-key-ranklab-table-good-RR input").first
        expect(box).to_have_value(re.compile(r"^0\.45"), timeout=90_000)
    finally:
        ctx.close()
