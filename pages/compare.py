"""Compare systems: every run against a baseline, per-query deltas, folds and criteria."""

from ui.frame import page_setup

page_setup()

import json  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

import metrics_core as mc  # noqa: E402
from metrics_core.cli.evaluate import evaluations_json  # noqa: E402
from metrics_core.report import format_table, json_safe, provenance  # noqa: E402
from metrics_core.stats import folds  # noqa: E402
from metrics_core.stats.comparison import (  # noqa: E402
    TESTS,
    compare_runs,
    comparison_records,
    markers_legend,
    paper_table,
)
from metrics_core.stats.significance import CORRECTIONS  # noqa: E402
from ui import compare_state, state  # noqa: E402
from ui import figures_compare as figs  # noqa: E402

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10", "RR"]
CORRECTION_LABELS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg (FDR)",
                     "none": "none"}



@st.cache_data(show_spinner="Running the significance tests ...", max_entries=8)
def _compare(frames: dict, baseline: str, measures: list, permutations: int, seed: int, correction: str,
             confidence: float) -> pd.DataFrame:
    """compare_runs, cached on the per-query values and settings: widget changes that only
    pick what to draw do not rerun 10,000 permutations."""
    evaluations = [SimpleNamespace(run_name=name, per_query=frame) for name, frame in frames.items()]
    return compare_runs(evaluations, baseline, measures, permutations=permutations, seed=seed,
                        correction=correction, confidence=confidence)


st.title("Compare systems")
qrels = st.session_state[state.QRELS]
runs = st.session_state[state.RUNS] or {}
conventions = st.session_state[state.CONVENTIONS]
if qrels is None or len(runs) < 2:
    st.info("Load qrels and at least two runs first (Data page); this page compares every run "
            "with a baseline of your choice.")
    st.stop()

names = list(runs)
measure_names = [name for name, _ in mc.measures.list_measures()]
with st.form("compare-settings"):
    c1, c2 = st.columns([1, 2])
    baseline = c1.selectbox("Baseline", names, index=0)
    measures = c2.multiselect("Measures (any name, e.g. nDCG@10, P(rel=2)@5)",
                              options=sorted(set(measure_names) | set(DEFAULT_MEASURES)),
                              default=[m for m in DEFAULT_MEASURES], accept_new_options=True)
    c3, c4, c5, c6 = st.columns(4)
    permutations = c3.number_input("Permutations", min_value=100, max_value=100000, value=10000, step=1000)
    seed = c4.number_input("Seed", min_value=0, value=0, step=1)
    correction = c5.selectbox("Correction", CORRECTIONS, format_func=CORRECTION_LABELS.get)
    confidence = c6.select_slider("CI level", options=[0.9, 0.95, 0.99], value=0.95)
    st.form_submit_button("Compare")

if not measures:
    st.warning("Pick at least one measure.")
    st.stop()

try:
    evaluations = mc.evaluate_many(qrels, runs, measures, conventions=conventions)
except mc.InputError as exc:
    st.error(str(exc))
    st.stop()
measures = evaluations[0].measures
by_name = {ev.run_name: ev for ev in evaluations}
frame = _compare({ev.run_name: ev.per_query for ev in evaluations}, baseline, list(measures),
                 int(permutations), int(seed), correction, float(confidence))
st.session_state[compare_state.COMPARE_SETTINGS] = dict(frame.attrs)

st.subheader(f"Every run vs {baseline}")
shown = frame[["run", "measure", "n_queries", "mean_baseline", "mean_run", "mean_delta", "ci_lo", "ci_hi",
               *(f"p_corrected_{t}" for t in TESTS), "wins", "ties", "losses", "effect_size",
               "markers"]]
st.dataframe(shown, hide_index=True, column_config={
    "ci_lo": st.column_config.NumberColumn(f"CI {confidence:.0%} lo", format="%.4f"),
    "ci_hi": st.column_config.NumberColumn(f"CI {confidence:.0%} hi", format="%.4f"),
    "mean_delta": st.column_config.NumberColumn("delta", format="%.4f"),
})
st.caption(markers_legend(frame, tests=TESTS) + ". Queries: the common set of each pair (n_queries).")
st.plotly_chart(figs.delta_ci_figure(frame, st.selectbox("Interval chart: measure", measures)),
                key="compare-ci")

st.subheader("Per-query differences")
others = [n for n in names if n != baseline]
c1, c2 = st.columns(2)
run_name = c1.selectbox("Run", others)
measure = c2.selectbox("Measure", measures)
deltas = figs.per_query_deltas(by_name[baseline].per_query, by_name[run_name].per_query, measure)
event = st.plotly_chart(figs.delta_bar_figure(deltas, run_name, baseline, measure), key="compare-deltas",
                        on_select="rerun", selection_mode="points")
points = (event or {}).get("selection", {}).get("points", []) if event else []
if points:
    picked = points[0].get("customdata")
    picked = picked[0] if isinstance(picked, list) else picked
    if picked is not None:
        st.session_state[state.SELECTED_QUERY] = str(picked)
selected = st.session_state.get(state.SELECTED_QUERY)
if selected is not None:
    st.write(f"Selected query: `{selected}` (shown on the Per query page)")

meta = st.session_state[state.META]
if isinstance(meta, pd.DataFrame) and len(meta.columns):
    columns = list(meta.columns)
    st.subheader("Folds")
    fold_col = st.selectbox("Fold column", columns, index=columns.index("fold") if "fold" in columns else 0)
    try:
        fold_tables = {ev.run_name: folds.fold_values(ev.per_query, meta, fold_col) for ev in evaluations}
        summary = pd.DataFrame({ev.run_name: folds.fold_summary(ev.per_query, meta, fold_col)["formatted"]
                                for ev in evaluations}).T
        st.dataframe(summary)
        st.caption("Mean ± population standard deviation (ddof=0) of the per-fold means.")
        st.plotly_chart(figs.fold_figure(fold_tables, measure, fold_col), key="compare-folds")
    except mc.InputError as exc:
        st.error(str(exc))
    st.subheader("Criteria")
    crit_col = st.selectbox("Criterion column", columns,
                            index=columns.index("criterion") if "criterion" in columns else 0)
    try:
        crit_tables = {ev.run_name: folds.criterion_averages(ev.per_query, meta, crit_col)
                       for ev in evaluations}
        st.dataframe(pd.concat(crit_tables, names=["run"]))
        st.caption("micro: mean over all (query, criterion) pairs; macro: unweighted mean of the "
                   "per-criterion means.")
        st.plotly_chart(figs.criterion_figure(crit_tables, measure, crit_col), key="compare-criteria")
    except mc.InputError as exc:
        st.error(str(exc))
else:
    st.caption("Load query metadata with a fold or criterion column to see fold and criterion views.")

st.subheader("Export")
prov = provenance(conventions, **{k: frame.attrs[k] for k in ("baseline", "permutations", "seed",
                                                              "correction", "confidence")})
payload = evaluations_json(evaluations, conventions, per_query=False)
payload["comparisons"] = comparison_records(frame)
legend = markers_legend(frame)
c1, c2, c3, c4 = st.columns(4)
c1.download_button("JSON", json.dumps(json_safe(payload), indent=2), "comparison.json", "application/json")
c2.download_button("Markdown", format_table(paper_table(frame), "markdown", prov=prov, title=legend),
                   "comparison.md", "text/markdown")
c3.download_button("LaTeX", format_table(paper_table(frame), "latex", prov=prov, title=legend),
                   "comparison.tex", "text/x-tex")
c4.download_button("CSV", format_table(shown, "csv", prov=prov, index=False), "comparison.csv", "text/csv")
