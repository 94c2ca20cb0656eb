"""Click feedback: MRR from the first click of every impression (implicit feedback)."""

import streamlit as st

from metrics_core.clicks import click_mrr, read_click_log
from metrics_core.errors import InputError
from ui import state
from ui.exports import download_table
from ui.figures_ranking import first_click_ranks
from ui.frame import conventions, page_setup
from ui.ranking_data import sample_files
from ui.ranking_widgets import label_for
from ui.upload import load_once

page_setup()
st.title("Click feedback")
st.write("A click log has one row per impression: the query, the results shown (in rank order) "
         "and the ids clicked (in click order). The first click stands in for the first relevant "
         "result: RR = 1 / rank of the first click, and MRR is its mean over impressions.")
st.caption("No click gives RR = 0. Clicks on ids that were not shown (ads, stale lines) are ignored "
           "and counted; choose *strict* to refuse such logs instead. An id shown twice takes its first position.")


def _load_sample() -> None:
    path = sample_files()["clicks"]
    st.session_state[state.CLICKS] = read_click_log(path.read_bytes(), path.name)
    st.session_state["ranklab.clicks.source"] = path.name


c1, c2 = st.columns([1, 3])
c1.button("Load sample click log", on_click=_load_sample, key="ranklab.clicks.sample", type="primary")
upload = c2.file_uploader("Click log (CSV/TSV with columns query, shown, clicked; or JSON/JSONL)",
                          key="ranklab.clicks.file")
if upload is not None:
    def use_upload():
        with st.spinner(f"Reading {upload.name} ..."):
            st.session_state[state.CLICKS] = read_click_log(upload.getvalue(), upload.name)
        st.session_state["ranklab.clicks.source"] = upload.name

    load_once("ranklab.clicks.seen", upload.file_id, use_upload)

log = st.session_state[state.CLICKS]
if log is None:
    st.info("Upload a click log or load the sample.")
    st.stop()

r1, r2 = st.columns(2)
rule = r1.radio("First click", ["first", "top"], horizontal=True, key="ranklab.clicks.rule",
                format_func=lambda r: {"first": "first in time", "top": "best ranked"}[r])
strict = r2.checkbox("Strict: refuse clicks on ids that were not shown", key="ranklab.clicks.strict")
try:
    result = click_mrr(log, rule=rule, strict=strict)
except InputError as exc:
    st.error(str(exc))
    st.stop()

thresholds = st.session_state[state.THRESHOLDS]
m1, m2, m3 = st.columns(3)
m1.metric("MRR (from clicks)", f"{result.mrr:.4f}")
m2.metric("Impressions", len(result.per_impression))
m3.metric("Ignored clicks (not shown)", result.ignored_clicks)
label = label_for("RR", result.mrr, thresholds, float(st.session_state.get("ranklab.fair_ratio", 0.5)))
if label:
    st.caption(f"Interpretation (RR good at or above {thresholds['RR']}): {label}")

conv = conventions()
source = st.session_state.get("ranklab.clicks.source", "")
st.subheader("Per query")
st.dataframe(result.per_query, column_config={"MRR": st.column_config.NumberColumn(format="%.4f")})
download_table(result.per_query, "click_mrr_per_query", conv, title="MRR from clicks per query",
               key="clicks_q", click_rule=rule, click_log=source)
st.plotly_chart(first_click_ranks(result.per_impression), key="ranklab.clicks.chart")
with st.expander("Per impression"):
    st.dataframe(result.per_impression)
    download_table(result.per_impression, "click_rr_per_impression", conv,
                   title="RR from clicks per impression", key="clicks_i", click_rule=rule, click_log=source)
