"""The Detection page in a real browser: moving the threshold slider (score units) changes the
shown TPR/FPR to metrics_core's values at that point."""

from __future__ import annotations

import pandas as pd
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from metrics_core import detection as det
from tests.e2e.conftest import ROOT

pytestmark = pytest.mark.e2e

SCORES = pd.read_csv(ROOT / "sample_data" / "detection_scores.csv")


def _metric(page, label: str) -> str:
    card = page.locator('[data-testid="stMetric"]', has_text=label).first
    return card.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _settle(page, thumb) -> None:
    """Wait until the fragment reruns settle: the value unchanged and nothing running for a second."""
    last, quiet = None, 0
    for _ in range(300):
        value = thumb.input_value()
        busy = page.locator('[data-testid="stStatusWidget"]').count() > 0
        quiet = quiet + 1 if (value == last and not busy) else 0
        last = value
        if quiet >= 5:
            return
        page.wait_for_timeout(200)


def test_operating_point_slider(server, page):
    y, s = SCORES["label"].to_numpy(), SCORES["score"].to_numpy()
    page.goto(server + "/detection")
    page.wait_for_selector('[data-testid="stApp"]')
    page.locator("h1", has_text="Detection").first.wait_for(timeout=60_000)
    page.get_by_text("AUROC").first.wait_for()
    assert _metric(page, "AUROC") == f"{det.roc_auc_score(y, s):.4f}"

    # the slider's keyboard control is a visually hidden <input type="range">
    thumb = page.locator('[data-testid="stSlider"] input[type="range"]').first
    thumb.wait_for(state="attached")
    start = float(thumb.input_value())  # the threshold, in score units
    tpr_before = _metric(page, "TPR")
    # move right, 60 steps of 1/1000 of the score range at a time, until the threshold has
    # passed a positive (so metrics_core's TPR differs from the starting one); a key press
    # lost during a fragment rerun only means another round
    moved = False
    for _ in range(20):  # a loaded machine loses more rounds to fragment reruns
        _settle(page, thumb)
        thumb.focus()
        for _ in range(60):
            page.keyboard.press("ArrowRight")
        try:
            page.wait_for_function(
                '(start) => { const t = document.querySelector(\'[data-testid="stSlider"] input[type="range"]\');'
                " return t && Number(t.value) > start; }",
                arg=start,
                timeout=20_000,
            )
        except PlaywrightTimeout:  # the presses went to an element a rerun replaced: press again
            continue
        _settle(page, thumb)
        if f"{det.confusion_matrix_at(y, s, float(thumb.input_value()))['tpr']:.4f}" != tpr_before:
            moved = True
            break
    assert moved, "the slider never moved past a positive"
    threshold = float(thumb.input_value())
    cm = det.confusion_matrix_at(y, s, threshold)
    # the number box follows the slider
    box = (
        page.locator('[data-testid="stNumberInput"]', has_text="Threshold, typed")
        .locator("input")
        .first
    )
    page.wait_for_function(
        "(want) => { const i = [...document.querySelectorAll('[data-testid=\"stNumberInput\"]')]"
        ".find(e => e.innerText.includes('Threshold, typed')); return i && "
        "Math.abs(Number(i.querySelector('input').value) - want) < 1e-6; }",
        arg=threshold,
    )
    assert abs(float(box.input_value()) - threshold) < 1e-6
    page.wait_for_function(
        "(want) => [...document.querySelectorAll('[data-testid=\"stMetric\"]')].some("
        "m => m.innerText.includes('TPR') && m.innerText.includes(want))",
        arg=f"{cm['tpr']:.4f}",
    )
    assert _metric(page, "TPR") == f"{cm['tpr']:.4f}" != tpr_before
    assert _metric(page, "FPR") == f"{cm['fpr']:.4f}"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_charts_keep_a_readable_width_at_800px_in_spanish(server, browser):
    """A Spanish browser at 800 px: the page is in Spanish without touching the switch, the
    ROC and PR charts are one per row and each keeps a readable width, with its legend under
    the plot area (not over the curve)."""
    context = browser.new_context(viewport={"width": 800, "height": 900}, locale="es-ES")
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(server + "/detection")
        page.locator("h1", has_text="Detección").first.wait_for()
        charts = page.locator('[data-testid="stPlotlyChart"]')
        charts.nth(1).wait_for()
        page.wait_for_timeout(1500)
        boxes = [charts.nth(i).bounding_box() for i in range(2)]
        main = page.locator('[data-testid="stMain"]').bounding_box()
        for box in boxes:
            assert box["width"] >= 400, boxes
            assert box["width"] >= 0.8 * (main["width"] - 2 * 16), (boxes, main)
        assert boxes[1]["y"] >= boxes[0]["y"] + boxes[0]["height"] - 1  # stacked, not side by side
        for i in range(2):
            legend = charts.nth(i).locator("g.legend").bounding_box()
            plot = charts.nth(i).locator("rect.nsewdrag").first.bounding_box()
            assert legend["y"] >= plot["y"] + plot["height"] - 1, (legend, plot)
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()
