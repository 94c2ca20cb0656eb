"""Detection: ROC and PR curves, an operating-point slider, TPR at fixed FPR."""

import pandas as pd
import streamlit as st

from ui.common.downloads import download_table
from ui.common.frame import page
from ui.common.i18n import count
from ui.common.i18n import gettext as _
from ui.common.style import MISSING, THRESHOLD_FORMAT, heading, say, threshold_text
from ui.detection import data as ds
from ui.detection import figures as fig
from ui.detection import state as dst
from ui.detection.state import Detection
from ui.detection.widgets import ranges_editor, scores_loader, threshold_control


def single_class_choice() -> None:
    """The rule for labels of one class only (a setting: shown where it applies)."""
    st.radio(
        _(ds.ONE_CLASS_TITLE),
        ds.SINGLE_CLASS_RULES,
        horizontal=True,
        key=Detection.SINGLE_CLASS,
        format_func=lambda rule: ds.one_class_words(rule, _)[0],
        help="  \n".join(
            "**{}**: {}".format(*ds.one_class_words(rule, _)) for rule in ds.SINGLE_CLASS_RULES
        ),
    )


with page(
    _("Detection"),
    sidebar=False,
    summary=ds.scores_summary,
    caption=_(
        "A binary gate: predict positive when score ≥ threshold. Every operating point "
        "is kept; TPR at a target FPR allows floor(target × negatives) false positives, "
        "exactly."
    ),
):
    ds.ensure_defaults()
    scores_loader()
    data = st.session_state[dst.SCORES]
    y, s = data["y_true"], data["y_score"]
    curve = ds.curve_of(data["digest"], y, s)
    st.caption(
        say(
            _(
                "{source}: {rows} rows, {pos} positive, {neg} negative, {distinct} distinct scores "
                "(columns “{score_col}”, “{label_col}”)"
            ),
            source=ds.source_label(data),
            rows=count(y.size),
            pos=count(curve.n_pos),
            neg=count(curve.n_neg),
            distinct=count(curve.thresholds.size - 1),
            score_col=data["score_col"],
            label_col=data["label_col"],
        )
    )

    two_classes = not ds.one_class(curve.n_pos, curve.n_neg)
    if not two_classes:
        st.warning(ds.one_class_warning(curve.n_pos))
        single_class_choice()
    single = st.session_state.get(Detection.SINGLE_CLASS, ds.SINGLE_CLASS_RULES[0])
    auroc, auprc = ds.curve_scores_of(data["digest"], curve, single)

    m1, m2, m3, m4 = st.columns(4)
    m1.metric("AUROC", ds.number_or_dash(auroc))  # i18n: ignore (canonical names)
    m2.metric("AUPRC", ds.number_or_dash(auprc))  # i18n: ignore (canonical names)
    m3.metric(_("Positives"), count(curve.n_pos))
    m4.metric(_("Negatives"), count(curve.n_neg))

    FOUR = st.column_config.NumberColumn(format="%.4f")

    def tpr_at_fpr_table() -> pd.DataFrame:
        """The answer to "how many positives pass at a false-positive budget": first screen."""
        st.subheader(_("TPR at target FPR"))
        targets = list(ds.DEFAULT_FPR_TARGETS) + [st.session_state.get(Detection.EXTRA_TARGET, 0.2)]
        table = ds.tpr_table_of(data["digest"], curve, targets) if two_classes else pd.DataFrame()
        if not two_classes:
            st.caption(_("No table: TPR and FPR need both classes in the labels."))
        st.dataframe(
            table.style.format(precision=4, na_rep="–"),
            key=Detection.TPR_TABLE,
            hide_index=True,
            width="stretch",
            # headings capitalised ("threshold" read as a lower-case heading); the library's
            # lower-case names stay the table's columns (and its download's)
            column_config={
                **{
                    _(c): st.column_config.NumberColumn(heading(_(c)), format="%.4f")
                    for c in ("target FPR", "TPR", "achieved FPR", "next TPR", "next FPR")
                },
                # a threshold as it is (0.655105, not 0.6551: a score of 0.6551 is below it)
                **{
                    _(c): st.column_config.NumberColumn(heading(_(c)), format=THRESHOLD_FORMAT)
                    for c in ("threshold", "next threshold")
                },
                _("allowed FP"): st.column_config.NumberColumn(
                    heading(_("allowed FP")),
                    format="%d",
                    help=_("allowed false positives: floor(target × negatives)"),
                ),
            },
            placeholder=MISSING,
        )
        return table

    @st.fragment
    def operating_point() -> None:
        thr = threshold_control(data["digest"], s, curve)
        i = ds.index_at(curve, thr)
        cm = ds.confusion_at(curve, thr)
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("TPR", f"{cm['tpr']:.4f}")  # i18n: ignore (canonical names)
        m2.metric("FPR", f"{cm['fpr']:.4f}")  # i18n: ignore (canonical names)
        m3.metric(
            _("Precision"),
            "–" if cm["tp"] + cm["fp"] == 0 else f"{cm['precision']:.4f}",
            help=_(
                "“–”: nothing is predicted positive at this threshold, so precision is undefined."
            )
            if cm["tp"] + cm["fp"] == 0
            else None,
        )
        m4.metric(_("Predicted positive"), count(cm["tp"] + cm["fp"]))
        # the answers first (the operating point above, TPR at the FPR budgets here), then the
        # confusion counts and the curves
        tpr_at_fpr_table()
        st.markdown(
            say(_("**Confusion matrix** at score ≥ {threshold}"), threshold=threshold_text(thr))
        )
        st.dataframe(
            ds.confusion_table(cm), key=Detection.CONFUSION, width="stretch", placeholder=MISSING
        )
        # one chart per row: side by side they shrank below a readable width on a narrow window
        st.plotly_chart(
            fig.roc_figure(curve.fpr, curve.tpr, marker=i, auroc=auroc),
            key=Detection.ROC,
            width="stretch",
        )
        st.plotly_chart(
            fig.pr_figure(
                curve.tpr,
                curve.precision,
                marker=i,
                auprc=auprc,
                positive_rate=curve.n_pos / y.size,
            ),
            key=Detection.PR,
            width="stretch",
        )

    if two_classes:
        operating_point()
        tpr_table = ds.tpr_table_of(
            data["digest"],
            curve,
            list(ds.DEFAULT_FPR_TARGETS) + [st.session_state.get(Detection.EXTRA_TARGET, 0.2)],
        )
    else:
        tpr_table = tpr_at_fpr_table()
    st.number_input(
        _("Another target FPR"),
        min_value=0.0,
        max_value=1.0,
        value=0.2,
        step=0.01,
        format="%.4f",
        key=Detection.EXTRA_TARGET,
    )
    st.caption(
        _(
            "“next”: the operating point just past the target (one more false positive allowed); “–” when "
            "there is none."
        )
    )

    download_table(
        tpr_table,
        "tpr_at_fpr",
        title=_("TPR at target FPR"),
        key="tpr_at_fpr",
        index=False,
        source=data["source"],
        threshold_rule="score >= threshold",
    )

    if two_classes:
        st.subheader(_("Confidence intervals (bootstrap)"))
        # a replicate costs one pass over the data (~60 ms per million rows): on by default
        # only for small inputs
        if st.toggle(
            _("Compute 95% bootstrap intervals"), value=y.size <= 200_000, key=Detection.CI_ON
        ):
            n_resamples = st.select_slider(
                _("Replicates"), [50, 100, 200, 500, 1000], value=200, key=Detection.N_RESAMPLES
            )
            ci = ds.bootstrap_of(
                data["digest"], y, s, ("auroc", "auprc", "tpr@0.05"), n_resamples, 0
            )
            ci_table = (
                pd.DataFrame(ci)
                .T[["value", "low", "high", "n_undefined"]]
                .astype({"value": float, "low": float, "high": float, "n_undefined": int})
            )
            ci_table.index = [ds.metric_name(i) for i in ci_table.index]
            ci_table.columns = [
                _("Value"),
                _("95% low"),
                _("95% high"),
                _("Replicates with one class only"),
            ]
            st.dataframe(
                ci_table,
                column_config={c: FOUR for c in ci_table.columns[:3]},
                key=Detection.CI,
                placeholder=MISSING,
            )

    if data["criterion"] is not None:
        st.subheader(_("Per criterion (micro: pooled items; macro: mean over criteria)"))
        if two_classes:
            single_class_choice()
        groups = ds.per_group_of(data["digest"], y, s, data["criterion"], single)
        table = groups["table"].copy()
        table.loc[_("micro (pooled)")] = groups["micro"]
        table.loc[_("macro (mean)")] = {
            k: v for k, v in groups["macro"].items() if k in table.columns
        }
        shown = table.rename(columns=ds.metric_name)
        shown.index.name = _("Criterion")
        counts = [c for c in (_("Positives"), _("Negatives")) if c in shown.columns]
        # the index column as wide as its longest label: the grid's default cut "micro (pooled)",
        # "medium" (200 px) pushed the last column past a 766 px page (800 px window)
        st.dataframe(
            shown.style.format(precision=4, na_rep="–").format("{:.0f}", subset=counts, na_rep="–"),
            key=Detection.PER_CRITERION,
            width="stretch",
            # every row on the page: the micro and macro rows, last, sat under the grid's fold
            height="content" if len(shown) <= 30 else "auto",
            placeholder=MISSING,
            column_config={"_index": st.column_config.TextColumn(_("Criterion"), width=140)},
        )
        if shown.isna().any().any():
            st.caption(_("“–”: a criterion whose labels have one class only (see the rule above)."))
        download_table(
            table,
            "per_criterion",
            title=_("Per-criterion detection"),
            key="per_criterion",
            source=data["source"],
            threshold_rule="score >= threshold",
        )

    st.subheader(_("Reference ranges (editable)"))
    new_ranges = ranges_editor(("AUROC", "TPR@5%FPR"))
    if two_classes:
        values = {"AUROC": auroc, "TPR@5%FPR": ds.tpr_at_fpr_of(data["digest"], curve, 0.05)["tpr"]}
        st.plotly_chart(fig.reference_band_figure(values, new_ranges), key=Detection.BANDS)
