"""Calibration: reliability diagram with a histogram of confidences; ECE, MCE, Brier."""

import pandas as pd
import streamlit as st

from ui.frame import page_setup

page_setup()

from metrics_core import calibration as cal  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402
from metrics_core.report import format_table, provenance  # noqa: E402
from ui import detection_state as ds  # noqa: E402
from ui import figures_detection as fig  # noqa: E402
from ui.upload import load_once  # noqa: E402

ds.ensure_defaults()
st.title("Calibration")
st.caption("Equal-width bins are [i/B, (i+1)/B) with the last bin closed, so p = 1.0 counts. "
           "ECE is count-weighted (seed 002 §4.1). Probabilities outside [0, 1] are refused, "
           "never squashed.")

with st.expander("Data: probabilities and labels", expanded=False):
    up = st.file_uploader("CSV, TSV, Parquet or JSON with a probability and a 0/1 label column",
                          type=["csv", "tsv", "txt", "parquet", "json", "jsonl"],
                          key="ranklab.detection.cal_upload")
    if up is not None:
        def use_upload():
            st.session_state[ds.SCORES] = ds.load_scores(up.getvalue(), up.name)

        load_once("ranklab.detection.cal_upload.seen", up.file_id, use_upload)
    if st.button("Use the sample data", key="ranklab.detection.cal_sample"):
        st.session_state[ds.SCORES] = ds.load_scores(ds.SAMPLE_SCORES.read_bytes(),
                                                     ds.SAMPLE_SCORES.name)

data = st.session_state[ds.SCORES]
y, p = data["y_true"], data["y_score"]
st.caption(f"{data['source']}: {y.size:,} rows")


@st.cache_data(max_entries=32, show_spinner=False)
def report_of(key, _y, _p, n_bins, strategy):
    return cal.calibration_report(_y, _p, n_bins, strategy)


@st.cache_data(max_entries=32, show_spinner="Bootstrapping ...")
def ci_of(key, _y, _p, n_bins, strategy, n_boot):
    return cal.bootstrap_calibration_ci(_y, _p, n_bins, strategy, n_boot=n_boot, seed=0)


@st.fragment
def diagram() -> None:
    c1, c2 = st.columns(2)
    n_bins = c1.slider("Bins", 2, 50, 10, key=ds.CAL_BINS)
    strategy = c2.radio("Binning", cal.STRATEGIES, horizontal=True, key=ds.CAL_STRATEGY,
                        format_func={"uniform": "equal width", "quantile": "equal mass"}.get)
    try:
        rep = report_of(data["digest"], y, p, n_bins, strategy)
    except InputError as exc:
        st.error(f"{data['source']}: {exc}")
        return
    # fewer replicates on large inputs keeps the slider responsive (one pass per replicate)
    n_boot = 200 if y.size <= 200_000 else 50
    ci = ci_of(data["digest"], y, p, n_bins, strategy, n_boot)
    m1, m2, m3 = st.columns(3)
    for col, name, label in ((m1, "ece", "ECE"), (m2, "mce", "MCE"), (m3, "brier", "Brier")):
        col.metric(label, f"{rep[name]:.4f}",
                   help=f"95% bootstrap CI [{ci[name]['low']:.4f}, {ci[name]['high']:.4f}] ({n_boot} replicates)")
        col.caption(f"95% CI [{ci[name]['low']:.4f}, {ci[name]['high']:.4f}]")
    st.plotly_chart(fig.reliability_figure(rep["bins"]), key="ranklab.detection.reliability")
    b = rep["bins"]
    table = pd.DataFrame({"lower": b["lower"], "upper": b["upper"], "count": b["count"],
                          "confidence": b["confidence"], "frequency": b["frequency"],
                          "freq_low": b["freq_low"], "freq_high": b["freq_high"]})
    st.dataframe(table, key="ranklab.detection.bins", hide_index=True)
    prov = provenance(None, source=data["source"], bins=n_bins, strategy=strategy)
    e1, e2, e3 = st.columns(3)
    for col, fmt, ext in ((e1, "csv", "csv"), (e2, "markdown", "md"), (e3, "latex", "tex")):
        col.download_button(f"Bins as {fmt}", format_table(table, fmt, prov=prov, index=False,
                                                           title="Reliability bins"),
                            file_name=f"reliability_bins.{ext}",
                            key=f"ranklab.detection.cal_export_{fmt}")


diagram()
