"""Every table of the sample's pages fits an 800 px window in Chromium, in English and Spanish:
no grid scrolls sideways (its last headings cut). The per-query table of the Per query page is
the exception: one column per chosen measure and per metadata field, it scrolls with its query
column pinned. Screenshots go to RANKLAB_SCREENSHOTS when it is set (to look at them)."""

from __future__ import annotations

import pytest

from tests.e2e.pages import IDLE, grid_widths, keep_screenshot, open_with_sample

#: pages whose tables were wider than the page before (Data's diagnostics, Calibration's bins,
#: History's report, Overview's details, Detection's and Dynamic K's per-criterion tables, Per
#: query's rankings)
PAGES = (
    "data",
    "overview",
    "per_query",
    "calibration",
    "detection",
    "dynamic-k",
    "history",
    "hashing",
)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_tables_fit_an_800_px_window(server, new_page, lang):
    page = new_page(800, 900)
    open_with_sample(page, server, "data", lang)
    page.wait_for_function("() => document.querySelectorAll('.dvn-scroller').length >= 3")
    page.wait_for_function(IDLE, timeout=120_000)
    query = page.url.split("?", 1)[1] if "?" in page.url else f"lang={lang}"
    wide = {}
    for name in PAGES:
        page.goto(f"{server}/{name}?{query}")
        page.wait_for_function(
            "() => document.querySelectorAll('.dvn-scroller').length >= 1", timeout=120_000
        )
        page.wait_for_function(IDLE, timeout=120_000)
        page.wait_for_timeout(1500)
        sizes = grid_widths(page)
        keep_screenshot(page, f"tables_{name}_{lang}")
        over = [s for s in sizes if s[0] > s[1] + 1]
        if over:
            wide[name] = over
    assert not wide, wide  # page -> [scroll width, visible width] of each grid wider than it
