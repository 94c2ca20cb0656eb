"""Per query: the per-query table, a measure's distribution, and one query's rankings."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from ui.common import state
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.common.style import MEASURE_FORMAT, natural_sorted
from ui.ranking.data import evaluate_loaded, tie_reports, too_large_for_ties
from ui.ranking.figures import distribution
from ui.ranking.ranked_view import (
    TIE_COLUMN,
    TIE_RANGE_COLUMN,
    missed_relevant,
    query_ranking,
    styled_ranking,
    tie_dependent_text,
)
from ui.ranking.selection import picked_table_row, query_box_changed, sync_query_box
from ui.ranking.state import PerQuery
from ui.ranking.tables import containing, per_query_table
from ui.ranking.widgets import measure_chooser, require_data

with page("Per query") as p:
    if not require_data():
        p.stop()

    measures = measure_chooser()
    conv = conventions()
    try:
        evaluations = evaluate_loaded(measures, conv)
    except InputError as exc:
        st.error(str(exc))
        p.stop()
    measures = evaluations[next(iter(evaluations))].measures
    meta = st.session_state[state.META]
    runs = st.session_state[state.RUNS]
    qrels = st.session_state[state.QRELS]

    # --- table ---------------------------------------------------------------------------
    run_name = st.selectbox("Run", list(evaluations), key=PerQuery.RUN)
    ev = evaluations[run_name]
    with st.spinner("Computing the tie report ..."):
        reports = tie_reports(evaluations)
    report = reports.get(run_name)
    table = per_query_table(ev, meta, report, measures)

    f1, f2, f3 = st.columns(3)
    text = f1.text_input("Filter: query id or text contains", key=PerQuery.FILTER)
    if text:
        table = containing(table, text)
    if meta is not None and "category" in table.columns:
        cats = natural_sorted(table["category"].dropna().astype(str).unique())
        picked = f2.multiselect("Category", cats, key=PerQuery.CATEGORIES)
        if picked:
            table = table[table["category"].astype(str).isin(picked)]
    measure = f3.selectbox("Measure for the range filter and the distribution", measures, key=PerQuery.MEASURE)
    values = table[measure].dropna()
    if len(values) and values.min() < values.max():
        lo, hi = st.slider(f"{measure} between", float(values.min()), float(values.max()),
                           (float(values.min()), float(values.max())), key=PerQuery.RANGE)
        table = table[(table[measure] >= lo) & (table[measure] <= hi) | table[measure].isna()]

    if report is not None and st.toggle("Only queries whose value depends on the order of tied scores",
                                       key=PerQuery.TIED_ONLY):
        table = table[table[TIE_COLUMN] != ""]
    st.caption(f"{len(table)} of {len(ev.per_query)} queries; click a column header to sort, "
               "select a row to inspect that query below."
               + (f" {TIE_COLUMN}: the measures whose value changes with the order of tied scores; "
                  f"{TIE_RANGE_COLUMN} (last column): their minimum–maximum over every order."
                  if report is not None else ""))
    if report is None:
        st.caption(too_large_for_ties({run_name: None}))
    config = {m: st.column_config.NumberColumn(format=MEASURE_FORMAT) for m in measures}
    config["_index"] = st.column_config.TextColumn("Query", pinned=True)
    config[TIE_COLUMN] = st.column_config.TextColumn(TIE_COLUMN, help="Measures whose value changes with the "
                                                     "order of tied scores")
    config[TIE_RANGE_COLUMN] = st.column_config.TextColumn(TIE_RANGE_COLUMN, help="Minimum–maximum of each "
                                                           "tie-dependent measure over every order of tied scores")
    config.update({c: label for c, label in (("query", "Query text"), ("category", "Category"),
                                             ("difficulty", "Difficulty")) if c in table.columns})
    if "date" in table.columns:
        config["date"] = st.column_config.DateColumn("Date", format="YYYY-MM-DD")
    event = st.dataframe(table, on_select="rerun", selection_mode="single-row", key=PerQuery.TABLE,
                         column_config=config)
    download_table(table.drop(columns=[TIE_COLUMN, TIE_RANGE_COLUMN], errors="ignore"), f"per_query_{run_name}", conv,
                   title=f"Per-query values of {run_name}", key="pq")
    picked_table_row(event, table.index)

    # --- distribution --------------------------------------------------------------------
    @st.fragment
    def _distribution() -> None:
        kind = st.radio("Chart", ["box", "histogram"], horizontal=True, key=PerQuery.CHART_KIND)
        st.plotly_chart(distribution({n: e.per_query[measure] for n, e in evaluations.items()}, measure, kind),
                        key=PerQuery.DISTRIBUTION)

    _distribution()

    # --- one query -----------------------------------------------------------------------
    st.header("One query")
    all_queries = natural_sorted(ev.per_query.index)
    names = list(evaluations)
    shown_runs = [st.session_state.get(PerQuery.side(i), names[min(i, len(names) - 1)]) for i in range(2)]
    shown_runs = [n for n in shown_runs if n in runs]
    # Open on a query every shown run retrieved (and the qrels judge), in natural order.
    retrieved = [set(runs[n].unique_query_ids()) for n in shown_runs]
    answered = [q for q in all_queries if all(q in r for r in retrieved)]
    # The box follows the selected query (set by a table click or by another page).
    sync_query_box(all_queries, answered)
    qid = st.selectbox("Query", all_queries, key=PerQuery.QUERY, on_change=query_box_changed,
                       format_func=lambda q: f"{q}: {meta.loc[q, 'query']}" if meta is not None
                       and "query" in meta.columns and q in meta.index else str(q))
    c1, c2 = st.columns(2)
    pairs = [(c1, names[0]), (c2, names[1] if len(names) > 1 else names[0])]
    depth = int(st.number_input("Show the top", 1, 10000, 20, key=PerQuery.DEPTH))
    max_label = float(max(qrels.relevance.max(), 1.0)) if len(qrels) else 1.0
    for i, (col, default) in enumerate(pairs):
        with col:
            name = st.selectbox(f"Run {'AB'[i]}", names, index=names.index(default), key=PerQuery.side(i))
            e = evaluations[name]
            ranked = query_ranking(e, runs[name], qrels, qid)
            ranking, sizes = ranked.ranking(qid), ranked.tie_sizes(qid)
            shown = ranking.head(depth).assign(tied=[f"{k} tied" if k > 1 else "" for k in sizes[:depth]])
            if qid in e.per_query.index:
                st.write(" · ".join(f"{m} = {e.per_query.loc[qid, m]:.4f}" for m in measures[:4]))
                tied_here = tie_dependent_text(reports.get(name), [qid], measures).iloc[0]
                if tied_here:
                    st.caption(f"Depends on the order of tied scores (minimum–maximum): {tied_here}.")
                if qid not in set(runs[name].unique_query_ids()):
                    st.caption(f"{name} has no ranking for this query (scored 0: absent queries score 0).")
            else:
                st.write(f"{name} has no ranking for this query.")
            st.dataframe(styled_ranking(shown, max_label), hide_index=True,
                         key=PerQuery.ranking(i),
                         column_config={"rank": st.column_config.NumberColumn("Rank", format="%d", pinned=True),
                                        "doc_id": "Document", "score": "Score", "relevance": "Relevance",
                                        "judged": "Judged", "tied": st.column_config.TextColumn(
                                            "Tied", help="Documents sharing this score (how many): their order "
                                                         "here is the tie rule's, set in the sidebar")})
            download_table(ranking.set_index("rank"), f"ranking_{name}_{qid}", conv,
                           title=f"Ranking of {name} for query {qid}", key=f"ranking{i}")
            missed = missed_relevant(qrels, ranking, qid, conv.relevance_threshold)
            st.markdown(f"**Relevant documents {name} did not retrieve** ({len(missed)})")
            if len(missed):
                st.dataframe(missed, hide_index=True, key=PerQuery.missed(i),
                             column_config={"doc_id": "Document", "relevance": "Relevance"})
                download_table(pd.DataFrame(missed).set_index("doc_id"), f"missed_{name}_{qid}", conv,
                               key=f"missed{i}")
