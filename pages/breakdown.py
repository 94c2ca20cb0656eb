"""Breakdown: means per category, difficulty or any metadata column; seed 001's report."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from metrics_core.stats.aggregate import group_means
from ui import state
from ui.comparative import REPORT_MEASURES, comparative_report
from ui.exports import download_table
from ui.figures_ranking import group_bars
from ui.frame import conventions, page_setup
from ui.ranking_data import evaluate_loaded, require_data
from ui.ranking_widgets import measure_chooser, thresholds_editor

page_setup()
st.title("Breakdown")
if not require_data():
    st.stop()
meta = st.session_state[state.META]
if meta is None:
    st.info("Load a query metadata table on the Data page (category, difficulty, date, ...) "
            "to break the results down by group. The sample data has one.")
    st.stop()

measures = measure_chooser()
conv = conventions()
try:
    evaluations = evaluate_loaded(measures, conv)
    report_evs = evaluate_loaded(list(REPORT_MEASURES), conv)
except InputError as exc:
    st.error(str(exc))
    st.stop()
measures = evaluations[next(iter(evaluations))].measures

# Date-range filter when the queries carry dates.
selected_ids = None
if "date" in meta.columns and pd.api.types.is_datetime64_any_dtype(meta["date"]) and meta["date"].notna().any():
    lo, hi = meta["date"].min().date(), meta["date"].max().date()
    picked = st.date_input("Queries dated between", (lo, hi), min_value=lo, max_value=hi,
                           key="ranklab.bd.dates")
    if isinstance(picked, (tuple, list)) and len(picked) == 2:
        start, end = pd.Timestamp(picked[0]), pd.Timestamp(picked[1])
        in_range = meta["date"].between(start, end)
        selected_ids = set(meta.index[in_range.fillna(False).to_numpy()])
        st.caption(f"{len(selected_ids)} of {len(meta)} queries in the range.")


def _filtered(per_query: pd.DataFrame) -> pd.DataFrame:
    if selected_ids is None:
        return per_query
    return per_query[per_query.index.astype(str).isin(selected_ids)]


candidates = [c for c in meta.columns if c not in ("query", "date")]
default_col = "category" if "category" in candidates else (candidates[0] if candidates else None)
if default_col is None:
    st.warning("The metadata table has no column to group by.")
    st.stop()
c1, c2 = st.columns(2)
column = c1.selectbox("Group by", candidates, index=candidates.index(default_col), key="ranklab.bd.column")
chart_measure = c2.selectbox("Measure in the chart", measures, key="ranklab.bd.measure")

parts = []
for name, ev in evaluations.items():
    g = group_means(_filtered(ev.per_query), meta, column)
    g.insert(0, "run", name)
    parts.append(g.reset_index())
long = pd.concat(parts, ignore_index=True)
long[column] = long[column].astype(str)
st.dataframe(long, hide_index=True,
             column_config={m: st.column_config.NumberColumn(format="%.4f") for m in measures})
download_table(long.set_index(["run", column]), f"breakdown_{column}", conv,
               title=f"Means by {column}", key="bd")
st.plotly_chart(group_bars(long, chart_measure, column), key="ranklab.bd.chart")

# --- seed 001's comparative report ------------------------------------------------------
st.header("Comparative report")
thresholds, ratio = thresholds_editor("breakdown")
run_name = st.selectbox("Run", list(report_evs), key="ranklab.bd.report_run")
report = comparative_report(_filtered(report_evs[run_name].per_query), meta, thresholds, ratio)
st.dataframe(report, hide_index=True,
             column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("MRR", "nDCG@10", "P@5")})
st.caption("A row is labelled by its worst measure: Good when every measure meets its threshold.")
download_table(report.set_index("ID"), f"comparative_report_{run_name}", conv,
               title=f"Comparative report of {run_name}", key="bd_report")
