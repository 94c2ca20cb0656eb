"""Dynamic K: per-query probability threshold clamped to [k_min, k_max]."""

import pandas as pd
import streamlit as st

from metrics_core import dynamic_k as dk
from ui.common.downloads import download_table
from ui.common.frame import page
from ui.common.upload import TABLE_TYPES, upload_slot
from ui.detection import data as ds
from ui.detection import figures as fig
from ui.detection import state as dst
from ui.detection.state import DynamicK

CAPTION = ("Per query: the candidates with probability >= tau, at least k_min, at most "
           "k_max = min(hard_cap, floor(n x k_max_ratio)); when k_max < k_min the cap wins. "
           "Empty sets: recall is 1 when a query has no gold item and nothing is selected (else 0); "
           "precision is 1 when nothing is selected and there is no gold item (else 0).")


def read_upload(files) -> None:
    ds.use_candidates(files[0].getvalue(), files[0].name)


@st.fragment
def controls() -> None:
    c1, c2, c3, c4 = st.columns(4)
    tau = c1.slider("tau", 0.0, 1.0, dk.DEFAULTS["tau"], 0.01, key=dst.DK_TAU)
    k_min = c2.slider("k_min", 0, 20, dk.DEFAULTS["k_min"], key=dst.DK_KMIN)
    hard_cap = c3.slider("hard_cap", 0, 50, dk.DEFAULTS["hard_cap"], key=dst.DK_CAP)
    ratio = c4.slider("k_max_ratio", 0.0, 1.0, dk.DEFAULTS["k_max_ratio"], 0.05, key=dst.DK_RATIO)
    r = dk.dynamic_k_scores(table, tau, k_min, hard_cap, ratio)
    m1, m2, m3 = st.columns(3)
    m1.metric("Evidence recall", f"{r['recall']:.4f}")
    m2.metric("Evidence precision", f"{r['precision']:.4f}")
    m3.metric("Average K", f"{r['avg_k']:.3f}")
    curve = ds.dynamic_k_curve_of(data["digest"], table, k_min, hard_cap, ratio)
    st.plotly_chart(fig.dynamic_k_figure(curve, tau=tau), key=DynamicK.CURVE)
    if table.criterion is not None:
        pc = dk.per_criterion(table, tau, k_min, hard_cap, ratio)
        out = pc["table"].copy()
        out.loc["micro (pooled)", ["recall", "precision", "avg_k"]] = list(pc["micro"].values())
        out.loc["macro (mean)", ["recall", "precision", "avg_k"]] = list(pc["macro"].values())
        st.subheader("Per criterion")
        st.dataframe(out, key=DynamicK.PER_CRITERION)
        download_table(out, "dynamic_k", title="Dynamic K per criterion", key="dynamic_k", source=data["source"],
                       tau=tau, k_min=k_min, hard_cap=hard_cap, k_max_ratio=ratio)
    else:
        st.dataframe(pd.DataFrame([r]).drop(columns=["params"]), key=DynamicK.SUMMARY)


with page("Dynamic K", caption=CAPTION):
    ds.ensure_defaults()
    with st.expander("Data: candidates", expanded=False):
        upload_slot(DynamicK.UPLOAD, "Table with query, candidate, probability, is_gold[, criterion]", read_upload,
                    types=TABLE_TYPES)
        st.button("Use the sample data", key=DynamicK.USE_SAMPLE, on_click=ds.use_sample_candidates)

    data = st.session_state[dst.CANDIDATES]
    table = ds.candidate_table_of(data["digest"], data)
    st.caption(f"{data['source']}: {data['query'].size:,} candidates, {table.n_queries:,} "
               "(query, criterion) units" if table.criterion is not None else
               f"{data['source']}: {data['query'].size:,} candidates, {table.n_queries:,} queries")
    controls()
