"""Per query: the per-query table, a measure's distribution, and one query's rankings."""

import pandas as pd
import streamlit as st

from ui.common import state
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.common.i18n import gettext as _
from ui.common.style import MEASURE_FORMAT, MISSING, md_join, natural_sorted, plain, say
from ui.ranking.data import one_query, tie_bounds, too_large_for_ties
from ui.ranking.figures import distribution
from ui.ranking.prologue import ranking_prologue
from ui.ranking.ranked_view import (
    TIE_COLUMN,
    TIE_LABEL,
    TIE_RANGE_COLUMN,
    TIE_RANGE_LABEL,
    styled_ranking,
    tie_dependent_text,
)
from ui.ranking.selection import picked_table_row, query_box_changed, sync_query_box
from ui.ranking.state import PerQuery
from ui.ranking.tables import containing, per_query_table
from ui.ranking.widgets import measure_chooser
from ui.samples import load_every_sample

with page(_("Per query")) as p:
    loaded = ranking_prologue(measure_chooser(), conventions(), sample=load_every_sample)
    if loaded is None:
        p.stop()
    evaluations, measures, conv = loaded.evaluations, loaded.measures, loaded.conventions
    meta = st.session_state[state.META]
    runs = st.session_state[state.RUNS]
    qrels = st.session_state[state.QRELS]

    # --- table ---------------------------------------------------------------------------
    run_name = st.selectbox(_("Run"), list(evaluations), key=PerQuery.RUN)
    ev = evaluations[run_name]
    with st.spinner(_("Computing the tie report ...")):
        reports = tie_bounds(evaluations)  # the Overview's, when it was opened first
    report = reports.get(run_name)
    table = per_query_table(ev, meta, report, measures)

    f1, f2, f3 = st.columns(3)
    text = f1.text_input(_("Filter: query id or text contains"), key=PerQuery.FILTER)
    if text:
        table = containing(table, text)
    if meta is not None and "category" in table.columns:
        cats = natural_sorted(table["category"].dropna().astype(str).unique())
        picked = f2.multiselect(
            _("Category"), cats, key=PerQuery.CATEGORIES, placeholder=_("Choose options")
        )
        if picked:
            table = table[table["category"].astype(str).isin(picked)]
    measure = f3.selectbox(
        _("Measure for the range filter and the distribution"), measures, key=PerQuery.MEASURE
    )
    values = table[measure].dropna()
    if len(values) and values.min() < values.max():
        lo, hi = st.slider(
            say(_("{measure} between"), measure=measure),
            float(values.min()),
            float(values.max()),
            (float(values.min()), float(values.max())),
            key=PerQuery.RANGE,
        )
        table = table[(table[measure] >= lo) & (table[measure] <= hi) | table[measure].isna()]

    if report is not None and st.toggle(
        _("Only queries whose value depends on the order of tied scores"), key=PerQuery.TIED_ONLY
    ):
        table = table[table[TIE_COLUMN] != ""]
    shown = [
        say(
            _(
                "{n} of {total} queries; click a column header to sort, select a row to inspect "
                "that query below."
            ),
            n=len(table),
            total=len(ev.per_query),
        )
    ]
    if report is not None:
        shown.append(
            say(
                _(
                    "{tied}: the measures whose value changes with the order of tied scores; "
                    "{range} (last column): their minimum–maximum over every order."
                ),
                tied=_(TIE_LABEL),
                range=_(TIE_RANGE_LABEL),
            )
        )
    st.caption(md_join(shown, " "))
    if report is None:
        st.caption(too_large_for_ties({run_name: None}))
    config = {m: st.column_config.NumberColumn(format=MEASURE_FORMAT) for m in measures}
    config["_index"] = st.column_config.TextColumn(_("Query"), pinned=True)
    config[TIE_COLUMN] = st.column_config.TextColumn(
        _(TIE_LABEL), help=_("Measures whose value changes with the order of tied scores")
    )
    config[TIE_RANGE_COLUMN] = st.column_config.TextColumn(
        _(TIE_RANGE_LABEL),
        help=_(
            "Minimum–maximum of each measure whose value depends on the order of tied scores, over every order"
        ),
    )
    config.update(
        {
            c: _(label)
            for c, label in (
                ("query", "Query text"),
                ("category", "Category"),
                ("difficulty", "Difficulty"),
            )
            if c in table.columns
        }
    )
    if "date" in table.columns:
        config["date"] = st.column_config.DateColumn(_("Date"), format="YYYY-MM-DD")
    event = st.dataframe(
        table,
        on_select="rerun",
        selection_mode="single-row",
        key=PerQuery.TABLE,
        column_config=config,
        placeholder=MISSING,
    )
    download_table(
        table.drop(columns=[TIE_COLUMN, TIE_RANGE_COLUMN], errors="ignore"),
        f"per_query_{run_name}",
        conv,
        title=plain(_("Per-query values of {run}"), run=run_name),
        key="pq",
    )
    picked_table_row(event, table.index)

    # --- distribution --------------------------------------------------------------------
    @st.fragment
    def _distribution() -> None:
        kind = st.radio(
            _("Chart"),
            ["box", "histogram"],
            horizontal=True,
            key=PerQuery.CHART_KIND,
            format_func=lambda k: {"box": _("box"), "histogram": _("histogram")}[k],
        )
        st.plotly_chart(
            distribution({n: e.per_query[measure] for n, e in evaluations.items()}, measure, kind),
            key=PerQuery.DISTRIBUTION,
        )

    _distribution()

    # --- one query -----------------------------------------------------------------------
    st.header(_("One query"))
    all_queries = natural_sorted(ev.per_query.index)
    names = list(evaluations)
    shown_runs = [
        st.session_state.get(PerQuery.side(i), names[min(i, len(names) - 1)]) for i in range(2)
    ]
    shown_runs = [n for n in shown_runs if n in evaluations]
    # Open on a query every shown run retrieved (and the qrels judge), in natural order.
    retrieved = [set(runs[n].unique_query_ids()) for n in shown_runs]
    answered = [q for q in all_queries if all(q in r for r in retrieved)]
    # The box follows the selected query (set by a table click or by another page).
    sync_query_box(all_queries, answered)
    qid = st.selectbox(
        _("Query"),
        all_queries,
        key=PerQuery.QUERY,
        on_change=query_box_changed,
        format_func=lambda q: (
            f"{q}: {meta.loc[q, 'query']}"
            if meta is not None and "query" in meta.columns and q in meta.index
            else str(q)
        ),
    )
    # the depth above the two rankings it cuts (drawn after the columns, it sat below both)
    depth = int(st.number_input(_("Show the top"), 1, 10000, 20, key=PerQuery.DEPTH))
    c1, c2 = st.columns(2)
    pairs = [(c1, names[0]), (c2, names[1] if len(names) > 1 else names[0])]
    max_label = float(max(qrels.relevance.max(), 1.0)) if len(qrels) else 1.0
    for i, (col, default) in enumerate(pairs):
        with col:
            name = st.selectbox(
                say(_("Run {side}"), side="AB"[i]),
                names,
                index=names.index(default),
                key=PerQuery.side(i),
            )
            e = evaluations[name]
            ranking, sizes, missed = one_query(e, runs[name], qrels, qid, conv.relevance_threshold)
            shown = ranking.head(depth).assign(
                # the count alone, under the heading "Tied": "3 tied" made the column wider than
                # its heading, the two rankings wider than their half of an 800 px page
                tied=[str(k) if k > 1 else "" for k in sizes[:depth]]
            )
            if qid in e.per_query.index:
                st.write(" · ".join(f"{m} = {e.per_query.loc[qid, m]:.4f}" for m in measures[:4]))
                tied_here = tie_dependent_text(reports.get(name), [qid], measures).iloc[0]
                if tied_here:
                    st.caption(
                        say(
                            _("Depends on the order of tied scores (minimum–maximum): {ranges}."),
                            ranges=tied_here,
                        )
                    )
                if qid not in set(runs[name].unique_query_ids()):
                    st.caption(
                        say(
                            _(
                                "{run} has no ranking for this query (scored 0: absent queries score 0)."
                            ),
                            run=name,
                        )
                    )
            else:
                st.write(say(_("{run} has no ranking for this query."), run=name))
            st.dataframe(
                styled_ranking(shown, max_label),
                hide_index=True,
                key=PerQuery.ranking(i),
                # "judged" repeats the relevance column's "unjudged": left out, the two rankings
                # side by side fit their half of the page (a column was cut at 1280 px)
                column_order=["rank", "doc_id", "score", "relevance", "tied"],
                column_config={
                    "rank": st.column_config.NumberColumn(_("Rank"), format="%d", pinned=True),
                    "doc_id": _("Document"),
                    "score": _("Score"),
                    "relevance": _("Relevance"),
                    "tied": st.column_config.TextColumn(
                        _("Tied"),
                        alignment="right",  # a count, aligned as the numbers beside it
                        help=_(
                            "Documents sharing this score (how many): their "
                            "order here is the tie rule's, set in the sidebar"
                        ),
                    ),
                },
                placeholder=_("unjudged"),
            )
            download_table(
                ranking.set_index("rank"),
                f"ranking_{name}_{qid}",
                conv,
                title=plain(_("Ranking of {run} for query {query}"), run=name, query=qid),
                key=f"ranking{i}",
            )
            st.markdown(
                say(
                    _("**Relevant documents {run} did not retrieve** ({n})"),
                    run=name,
                    n=len(missed),
                )
            )
            if len(missed):
                st.dataframe(
                    missed,
                    hide_index=True,
                    key=PerQuery.missed(i),
                    column_config={"doc_id": _("Document"), "relevance": _("Relevance")},
                    placeholder=MISSING,
                )
                download_table(
                    pd.DataFrame(missed).set_index("doc_id"),
                    f"missed_{name}_{qid}",
                    conv,
                    key=f"missed{i}",
                )
