"""Spanish and English in Chromium: a Spanish browser gets Spanish without touching the
switch; the switch changes the language and the URL keeps ``lang`` across the menu; at
800 px Home shows the four tasks and the menu closes after navigating (measured in the
page)."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import ROOT  # noqa: F401  (the fixtures come from conftest)

pytestmark = pytest.mark.e2e

TASKS_ES = ["Rankings", "Detección y calibración", "Códigos hash", "Comparar sistemas"]
TASKS_EN = ["Rankings", "Detection and calibration", "Hash codes", "Comparing systems"]
SIDEBAR_SHUT = (
    "() => { const s = document.querySelector('[data-testid=\"stSidebar\"]');"
    " if (!s) return true; const r = s.getBoundingClientRect();"
    " return r.width === 0 || r.right <= 0; }"
)
SIDEBAR_OPEN = (
    "() => { const s = document.querySelector('[data-testid=\"stSidebar\"]');"
    " if (!s) return false; const r = s.getBoundingClientRect();"
    " return r.width > 100 && r.left >= 0; }"
)


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


def _tasks_shown(page, names, width: int) -> None:
    """Each task's heading drawn inside the window (not cut at its right edge)."""
    main = page.locator('[data-testid="stMain"]')
    for name in names:
        heading = main.get_by_role("heading", name=name, exact=True).first
        heading.wait_for()
        box = heading.bounding_box()
        assert (
            box is not None
            and box["width"] > 0
            and box["x"] >= 0
            and box["x"] + box["width"] <= width + 1
        ), (name, box)


def test_a_spanish_browser_gets_spanish_and_the_switch_keeps_the_choice_in_the_url(
    server, new_page
):
    page = new_page(1280, 800, locale="es-ES")
    page.goto(server + "/home")
    _idle(page)
    _tasks_shown(page, TASKS_ES, 1280)
    switch = page.locator(".st-key-ranklab-language")
    switch.get_by_text("Español").first.wait_for(state="visible")
    box = switch.bounding_box()
    assert box is not None and box["y"] < 60 and box["x"] + box["width"] <= 1280, (
        box
    )  # in the header bar
    assert "lang=" not in page.url  # a detected language is not a choice
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_text("Tabla comparativa").first.wait_for(state="visible")
    switch.get_by_text("English").click()
    page.get_by_role("heading", name="Detection and calibration").first.wait_for()
    _idle(page)
    assert "lang=en" in page.url
    nav.locator("a", has_text="Comparative table").first.click()
    _idle(page)
    page.get_by_role("heading", name="Comparative table").first.wait_for()
    assert "/table" in page.url and "lang=en" in page.url
    nav.locator("a", has_text="Home").first.click()
    _idle(page)
    _tasks_shown(page, TASKS_EN, 1280)  # still English: the choice beats the browser's language
    assert "lang=en" in page.url


def test_at_800px_home_shows_the_four_tasks_and_the_menu_closes_after_navigating(server, new_page):
    page = new_page(800, 900)
    page.goto(server + "/home?lang=es")
    _idle(page)
    page.wait_for_function(
        SIDEBAR_SHUT, timeout=15_000
    )  # a narrow window starts with the menu shut
    _tasks_shown(page, TASKS_ES, 800)
    buttons = page.locator('[data-testid="stMain"]').get_by_role(
        "button", name="Abrir con los datos de ejemplo"
    )
    assert buttons.count() == 4
    switch = page.locator(".st-key-ranklab-language").bounding_box()  # visible with the menu shut
    assert (
        switch is not None
        and switch["y"] < 60
        and switch["x"] >= 0
        and switch["x"] + switch["width"] <= 800
    ), switch
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.wait_for_function(SIDEBAR_OPEN, timeout=15_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Tabla comparativa").first.click()
    page.get_by_role("heading", name="Tabla comparativa").first.wait_for()
    _idle(page)
    page.wait_for_function(SIDEBAR_SHUT, timeout=15_000)
    box = page.locator('[data-testid="stSidebar"]').bounding_box()
    assert box is None or box["width"] == 0 or box["x"] + box["width"] <= 0, box
    assert "/table" in page.url and "lang=es" in page.url
    # opened by hand on the same page, the menu stays open (a rerun does not shut it)
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.wait_for_function(SIDEBAR_OPEN, timeout=15_000)
    page.locator('[data-testid="stMain"]').get_by_text("Evaluaciones guardadas (Historial)").click()
    _idle(page)
    time.sleep(1.0)
    assert page.evaluate(SIDEBAR_OPEN)


def test_home_has_its_own_address_and_the_root_keeps_the_language(server, new_page):
    page = new_page(1280, 800)
    page.goto(server + "/home")
    _idle(page)
    _tasks_shown(page, TASKS_EN, 1280)
    assert page.get_by_text("Page not found").count() == 0  # a link to /home is a real page
    page.goto(server + "/?lang=es")
    # the address also carries the session's reload token (?s=...), in any order
    page.wait_for_url(re.compile(r"/home\?(.*&)?lang=es(&|$)"), timeout=30_000)
    _idle(page)
    _tasks_shown(page, TASKS_ES, 1280)
    assert page.get_by_text("Page not found").count() == 0
