"""The comparative table page (pages/table.py) under AppTest, with the bundled sample: its
numbers equal metrics_core.evaluate's, a threshold or a name edit changes the labels, the
date filter keeps the queries of a period, Spanish headers, and the exports' contents."""

from __future__ import annotations

import datetime as dt
import html
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.report.thesis import thesis_table
from metrics_core.report.thesis_export import localized_words
from tests.app.text import shown as reads
from ui.compare import table as tb
from ui.compare.data import thesis_exports
from ui.compare.table import Table

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90
MEASURES = ["RR", "nDCG@10", "P@5"]


def _app(sample=None, lang=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "table.py"), default_timeout=TIMEOUT)
    if sample is not None:
        qrels, runs, meta = sample
        at.session_state["ranklab.qrels"] = qrels
        at.session_state["ranklab.runs"] = dict(runs)
        at.session_state["ranklab.meta"] = meta
    if lang:
        at.query_params["lang"] = lang
    return at.run()


def _ok(at):
    assert not at.exception, [e.message for e in at.exception]


def _table(at) -> pd.DataFrame:
    """The comparative table (the page's first; a baseline adds its p-values' table and the
    table of how many queries each comparison needs under it)."""
    assert len(at.dataframe) in (1, 3)
    return at.dataframe[0].value


@pytest.fixture(scope="module")
def evaluations(sample):
    qrels, runs, _meta = sample
    return {name: mc.evaluate(qrels, run, MEASURES) for name, run in runs.items()}


def test_defaults_are_the_specifications_measures_and_thresholds(sample, evaluations):
    at = _app(sample)
    _ok(at)
    df = _table(at)
    assert list(df.columns) == ["Run", "Queries", "MRR", "nDCG@10", "P@5", "Interpretation"]
    assert df["Run"].tolist() == ["bm25", "dense", "hybrid", "Summary (3 runs)"]
    for i, (name, ev) in enumerate(evaluations.items()):
        assert df.at[i, "Run"] == name
        for m, shown in (("RR", "MRR"), ("nDCG@10", "nDCG@10"), ("P@5", "P@5")):
            value = ev.aggregate[m]
            good = {"RR": 0.7, "nDCG@10": 0.6, "P@5": 0.5}[m]
            expected = (
                "Good" if value >= good else "Fair" if value >= good / 2 else "Needs improvement"
            )
            assert df.at[i, shown] == f"{value:.4f} ({expected})"
        assert df.at[i, "Queries"] == str(len(ev.per_query))
    mrr_mean = sum(ev.aggregate["RR"] for ev in evaluations.values()) / 3
    assert df.at[3, "MRR"].startswith(f"{mrr_mean:.4f} (")
    assert df.at[3, "Interpretation"] in ("Efficient", "Acceptable", "Needs improvement")
    assert not df.isin(["nan", "NaN", "None"]).any().any()
    assert [b.label for b in at.get("download_button")] == ["CSV", "Markdown", "LaTeX", "HTML"]
    # the status line of the loaded rankings: this is a ranking page
    assert any("Conventions:" in c.value for c in at.caption)


def test_a_threshold_edit_and_a_name_edit_change_the_labels(sample, evaluations):
    at = _app(sample)
    bm25 = evaluations["bm25"].aggregate["RR"]
    assert 0.35 <= bm25 < 0.7 and _table(at).at[0, "MRR"] == f"{bm25:.4f} (Fair)"
    at.number_input(key=Table.good("RR")).set_value(round(bm25 - 0.01, 2)).run()
    _ok(at)
    assert _table(at).at[0, "MRR"] == f"{bm25:.4f} (Good)"
    at.text_input(key=Table.name("en", "level", 0)).set_value("Excellent").run()
    _ok(at)
    assert _table(at).at[0, "MRR"] == f"{bm25:.4f} (Excellent)"
    assert (
        f"bm25,{len(evaluations['bm25'].per_query)},{bm25!r},Excellent,"
        in at.session_state[Table.FILES]["csv"]
    )
    at.number_input(key=Table.fair("RR")).set_value(0.99).run()  # fair above good: said, no table
    # the message as read (the error box shows Markdown: ">" is written "&gt;")
    assert (
        any("good >= fair" in html.unescape(e.value) for e in at.error) and len(at.dataframe) == 0
    )


def test_the_date_filter_keeps_the_queries_of_a_period(sample, evaluations):
    _qrels, _runs, meta = sample
    at = _app(sample)
    assert at.date_input(key=Table.DATES).value == (
        dt.date(2025, 1, 6),
        pd.Timestamp(meta["date"].max()).date(),
    )
    at.date_input(key=Table.DATES).set_value((dt.date(2025, 1, 6), dt.date(2025, 1, 31))).run()
    _ok(at)
    df = _table(at)
    january = set(meta.index[pd.to_datetime(meta["date"]).dt.month.eq(1)].astype(str))
    for i, (_name, ev) in enumerate(evaluations.items()):
        kept = ev.per_query.loc[[q for q in ev.per_query.index if q in january]]
        assert df.at[i, "Queries"] == str(len(kept)) and len(kept) < len(ev.per_query)
        assert df.at[i, "MRR"].startswith(f"{kept['RR'].mean():.4f} (")
    assert any("dated 2025-01-06 to 2025-01-31" in m.value for m in at.markdown)


def test_spanish_headers_labels_and_summary(sample):
    at = _app(sample, lang="es")
    _ok(at)
    assert at.title[0].value == "Tabla comparativa"
    df = _table(at)
    assert list(df.columns) == ["Ejecución", "Consultas", "MRR", "nDCG@10", "P@5", "Interpretación"]
    assert df["Ejecución"].iloc[-1] == "Resumen (3 ejecuciones)"
    assert {cell.split(" (")[1] for cell in df["MRR"]} <= {"Bueno)", "Regular)", "Mejorable)"}
    assert df.iloc[-1, -1] in ("Eficiente", "Aceptable", "Mejorable")
    assert at.radio(key=Table.SOURCE).label == "Filas"
    assert at.number_input(key=Table.good("RR")).label == "Bueno desde"
    # the files the page offers speak the page's language
    files = at.session_state[Table.FILES]
    assert files["csv"].splitlines()[0].startswith("Ejecución,Consultas,MRR,Etiqueta de MRR,")
    assert files["csv"].splitlines()[-1].startswith("Resumen,")
    assert (
        "| **Resumen** (3 ejecuciones) |" in files["markdown"]
        and '<html lang="es">' in files["html"]
    )
    assert "Tabla comparativa: 3 ejecuciones, 50 consultas." in files["latex"]
    assert [b.label for b in at.get("download_button")] == ["CSV", "Markdown", "LaTeX", "HTML"]


def test_saved_evaluations_from_the_sample_history():
    at = _app()
    _ok(at)
    assert any("No runs loaded" in i.value for i in at.info)
    at.radio(key=Table.SOURCE).set_value("saved").run()
    _ok(at)
    df = _table(at)
    assert df.columns[0] == "Evaluation"
    assert df["Evaluation"].tolist()[:-1] == [
        "v1.2-semantic #3",
        "v1.3-hybrid #4",
        "v1.4-hybrid #5",
        "v1.5-hybrid #6",
    ]
    assert df["Evaluation"].iloc[-1] == "Summary (4 evaluations)"
    assert df.at[3, "MRR"] == "1.0000 (Good)"


def test_a_baseline_adds_corrected_p_values(sample):
    at = _app(sample)
    at.selectbox(key=Table.BASELINE).set_value("bm25").run()
    _ok(at)
    # the p-values in a table of their own under the table's legend (as columns of the table
    # they pushed its interpretation off the right edge): one row per run compared
    df = at.dataframe[1].value
    assert list(df["Run"]) == ["dense", "hybrid"] and "p (MRR)" not in _table(at).columns
    assert all(v.startswith("<") or 0 <= float(v) <= 1 for v in df["p (MRR)"])
    assert any("against bm25" in c.value and "Holm" in c.value for c in at.caption)
    # the columns of numbers alone (queries, p-values) are right-aligned as in every table
    right = set()
    for frame in at.dataframe[:2]:
        columns = json.loads(frame.proto.columns)
        right |= {c for c, v in columns.items() if v.get("alignment") == "right"}
    assert right == {"Queries", "p (MRR)", "p (nDCG@10)", "p (P@5)"}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_baseline_adds_how_many_queries_each_comparison_needs(sample, lang):
    """Topic set size design against the baseline: one row per (run, measure), the figures
    the library gives (thesis_table's power), headed as the Compare page's power table, and
    the method with its references under it, in the visitor's language."""
    at = AppTest.from_file(str(ROOT / "pages" / "table.py"), default_timeout=TIMEOUT)
    qrels, runs, meta = sample
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = meta
    # chosen before the first run: AppTest cannot run again a page whose radio's options are
    # translated (it looks the English value up among the Spanish options)
    at.session_state[Table.BASELINE] = "bm25"
    at.query_params["lang"] = lang
    at.run()
    _ok(at)
    df = at.dataframe[2].value
    df = getattr(df, "data", df)  # a Styler's frame
    run, needed = (
        ("Run", "Queries needed") if lang == "en" else ("Ejecución", "Consultas necesarias")
    )
    assert list(df[run]) == ["dense"] * 3 + ["hybrid"] * 3
    assert needed in df.columns and all(pd.isna(v) or v >= 2 for v in df[needed])
    captions = " ".join(c.value for c in at.caption)
    if lang == "en":
        assert "How many queries each comparison against bm25 needs" in captions
        assert "Sakai" in captions and "noncentral t" in captions
    else:
        assert "Cuántas consultas necesita cada comparación con bm25" in captions
        assert "Sakai" in captions


def test_the_exports_contents_in_spanish(sample, evaluations):
    words, names, verdicts = localized_words("es")
    table = thesis_table(
        list(evaluations.values()),
        MEASURES,
        grading=tb.grading_from({m: tb.default_thresholds(m) for m in MEASURES}, names, verdicts),
    )
    files = thesis_exports(table, words, "es")
    assert set(files) == {"csv", "markdown", "latex", "html"}
    csv_lines = files["csv"].splitlines()
    assert csv_lines[0] == (
        "Ejecución,Consultas,MRR,Etiqueta de MRR,nDCG@10,Etiqueta de nDCG@10,P@5,"
        "Etiqueta de P@5,Interpretación"
    )
    assert csv_lines[1].startswith(
        f"bm25,{len(evaluations['bm25'].per_query)},{evaluations['bm25'].aggregate['RR']!r},"
    )
    assert csv_lines[-1].startswith("Resumen,") and not any(
        line.startswith("#") for line in csv_lines
    )
    assert "| Ejecución | Consultas | MRR |" in files["markdown"]
    assert (
        "\\toprule" in files["latex"] and "\\textbf{" in files["latex"] and files["latex"].isascii()
    )
    assert "Tabla comparativa" in files["latex"]
    html = files["html"]
    assert html.startswith("<!DOCTYPE html>") and '<html lang="es">' in html
    assert '<table class="ranklab-comparative">' in html and "Resumen" in html
    assert "nan" not in html.lower().replace("financ", "")


def test_the_display_frame_never_shows_nan():
    per_query = {
        "a": pd.DataFrame({"RR": [float("nan")]}, index=["q1"]),
        "b": pd.DataFrame({"RR": [0.5]}, index=["q1"]),
    }
    words, names, verdicts = localized_words("en")
    table = thesis_table(per_query, ["RR"])
    df = tb.display_frame(table, words)
    assert df.at[0, "MRR"] == "\u2013" and df.at[1, "MRR"] == "0.5000 (Fair)"
    assert not df.astype(str).isin(["nan", "NaN", "None"]).any().any()


def test_the_screen_marks_significance_as_the_exports_do(sample):
    """The legend under the table explained "*", which no cell on screen carried."""
    at = _app(sample)
    at.selectbox(key=Table.BASELINE).set_value("bm25").run()
    _ok(at)
    df = _table(at)
    files = at.session_state[Table.FILES]
    marked_screen = {
        (row["Run"], m)
        for _i, row in df.iloc[:-1].iterrows()
        for m in ("MRR", "nDCG@10", "P@5")
        if row[m].split(" ")[0].endswith("*")
    }
    marked_latex = set()
    for line in files["latex"].splitlines():
        cells = [c.strip() for c in line.rstrip("\\ ").split("&")]
        if len(cells) == 9 and cells[0] in set(df["Run"]):
            for m, cell in zip(("MRR", "nDCG@10", "P@5"), cells[2:8:2], strict=True):
                if cell.endswith("$^{*}$"):
                    marked_latex.add((cells[0], m))
    assert (
        marked_screen == marked_latex and marked_screen
    )  # the sample's hybrid run differs significantly
    assert any(reads(c.value).startswith("* p < 0.05 against bm25") for c in at.caption)
    # the table and its downloads come before the settings that shape it
    assert at.dataframe[0].value.equals(df) and at.subheader[-1].value == "Settings"
