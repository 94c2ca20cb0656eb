"""One run's query report: one row per query (ID, query, date, MRR, nDCG@10, P@5,
interpretation) and a summary row (the saved evaluations' report is
:mod:`metrics_core.history.comparative_report`; the runs x measures table of a thesis is
:mod:`metrics_core.report.thesis`).

A row's interpretation is the worst of its measures' labels (Good > Fair > Needs
improvement). That rule reproduces the specification's example table, summary row included:
MRR 0.69 is Fair while nDCG@10 0.66 and P@5 0.53 are Good, and the specification labels the
summary "Aceptable" (Fair).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.report.labels import REPORT_MEASURES, row_label, worst_labels

#: Column names of the report where they differ from the measure's name.
DISPLAY = {"RR": "MRR"}


def query_report(
    per_query: pd.DataFrame,
    meta: pd.DataFrame | None,
    thresholds: Mapping[str, float],
    fair_ratio: float = 0.5,
    measures: Sequence[str] = REPORT_MEASURES,
) -> pd.DataFrame:
    """The per-query table with labels and a final ``Summary`` row of the means.

    Parameters
    ----------
    per_query : pandas.DataFrame
        Indexed by query id, with (at least) the columns ``measures``.
    meta : pandas.DataFrame or None
        Indexed by query id, with optional ``query`` (text) and ``date`` columns.
    thresholds : mapping
        Measure -> "Good" threshold (:data:`metrics_core.report.DEFAULT_GOOD_THRESHOLDS`).
    fair_ratio : float
        "Fair" from ``threshold * fair_ratio`` (see :func:`metrics_core.report.interpret`).
    measures : sequence of str
        The measure columns, in order (RR is shown as MRR).

    Returns
    -------
    pandas.DataFrame
        Columns ID, query, date (YYYY-MM-DD, "" when absent or unreadable), one per
        measure, interpretation (the row's worst label). The last row, ID "Summary",
        holds the mean of each measure over the queries (NaN skipped), "N evaluations"
        and the label of those means.

    Examples
    --------
    >>> pq = pd.DataFrame({"RR": [1.0, 0.5], "nDCG@10": [0.8, 0.3], "P@5": [0.6, 0.2]},
    ...                   index=["q1", "q2"])
    >>> meta = pd.DataFrame({"query": ["cheap flights"], "date": ["2024-03-01"]}, index=["q1"])
    >>> out = query_report(pq, meta, {"RR": 0.7, "nDCG@10": 0.6, "P@5": 0.5})
    >>> out[["ID", "query", "date", "MRR", "interpretation"]].values.tolist()
    [['q1', 'cheap flights', '2024-03-01', 1.0, 'Good'], ['q2', '', '', 0.5, 'Needs improvement'], \
['Summary', '2 evaluations', '', 0.75, 'Fair']]
    """
    measures = list(measures)
    ids = per_query.index.astype(str)
    out = pd.DataFrame({"ID": ids})
    meta = meta if meta is not None else pd.DataFrame(index=ids)
    aligned = meta.reindex(ids)
    out["query"] = (
        aligned["query"].astype(object).fillna("").to_numpy() if "query" in aligned else ""
    )
    if "date" in aligned:
        dates = pd.to_datetime(aligned["date"], errors="coerce")
        out["date"] = dates.dt.strftime("%Y-%m-%d").where(dates.notna(), "").to_numpy()
    else:
        out["date"] = ""
    for m in measures:
        out[DISPLAY.get(m, m)] = per_query[m].to_numpy(dtype=float)
    out["interpretation"] = worst_labels(
        {m: per_query[m] for m in measures}, thresholds, fair_ratio
    )
    means = {
        m: float(np.nanmean(per_query[m].to_numpy(dtype=float))) if len(per_query) else np.nan
        for m in measures
    }
    summary: dict[str, object] = {
        "ID": "Summary",
        "query": f"{len(per_query)} evaluations",
        "date": "",
    }
    summary.update({DISPLAY.get(m, m): means[m] for m in measures})
    summary["interpretation"] = row_label(means, thresholds, fair_ratio)
    return pd.concat([out, pd.DataFrame([summary])], ignore_index=True)


__all__ = ["query_report", "DISPLAY", "REPORT_MEASURES"]
