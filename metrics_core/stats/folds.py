"""Fold aggregation (mean ± population std) and micro/macro averages over criteria.

Over ``K`` folds with per-fold values ``m_k``,
``Mean = (1/K) sum_k m_k`` and ``Std = sqrt((1/K) sum_k (m_k - Mean)^2)`` -- the
*population* standard deviation (``ddof=0``), reported as ``Mean ± Std``.

Per-criterion evaluation, then

* **macro** = ``(1/C) sum_c Metric_c``, the unweighted mean of the per-criterion values;
* **micro** = the metric computed once over the pooled (query, criterion) pairs.

What "micro" means for each kind of measure:

* per-query scores averaged over queries (P@k, R@k, nDCG, AP, RR, Success, ...): the
  metric over pooled pairs is the mean over every (query, criterion) pair, i.e. the
  per-criterion means weighted by their numbers of queries (:func:`criterion_averages`);
  a query listed under two criteria counts twice.
* set-based ratios built from counts (micro precision ``sum NumRelRet / sum NumRet``,
  micro recall ``sum NumRelRet / sum NumRel``): pool the numerators and the denominators
  separately and divide once (:func:`micro_ratio`); this is not the mean of the
  per-query ratios.
* counts (NumRet, NumRel, NumRelRet): the pooled-pair mean, as for scores.

Queries without a fold or criterion (missing or NaN in the metadata) are left out and
counted in the result's ``unassigned`` attribute.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError


def _labels(per_query: pd.DataFrame, metadata, column: str) -> pd.Series:
    """The metadata column aligned on the per-query index (NaN where absent)."""
    if isinstance(metadata, pd.Series):
        labels = metadata
    else:
        if column not in metadata.columns:
            raise InputError(
                N_("the query metadata has no column {column!r}"),
                hint=N_("columns: {columns}"),
                params={"column": column, "columns": ", ".join(map(str, metadata.columns))},
            )
        labels = metadata[column]
    labels = labels.copy()
    labels.index = labels.index.astype(str)
    index = per_query.index.astype(str)
    return pd.Series(labels.reindex(index).to_numpy(), index=per_query.index, name=column)


def fold_values(
    per_query: pd.DataFrame, metadata, fold_column: str = "fold", measures=None
) -> pd.DataFrame:
    """Mean of each measure within each fold: DataFrame fold x measure (plus ``count``).

    >>> pq = pd.DataFrame({"AP": [0.2, 0.4, 1.0]}, index=["q1", "q2", "q3"])
    >>> meta = pd.DataFrame({"fold": [0, 0, 1]}, index=["q1", "q2", "q3"])
    >>> fold_values(pq, meta)["AP"].round(3).tolist()
    [0.3, 1.0]
    """
    measures = list(per_query.columns) if measures is None else list(measures)
    labels = _labels(per_query, metadata, fold_column)
    keep = labels.notna().to_numpy()
    frame = per_query.loc[keep, measures]
    grouped = frame.groupby(labels[keep].to_numpy(), sort=True)
    out = grouped.mean()
    out["count"] = grouped.size()
    out.index.name = fold_column
    return out


def fold_summary(
    per_query: pd.DataFrame, metadata, fold_column: str = "fold", measures=None
) -> pd.DataFrame:
    """Mean ± population std over folds of each measure (population standard deviation, ``ddof=0``).

    Each fold contributes its mean over its queries (:func:`fold_values`); the folds then
    count equally. Returns a DataFrame indexed by measure with columns ``mean``, ``std``
    (``ddof=0``), ``folds`` and ``formatted`` (``"0.5000 ± 0.1000"``).

    Examples
    --------
    >>> pq = pd.DataFrame({"AP": [0.2, 0.4, 1.0]}, index=["q1", "q2", "q3"])
    >>> meta = pd.DataFrame({"fold": [0, 0, 1]}, index=["q1", "q2", "q3"])
    >>> fold_summary(pq, meta).loc["AP", "formatted"]
    '0.6500 ± 0.3500'
    """
    values = fold_values(per_query, metadata, fold_column, measures).drop(columns="count")
    summary = pd.DataFrame(
        {"mean": values.mean(axis=0), "std": values.std(axis=0, ddof=0), "folds": len(values)}
    )
    summary["formatted"] = [
        format_mean_std(m, s) for m, s in zip(summary["mean"], summary["std"], strict=True)
    ]
    summary.index.name = "measure"
    return summary


def format_mean_std(mean: float, std: float, digits: int = 4) -> str:
    """``"Mean ± Std"`` with ``digits`` decimals.

    >>> format_mean_std(0.81234, 0.0123)
    '0.8123 ± 0.0123'
    """
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _pairs(
    per_query: pd.DataFrame, metadata, criterion_column: str
) -> tuple[pd.DataFrame, np.ndarray, int]:
    """(query, criterion) pairs: a cell holding a list/tuple/set names several criteria."""
    labels = _labels(per_query, metadata, criterion_column)
    exploded = labels.explode()
    keep = exploded.notna().to_numpy()
    unassigned = int(labels.index.size - exploded[keep].index.unique().size)
    rows = per_query.loc[exploded.index[keep]]
    return rows, exploded[keep].to_numpy(), unassigned


def criterion_averages(
    per_query: pd.DataFrame, metadata, criterion_column: str = "criterion", measures=None
) -> pd.DataFrame:
    """Per-criterion means plus ``micro`` and ``macro`` rows (macro: unweighted mean of the criteria; micro: pooled pairs).

    Returns a DataFrame indexed by criterion, then ``micro`` and ``macro``, with one
    column per measure and ``count`` (pairs per criterion; pooled pairs for micro; number
    of criteria for macro). ``micro`` is the mean over every (query, criterion) pair,
    ``macro`` the unweighted mean of the per-criterion means. ``attrs["unassigned"]`` is
    the number of queries without a criterion.

    Examples
    --------
    >>> pq = pd.DataFrame({"P@1": [1.0, 0.0, 0.0, 1.0]}, index=["q1", "q2", "q3", "q4"])
    >>> meta = pd.DataFrame({"criterion": ["a", "a", "a", "b"]}, index=pq.index)
    >>> out = criterion_averages(pq, meta)
    >>> float(out.loc["micro", "P@1"]), float(out.loc["macro", "P@1"])
    (0.5, 0.6666666666666666)
    """
    measures = list(per_query.columns) if measures is None else list(measures)
    rows, crit, unassigned = _pairs(per_query, metadata, criterion_column)
    rows = rows[measures]
    grouped = rows.groupby(crit, sort=True)
    per_crit = grouped.mean()
    per_crit["count"] = grouped.size()
    micro = rows.mean(axis=0)
    micro["count"] = len(rows)
    macro = per_crit[measures].mean(axis=0)
    macro["count"] = len(per_crit)
    out = pd.concat([per_crit, micro.to_frame("micro").T, macro.to_frame("macro").T])
    out.index.name = criterion_column
    out["count"] = out["count"].astype(int)
    out.attrs["unassigned"] = unassigned
    return out


def micro_ratio(
    per_query: pd.DataFrame,
    metadata,
    numerator: str,
    denominator: str,
    criterion_column: str = "criterion",
) -> dict:
    """Micro and macro averages of a ratio from count columns.

    micro = ``sum(numerator) / sum(denominator)`` over pooled (query, criterion) pairs;
    macro = mean over criteria of ``sum_c(numerator) / sum_c(denominator)``. A zero
    denominator gives NaN.

    Examples
    --------
    >>> pq = pd.DataFrame({"NumRelRet": [1, 3, 0], "NumRel": [2, 4, 4]}, index=["q1", "q2", "q3"])
    >>> meta = pd.DataFrame({"criterion": ["a", "a", "b"]}, index=pq.index)
    >>> micro_ratio(pq, meta, "NumRelRet", "NumRel")
    {'micro': 0.4, 'macro': 0.3333333333333333, 'per_criterion': {'a': 0.6666666666666666, 'b': 0.0}}
    """
    rows, crit, _ = _pairs(per_query, metadata, criterion_column)
    sums = rows[[numerator, denominator]].groupby(crit, sort=True).sum()

    def ratio(num, den):
        return float(num / den) if den else float("nan")

    per_crit = {str(c): ratio(r[numerator], r[denominator]) for c, r in sums.iterrows()}
    micro = ratio(rows[numerator].sum(), rows[denominator].sum())
    macro = float(np.mean(list(per_crit.values()))) if per_crit else float("nan")
    return {"micro": micro, "macro": macro, "per_criterion": per_crit}


__all__ = ["fold_values", "fold_summary", "format_mean_std", "criterion_averages", "micro_ratio"]
