"""A Spanish session (``?lang=es``) sees the words the library writes in Spanish: History's
summary row and the hash-code summary's descriptions and notes (the pages pass their
``ngettext``/``_`` to the library)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from metrics_core.history import HistoryStore, load_sample_history
from ui.history import state as hs

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90


def _page(name: str, lang: str | None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    if lang:
        at.query_params["lang"] = lang
    return at.run()


@pytest.fixture
def shared_store(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as s:
        load_sample_history(s)
        n, suites = s.count_evaluations(), len(s.suite_names())
    monkeypatch.setenv(hs.ENV_STORE, str(path))
    return n, suites


@pytest.mark.parametrize("lang", [None, "es"])
def test_history_summary_row_in_the_page_language(shared_store, lang):
    n, suites = shared_store
    at = _page("history", lang)
    assert not at.exception, at.exception
    report = at.dataframe[0].value
    last = report.iloc[-1]
    if lang == "es":
        assert last["ID"] == "Resumen"
        assert last["Run"] == f"{n} evaluaciones ({suites} conjunto{'s' if suites != 1 else ''})"
    else:
        assert last["ID"] == "Summary"
        assert last["Run"] == f"{n} evaluations ({suites} suite{'s' if suites != 1 else ''})"


@pytest.mark.parametrize("lang", [None, "es"])
def test_hash_summary_in_the_page_language(lang):
    pytest.importorskip("torch")
    at = _page("hashing", lang)
    at.button(key="hash_load_sample").click().run()
    assert not at.exception, at.exception
    summary = next(d.value for d in at.dataframe if "note" in d.value.columns)  # the summary table
    words = " ".join(summary["measure"].astype(str)) + " " + " ".join(summary["note"].astype(str))
    if lang == "es":
        assert "relevantes al final entre los empates" in words and "empates: esperado" in words
        assert "radio de Hamming" in words and "el mínimo que da cualquier orden" in words
        for english in ("relevant items", "ties:", "lowest", "highest", "within Hamming radius"):
            assert english not in words, english
    else:
        assert (
            "relevant items last among ties" in words
            and "ties: expected (random tie order)" in words
        )


def test_the_overview_report_file_in_spanish():
    import metrics_core as mc
    from ui.ranking.data import load_sample, report_html

    qrels, runs, _ = load_sample()
    evs = []
    for name, run in runs.items():
        evs.append(mc.evaluate(qrels, run, ["AP", "RR"]))
        evs[-1] = evs[-1].renamed(name)
    page = report_html(
        evs,
        "bm25",
        ["AP", "RR"],
        "common",
        mc.Conventions(),
        qrels,
        runs,
        lang="es",
        n_permutations=200,
    )
    assert (
        page.startswith('<!DOCTYPE html><html lang="es">')
        and "<title>Reporte de RankLab</title>" in page
    )
    assert (
        "bm25 (línea base)" in page and "<td>ejecución bm25</td>" in page and "<th>MRR</th>" in page
    )
    assert "Leaderboard" not in page and "Every run against" not in page
    english = report_html(
        evs,
        "bm25",
        ["AP", "RR"],
        "common",
        mc.Conventions(),
        qrels,
        runs,
        lang="en",
        n_permutations=200,
    )
    assert (
        '<html lang="en">' in english
        and "<td>run bm25</td>" in english
        and "Leaderboard" in english
    )
