"""Overview: every chosen measure for every loaded run, with bootstrap CIs and labels."""

import streamlit as st

from metrics_core.errors import InputError
from ui.exports import download_table
from ui.figures_ranking import overview_bars
from ui.frame import conventions, page_setup
from ui.ranking_data import evaluate_loaded, require_data
from ui.ranking_widgets import history_save_hook, measure_chooser, summary_table, thresholds_editor

page_setup()
st.title("Overview")
if not require_data():
    st.stop()

measures = measure_chooser()
c1, c2, c3 = st.columns(3)
n_resamples = int(c1.number_input("Bootstrap resamples", 100, 20000, 1000, step=100,
                                  key="ranklab.overview.resamples"))
confidence = float(c2.select_slider("Confidence", [0.8, 0.9, 0.95, 0.99], value=0.95,
                                    key="ranklab.overview.confidence"))
seed = int(c3.number_input("Seed", 0, 2**31 - 1, 0, key="ranklab.overview.seed"))
thresholds, ratio = thresholds_editor("overview")

conv = conventions()
try:
    with st.spinner("Evaluating ..."):
        evaluations = evaluate_loaded(measures, conv)
except InputError as exc:
    st.error(str(exc))
    st.stop()

table = summary_table(evaluations, thresholds, ratio, n_resamples, confidence, seed)
headline = evaluations[next(iter(evaluations))].measures[0]
cards = st.columns(min(len(evaluations), 4))
for i, (name, ev) in enumerate(list(evaluations.items())[:4]):
    label = table[(table["run"] == name) & (table["measure"] == headline)]["interpretation"].iloc[0]
    cards[i].metric(f"{name} · {headline}", f"{ev.aggregate[headline]:.4f}", help=label or None)
st.dataframe(
    table, hide_index=True,
    column_config={c: st.column_config.NumberColumn(format="%.4f")
                   for c in ("aggregate", "mean", "median", "ci_low", "ci_high")},
)
st.caption(f"aggregate: the run's value as trec_eval reports it (mean over the evaluated queries; "
           f"sums for counts; geometric mean for GMAP). CI: percentile bootstrap of the mean, "
           f"{n_resamples} resamples of the queries, seed {seed}.")
download_table(table.set_index(["run", "measure"]), "overview", conv, title="Overview",
               key="overview", bootstrap=f"{n_resamples} resamples, {confidence:.0%}, seed {seed}")

wide = table.pivot(index="run", columns="measure", values="aggregate")[list(evaluations[next(iter(evaluations))].measures)]
with st.expander("Runs × measures (aggregate)"):
    st.dataframe(wide, column_config={c: st.column_config.NumberColumn(format="%.4f") for c in wide.columns})
    download_table(wide, "overview_wide", conv, title="Runs by measure", key="overview_wide")

chart_measures = st.multiselect("Measures in the chart", list(wide.columns),
                                default=[m for m in wide.columns if not m.startswith("Num")][:8],
                                key="ranklab.overview.chart_measures")
if chart_measures:
    st.plotly_chart(overview_bars(table[table["measure"].isin(chart_measures)]), key="ranklab.overview.chart")

history_save_hook(evaluations, conv)
