"""Binary detection gates: ROC and precision-recall curves, AUROC, AUPRC, TPR at a
target FPR, confusion matrices and bootstrap confidence intervals.

Conventions (stated once, used everywhere here):

* **Threshold rule**: an item is predicted positive when ``score >= threshold``.
* **Operating points**: one per distinct score, plus a first point with threshold
  ``+inf`` that predicts nothing (TPR = FPR = 0). No point is ever dropped.
* **Scores** of any scale are accepted (logits, probabilities, distances negated ...);
  nothing is transformed. NaN or infinite scores are an :class:`InputError`.
* **Labels** must be 0/1 (or booleans). Anything else is an :class:`InputError`.
* **One class only** (no positives or no negatives): AUROC and AUPRC are undefined.
  By default (``single_class="nan"``) they are NaN with a :class:`SingleClassWarning`;
  ``single_class="audit"`` applies the audit rule (AUROC 0.5, AUPRC = positive rate).

Everything is computed from integer counts after one sort: cumulative true and false
positive counts at the distinct thresholds (as ``sklearn.metrics._ranking`` does), in
:mod:`metrics_core.gates.counts`; :func:`bootstrap_ci` lives in
:mod:`metrics_core.gates.resample` and is re-exported here. Every function validates its
input through :func:`metrics_core.validation.check_binary`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.gates.counts import (
    BinaryCurve,
    SingleClassWarning,
    allowed_count,
    ap_from_counts,
    auroc_from_counts,
    binary_curve,
    tpr_index,
    warn_single_class,
)
from metrics_core.gates.resample import bootstrap_ci
from metrics_core.validation import (
    ONE_CLASS_RULES,
    as_fraction,
    check_binary,
    check_one_class_rule,
    one_class,
    one_class_value,
)

__all__ = [
    "SingleClassWarning",
    "BinaryCurve",
    "binary_curve",
    "curve_scores",
    "roc_curve",
    "precision_recall_curve",
    "roc_auc_score",
    "average_precision_score",
    "tpr_at_fpr",
    "tpr_table",
    "TPR_TABLE_COLUMNS",
    "confusion_matrix_at",
    "bootstrap_ci",
    "per_group_scores",
    "allowed_count",
    "DEFAULT_FPR_TARGETS",
    "SINGLE_CLASS_RULES",
]

DEFAULT_FPR_TARGETS = (0.03, 0.05, 0.10)
SINGLE_CLASS_RULES = ONE_CLASS_RULES


# ----------------------------------------------------------------------------------
# curves


def roc_curve(y_true, y_score):
    """ROC curve with every operating point.

    Point i predicts positive when ``score >= thresholds[i]``; the first threshold is
    ``+inf`` (predict nothing). Equals ``sklearn.metrics.roc_curve(...,
    drop_intermediate=False)``.

    Returns
    -------
    fpr, tpr, thresholds : ndarray
        FPR_i = FP_i / N_neg, TPR_i = TP_i / N_pos (NaN when that class is absent).

    Examples
    --------
    >>> fpr, tpr, thr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist(), thr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0], [inf, 0.8, 0.4, 0.35, 0.1])
    """
    c = binary_curve(y_true, y_score)
    return c.fpr, c.tpr, c.thresholds


def precision_recall_curve(y_true, y_score):
    """Precision-recall curve with every operating point, thresholds descending.

    Precision_i = TP_i / (TP_i + FP_i), Recall_i = TP_i / N_pos. The first point
    (threshold ``+inf``) predicts nothing: recall 0, precision 1 by convention (as
    scikit-learn's last point). scikit-learn returns the same points in the opposite
    order, without the ``+inf`` threshold.

    Examples
    --------
    >>> p, r, t = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> p.round(4).tolist(), r.tolist(), t.tolist()
    ([1.0, 1.0, 0.5, 0.6667, 0.5], [0.0, 0.5, 0.5, 1.0, 1.0], [inf, 0.8, 0.4, 0.35, 0.1])
    """
    c = binary_curve(y_true, y_score)
    return c.precision, c.tpr, c.thresholds


# ----------------------------------------------------------------------------------
# areas


def curve_scores(curve: BinaryCurve, single_class: str = "nan") -> tuple[float, float]:
    """AUROC and AUPRC of a curve, the one-class rule applied (no warning: for callers
    that show the one-class case themselves, such as the app).

    >>> curve_scores(binary_curve([1, 1], [0.3, 0.2]), "audit")
    (0.5, 1.0)
    """
    check_one_class_rule(single_class)
    if one_class(curve.n_pos, curve.n_neg):
        return (
            one_class_value("auroc", curve.n_pos, curve.n_neg, single_class),
            one_class_value("auprc", curve.n_pos, curve.n_neg, single_class),
        )
    return (
        auroc_from_counts(curve.tps, curve.fps, curve.n_pos, curve.n_neg),
        ap_from_counts(curve.tps, curve.fps, curve.n_pos),
    )


def roc_auc_score(y_true, y_score, *, single_class: str = "nan") -> float:
    r"""Area under the ROC curve (trapezoid rule; tied scores count one half).

    .. math:: \mathrm{AUROC} = \frac{1}{2 N_+ N_-}\sum_i (FP_i - FP_{i-1})(TP_i + TP_{i-1})

    which equals the Mann-Whitney probability P(s+ > s-) + P(s+ = s-)/2 and
    ``sklearn.metrics.roc_auc_score``. Computed from integer counts, divided once.

    Parameters
    ----------
    single_class : {"nan", "audit"}
        With one class only: NaN and a :class:`SingleClassWarning` ("nan", default),
        or 0.5 (the "audit" rule).

    Examples
    --------
    The audit specification's checksum:

    >>> roc_auc_score([1, 1, 0, 0, 1], [0.9, 0.7, 0.4, 0.2, 0.8])
    1.0
    >>> roc_auc_score([1, 0], [0.5, 0.5])
    0.5
    """
    check_one_class_rule(single_class)
    c = binary_curve(y_true, y_score)
    if one_class(c.n_pos, c.n_neg):
        if single_class == "nan":
            warn_single_class(c.n_pos, "AUROC")
        return one_class_value("auroc", c.n_pos, c.n_neg, single_class)
    return auroc_from_counts(c.tps, c.fps, c.n_pos, c.n_neg)


def average_precision_score(y_true, y_score, *, single_class: str = "nan") -> float:
    r"""Area under the precision-recall curve as step-wise average precision.

    .. math:: \mathrm{AP} = \sum_n (R_n - R_{n-1}) P_n

    over the distinct thresholds, descending (no interpolation); equals
    ``sklearn.metrics.average_precision_score``.

    Parameters
    ----------
    single_class : {"nan", "audit"}
        No positives or no negatives: NaN with a warning ("nan"), or the positive
        rate (the "audit" rule).

    Examples
    --------
    >>> average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.8333333333333333
    """
    check_one_class_rule(single_class)
    c = binary_curve(y_true, y_score)
    if one_class(c.n_pos, c.n_neg):
        if single_class == "nan":
            warn_single_class(c.n_pos, "AUPRC")
        return one_class_value("auprc", c.n_pos, c.n_neg, single_class)
    return ap_from_counts(c.tps, c.fps, c.n_pos)


# ----------------------------------------------------------------------------------
# operating points


def tpr_at_fpr(y_true, y_score, target=0.05, *, curve: BinaryCurve | None = None) -> dict:
    """Highest TPR whose FPR does not exceed ``target``, from integer counts.

    The number of false positives allowed is ``k = floor(target * N_neg)`` computed
    exactly (:func:`allowed_count`); the chosen operating point is the last one (lowest
    threshold) with ``FP <= k``; since TP never decreases as the threshold falls, it
    has the highest TPR. The ``+inf`` point (FP = 0) always qualifies.

    Parameters
    ----------
    target : float, str, Decimal or Fraction
        Target FPR in [0, 1].
    curve : BinaryCurve, optional
        Precomputed counts (skips the sort).

    Returns
    -------
    dict
        ``tpr``, ``fpr`` (achieved), ``threshold`` (predict positive when
        ``score >= threshold``; ``inf`` means predict nothing), ``tp``, ``fp``,
        ``allowed_fp`` (k), and ``next``: the following operating point (``tpr``,
        ``fpr``, ``threshold``) -- the first one whose FPR exceeds the target -- or
        None. With one class only, tpr/fpr are NaN (with a warning).

    Examples
    --------
    >>> r = tpr_at_fpr([1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1],
    ...                [.9, .8, .7, .6, .5, .4, .3, .3, .2, .1, .1, .05], 0.125)
    >>> r["tpr"], r["fpr"], r["threshold"], r["next"]["fpr"]
    (0.75, 0.125, 0.6, 0.25)
    """
    frac = as_fraction(target)
    if frac < 0 or frac > 1:
        raise InputError(N_("target FPR {value!r} is outside [0, 1]"), params={"value": target})
    c = curve if curve is not None else binary_curve(y_true, y_score)
    if one_class(c.n_pos, c.n_neg):
        warn_single_class(c.n_pos, "TPR@FPR")
        return {
            "tpr": math.nan,
            "fpr": math.nan,
            "threshold": math.nan,
            "tp": None,
            "fp": None,
            "allowed_fp": None,
            "target": float(frac),
            "next": None,
        }
    k = math.floor(frac * c.n_neg)
    i = tpr_index(c.fps, k)
    nxt = None
    if i + 1 < c.fps.size:
        nxt = {
            "tpr": int(c.tps[i + 1]) / c.n_pos,
            "fpr": int(c.fps[i + 1]) / c.n_neg,
            "threshold": float(c.thresholds[i + 1]),
        }
    return {
        "tpr": int(c.tps[i]) / c.n_pos,
        "fpr": int(c.fps[i]) / c.n_neg,
        "threshold": float(c.thresholds[i]),
        "tp": int(c.tps[i]),
        "fp": int(c.fps[i]),
        "allowed_fp": int(k),
        "target": float(frac),
        "next": nxt,
    }


#: the columns of :func:`tpr_table` and their headers on a page (``headers=True``)
TPR_TABLE_COLUMNS = {
    "target_fpr": "target FPR",
    "tpr": "TPR",
    "fpr": "achieved FPR",
    "threshold": "threshold",
    "allowed_fp": "allowed FP",
    "next_tpr": "next TPR",
    "next_fpr": "next FPR",
    "next_threshold": "next threshold",
}


def tpr_table(curve: BinaryCurve, targets=DEFAULT_FPR_TARGETS, *, headers: bool = False):
    """One row per target FPR: :func:`tpr_at_fpr` on a precomputed curve, as a table.

    Parameters
    ----------
    curve : BinaryCurve
        From :func:`binary_curve` (the one sort is not repeated).
    targets : sequence of float, str, Decimal or Fraction
        Target FPRs in [0, 1], each read as its decimal spelling (:func:`allowed_count`).
    headers : bool
        Column names as a page shows them (:data:`TPR_TABLE_COLUMNS`' values) instead
        of its keys.

    Returns
    -------
    pandas.DataFrame
        Columns ``target_fpr``, ``tpr``, ``fpr`` (achieved), ``threshold`` (predict
        positive when ``score >= threshold``), ``allowed_fp`` (floor(target * N_neg),
        nullable integer), and the following operating point ``next_tpr``,
        ``next_fpr``, ``next_threshold`` (NaN when there is none). With one class only
        every value is NaN (and :func:`tpr_at_fpr` warns once per target).

    Examples
    --------
    >>> c = binary_curve([1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1],
    ...                  [.9, .8, .7, .6, .5, .4, .3, .3, .2, .1, .1, .05])
    >>> t = tpr_table(c, [0.125, 0.5])
    >>> t[["target_fpr", "tpr", "fpr", "allowed_fp", "next_fpr"]].values.tolist()
    [[0.125, 0.75, 0.125, 1, 0.25], [0.5, 0.75, 0.375, 4, 0.625]]
    """
    import pandas as pd

    rows = []
    for target in targets:
        r = tpr_at_fpr(None, None, target, curve=curve)
        nxt = r["next"] or {}
        rows.append(
            (
                r["target"],
                r["tpr"],
                r["fpr"],
                r["threshold"],
                r["allowed_fp"],
                nxt.get("tpr", math.nan),
                nxt.get("fpr", math.nan),
                nxt.get("threshold", math.nan),
            )
        )
    names = list(TPR_TABLE_COLUMNS)
    frame = pd.DataFrame(rows, columns=names).astype({c: float for c in names if c != "allowed_fp"})
    frame["allowed_fp"] = pd.array(frame["allowed_fp"].tolist(), dtype="Int64")
    return frame.rename(columns=TPR_TABLE_COLUMNS) if headers else frame


def confusion_matrix_at(
    y_true, y_score, threshold: float, *, curve: BinaryCurve | None = None
) -> dict:
    """Confusion matrix when predicting positive for ``score >= threshold``.

    Returns
    -------
    dict with ``tp``, ``fp``, ``tn``, ``fn`` (ints), ``tpr``, ``fpr``, ``precision``.

    Examples
    --------
    >>> cm = confusion_matrix_at([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1], 0.5)
    >>> cm["tp"], cm["fp"], cm["tn"], cm["fn"]
    (2, 1, 1, 0)
    """
    c = curve if curve is not None else binary_curve(y_true, y_score)
    i = c.index_at(threshold)
    tp, fp = int(c.tps[i]), int(c.fps[i])
    return {
        "threshold": float(threshold),
        "tp": tp,
        "fp": fp,
        "tn": c.n_neg - fp,
        "fn": c.n_pos - tp,
        "tpr": tp / c.n_pos if c.n_pos else math.nan,
        "fpr": fp / c.n_neg if c.n_neg else math.nan,
        "precision": tp / (tp + fp) if tp + fp else math.nan,
    }


# ----------------------------------------------------------------------------------
# groups


def per_group_scores(
    y_true, y_score, groups, *, targets=DEFAULT_FPR_TARGETS, single_class: str = "nan"
):
    """AUROC, AUPRC and TPR@FPR per group (e.g. criterion), with micro and macro averages.

    Micro: the metric on all rows pooled. Macro: the mean of the
    per-group values (groups where a metric is undefined are left out of the mean, and
    counted in ``n_undefined``).

    Returns
    -------
    dict with ``table`` (DataFrame indexed by group: n_pos, n_neg, auroc, auprc,
    tpr@<target>...), ``micro`` and ``macro`` (dicts of the same metrics).

    Examples
    --------
    >>> r = per_group_scores([1, 0, 1, 0, 1, 0], [.9, .1, .4, .6, .8, .2], list("AABBAA"))
    >>> r["table"]["auroc"].tolist(), r["macro"]["auroc"], r["micro"]["auroc"]
    ([1.0, 0.0], 0.5, 0.8888888888888888)
    """
    import pandas as pd

    labels, scores = check_binary(y_true, y_score)
    groups = np.asarray(groups, dtype=object)
    if groups.shape[0] != labels.shape[0]:
        raise InputError(N_("groups and scores differ in length"))
    codes, names = pd.factorize(pd.Series(groups).astype(str), sort=True)
    cols = ["auroc", "auprc"] + [f"tpr@{t:g}" for t in targets]

    def scores_of(y, s):
        c = binary_curve(y, s)
        row = {"n_pos": c.n_pos, "n_neg": c.n_neg}
        if not one_class(c.n_pos, c.n_neg):
            row["auroc"] = auroc_from_counts(c.tps, c.fps, c.n_pos, c.n_neg)
            row["auprc"] = ap_from_counts(c.tps, c.fps, c.n_pos)
        else:
            row["auroc"] = one_class_value("auroc", c.n_pos, c.n_neg, single_class)
            row["auprc"] = one_class_value("auprc", c.n_pos, c.n_neg, single_class)
        for t in targets:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SingleClassWarning)
                row[f"tpr@{t:g}"] = tpr_at_fpr(None, None, t, curve=c)["tpr"]
        return row

    # one stable sort by group keeps each group's rows contiguous
    order = np.argsort(codes, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(codes, minlength=len(names)))]
    rows = [
        scores_of(labels[order[a:b]], scores[order[a:b]])
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    table = pd.DataFrame(rows, index=pd.Index(list(names), name="group"))
    undefined = [str(n) for n, r in zip(names, rows, strict=True) if math.isnan(r["auroc"])]
    if undefined and single_class == "nan":
        warnings.warn(
            f"AUROC/AUPRC undefined (one class only) for groups: {', '.join(undefined)}",
            SingleClassWarning,
            stacklevel=2,
        )
    macro = {c: float(table[c].mean(skipna=True)) for c in cols}
    macro["n_undefined"] = len(undefined)
    micro = scores_of(labels, scores)
    return {"table": table, "micro": micro, "macro": macro}
