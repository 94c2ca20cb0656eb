"""Breakdown: means per category, difficulty or any metadata column (the labelled report of each
query is the comparative table's, linked)."""

import pandas as pd
import streamlit as st

from ui.common.downloads import download_table
from ui.common.frame import conventions, page, page_link
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import MEASURE_FORMAT, MISSING, display_measure, plain, say
from ui.ranking.data import breakdown
from ui.ranking.figures import group_bars
from ui.ranking.prologue import ranking_prologue
from ui.ranking.state import Breakdown
from ui.ranking.tables import dated_between
from ui.ranking.widgets import column_label, measure_chooser
from ui.samples import load_every_sample

with page(_("Breakdown")) as p:
    loaded = ranking_prologue(measure_chooser(), conventions(), sample=load_every_sample)
    if loaded is None:
        p.stop()
    meta = loaded.meta
    if not needs(
        meta is not None,
        _(
            "Load a query metadata table on the Data page (category, difficulty, date, ...) "
            "to break the results down by group. The sample data has one."
        ),
    ):
        p.stop()
    evaluations, measures, conv = loaded.evaluations, loaded.measures, loaded.conventions

    # Date-range filter when the queries carry dates.
    selected_ids = None
    if (
        "date" in meta.columns
        and pd.api.types.is_datetime64_any_dtype(meta["date"])
        and meta["date"].notna().any()
    ):
        lo, hi = meta["date"].min().date(), meta["date"].max().date()
        picked = st.date_input(
            _("Queries dated between"), (lo, hi), min_value=lo, max_value=hi, key=Breakdown.DATES
        )
        if isinstance(picked, (tuple, list)) and len(picked) == 2:
            selected_ids = dated_between(meta, picked[0], picked[1])
            st.caption(
                say(_("{n} of {total} queries in the range."), n=len(selected_ids), total=len(meta))
            )

    candidates = [c for c in meta.columns if c not in ("query", "date")]
    default_col = (
        "category" if "category" in candidates else (candidates[0] if candidates else None)
    )
    if default_col is None:
        st.warning(_("The metadata table has no column to group by."))
        p.stop()

    c1, c2 = st.columns(2)
    column = c1.selectbox(
        _("Group by"),
        candidates,
        index=candidates.index(default_col),
        key=Breakdown.COLUMN,
        format_func=column_label,
    )
    chart_measure = c2.selectbox(
        _("Measure in the chart"), measures, key=Breakdown.MEASURE, format_func=display_measure
    )

    long = breakdown(evaluations, meta, column, selected_ids)
    # means per group: the mean of RR reads MRR on screen (the download keeps the canonical names)
    shown_long = long.rename(columns={m: display_measure(m) for m in measures})
    config = {
        display_measure(m): st.column_config.NumberColumn(format=MEASURE_FORMAT) for m in measures
    }
    config.update(
        {
            "run": st.column_config.TextColumn(_("Run"), pinned=True),
            column: st.column_config.TextColumn(column_label(column)),
            "count": st.column_config.NumberColumn(_("Queries"), format="%d"),
        }
    )
    st.dataframe(shown_long, hide_index=True, column_config=config, placeholder=MISSING)
    download_table(
        long.set_index(["run", column]),
        f"breakdown_{column}",
        conv,
        title=plain(_("Means by {column}"), column=column),
        key="bd",
    )
    st.plotly_chart(
        group_bars(shown_long, display_measure(chart_measure), column, column_label(column)),
        key=Breakdown.CHART,
    )

    # --- labels: the comparative table is the one place that labels values ----------------------
    st.subheader(_("Good, Fair or Needs improvement"))
    page_link(
        "pages/table.py",
        _(
            "Each query of a run labelled, with your thresholds and names: Comparative "
            "table, rows “Queries of one loaded run”"
        ),
        ":material/table_chart:",
    )
