"""Properties every binary-gate metric of the registry must have (one loop over the
registry, as scikit-learn's tests/test_common.py): its example, row-order invariance,
every accepted label type, NaN refused, the declared range on random data, the declared
best value, the parser's round trip, and equality with scikit-learn where it defines
the metric."""

import math
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from metrics_core.errors import InputError
from metrics_core.gates.registry import (
    GATE_METRICS,
    accepted_gate_names,
    gate_score,
    list_gate_metrics,
    parse_gate_metric,
)

METRICS = list(GATE_METRICS.values())
IDS = [m.name for m in METRICS]

#: parameter variants each metric is also checked with (names written by hand, so the
#: parser is exercised too)
VARIANTS = {
    "AUROC": ["AUROC", "AUROC(single_class=audit)"],
    "AUPRC": ["AUPRC", "auprc(single_class=audit)"],
    "TPR": ["TPR", "TPR@FPR=0.03", "tpr@0.1", "TPR(fpr=0.37)", "TPR@0", "TPR@1"],
    "ECE": ["ECE", "ECE(bins=15)", "ECE(bins=7,strategy=quantile)", "ECE(bins=1)", "ECE(strategy=audit)",
            "ECE(bins=13,strategy=audit)"],
    "dECE": ["dECE", "ece_debiased(bins=20)", "dECE(bins=5,strategy=quantile)"],
    "MCE": ["MCE", "MCE(bins=3)", "MCE(strategy=quantile)"],
    "Brier": ["Brier"],
    "EvidenceRecall": ["EvidenceRecall", "EvidenceRecall(tau=0.3,k_min=1)", "evidence_recall(conflict=k_min)"],
    "EvidencePrecision": ["EvidencePrecision", "EvidencePrecision(tau=0.7,hard_cap=3,k_max_ratio=1)"],
    "AvgK": ["AvgK", "AvgK(tau=0.2,k_min=0,hard_cap=4)"],
}
ALL_NAMES = [(m, name) for m in METRICS for name in VARIANTS[m.name]]
ALL_IDS = [name for _, name in ALL_NAMES]


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


def _score(name, y, s, q):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two classes: no warning expected
        return gate_score(name, y, s, query=q)


def test_registry_lists_every_metric_once_with_its_declaration():
    assert IDS == ["AUROC", "AUPRC", "TPR", "ECE", "dECE", "MCE", "Brier",
                   "EvidenceRecall", "EvidencePrecision", "AvgK"]
    assert [n for n, _ in list_gate_metrics()] == IDS
    for m in METRICS:
        assert m.better in ("higher", "lower") and m.formula and m.reference and m.edge_cases
        assert m.family in ("detection", "calibration", "dynamic_k")
        assert m.example is not None and m.compute.__doc__.count(">>>") >= 2
        assert m.name in accepted_gate_names()


@pytest.mark.parametrize("m", METRICS, ids=IDS)
def test_example_value(m):
    ex = m.example
    got = gate_score(ex.metric, list(ex.y_true), list(ex.y_score),
                     query=None if ex.query is None else list(ex.query))
    assert got == pytest.approx(ex.value, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("m,name", ALL_NAMES, ids=ALL_IDS)
def test_canonical_name_round_trip(m, name):
    spec = parse_gate_metric(name)
    assert spec.metric is m
    again = parse_gate_metric(spec.name)
    assert again.name == spec.name and again.kwargs() == spec.kwargs()
    assert parse_gate_metric(spec.name.lower()).name == spec.name


@pytest.mark.parametrize("m,name", ALL_NAMES, ids=ALL_IDS)
@pytest.mark.parametrize("seed", range(4))
def test_row_order_does_not_matter(m, name, seed):
    # dynamic K takes equal probabilities at its cut in input order (a declared edge
    # case): it is checked on tie-free data
    y, s, q = _data(seed, ties=not m.input_order_ties)
    base = _score(name, y, s, q)
    perm = np.random.default_rng(seed + 100).permutation(y.size)
    assert _score(name, y[perm], s[perm], q[perm]) == pytest.approx(base, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("m,name", ALL_NAMES, ids=ALL_IDS)
def test_every_label_type_gives_the_same_value(m, name):
    y, s, q = _data(7, n=120)
    base = _score(name, y, s, q)
    words = np.where(y == 1, "yes", "no")
    for labels in (y.astype(bool), y.astype(np.int8), y.astype(float), y.tolist(), words,
                   np.char.upper(words), np.where(y == 1, "true", "false").astype(object)):
        assert _score(name, labels, s, q) == base


@pytest.mark.parametrize("m,name", ALL_NAMES, ids=ALL_IDS)
def test_nan_and_bad_labels_are_refused(m, name):
    y, s, q = _data(3, n=40)
    bad_s = s.astype(float).copy()
    bad_s[5] = np.nan
    with pytest.raises(InputError, match="position 6: .*not a finite number|row 6: .*not a finite number"):
        gate_score(name, y, bad_s, query=q)
    bad_y = y.astype(float)
    bad_y[4] = np.nan
    with pytest.raises(InputError, match="not 0 or 1"):
        gate_score(name, bad_y, s, query=q)
    with pytest.raises(InputError, match="not 0 or 1"):
        gate_score(name, np.where(y == 1, 2, 0), s, query=q)
    with pytest.raises(InputError):
        gate_score(name, y[:-1], s, query=q)


@pytest.mark.parametrize("m", [m for m in METRICS if m.probabilities], ids=lambda m: m.name)
def test_probabilities_outside_the_unit_interval_are_refused(m):
    y, s, q = _data(4, n=30)
    for bad in (1.5, -0.01):
        p = s.copy()
        p[2] = bad
        with pytest.raises(InputError, match="outside \\[0, 1\\]"):
            gate_score(m.name, y, p, query=q)


@pytest.mark.parametrize("m", [m for m in METRICS if not m.probabilities], ids=lambda m: m.name)
def test_any_score_scale_is_accepted_untransformed(m):
    y, s, q = _data(5, n=200)
    assert _score(m.name, y, s * 1000 - 77, q) == _score(m.name, y, s, q)


@pytest.mark.parametrize("m,name", ALL_NAMES, ids=ALL_IDS)
@pytest.mark.parametrize("seed", range(12))
def test_declared_range_on_random_data(m, name, seed):
    y, s, q = _data(seed)
    value = _score(name, y, s, q)
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
    assert _score(m.name, y, perfect, q) == m.perfect
    noisy = _data(9, n=150)[1]
    worse = _score(m.name, y, noisy, q)
    assert (worse <= m.perfect) if m.better == "higher" else (worse >= m.perfect)


SKLEARN = {"roc_auc_score": skm.roc_auc_score, "average_precision_score": skm.average_precision_score,
           "brier_score_loss": skm.brier_score_loss}


@pytest.mark.parametrize("m", [m for m in METRICS if m.sklearn], ids=lambda m: m.name)
@pytest.mark.parametrize("seed", range(25))
def test_equals_scikit_learn_on_random_data_with_ties(m, seed):
    y, s, _ = _data(seed)
    assert gate_score(m.name, y, s) == pytest.approx(SKLEARN[m.sklearn](y, s), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name,audit", [("AUROC", 0.5), ("AUPRC", "rate")])
@pytest.mark.parametrize("y", [[1, 1, 1, 1], [0, 0, 0, 0]])
def test_the_one_class_rule_is_a_named_option(name, audit, y):
    s = [0.2, 0.5, 0.5, 0.9]
    with pytest.warns(UserWarning, match="only one class"):
        assert math.isnan(gate_score(name, y, s))
    want = float(np.mean(y)) if audit == "rate" else audit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gate_score(f"{name}(single_class=audit)", y, s) == want


@pytest.mark.parametrize("text,match", [
    ("AUROCX", "unknown gate metric"),
    ("AUROC(single_class=zero)", "single_class='zero' is not accepted"),
    ("AUROC(bins=3)", "unknown parameter 'bins'"),
    ("AUROC@0.05", "takes nothing after @"),
    ("TPR@FPR=1.5", "is not accepted"),
    ("TPR@TNR=0.1", "takes FPR=value"),
    ("TPR(fpr=0.1,fpr=0.2)", "given twice"),
    ("ECE(bins=0)", "is not accepted"),
    ("ECE(bins=2.5)", "whole number"),
    ("ECE(strategy=kmeans)", "accepts uniform, quantile"),
    ("EvidenceRecall(k_min=-1)", "at least 0"),
    ("EvidenceRecall(tau)", "not key=value"),
])
def test_bad_names_are_clear_errors(text, match):
    with pytest.raises(InputError, match=match):
        parse_gate_metric(text)


def test_dynamic_k_needs_the_queries():
    with pytest.raises(InputError, match="query of each row"):
        gate_score("AvgK", [1, 0], [0.5, 0.2])


def test_registry_agrees_with_the_library_functions():
    from metrics_core import calibration as cal
    from metrics_core import detection as det
    from metrics_core import dynamic_k as dk

    y, s, q = _data(11, n=250)
    assert gate_score("TPR@FPR=0.1", y, s) == det.tpr_at_fpr(y, s, 0.1)["tpr"]
    rep = cal.calibration_report(y, s, 15, "quantile")
    for key, name in (("ece", "ECE"), ("ece_debiased", "dECE"), ("mce", "MCE")):
        assert gate_score(f"{name}(bins=15,strategy=quantile)", y, s) == pytest.approx(rep[key], rel=1e-12)
    assert gate_score("Brier", y, s) == rep["brier"]
    r = dk.dynamic_k_scores(dk.prepare(q, s, y), 0.4, 1, 5, 0.8, conflict="k_min")
    params = "(tau=0.4,k_min=1,hard_cap=5,k_max_ratio=0.8,conflict=k_min)"
    assert [gate_score(n + params, y, s, query=q) for n in ("EvidenceRecall", "EvidencePrecision", "AvgK")] == \
        [r["recall"], r["precision"], r["avg_k"]]


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
    assert gate_score(f"ECE(bins={n_bins},strategy=audit)", y, p) == _spec_ece(p, y, n_bins)


def test_ece_audit_strategy_leaves_probability_one_out_of_the_bins():
    y, p = [0, 1, 0], [0.25, 0.75, 1.0]
    assert gate_score("ECE(bins=2)", y, p) == pytest.approx((0.25 + 2 * 0.375) / 3)
    assert gate_score("ECE(bins=2,strategy=audit)", y, p) == pytest.approx((0.25 + 0.25) / 3)
