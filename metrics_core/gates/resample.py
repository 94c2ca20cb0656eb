"""Percentile bootstrap intervals of detection metrics (items resampled with replacement).

The data are sorted once (:func:`metrics_core.gates.counts.sorted_groups`); a replicate
draws how often each item is taken and reweights the cumulative counts, so it costs one
pass over the data, not a new sort.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.gates.counts import (
    SingleClassWarning,
    allowed_count,
    ap_from_counts,
    auroc_from_counts,
    curve_from_weights,
    sorted_groups,
    tpr_index,
)
from metrics_core.validation import (
    LIMITS,
    check_binary,
    check_float,
    check_int,
    one_class,
    one_class_value,
)

__all__ = ["metric_from_counts", "bootstrap_ci"]


def metric_from_counts(name: str, tps, fps, n_pos, n_neg, single_class: str) -> float:
    """``"auroc"``, ``"auprc"`` or ``"tpr@<target>"`` from cumulative counts, the
    one-class rule applied (no warning).

    >>> metric_from_counts("tpr@0.5", np.array([0, 1, 2, 2]), np.array([0, 0, 1, 2]), 2, 2, "nan")
    1.0
    """
    if one_class(n_pos, n_neg):
        return one_class_value(name, n_pos, n_neg, single_class)
    if name == "auroc":
        return auroc_from_counts(tps, fps, n_pos, n_neg)
    if name == "auprc":
        return ap_from_counts(tps, fps, n_pos)
    if name.startswith("tpr@"):
        return int(tps[tpr_index(fps, allowed_count(name[4:], n_neg))]) / n_pos
    raise InputError(
        N_("unknown metric {name!r}"),
        hint=N_("Accepted: auroc, auprc, tpr@<fpr>"),
        params={"name": name},
    )


def bootstrap_ci(
    y_true,
    y_score,
    metrics=("auroc", "auprc", "tpr@0.05"),
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    single_class: str = "nan",
) -> dict:
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
    labels, scores = check_binary(y_true, y_score)
    check_float(confidence, "confidence", minimum=0, maximum=1, open_low=True, open_high=True)
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1, maximum=LIMITS["resamples"])
    metrics = [str(m).lower() for m in metrics]
    y, _, last = sorted_groups(labels, scores)
    n = y.size
    y64 = y.astype(np.int64)
    ones = np.ones(n, dtype=np.int64)
    tps, fps = curve_from_weights(y64, ones, last)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingleClassWarning)
        point = {
            m: metric_from_counts(m, tps, fps, int(tps[-1]), int(fps[-1]), single_class)
            for m in metrics
        }
    rng = np.random.default_rng(seed)
    reps = np.full((len(metrics), n_resamples), np.nan)
    for b in range(n_resamples):
        w = np.bincount(rng.integers(0, n, n), minlength=n)
        tps_b, fps_b = curve_from_weights(y64, w, last)
        for j, m in enumerate(metrics):
            reps[j, b] = metric_from_counts(
                m, tps_b, fps_b, int(tps_b[-1]), int(fps_b[-1]), single_class
            )
    lo_q, hi_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2
    out = {}
    for j, m in enumerate(metrics):
        r = reps[j][~np.isnan(reps[j])]
        low, high = np.quantile(r, [lo_q, hi_q]).tolist() if r.size else (math.nan, math.nan)
        out[m] = {
            "value": point[m],
            "low": low,
            "high": high,
            "n_resamples": n_resamples,
            "n_undefined": int(n_resamples - r.size),
        }
    return out
