"""Calibration: reliability diagram with per-bin intervals and a decision threshold;
plug-in and debiased ECE, MCE and Brier with BCa bootstrap intervals."""

import streamlit as st

from metrics_core.errors import InputError
from ui.common.downloads import download_table
from ui.common.frame import page
from ui.common.i18n import count
from ui.common.i18n import gettext as _
from ui.common.style import MISSING, THRESHOLD_FORMAT, md_text, say, threshold_text
from ui.common.upload import TABLE_TYPES, upload_slot
from ui.detection import data as ds
from ui.detection import figures as fig
from ui.detection import state as dst
from ui.detection.state import Calibration


def caption() -> str:
    return _(
        "Do predicted probabilities match how often the event happens? Equal-width bins are "
        "[i/B, (i+1)/B) with the last bin closed, so p = 1.0 counts. The **plug-in ECE** is the "
        "count-weighted mean gap |frequency − mean probability| over the bins (Naeini et al. 2015); it "
        "overstates the error, more with many small bins, so the **debiased ECE** subtracts each bin's "
        "estimated sampling bias (Kumar et al. 2019). Intervals are 95 % BCa bootstrap intervals (Efron "
        "1987); the error bars of the diagram are each bin's 95 % Wilson interval. Probabilities outside "
        "[0, 1] are refused, never squashed."
    )


def read_upload(files) -> None:
    ds.use_scores(ds.load_scores_for_page(files[0].getvalue(), files[0].name))


@st.fragment
def diagram() -> None:
    """Bins and binning: the statistics, the diagram and the bins table."""
    c1, c2 = st.columns([1, 1])
    n_bins = c1.slider(_("Bins"), 2, 50, 10, key=dst.CAL_BINS)
    strategy = c2.radio(
        _("Binning"),
        ds.STRATEGIES,
        horizontal=True,
        key=dst.CAL_STRATEGY,
        format_func=lambda k: {"uniform": _("equal width"), "quantile": _("equal mass")}[k],
    )
    try:
        rep = ds.calibration_report_of(data["digest"], y, p, n_bins, strategy)
    except InputError as exc:
        st.error(md_text(f"{data['source']}: {exc.plain(_)}"))
        return
    # fewer replicates on large inputs keeps the slider responsive (one pass per replicate)
    n_resamples = 200 if y.size <= 200_000 else 50
    with st.spinner(_("Bootstrapping ...")):
        ci = ds.calibration_ci_of(data["digest"], y, p, n_bins, strategy, n_resamples)
    row = st.container(horizontal=True, gap="medium")  # wraps on a narrow screen
    for name in ds.CI_STATISTICS:
        cell = row.container(width=180)
        cell.metric(
            _(ds.CALIBRATION_LABELS[name]),
            f"{rep[name]:.4f}",
            help=say(
                _("{interval}; {n} bootstrap replicates"),
                interval=ds.interval_text(ci[name]),
                n=n_resamples,
            ),
        )
        cell.caption(ds.interval_text(ci[name]))
    at_threshold(rep["bins"])
    table = ds.bins_table(rep["bins"])
    counts = (_("Items"), _("Positives"))
    st.dataframe(
        table,
        key=Calibration.BINS_TABLE,
        hide_index=True,
        width="stretch",
        column_config={
            c: st.column_config.NumberColumn(format="%.4f")
            for c in table.columns
            if c not in counts
        },
        placeholder=MISSING,
    )
    download_table(
        table,
        "reliability_bins",
        title=_("Reliability bins"),
        key="reliability_bins",
        index=False,
        source=data["source"],
        bins=n_bins,
        strategy=strategy,
    )


def _share_calibration_threshold() -> None:
    dst.share_threshold(data["digest"], st.session_state[dst.CAL_THRESHOLD])


@st.fragment
def at_threshold(bins: dict) -> None:
    """The decision threshold, shared with the Detection page on the same scores: only the
    diagram and the confusion counts redraw."""
    dst.sync_calibration_threshold(data["digest"])
    threshold = st.slider(
        _("Decision threshold (predict positive when probability ≥ threshold)"),
        0.0,
        1.0,
        step=0.01,
        format=THRESHOLD_FORMAT,  # the threshold itself (shared with Detection: 0.655105)
        key=dst.CAL_THRESHOLD,
        on_change=_share_calibration_threshold,
    )
    dst.share_threshold(data["digest"], threshold)
    st.caption(
        _(
            "The same threshold is used on the Detection page for these scores: moving it on either page "
            "moves it on both."
        )
    )
    curve = ds.curve_of(data["digest"], y, p)
    cm = ds.confusion_at(curve, threshold)
    st.markdown(
        say(
            _("**At threshold {t}**: probability ≥ {t} is predicted positive"),
            t=threshold_text(threshold),
        )
    )
    t1, t2 = st.columns([3, 2])
    t1.dataframe(
        ds.confusion_table(cm), key=Calibration.CONFUSION, width="stretch", placeholder=MISSING
    )

    def rate(v) -> str:
        return "–" if v != v else f"{v:.4f}"

    t2.markdown(  # i18n: ignore (canonical names)
        say(
            "TPR **{tpr}**  \nFPR **{fpr}**  \n{precision}",
            tpr=rate(cm["tpr"]),
            fpr=rate(cm["fpr"]),
            precision=say(_("Precision **{value}**"), value=rate(cm["precision"])),
        )
    )
    if cm["precision"] != cm["precision"]:
        t2.caption(
            _("“–”: nothing is predicted positive at this threshold, so precision is undefined.")
        )
    st.plotly_chart(
        fig.reliability_figure(bins, threshold=threshold),
        key=Calibration.RELIABILITY,
        width="stretch",
    )


with page(_("Calibration"), sidebar=False, summary=ds.scores_summary, caption=caption()):
    ds.ensure_defaults()
    with st.expander(_("Data: probabilities and labels"), expanded=False):
        upload_slot(
            Calibration.UPLOAD,
            _("CSV, TSV, Parquet or JSON with a probability and a 0/1 label column"),
            read_upload,
            types=TABLE_TYPES,
        )
        st.button(
            _("Use the sample data"), key=Calibration.USE_SAMPLE, on_click=ds.use_sample_scores
        )

    data = st.session_state[dst.SCORES]
    y, p = data["y_true"], data["y_score"]
    st.caption(say(_("{source}: {rows} rows"), source=data["source"], rows=count(y.size)))
    diagram()
