"""Data page: upload qrels, runs and query metadata (or load the sample); diagnostics."""

import numpy as np
import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from ui import state
from ui.exports import download_table
from ui.frame import conventions, page_end, page_setup
from ui.ranking_data import SAMPLE_SUMMARY, evaluate_loaded, has_data, load_sample_into_state
from ui.style import MEASURE_FORMAT
from ui.upload import FORMATS, MESSAGE, upload_box

page_setup(sidebar=False)  # the sidebar lists what this run loads: drawn last (page_end)
st.title("Data")
st.caption("Drag and drop files: TREC, CSV/TSV, Parquet, JSON/JSONL, gzip-compressed or not. "
           "Each run is a system, named after its file.")

buttons = st.container(horizontal=True)
c1 = c2 = buttons


def _clear() -> None:
    st.session_state[state.QRELS] = None
    st.session_state[state.RUNS] = {}
    st.session_state[state.META] = None
    st.session_state[state.EVAL_CACHE] = {}


if c1.button("Load sample data", type="primary", key="ranklab.data.sample", on_click=load_sample_into_state):
    st.success(SAMPLE_SUMMARY)

left, right = st.columns(2)
with left:
    st.subheader("Qrels")
    qfmt = st.selectbox("Qrels format", FORMATS, key="ranklab.data.qrels_fmt")
    upload_box("qrels", "Relevance judgements (qrels)", qfmt)
    loaded_qrels = st.session_state[state.QRELS]
    if loaded_qrels is not None:
        labels = pd.Series(loaded_qrels.relevance).value_counts().sort_index()
        st.caption(f"{len(loaded_qrels.unique_query_ids()):,} queries, {len(loaded_qrels):,} judgements")
        st.dataframe(pd.DataFrame({"Label": [f"{lab:g}" for lab in labels.index], "Judgements": labels.to_numpy(),
                                   "Share": labels.to_numpy() / max(len(loaded_qrels), 1)}),
                     hide_index=True, key="ranklab.data.labels",
                     column_config={"Judgements": st.column_config.NumberColumn(format="localized"),
                                    "Share": st.column_config.NumberColumn(format="percent")})
with right:
    st.subheader("Runs")
    rfmt = st.selectbox("Run format", FORMATS, key="ranklab.data.run_fmt")
    upload_box("run", "One or more runs", rfmt, multiple=True)

with st.expander("Query metadata (optional): category, difficulty, date, criterion, fold",
                 expanded=st.session_state[state.META] is not None or "data.meta" in st.session_state.get(MESSAGE, {})):
    upload_box("meta", "Metadata table (one row per query; a query id column)")
    meta = st.session_state[state.META]
    if meta is not None:
        st.dataframe(meta, height=220)

# drawn after the uploads, so it is enabled in the run that loads the first file
c2.button("Clear everything", key="ranklab.data.clear", disabled=not has_data(), on_click=_clear)

runs = st.session_state[state.RUNS] or {}
if runs:
    rc1, rc2 = st.columns([3, 1])
    drop = rc1.selectbox("Remove a loaded run", list(runs), key="ranklab.data.drop_run")
    if rc2.button("Remove", key="ranklab.data.drop_run_btn"):
        st.session_state[state.RUNS] = {k: v for k, v in runs.items() if k != drop}
        st.session_state[state.EVAL_CACHE] = {}
        st.rerun()

if not has_data():
    st.info("Load a qrels file and at least one run (or the sample) to see diagnostics.")
    page_end()
    st.stop()

# --- Diagnostics ---------------------------------------------------------------------
st.header("Diagnostics")
qrels = st.session_state[state.QRELS]
runs = st.session_state[state.RUNS]
k = int(st.number_input("Cutoff k for ties and unjudged documents", min_value=1, max_value=1000,
                        value=10, key="ranklab.data.diag_k"))
rows = []
conv = conventions()
try:
    with st.spinner("Checking the runs ..."):
        diag_evs = evaluate_loaded([f"Judged@{k}", f"P@{k}", "NumRet"], conv)  # cached per session
except InputError as exc:
    diag_evs = {}
    st.error(str(exc))
    if "duplicate" in str(exc):
        st.caption("Choose a duplicates rule under **More conventions** in the sidebar.")
for name, ev in diag_evs.items():
    run = runs[name]
    d = ev.diagnostics
    judged = ev.per_query[f"Judged@{k}"]
    rows.append({
        "run": name, "lines": len(run), "queries evaluated": d["num_queries"],
        "missing queries": len(d["missing_queries"]), "extra queries": len(d["extra_queries"]),
        "duplicates": d["duplicates"], f"tied groups straddling @{k}": d["ties_straddling"].get(str(k), 0),
        f"Judged@{k} (mean)": float(np.mean(judged)) if len(judged) else float("nan"),
        f"queries with unjudged in top {k}": int((judged < 1).sum()),
    })
    with st.expander(f"{name}: details"):
        st.write("Missing queries (judged, not in the run): "
                 + (", ".join(d["missing_queries"]) or "none"))
        st.write("Extra queries (in the run, not judged; ignored): "
                 + (", ".join(d["extra_queries"]) or "none"))
        st.write(f"Tied groups: {d['tied_groups']} ({d['tied_documents']} documents); "
                 f"straddling @{k}: {d['ties_straddling'].get(str(k), 0)}. Ties are broken by the "
                 f"rule '{conv.ties}' (sidebar).")
if rows:
    table = pd.DataFrame(rows).set_index("run")
    # plain headers; counts with thousands separators, means with 4 decimals
    st.dataframe(table, column_config={"run": st.column_config.TextColumn("Run")} | {
        c: st.column_config.NumberColumn(c[:1].upper() + c[1:],
                                         format=MEASURE_FORMAT if table[c].dtype.kind == "f" else "localized")
        for c in table.columns})
    download_table(table, "diagnostics", conv, title="Data diagnostics", key="diag")

page_end()
