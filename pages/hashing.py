"""Hashing: mAP with its tie band, P@k, precision/recall by Hamming radius, per-class mAP."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from ui.common.downloads import download_table
from ui.common.frame import page
from ui.common.i18n import gettext as _
from ui.hashing import state as hs
from ui.hashing.data import TIE_RULES, device_label, device_name, evaluate, p_at_k_cutoffs
from ui.hashing.figures import map_band_figure, pr_by_radius_figure, precision_at_k_figure
from ui.hashing.widgets import ensure_defaults, uploads_box

with page(_("Hash-code retrieval"), caption=_("Hamming ranking of binary codes (±1 or 0/1). At 12-64 bits most "
                                              "distances tie, so mAP is given as the expected value over random "
                                              "tie order, with the band from relevant-last to relevant-first.")) as p:
    ensure_defaults()
    with st.expander(_("Data"), expanded=st.session_state[hs.DATA] is None):
        uploads_box()

    data = st.session_state[hs.DATA]
    if data is None:
        st.info(_("Load the sample or upload codes and labels to begin."))
        p.stop()

    n_db = len(data["db_codes"])
    # two settings per row: four in a row cut their labels and choices on a narrow window
    c1, c2 = st.columns(2)
    c3, c4 = st.columns(2, vertical_alignment="bottom")
    topk = c1.number_input(_("mAP@K (0 = whole ranking)"), min_value=0, max_value=n_db, value=0, step=1,
                           key=hs.TOPK)
    ties = c2.selectbox(_("Ties"), list(TIE_RULES), key=hs.TIES, format_func=lambda t: _(TIE_RULES[t]))
    normalizer = c3.selectbox(_("AP@K normalizer"), ["retrieved", "min_r_k"], key=hs.NORMALIZER,
                              format_func=lambda n: {"retrieved": _("relevant retrieved in the top K"),
                                                     "min_r_k": _("min(R, K)")}[n],
                              help=_("relevant retrieved in the top K (DeepHash), or min(R, K)"))
    exclude = c4.checkbox(_("Leave out queries without relevant items"), key=hs.EXCLUDE)

    settings = {"source": data["source"], "ties": ties, "topk": int(topk) or None, "normalizer": normalizer,
                "zero_relevant": "exclude" if exclude else "zero"}
    try:
        result = evaluate(data["query_codes"], data["db_codes"], data["query_labels"], data["db_labels"],
                          int(topk) or None, ties, normalizer, "exclude" if exclude else "zero",
                          p_at_k_cutoffs(n_db), device_name())
    except InputError as exc:
        st.error(exc.plain())
        p.stop()

    st.caption(_("Data: {source} · {q} queries × {db} database codes × {bits} bits · device: {device}").format(
        source=data["source"], q=result["n_queries"], db=result["n_db"], bits=result["bits"], device=device_label()))
    lo, hi = result["map_band"]
    row = st.container(horizontal=True, gap="medium")  # wraps on a narrow screen: no label is cut
    map_label = "mAP" + (f"@{int(topk)}" if topk else "")
    row.metric(map_label, f"{result['map']:.4f}", help=_("ties: {rule}").format(rule=_(TIE_RULES[ties])),
               width="content")
    row.metric(_("tie band"), f"{lo:.4f} .. {hi:.4f}", width="content",
               help=_("pessimistic (relevant last) .. optimistic (relevant first)"))
    row.metric(_("precision @ radius {r}").format(r=result["radius"]), f"{result['precision_radius']:.4f}",
               width="content")
    row.metric(_("recall @ radius {r}").format(r=result["radius"]), f"{result['recall_radius']:.4f}",
               width="content")

    st.plotly_chart(map_band_figure(result["map"], result["map_band"], _(TIE_RULES[ties])), width="stretch")
    # one chart per row: side by side their titles were cut on a narrow window
    st.plotly_chart(precision_at_k_figure(result["precision_at_k"]), width="stretch")
    st.plotly_chart(pr_by_radius_figure(result["pr_by_radius"], result["radius"]), width="stretch")

    st.subheader(_("mAP per class"))
    per_class = pd.DataFrame({"class": list(result["per_class_map"]),
                              "mAP": list(result["per_class_map"].values())})
    st.dataframe(per_class, hide_index=True, key=hs.PER_CLASS,
                 column_config={"class": st.column_config.TextColumn(_("class"))})
    download_table(per_class, "hashing_per_class_map", title=_("mAP per class"), key="hash_per_class", index=False,
                   **settings)

    st.subheader(_("Summary and curves"))
    summary = pd.DataFrame({_("Measure"): [map_label, _("tie band, low"), _("tie band, high"),
                                           _("precision @ radius {r}").format(r=result["radius"]),
                                           _("recall @ radius {r}").format(r=result["radius"])],
                            _("Value"): [result["map"], lo, hi, result["precision_radius"], result["recall_radius"]]})
    st.dataframe(summary, hide_index=True, key=hs.SUMMARY,
                 column_config={_("Value"): st.column_config.NumberColumn(format="%.4f")})
    download_table(summary, "hashing_summary", title=_("Hash-code retrieval summary"), key="hash_summary",
                   index=False, **settings)
    p_at_k = pd.DataFrame({"k": [int(k) for k in result["precision_at_k"]],
                           _("precision"): list(result["precision_at_k"].values())})
    radius = pd.DataFrame({_("radius"): list(result["pr_by_radius"]["radius"]),
                           _("precision"): list(result["pr_by_radius"]["precision"]),
                           _("recall"): list(result["pr_by_radius"]["recall"])})
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Precision at k**"))
        st.dataframe(p_at_k, hide_index=True, key=hs.P_AT_K)
        download_table(p_at_k, "hashing_precision_at_k", title=_("Precision at k (Hamming ranking)"),
                       key="hash_p_at_k", index=False, **settings)
    with right:
        st.markdown(_("**Precision and recall by Hamming radius**"))
        st.dataframe(radius, hide_index=True, key=hs.BY_RADIUS)
        download_table(radius, "hashing_pr_by_radius", title=_("Precision and recall within Hamming radius"),
                       key="hash_by_radius", index=False, **settings)
