"""Summaries of per-query values: mean and median, and means per group.

Means and medians over queries, and means per category or per difficulty level,
generalised to any column of a query-metadata table. Significance tests live in
:mod:`metrics_core.stats.significance`, folds and criteria in :mod:`metrics_core.stats.folds`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metrics_core.errors import N_, InputError

if TYPE_CHECKING:
    import pandas as pd


def summarize(per_query: pd.DataFrame) -> pd.DataFrame:
    """Mean and median of every measure (rows) over queries.

    NaN values (e.g. FirstRel of a query without a relevant document) are skipped.

    Examples
    --------
    >>> import pandas as pd
    >>> pq = pd.DataFrame({"P@3": [2/3, 0.0, 1/3]}, index=["a", "b", "c"])
    >>> summarize(pq).round(4).to_dict(orient="index")
    {'P@3': {'mean': 0.3333, 'median': 0.3333, 'count': 3.0}}
    """
    import pandas as pd

    numeric = per_query.select_dtypes(include=[np.number])
    return pd.DataFrame(
        {
            "mean": numeric.mean(skipna=True),
            "median": numeric.median(skipna=True),
            "count": numeric.notna().sum().astype(float),
        }
    )


def _align_metadata(per_query: pd.DataFrame, metadata: pd.DataFrame, column: str) -> pd.Series:
    if column not in metadata.columns:
        raise InputError(
            N_("the query metadata has no column {column!r}"),
            hint=N_("columns: {columns}"),
            params={"column": column, "columns": ", ".join(map(str, metadata.columns))},
        )
    meta = metadata.copy()
    meta.index = meta.index.map(str)
    groups = meta[column].reindex(per_query.index.map(str))
    return groups


def group_means(
    per_query: pd.DataFrame, metadata: pd.DataFrame, column: str, missing_label: str = "(none)"
) -> pd.DataFrame:
    """Mean of every measure per value of a metadata column, with the count of queries.

    Queries without metadata go to the group ``missing_label``. Rows are sorted by group.

    Parameters
    ----------
    per_query : DataFrame
        Index: query id; one column per measure (``Evaluation.per_query``).
    metadata : DataFrame
        Index: query id; columns such as category, difficulty, date.
    column : str
        The column to group by.

    Examples
    --------
    >>> import pandas as pd
    >>> pq = pd.DataFrame({"RR": [1.0, 0.5, 0.0]}, index=["q1", "q2", "q3"])
    >>> meta = pd.DataFrame({"category": ["a", "a", "b"]}, index=["q1", "q2", "q3"])
    >>> group_means(pq, meta, "category").to_dict(orient="index")
    {'a': {'count': 2, 'RR': 0.75}, 'b': {'count': 1, 'RR': 0.0}}
    """
    groups = _align_metadata(per_query, metadata, column)
    keys = groups.astype(object).where(groups.notna(), missing_label).astype(str).to_numpy()
    frame = per_query.copy()
    frame.index = frame.index.map(str)
    numeric = frame.select_dtypes(include=[np.number])
    grouped = numeric.groupby(keys, sort=True)
    out = grouped.mean()
    out.insert(0, "count", grouped.size().astype(int))
    out.index.name = column
    return out


def group_by_category(per_query: pd.DataFrame, metadata: pd.DataFrame, measure: str) -> dict:
    """Mean of ``measure`` per category: {category: mean}."""
    return group_means(per_query, metadata, "category")[measure].to_dict()


def group_by_difficulty(per_query: pd.DataFrame, metadata: pd.DataFrame, measures=None) -> dict:
    """Count and means per difficulty level: {difficulty: {"count": n, measure: mean, ...}}."""
    table = group_means(per_query, metadata, "difficulty")
    cols = ["count"] + list(
        measures if measures is not None else [c for c in table.columns if c != "count"]
    )
    return {
        k: {c: (int(v[c]) if c == "count" else float(v[c])) for c in cols}
        for k, v in table.to_dict(orient="index").items()
    }
