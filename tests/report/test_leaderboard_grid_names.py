"""The leaderboard grid names each column by the measure's canonical name (as the app's
pickers do)."""

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


def test_the_columns_are_the_canonical_names():
    """One name per measure (the app's pickers say RR): the thesis table alone labels its
    mean MRR."""
    grid = leaderboard_grid(_board(48, 48))
    assert list(grid.columns) == ["Run", "RR", "AP"]
    assert grid.loc[0, "RR"] == "0.6000" and grid.loc[2, "RR"] == "0.7000 ★"


def test_with_a_query_count_per_measure_too():
    grid = leaderboard_grid(_board(48, 50))
    assert list(grid.columns) == ["Run", "RR (n=48)", "AP (n=50)"]
