"""The explorer shows metrics_core's exact tie report: on the Overview a "tie band" row under a
run's leaderboard means (the mean of per-query minima and maxima over every order of tied
scores, on the leaderboard's own query set), on Per query the tie-dependent queries with their
minimum–maximum and the tied documents of a ranked list."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
import ui.ranking.data as ranking_data
from metrics_core.report.leaderboard_grid import TIE_ROW, tie_band
from metrics_core.stats.comparison import leaderboard
from ui.ranking.ranked_view import TIE_COLUMN, TIE_RANGE_COLUMN

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60
MEASURES = ["RR", "AP", "P@2", "Judged@10"]  # Judged@10: not covered by the tie report

QRELS = """q1 0 d1 1
q1 0 d2 0
q1 0 d3 1
q1 0 d4 0
q2 0 a 1
q2 0 b 0
q3 0 x 1
"""
# q1: d1, d2, d3 tied (two relevant, one not): RR, AP and P@2 depend on their order;
# q3: x (relevant) tied with y (unjudged); q2: no ties
TIED = """q1 Q0 d1 1 1.0 tied
q1 Q0 d2 2 1.0 tied
q1 Q0 d3 3 1.0 tied
q1 Q0 d4 4 0.5 tied
q2 Q0 a 1 2.0 tied
q2 Q0 b 2 1.0 tied
q3 Q0 y 1 1.0 tied
q3 Q0 x 2 1.0 tied
"""
# distinct scores everywhere; no ranking for q3, so "queries every run answered" = q1, q2
PLAIN = """q1 Q0 d2 1 4.0 plain
q1 Q0 d1 2 3.0 plain
q1 Q0 d4 3 2.0 plain
q2 Q0 b 1 2.0 plain
q2 Q0 a 2 1.0 plain
"""
PLAIN2 = """q1 Q0 d1 1 4.0 plain2
q1 Q0 d3 2 3.0 plain2
q2 Q0 a 1 2.0 plain2
"""


@pytest.fixture
def data(tmp_path):
    def read(name, text, reader):
        path = tmp_path / name
        path.write_text(text)
        return reader(str(path))

    qrels = read("qrels.txt", QRELS, mc.read_qrels)
    runs = {
        n: read(f"{n}.txt", t, mc.read_run)
        for n, t in (("tied", TIED), ("plain", PLAIN), ("plain2", PLAIN2))
    }
    return qrels, runs


def _app(page: str, qrels, runs) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = None
    at.session_state["ranklab.measures"] = list(MEASURES)
    return at.run()


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _grid(at: AppTest):
    return next(
        d.value for d in at.dataframe if "Run" in d.value.columns and "AP" in d.value.columns
    )


def _library_band(qrels, run, queries, measure):
    """Mean of the library's per-query minima and maxima over ``queries``."""
    report = mc.evaluate(qrels, run, MEASURES, tie_report=True).tie_report
    lo = np.mean([report["per_query"][q][measure]["min"] for q in queries])
    hi = np.mean([report["per_query"][q][measure]["max"] for q in queries])
    return lo, hi


def test_overview_tie_band_is_the_library_band_on_the_leaderboard_query_set(data):
    qrels, runs = data
    at = _app("overview", qrels, {n: runs[n] for n in ("tied", "plain")})
    _ok(at)
    grid = _grid(at)
    labels = grid["Run"].tolist()
    assert labels == [
        "tied (baseline)",
        "   95% CI",
        TIE_ROW,
        "plain",
        "   95% CI",
    ]  # no band for plain
    band_row = grid.iloc[2]
    mean_row = grid.iloc[0]
    # the leaderboard is on the queries every run answered (q1, q2): so is the band
    for m in ("RR", "AP", "P@2"):
        lo, hi = _library_band(qrels, runs["tied"], ["q1", "q2"], m)
        assert lo < hi, m  # the case is not trivial
        assert band_row[m] == f"{lo:.4f}–{hi:.4f}", m  # the grid's columns: the measures
        mean = float(mean_row[m].split()[0])
        assert lo - 5e-5 <= mean <= hi + 5e-5, m
    # RR of q1: the first relevant is first or second among the tied (1 or 0.5); q2: 1
    assert band_row["RR"] == "0.7500–1.0000"
    assert band_row["Judged@10"] == ""  # not covered by the tie report: nothing shown
    legend = next(
        c.value for c in at.caption if "significantly different from the baseline" in c.value
    )
    assert "range of the mean over every order of tied scores" in legend


def test_overview_band_follows_every_qrels_query_set(data):
    qrels, runs = data
    at = _app("overview", qrels, {n: runs[n] for n in ("tied", "plain")})
    at.radio(key="ranklab.w.overview.query_set").set_value("qrels").run()
    _ok(at)
    band_row = _grid(at).iloc[2]
    conv = at.session_state["ranklab.conventions"]
    report = mc.evaluate(
        qrels, runs["tied"], MEASURES, conventions=conv, tie_report=True
    ).tie_report
    for m in ("RR", "AP"):
        agg = report["aggregate"][m]  # the tied run answered every query: its own band
        assert band_row[m] == f"{agg['min']:.4f}–{agg['max']:.4f}", m


def test_overview_without_ties_shows_no_band(data):
    qrels, runs = data
    at = _app("overview", qrels, {n: runs[n] for n in ("plain", "plain2")})
    _ok(at)
    grid = _grid(at)
    assert TIE_ROW not in grid["Run"].tolist()
    assert not any("tie band" in str(v).lower() for v in grid.to_numpy().ravel())
    assert not any("tied scores" in c.value for c in at.caption)


def test_overview_large_runs_get_a_note_instead_of_the_band(data, monkeypatch):
    qrels, runs = data
    monkeypatch.setattr(ranking_data, "TIE_ROWS", 3)  # every run here has more rows
    at = _app("overview", qrels, {n: runs[n] for n in ("tied", "plain")})
    _ok(at)
    assert TIE_ROW not in _grid(at)["Run"].tolist()
    assert any("Tie band not computed for tied, plain" in c.value for c in at.caption)


def test_per_query_flags_tie_dependent_queries_and_tied_documents(data):
    qrels, runs = data
    at = _app("per_query", qrels, {n: runs[n] for n in ("tied", "plain")})
    _ok(at)
    table = next(d.value for d in at.dataframe if TIE_COLUMN in d.value.columns)
    report = mc.evaluate(qrels, runs["tied"], MEASURES, tie_report=True).tie_report
    per = report["per_query"]
    assert table.loc["q1", TIE_COLUMN] == "RR · AP · P@2"
    assert table.loc["q3", TIE_COLUMN] == "RR · AP"  # P@2 is 0.5 whichever of x, y is first
    assert table.loc["q2", TIE_COLUMN] == ""
    expected = " · ".join(
        f"{m} {per['q1'][m]['min']:.4f}–{per['q1'][m]['max']:.4f}" for m in ("RR", "AP", "P@2")
    )
    assert table.loc["q1", TIE_RANGE_COLUMN] == expected
    assert set(report["tie_dependent"]["AP"]) == {
        q for q in table.index if "AP" in table.loc[q, TIE_COLUMN]
    }
    # only the tie-dependent queries
    at.toggle(key="ranklab.pq.tied_only").set_value(True).run()
    _ok(at)
    table = next(d.value for d in at.dataframe if TIE_COLUMN in d.value.columns)
    assert sorted(table.index) == ["q1", "q3"]
    # the ranked list of q1 (the first query both shown runs answered): three documents tied
    ranking = next(
        d.value for d in at.dataframe if "tied" in d.value.columns and "doc_id" in d.value.columns
    )
    assert ranking["tied"].tolist() == ["3", "3", "3", ""]  # under the heading "Tied"
    assert any(
        "Depends on the order of tied scores" in c.value and "RR 0.5000–1.0000" in c.value
        for c in at.caption
    )


def test_tie_band_contains_the_leaderboard_mean(data):
    qrels, runs = data
    evs = []
    for name in ("tied", "plain"):
        ev = mc.evaluate(qrels, runs[name], MEASURES, tie_report=True)
        ev = ev.renamed(name)
        evs.append(ev)
    frames = {ev.run_name: ev.per_query for ev in evs}
    reports = {ev.run_name: ev.tie_report for ev in evs}
    board = leaderboard(evs, "tied", MEASURES, n_resamples=200, seed=0)
    band = tie_band(board, frames, reports)
    assert set(band.index) == {("tied", "RR"), ("tied", "AP"), ("tied", "P@2")}
    means = board.set_index(["run", "measure"])["mean"]
    for key, row in band.iterrows():
        assert row["low"] <= means[key] <= row["high"], key
        assert row["dependent"] == 1  # q1 (q3 is outside the common query set)
