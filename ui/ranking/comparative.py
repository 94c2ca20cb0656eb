"""The comparative report: one row per query (ID, query, date, MRR, nDCG@10, P@5,
interpretation) and a summary row. Pure: no Streamlit.

A row's interpretation is the worst of its measures' labels (Good > Fair > Needs
improvement). That rule reproduces the specification's example table, summary row included:
MRR 0.69 is Fair while nDCG@10 0.66 and P@5 0.53 are Good, and the specification labels the
summary "Aceptable" (Fair).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.history import REPORT_MEASURES  # the History report's measures: one list
from metrics_core.report import row_label, worst_labels

DISPLAY = {"RR": "MRR"}


def comparative_report(per_query: pd.DataFrame, meta: pd.DataFrame | None, thresholds: dict,
                       fair_ratio: float = 0.5, measures=REPORT_MEASURES) -> pd.DataFrame:
    """The per-query table with labels and a final ``Summary`` row of the means.

    Parameters
    ----------
    per_query : DataFrame indexed by query id with (at least) the columns ``measures``.
    meta : DataFrame indexed by query id with optional ``query`` and ``date`` columns.
    thresholds : dict measure -> "Good" threshold.
    """
    measures = list(measures)
    ids = per_query.index.astype(str)
    out = pd.DataFrame({"ID": ids})
    meta = meta if meta is not None else pd.DataFrame(index=ids)
    aligned = meta.reindex(ids)
    out["query"] = aligned["query"].astype(object).fillna("").to_numpy() if "query" in aligned else ""
    if "date" in aligned:
        dates = pd.to_datetime(aligned["date"], errors="coerce")
        out["date"] = dates.dt.strftime("%Y-%m-%d").where(dates.notna(), "").to_numpy()
    else:
        out["date"] = ""
    for m in measures:
        out[DISPLAY.get(m, m)] = per_query[m].to_numpy(dtype=float)
    out["interpretation"] = worst_labels({m: per_query[m] for m in measures}, thresholds, fair_ratio)
    means = {m: float(np.nanmean(per_query[m].to_numpy(dtype=float))) if len(per_query) else np.nan
             for m in measures}
    summary = {"ID": "Summary", "query": f"{len(per_query)} evaluations", "date": ""}
    summary.update({DISPLAY.get(m, m): means[m] for m in measures})
    summary["interpretation"] = row_label(means, thresholds, fair_ratio)
    return pd.concat([out, pd.DataFrame([summary])], ignore_index=True)
