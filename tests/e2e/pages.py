"""What several browser tests do to a page: open it with the sample data loaded, wait until
the app is idle, measure what scrolls sideways, keep a screenshot when RANKLAB_SCREENSHOTS
is set (to look at them)."""

from __future__ import annotations

import os
from pathlib import Path

SHOTS = os.environ.get("RANKLAB_SCREENSHOTS")
#: true once the app has no run in progress (its status widget is gone)
IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
#: [scroll width, visible width] of every visible data grid but the Per query page's
#: per-query table (one column per chosen measure and metadata field: it scrolls, its query
#: column pinned)
GRID_WIDTHS = """() => Array.from(document.querySelectorAll('.dvn-scroller'))
    .filter(e => !e.closest('.st-key-ranklab-pq-table') && e.clientWidth > 0)
    .map(e => [e.scrollWidth, e.clientWidth])"""


def open_with_sample(page, server: str, name: str, lang: str) -> None:
    """Page ``name`` in ``lang`` with the sample loaded by its button (one click)."""
    page.goto(f"{server}/{name}?lang={lang}")
    sample = "Load sample data" if lang == "en" else "Cargar datos de ejemplo"
    page.get_by_role("button", name=sample).first.click()


def grid_widths(page) -> list:
    """:data:`GRID_WIDTHS` of the page as it is."""
    return page.evaluate(GRID_WIDTHS)


def page_overflow(page) -> int:
    """Pixels by which the whole page is wider than the window (0: no sideways scroll)."""
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def keep_screenshot(page, name: str) -> None:
    """The whole page as ``name``.png in RANKLAB_SCREENSHOTS, when that is set."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)
