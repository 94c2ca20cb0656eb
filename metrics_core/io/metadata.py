"""Query metadata: one row per query (category, difficulty, date, text ...), any table format.

>>> meta = read_metadata(b"qid,category,date\\nq1,a,2025-01-02\\n", "queries.csv")
>>> meta.index.tolist(), meta.loc["q1", "category"]
(['q1'], 'a')
"""

from __future__ import annotations

import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.io.source import read_source
from metrics_core.io.tables import read_table_frame

#: column names taken as the query id, in order
QUERY_ID_NAMES = ("query_id", "qid", "id", "topic")


def read_metadata(data, filename: str = "<metadata>", index_col: str | None = None) -> pd.DataFrame:
    """Query metadata table (CSV/TSV/JSON/JSON Lines/Parquet) indexed by query id (as text).

    The index column is ``index_col`` or the first of query_id/qid/id/topic found. A
    ``date`` column is parsed to datetimes (unparseable dates become NaT).
    """
    raw = read_source(data, filename)
    frame, _ = read_table_frame(raw)
    if not isinstance(frame, pd.DataFrame):  # a JSON document: records or columns
        try:
            frame = pd.DataFrame(frame)
        except (ValueError, TypeError):
            raise InputError(
                N_("the metadata JSON is not a table"),
                source=raw.name,
                hint=N_("Give a list of records, one per query"),
            ) from None
    if frame.empty:
        raise InputError(N_("the metadata table has no rows"), source=raw.name)
    lower = {str(c).lower(): c for c in frame.columns}
    if index_col is None:
        index_col = next((lower[n] for n in QUERY_ID_NAMES if n in lower), None)
    if index_col is None or index_col not in frame.columns:
        raise InputError(
            N_("no query id column in the metadata table"),
            source=raw.name,
            hint=N_(
                "columns found: {columns}. Name one query_id (or choose it in the column mapping)"
            ),
            params={"columns": ", ".join(map(str, frame.columns))},
        )
    frame = frame.copy()
    frame.index = frame.pop(index_col).astype(str)
    frame.index.name = "query_id"
    if frame.index.duplicated().any():
        dup = frame.index[frame.index.duplicated()][0]
        raise InputError(
            N_("query {query} appears twice in the metadata table"),
            source=raw.name,
            params={"query": repr(dup)},
        )
    if "date" in frame.columns:
        frame["date"] = pd.to_datetime(frame["date"], errors="coerce")
    return frame
