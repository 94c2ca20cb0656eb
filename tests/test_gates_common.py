"""Properties every binary-gate metric of the library must have (one loop over the
metrics, as scikit-learn's tests/test_common.py): its worked example, row-order
invariance, every accepted label type, NaN refused, the declared range on random data,
the declared best value, and equality with scikit-learn where it defines the metric.

The metrics are the public functions of :mod:`metrics_core.detection`,
:mod:`metrics_core.calibration` and :mod:`metrics_core.dynamic_k`, called as the
command line and the app call them; the table below states, for each, what the
properties need (range, direction, best value, probabilities or any score scale)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pytest
from sklearn import metrics as skm

from metrics_core import calibration as cal
from metrics_core import detection as det
from metrics_core import dynamic_k as dk
from metrics_core.errors import InputError


def _tpr(y, s, q, fpr=0.05):
    return det.tpr_at_fpr(y, s, fpr)["tpr"]


def _dk(key, y, s, q, conflict="k_max", **params):
    settings = {**dk.DEFAULTS, **params}
    return dk.dynamic_k_scores(
        dk.prepare(q, s, y),
        settings["tau"],
        settings["k_min"],
        settings["hard_cap"],
        settings["k_max_ratio"],
        conflict=conflict,
    )[key]


def _ignore_query(fn):
    return lambda y, s, q, **kw: fn(y, s, **kw)


@dataclass(frozen=True)
class Metric:
    """A gate metric as a function ``(y_true, y_score, query, **params) -> float`` and what
    the properties below need of it."""

    name: str
    compute: object
    family: str
    example: tuple  # (labels, scores, query or None, params, value)
    value_range: tuple = (0.0, 1.0)
    better: str = "higher"
    perfect: float | None = None
    probabilities: bool = False
    input_order_ties: bool = False  # equal scores taken in input order (dynamic K's cut)
    sklearn: str | None = None
    variants: tuple = field(default=({},))


_Y, _S = (1, 0, 1, 0, 1, 0), (0.9, 0.8, 0.7, 0.3, 0.3, 0.1)
_P = (0.8, 0.35, 0.6, 0.2, 0.9, 0.45)
_Q = ("a", "a", "a", "b", "b", "b")
_DK_EXAMPLE = {"tau": 0.4, "k_min": 1, "k_max_ratio": 1}

METRICS = [
    Metric(
        "AUROC",
        _ignore_query(det.roc_auc_score),
        "detection",
        (_Y, _S, None, {}, 6.5 / 9),
        perfect=1.0,
        sklearn="roc_auc_score",
        variants=({}, {"single_class": "audit"}),
    ),
    Metric(
        "AUPRC",
        _ignore_query(det.average_precision_score),
        "detection",
        (_Y, _S, None, {}, 0.7555555555555555),
        perfect=1.0,
        sklearn="average_precision_score",
        variants=({}, {"single_class": "audit"}),
    ),
    Metric(
        "TPR",
        _tpr,
        "detection",
        (_Y, _S, None, {"fpr": 0.34}, 2 / 3),
        perfect=1.0,
        variants=({}, {"fpr": 0.03}, {"fpr": 0.1}, {"fpr": 0.37}, {"fpr": 0}, {"fpr": 1}),
    ),
    Metric(
        "ECE",
        _ignore_query(cal.expected_calibration_error),
        "calibration",
        (_Y, _P, None, {"n_bins": 2}, 0.2833333333333334),
        better="lower",
        perfect=0.0,
        probabilities=True,
        variants=({}, {"n_bins": 15}, {"n_bins": 7, "strategy": "quantile"}, {"n_bins": 1}),
    ),
    Metric(
        "ECE(audit bins)",
        _ignore_query(cal.audit_ece),
        "calibration",
        (_Y, _P, None, {"n_bins": 2}, 0.2833333333333334),
        better="lower",
        perfect=0.0,
        probabilities=True,
        variants=({}, {"n_bins": 13}),
    ),
    Metric(
        "dECE",
        _ignore_query(cal.debiased_expected_calibration_error),
        "calibration",
        (_Y, _P, None, {"n_bins": 1}, -0.06772924476022307),
        value_range=(-0.4, 1.0),
        better="lower",
        perfect=0.0,
        probabilities=True,
        variants=({}, {"n_bins": 20}, {"n_bins": 5, "strategy": "quantile"}),
    ),
    Metric(
        "MCE",
        _ignore_query(cal.maximum_calibration_error),
        "calibration",
        (_Y, _P, None, {"n_bins": 2}, 1 / 3),
        better="lower",
        perfect=0.0,
        probabilities=True,
        variants=({}, {"n_bins": 3}, {"strategy": "quantile"}),
    ),
    Metric(
        "Brier",
        _ignore_query(cal.brier_score),
        "calibration",
        (_Y, _P, None, {}, 0.09583333333333334),
        better="lower",
        perfect=0.0,
        probabilities=True,
        sklearn="brier_score_loss",
    ),
    Metric(
        "EvidenceRecall",
        partial(_dk, "recall"),
        "dynamic_k",
        (_Y, _P, _Q, _DK_EXAMPLE, 1.0),
        probabilities=True,
        input_order_ties=True,
        variants=({}, {"tau": 0.3, "k_min": 1}, {"conflict": "k_min"}),
    ),
    Metric(
        "EvidencePrecision",
        partial(_dk, "precision"),
        "dynamic_k",
        (_Y, _P, _Q, _DK_EXAMPLE, 0.75),
        probabilities=True,
        input_order_ties=True,
        variants=({}, {"tau": 0.7, "hard_cap": 3, "k_max_ratio": 1}),
    ),
    Metric(
        "AvgK",
        partial(_dk, "avg_k"),
        "dynamic_k",
        (_Y, _P, _Q, _DK_EXAMPLE, 2.0),
        value_range=(0.0, None),
        better="lower",
        probabilities=True,
        input_order_ties=True,
        variants=({}, {"tau": 0.2, "k_min": 0, "hard_cap": 4}),
    ),
]
IDS = [m.name for m in METRICS]
ALL_NAMES = [(m, params) for m in METRICS for params in m.variants]
ALL_IDS = [
    m.name + (f"({','.join(f'{k}={v}' for k, v in p.items())})" if p else "") for m, p in ALL_NAMES
]


def _data(seed, n=None, ties=True):
    """Labels with both classes, probabilities in [0, 1] (rounded to 2 decimals: many
    ties) that lean towards the labels, and query ids for dynamic K."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(8, 300))
    y = rng.integers(0, 2, n)
    y[0], y[-1] = 0, 1
    p = np.clip(0.35 * y + 0.65 * rng.random(n), 0, 1)
    p = np.round(p, 2) if ties else p + rng.random(n) * 1e-9
    q = rng.choice([f"q{i}" for i in range(7)], n)
    return y, np.clip(p, 0, 1), q


def _score(m, params, y, s, q):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two classes: no warning expected
        return float(m.compute(y, s, q, **params))


@pytest.mark.parametrize("m", METRICS, ids=IDS)
def test_example_value(m):
    y, s, q, params, value = m.example
    got = m.compute(list(y), list(s), None if q is None else list(q), **params)
    assert got == pytest.approx(value, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("m,params", ALL_NAMES, ids=ALL_IDS)
@pytest.mark.parametrize("seed", range(4))
def test_row_order_does_not_matter(m, params, seed):
    # dynamic K takes equal probabilities at its cut in input order (a declared edge
    # case): it is checked on tie-free data
    y, s, q = _data(seed, ties=not m.input_order_ties)
    base = _score(m, params, y, s, q)
    perm = np.random.default_rng(seed + 100).permutation(y.size)
    assert _score(m, params, y[perm], s[perm], q[perm]) == pytest.approx(base, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("m,params", ALL_NAMES, ids=ALL_IDS)
def test_every_label_type_gives_the_same_value(m, params):
    y, s, q = _data(7, n=120)
    base = _score(m, params, y, s, q)
    words = np.where(y == 1, "yes", "no")
    for labels in (
        y.astype(bool),
        y.astype(np.int8),
        y.astype(float),
        y.tolist(),
        words,
        np.char.upper(words),
        np.where(y == 1, "true", "false").astype(object),
    ):
        assert _score(m, params, labels, s, q) == base


@pytest.mark.parametrize("m,params", ALL_NAMES, ids=ALL_IDS)
def test_nan_and_bad_labels_are_refused(m, params):
    y, s, q = _data(3, n=40)
    bad_s = s.astype(float).copy()
    bad_s[5] = np.nan
    with pytest.raises(
        InputError, match="position 6: .*not a finite number|row 6: .*not a finite number"
    ):
        m.compute(y, bad_s, q, **params)
    bad_y = y.astype(float)
    bad_y[4] = np.nan
    with pytest.raises(InputError, match="not 0 or 1"):
        m.compute(bad_y, s, q, **params)
    with pytest.raises(InputError, match="not 0 or 1"):
        m.compute(np.where(y == 1, 2, 0), s, q, **params)
    with pytest.raises(InputError):
        m.compute(y[:-1], s, q, **params)


@pytest.mark.parametrize("m", [m for m in METRICS if m.probabilities], ids=lambda m: m.name)
def test_probabilities_outside_the_unit_interval_are_refused(m):
    y, s, q = _data(4, n=30)
    for bad in (1.5, -0.01):
        p = s.copy()
        p[2] = bad
        with pytest.raises(InputError, match="outside \\[0, 1\\]"):
            m.compute(y, p, q)


@pytest.mark.parametrize("m", [m for m in METRICS if not m.probabilities], ids=lambda m: m.name)
def test_any_score_scale_is_accepted_untransformed(m):
    y, s, q = _data(5, n=200)
    assert _score(m, {}, y, s * 1000 - 77, q) == _score(m, {}, y, s, q)


@pytest.mark.parametrize("m,params", ALL_NAMES, ids=ALL_IDS)
@pytest.mark.parametrize("seed", range(12))
def test_declared_range_on_random_data(m, params, seed):
    y, s, q = _data(seed)
    value = _score(m, params, y, s, q)
    low, high = m.value_range
    assert not math.isnan(value)
    assert value >= low and (high is None or value <= high), value


@pytest.mark.parametrize("m", [m for m in METRICS if m.perfect is not None], ids=lambda m: m.name)
def test_a_perfect_predictor_scores_the_best_end_of_the_range(m):
    y, _, q = _data(9, n=150)
    best = m.value_range[1] if m.better == "higher" else m.value_range[0]
    if m.better == "lower" and m.value_range[0] < 0:  # debiased ECE may dip below 0
        best = 0.0
    assert m.perfect == best
    perfect = y.astype(float)  # probabilities equal to the labels separate them too
    assert _score(m, {}, y, perfect, q) == m.perfect
    noisy = _data(9, n=150)[1]
    worse = _score(m, {}, y, noisy, q)
    assert (worse <= m.perfect) if m.better == "higher" else (worse >= m.perfect)


SKLEARN = {
    "roc_auc_score": skm.roc_auc_score,
    "average_precision_score": skm.average_precision_score,
    "brier_score_loss": skm.brier_score_loss,
}


@pytest.mark.parametrize("m", [m for m in METRICS if m.sklearn], ids=lambda m: m.name)
@pytest.mark.parametrize("seed", range(25))
def test_equals_scikit_learn_on_random_data_with_ties(m, seed):
    y, s, _ = _data(seed)
    assert m.compute(y, s, None) == pytest.approx(SKLEARN[m.sklearn](y, s), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    "fn,audit", [(det.roc_auc_score, 0.5), (det.average_precision_score, "rate")]
)
@pytest.mark.parametrize("y", [[1, 1, 1, 1], [0, 0, 0, 0]])
def test_the_one_class_rule_is_a_named_option(fn, audit, y):
    s = [0.2, 0.5, 0.5, 0.9]
    with pytest.warns(UserWarning, match="only one class"):
        assert math.isnan(fn(y, s))
    want = float(np.mean(y)) if audit == "rate" else audit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fn(y, s, single_class="audit") == want


def _spec_ece(probs, labels, n_bins=10):
    """The audit specification's ECE, step by step as it states it (the reference)."""
    bin_edges = np.linspace(0, 1, n_bins + 1)
    ece = 0.0
    for i in range(n_bins):
        mask = (probs >= bin_edges[i]) & (probs < bin_edges[i + 1])
        if mask.sum() == 0:
            continue
        ece += mask.sum() / len(probs) * abs(labels[mask].mean() - probs[mask].mean())
    return float(ece)


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("n_bins", [1, 3, 10, 15])
def test_ece_audit_strategy_is_the_audit_specification_bit_for_bit(seed, n_bins):
    y, p, _ = _data(seed)
    p[:3] = [1.0, 0.3, 0.7]  # the edges: 1.0 is in no audit bin
    assert cal.audit_ece(y, p, n_bins) == _spec_ece(p, y, n_bins)


def test_ece_audit_strategy_leaves_probability_one_out_of_the_bins():
    y, p = [0, 1, 0], [0.25, 0.75, 1.0]
    assert cal.expected_calibration_error(y, p, 2) == pytest.approx((0.25 + 2 * 0.375) / 3)
    assert cal.audit_ece(y, p, 2) == pytest.approx((0.25 + 0.25) / 3)
