"""Calibration: bin edges (values exactly on edges, float32), ECE by hand and by brute
force, Brier against scikit-learn, Wilson against scipy."""

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import brier_score_loss

from metrics_core import calibration as cal
from metrics_core.errors import InputError

# value, number of bins, expected bin index (equal width, [a, b), last bin closed)
EDGE_TABLE = [
    (0.0, 10, 0),
    (0.3, 10, 3),                  # 0.3 == 3/10 exactly: opens bin [0.3, 0.4)
    (0.7, 10, 7),                  # 0.7 == 7/10
    (1.0, 10, 9),                  # p = 1.0 counts, in the last (closed) bin
    (0.1 + 0.2, 10, 3),            # 0.30000000000000004
    (np.nextafter(0.7, 0), 10, 6),  # just below 0.7
    (np.float32(0.3), 10, 3),      # 0.30000001192...: above 0.3
    (np.float32(0.7), 10, 6),      # 0.69999998807...: below 0.7, so bin [0.6, 0.7)
    (np.float32(1.0), 10, 9),
    (0.6, 5, 3),                   # 3/5
    (1 / 3, 3, 1),
    (2 / 3, 3, 2),
    (np.float32(2 / 3), 3, 2),     # 0.6666666865...
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
    edges = (np.array([i / n_bins for i in range(n_bins + 1)]) if strategy == "uniform"
             else np.unique(np.quantile(p, np.arange(n_bins + 1) / n_bins)))
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


@pytest.mark.parametrize("p,match", [([0.5, 1.2], "outside"), ([-0.1, 0.5], "outside"),
                                     ([0.5, np.nan], "finite"), ([3.2, -1.0], "outside")])
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
    y = (rng.random(300) < p ** 1.5).astype(int)
    a = cal.bootstrap_calibration_ci(y, p, 10, n_boot=150, seed=1)
    b = cal.bootstrap_calibration_ci(y, p, 10, n_boot=150, seed=1)
    assert a == b
    rep = cal.calibration_report(y, p, 10)
    for name in ("ece", "mce", "brier"):
        assert a[name]["value"] == pytest.approx(rep[name], rel=1e-12)
        assert a[name]["low"] <= a[name]["value"] <= a[name]["high"]
    assert a["brier"]["low"] < a["brier"]["high"]
