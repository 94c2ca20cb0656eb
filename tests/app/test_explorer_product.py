"""The explorer as one product: leaderboard first, one query set per table, one sample button,
one style (colours, natural order, plain headers), the status line and the HTML report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.report.leaderboard_grid import leaderboard_grid, tie_band
from metrics_core.report.legends import paper_table
from metrics_core.report.thesis import display_measure
from metrics_core.stats.comparison import compare_runs, leaderboard
from tests.app.test_app_pages import TIMEOUT, _app, _ok
from ui.common.style import difficulty_order, natural_key, natural_sorted, run_colours

ROOT = Path(__file__).resolve().parents[2]


def _evaluations(sample, measures, **kw):
    qrels, runs, _ = sample
    out = []
    for name, run in runs.items():
        ev = mc.evaluate(qrels, run, measures, **kw)
        ev = ev.renamed(name)
        out.append(ev)
    return out


# --- style helpers ----------------------------------------------------------------------


def test_natural_order_difficulty_and_colours():
    assert natural_sorted(["Q10", "Q2", "Q1", "q0"]) == ["q0", "Q1", "Q2", "Q10"]
    assert sorted(["a10b", "a2b", "a2a"], key=natural_key) == ["a2a", "a2b", "a10b"]
    assert difficulty_order(["hard", "medium", "easy"]) == ["easy", "medium", "hard"]
    assert difficulty_order(["Hard", "other", "Easy"]) == ["Easy", "Hard", "other"]
    c = run_colours(["bm25", "dense", "hybrid"])
    assert len(set(c.values())) == 3 and c == run_colours(["bm25", "dense", "hybrid"])


# --- Overview: leaderboard first --------------------------------------------------------


def test_overview_leaderboard_grid_legend_and_cards(sample):
    at = _app("overview", sample)
    _ok(at)
    measures = ["RR", "nDCG@10", "P@5", "P@10", "AP", "R@100"]
    grid = next(
        d.value for d in at.dataframe if "Run" in d.value.columns and "AP" in d.value.columns
    )
    assert list(grid.columns) == ["Run", *map(display_measure, measures)]  # means: RR's is MRR
    means = grid[
        ~grid["Run"].str.startswith("   ")
    ]  # the runs' rows (CI and tie band rows indented)
    assert list(means["Run"]) == ["bm25 (baseline)", "dense", "hybrid"]
    evs = _evaluations(sample, measures, tie_report=True, unjudged_report=True)
    board = leaderboard(evs, "bm25", measures, n_resamples=1000, seed=0)
    frames = {ev.run_name: ev.per_query for ev in evs}
    band = tie_band(board, frames, {ev.run_name: ev.tie_report for ev in evs})
    # the unjudged band: the same function over the labellings of the unjudged documents
    unjudged = tie_band(board, frames, {ev.run_name: ev.unjudged_report for ev in evs})
    expected = leaderboard_grid(board, band, unjudged=unjudged)
    pd.testing.assert_frame_equal(
        grid.reset_index(drop=True), expected.rename(columns=display_measure)
    )
    # hybrid is best on AP in the sample; the ★ marks it and only it
    ap = means["AP"].tolist()
    assert [("★" in v) for v in ap] == [False, False, True]
    legend = next(
        c.value for c in at.caption if "significantly different from the baseline" in c.value
    )
    assert "Holm" in legend and "n = 48" in legend and "bm25" in legend
    # the long table on the same query set: baseline + delta = run mean, one n
    long = next(d.value for d in at.dataframe if "p_corrected" in d.value.columns)
    assert set(long["n_queries"]) == {48}
    base = long[long["run"] == "bm25"].set_index("measure")["mean"]
    for r in long[long["run"] != "bm25"].itertuples():
        assert r.mean == pytest.approx(base[r.measure] + r.delta, abs=1e-12)
    # headline measure: the cards follow it
    at.selectbox(key="ranklab.overview.headline").set_value("AP").run()
    _ok(at)
    cards = {m.label: m.value for m in at.metric}
    row = board[(board["run"] == "dense") & (board["measure"] == "AP")].iloc[0]
    assert cards["dense · AP"] == f"{row['mean']:.4f}"


def test_overview_query_set_choice_is_the_convention(sample):
    at = _app("overview", sample)
    at.radio(key="ranklab.w.overview.query_set").set_value("qrels").run()
    _ok(at)
    assert at.session_state["ranklab.conventions"].missing_queries == "zero"
    long = next(d.value for d in at.dataframe if "p_corrected" in d.value.columns)
    assert set(long["n_queries"]) == {50}
    evs = _evaluations(sample, ["AP"], missing_queries="zero")
    frame = compare_runs(evs, "bm25", ["AP"], query_set="qrels")
    got = long[long["measure"] == "AP"].set_index("run")["mean"]
    assert got["bm25"] == pytest.approx(frame["mean_baseline"].iloc[0])
    assert got["hybrid"] == pytest.approx(frame.set_index("run").loc["hybrid", "mean_run"])
    # baseline change moves the markers
    at.selectbox(key="ranklab.overview.baseline").set_value("hybrid").run()
    _ok(at)
    grid = next(
        d.value for d in at.dataframe if "Run" in d.value.columns and "AP" in d.value.columns
    )
    assert grid[~grid["Run"].str.startswith("   ")]["Run"].iloc[2] == "hybrid (baseline)"
    assert any("status" not in c.value and "Conventions:" in c.value for c in at.caption)


def test_overview_report_html(sample):
    from ui.ranking.data import report_html

    qrels, runs, _ = sample
    evs = _evaluations(sample, ["AP", "RR"])
    text = report_html(
        evs, "bm25", ["AP", "RR"], "common", mc.Conventions(), qrels, runs, n_permutations=500
    )
    assert text.startswith("<!DOCTYPE html>") and "Plotly.newPlot" in text
    assert "https://" not in text.split("<script>", 1)[0]  # no remote style sheet or font
    assert "bm25 (baseline)" in text and "n = 48" in text


# --- Compare ----------------------------------------------------------------------------


def test_compare_page_one_query_set_and_markers(sample):
    at = _app("compare", sample)
    _ok(at)
    table = at.dataframe[0].value
    assert set(table["n_queries"]) == {48}
    assert table["mean_baseline"].nunique() == len(set(table["measure"]))
    np.testing.assert_allclose(
        table["mean_baseline"] + table["mean_delta"], table["mean_run"], atol=1e-12
    )
    # the Markdown paper table carries the screen's markers
    md = next(b for b in at.get("download_button") if b.proto.label == "Markdown")
    assert md is not None
    evs = _evaluations(sample, ["AP", "nDCG@10", "P@10", "RR"])
    frame = compare_runs(evs, "bm25", ["AP", "nDCG@10", "P@10", "RR"])
    paper = paper_table(frame, tests=("t", "wilcoxon", "permutation"))
    for r in frame.itertuples():
        assert paper.loc[r.run, r.measure].endswith(r.markers) if r.markers else True
    assert list(table["markers"]) == list(frame["markers"])
    # every test's p in an expander (a grid: its cells are text, never Markdown)
    # (headers name the tests as the library does: metrics_core.report.legends.TEST_NAMES)
    assert any("p (paired randomization test, corrected)" in t.value.columns for t in at.dataframe)
    assert not at.table
    # no raw names as headers: the shown columns carry labels
    shown = at.dataframe[0].proto
    assert "p_corrected_t" not in json.dumps(json.loads(shown.columns)) if shown.columns else True


def test_compare_page_qrels_query_set(sample):
    at = _app("compare", sample)
    at.radio(key="ranklab.w.compare.query_set").set_value("qrels").run()
    _ok(at)
    table = at.dataframe[0].value
    assert set(table["n_queries"]) == {50}
    ap = table[table["measure"] == "AP"].set_index("run")
    assert ap.loc["hybrid", "mean_run"] == pytest.approx(0.4428, abs=5e-5)
    assert ap.loc["hybrid", "mean_baseline"] == pytest.approx(0.2899, abs=5e-5)


# --- One sample button; pages open on something meaningful -------------------------------


def test_home_sample_button_loads_every_sample():
    at = AppTest.from_file(str(ROOT / "pages" / "home.py"), default_timeout=TIMEOUT).run()
    at.button(key="ranklab.home.sample").click().run()
    _ok(at)
    s = at.session_state
    assert set(s["ranklab.runs"]) == {"bm25", "dense", "hybrid"}
    assert s["ranklab.meta"] is not None and s["ranklab.clicks"] is not None
    assert s["ranklab.detection.scores"]["source"] and s["ranklab.detection.candidates"]["source"]
    codes = s["ranklab.hashing.data"]
    assert codes["query_codes"].shape == (200, 16) and codes["db_codes"].shape == (2000, 16)
    assert codes["db_labels"].dtype.kind == "i"
    # Home lists what was loaded in its message (the status line is on the ranking pages only)
    assert any("click log" in m.value and "hash codes" in m.value for m in at.success)


def test_loading_the_hash_sample_does_not_import_torch():
    code = (
        "import sys; from ui.hashing.data import load_sample; d = load_sample(); "
        "assert d['db_codes'].shape == (2000, 16); print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_per_query_opens_on_a_query_every_shown_run_retrieved(sample):
    at = _app("per_query", sample)
    _ok(at)
    # the default sides are bm25 and dense; dense has no ranking for q01 and q02
    assert at.selectbox(key="ranklab.pq.query").value == "q03"
    table = next(d.value for d in at.dataframe if "nDCG@10" in d.value.columns)
    assert list(table.index) == natural_sorted(table.index)


def test_breakdown_difficulty_in_order(sample):
    at = _app("breakdown", sample)
    at.selectbox(key="ranklab.bd.column").set_value("difficulty").run()
    _ok(at)
    long = next(d.value for d in at.dataframe if "difficulty" in d.value.columns)
    groups = list(dict.fromkeys(long["difficulty"]))
    assert groups == difficulty_order(groups) and groups[0] == "easy"


@pytest.mark.parametrize("page", ["home", "overview", "per_query", "breakdown", "compare", "learn"])
def test_pages_name_no_spec_documents(page, sample):
    at = _app(page, sample)
    _ok(at)
    texts = [
        e.value
        for kind in ("title", "header", "subheader", "caption", "markdown", "info", "text")
        for e in getattr(at, kind)
    ]
    texts += [str(b.label) for b in at.button] + [str(e.label) for e in at.expander]
    for t in texts:
        assert "seed 00" not in str(t).lower() and "§" not in str(t), t


def test_coverage_diagnostics_are_off_the_default_board_and_one_click_away(sample):
    """Judged@10, a coverage diagnostic, sat on the default board among the effectiveness
    measures (and in its significance family)."""
    from metrics_core.ranking.registry import EXPLORER_MEASURES

    assert "Judged@10" not in EXPLORER_MEASURES
    at = _app("overview", sample)
    _ok(at)
    grid = next(
        d.value for d in at.dataframe if "Run" in d.value.columns and "AP" in d.value.columns
    )
    assert not any(c.startswith("Judged") for c in grid.columns)
    picker = next(m for m in at.multiselect if "nDCG@10" in m.value)
    assert "Judged@10" in picker.options  # one click away
