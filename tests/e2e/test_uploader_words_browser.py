"""Streamlit's own uploader words in a Spanish browser (Chromium): the button, the line with
the server's per-file limit (and a box's file types) and the hint while a file is dragged
over the box are Spanish, no English word of Streamlit's shows, at 1280 and 800 px and after
a rerun; back in English, Streamlit's words come back."""

from __future__ import annotations

import time

import pytest
import tomllib

from tests.e2e.conftest import ROOT

pytestmark = pytest.mark.e2e

ENGLISH = ("Upload", "per file", "Drag and drop", "Browse files")
DROPZONE = '[data-testid="stFileUploaderDropzone"]'
AFTER = "(e) => getComputedStyle(e, '::after').content"


def _idle(page) -> None:
    """The page drawn and its script run finished."""
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')"
        " && document.querySelector('[data-testid=stSidebarNav]')",
        timeout=60_000,
    )
    time.sleep(0.8)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000
    )


def _limit_words() -> str:
    """The per-file limit our server configuration sets, as the box should say it."""
    with open(ROOT / ".streamlit" / "config.toml", "rb") as fh:
        mb = tomllib.load(fh)["server"]["maxUploadSize"]
    return f"{mb // 1024} GB" if mb % 1024 == 0 else f"{mb} MB"


def _boxes_speak_spanish(page, types: str | None = None) -> int:
    boxes = page.locator(DROPZONE)
    boxes.first.wait_for()
    shown_boxes = [boxes.nth(i) for i in range(boxes.count()) if boxes.nth(i).is_visible()]
    assert shown_boxes
    limit = f"Hasta {_limit_words()} por archivo" + (f" • {types}" if types else "")
    for box in shown_boxes:
        shown = box.inner_text()  # what the box shows as text (hidden words left out)
        for word in ENGLISH:
            assert word not in shown, (word, shown)
        multiple = box.locator("input[multiple]").count() > 0
        name = "Subir archivos" if multiple else "Subir archivo"
        label = box.locator('button [data-testid="stMarkdownContainer"]').first
        assert label.evaluate(AFTER) == f'"{name}"'
        assert box.get_by_role("button", name=name, exact=True).is_visible()  # its accessible name
        assert not box.get_by_text("Upload", exact=True).is_visible()
        line = box.locator('[data-testid="stFileUploaderDropzoneInstructions"] > div').first
        assert line.evaluate(AFTER) == f'"{limit}"'
        assert not line.get_by_text("per file").is_visible()
        width = line.evaluate("(e) => e.getBoundingClientRect().width")
        assert width > 50, width  # the Spanish line takes room: it is drawn
    return len(shown_boxes)


def _drag_over_first_box(page) -> str:
    page.evaluate(
        """() => { const dz = document.querySelector('[data-testid=stFileUploaderDropzone]');
        const dt = new DataTransfer(); dt.items.add(new File(['a'], 'x.csv', {type: 'text/csv'}));
        dz.dispatchEvent(new DragEvent('dragenter', {dataTransfer: dt, bubbles: true})); }"""
    )
    hint = page.locator(DROPZONE).first.locator("> input + div > span").first
    hint.wait_for(state="attached")
    content = hint.evaluate(AFTER)
    assert "Drag and drop" not in page.locator(DROPZONE).first.inner_text()
    page.evaluate("""() => document.querySelector('[data-testid=stFileUploaderDropzone]')
        .dispatchEvent(new DragEvent('dragleave', {bubbles: true}))""")
    return content


@pytest.mark.parametrize("width,height", [(1280, 800), (800, 900)])
def test_the_drop_zones_speak_spanish_in_a_spanish_browser(server, new_page, width, height):
    page = new_page(width, height, locale="es-ES")
    page.goto(server + "/data")
    _idle(page)
    assert _boxes_speak_spanish(page) == 2  # qrels (one file) and runs (several); the
    # metadata box is in a closed expander
    assert _drag_over_first_box(page) == '"Suelta el archivo aquí"'
    # a rerun (another format chosen) draws the boxes again: still Spanish
    page.get_by_text("Cargar datos de ejemplo").first.click()
    _idle(page)
    _boxes_speak_spanish(page)
    page.goto(server + "/calibration")
    _idle(page)
    page.locator(
        "[data-testid=stMain] summary", has_text="Datos: probabilidades y etiquetas"
    ).first.click()
    _boxes_speak_spanish(page, types="CSV, TSV, TXT, PARQUET, JSON, JSONL")


def test_in_english_streamlit_keeps_its_own_words(server, new_page):
    page = new_page(1280, 800, locale="es-ES")
    page.goto(server + "/data")
    _idle(page)
    _boxes_speak_spanish(page)
    page.locator(".st-key-ranklab-language").get_by_text("English").click()
    page.get_by_role("heading", name="Data").first.wait_for()
    _idle(page)
    time.sleep(0.5)
    box = page.locator(DROPZONE).first
    box.get_by_text("Upload", exact=True).wait_for(state="visible")
    assert "per file" in box.inner_text()
    assert box.locator('button [data-testid="stMarkdownContainer"]').first.evaluate(AFTER) in (
        "none",
        "normal",
    )
