"""Dynamic K: per-query probability threshold clamped to [k_min, k_max]."""

import pandas as pd
import streamlit as st

from ui.frame import page_setup

page_setup()

from metrics_core import dynamic_k as dk  # noqa: E402
from metrics_core.report import format_table, provenance  # noqa: E402
from ui import detection_state as ds  # noqa: E402
from ui import figures_detection as fig  # noqa: E402
from ui.upload import load_once  # noqa: E402

ds.ensure_defaults()
st.title("Dynamic K")
st.caption("Per query: the candidates with probability >= tau, at least k_min, at most "
           "k_max = min(hard_cap, floor(n x k_max_ratio)); when k_max < k_min the cap wins. "
           "Empty sets: recall is 1 when a query has no gold item and nothing is selected (else 0); "
           "precision is 1 when nothing is selected and there is no gold item (else 0).")

with st.expander("Data: candidates", expanded=False):
    up = st.file_uploader("Table with query, candidate, probability, is_gold[, criterion]",
                          type=["csv", "tsv", "txt", "parquet", "json", "jsonl"],
                          key="ranklab.detection.dk_upload")
    if up is not None:
        def use_upload():
            st.session_state[ds.CANDIDATES] = ds.load_candidates(up.getvalue(), up.name)

        load_once("ranklab.detection.dk_upload.seen", up.file_id, use_upload)
    if st.button("Use the sample data", key="ranklab.detection.dk_sample"):
        st.session_state[ds.CANDIDATES] = ds.load_candidates(ds.SAMPLE_CANDIDATES.read_bytes(),
                                                             ds.SAMPLE_CANDIDATES.name)

data = st.session_state[ds.CANDIDATES]
table = ds.candidate_table_of(data["digest"], data)
st.caption(f"{data['source']}: {data['query'].size:,} candidates, {table.n_queries:,} "
           "(query, criterion) units" if table.criterion is not None else
           f"{data['source']}: {data['query'].size:,} candidates, {table.n_queries:,} queries")


@st.cache_data(max_entries=32, show_spinner=False, scope="session")
def curve_of(key, k_min, hard_cap, ratio):
    return dk.dynamic_k_curve(table, None, k_min, hard_cap, ratio)


@st.fragment
def controls() -> None:
    c1, c2, c3, c4 = st.columns(4)
    tau = c1.slider("tau", 0.0, 1.0, dk.DEFAULTS["tau"], 0.01, key=ds.DK_TAU)
    k_min = c2.slider("k_min", 0, 20, dk.DEFAULTS["k_min"], key=ds.DK_KMIN)
    hard_cap = c3.slider("hard_cap", 0, 50, dk.DEFAULTS["hard_cap"], key=ds.DK_CAP)
    ratio = c4.slider("k_max_ratio", 0.0, 1.0, dk.DEFAULTS["k_max_ratio"], 0.05, key=ds.DK_RATIO)
    r = dk.dynamic_k_scores(table, tau, k_min, hard_cap, ratio)
    m1, m2, m3 = st.columns(3)
    m1.metric("Evidence recall", f"{r['recall']:.4f}")
    m2.metric("Evidence precision", f"{r['precision']:.4f}")
    m3.metric("Average K", f"{r['avg_k']:.3f}")
    curve = curve_of(data["digest"], k_min, hard_cap, ratio)
    st.plotly_chart(fig.dynamic_k_figure(curve, tau=tau), key="ranklab.detection.dk_curve")
    prov = provenance(None, source=data["source"], tau=tau, k_min=k_min, hard_cap=hard_cap,
                      k_max_ratio=ratio)
    if table.criterion is not None:
        pc = dk.per_criterion(table, tau, k_min, hard_cap, ratio)
        out = pc["table"].copy()
        out.loc["micro (pooled)", ["recall", "precision", "avg_k"]] = list(pc["micro"].values())
        out.loc["macro (mean)", ["recall", "precision", "avg_k"]] = list(pc["macro"].values())
        st.subheader("Per criterion")
        st.dataframe(out, key="ranklab.detection.dk_per_criterion")
        e1, e2, e3 = st.columns(3)
        for col, fmt, ext in ((e1, "csv", "csv"), (e2, "markdown", "md"), (e3, "latex", "tex")):
            col.download_button(f"Table as {fmt}", format_table(out, fmt, prov=prov,
                                                                title="Dynamic K per criterion"),
                                file_name=f"dynamic_k.{ext}", key=f"ranklab.detection.dk_export_{fmt}")
    else:
        st.dataframe(pd.DataFrame([r]).drop(columns=["params"]), key="ranklab.detection.dk_summary")


controls()
