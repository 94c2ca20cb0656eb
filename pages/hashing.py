"""Hashing: mAP with its tie band, P@k, precision/recall by Hamming radius, per-class mAP."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from ui.common.downloads import download_table
from ui.common.frame import page
from ui.hashing import state as hs
from ui.hashing.data import device_label, device_name, evaluate, p_at_k_cutoffs
from ui.hashing.figures import map_band_figure, pr_by_radius_figure, precision_at_k_figure
from ui.hashing.widgets import ensure_defaults, uploads_box

with page("Hash-code retrieval", caption="Hamming ranking of binary codes (±1 or 0/1). At 12-64 bits most "
          "distances tie, so mAP is given as the expected value over random tie order, with the band from "
          "relevant-last to relevant-first.") as p:
    ensure_defaults()
    with st.expander("Data", expanded=st.session_state[hs.DATA] is None):
        uploads_box()

    data = st.session_state[hs.DATA]
    if data is None:
        st.info("Load the sample or upload codes and labels to begin.")
        p.stop()

    n_db = len(data["db_codes"])
    c1, c2, c3, c4 = st.columns(4)
    topk = c1.number_input("mAP@K (0 = whole ranking)", min_value=0, max_value=n_db, value=0, step=1,
                           key=hs.TOPK)
    ties = c2.selectbox("Ties", ["expected", "optimistic", "pessimistic", "stable"], key=hs.TIES)
    normalizer = c3.selectbox("AP@K normalizer", ["retrieved", "min_r_k"], key=hs.NORMALIZER,
                              help="relevant retrieved in the top K (DeepHash), or min(R, K)")
    exclude = c4.checkbox("Leave out queries without relevant items", key=hs.EXCLUDE)

    try:
        result = evaluate(data["query_codes"], data["db_codes"], data["query_labels"], data["db_labels"],
                          int(topk) or None, ties, normalizer, "exclude" if exclude else "zero",
                          p_at_k_cutoffs(n_db), device_name())
    except InputError as exc:
        st.error(str(exc))
        p.stop()

    st.caption(f"Data: {data['source']} · {result['n_queries']} queries × {result['n_db']} database "
               f"codes × {result['bits']} bits · device: {device_label()}")
    lo, hi = result["map_band"]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("mAP" + (f"@{int(topk)}" if topk else ""), f"{result['map']:.4f}", help=f"ties: {ties}")
    m2.metric("tie band", f"{lo:.4f} .. {hi:.4f}", help="pessimistic (relevant last) .. optimistic (relevant first)")
    m3.metric(f"precision @ radius {result['radius']}", f"{result['precision_radius']:.4f}")
    m4.metric(f"recall @ radius {result['radius']}", f"{result['recall_radius']:.4f}")

    st.plotly_chart(map_band_figure(result["map"], result["map_band"], ties), width="stretch")
    left, right = st.columns(2)
    left.plotly_chart(precision_at_k_figure(result["precision_at_k"]), width="stretch")
    right.plotly_chart(pr_by_radius_figure(result["pr_by_radius"], result["radius"]), width="stretch")

    st.subheader("mAP per class")
    per_class = pd.DataFrame({"class": list(result["per_class_map"]),
                              "mAP": list(result["per_class_map"].values())})
    st.dataframe(per_class, hide_index=True, key=hs.PER_CLASS)
    download_table(per_class, "hashing_per_class_map", title="mAP per class", key="hash_per_class", index=False,
                   source=data["source"], ties=ties, topk=int(topk) or None, normalizer=normalizer,
                   zero_relevant="exclude" if exclude else "zero")
