"""A mean over queries of RR is shown "MRR"; a per-query value stays "RR" (as the comparative
table and History say). Overview: the board's columns, the headline measure, the cards, the
details table; Compare: the table, the interval chart, the fold and criterion views, while the
per-query differences stay RR; Breakdown: the means by group; Per query: RR. Downloads keep
the canonical names."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from metrics_core.report.thesis import display_measure

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def _page(name: str, sample, lang: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    if lang:
        at.query_params["lang"] = lang
    qrels, runs, meta = sample
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = meta
    at.run()
    assert not at.exception, at.exception
    return at


def _frame_with(at, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def _chart_titles(at) -> list[str]:
    titles = []
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        title = spec.get("layout", {}).get("title", {})
        titles.append(title.get("text", "") if isinstance(title, dict) else str(title))
    return titles


def test_display_measure_is_the_rule():
    assert display_measure("RR") == "MRR" and display_measure("RR@10") == "MRR@10"
    assert display_measure("nDCG@10") == "nDCG@10" and display_measure("FirstRel") == "FirstRel"


def test_the_overview_shows_the_mean_of_rr_as_mrr(sample):
    at = _page("overview", sample)
    grid = _frame_with(at, "Run")
    assert "MRR" in grid.columns and "RR" not in grid.columns
    headline = at.selectbox(key="ranklab.overview.headline")
    assert headline.value == "RR" and "MRR" in headline.options and "RR" not in headline.options
    labels = [m.label for m in at.metric]
    assert labels and all(label.endswith(" · MRR") for label in labels), labels
    details = _frame_with(at, "delta_shown")
    assert "MRR" in set(details["measure"]) and "RR" not in set(details["measure"])


def test_the_overview_in_spanish_too(sample):
    at = _page("overview", sample, lang="es")
    assert "MRR" in _frame_with(at, "Ejecución").columns
    assert all(m.label.endswith(" · MRR") for m in at.metric)


def test_compare_means_are_mrr_and_per_query_differences_stay_rr(sample):
    at = _page("compare", sample)
    table = _frame_with(at, "mean_delta")
    assert "MRR" in set(table["measure"]) and "RR" not in set(table["measure"])
    interval = next(s for s in at.selectbox if s.label == "Interval chart: measure")
    assert "MRR" in interval.options and "RR" not in interval.options
    per_query = next(s for s in at.selectbox if s.label == "Measure")
    assert "RR" in per_query.options  # per-query deltas: the per-query measure
    interval.set_value("RR").run()
    per_query.set_value("RR").run()
    titles = _chart_titles(at)
    assert any(t.startswith("MRR: mean difference") for t in titles), titles
    assert any(t.startswith("RR: ") and "per query" in t for t in titles), titles
    assert any(t.startswith("MRR per ") for t in titles), titles  # the fold and criterion means


def test_breakdown_means_are_mrr_and_its_per_query_report_stays_rr(sample):
    at = _page("breakdown", sample)
    means = _frame_with(at, "count")
    assert "MRR" in means.columns and "RR" not in means.columns
    chart = next(s for s in at.selectbox if s.label == "Measure in the chart")
    assert "MRR" in chart.options
    chart.set_value("RR").run()
    assert any(t.startswith("MRR by ") for t in _chart_titles(at)), _chart_titles(at)


def test_per_query_values_stay_rr(sample):
    at = _page("per_query", sample)
    assert any("RR" in df.value.columns for df in at.dataframe)
    assert not any("MRR" in df.value.columns for df in at.dataframe)
