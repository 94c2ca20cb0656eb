"""One query set per comparison table (compare_runs, paper_table, compare --format json).

The bug these tests pin: with runs that answered different queries, the paper table's
baseline row was the baseline's mean on the queries it shared with the FIRST run, while
each other row's delta was against the baseline on the queries it shared with that run,
so baseline + delta != run mean (sample data: bm25 0.2806 on 48 queries, hybrid +0.1529
against 0.2899 on 50).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metrics_core.cli import main
from metrics_core.errors import InputError
from metrics_core.report.legends import leaderboard_legend, markers_legend, paper_table
from metrics_core.stats.comparison import aligned_values, compare_runs, leaderboard

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "ranking"


class FakeEvaluation:
    def __init__(self, run_name, per_query):
        self.run_name, self.per_query = run_name, per_query


def _runs():
    rng = np.random.default_rng(7)
    idx = pd.Index([f"q{i}" for i in range(30)], name="query_id")
    base = pd.DataFrame({"AP": rng.random(30)}, index=idx)
    # "partial" misses q0..q3, "full" answered every query
    partial = pd.DataFrame({"AP": rng.random(30)}, index=idx).iloc[4:]
    full = pd.DataFrame({"AP": np.clip(base["AP"] + 0.1, 0, 1)}, index=idx)
    return [
        FakeEvaluation("base", base),
        FakeEvaluation("partial", partial),
        FakeEvaluation("full", full),
    ]


@pytest.mark.parametrize("query_set", ["common", "qrels"])
def test_every_comparison_of_a_measure_uses_one_query_set(query_set):
    evs = _runs()
    frame = compare_runs(evs, "base", ["AP"], n_permutations=200, query_set=query_set)
    assert frame["n_queries"].nunique() == 1
    assert frame["mean_baseline"].nunique() == 1
    assert int(frame["n_queries"].iloc[0]) == (26 if query_set == "common" else 30)
    # baseline + delta == run mean, row by row
    np.testing.assert_allclose(
        frame["mean_baseline"] + frame["mean_delta"], frame["mean_run"], atol=1e-12
    )
    table = paper_table(frame)
    base_mean = float(table.loc["base", "AP"])
    for r in frame.itertuples():
        run_mean, delta = table.loc[r.run, "AP"].rstrip("*").split(" (")
        assert float(run_mean) == pytest.approx(base_mean + float(delta.rstrip(")")), abs=2e-4)
    assert "n = " in markers_legend(frame)


def test_qrels_set_scores_absent_queries_zero():
    evs = _runs()
    t = aligned_values(evs, "AP", "qrels")
    assert list(t.index[:4]) == ["q0", "q1", "q10", "q11"]  # sorted ids; q0..q3 absent from partial
    assert (t.loc[["q0", "q1", "q2", "q3"], "partial"] == 0).all()
    assert len(aligned_values(evs, "AP", "common")) == 26


def test_sample_paper_table_baseline_plus_delta_is_the_run_mean():
    """The issue's numbers: on today's sample, dense misses 2 queries."""
    out = {}
    for query_set in ("common", "qrels"):
        from metrics_core import evaluate_many, read_qrels, read_run

        qrels = read_qrels(SAMPLE / "qrels.txt")
        runs = {n: read_run(SAMPLE / f"{n}.txt") for n in ("bm25", "dense", "hybrid")}
        kw = {"missing_queries": "zero"} if query_set == "qrels" else {}
        evs = evaluate_many(qrels, runs, ["AP"], **kw)
        frame = compare_runs(evs, "bm25", ["AP"], n_permutations=200, query_set=query_set)
        table = paper_table(frame)
        base = float(table.loc["bm25", "AP"])
        for run in ("dense", "hybrid"):
            mean, delta = table.loc[run, "AP"].rstrip("*†‡").split(" (")
            assert float(mean) == pytest.approx(base + float(delta.rstrip(")")), abs=2e-4), (
                query_set,
                run,
            )
        out[query_set] = frame
    assert set(out["common"]["n_queries"]) == {48}
    assert set(out["qrels"]["n_queries"]) == {50}


def _cli_json(tmp_path, capsys, *extra):
    args = [
        "compare",
        "--qrels",
        str(SAMPLE / "qrels.txt"),
        "--baseline",
        "bm25",
        "-m",
        "AP,nDCG@10",
        "--permutations",
        "200",
        "--format",
        "json",
        "--quiet",
        *extra,
    ]
    for n in ("bm25", "dense", "hybrid"):
        args += ["--run", str(SAMPLE / f"{n}.txt")]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("extra,n", [((), 48), (("--queries", "qrels"), 50), (("-c",), 50)])
def test_cli_json_one_n_and_baseline_mean_per_measure(tmp_path, capsys, extra, n):
    out = _cli_json(tmp_path, capsys, *extra)
    by_measure = {}
    for c in out["comparisons"]:
        by_measure.setdefault(c["measure"], []).append(c)
        assert c["mean_baseline"] + c["mean_delta"] == pytest.approx(c["mean_run"], abs=1e-12)
    for rows in by_measure.values():
        assert {c["n_queries"] for c in rows} == {n}
        assert len({c["mean_baseline"] for c in rows}) == 1
    assert out["comparison"]["query_set"] == ("common" if not extra else "qrels")


def test_cli_queries_common_contradicts_c(capsys):
    args = [
        "compare",
        "--qrels",
        str(SAMPLE / "qrels.txt"),
        "--run",
        str(SAMPLE / "bm25.txt"),
        "--run",
        str(SAMPLE / "dense.txt"),
        "--baseline",
        "bm25",
        "--queries",
        "common",
        "-c",
    ]
    assert main(args) == 2
    assert "contradicts" in capsys.readouterr().err


def test_leaderboard_best_markers_and_legend():
    evs = _runs()
    board = leaderboard(evs, "base", ["AP"], n_permutations=500, n_resamples=200)
    assert board["n_queries"].nunique() == 1 and int(board["n_queries"].iloc[0]) == 26
    best = board[board["best"]]
    assert list(best["run"]) == [board.loc[board["mean"].idxmax(), "run"]]
    assert (board["ci_lo"] <= board["mean"]).all() and (board["mean"] <= board["ci_hi"]).all()
    base = board[board["run"] == "base"].iloc[0]
    assert base["marker"] == "" and np.isnan(base["p_corrected"])
    full = board[board["run"] == "full"].iloc[0]
    assert full["marker"] == "*"  # +0.1 on every query
    assert full["delta"] == pytest.approx(full["mean"] - base["mean"])
    legend = leaderboard_legend(board)
    assert "Holm" in legend and "n = 26" in legend and "base" in legend
    with pytest.raises(InputError):
        leaderboard(evs, "base", ["AP"], query_set="pairwise")
