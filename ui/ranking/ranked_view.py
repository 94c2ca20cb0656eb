"""One query's ranked list on screen: its relevance colours and the tie columns' words
(the list itself and the relevant documents it missed: :func:`ui.ranking.data.one_query`).

Pure functions (no Streamlit): the per-query page and the tests call them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.report.cells import is_missing
from ui.common.i18n import N_
from ui.common.i18n import gettext as _
from ui.common.style import MEASURE_FORMAT
from ui.ranking.figures import RELEVANCE_COLOURS


def relevance_colour(value, max_label: float = 3.0) -> str:
    """CSS for a relevance cell: grey when unjudged, greener when more relevant."""
    if is_missing(value):
        return "color: #999999"
    if value <= 0:
        return f"background-color: {RELEVANCE_COLOURS[0]}"
    step = 1 + int(
        round((len(RELEVANCE_COLOURS) - 2) * min(float(value), max_label) / max(max_label, 1))
    )
    colour = RELEVANCE_COLOURS[min(step, len(RELEVANCE_COLOURS) - 1)]
    text = "white" if step >= len(RELEVANCE_COLOURS) - 2 else "black"
    return f"background-color: {colour}; color: {text}"


def styled_ranking(ranking: pd.DataFrame, max_label: float = 3.0):
    """pandas Styler of a ranked list: relevance coloured (no HTML from user text); scores
    with the decimals of every number of the app's tables (``MEASURE_FORMAT``), so a column
    of 10, 9.8 and 9.61 reads 10.0000, 9.8000, 9.6100."""
    labels = ranking["relevance"]

    def row_style(row):
        css = relevance_colour(labels.loc[row.name], max_label)
        return [css] * len(row)

    # a grid draws a missing label with the table's placeholder (the page passes "unjudged")
    return ranking.style.apply(row_style, axis=1).format(
        {"score": MEASURE_FORMAT.__mod__, "relevance": "{:g}"}, na_rep=_("unjudged")
    )


#: Column names of the per-query table's tie columns, and their headers on screen.
TIE_COLUMN = "Tie-dependent"
TIE_RANGE_COLUMN = "Min–max over tie orders"
TIE_LABEL = N_("Depends on tie order")
TIE_RANGE_LABEL = N_("Range over tie orders")


def tie_dependent_text(bounds: dict | None, query_ids, measures, ranges: bool = True) -> pd.Series:
    """Per query, the measures whose value depends on the order of tied scores, from their tie
    bounds (:func:`ui.ranking.data.tie_bounds`: per covered measure, the minimum and the
    maximum over every order, Series indexed by query id), each with its minimum–maximum
    when ``ranges``: e.g. ``"AP 0.4854–0.4891"`` (``"AP"`` without); "" where no measure
    does (or the bounds lack the query)."""
    index = pd.Index(query_ids)
    if bounds is None:
        return pd.Series("", index=index, dtype=object)
    parts: list[list[str]] = [[] for _ in range(len(index))]
    found: dict[int, np.ndarray] = {}  # the bounds of every measure share one query index
    for m in measures:
        if m not in bounds:
            continue
        lo_all, hi_all = bounds[m]
        # positions by the index's hash table (pandas' isin on Arrow strings builds a Python
        # scalar per id, for every measure)
        where = found.get(id(lo_all.index))
        if where is None:
            where = found[id(lo_all.index)] = lo_all.index.get_indexer(index)
        there = where >= 0
        if not there.any():
            continue
        lo = lo_all.to_numpy(dtype=float)[where]  # -1 (not there) picks a value masked below
        hi = hi_all.to_numpy(dtype=float)[where]
        for i in np.flatnonzero(there & ~(lo == hi)):
            parts[i].append(f"{m} {lo[i]:.4f}–{hi[i]:.4f}" if ranges else m)
    return pd.Series([" · ".join(p) for p in parts], index=index, dtype=object)
