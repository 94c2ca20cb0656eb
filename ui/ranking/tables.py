"""Tables of the ranking pages built from evaluations and query metadata (pure: no
Streamlit): the per-query table with its tie columns and filters (the breakdown's means:
:func:`ui.ranking.data.breakdown`)."""

from __future__ import annotations

import pandas as pd

from ui.common.style import natural_rows
from ui.ranking.ranked_view import TIE_COLUMN, TIE_RANGE_COLUMN, tie_dependent_text

#: Metadata columns shown beside the per-query values.
META_SHOWN = ("query", "category", "difficulty", "date")


def per_query_table(ev, meta: pd.DataFrame | None, bounds: dict | None, measures) -> pd.DataFrame:
    """One row per query (natural order): the metadata shown, then the evaluation's values;
    with the tie bounds (:func:`ui.ranking.data.tie_bounds`), the tie-dependent measures first
    and their ranges last."""
    table = natural_rows(ev.per_query.copy())
    if meta is not None:
        shown_meta = [c for c in META_SHOWN if c in meta.columns]
        table = meta.reindex(table.index)[shown_meta].join(table)
    if bounds is not None:  # the flag first (seen without scrolling), the ranges after the measures
        table.insert(0, TIE_COLUMN, tie_dependent_text(bounds, table.index, measures, ranges=False))
        table[TIE_RANGE_COLUMN] = tie_dependent_text(bounds, table.index, measures)
    return table


def containing(table: pd.DataFrame, text: str) -> pd.DataFrame:
    """The rows whose query id (or query text) contains ``text`` (case-insensitive)."""
    hay = table.index.to_series().astype(str)
    if "query" in table.columns:
        hay = hay + " " + table["query"].astype(str)
    return table[hay.str.contains(text, case=False, regex=False).to_numpy()]


def dated_between(meta: pd.DataFrame, start, end) -> set:
    """Query ids of ``meta`` whose date is in [start, end]."""
    in_range = meta["date"].between(pd.Timestamp(start), pd.Timestamp(end))
    return set(meta.index[in_range.fillna(False).to_numpy()])


__all__ = [
    "per_query_table",
    "containing",
    "dated_between",
    "META_SHOWN",
]
