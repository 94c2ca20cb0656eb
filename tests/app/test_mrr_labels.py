"""One name per measure across the app (issue 41 item 11): the library's canonical name,
``RR``, in every table, chart, card and picker -- Overview, Compare, Breakdown, Per query
and the HTML report. The comparative (thesis) table alone labels its mean "MRR", as the
semantic-search panel's specification heads that table, and its measure picker says so too.
(Before, Compare's and Per query's pickers said "RR" while the tables and Overview said
"MRR".)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from metrics_core.report.thesis import display_measure

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
MRR = re.compile(r"\bMRR\b")


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


def _shown(at) -> list[str]:
    """Every name a page shows: headings and cells of its tables, its cards, its pickers'
    options, its charts' titles."""
    out = [m.label for m in at.metric] + _chart_titles(at)
    for box in [*at.selectbox, *at.multiselect]:
        out += [str(o) for o in box.options]
    for df in at.dataframe:
        frame = df.value
        out += [str(c) for c in frame.columns]
        out += [str(v) for v in frame.to_numpy().ravel() if isinstance(v, str)]
    return out


def test_the_thesis_label_is_the_rule_of_the_thesis_table_alone():
    assert display_measure("RR") == "MRR" and display_measure("RR@10") == "MRR@10"
    assert display_measure("nDCG@10") == "nDCG@10" and display_measure("FirstRel") == "FirstRel"


@pytest.mark.parametrize("lang", [None, "es"])
def test_the_overview_names_rr_as_its_pickers_do(sample, lang):
    at = _page("overview", sample, lang)
    grid = at.dataframe[0].value
    assert "RR" in grid.columns and "MRR" not in grid.columns
    headline = at.selectbox(key="ranklab.overview.headline")
    assert headline.value == "RR" and "RR" in headline.options
    labels = [m.label for m in at.metric]
    assert labels and all(label.endswith(" · RR") for label in labels), labels
    details = _frame_with(at, "delta_shown")
    assert "RR" in set(details["measure"])
    assert not [t for t in _shown(at) if MRR.search(t)]


@pytest.mark.parametrize("page", ["compare", "per_query", "breakdown"])
def test_compare_per_query_and_breakdown_say_rr_in_pickers_tables_and_charts(sample, page):
    at = _page(page, sample)
    shown = _shown(at)
    assert any(t == "RR" or t.startswith("RR") for t in shown), shown
    assert not [t for t in shown if MRR.search(t)]


def test_compare_charts_of_rr(sample):
    at = _page("compare", sample)
    interval = next(s for s in at.selectbox if s.label == "Interval chart: measure")
    per_query = next(s for s in at.selectbox if s.label == "Measure")
    assert "RR" in interval.options and "RR" in per_query.options
    interval.set_value("RR").run()
    per_query.set_value("RR").run()
    titles = _chart_titles(at)
    assert any(t.startswith("RR: mean difference") for t in titles), titles
    assert any(t.startswith("RR: ") and "per query" in t for t in titles), titles
    assert any(t.startswith("RR per ") for t in titles), titles  # the fold and criterion means
    assert not [t for t in _shown(at) if MRR.search(t)]


def test_the_comparative_table_labels_the_mean_mrr_as_the_specification(sample):
    """The thesis table: its picker, its column and its exports say MRR (its rows'
    thresholds editor too)."""
    at = _page("table", sample)
    picker = next(m for m in at.multiselect if m.label == "Measures")
    assert "RR" in picker.value
    assert "MRR" in picker.proto.options or "MRR" in [str(o) for o in picker.options]
    table = at.dataframe[0].value
    assert "MRR" in table.columns and "RR" not in table.columns


def test_the_html_report_names_rr_as_the_app(sample):
    import metrics_core as mc
    from metrics_core.report.html import comparison_report

    qrels, runs, _meta = sample
    evs = [mc.evaluate(qrels, run, ["RR", "P@5"]) for run in runs.values()]
    text = comparison_report(evs, evs[0].run_name, ["RR", "P@5"], n_permutations=50, plotly_js=None)
    assert ">RR<" in text and ">MRR<" not in text
