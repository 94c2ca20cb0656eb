"""Calibration: bin edges (values exactly on edges, float32), ECE by hand and by brute
force, Brier against scikit-learn, Wilson against scipy."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from sklearn.metrics import brier_score_loss

from metrics_core import calibration as cal
from metrics_core.errors import InputError

# value, number of bins, expected bin index (equal width, [a, b), last bin closed)
EDGE_TABLE = [
    (0.0, 10, 0),
    (0.3, 10, 3),  # 0.3 == 3/10 exactly: opens bin [0.3, 0.4)
    (0.7, 10, 7),  # 0.7 == 7/10
    (1.0, 10, 9),  # p = 1.0 counts, in the last (closed) bin
    (0.1 + 0.2, 10, 3),  # 0.30000000000000004
    (np.nextafter(0.7, 0), 10, 6),  # just below 0.7
    (np.float32(0.3), 10, 3),  # 0.30000001192...: above 0.3
    (np.float32(0.7), 10, 6),  # 0.69999998807...: below 0.7, so bin [0.6, 0.7)
    (np.float32(1.0), 10, 9),
    (0.6, 5, 3),  # 3/5
    (1 / 3, 3, 1),
    (2 / 3, 3, 2),
    (np.float32(2 / 3), 3, 2),  # 0.6666666865...
    (0.5, 1, 0),
    (1.0, 1, 0),
]


@pytest.mark.parametrize("value,n_bins,expected", EDGE_TABLE)
def test_bin_edge_table(value, n_bins, expected):
    edges = cal.bin_edges([value], n_bins)
    assert cal.assign_bins(np.array([value]), edges)[0] == expected
    r = cal.reliability_bins([1], np.array([value]), n_bins)
    assert r["count"].tolist() == [1 if i == expected else 0 for i in range(n_bins)]


def test_edges_are_exact_divisions():
    for b in (3, 7, 10, 15, 100):
        edges = cal.bin_edges([0.5], b)
        assert edges.tolist() == [i / b for i in range(b + 1)]
    # np.linspace does not give i/B exactly; with it 0.3 would fall in bin 2
    assert np.linspace(0, 1, 11)[3] != 0.3 and cal.bin_edges([0], 10)[3] == 0.3


def test_ece_by_hand():
    # bins of width 0.25:
    # [0, .25): p .1 .2 -> conf .15, freq 0/2 -> gap .15, weight 2/8
    # [.25, .5): p .25 -> conf .25, freq 1 -> gap .75, weight 1/8
    # [.5, .75): empty
    # [.75, 1]: p .75 .8 .9 1.0 1.0 -> conf .89, freq 4/5 = .8 -> gap .09, weight 5/8
    y = [0, 0, 1, 1, 1, 0, 1, 1]
    p = [0.1, 0.2, 0.25, 0.75, 0.8, 0.9, 1.0, 1.0]
    r = cal.calibration_report(y, p, 4)
    assert r["bins"]["count"].tolist() == [2, 1, 0, 5]
    assert r["ece"] == pytest.approx(2 / 8 * 0.15 + 1 / 8 * 0.75 + 5 / 8 * 0.09, abs=1e-15)
    assert r["mce"] == pytest.approx(0.75)
    assert np.isnan(r["bins"]["confidence"][2]) and np.isnan(r["bins"]["frequency"][2])
    assert r["brier"] == pytest.approx(np.mean((np.array(p) - np.array(y)) ** 2))


def _brute_ece(y, p, edges):
    total, gaps = 0.0, []
    for i in range(len(edges) - 1):
        last = i == len(edges) - 2
        m = (p >= edges[i]) & ((p <= edges[i + 1]) if last else (p < edges[i + 1]))
        if m.sum():
            gap = abs(y[m].mean() - p[m].mean())
            total += m.sum() / len(p) * gap
            gaps.append(gap)
    return total, max(gaps)


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_brute_force_and_brier_sklearn(seed, strategy):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 500))
    p = np.round(rng.random(n), int(rng.integers(1, 4)))  # ties and values on edges
    p[0] = 1.0
    y = (rng.random(n) < p).astype(int)
    n_bins = int(rng.integers(1, 20))
    r = cal.calibration_report(y, p, n_bins, strategy)
    edges = (
        np.array([i / n_bins for i in range(n_bins + 1)])
        if strategy == "uniform"
        else np.unique(np.quantile(p, np.arange(n_bins + 1) / n_bins))
    )
    ece, mce = _brute_ece(y, p, edges)
    assert r["ece"] == pytest.approx(ece, rel=1e-12, abs=1e-15)
    assert r["mce"] == pytest.approx(mce, rel=1e-12, abs=1e-15)
    assert r["bins"]["count"].sum() == n
    assert r["brier"] == pytest.approx(brier_score_loss(y, p), rel=1e-12, abs=1e-15)
    assert cal.brier_score(y, p) == r["brier"]


def test_quantile_bins_equal_mass():
    p = np.arange(1, 101) / 100
    r = cal.reliability_bins(np.ones(100, int), p, 4, "quantile")
    assert r["count"].tolist() == [25, 25, 25, 25]
    assert r["lower"][0] == 0.01 and r["upper"][-1] == 1.0


def test_wilson_against_scipy():
    for k, n in [(0, 10), (3, 10), (10, 10), (57, 200), (1, 1)]:
        lo, hi = cal.wilson_interval(k, n)
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert float(lo) == pytest.approx(ci.low, abs=1e-12)
        assert float(hi) == pytest.approx(ci.high, abs=1e-12)
    lo, hi = cal.wilson_interval(0, 0)
    assert np.isnan(lo) and np.isnan(hi)


@pytest.mark.parametrize(
    "p,match",
    [
        ([0.5, 1.2], "outside"),
        ([-0.1, 0.5], "outside"),
        ([0.5, np.nan], "finite"),
        ([3.2, -1.0], "outside"),
    ],
)
def test_out_of_range_probabilities_rejected(p, match):
    with pytest.raises(InputError, match=match):
        cal.expected_calibration_error([0, 1], p)


def test_bad_bins():
    with pytest.raises(InputError, match="strategy"):
        cal.calibration_report([0, 1], [0.2, 0.8], 10, "kmeans")
    with pytest.raises(InputError, match="positive integer"):
        cal.calibration_report([0, 1], [0.2, 0.8], 0)


def test_bootstrap_calibration_reproducible():
    rng = np.random.default_rng(4)
    p = rng.random(300)
    y = (rng.random(300) < p**1.5).astype(int)
    a = cal.bootstrap_calibration_ci(y, p, 10, n_resamples=150, seed=1)
    b = cal.bootstrap_calibration_ci(y, p, 10, n_resamples=150, seed=1)
    assert a == b
    rep = cal.calibration_report(y, p, 10)
    for name in ("ece", "mce", "brier"):
        assert a[name]["value"] == pytest.approx(rep[name], rel=1e-12)
        assert a[name]["low"] <= a[name]["value"] <= a[name]["high"]
    assert a["brier"]["low"] < a["brier"]["high"]


# -- debiased ECE and BCa intervals ---------------------------------------------------


def test_debiased_ece_is_the_closed_form_of_the_sampled_bias_correction():
    """Kumar et al.'s sampled estimate (draw each bin's gap from N(g, s^2), average the
    ECE of the draws, subtract the excess) converges to the closed form."""
    from metrics_core.calibration import debiased_expected_calibration_error, reliability_bins

    rng = np.random.default_rng(3)
    p = rng.random(600)
    y = (rng.random(600) < p**1.3).astype(int)
    r = reliability_bins(y, p, 8)
    n, g = r["count"].astype(float), r["frequency"] - r["confidence"]
    sd = np.sqrt(r["frequency"] * (1 - r["frequency"]) / n)
    draws = g + sd * rng.standard_normal((400_000, g.size))
    plug_in = np.sum(n * np.abs(g)) / n.sum()
    sampled = 2 * plug_in - np.mean(np.abs(draws) @ n) / n.sum()
    assert debiased_expected_calibration_error(y, p, 8) == pytest.approx(sampled, abs=2e-4)
    assert cal.calibration_report(y, p, 8)["ece_debiased"] == pytest.approx(
        debiased_expected_calibration_error(y, p, 8), rel=1e-12
    )


def test_debiased_ece_is_nearer_the_truth_for_calibrated_scores():
    """Perfectly calibrated scores (y ~ Bernoulli(p)): the true ECE is 0; with 50 small
    bins the plug-in ECE is far above it, the debiased one markedly nearer. (At a true
    gap of 0 the correction is first order only: a bin's expected value goes from
    0.80 s to about 0.47 s, s its standard error.)"""
    from metrics_core.calibration import debiased_expected_calibration_error

    plug, deb = [], []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        p = rng.random(2000)
        y = (rng.random(2000) < p).astype(int)
        plug.append(cal.expected_calibration_error(y, p, 50, "quantile"))
        deb.append(debiased_expected_calibration_error(y, p, 50, "quantile"))
    assert np.mean(plug) > 0.04
    assert 0 < np.mean(deb) < 0.65 * np.mean(plug)


def test_bca_interval_formula_and_containment():
    from scipy.stats import norm

    from metrics_core.stats.bootstrap import bca_interval

    rng = np.random.default_rng(0)
    reps = rng.normal(1.0, 0.1, 5000)
    est = 0.95  # the replicates sit mostly above the estimate (biased upward under resampling)
    pct = np.quantile(reps, [0.025, 0.975])
    r = bca_interval(reps, est)
    z0 = norm.ppf(np.mean(reps < est))
    want = np.quantile(reps, norm.cdf(2 * z0 + norm.ppf([0.025, 0.975])))
    assert r["method"] == "BC" and r["z0"] == pytest.approx(z0)
    assert (r["low"], r["high"]) == pytest.approx(tuple(want))
    assert r["low"] < pct[0] and r["contains"]
    # acceleration from the jackknife: BCa
    jk = rng.normal(0, 1, 50) ** 3
    d = jk.mean() - jk
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    rb = bca_interval(reps, est, jackknife=jk)
    z = norm.ppf([0.025, 0.975])
    want = np.quantile(reps, norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    assert rb["method"] == "BCa" and rb["acceleration"] == pytest.approx(a)
    assert (rb["low"], rb["high"]) == pytest.approx(tuple(want))


def test_calibration_intervals_contain_their_estimate_or_are_withheld():
    """The bug this fixes: 50 equal-mass bins gave ECE 0.0503 with a percentile "CI"
    [0.0506, 0.0708] that excluded it."""
    scores = pd.read_csv(
        Path(__file__).resolve().parents[1] / "sample_data" / "detection_scores.csv"
    )
    y, p = scores["label"].to_numpy(), scores["score"].to_numpy()
    for n_bins, strategy in ((10, "uniform"), (15, "uniform"), (50, "quantile"), (20, "quantile")):
        ci = cal.bootstrap_calibration_ci(y, p, n_bins, strategy, n_resamples=200, seed=0)
        assert set(ci) == {"ece", "ece_debiased", "mce", "brier"}
        for c in ci.values():
            assert c["method"] == "BCa"
            if c["reliable"]:
                assert c["low"] <= c["value"] <= c["high"] and abs(c["z0"]) <= 1.0
            else:
                assert np.isnan(c["low"]) and np.isnan(c["high"])
    ci50 = cal.bootstrap_calibration_ci(y, p, 50, "quantile", n_resamples=200, seed=0)
    assert not ci50["ece"]["reliable"]  # no misleading interval
    assert ci50["brier"]["reliable"]


def test_jackknife_from_bin_sums_equals_leaving_each_item_out():
    from metrics_core.calibration import (
        assign_bins,
        bin_edges,
        debiased_expected_calibration_error,
        jackknife_statistics,
    )

    rng = np.random.default_rng(5)
    p = rng.random(40)
    y = (rng.random(40) < p).astype(int)
    edges = bin_edges(p, 4)
    jk = jackknife_statistics(assign_bins(p, edges), p, y.astype(float), edges.size - 1)
    for i in (0, 7, 39):
        keep = np.arange(40) != i
        yy, pp = y[keep], p[keep]
        assert jk[0, i] == pytest.approx(cal.expected_calibration_error(yy, pp, 4), rel=1e-12)
        assert jk[1, i] == pytest.approx(debiased_expected_calibration_error(yy, pp, 4), rel=1e-9)
        assert jk[2, i] == pytest.approx(cal.maximum_calibration_error(yy, pp, 4), rel=1e-12)
        assert jk[3, i] == pytest.approx(cal.brier_score(yy, pp), rel=1e-12)
