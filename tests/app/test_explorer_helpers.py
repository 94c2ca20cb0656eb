"""Pure helpers of the explorer: exports with provenance, seed 001's comparative report,
figure builders, the ranked-list view and run naming."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import metrics_core as mc
from ui.common.downloads import export_texts
from ui.ranking.data import missed_relevant, query_ranking, read_metadata, run_name_for
from ui.ranking.figures import (
    distribution,
    first_click_ranks,
    gain_contributions,
    group_bars,
    overview_bars,
)
from ui.ranking.ranked_view import styled_ranking


def test_exports_state_version_and_conventions():
    df = pd.DataFrame(
        {"nDCG@10": [0.51234], "date": pd.to_datetime(["2025-01-28"])},
        index=pd.Index(["bm25"], name="run"),
    )
    conv = mc.Conventions(missing_queries="zero")
    texts = export_texts(df, conv, title="Overview")
    assert set(texts) == {"csv", "json", "markdown", "latex"}
    # the CSV is the table alone; its version and conventions are in the other files
    assert texts["csv"].splitlines()[0].startswith("run,")
    assert not any(line.startswith("#") for line in texts["csv"].splitlines())
    for fmt, text in texts.items():
        if fmt == "csv":
            continue
        assert mc.__version__ in text, fmt
        assert "missing_queries" in text.replace("\\_", "_"), fmt  # Markdown escapes "_"
    payload = json.loads(texts["json"])
    assert payload["rows"][0]["date"] == "2025-01-28"
    assert payload["provenance"]["conventions"]["missing_queries"] == "zero"
    assert "0.5123" in texts["markdown"] and r"\begin{tabular}" in texts["latex"]


def test_figures_are_plotly_figures_with_the_data():
    summary = pd.DataFrame(
        {
            "run": ["a", "a", "b", "b"],
            "measure": ["RR", "P@5"] * 2,
            "mean": [0.5, 0.2, 0.6, 0.3],
            "ci_low": [0.4, 0.1, 0.5, 0.2],
            "ci_high": [0.6, 0.3, 0.7, 0.4],
        }
    )
    fig = overview_bars(summary)
    assert isinstance(fig, go.Figure) and len(fig.data) == 2
    np.testing.assert_allclose(fig.data[1].y, [0.6, 0.3])
    np.testing.assert_allclose(fig.data[0].error_y.array, [0.1, 0.1])
    d = distribution({"a": pd.Series([0.1, np.nan, 0.5], index=["q1", "q2", "q3"])}, "RR")
    np.testing.assert_allclose(d.data[0].y, [0.1, 0.5])
    h = distribution({"a": pd.Series([0.1, 0.5])}, "RR", kind="histogram")
    assert h.data[0].type == "histogram"
    g = group_bars(
        pd.DataFrame({"run": ["a", "a"], "cat": ["x", "y"], "RR": [0.1, 0.9], "count": [3, 4]}),
        "RR",
        "cat",
    )
    assert list(g.data[0].x) == ["x", "y"]
    c = gain_contributions([3, 0, 1], [1.0, 0.63, 0.5], [3, 0, 1])
    np.testing.assert_allclose(c.data[1].y, [3.0, 0.0, 0.5])
    f = first_click_ranks(pd.DataFrame({"first_click_rank": [0, 1, 1, 3]}))
    assert list(f.data[0].x) == ["no click", "1", "3"] and list(f.data[0].y) == [1, 2, 1]


def test_ranked_list_follows_conventions_and_missed_relevant():
    qrels = mc.read_qrels({"q": {"a": 1, "b": 0, "c": 2, "z": 1}})
    run = mc.read_run({"q": {"a": 1.0, "b": 1.0, "c": 0.5, "x": 2.0}})
    ev = mc.evaluate(qrels, run, ["P@2"])
    rl = ev.ranking.ranking("q")
    assert rl["doc_id"].tolist() == ["x", "b", "a", "c"]  # ties: doc id descending (trec_eval)
    assert np.isnan(rl["relevance"].iloc[0]) and rl["relevance"].iloc[1:].tolist() == [
        0.0,
        1.0,
        2.0,
    ]
    ev2 = mc.evaluate(qrels, run, ["P@2"], ties="docid_asc")
    assert ev2.ranking.ranking("q")["doc_id"].tolist() == ["x", "a", "b", "c"]
    assert missed_relevant(qrels, rl, "q", 1)["doc_id"].tolist() == ["z"]
    assert ev.ranking.ranking("nope").empty


@pytest.mark.parametrize("extra_query", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_ranked_list_of_a_run_given_in_rank_order(ties, extra_query):
    """Runs written in rank order are not sorted by the engine (no order array, at most a
    few tie swaps): the ranked list must still show the engine's order."""
    lines = [
        "q1 Q0 a 1 3 t",
        "q1 Q0 b 2 2 t",
        f"q1 Q0 c 3 {2 if ties else 1.5} t",
        "q1 Q0 d 4 1 t",
        "q2 Q0 e 1 5 t",
        "q2 Q0 f 2 4 t",
    ]
    if extra_query:  # a run query absent from the qrels: its rows are left out first
        lines = ["q0 Q0 zz 1 9 t"] + lines
    run = mc.read_run(("\n".join(lines) + "\n").encode())
    qrels = mc.read_qrels({"q1": {"c": 1, "b": 1}, "q2": {"f": 2}})
    ev = mc.evaluate(qrels, run, ["P@1", "P@2"])
    want = ["a", "c", "b", "d"] if ties else ["a", "b", "c", "d"]
    got = ev.ranking.ranking("q1")
    assert got["doc_id"].tolist() == want
    assert got["relevance"].fillna(-1).tolist() == [-1, 1.0, 1.0, -1]
    assert ev.ranking.ranking("q2")["doc_id"].tolist() == ["e", "f"]
    docs = run.doc_ids
    assert [docs[i] for i in ev.ranking.lists.row_index] == want + ["e", "f"]
    # a run evaluated in blocks keeps no Ranking: the page ranks the query's rows alone, the same
    streamed = mc.evaluate(qrels, run, ["P@1", "P@2"], block_rows=2)
    assert streamed.ranking is None
    for q in ("q1", "q2"):
        alone = query_ranking(streamed, run, qrels, q)
        assert alone.ranking(q).equals(ev.ranking.ranking(q))
        assert alone.tie_sizes(q).tolist() == ev.ranking.tie_sizes(q).tolist()


def test_run_names_and_metadata_reader():
    run = mc.read_run(b"q1 Q0 d1 1 2.0 mytag\n", name="run")
    run.tags = "mytag"
    assert run_name_for(run, "run.txt.gz") == "mytag"
    assert run_name_for(run, "bm25.trec.gz") == "bm25"
    meta = read_metadata(b"qid,category,date\nq1,a,2025-01-02\nq2,b,bad\n", "m.csv")
    assert meta.index.tolist() == ["q1", "q2"] and meta.loc["q1", "date"] == pd.Timestamp(
        "2025-01-02"
    )
    assert pd.isna(meta.loc["q2", "date"])
    with pytest.raises(mc.InputError, match="no query id column"):
        read_metadata(b"name,category\nq1,a\n", "m.csv")
    with pytest.raises(mc.InputError, match="appears twice"):
        read_metadata(b"query_id,category\nq1,a\nq1,b\n", "m.csv")


def test_worst_labels_equal_the_worst_interpret_of_each_row():
    """The vectorised row interpretation (comparative report, history) against
    report.interpret applied value by value, NaN and missing thresholds included."""
    from metrics_core.report import LABELS, interpret, worst_labels

    rng = np.random.default_rng(5)
    cols = {m: rng.choice([0.0, 0.2, 0.35, 0.5, 0.7, 0.9, np.nan], 300) for m in ("RR", "P@5", "X")}
    thresholds = {"RR": 0.7, "P@5": 0.5}
    for fair_ratio in (0.5, 0.8):
        got = worst_labels(cols, thresholds, fair_ratio)
        for i in range(300):
            labels = [interpret(float(cols[m][i]), thresholds[m], fair_ratio) for m in thresholds]
            ranks = [LABELS.index(lab) for lab in labels if lab]
            assert got[i] == (LABELS[max(ranks)] if ranks else ""), i


def test_natural_rows_orders_a_per_query_table_as_people_read_it():
    from ui.common.style import natural_key, natural_rows

    frame = pd.DataFrame({"AP": range(5)}, index=["q10", "q2", "Q1", "q2b", "q1"])
    rows = natural_rows(frame)
    assert (
        rows.index.tolist()
        == sorted(frame.index, key=natural_key)
        == ["Q1", "q1", "q2", "q2b", "q10"]
    )
    assert rows["AP"].tolist() == [2, 4, 1, 3, 0]  # whole rows move; equal keys keep their order


def test_a_ranking_already_being_built_is_waited_for_not_built_again():
    """Two script runs of one session (Streamlit starts the next page while the previous
    page's run is still ranking) share one build of the same ranking; a failure reaches
    both; a later call builds afresh."""
    import threading
    import time

    from ui.ranking.data import IN_FLIGHT, rank_once

    calls, results = [], []
    release = threading.Event()

    def slow_build():
        calls.append(1)
        release.wait(5)
        return object()

    threads = [
        threading.Thread(target=lambda: results.append(rank_once(("k", 1), slow_build)))
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    time.sleep(0.2)
    release.set()
    for t in threads:
        t.join(5)
    assert len(calls) == 1 and len(results) == 3 and len({id(r) for r in results}) == 1
    assert not IN_FLIGHT

    def broken():
        time.sleep(0.2)
        raise mc.InputError("bad run")

    errors = []

    def call():
        try:
            rank_once(("k", 2), broken)
        except mc.InputError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert len(errors) == 2 and not IN_FLIGHT
    assert rank_once(("k", 2), lambda: "fresh") == "fresh"


def test_a_stopped_page_run_does_not_stop_the_run_waiting_for_its_ranking():
    """The visitor opens the Overview while the Data page's run is still ranking: Streamlit
    stops the Data page's run (its StopException, not an error) and the Overview's run, which
    waited for that ranking, builds it itself. It re-raised the other run's stop and ended
    half drawn (no board, ever: the 1 M-line upload of the load test and bench/app_budget.py)."""
    import threading
    import time

    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from ui.ranking.data import IN_FLIGHT, rank_once

    started, calls, got = threading.Event(), [], []

    def stopped_build():
        calls.append("stopped")
        started.set()
        time.sleep(0.3)
        raise StopException()

    def first():
        try:
            rank_once(("k", 3), stopped_build)
        except StopException:
            got.append("first stopped")

    owner = threading.Thread(target=first)
    owner.start()
    assert started.wait(5)
    waiter = threading.Thread(
        target=lambda: got.append(rank_once(("k", 3), lambda: calls.append("built") or "board"))
    )
    waiter.start()
    owner.join(5)
    waiter.join(5)
    assert sorted(got) == ["board", "first stopped"] and calls == ["stopped", "built"]
    assert not IN_FLIGHT


def test_server_limits_blas_to_one_thread_once():
    import subprocess
    import sys

    code = (
        "from ui.common import blas; assert blas.limit_threads_once() and not blas.limit_threads_once(); "
        "from threadpoolctl import threadpool_info; "
        "print(sorted({i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1]"


def test_figure_words_follow_the_page_language(monkeypatch):
    """The distribution's title read "RR per query" on the Spanish Per query page; the group
    bars' and first-click bars' hover said "queries" and "impressions" in English."""
    from ui.common import i18n
    from ui.ranking import figures

    monkeypatch.setattr(figures, "_", i18n.translations("es").gettext)
    d = figures.distribution({"a": pd.Series([0.1, 0.5], index=["q1", "q2"])}, "RR")
    assert d.layout.title.text == "RR por consulta"
    g = figures.group_bars(
        pd.DataFrame({"run": ["a"], "cat": ["x"], "RR": [0.1], "count": [3]}), "RR", "cat"
    )
    assert g.data[0].hovertemplate.startswith("%{x}: %{y:.4f} (%{customdata} consultas)")
    f = figures.first_click_ranks(pd.DataFrame({"first_click_rank": [0, 1, 1]}))
    assert "impresiones" in f.data[0].hovertemplate and "impressions" not in f.data[0].hovertemplate


def test_a_ranking_shows_its_scores_with_one_number_of_decimals():
    ranking = pd.DataFrame(
        {
            "rank": [1, 2, 3, 4],
            "doc_id": ["d1", "d2", "d3", "d4"],
            "score": [10.0, 9.8, 9.61234, 12345.5],
            "relevance": [2.0, 0.0, np.nan, 1.0],
        }
    )
    text = styled_ranking(ranking).to_string()
    for shown in ("10.0000", "9.8000", "9.6123", "12345.5000"):
        assert shown in text, text
    assert " 10 " not in text and "9.61 " not in text and "1.235e+04" not in text
