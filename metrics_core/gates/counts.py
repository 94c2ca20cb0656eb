"""The counts under every detection metric: one sort, cumulative TP/FP at each threshold.

Scores are sorted once, descending; the cumulative true and false positive counts at
the end of each run of equal scores are the operating points (predict positive when
``score >= threshold``), plus a first point with threshold ``+inf`` that predicts
nothing. AUROC, AUPRC and TPR at a target FPR are exact functions of these integer
counts (the approach of ``sklearn.metrics._ranking``); a bootstrap replicate only
reweights them (:func:`curve_from_weights`), without a new sort.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from metrics_core.errors import InputWarning
from metrics_core.validation import as_fraction, check_binary

__all__ = [
    "SingleClassWarning",
    "BinaryCurve",
    "binary_curve",
    "sorted_groups",
    "curve_from_weights",
    "auroc_from_counts",
    "ap_from_counts",
    "allowed_count",
    "tpr_index",
    "warn_single_class",
]


class SingleClassWarning(InputWarning):
    """Only one class is present, so AUROC/AUPRC/TPR@FPR are undefined."""


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
        """TP / N_pos at each point (NaN without positives)."""
        return self.tps / self.n_pos if self.n_pos else np.full(self.tps.shape, np.nan)

    @property
    def fpr(self) -> np.ndarray:
        """FP / N_neg at each point (NaN without negatives)."""
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


def sorted_groups(labels: np.ndarray, scores: np.ndarray):
    """Sort by score descending once (stable).

    Returns
    -------
    y : ndarray
        The labels in that order.
    distinct : ndarray
        The distinct scores, descending.
    last : ndarray of int
        Index (in sorted order) of the last item of each run of equal scores.

    >>> y, d, last = sorted_groups(np.array([0, 1, 1]), np.array([0.2, 0.9, 0.2]))
    >>> y.tolist(), d.tolist(), last.tolist()
    ([1, 0, 1], [0.9, 0.2], [0, 2])
    """
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    y = labels[order]
    last = np.flatnonzero(np.diff(s)) if s.size > 1 else np.empty(0, dtype=np.int64)
    last = np.r_[last, s.size - 1]
    return y, s[last], last


def curve_from_weights(y_sorted, w_sorted, last):
    """Cumulative weighted TP/FP counts at the group ends, with the ``+inf`` point first.

    ``w_sorted`` are integer multiplicities (a bootstrap replicate's draw counts), in
    the order of :func:`sorted_groups`.

    >>> curve_from_weights(np.array([1, 0, 1]), np.array([2, 1, 0]), np.array([0, 2]))
    (array([0, 2, 2]), array([0, 0, 1]))
    """
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
    labels, scores = check_binary(y_true, y_score, source=source)
    y, distinct, last = sorted_groups(labels, scores)
    tps = np.r_[0, np.cumsum(y, dtype=np.int64)[last]]
    fps = np.r_[0, (last + 1) - tps[1:]]
    thresholds = np.r_[np.inf, distinct]
    n_pos = int(tps[-1])
    return BinaryCurve(
        thresholds, tps.astype(np.int64), fps.astype(np.int64), n_pos, int(labels.size - n_pos)
    )


def warn_single_class(n_pos: int, what: str, stacklevel: int = 3) -> None:
    """Warn (:class:`SingleClassWarning`) that ``what`` is undefined with one class only."""
    missing = "positive" if n_pos == 0 else "negative"
    warnings.warn(
        f"{what} is undefined: no {missing} labels (only one class present); "
        "returning NaN. Use single_class='audit' for the audit rule "
        "(AUROC 0.5, AUPRC = positive rate).",
        SingleClassWarning,
        stacklevel=stacklevel,
    )


def auroc_from_counts(tps, fps, n_pos, n_neg) -> float:
    r"""AUROC from cumulative counts (both classes present): the trapezoid on integers,

    .. math:: \frac{1}{2 N_+ N_-}\sum_i (FP_i - FP_{i-1})(TP_i + TP_{i-1})

    divided once. Ties inside a threshold group give a diagonal step, i.e. count one
    half (Mann-Whitney U).

    >>> auroc_from_counts([0, 1, 2, 2], [0, 0, 1, 2], 2, 2)
    0.875
    """
    tps = np.asarray(tps, dtype=np.int64)
    fps = np.asarray(fps, dtype=np.int64)
    num = int(np.sum(np.diff(fps) * (tps[1:] + tps[:-1])))
    return num / (2 * n_pos * n_neg)


def ap_from_counts(tps, fps, n_pos) -> float:
    r"""Average precision from cumulative counts, :math:`\sum_n (R_n - R_{n-1}) P_n`.

    >>> ap_from_counts(np.array([0, 1, 2, 2]), np.array([0, 0, 1, 2]), 2)
    0.8333333333333333
    """
    predicted = tps + fps
    prec = np.zeros(tps.shape, dtype=np.float64)
    np.divide(tps, predicted, out=prec, where=predicted > 0)
    return float(np.sum(np.diff(tps) * prec[1:]) / n_pos)


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


def tpr_index(fps, allowed_fp: int) -> int:
    """The last operating point with at most ``allowed_fp`` false positives (``fps`` is
    non-decreasing, and the ``+inf`` point, FP = 0, always qualifies).

    >>> tpr_index(np.array([0, 0, 1, 1, 3]), 1), tpr_index(np.array([0, 2]), 1)
    (3, 0)
    """
    return int(np.searchsorted(fps, allowed_fp, side="right")) - 1
