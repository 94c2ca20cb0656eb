"""The two traps of a wrong run, in a real browser: a run that shares no query with the
qrels and a run none of whose documents is judged are named at upload, kept out of the
Overview's board with a note in words, and the other runs keep their numbers (no "nan",
"NaN" or "None" anywhere), in English and in Spanish."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import ROOT

pytestmark = pytest.mark.e2e

SAMPLE = ROOT / "sample_data" / "ranking"


def _wait_idle(page) -> None:
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000
    )


def _bad_runs(tmp_path):
    stranger = tmp_path / "stranger.txt"  # other query ids: shares no query with the qrels
    stranger.write_text("".join(f"zz{q} Q0 D0{q:04d} 1 1.0 stranger\n" for q in range(20)))
    unjudged = tmp_path / "unjudged.txt"  # the qrels' queries, documents nobody judged
    queries = sorted(
        {line.split()[0] for line in (SAMPLE / "qrels.txt").read_text().splitlines() if line}
    )
    unjudged.write_text(
        "".join(
            f"{q} Q0 nobody-{i} {i + 1} {10 - i}.0 unjudged\n" for q in queries for i in range(5)
        )
    )
    return stranger, unjudged


@pytest.mark.parametrize(
    "locale,words",
    [
        (
            "en-US",
            {
                "load": "Load sample data",
                "left_out": "Left out of the tables that compare runs",
                "no_query": "shares no query with the qrels",
                "unjudged": "is judged in the qrels",
                "overview": "Overview",
                "data": "Data",
            },
        ),
        (
            "es-ES",
            {
                "load": "Cargar datos de ejemplo",
                "left_out": "Fuera de las tablas que comparan ejecuciones",
                "no_query": "no comparte ninguna consulta con los qrels",
                "unjudged": "tiene juicio en los qrels",
                "overview": "Resumen",
                "data": "Datos",
            },
        ),
    ],
)
def test_wrong_runs_are_named_and_kept_off_the_board(server, new_page, tmp_path, locale, words):
    stranger, unjudged = _bad_runs(tmp_path)
    page = new_page(1280, 900, locale=locale)
    page.goto(server + "/data")
    _wait_idle(page)
    page.get_by_role("button", name=words["load"]).click()
    page.get_by_text("bm25").first.wait_for(timeout=90_000)
    _wait_idle(page)
    # the sample's board before the wrong runs: bm25's RR on the queries every run answered
    page.locator('[data-testid="stSidebarNav"] a', has_text=words["overview"]).click()
    card = page.locator(
        '[data-testid="stMetric"]', has_text="bm25 · RR"
    )  # one name per measure: the canonical one
    card.wait_for(timeout=90_000)
    _wait_idle(page)
    before = card.locator('[data-testid="stMetricValue"]').inner_text().strip()
    assert re.fullmatch(r"0\.\d{4}", before), before
    page.locator('[data-testid="stSidebarNav"] a', has_text=words["data"]).click()
    _wait_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').nth(1).set_input_files(
        [str(stranger), str(unjudged)]
    )
    warning = page.locator('[data-testid="stAlertContentWarning"]', has_text=words["left_out"])
    warning.first.wait_for(timeout=90_000)
    text = warning.first.inner_text()
    assert "stranger" in text and words["no_query"] in text, text
    assert "unjudged" in text and words["unjudged"] in text, text

    page.locator('[data-testid="stSidebarNav"] a', has_text=words["overview"]).click()
    card = page.locator(
        '[data-testid="stMetric"]', has_text="bm25 · RR"
    )  # one name per measure: the canonical one
    card.wait_for(timeout=90_000)
    _wait_idle(page)
    assert card.locator('[data-testid="stMetricValue"]').inner_text().strip() == before
    note = page.locator('[data-testid="stAlertContentWarning"]', has_text=words["left_out"]).first
    assert "stranger" in note.inner_text() and "unjudged" in note.inner_text()
    # neither wrong run has a card; no missing value is spelled as a number's absence
    assert page.locator('[data-testid="stMetric"]', has_text="stranger").count() == 0
    assert page.locator('[data-testid="stMetric"]', has_text="unjudged").count() == 0
    body = page.locator("body").inner_text()
    assert not re.search(r"\b(nan|NaN|None)\b", body), re.findall(
        r".{30}\b(?:nan|NaN|None)\b.{30}", body
    )
    assert page.locator('[data-testid="stException"]').count() == 0
