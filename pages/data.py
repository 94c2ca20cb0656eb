"""Data page: upload qrels, runs and query metadata (or load the sample); diagnostics."""

import streamlit as st

from metrics_core.errors import InputError
from metrics_core.report.diagnostics import diagnostic_measures, diagnostics_table
from ui.common import state
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.common.style import MEASURE_FORMAT
from ui.common.upload import FORMATS
from ui.ranking.data import (
    SAMPLE_SUMMARY,
    clear_loaded,
    evaluate_loaded,
    has_data,
    judgements_per_label,
    load_sample_into_state,
    remove_run,
)
from ui.ranking.state import Data
from ui.ranking.upload import has_message, upload_box

# the sidebar lists what this run loads: drawn last
with page("Data", sidebar=False, caption="Drag and drop files: TREC, CSV/TSV, Parquet, JSON/JSONL, gzip-compressed "
          "or not. Each run is a system, named after its file.") as p:
    buttons = st.container(horizontal=True)
    if buttons.button("Load sample data", type="primary", key=Data.SAMPLE, on_click=load_sample_into_state):
        st.success(SAMPLE_SUMMARY)

    left, right = st.columns(2)
    with left:
        st.subheader("Qrels")
        qfmt = st.selectbox("Qrels format", FORMATS, key=Data.QRELS_FORMAT)
        upload_box("qrels", "Relevance judgements (qrels)", qfmt)
        loaded_qrels = st.session_state[state.QRELS]
        if loaded_qrels is not None:
            st.caption(f"{len(loaded_qrels.unique_query_ids()):,} queries, {len(loaded_qrels):,} judgements")
            st.dataframe(judgements_per_label(loaded_qrels), hide_index=True, key=Data.LABELS,
                         column_config={"Judgements": st.column_config.NumberColumn(format="localized"),
                                        "Share": st.column_config.NumberColumn(format="percent")})
    with right:
        st.subheader("Runs")
        rfmt = st.selectbox("Run format", FORMATS, key=Data.RUN_FORMAT)
        upload_box("run", "One or more runs", rfmt, multiple=True)

    with st.expander("Query metadata (optional): category, difficulty, date, criterion, fold",
                     expanded=st.session_state[state.META] is not None or has_message("data", "meta")):
        upload_box("meta", "Metadata table (one row per query; a query id column)")
        meta = st.session_state[state.META]
        if meta is not None:
            st.dataframe(meta, height=220)

    # drawn after the uploads, so it is enabled in the run that loads the first file
    buttons.button("Clear everything", key=Data.CLEAR, disabled=not has_data(), on_click=clear_loaded)

    runs = st.session_state[state.RUNS] or {}
    if runs:
        rc1, rc2 = st.columns([3, 1])
        rc1.selectbox("Remove a loaded run", list(runs), key=Data.DROP_RUN)
        rc2.button("Remove", key=Data.DROP_RUN_BUTTON,
                   on_click=lambda: remove_run(st.session_state[Data.DROP_RUN]))

    if not has_data():
        st.info("Load a qrels file and at least one run (or the sample) to see diagnostics.")
        p.stop()

    # --- Diagnostics -----------------------------------------------------------------
    st.header("Diagnostics")
    runs = st.session_state[state.RUNS]
    k = int(st.number_input("Cutoff k for ties and unjudged documents", min_value=1, max_value=1000,
                            value=10, key=Data.DIAGNOSTICS_K))
    conv = conventions()
    try:
        with st.spinner("Checking the runs ..."):
            diag_evs = evaluate_loaded(diagnostic_measures(k), conv)  # cached per session
    except InputError as exc:
        diag_evs = {}
        st.error(str(exc))
        if "duplicate" in str(exc):
            st.caption("Choose a duplicates rule under **More conventions** in the sidebar.")
    for name, ev in diag_evs.items():
        d = ev.diagnostics
        with st.expander(f"{name}: details"):
            st.write("Missing queries (judged, not in the run): "
                     + (", ".join(d["missing_queries"]) or "none"))
            st.write("Extra queries (in the run, not judged; ignored): "
                     + (", ".join(d["extra_queries"]) or "none"))
            st.write(f"Tied groups: {d['tied_groups']} ({d['tied_documents']} documents); "
                     f"straddling @{k}: {d['ties_straddling'].get(str(k), 0)}. Ties are broken by the "
                     f"rule '{conv.ties}' (sidebar).")
    table = diagnostics_table(diag_evs, k, runs)
    if len(table):
        # plain headers; counts with thousands separators, means with 4 decimals
        st.dataframe(table, column_config={"run": st.column_config.TextColumn("Run")} | {
            c: st.column_config.NumberColumn(c[:1].upper() + c[1:],
                                             format=MEASURE_FORMAT if table[c].dtype.kind == "f" else "localized")
            for c in table.columns})
        download_table(table, "diagnostics", conv, title="Data diagnostics", key="diag")
