"""Click feedback: MRR from the first click of every impression (implicit feedback)."""

import streamlit as st

from metrics_core.errors import InputError
from ui.common import state
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import COUNT_FORMAT, MEASURE_FORMAT, MISSING, md_text, say
from ui.common.thresholds import label, link_to_editor
from ui.common.upload import upload_slot
from ui.ranking.data import click_mrr_of, load_sample_clicks, use_click_log
from ui.ranking.figures import first_click_ranks
from ui.ranking.state import CLICKS_SOURCE, Clicks


def read_upload(files) -> None:
    with st.spinner(say(_("Reading {name} ..."), name=files[0].name)):
        use_click_log(files[0].getvalue(), files[0].name)


with page(_("Click feedback")) as p:
    st.write(
        _(
            "A click log has one row per impression: the query, the results shown (in rank order) "
            "and the ids clicked (in click order). The first click stands in for the first relevant "
            "result: RR = 1 / rank of the first click, and MRR is its mean over impressions."
        )
    )
    st.caption(
        _(
            "No click gives RR = 0. Clicks on ids that were not shown (ads, stale lines) are ignored "
            "and counted; choose *strict* to refuse such logs instead. An id shown twice takes its first "
            "position."
        )
    )

    c1, c2 = st.columns([1, 3])
    c1.button(
        _("Load sample click log"), on_click=load_sample_clicks, key=Clicks.SAMPLE, type="primary"
    )
    upload_slot(
        Clicks.UPLOAD,
        _("Click log (CSV/TSV with columns query, shown, clicked; or JSON/JSONL)"),
        read_upload,
        container=c2,
    )

    log = st.session_state[state.CLICKS]
    if not needs(log is not None, _("Upload a click log or load the sample.")):
        p.stop()

    r1, r2 = st.columns(2)
    rule = r1.radio(
        _("First click"),
        ["first", "top"],
        horizontal=True,
        key=Clicks.RULE,
        format_func=lambda r: {"first": _("first in time"), "top": _("best ranked")}[r],
    )
    strict = r2.checkbox(_("Strict: refuse clicks on ids that were not shown"), key=Clicks.STRICT)
    try:
        result = click_mrr_of(log, rule, strict)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        p.stop()

    m1, m2, m3 = st.columns(3)
    m1.metric(_("MRR (from clicks)"), "–" if result.mrr != result.mrr else f"{result.mrr:.4f}")
    m2.metric(_("Impressions"), len(result.per_impression))
    m3.metric(_("Ignored clicks (not shown)"), result.ignored_clicks)
    word = label("RR", result.mrr) if result.mrr == result.mrr else ""
    if word:  # the thresholds it was labelled with, stated under it by link_to_editor
        st.caption(say(_("Interpretation of the MRR: {label}"), label=word))
    link_to_editor(["RR"])

    conv = conventions()
    source = st.session_state.get(CLICKS_SOURCE, "")
    st.subheader(_("Per query"))
    st.dataframe(
        result.per_query,
        column_config={
            "_index": st.column_config.TextColumn(_("Query")),
            "impressions": st.column_config.NumberColumn(_("Impressions"), format=COUNT_FORMAT),
            "MRR": st.column_config.NumberColumn(format=MEASURE_FORMAT),
        },
        placeholder=MISSING,
    )
    download_table(
        result.per_query,
        "click_mrr_per_query",
        conv,
        title=_("MRR from clicks per query"),
        key="clicks_q",
        click_rule=rule,
        click_log=source,
    )
    st.plotly_chart(first_click_ranks(result.per_impression), key=Clicks.CHART)
    with st.expander(_("Per impression")):
        st.dataframe(
            result.per_impression,
            column_config={
                "_index": st.column_config.NumberColumn(_("Impression"), format=COUNT_FORMAT),
                "query": st.column_config.TextColumn(_("Query")),
                "shown": st.column_config.NumberColumn(_("Shown"), format=COUNT_FORMAT),
                "clicks": st.column_config.NumberColumn(_("Clicks"), format=COUNT_FORMAT),
                "ignored_clicks": st.column_config.NumberColumn(
                    _("Ignored clicks"), format=COUNT_FORMAT
                ),
                "first_click_rank": st.column_config.NumberColumn(
                    _("First click"),
                    format=COUNT_FORMAT,
                    help=_("rank of the first click; 0: no click"),
                ),
                "RR": st.column_config.NumberColumn(format=MEASURE_FORMAT),
            },
            placeholder=MISSING,
        )
        download_table(
            result.per_impression,
            "click_rr_per_impression",
            conv,
            title=_("RR from clicks per impression"),
            key="clicks_i",
            click_rule=rule,
            click_log=source,
        )
