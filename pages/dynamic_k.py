"""Dynamic K: per-query probability threshold clamped to [k_min, k_max]."""

import pandas as pd
import streamlit as st

from ui.common.downloads import download_table
from ui.common.frame import page
from ui.common.i18n import count
from ui.common.i18n import gettext as _
from ui.common.style import MISSING, say
from ui.common.upload import TABLE_TYPES, upload_slot
from ui.detection import data as ds
from ui.detection import figures as fig
from ui.detection import state as dst
from ui.detection.state import DynamicK


def caption() -> str:
    return _(
        "Each query keeps its candidates whose probability reaches the threshold, never fewer than the "
        "minimum and never more than the maximum, which is the smaller of the hard cap and the share of "
        "the query's candidates (rounded down); when the maximum is below the minimum, the maximum wins. "
        "A query with nothing selected and no gold item counts as recall 1 and precision 1; nothing "
        "selected with a gold item, or a selection without one, counts as 0."
    )


def read_upload(files) -> None:
    ds.use_candidates(files[0].getvalue(), files[0].name)


def words(field: str) -> tuple[str, str]:
    """A setting's or result's plain name and one-sentence explanation, in the visitor's
    language (:func:`metrics_core.dynamic_k.field_words`)."""
    return ds.dynamic_k_words(field)


def setting(field: str) -> dict:
    """The label (plain name, then the parameter's name) and help of a setting's slider."""
    name, sentence = words(field)
    return {"label": say(_("{name} ({parameter})"), name=name, parameter=field), "help": sentence}


@st.fragment
def controls() -> None:
    c1, c2, c3, c4 = st.columns(4)
    tau = c1.slider(
        min_value=0.0,
        max_value=1.0,
        value=ds.DYNAMIC_K_DEFAULTS["tau"],
        step=0.01,
        key=dst.DK_TAU,
        **setting("tau"),
    )
    k_min = c2.slider(
        min_value=0,
        max_value=20,
        value=ds.DYNAMIC_K_DEFAULTS["k_min"],
        key=dst.DK_KMIN,
        **setting("k_min"),
    )
    hard_cap = c3.slider(
        min_value=0,
        max_value=50,
        value=ds.DYNAMIC_K_DEFAULTS["hard_cap"],
        key=dst.DK_CAP,
        **setting("hard_cap"),
    )
    ratio = c4.slider(
        min_value=0.0,
        max_value=1.0,
        value=ds.DYNAMIC_K_DEFAULTS["k_max_ratio"],
        step=0.05,
        key=dst.DK_RATIO,
        **setting("k_max_ratio"),
    )
    r = ds.dynamic_k_scores_of(data["digest"], table, tau, k_min, hard_cap, ratio)
    m1, m2, m3 = st.columns(3)
    m1.metric(words("recall")[0], f"{r['recall']:.4f}", help=words("recall")[1])
    m2.metric(words("precision")[0], f"{r['precision']:.4f}", help=words("precision")[1])
    m3.metric(_("Average K"), f"{r['avg_k']:.3f}", help=words("avg_k")[1])
    curve = ds.dynamic_k_curve_of(data["digest"], table, k_min, hard_cap, ratio)
    st.plotly_chart(fig.dynamic_k_figure(curve, tau=tau), key=DynamicK.CURVE, width="stretch")
    if table.criterion is not None:
        pc = ds.dynamic_k_per_criterion_of(data["digest"], table, tau, k_min, hard_cap, ratio)
        out = pc["table"].copy()
        out.loc[_("micro (pooled)"), ["recall", "precision", "avg_k"]] = list(pc["micro"].values())
        out.loc[_("macro (mean)"), ["recall", "precision", "avg_k"]] = list(pc["macro"].values())
        out = out.rename(columns=ds.dynamic_k_header)
        out.index.name = _("Criterion")
        st.subheader(_("Per criterion"))
        counts = [c for c in out.columns if c == ds.dynamic_k_header("n_queries")]
        pooled = [ds.dynamic_k_header(f) for f in ("micro_recall", "micro_precision")]
        pooled = [c for c in pooled if c in out.columns]
        # two tables: the means over queries, then the pooled counts (the seven columns in one
        # were 965 px wide in Spanish, on an 818 px page); the index column as wide as its
        # longest label (the grid's default cut "micro (pooled)")
        parts = ((out.drop(columns=pooled), DynamicK.PER_CRITERION), (out[pooled], None))
        for part, key in parts:
            if len(part.columns):
                st.dataframe(
                    part.style.format(precision=4, na_rep="–").format(
                        "{:.0f}", subset=[c for c in counts if c in part.columns], na_rep="–"
                    ),
                    key=key,
                    width="stretch",
                    # every row on the page: the micro and macro rows, last, sat under the fold
                    height="content" if len(part) <= 30 else "auto",
                    placeholder=MISSING,
                    column_config={
                        "_index": st.column_config.TextColumn(_("Criterion"), width=140)
                    },
                )
        st.caption(ds.dynamic_k_legend(out.isna().any().any(), per_criterion=True))
        download_table(
            out,
            "dynamic_k",
            title=_("Dynamic K per criterion"),
            key="dynamic_k",
            source=data["source"],
            tau=tau,
            k_min=k_min,
            hard_cap=hard_cap,
            k_max_ratio=ratio,
        )
    else:
        summary = pd.DataFrame([r]).drop(columns=["params"]).rename(columns=ds.dynamic_k_header)
        st.dataframe(summary, key=DynamicK.SUMMARY, hide_index=True, placeholder=MISSING)
        st.caption(ds.dynamic_k_legend(False, per_criterion=False))  # one row: no macro row
        download_table(
            summary,
            "dynamic_k",
            title=_("Dynamic K"),
            key="dynamic_k",
            index=False,
            source=data["source"],
            tau=tau,
            k_min=k_min,
            hard_cap=hard_cap,
            k_max_ratio=ratio,
        )


with page(_("Dynamic K"), sidebar=False, summary=ds.candidates_summary, caption=caption()):
    ds.ensure_defaults()
    with st.expander(_("Data: candidates"), expanded=False):
        upload_slot(
            DynamicK.UPLOAD,
            _("Table with query, candidate, probability, is_gold[, criterion]"),
            read_upload,
            types=TABLE_TYPES,
        )
        st.button(
            _("Use the sample data"), key=DynamicK.USE_SAMPLE, on_click=ds.use_sample_candidates
        )

    data = st.session_state[dst.CANDIDATES]
    table = ds.candidate_table_of(data["digest"], data)
    if table.criterion is not None:
        st.caption(
            say(
                _("{source}: {n} candidates, {units} (query, criterion) units"),
                source=data["source"],
                n=count(data["query"].size),
                units=count(table.n_queries),
            )
        )
    else:
        st.caption(
            say(
                _("{source}: {n} candidates, {queries} queries"),
                source=data["source"],
                n=count(data["query"].size),
                queries=count(table.n_queries),
            )
        )
    controls()
