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
positive counts at the distinct thresholds (as ``sklearn.metrics._ranking`` does).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from metrics_core.errors import InputError, InputWarning
from metrics_core.validation import (
    LIMITS,
    ONE_CLASS_RULES,
    as_fraction,
    binary_labels,
    check_float,
    check_int,
    check_lengths,
    check_one_class_rule,
    finite_scores,
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
    "confusion_matrix_at",
    "bootstrap_ci",
    "allowed_count",
    "DEFAULT_FPR_TARGETS",
    "SINGLE_CLASS_RULES",
]

DEFAULT_FPR_TARGETS = (0.03, 0.05, 0.10)
SINGLE_CLASS_RULES = ONE_CLASS_RULES


class SingleClassWarning(InputWarning):
    """Only one class is present, so AUROC/AUPRC/TPR@FPR are undefined."""


# ----------------------------------------------------------------------------------
# validation


def _check_binary(y_true, y_score, *, source: str | None = None):
    """Validate and convert ``y_true`` (0/1) and ``y_score`` (finite floats) through
    :mod:`metrics_core.validation`.

    Returns int8 labels and float64 scores (float32 input is widened exactly).
    """
    y_true = np.asarray(y_true)
    y_score = np.asarray(y_score)
    if y_true.ndim != 1 or y_score.ndim != 1:
        raise InputError("labels and scores must be one-dimensional", source=source)
    check_lengths(source=source, hint="Give one label per score", labels=y_true, scores=y_score)
    if y_true.shape[0] == 0:
        raise InputError("no scores given", source=source)
    scores = finite_scores(y_score, source=source)
    labels = binary_labels(y_true, source=source)
    return labels, scores


def _check_single_class(single_class: str) -> None:
    check_one_class_rule(single_class)


# ----------------------------------------------------------------------------------
# the one sort


@dataclass(frozen=True)
class BinaryCurve:
    """Cumulative counts at every operating point, thresholds descending.

    Attributes
    ----------
    thresholds : ndarray of float64, shape (m + 1,)
        ``+inf`` then the m distinct scores, descending.
    tps, fps : ndarray of int64, shape (m + 1,)
        True and false positives when predicting ``score >= thresholds[i]``.
    n_pos, n_neg : int
        Number of positives and negatives.
    """

    thresholds: np.ndarray
    tps: np.ndarray
    fps: np.ndarray
    n_pos: int
    n_neg: int

    @property
    def tpr(self) -> np.ndarray:
        return self.tps / self.n_pos if self.n_pos else np.full(self.tps.shape, np.nan)

    @property
    def fpr(self) -> np.ndarray:
        return self.fps / self.n_neg if self.n_neg else np.full(self.fps.shape, np.nan)

    @property
    def precision(self) -> np.ndarray:
        """TP / (TP + FP); 1.0 where nothing is predicted (the ``+inf`` point)."""
        predicted = self.tps + self.fps
        out = np.ones(self.tps.shape, dtype=np.float64)
        np.divide(self.tps, predicted, out=out, where=predicted > 0)
        return out

    def index_at(self, threshold: float) -> int:
        """Index of the operating point that ``score >= threshold`` reaches."""
        # thresholds are descending: count those >= threshold, minus one.
        n_ge = int(np.searchsorted(-self.thresholds, -float(threshold), side="right"))
        return max(n_ge - 1, 0)


def _sorted_groups(labels: np.ndarray, scores: np.ndarray):
    """Sort by score descending once; return sorted labels, the distinct scores and
    the index of the last item of each run of equal scores."""
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    y = labels[order]
    last = np.flatnonzero(np.diff(s)) if s.size > 1 else np.empty(0, dtype=np.int64)
    last = np.r_[last, s.size - 1]
    return y, s[last], last


def _curve_from_weights(y_sorted, w_sorted, last):
    """Cumulative weighted TP/FP counts at the group ends (integer weights)."""
    pos = np.cumsum(w_sorted * y_sorted)
    tot = np.cumsum(w_sorted)
    tps = np.r_[0, pos[last]]
    fps = np.r_[0, (tot - pos)[last]]
    return tps, fps


def binary_curve(y_true, y_score, *, source: str | None = None) -> BinaryCurve:
    """Counts at every distinct threshold, after one sort.

    Parameters
    ----------
    y_true : array-like of {0, 1}
    y_score : array-like of float
        Any scale; higher means more likely positive.

    Returns
    -------
    BinaryCurve

    Examples
    --------
    >>> c = binary_curve([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1])
    >>> c.thresholds.tolist(), c.tps.tolist(), c.fps.tolist()
    ([inf, 0.9, 0.5, 0.1], [0, 1, 2, 2], [0, 0, 1, 2])
    """
    labels, scores = _check_binary(y_true, y_score, source=source)
    y, distinct, last = _sorted_groups(labels, scores)
    tps = np.r_[0, np.cumsum(y, dtype=np.int64)[last]]
    fps = np.r_[0, (last + 1) - tps[1:]]
    thresholds = np.r_[np.inf, distinct]
    n_pos = int(tps[-1])
    return BinaryCurve(thresholds, tps.astype(np.int64), fps.astype(np.int64), n_pos,
                       int(labels.size - n_pos))


def _warn_single(curve: BinaryCurve, what: str) -> None:
    missing = "positive" if curve.n_pos == 0 else "negative"
    warnings.warn(f"{what} is undefined: no {missing} labels (only one class present); "
                  "returning NaN. Use single_class='audit' for the audit rule "
                  "(AUROC 0.5, AUPRC = positive rate).",
                  SingleClassWarning, stacklevel=3)


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


def _auroc_from_counts(tps, fps, n_pos, n_neg) -> float:
    # Trapezoid on integer counts: sum dFP * (TP_i + TP_{i-1}) / (2 P N). Ties inside a
    # threshold group give a diagonal step, i.e. count one half (Mann-Whitney U).
    tps = np.asarray(tps, dtype=np.int64)
    fps = np.asarray(fps, dtype=np.int64)
    num = int(np.sum(np.diff(fps) * (tps[1:] + tps[:-1])))
    return num / (2 * n_pos * n_neg)


def _ap_from_counts(tps, fps, n_pos) -> float:
    predicted = tps + fps
    prec = np.zeros(tps.shape, dtype=np.float64)
    np.divide(tps, predicted, out=prec, where=predicted > 0)
    return float(np.sum(np.diff(tps) * prec[1:]) / n_pos)


def curve_scores(curve: BinaryCurve, single_class: str = "nan") -> tuple[float, float]:
    """AUROC and AUPRC of a curve, the one-class rule applied (no warning: for callers
    that show the one-class case themselves, such as the app).

    >>> curve_scores(binary_curve([1, 1], [0.3, 0.2]), "audit")
    (0.5, 1.0)
    """
    check_one_class_rule(single_class)
    if one_class(curve.n_pos, curve.n_neg):
        return (one_class_value("auroc", curve.n_pos, curve.n_neg, single_class),
                one_class_value("auprc", curve.n_pos, curve.n_neg, single_class))
    return (_auroc_from_counts(curve.tps, curve.fps, curve.n_pos, curve.n_neg),
            _ap_from_counts(curve.tps, curve.fps, curve.n_pos))


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
    _check_single_class(single_class)
    c = binary_curve(y_true, y_score)
    if one_class(c.n_pos, c.n_neg):
        if single_class == "nan":
            _warn_single(c, "AUROC")
        return one_class_value("auroc", c.n_pos, c.n_neg, single_class)
    return _auroc_from_counts(c.tps, c.fps, c.n_pos, c.n_neg)


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
    _check_single_class(single_class)
    c = binary_curve(y_true, y_score)
    if one_class(c.n_pos, c.n_neg):
        if single_class == "nan":
            _warn_single(c, "AUPRC")
        return one_class_value("auprc", c.n_pos, c.n_neg, single_class)
    return _ap_from_counts(c.tps, c.fps, c.n_pos)


# ----------------------------------------------------------------------------------
# operating points


def allowed_count(alpha, n: int) -> int:
    """floor(alpha * n) computed exactly (alpha read as its decimal spelling).

    Examples
    --------
    >>> allowed_count(0.07, 100), allowed_count(0.29, 100), 0.29 * 100
    (7, 29, 28.999999999999996)
    >>> allowed_count(0.05, 59)
    2
    """
    return math.floor(as_fraction(alpha) * int(n))


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
        raise InputError(f"target FPR {target!r} is outside [0, 1]")
    c = curve if curve is not None else binary_curve(y_true, y_score)
    if one_class(c.n_pos, c.n_neg):
        _warn_single(c, "TPR@FPR")
        return {"tpr": math.nan, "fpr": math.nan, "threshold": math.nan, "tp": None,
                "fp": None, "allowed_fp": None, "target": float(frac), "next": None}
    k = math.floor(frac * c.n_neg)
    # fps is non-decreasing: the last index with fps <= k.
    i = int(np.searchsorted(c.fps, k, side="right")) - 1
    nxt = None
    if i + 1 < c.fps.size:
        nxt = {"tpr": int(c.tps[i + 1]) / c.n_pos, "fpr": int(c.fps[i + 1]) / c.n_neg,
               "threshold": float(c.thresholds[i + 1])}
    return {"tpr": int(c.tps[i]) / c.n_pos, "fpr": int(c.fps[i]) / c.n_neg,
            "threshold": float(c.thresholds[i]), "tp": int(c.tps[i]), "fp": int(c.fps[i]),
            "allowed_fp": int(k), "target": float(frac), "next": nxt}


def confusion_matrix_at(y_true, y_score, threshold: float, *,
                        curve: BinaryCurve | None = None) -> dict:
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
    return {"threshold": float(threshold), "tp": tp, "fp": fp, "tn": c.n_neg - fp,
            "fn": c.n_pos - tp,
            "tpr": tp / c.n_pos if c.n_pos else math.nan,
            "fpr": fp / c.n_neg if c.n_neg else math.nan,
            "precision": tp / (tp + fp) if tp + fp else math.nan}


# ----------------------------------------------------------------------------------
# bootstrap


def _metric_from_counts(name: str, tps, fps, n_pos, n_neg, single_class: str) -> float:
    if one_class(n_pos, n_neg):
        return one_class_value(name, n_pos, n_neg, single_class)
    if name == "auroc":
        return _auroc_from_counts(tps, fps, n_pos, n_neg)
    if name == "auprc":
        return _ap_from_counts(tps, fps, n_pos)
    if name.startswith("tpr@"):
        k = allowed_count(name[4:], n_neg)
        i = int(np.searchsorted(fps, k, side="right")) - 1
        return int(tps[i]) / n_pos
    raise InputError(f"unknown metric {name!r}", hint="Accepted: auroc, auprc, tpr@<fpr>")


def bootstrap_ci(y_true, y_score, metrics=("auroc", "auprc", "tpr@0.05"), *,
                 n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
                 single_class: str = "nan") -> dict:
    """Percentile bootstrap confidence intervals (resampling items with replacement).

    The data are sorted once; each replicate draws multiplicities ``w_i`` (how often
    item i is drawn) and recomputes the cumulative counts from them, so a replicate
    costs O(n), not a new sort. Reproducible for a given ``seed``.

    Parameters
    ----------
    metrics : sequence of str
        ``"auroc"``, ``"auprc"``, ``"tpr@<target>"`` (e.g. ``"tpr@0.05"``).
    n_resamples : int
        Number of replicates.
    confidence : float
        Interval level, e.g. 0.95 gives the 2.5th and 97.5th percentiles.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    dict
        metric -> ``{"value", "low", "high", "n_resamples", "n_undefined"}``; replicates that
        draw only one class are undefined (NaN) and left out of the percentiles.

    Examples
    --------
    >>> r = bootstrap_ci([0, 1, 0, 1, 1, 0], [.1, .9, .3, .6, .2, .5], ["auroc"], n_resamples=200)
    >>> r["auroc"]["value"], r["auroc"]["low"] <= r["auroc"]["value"] <= r["auroc"]["high"]
    (0.7777777777777778, True)
    """
    labels, scores = _check_binary(y_true, y_score)
    check_float(confidence, "confidence", minimum=0, maximum=1, open_low=True, open_high=True)
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1, maximum=LIMITS["resamples"])
    metrics = [str(m).lower() for m in metrics]
    y, _, last = _sorted_groups(labels, scores)
    n = y.size
    y64 = y.astype(np.int64)
    ones = np.ones(n, dtype=np.int64)
    tps, fps = _curve_from_weights(y64, ones, last)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingleClassWarning)
        point = {m: _metric_from_counts(m, tps, fps, int(tps[-1]), int(fps[-1]), single_class)
                 for m in metrics}
    rng = np.random.default_rng(seed)
    reps = np.full((len(metrics), n_resamples), np.nan)
    for b in range(n_resamples):
        w = np.bincount(rng.integers(0, n, n), minlength=n)
        tps_b, fps_b = _curve_from_weights(y64, w, last)
        for j, m in enumerate(metrics):
            reps[j, b] = _metric_from_counts(m, tps_b, fps_b, int(tps_b[-1]), int(fps_b[-1]),
                                             single_class)
    lo_q, hi_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2
    out = {}
    for j, m in enumerate(metrics):
        r = reps[j][~np.isnan(reps[j])]
        low, high = (np.quantile(r, [lo_q, hi_q]).tolist() if r.size else (math.nan, math.nan))
        out[m] = {"value": point[m], "low": low, "high": high, "n_resamples": n_resamples,
                  "n_undefined": int(n_resamples - r.size)}
    return out


def per_group_scores(y_true, y_score, groups, *, targets=DEFAULT_FPR_TARGETS,
                     single_class: str = "nan"):
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

    labels, scores = _check_binary(y_true, y_score)
    groups = np.asarray(groups, dtype=object)
    if groups.shape[0] != labels.shape[0]:
        raise InputError("groups and scores differ in length")
    codes, names = pd.factorize(pd.Series(groups).astype(str), sort=True)
    cols = ["auroc", "auprc"] + [f"tpr@{t:g}" for t in targets]

    def scores_of(y, s):
        c = binary_curve(y, s)
        row = {"n_pos": c.n_pos, "n_neg": c.n_neg}
        if not one_class(c.n_pos, c.n_neg):
            row["auroc"] = _auroc_from_counts(c.tps, c.fps, c.n_pos, c.n_neg)
            row["auprc"] = _ap_from_counts(c.tps, c.fps, c.n_pos)
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
    rows = [scores_of(labels[order[a:b]], scores[order[a:b]]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    table = pd.DataFrame(rows, index=pd.Index(list(names), name="group"))
    undefined = [str(n) for n, r in zip(names, rows, strict=True) if math.isnan(r["auroc"])]
    if undefined and single_class == "nan":
        warnings.warn(f"AUROC/AUPRC undefined (one class only) for groups: {', '.join(undefined)}",
                      SingleClassWarning, stacklevel=2)
    macro = {c: float(table[c].mean(skipna=True)) for c in cols}
    macro["n_undefined"] = len(undefined)
    micro = scores_of(labels, scores)
    return {"table": table, "micro": micro, "macro": macro}
