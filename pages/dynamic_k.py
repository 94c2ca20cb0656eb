"""Dynamic K: per-query probability threshold clamped to [k_min, k_max]."""

import pandas as pd
import streamlit as st

from metrics_core import dynamic_k as dk
from ui.common.downloads import download_table
from ui.common.frame import page
from ui.common.i18n import gettext as _
from ui.common.upload import TABLE_TYPES, upload_slot
from ui.detection import data as ds
from ui.detection import figures as fig
from ui.detection import state as dst
from ui.detection.state import DynamicK


def caption() -> str:
    return _("Each query keeps its candidates whose probability reaches the threshold, never fewer than the "
             "minimum and never more than the maximum, which is the smaller of the hard cap and the share of "
             "the query's candidates (rounded down); when the maximum is below the minimum, the maximum wins. "
             "A query with nothing selected and no gold item counts as recall 1 and precision 1; nothing "
             "selected with a gold item, or a selection without one, counts as 0.")


def read_upload(files) -> None:
    ds.use_candidates(files[0].getvalue(), files[0].name)


@st.fragment
def controls() -> None:
    c1, c2, c3, c4 = st.columns(4)
    tau = c1.slider(_("Probability threshold (tau)"), 0.0, 1.0, dk.DEFAULTS["tau"], 0.01, key=dst.DK_TAU,
                    help=_("A candidate is kept when its probability is at or above this value."))
    k_min = c2.slider(_("At least (k_min)"), 0, 20, dk.DEFAULTS["k_min"], key=dst.DK_KMIN,
                      help=_("The fewest candidates a query keeps, even below the threshold (the most probable "
                             "first)."))
    hard_cap = c3.slider(_("At most (hard cap)"), 0, 50, dk.DEFAULTS["hard_cap"], key=dst.DK_CAP,
                         help=_("The most candidates any query keeps."))
    ratio = c4.slider(_("At most, as a share (k_max ratio)"), 0.0, 1.0, dk.DEFAULTS["k_max_ratio"], 0.05,
                      key=dst.DK_RATIO,
                      help=_("The most candidates a query keeps as a share of its candidates (rounded down); "
                             "the smaller of this and the hard cap applies."))
    r = dk.dynamic_k_scores(table, tau, k_min, hard_cap, ratio)
    m1, m2, m3 = st.columns(3)
    m1.metric(_("Evidence recall"), f"{r['recall']:.4f}",
              help=_("Mean over the queries of the share of gold items kept."))
    m2.metric(_("Evidence precision"), f"{r['precision']:.4f}",
              help=_("Mean over the queries of the share of kept items that are gold."))
    m3.metric(_("Average K"), f"{r['avg_k']:.3f}", help=_("Mean number of candidates kept per query."))
    curve = ds.dynamic_k_curve_of(data["digest"], table, k_min, hard_cap, ratio)
    st.plotly_chart(fig.dynamic_k_figure(curve, tau=tau), key=DynamicK.CURVE, width="stretch")
    if table.criterion is not None:
        pc = dk.per_criterion(table, tau, k_min, hard_cap, ratio)
        out = pc["table"].copy()
        out.loc[_("micro (pooled)"), ["recall", "precision", "avg_k"]] = list(pc["micro"].values())
        out.loc[_("macro (mean)"), ["recall", "precision", "avg_k"]] = list(pc["macro"].values())
        out = out.rename(columns=lambda c: _(ds.DYNAMIC_K_COLUMNS.get(c, c)))
        out.index.name = _("Criterion")
        st.subheader(_("Per criterion"))
        st.dataframe(out.style.format(precision=4, na_rep="–"), key=DynamicK.PER_CRITERION)
        st.caption(ds.dynamic_k_legend(out.isna().any().any()))
        download_table(out, "dynamic_k", title=_("Dynamic K per criterion"), key="dynamic_k", source=data["source"],
                       tau=tau, k_min=k_min, hard_cap=hard_cap, k_max_ratio=ratio)
    else:
        summary = pd.DataFrame([r]).drop(columns=["params"]).rename(columns=lambda c: _(ds.DYNAMIC_K_COLUMNS.get(c, c)))
        st.dataframe(summary, key=DynamicK.SUMMARY, hide_index=True)
        st.caption(ds.dynamic_k_legend(False))
        download_table(summary, "dynamic_k", title=_("Dynamic K"), key="dynamic_k", index=False,
                       source=data["source"], tau=tau, k_min=k_min, hard_cap=hard_cap, k_max_ratio=ratio)


with page(_("Dynamic K"), caption=caption()):
    ds.ensure_defaults()
    with st.expander(_("Data: candidates"), expanded=False):
        upload_slot(DynamicK.UPLOAD, _("Table with query, candidate, probability, is_gold[, criterion]"), read_upload,
                    types=TABLE_TYPES)
        st.button(_("Use the sample data"), key=DynamicK.USE_SAMPLE, on_click=ds.use_sample_candidates)

    data = st.session_state[dst.CANDIDATES]
    table = ds.candidate_table_of(data["digest"], data)
    if table.criterion is not None:
        st.caption(_("{source}: {n} candidates, {units} (query, criterion) units").format(
            source=data["source"], n=f"{data['query'].size:,}", units=f"{table.n_queries:,}"))
    else:
        st.caption(_("{source}: {n} candidates, {queries} queries").format(
            source=data["source"], n=f"{data['query'].size:,}", queries=f"{table.n_queries:,}"))
    controls()
