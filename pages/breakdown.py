"""Breakdown: means per category, difficulty or any metadata column; the comparative report."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from metrics_core.report.cells import MISSING
from metrics_core.report.query_report import REPORT_MEASURES, query_report
from metrics_core.report.thesis import display_measure
from ui.common import state
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.common.i18n import gettext as _
from ui.common.i18n import ngettext
from ui.common.style import MEASURE_FORMAT, md_text, natural_rows
from ui.ranking.data import evaluate_loaded, show_unusable, unusable_runs
from ui.ranking.figures import group_bars
from ui.ranking.state import Breakdown
from ui.ranking.tables import breakdown, dated_between, only_queries
from ui.ranking.widgets import measure_chooser, require_data, thresholds_editor

with page(_("Breakdown")) as p:
    if not require_data():
        p.stop()
    meta = st.session_state[state.META]
    if meta is None:
        st.info(_("Load a query metadata table on the Data page (category, difficulty, date, ...) "
                  "to break the results down by group. The sample data has one."))
        p.stop()

    measures = measure_chooser()
    conv = conventions()
    try:
        evaluations = evaluate_loaded(measures, conv)
        report_evs = evaluate_loaded(list(REPORT_MEASURES), conv)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        p.stop()
    unusable = unusable_runs(evaluations)  # no query or no judged document in common: named, left out
    show_unusable(unusable)
    evaluations = {n: e for n, e in evaluations.items() if n not in unusable}
    report_evs = {n: e for n, e in report_evs.items() if n not in unusable}
    if not evaluations:
        p.stop()
    measures = evaluations[next(iter(evaluations))].measures

    # Date-range filter when the queries carry dates.
    selected_ids = None
    if "date" in meta.columns and pd.api.types.is_datetime64_any_dtype(meta["date"]) and meta["date"].notna().any():
        lo, hi = meta["date"].min().date(), meta["date"].max().date()
        picked = st.date_input(_("Queries dated between"), (lo, hi), min_value=lo, max_value=hi,
                               key=Breakdown.DATES)
        if isinstance(picked, (tuple, list)) and len(picked) == 2:
            selected_ids = dated_between(meta, picked[0], picked[1])
            st.caption(_("{n} of {total} queries in the range.").format(n=len(selected_ids), total=len(meta)))

    candidates = [c for c in meta.columns if c not in ("query", "date")]
    default_col = "category" if "category" in candidates else (candidates[0] if candidates else None)
    if default_col is None:
        st.warning(_("The metadata table has no column to group by."))
        p.stop()
    c1, c2 = st.columns(2)
    column = c1.selectbox(_("Group by"), candidates, index=candidates.index(default_col), key=Breakdown.COLUMN)
    chart_measure = c2.selectbox(_("Measure in the chart"), measures, key=Breakdown.MEASURE,
                                 format_func=display_measure)

    long = breakdown(evaluations, meta, column, selected_ids)
    # means per group: the mean of RR reads MRR on screen (the download keeps the canonical names)
    shown_long = long.rename(columns={m: display_measure(m) for m in measures})
    config = {display_measure(m): st.column_config.NumberColumn(format=MEASURE_FORMAT) for m in measures}
    config.update({"run": st.column_config.TextColumn(_("Run"), pinned=True),
                   column: st.column_config.TextColumn(_(column.replace("_", " ").capitalize())),
                   "count": st.column_config.NumberColumn(_("Queries"), format="%d")})
    st.dataframe(shown_long, hide_index=True, column_config=config, placeholder=MISSING)
    download_table(long.set_index(["run", column]), f"breakdown_{column}", conv,
                   title=_("Means by {column}").format(column=column), key="bd")
    st.plotly_chart(group_bars(shown_long, display_measure(chart_measure), column), key=Breakdown.CHART)

    # --- comparative report -------------------------------------------------------------------
    st.header(_("Comparative report"))
    thresholds, ratio = thresholds_editor("breakdown")
    run_name = st.selectbox(_("Run"), list(report_evs), key=Breakdown.REPORT_RUN)
    report_pq = only_queries(report_evs[run_name].per_query, selected_ids)
    report_pq = natural_rows(report_pq)
    report = query_report(report_pq, meta, thresholds, ratio)
    # in the visitor's words: labels, the summary row (the export keeps the library's)
    shown = report.assign(interpretation=[_(v) if v else "" for v in report["interpretation"]])
    shown.loc[shown.index[-1], "ID"] = _("Summary")
    shown.loc[shown.index[-1], "query"] = ngettext("{n} evaluation", "{n} evaluations", len(report_pq)).format(
        n=len(report_pq))
    # one name per measure: the per-query column is RR (its mean over queries, the summary row, is MRR)
    st.dataframe(shown, hide_index=True,
                 column_config={"MRR": st.column_config.NumberColumn("RR", format=MEASURE_FORMAT),
                                "nDCG@10": st.column_config.NumberColumn(format=MEASURE_FORMAT),
                                "P@5": st.column_config.NumberColumn(format=MEASURE_FORMAT),
                                "ID": st.column_config.TextColumn(_("Query"), pinned=True),
                                "query": _("Query text"), "date": _("Date"),
                                "interpretation": _("Interpretation")}, placeholder=MISSING)
    st.caption(_("A row is labelled by its worst measure: Good when every measure meets its threshold. "
                 "Summary: the means over the queries shown (the mean of RR is the MRR)."))
    download_table(report.rename(columns={"MRR": "RR"}).set_index("ID"), f"comparative_report_{run_name}", conv,
                   title=_("Comparative report of {run}").format(run=run_name), key="bd_report")
