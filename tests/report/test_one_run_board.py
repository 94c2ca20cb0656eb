"""A leaderboard of one run compares nothing: no best mark, no significance marker and no
correction sentence (issue 29, item 6)."""

from __future__ import annotations

import numpy as np

import metrics_core as mc
from metrics_core.report.leaderboard_grid import BEST, leaderboard_grid
from metrics_core.report.legends import family_sentence, leaderboard_legend
from metrics_core.stats.comparison import MARKERS, leaderboard


def _evaluations(n_runs: int, seed: int = 3) -> list:
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(12)]
    docs = [f"d{j}" for j in range(8)]
    qs = np.repeat(queries, len(docs))
    ds = np.tile(docs, len(queries))
    qrels = mc.Qrels(qs, ds, rng.integers(0, 3, len(qs)))
    return [
        mc.evaluate(
            qrels,
            mc.Run(qs, ds, rng.integers(0, 4, len(qs)).astype(float), name=f"sys{r}"),
            ["nDCG@5", "RR"],
        )
        for r in range(n_runs)
    ]


def test_one_run_has_no_best_no_marker_no_correction():
    evs = _evaluations(1)
    board = leaderboard(evs, "sys0", n_resamples=50, n_permutations=50)
    assert not board["best"].any()
    assert (board["marker"] == "").all()
    grid = leaderboard_grid(board)
    text = " ".join(grid.astype(str).to_numpy().ravel())
    assert BEST not in text and not any(m in text for m in MARKERS.values())
    legend = leaderboard_legend(board)
    assert "correction" not in legend and "comparisons" not in legend and BEST not in legend
    assert "best" not in legend and "significant" not in legend
    assert "CI: 95% percentile bootstrap" in legend and "n = 12" in legend
    assert family_sentence(board) == ""


def test_two_runs_keep_best_and_the_correction_sentence():
    evs = _evaluations(2)
    board = leaderboard(evs, "sys0", n_resamples=50, n_permutations=50)
    assert board.groupby("measure")["best"].sum().ge(1).all()
    legend = leaderboard_legend(board)
    assert legend.startswith(BEST) and "Holm correction over the 2 comparisons" in legend
