"""Bootstrap CIs: against a per-resample loop with the same draws, and against scipy."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics_core.errors import InputError
from metrics_core.stats.bootstrap import bootstrap_mean_ci, bootstrap_table


def _loop_reference(x, n_resamples, confidence, seed):
    """Brute force: one resample at a time, drawing exactly as the vectorised code does."""
    rng = np.random.default_rng(seed)
    n = len(x)
    idx = rng.integers(0, n, size=(n_resamples, n))
    means = np.array([[np.nanmean(x[row, j]) for j in range(x.shape[1])] for row in idx])
    a = 1 - confidence
    return x.mean(axis=0), np.quantile(means, a / 2, axis=0), np.quantile(means, 1 - a / 2, axis=0)


def test_matches_loop_reference_with_ties():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(37, 3)) / 3.0  # many tied values
    got = bootstrap_mean_ci(x, n_resamples=300, confidence=0.9, seed=11)
    ref = _loop_reference(x, 300, 0.9, 11)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(g, r, rtol=0, atol=1e-12)


def test_close_to_scipy_percentile_bootstrap():
    rng = np.random.default_rng(0)
    x = rng.beta(2, 5, size=60)
    _, low, high = bootstrap_mean_ci(x, n_resamples=20000, seed=1)
    res = stats.bootstrap(
        (x,), np.mean, n_resamples=20000, method="percentile", confidence_level=0.95, random_state=2
    )
    assert abs(low - res.confidence_interval.low) < 0.006
    assert abs(high - res.confidence_interval.high) < 0.006


def test_seeded_and_blocked_draws_are_reproducible(monkeypatch):
    x = np.linspace(0, 1, 25)
    a = bootstrap_mean_ci(x, n_resamples=500, seed=5)
    assert a == bootstrap_mean_ci(x, n_resamples=500, seed=5)
    # blocks of resamples (memory bound) draw the same numbers as one block
    import metrics_core.stats.bootstrap as mod

    monkeypatch.setattr(mod, "_BLOCK_CELLS", 25 * 7)
    assert a == bootstrap_mean_ci(x, n_resamples=500, seed=5)


def test_edge_cases():
    assert all(np.isnan(v) for v in bootstrap_mean_ci([], seed=0))
    assert bootstrap_mean_ci([0.3], seed=0) == (0.3, 0.3, 0.3)
    m, lo, hi = bootstrap_mean_ci([1.0, np.nan, 0.0, np.nan], n_resamples=2000, seed=0)
    assert m == 0.5 and 0.0 <= lo <= 0.5 <= hi <= 1.0
    with pytest.raises(InputError):
        bootstrap_mean_ci([1.0], confidence=1.5)
    with pytest.raises(InputError):
        bootstrap_mean_ci([1.0], n_resamples=0)


def test_table_columns_and_values():
    pq = pd.DataFrame(
        {"RR": [1.0, 0.5, 0.0, 0.25], "P@5": [0.2, 0.4, 0.0, 0.6]},
        index=pd.Index(list("abcd"), name="query_id"),
    )
    t = bootstrap_table(pq, n_resamples=400, seed=0)
    assert list(t.index) == ["RR", "P@5"]
    assert t.loc["RR", "mean"] == pytest.approx(0.4375)
    assert t.loc["P@5", "median"] == pytest.approx(0.3)
    assert (t["ci_low"] <= t["mean"]).all() and (t["mean"] <= t["ci_high"]).all()
    assert (t["queries"] == 4).all()
