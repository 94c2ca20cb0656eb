"""Per-query differences between a run and a baseline on one measure."""

from __future__ import annotations

import pandas as pd


def per_query_deltas(
    baseline: pd.DataFrame | pd.Series, run: pd.DataFrame | pd.Series, measure: str | None = None
) -> pd.Series:
    """``run - baseline`` on every query both have a value for, losses first.

    Parameters
    ----------
    baseline, run : DataFrame or Series
        Per-query values indexed by query id: a ``per_query`` table (then ``measure`` names
        its column) or one measure's Series.
    measure : str, optional
        The column of ``baseline`` and ``run`` (required for DataFrames).

    Returns
    -------
    pandas.Series
        Named ``"delta"``, indexed by query id: the queries where both values are present
        (NaN on either side leaves the query out), sorted by delta ascending, equal deltas
        by query id (as text).

    Examples
    --------
    >>> b = pd.Series({"q1": 0.5, "q2": 0.2, "q3": 0.4, "q4": float("nan")})
    >>> r = pd.Series({"q1": 0.5, "q2": 0.6, "q3": 0.1, "q4": 1.0})
    >>> per_query_deltas(b, r).round(4).to_dict()
    {'q3': -0.3, 'q1': 0.0, 'q2': 0.4}
    """
    if isinstance(baseline, pd.DataFrame):
        baseline = baseline[measure]
    if isinstance(run, pd.DataFrame):
        run = run[measure]
    b = baseline.dropna()
    r = run.dropna()
    common = b.index.intersection(r.index)
    delta = (r.loc[common] - b.loc[common]).rename("delta")
    frame = (
        delta.to_frame().assign(qid=common.astype(str)).sort_values(["delta", "qid"], kind="stable")
    )
    return frame["delta"]


__all__ = ["per_query_deltas"]
