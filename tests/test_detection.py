"""Detection metrics against scikit-learn on random data with ties, and by hand."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn import metrics as skm

from metrics_core import detection as det
from metrics_core.errors import InputError
from metrics_core.gates import counts


def _random_case(seed, n=None, levels=None):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(2, 400))
    y = rng.integers(0, 2, n)
    y[0], y[-1] = 0, 1  # both classes
    levels = levels or int(rng.choice([3, 10, 50, 1000]))
    s = rng.integers(0, levels, n) / levels + 0.3 * y * rng.random(n)
    return y, np.round(s, 2)  # rounding makes many ties


@pytest.mark.parametrize("seed", range(40))
def test_against_sklearn_with_ties(seed):
    y, s = _random_case(seed)
    assert det.roc_auc_score(y, s) == pytest.approx(skm.roc_auc_score(y, s), rel=1e-12, abs=1e-15)
    assert det.average_precision_score(y, s) == pytest.approx(
        skm.average_precision_score(y, s), rel=1e-12, abs=1e-15
    )
    fpr, tpr, thr = det.roc_curve(y, s)
    sfpr, stpr, sthr = skm.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_array_equal(thr, sthr)
    np.testing.assert_allclose(fpr, sfpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(tpr, stpr, rtol=0, atol=1e-15)
    p, r, t = det.precision_recall_curve(y, s)
    sp, sr, st = skm.precision_recall_curve(y, s, drop_intermediate=False)
    # sklearn: ascending thresholds, a final (p=1, r=0) point without threshold
    np.testing.assert_array_equal(t[1:], st[::-1])
    np.testing.assert_allclose(p, sp[::-1], atol=1e-15)
    np.testing.assert_allclose(r, sr[::-1], atol=1e-15)


def _brute_force_auc(y, s):
    pos, neg = s[y == 1], s[y == 0]
    diff = pos[:, None] - neg[None, :]
    return ((diff > 0).sum() + 0.5 * (diff == 0).sum()) / (pos.size * neg.size)


def test_auroc_is_mann_whitney_with_half_ties():
    for seed in range(10):
        y, s = _random_case(seed, n=300, levels=5)
        assert det.roc_auc_score(y, s) == pytest.approx(_brute_force_auc(y, s), rel=1e-13)
    assert det.roc_auc_score([1, 0, 1, 0], [1, 1, 1, 1]) == 0.5


def test_seed_002_checksum():
    assert det.roc_auc_score(np.array([1, 1, 0, 0, 1]), np.array([0.9, 0.7, 0.4, 0.2, 0.8])) == 1.0


def test_any_score_scale_untransformed():
    y, s = _random_case(3)
    base = det.roc_auc_score(y, s)
    assert det.roc_auc_score(y, s * 1000 - 77) == base  # logits, any scale
    assert det.roc_auc_score(y, -s) == pytest.approx(1 - base)
    thr = det.roc_curve(y, s * 1000 - 77)[2]
    np.testing.assert_allclose(thr[1:], np.unique(s * 1000 - 77)[::-1])


def test_first_point_predicts_nothing():
    fpr, tpr, thr = det.roc_curve([0, 1, 1], [0.2, 0.9, 0.9])
    assert thr[0] == np.inf and fpr[0] == 0 and tpr[0] == 0
    assert fpr.tolist() == [0, 0, 1] and tpr.tolist() == [0, 1, 1]


# ---------------------------------------------------------------- TPR@FPR by hand


def test_allowed_count_exact():
    assert det.allowed_count(0.07, 100) == 7
    assert det.allowed_count(0.29, 100) == 29  # float: 0.29*100 = 28.999999999999996
    assert math.floor(0.29 * 100) == 28
    assert det.allowed_count(0.05, 59) == 2  # 2.95
    assert det.allowed_count(0.05, 60) == 3  # exactly 3
    assert det.allowed_count(0.1, 9) == 0
    assert det.allowed_count(0.03, 1000) == 30
    assert det.allowed_count("0.05", 40) == 2
    assert det.allowed_count(Fraction(1, 3), 9) == 3
    assert det.allowed_count(1, 17) == 17 and det.allowed_count(0, 17) == 0


def test_tpr_at_fpr_hand_20_negatives():
    # scores descending: P N P N P N ... so the i-th negative comes after i positives.
    n_neg = 20
    y = np.array([1, 0] * 10 + [0] * 10)
    s = np.arange(y.size, 0, -1, dtype=float)
    # target 0.05 -> k = floor(0.05*20) = 1 false positive allowed: TP=2 (P N P | N)
    r = det.tpr_at_fpr(y, s, 0.05)
    assert (r["allowed_fp"], r["tp"], r["fp"]) == (1, 2, 1)
    assert r["tpr"] == 0.2 and r["fpr"] == 1 / n_neg and r["threshold"] == s[2]
    assert r["next"] == {"tpr": 0.2, "fpr": 2 / 20, "threshold": s[3]}
    # target 0.03 -> k = 0: only the positive before the first negative
    r = det.tpr_at_fpr(y, s, 0.03)
    assert (r["allowed_fp"], r["tp"], r["fp"], r["threshold"]) == (0, 1, 0, s[0])
    # target 0.1 -> k = 2
    r = det.tpr_at_fpr(y, s, 0.10)
    assert (r["allowed_fp"], r["tp"], r["fp"]) == (2, 3, 2)


def test_tpr_at_fpr_boundary_floor_edge():
    # 100 negatives, target 0.07: exactly 7 false positives allowed, not 6
    y = np.r_[np.ones(50, int), np.zeros(100, int)]
    s = np.r_[np.linspace(0.5, 0.99, 50), np.linspace(0.0, 0.9, 100)]
    r = det.tpr_at_fpr(y, s, 0.07)
    assert r["allowed_fp"] == 7 and r["fp"] == 7 and r["fpr"] == 0.07
    # 0.29 * 100 float-floors to 28; the exact rule gives 29
    r = det.tpr_at_fpr(y, s, 0.29)
    assert r["allowed_fp"] == 29 and r["fp"] == 29


def test_tpr_at_fpr_tied_block_cannot_be_split():
    # a tie block holding 2 negatives cannot be entered with only 1 FP allowed
    y = [1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    s = [9, 8, 7, 7, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    r = det.tpr_at_fpr(y, s, 0.1)  # N=19: k=1
    assert r["allowed_fp"] == 1 and r["tp"] == 2 and r["fp"] == 0 and r["threshold"] == 8
    assert r["next"]["threshold"] == 7 and r["next"]["fpr"] == 2 / 19


@pytest.mark.parametrize("seed", range(20))
def test_tpr_at_fpr_matches_brute_force(seed):
    y, s = _random_case(seed)
    n_neg = int((y == 0).sum())
    for target in (0.0, 0.03, 0.05, 0.1, 0.37, 1.0):
        k = det.allowed_count(target, n_neg)
        best = 0.0
        for t in np.r_[np.inf, np.unique(s)]:  # brute force over every threshold
            pred = s >= t
            fp = int((pred & (y == 0)).sum())
            if fp <= k:
                best = max(best, (pred & (y == 1)).sum() / (y == 1).sum())
        assert det.tpr_at_fpr(y, s, target)["tpr"] == best


def test_confusion_matrix_at_threshold():
    y, s = _random_case(5)
    for t in (np.inf, 0.5, s[0], -1.0, 0.123):
        cm = det.confusion_matrix_at(y, s, t)
        pred = s >= t
        assert cm["tp"] == int((pred & (y == 1)).sum())
        assert cm["fp"] == int((pred & (y == 0)).sum())
        assert cm["tn"] == int((~pred & (y == 0)).sum())
        assert cm["fn"] == int((~pred & (y == 1)).sum())
        sk = skm.confusion_matrix(y, pred.astype(int), labels=[0, 1])
        assert (cm["tn"], cm["fp"], cm["fn"], cm["tp"]) == tuple(sk.ravel())


# ---------------------------------------------------------------- single class, validation


@pytest.mark.parametrize("y", [[1, 1, 1], [0, 0, 0]])
def test_single_class(y):
    s = [0.2, 0.5, 0.9]
    with pytest.warns(det.SingleClassWarning, match="only one class"):
        assert math.isnan(det.roc_auc_score(y, s))
    with pytest.warns(det.SingleClassWarning):
        assert math.isnan(det.average_precision_score(y, s))
    with pytest.warns(det.SingleClassWarning):
        assert math.isnan(det.tpr_at_fpr(y, s, 0.05)["tpr"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert det.roc_auc_score(y, s, single_class="audit") == 0.5
        assert det.average_precision_score(y, s, single_class="audit") == float(np.mean(y))
    with pytest.raises(InputError, match="single_class"):
        det.roc_auc_score(y, s, single_class="zero")


@pytest.mark.parametrize(
    "y,s,match",
    [
        ([0, 1], [0.1, np.nan], "not a finite"),
        ([0, 1], [0.1, np.inf], "not a finite"),
        ([0, 2], [0.1, 0.2], "not 0 or 1"),
        ([0, 0.5], [0.1, 0.2], "not 0 or 1"),
        (["a", "b"], [0.1, 0.2], "0/1"),
        ([0, 1, 1], [0.1, 0.2], "3 labels but 2"),
        ([], [], "no scores"),
    ],
)
def test_bad_input(y, s, match):
    with pytest.raises(InputError, match=match):
        det.roc_auc_score(y, s)


def test_bool_and_float32_accepted():
    y = np.array([True, False, True])
    s = np.array([0.7, 0.3, 0.3], dtype=np.float32)
    assert det.roc_auc_score(y, s) == skm.roc_auc_score(y, s)


# ---------------------------------------------------------------- bootstrap, groups


def test_bootstrap_reproducible_and_brackets():
    y, s = _random_case(11, n=300)
    a = det.bootstrap_ci(y, s, ["auroc", "auprc", "tpr@0.05"], n_resamples=200, seed=7)
    b = det.bootstrap_ci(y, s, ["auroc", "auprc", "tpr@0.05"], n_resamples=200, seed=7)
    c = det.bootstrap_ci(y, s, ["auroc", "auprc", "tpr@0.05"], n_resamples=200, seed=8)
    assert a == b and a != c
    assert a["auroc"]["value"] == det.roc_auc_score(y, s)
    assert a["auprc"]["value"] == pytest.approx(det.average_precision_score(y, s), rel=1e-12)
    assert a["tpr@0.05"]["value"] == det.tpr_at_fpr(y, s, 0.05)["tpr"]
    for m in a.values():
        assert m["low"] < m["value"] < m["high"]


def test_bootstrap_replicate_equals_resampled_metric():
    # The weighted-count replicate must equal the metric of the explicitly resampled data.
    y, s = _random_case(12, n=120)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, y.size, y.size)
    w = np.bincount(idx, minlength=y.size)
    yy, _, last = counts.sorted_groups(y.astype(np.int8), s.astype(float))
    order = np.argsort(-s, kind="stable")
    tps, fps = counts.curve_from_weights(yy.astype(np.int64), w[order], last)
    auc = counts.auroc_from_counts(tps, fps, int(tps[-1]), int(fps[-1]))
    ap = counts.ap_from_counts(tps, fps, int(tps[-1]))
    assert auc == pytest.approx(skm.roc_auc_score(y[idx], s[idx]), rel=1e-12)
    assert ap == pytest.approx(skm.average_precision_score(y[idx], s[idx]), rel=1e-12)


def test_per_group_micro_macro():
    y, s = _random_case(21, n=400)
    g = np.random.default_rng(1).choice(["A", "B", "C"], y.size)
    r = det.per_group_scores(y, s, g)
    for name in "ABC":
        m = g == name
        assert r["table"].loc[name, "auroc"] == pytest.approx(
            skm.roc_auc_score(y[m], s[m]), rel=1e-12
        )
    assert r["macro"]["auroc"] == pytest.approx(r["table"]["auroc"].mean(), rel=1e-12)
    assert r["micro"]["auroc"] == pytest.approx(skm.roc_auc_score(y, s), rel=1e-12)


# ---------------------------------------------------------------- the TPR table of the CLI and the page


def test_tpr_table_is_tpr_at_fpr_row_by_row():
    y, s = _random_case(31, n=300)
    curve = det.binary_curve(y, s)
    targets = [0.0, 0.03, "0.05", 0.29, 1.0]
    table = det.tpr_table(curve, targets)
    assert list(table.columns) == list(det.TPR_TABLE_COLUMNS)
    for row, t in zip(table.itertuples(index=False), targets, strict=True):
        r = det.tpr_at_fpr(y, s, t)
        assert (row.target_fpr, row.tpr, row.fpr, row.threshold, row.allowed_fp) == (
            float(t),
            r["tpr"],
            r["fpr"],
            r["threshold"],
            r["allowed_fp"],
        )
        if r["next"] is None:
            assert math.isnan(row.next_tpr) and math.isnan(row.next_threshold)
        else:
            assert (row.next_tpr, row.next_fpr, row.next_threshold) == (
                r["next"]["tpr"],
                r["next"]["fpr"],
                r["next"]["threshold"],
            )
    shown = det.tpr_table(curve, targets, headers=True)
    assert list(shown.columns) == list(det.TPR_TABLE_COLUMNS.values())
    assert shown["allowed FP"].tolist() == table["allowed_fp"].tolist()


def test_tpr_table_with_one_class_is_nan_with_warnings():
    curve = det.binary_curve([1, 1, 1], [0.2, 0.5, 0.9])
    with pytest.warns(det.SingleClassWarning):
        table = det.tpr_table(curve, [0.05, 0.1])
    assert table["tpr"].isna().all() and table["allowed_fp"].isna().all()
    assert table["target_fpr"].tolist() == [0.05, 0.1]
