"""The leaderboard draws its bootstrap resamples once for every measure, and computes only the
test it shows: the numbers equal the per-measure definitions."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest

from metrics_core.errors import InputError
from metrics_core.stats.bootstrap import bootstrap_mean_ci
from metrics_core.stats.comparison import TESTS, aligned_values, compare_runs, leaderboard

MEASURES = ["AP", "RR", "P@5", "nDCG@10"]


def _evaluations(n=60, runs=3, holes=True, seed=3):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"q{i:03d}" for i in range(n)], name="query_id")
    evs = []
    for j in range(runs):
        frame = pd.DataFrame(
            rng.random((n, len(MEASURES))) * (1 + 0.1 * j), index=idx, columns=MEASURES
        )
        if holes:  # a few NaN cells in one measure: its "common" query set differs from the others'
            frame.iloc[rng.choice(n, 4, replace=False), 2] = np.nan
        evs.append(NS(run_name=f"r{j}", per_query=frame))
    return evs


@pytest.mark.parametrize("query_set", ["common", "qrels"])
@pytest.mark.parametrize("holes", [False, True])
def test_leaderboard_intervals_equal_one_bootstrap_per_measure(query_set, holes):
    evs = _evaluations(holes=holes)
    names = [ev.run_name for ev in evs]
    board = leaderboard(
        evs, "r0", MEASURES, query_set=query_set, n_resamples=500, seed=11, n_permutations=200
    )
    for m in MEASURES:
        table = aligned_values(evs, m, query_set)
        values = table[names].to_numpy()
        mean, lo, hi = bootstrap_mean_ci(values, 500, 0.95, 11)  # the per-measure definition
        rows = board[board["measure"] == m].set_index("run").loc[names]
        np.testing.assert_allclose(rows["mean"], mean, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows["ci_lo"], lo, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows["ci_hi"], hi, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows["median"], np.median(values, axis=0), rtol=0, atol=0)
        assert (rows["n_queries"] == len(table)).all()
        assert ((rows["ci_lo"] <= rows["mean"]) & (rows["mean"] <= rows["ci_hi"])).all()


@pytest.mark.parametrize("test", TESTS)
def test_leaderboard_markers_equal_the_full_comparison(test):
    evs = _evaluations()
    full = compare_runs(evs, "r0", MEASURES, n_permutations=300, seed=5)
    board = leaderboard(evs, "r0", MEASURES, n_permutations=300, seed=5, n_resamples=200, test=test)
    given = leaderboard(
        evs, "r0", MEASURES, n_permutations=300, seed=5, n_resamples=200, test=test, comparison=full
    )
    pd.testing.assert_frame_equal(board, given)
    others = board[board["run"] != "r0"]
    assert others["p_corrected"].notna().all()


def test_compare_runs_subset_of_tests_and_no_interval():
    evs = _evaluations()
    full = compare_runs(evs, "r0", MEASURES, n_permutations=300, seed=5)
    part = compare_runs(
        evs, "r0", MEASURES, n_permutations=300, seed=5, tests=("permutation",), interval=False
    )
    for c in ("p_permutation", "p_corrected_permutation", "mean_delta", "n_queries", "effect_size"):
        np.testing.assert_array_equal(part[c].to_numpy(), full[c].to_numpy())
    for c in ("p_t", "p_wilcoxon", "p_corrected_t", "p_corrected_wilcoxon", "ci_lo", "ci_hi"):
        assert part[c].isna().all()
    assert all(not s["t"] and not s["wilcoxon"] for s in part["significant"])
    assert list(part["markers"]) == ["*" if s["permutation"] else "" for s in full["significant"]]
    with pytest.raises(InputError):
        compare_runs(evs, "r0", MEASURES, tests=("z",))


def test_importing_the_comparison_does_not_import_scipy_stats():
    import subprocess
    import sys

    code = (
        "import sys, metrics_core.stats.comparison as c, metrics_core.stats.significance; "
        "print('scipy.stats' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
