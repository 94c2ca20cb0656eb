"""Calibration: reliability diagram with per-bin intervals and a decision threshold;
plug-in and debiased ECE, MCE and Brier with BCa bootstrap intervals."""

import numpy as np
import pandas as pd
import streamlit as st

from ui.frame import page_setup

page_setup()

from metrics_core import calibration as cal  # noqa: E402
from metrics_core import detection as det  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402
from metrics_core.report import format_table, provenance  # noqa: E402
from ui import detection_state as ds  # noqa: E402
from ui import figures_detection as fig  # noqa: E402
from ui.upload import load_once  # noqa: E402

ds.ensure_defaults()
st.title("Calibration")
st.caption("Do predicted probabilities match how often the event happens? Equal-width bins are "
           "[i/B, (i+1)/B) with the last bin closed, so p = 1.0 counts. The **plug-in ECE** is the "
           "count-weighted mean gap |frequency − mean probability| over the bins (Naeini et al. 2015); it "
           "overstates the error, more with many small bins, so the **debiased ECE** subtracts each bin's "
           "estimated sampling bias (Kumar et al. 2019). Intervals are 95 % BCa bootstrap intervals (Efron "
           "1987); the error bars of the diagram are each bin's 95 % Wilson interval. Probabilities outside "
           "[0, 1] are refused, never squashed.")

with st.expander("Data: probabilities and labels", expanded=False):
    up = st.file_uploader("CSV, TSV, Parquet or JSON with a probability and a 0/1 label column",
                          type=["csv", "tsv", "txt", "parquet", "json", "jsonl"],
                          key="ranklab.detection.cal_upload")
    if up is not None:
        def use_upload():
            st.session_state[ds.SCORES] = ds.load_scores_for_page(up.getvalue(), up.name)

        load_once("ranklab.detection.cal_upload.seen", up.file_id, use_upload)
    if st.button("Use the sample data", key="ranklab.detection.cal_sample"):
        st.session_state[ds.SCORES] = ds.load_scores(ds.SAMPLE_SCORES.read_bytes(),
                                                     ds.SAMPLE_SCORES.name)

data = st.session_state[ds.SCORES]
y, p = data["y_true"], data["y_score"]
st.caption(f"{data['source']}: {y.size:,} rows")

LABELS = {"ece": "ECE (plug-in)", "ece_debiased": "ECE (debiased)", "mce": "MCE", "brier": "Brier score"}


@st.cache_data(max_entries=16, show_spinner=False, scope="session")
def report_of(key, _y, _p, n_bins, strategy):
    return cal.calibration_report(_y, _p, n_bins, strategy)


@st.cache_data(max_entries=16, show_spinner="Bootstrapping ...", scope="session")
def ci_of(key, _y, _p, n_bins, strategy, n_resamples):
    return cal.bootstrap_calibration_ci(_y, _p, n_bins, strategy, n_resamples=n_resamples, seed=0)


def interval_text(ci: dict) -> str:
    if ci["reliable"]:
        return f"95% {ci['method']} CI [{ci['low']:.4f}, {ci['high']:.4f}]"
    return "no reliable interval: resampling shifts this value more than it spreads it (use fewer bins)"


def bins_table(b: dict) -> pd.DataFrame:
    """The bins for the screen and the exports: 4 decimals, counts as integers."""
    return pd.DataFrame({
        "From": np.round(b["lower"], 4), "To": np.round(b["upper"], 4),
        "Items": b["count"].astype(np.int64), "Positives": b["positives"].astype(np.int64),
        "Mean probability": np.round(b["confidence"], 4), "Frequency": np.round(b["frequency"], 4),
        "Frequency 95% low": np.round(b["freq_low"], 4), "Frequency 95% high": np.round(b["freq_high"], 4)})


@st.fragment
def diagram() -> None:
    """Bins and binning: the statistics, the diagram and the bins table."""
    c1, c2 = st.columns([1, 1])
    n_bins = c1.slider("Bins", 2, 50, 10, key=ds.CAL_BINS)
    strategy = c2.radio("Binning", cal.STRATEGIES, horizontal=True, key=ds.CAL_STRATEGY,
                        format_func={"uniform": "equal width", "quantile": "equal mass"}.get)
    try:
        rep = report_of(data["digest"], y, p, n_bins, strategy)
    except InputError as exc:
        st.error(f"{data['source']}: {exc}")
        return
    # fewer replicates on large inputs keeps the slider responsive (one pass per replicate)
    n_resamples = 200 if y.size <= 200_000 else 50
    ci = ci_of(data["digest"], y, p, n_bins, strategy, n_resamples)
    row = st.container(horizontal=True, gap="medium")  # wraps on a narrow screen
    for name in cal.CI_STATISTICS:
        cell = row.container(width=180)
        cell.metric(LABELS[name], f"{rep[name]:.4f}",
                    help=f"{interval_text(ci[name])}; {n_resamples} bootstrap replicates")
        cell.caption(interval_text(ci[name]))
    at_threshold(rep["bins"])
    table = bins_table(rep["bins"])
    st.dataframe(table, key="ranklab.detection.bins", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in table.columns if c not in ("Items", "Positives")})
    prov = provenance(None, source=data["source"], bins=n_bins, strategy=strategy)
    e1, e2, e3 = st.columns(3)
    for col, fmt, ext in ((e1, "csv", "csv"), (e2, "markdown", "md"), (e3, "latex", "tex")):
        col.download_button(f"Bins as {fmt}", format_table(table, fmt, prov=prov, index=False,
                                                           title="Reliability bins"),
                            file_name=f"reliability_bins.{ext}",
                            key=f"ranklab.detection.cal_export_{fmt}")


@st.fragment
def at_threshold(bins: dict) -> None:
    """The decision threshold: only the diagram and the confusion counts redraw."""
    threshold = st.slider("Decision threshold (predict positive when probability ≥ threshold)",
                          0.0, 1.0, 0.5, 0.01, key=ds.CAL_THRESHOLD)
    curve = ds.curve_of(data["digest"], y, p)
    cm = det.confusion_matrix_at(None, None, threshold, curve=curve)
    st.markdown(f"**At threshold {threshold:.2f}**: probability ≥ {threshold:.2f} is predicted positive")
    t1, t2 = st.columns([3, 2])
    t1.dataframe(pd.DataFrame({"Predicted positive": [cm["tp"], cm["fp"]],
                               "Predicted negative": [cm["fn"], cm["tn"]]},
                              index=["Actual positive", "Actual negative"]),
                 key="ranklab.detection.cal_confusion", width="stretch")

    def rate(v) -> str:
        return "–" if v != v else f"{v:.4f}"

    t2.markdown(f"TPR **{rate(cm['tpr'])}**  \nFPR **{rate(cm['fpr'])}**  \n"
                f"Precision **{rate(cm['precision'])}**")
    st.plotly_chart(fig.reliability_figure(bins, threshold=threshold), key="ranklab.detection.reliability",
                    width="stretch")


diagram()
