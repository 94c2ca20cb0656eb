"""Detection: ROC and PR curves, an operating-point slider, TPR at fixed FPR."""

import pandas as pd
import streamlit as st

from metrics_core import detection as det
from metrics_core.validation import one_class, one_class_message
from ui.common.downloads import download_table
from ui.common.frame import page
from ui.detection import data as ds
from ui.detection import figures as fig
from ui.detection import state as dst
from ui.detection.state import Detection
from ui.detection.widgets import ranges_editor, scores_loader, threshold_control

with page("Detection", caption="A binary gate: predict positive when score ≥ threshold. Every operating point is kept; TPR at a target FPR allows floor(target × negatives) false positives, exactly."):
    ds.ensure_defaults()
    scores_loader()
    data = st.session_state[dst.SCORES]
    y, s = data["y_true"], data["y_score"]
    curve = ds.curve_of(data["digest"], y, s)
    st.caption(f"{data['source']}: {y.size:,} rows, {curve.n_pos:,} positive, {curve.n_neg:,} "
               f"negative, {curve.thresholds.size - 1:,} distinct scores "
               f"(columns {data['score_col']!r}, {data['label_col']!r})")

    single = st.radio("One class only", det.SINGLE_CLASS_RULES, horizontal=True,
                      key=Detection.SINGLE_CLASS,
                      help="nan: undefined (default); audit: the audit rule (AUROC 0.5, AUPRC = positive rate)")
    two_classes = not one_class(curve.n_pos, curve.n_neg)
    auroc, auprc = det.curve_scores(curve, single)
    if not two_classes:
        st.warning(one_class_message(curve.n_pos) + ".")

    m1, m2, m3, m4 = st.columns(4)
    m1.metric("AUROC", f"{auroc:.4f}")
    m2.metric("AUPRC", f"{auprc:.4f}")
    m3.metric("Positives", f"{curve.n_pos:,}")
    m4.metric("Negatives", f"{curve.n_neg:,}")

    @st.fragment
    def operating_point() -> None:
        thr = threshold_control(data["digest"], s, curve)
        i = curve.index_at(thr)
        cm = det.confusion_matrix_at(None, None, thr, curve=curve)
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("TPR", f"{cm['tpr']:.4f}")
        m2.metric("FPR", f"{cm['fpr']:.4f}")
        m3.metric("Precision", "–" if cm["tp"] + cm["fp"] == 0 else f"{cm['precision']:.4f}")
        m4.metric("Predicted positive", f"{cm['tp'] + cm['fp']:,}")
        st.markdown(f"**Confusion matrix** at score ≥ {thr:.4f}")
        st.dataframe(ds.confusion_table(cm), key=Detection.CONFUSION, width="stretch")
        left, right = st.columns(2)
        with left:
            st.plotly_chart(fig.roc_figure(curve.fpr, curve.tpr, marker=i, auroc=auroc),
                            key=Detection.ROC, width="stretch")
        with right:
            st.plotly_chart(fig.pr_figure(curve.tpr, curve.precision, marker=i, auprc=auprc,
                                          positive_rate=curve.n_pos / y.size),
                            key=Detection.PR, width="stretch")

    if two_classes:
        operating_point()

    st.subheader("TPR at target FPR")
    extra = st.number_input("Another target FPR", min_value=0.0, max_value=1.0, value=0.2,
                            step=0.01, format="%.4f", key=Detection.EXTRA_TARGET)
    targets = list(det.DEFAULT_FPR_TARGETS) + [extra]
    tpr_table = det.tpr_table(curve, targets, headers=True) if two_classes else pd.DataFrame()
    FOUR = st.column_config.NumberColumn(format="%.4f")
    st.dataframe(tpr_table, key=Detection.TPR_TABLE, hide_index=True,
                 column_config={**{c: FOUR for c in ("target FPR", "TPR", "achieved FPR", "threshold", "next TPR",
                                                      "next FPR", "next threshold")},
                                "allowed FP": st.column_config.NumberColumn("allowed false positives", format="%d")})

    download_table(tpr_table, "tpr_at_fpr", title="TPR at target FPR", key="tpr_at_fpr", index=False,
                   source=data["source"], threshold_rule="score >= threshold")

    if two_classes:
        st.subheader("Confidence intervals (bootstrap)")
        # a replicate costs one pass over the data (~60 ms per million rows): on by default
        # only for small inputs
        if st.toggle("Compute 95% bootstrap intervals", value=y.size <= 200_000,
                     key=Detection.CI_ON):
            n_resamples = st.select_slider("Replicates", [50, 100, 200, 500, 1000], value=200,
                                      key=Detection.N_RESAMPLES)
            ci = ds.bootstrap_of(data["digest"], y, s, ("auroc", "auprc", "tpr@0.05"), n_resamples, 0)
            ci_table = pd.DataFrame(ci).T[["value", "low", "high", "n_undefined"]].astype(
                {"value": float, "low": float, "high": float, "n_undefined": int})
            ci_table.index = [{"auroc": "AUROC", "auprc": "AUPRC", "tpr@0.05": "TPR at FPR 0.05"}.get(i, i)
                              for i in ci_table.index]
            ci_table.columns = ["Value", "95% low", "95% high", "Replicates with one class only"]
            st.dataframe(ci_table, column_config={c: FOUR for c in ("Value", "95% low", "95% high")},
                         key=Detection.CI)

    if data["criterion"] is not None:
        st.subheader("Per criterion (micro: pooled items; macro: mean over criteria)")
        groups = ds.per_group_of(data["digest"], y, s, data["criterion"], single)
        table = groups["table"].copy()
        table.loc["micro (pooled)"] = groups["micro"]
        table.loc["macro (mean)"] = {k: v for k, v in groups["macro"].items() if k in table.columns}
        shown = table.rename(columns=lambda c: {"n_pos": "Positives", "n_neg": "Negatives", "auroc": "AUROC",
                                                "auprc": "AUPRC"}.get(c, c.replace("tpr@", "TPR at FPR ")))
        shown.index.name = "Criterion"
        st.dataframe(shown, key=Detection.PER_CRITERION,
                     column_config={c: FOUR for c in shown.columns if c not in ("Positives", "Negatives")})
        download_table(table, "per_criterion", title="Per-criterion detection", key="per_criterion",
                       source=data["source"], threshold_rule="score >= threshold")

    st.subheader("Reference ranges (editable)")
    new_ranges = ranges_editor()
    if two_classes:
        values = {"AUROC": auroc, "TPR@5%FPR": det.tpr_at_fpr(None, None, 0.05, curve=curve)["tpr"]}
        st.plotly_chart(fig.reference_band_figure(values, new_ranges), key=Detection.BANDS)
