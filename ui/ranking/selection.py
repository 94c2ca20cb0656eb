"""The selected query (:data:`ui.common.state.SELECTED_QUERY`), shared by the Per query page
(a row of its table, its query box) and the Compare page (a bar of the per-query chart)."""

from __future__ import annotations

import streamlit as st

from ui.common import state
from ui.ranking.state import PerQuery


def select_query(query_id) -> None:
    """Make ``query_id`` the selected query (None: keep the current one)."""
    if query_id is not None:
        st.session_state[state.SELECTED_QUERY] = str(query_id)


def selected_query() -> str | None:
    return st.session_state.get(state.SELECTED_QUERY)


def picked_table_row(event, index) -> None:
    """Select the query of a newly clicked row of the per-query table (``event``: what
    ``st.dataframe(on_select="rerun")`` returned; ``index``: the table's query ids). A row
    that stays selected does not take the selection back from another page."""
    rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
    picked = str(index[rows[0]]) if rows and rows[0] < len(index) else None
    if picked is not None and st.session_state.get(PerQuery.LAST_ROW) != picked:
        select_query(picked)  # a new row was clicked
    st.session_state[PerQuery.LAST_ROW] = picked


def picked_chart_point(event) -> None:
    """Select the query of a clicked bar (its customdata) of a plotly chart drawn with
    ``on_select="rerun"``."""
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    if points:
        picked = points[0].get("customdata")
        select_query(picked[0] if isinstance(picked, list) else picked)


def sync_query_box(all_queries: list, answered: list) -> None:
    """Point the one-query box at the selected query (from a click here or on another page);
    else keep its query, or open on the first query every shown run answered."""
    selected = selected_query()
    if selected in all_queries:
        st.session_state[PerQuery.QUERY] = selected
    elif st.session_state.get(PerQuery.QUERY) not in all_queries:
        st.session_state[PerQuery.QUERY] = (answered or all_queries)[0]


def query_box_changed() -> None:
    """The one-query box's callback: its query becomes the selected query."""
    select_query(st.session_state[PerQuery.QUERY])


__all__ = [
    "select_query",
    "selected_query",
    "picked_table_row",
    "picked_chart_point",
    "sync_query_box",
    "query_box_changed",
]
