"""The leaderboard grid names each column as people name the measure's mean."""

from __future__ import annotations

import pandas as pd

from metrics_core.report.leaderboard_grid import leaderboard_grid


def _board(n_rr: int, n_ap: int) -> pd.DataFrame:
    rows = []
    for run, rr, ap in (("bm25", 0.6, 0.3), ("dense", 0.7, 0.4)):
        for measure, mean, n in (("RR", rr, n_rr), ("AP", ap, n_ap)):
            rows.append(
                {
                    "run": run,
                    "measure": measure,
                    "n_queries": n,
                    "mean": mean,
                    "best": run == "dense",
                    "marker": "",
                    "ci_lo": mean - 0.1,
                    "ci_hi": mean + 0.1,
                }
            )
    board = pd.DataFrame(rows)
    board.attrs.update(baseline="bm25", confidence=0.95)
    return board


def test_the_mean_of_rr_is_mrr():
    grid = leaderboard_grid(_board(48, 48))
    assert list(grid.columns) == ["Run", "MRR", "AP"]
    assert grid.loc[0, "MRR"] == "0.6000" and grid.loc[2, "MRR"] == "0.7000 ★"


def test_with_a_query_count_per_measure_too():
    grid = leaderboard_grid(_board(48, 50))
    assert list(grid.columns) == ["Run", "MRR (n=48)", "AP (n=50)"]
