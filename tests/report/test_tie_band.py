"""The leaderboard's tie band (metrics_core.report.leaderboard_grid.tie_band) from the tie bounds
(metrics_core.ranking.ties.tie_bounds): the extremes of the tie report, and the same band
whether given the bounds or the whole report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.ranking.ties import tie_bounds
from metrics_core.report.leaderboard_grid import bounds_of_report, tie_band
from metrics_core.stats.comparison import leaderboard

MEASURES = ["RR", "AP", "P@5", "nDCG@10", "R@10", "Judged@10"]  # Judged@10: not covered


def _data(seed: int, queries: int = 40, depth: int = 12):
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i}" for i in range(queries)], depth)
    d = np.tile([f"d{j}" for j in range(depth)], queries)
    run_rows = [
        f"{a} Q0 {b} 0 {s:.1f} r"
        for a, b, s in zip(q, d, rng.integers(0, 4, q.size) / 2, strict=True)
    ]
    qrels_rows = [
        f"{a} 0 {b} {r}"
        for a, b, r in zip(q, d, rng.choice(3, q.size, p=[0.6, 0.25, 0.15]), strict=True)
    ]
    drop = {f"q{i}" for i in range(0, queries, 7)}  # a second run misses some queries
    other = [r for r in run_rows if r.split()[0] not in drop]
    qrels = mc.read_qrels(("\n".join(qrels_rows) + "\n").encode())
    return (
        qrels,
        mc.read_run(("\n".join(run_rows) + "\n").encode()),
        mc.read_run(("\n".join(other) + "\n").encode()),
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_tie_bounds_are_the_extremes_of_the_tie_report(seed):
    qrels, run, _ = _data(seed)
    ev = mc.evaluate(qrels, run, MEASURES, tie_report=True)
    bounds = tie_bounds(ev.ranking.lists, ev.specs, ev.conventions, run)
    per = ev.tie_report["per_query"]
    assert set(bounds) == set(ev.tie_report["aggregate"]) and "Judged@10" not in bounds
    for m, (lo, hi) in bounds.items():
        want_lo = [per[q][m]["min"] for q in ev.ranking.lists.query_ids]
        want_hi = [per[q][m]["max"] for q in ev.ranking.lists.query_ids]
        np.testing.assert_array_equal(lo, want_lo)
        np.testing.assert_array_equal(hi, want_hi)
        assert (lo <= hi).all()


@pytest.mark.parametrize("query_set", ["common", "qrels"])
def test_band_from_bounds_equals_band_from_report_and_contains_the_mean(query_set):
    qrels, run, other = _data(2)
    conv = mc.Conventions(missing_queries="zero" if query_set == "qrels" else "skip")
    evs = []
    for name, r in (("a", run), ("b", other)):
        ev = mc.evaluate(qrels, r, MEASURES, conventions=conv, tie_report=True)
        ev = ev.renamed(name)
        evs.append(ev)
    board = leaderboard(
        evs, "a", MEASURES, query_set=query_set, n_resamples=100, n_permutations=100
    )
    frames = {ev.run_name: ev.per_query for ev in evs}
    reports = {ev.run_name: ev.tie_report for ev in evs}
    bounds = {}
    for ev, r in zip(evs, (run, other), strict=True):
        index = pd.Index(ev.ranking.lists.query_ids)
        bounds[ev.run_name] = {
            m: (pd.Series(lo, index=index), pd.Series(hi, index=index))
            for m, (lo, hi) in tie_bounds(ev.ranking.lists, ev.specs, ev.conventions, r).items()
        }
    band = tie_band(board, frames, bounds)
    assert len(band) > 0
    pd.testing.assert_frame_equal(band, tie_band(board, frames, reports))
    pd.testing.assert_frame_equal(
        band, tie_band(board, frames, {n: bounds_of_report(r) for n, r in reports.items()})
    )
    means = board.set_index(["run", "measure"])["mean"]
    for key, row in band.iterrows():
        assert row["low"] - 1e-12 <= means[key] <= row["high"] + 1e-12, key
        assert row["dependent"] >= 1
    assert "Judged@10" not in band.index.get_level_values("measure")
    # a run without bounds (too large) has no band
    assert "b" not in tie_band(board, frames, {"a": bounds["a"], "b": None}).index.get_level_values(
        "run"
    )
