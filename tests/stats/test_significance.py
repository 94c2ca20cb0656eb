"""Paired tests vs scipy, permutation reproducibility, corrections vs hand references."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics_core.errors import InputError
from metrics_core.stats import significance as sig


def _pairs_with_ties(seed, n):
    """Discrete per-query values (like P@5): many ties and zero differences."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 6, n) / 5.0
    run = np.clip(base + rng.integers(-2, 3, n) / 5.0, 0, 1)
    return base, run


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n", [5, 12, 30, 60])
def test_t_and_wilcoxon_equal_scipy(seed, n):
    base, run = _pairs_with_ties(seed, n)
    d = run - base
    if np.all(d == 0):
        pytest.skip("all-zero draw")
    assert sig.paired_t_test(base, run) == pytest.approx(
        stats.ttest_rel(run, base).pvalue, rel=1e-12
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = stats.wilcoxon(d, zero_method="wilcox").pvalue
    assert sig.wilcoxon_test(base, run) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", [8, 40, 70])
def test_continuous_values_equal_scipy(n):
    rng = np.random.default_rng(n)
    base, run = rng.random(n), rng.random(n) + 0.1
    assert sig.paired_t_test(base, run) == pytest.approx(stats.ttest_rel(run, base).pvalue)
    assert sig.wilcoxon_test(base, run) == pytest.approx(stats.wilcoxon(run - base).pvalue)


def test_edge_cases():
    same = np.array([0.2, 0.5, 0.5])
    for f in (sig.paired_t_test, sig.wilcoxon_test, sig.permutation_test):
        assert f(same, same) == 1.0
        assert math.isnan(f([0.1], [0.2]))
        assert math.isnan(f([], []))
    assert sig.effect_size(same, same) == 0.0
    assert math.isnan(sig.effect_size([0.1, 0.2], [0.2, 0.3]))  # constant non-zero difference
    assert np.isnan(sig.bootstrap_ci([0.1], [0.3])).all()
    with pytest.raises(InputError):
        sig.paired_t_test([0.1, 0.2], [0.1])
    with pytest.raises(InputError):
        sig.correct_pvalues([0.1], "sidak")


def test_permutation_same_seed_same_p_and_batch_independent():
    base, run = _pairs_with_ties(1, 50)
    p1 = sig.permutation_test(base, run, 3000, seed=11)
    p2 = sig.permutation_test(base, run, 3000, seed=11)
    assert p1 == p2
    assert sig.permutation_test(base, run, 3000, seed=12) != p1 or p1 == 1.0
    # Column 0 of a batch gets the same p as the single call.
    other_base, other_run = _pairs_with_ties(2, 50)
    batch = sig.permutation_test(
        np.column_stack([base, other_base]), np.column_stack([run, other_run]), 3000, seed=11
    )
    assert batch[0] == p1
    assert batch[1] == sig.permutation_test(other_base, other_run, 3000, seed=11)
    # p = (b + 1) / (N + 1): a multiple of 1/(N+1)
    assert (p1 * 3001) == pytest.approx(round(p1 * 3001))


def _exact_sign_flip_p(d):
    """Brute force over all 2^n sign vectors: P(|mean(s d)| >= |mean(d)|)."""
    obs = abs(d.sum())
    hits = sum(abs(np.dot(s, d)) >= obs - 1e-12 for s in itertools.product((-1, 1), repeat=len(d)))
    return hits / 2 ** len(d)


@pytest.mark.parametrize("seed", range(4))
def test_permutation_close_to_exact_and_scipy(seed):
    base, run = _pairs_with_ties(seed + 10, 9)
    # Integer values (P@5 counts) keep every permuted sum exact, so scipy's own float
    # tolerance cannot split ties of |mean| differently from ours.
    base, run = base * 5, run * 5
    d = run - base
    if np.all(d == 0):
        pytest.skip("all-zero draw")
    exact = _exact_sign_flip_p(d)
    scipy_exact = stats.permutation_test(
        (run, base),
        lambda x, y, axis: np.abs(np.mean(x - y, axis=axis)),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10**6,
        alternative="greater",
    ).pvalue
    assert scipy_exact == pytest.approx(exact, abs=1e-12)
    n_perm = 20000
    ours = sig.permutation_test(base, run, n_perm, seed=seed)
    # Monte Carlo error: 5 standard errors of a binomial proportion
    assert abs(ours - exact) <= 5 * math.sqrt(exact * (1 - exact) / n_perm) + 2 / n_perm


def test_permutation_detects_real_difference():
    rng = np.random.default_rng(0)
    base = rng.random(200)
    assert sig.permutation_test(
        base, base + 0.05 + rng.normal(0, 0.05, 200), 2000
    ) == pytest.approx(1 / 2001)


def test_bootstrap_ci_reference_and_reproducible():
    rng = np.random.default_rng(5)
    base, run = rng.random(30), rng.random(30)
    ci = sig.bootstrap_ci(base, run, 0.9, 4000, seed=3)
    assert np.array_equal(ci, sig.bootstrap_ci(base, run, 0.9, 4000, seed=3))
    assert ci[0] < (run - base).mean() < ci[1]
    # Reference: scipy's percentile bootstrap of the mean difference agrees within MC error.
    ref = stats.bootstrap(
        ((run - base),),
        np.mean,
        confidence_level=0.9,
        n_resamples=20000,
        method="percentile",
        rng=np.random.default_rng(0),
    ).confidence_interval
    assert ci[0] == pytest.approx(ref.low, abs=0.02)
    assert ci[1] == pytest.approx(ref.high, abs=0.02)
    # Brute force with the same counts: every resample's mean lies within [min d, max d]
    d = run - base
    assert d.min() <= ci[0] <= ci[1] <= d.max()


def test_effect_size_and_win_tie_loss():
    base = np.array([0.1, 0.5, 0.3, 0.2, 0.0])
    run = np.array([0.4, 0.5, 0.1, 0.2 + 1e-13, 0.9])
    d = run - base
    assert sig.effect_size(base, run) == pytest.approx(d.mean() / d.std(ddof=1))
    assert sig.win_tie_loss(base, run) == (2, 2, 1)


def _holm_reference(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh_reference(p):
    m = len(p)
    out = []
    for i in range(m):
        # adjusted p_i = min over j with p_j >= p_i of m p_j / rank(p_j)
        cands = []
        for j in range(m):
            if p[j] >= p[i]:
                rank_j = sum(1 for k in range(m) if p[k] < p[j] or (p[k] == p[j] and k <= j))
                cands.append(m * p[j] / rank_j)
        out.append(min(1.0, min(cands)))
    return out


def test_corrections_hand_examples():
    p = [0.01, 0.04, 0.03, 0.005]
    assert sig.correct_pvalues(p, "bonferroni").tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert sig.correct_pvalues(p, "holm").tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert sig.correct_pvalues(p, "bh").tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert sig.correct_pvalues(p, "none").tolist() == p
    with_nan = sig.correct_pvalues([0.01, np.nan, 0.02], "bonferroni")
    assert np.isnan(with_nan[1]) and with_nan[0] == pytest.approx(0.02)


@pytest.mark.parametrize("seed", range(5))
def test_corrections_vs_references_and_scipy(seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(25) ** 3, 3)  # rounding makes ties
    assert sig.correct_pvalues(p, "holm") == pytest.approx(_holm_reference(list(p)))
    assert sig.correct_pvalues(p, "bh") == pytest.approx(_bh_reference(list(p)))
    assert sig.correct_pvalues(p, "bh") == pytest.approx(
        stats.false_discovery_control(p, method="bh")
    )
    assert sig.correct_pvalues(p, "bonferroni") == pytest.approx(np.minimum(1, p * 25))


def test_paired_values_common_set():
    b = pd.Series([0.1, 0.2, np.nan, 0.4], index=["q1", "q2", "q3", "q4"])
    r = pd.Series([0.5, 0.6, 0.7], index=["q4", "q3", "q1"])
    base, run, common = sig.paired_values(b, r)
    assert list(common) == ["q1", "q4"]
    assert base.tolist() == [0.1, 0.4] and run.tolist() == [0.7, 0.5]
