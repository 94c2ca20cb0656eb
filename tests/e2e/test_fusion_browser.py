"""The Fusion page in Chromium: the sample one click away, the fused run's board in English and
Spanish, at 1280x800 and 800 px wide, no horizontal scroll of the page; the fused run downloads
as TREC lines. Screenshots go to RANKLAB_SCREENSHOTS when it is set (to look at them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.pages import IDLE, grid_widths, keep_screenshot, open_with_sample, page_overflow


@pytest.mark.parametrize(("lang", "width", "height"), [("en", 1280, 800), ("es", 800, 1000)])
def test_fusion_page_from_sample_to_download(server, new_page, lang, width, height):
    page = new_page(width, height)
    open_with_sample(page, server, "fusion", lang)
    heading = (
        "The fused run beside its inputs"
        if lang == "en"
        else "La ejecución fusionada junto a sus entradas"
    )
    page.get_by_text(heading).first.wait_for(timeout=120_000)
    page.get_by_text("RRF (bm25 + dense)").first.wait_for(
        state="attached", timeout=60_000
    )  # the board's cell
    page.wait_for_timeout(1500)
    assert page_overflow(page) <= 1
    keep_screenshot(page, f"fusion_{lang}_{width}")
    label = (
        "Download the fused run (TREC)"
        if lang == "en"
        else "Descarga la ejecución fusionada (TREC)"
    )
    assert page.get_by_text(label).count() == 1  # the one download row's TREC button sits under it
    with page.expect_download() as info:
        page.get_by_role("button", name="TREC", exact=True).click()
    first = Path(info.value.path()).read_text().splitlines()[0].split()
    assert len(first) == 6 and first[1] == "Q0" and first[3] == "1"
    # one button loads the fused run beside the uploads: its name in full on the button
    add = (
        "Add RRF (bm25 + dense) to the loaded runs"
        if lang == "en"
        else ("Añadir RRF (bm25 + dense) a las ejecuciones cargadas")
    )
    button = page.get_by_role("button", name=add)
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    assert box is not None and box["x"] + box["width"] <= width  # within the page, not cut
    keep_screenshot(page, f"fusion_join_{lang}_{width}")
    button.click()
    loaded = "is a loaded run" if lang == "en" else "es una ejecución cargada"
    page.get_by_text(loaded).first.wait_for(timeout=60_000)
    keep_screenshot(page, f"fusion_joined_{lang}_{width}")


@pytest.mark.parametrize(("lang", "width", "height"), [("en", 1280, 800), ("es", 800, 900)])
def test_tuning_tables_fit_the_page(server, new_page, lang, width, height):
    """With tuning on, the folds' tables fit the page: no table scrolls sideways (the one table
    of eight long headings was 1391 px wide in Spanish, its last headings cut)."""
    page = new_page(width, height)
    open_with_sample(page, server, "fusion", lang)
    tune = (
        "Tune the parameters (cross-validated by query)"
        if lang == "en"
        else "Ajusta los parámetros (validación cruzada por consulta)"
    )
    page.get_by_text(tune).first.click()
    held_out = "Held-out queries" if lang == "en" else "Consultas reservadas"  # a folds' heading
    page.get_by_text(held_out, exact=True).first.wait_for(state="attached", timeout=120_000)
    page.wait_for_function(IDLE, timeout=60_000)
    page.wait_for_timeout(1500)
    keep_screenshot(page, f"fusion_tuned_{lang}_{width}")
    sizes = grid_widths(page)
    assert len(sizes) >= 3, sizes  # the board, the significance, the folds
    assert all(scroll <= client + 1 for scroll, client in sizes), sizes
    assert page_overflow(page) <= 1
