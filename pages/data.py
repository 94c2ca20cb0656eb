"""Data page: upload qrels, runs and query metadata (or load the sample); diagnostics."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from ui.common import keep, state, store
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.common.i18n import count, count_format, percent_format
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import MEASURE_FORMAT, MISSING, md_join, md_text, plain, say
from ui.common.upload import UPLOAD_FORMATS
from ui.ranking.data import (
    clear_loaded,
    coverage_notes,
    diagnostic_measures,
    diagnostics,
    evaluate_loaded,
    has_data,
    judgements_per_label,
    remove_run,
    show_coverage_notes,
    show_unusable,
    subtopic_summary,
    unusable_runs,
)
from ui.ranking.state import Data
from ui.ranking.upload import has_message, upload_box
from ui.samples import (
    DIVERSITY_SUMMARY,
    SAMPLE_SUMMARY,
    load_diversity_sample,
    load_every_sample,
)

# the sidebar lists what this run loads: drawn last
with page(
    _("Data"),
    sidebar=False,
    caption=_(
        "Drag and drop files: TREC, CSV/TSV, Parquet, JSON/JSONL, "
        "gzip-compressed or not. Each run is a system, named after its file."
    ),
) as p:
    buttons = st.container(horizontal=True)
    if buttons.button(
        _("Load sample data"), type="primary", key=Data.SAMPLE, on_click=load_every_sample
    ):
        st.success(_(SAMPLE_SUMMARY))
    if buttons.button(
        _("Diversity sample"),
        key=Data.DIVERSITY_SAMPLE,
        on_click=load_diversity_sample,
        help=_(
            "Subtopic qrels (qid subtopic docid relevance) and two runs, for alpha-nDCG and ERR-IA"
        ),
    ):
        st.success(_(DIVERSITY_SUMMARY))

    cost_slot = st.empty()
    left, right = st.columns(2)
    with left:
        st.subheader(_("Qrels"))
        qfmt = st.selectbox(_("Qrels format"), UPLOAD_FORMATS, key=Data.QRELS_FORMAT)
        upload_box("qrels", _("Relevance judgements (qrels)"), qfmt)
        loaded_qrels = st.session_state[state.QRELS]
        if loaded_qrels is not None:
            st.caption(
                say(
                    _("{queries} queries, {judgements} judgements"),
                    queries=count(len(loaded_qrels.unique_query_ids())),
                    judgements=count(len(loaded_qrels)),
                )
            )
            subtopics = subtopic_summary(loaded_qrels)
            if subtopics:
                st.info(subtopics, icon=":material/diversity_3:")
            labels = judgements_per_label(loaded_qrels)
            st.dataframe(
                labels.assign(Share=labels["Share"] * 100),
                hide_index=True,
                key=Data.LABELS,
                column_config={
                    "Label": st.column_config.TextColumn(_("Label")),
                    "Judgements": st.column_config.NumberColumn(
                        _("Judgements"), format=count_format()
                    ),
                    "Share": st.column_config.NumberColumn(_("Share"), format=percent_format()),
                },
                placeholder=MISSING,
            )
    with right:
        st.subheader(_("Runs"))
        rfmt = st.selectbox(_("Run format"), UPLOAD_FORMATS, key=Data.RUN_FORMAT)
        upload_box("run", _("One or more runs"), rfmt, multiple=True)
        runs_warning = st.empty()  # a run that shares nothing with the qrels, named under its box

    with st.expander(
        _("Query metadata (optional): category, difficulty, date, criterion, fold"),
        expanded=st.session_state[state.META] is not None or has_message("data", "meta"),
    ):
        upload_box("meta", _("Metadata table (one row per query; a query id column)"))
        meta = st.session_state[state.META]
        if meta is not None:
            # dates as days, as in every other table (the grid's default adds 00:00:00)
            st.dataframe(
                meta,
                height=220,
                placeholder=MISSING,
                column_config={
                    c: st.column_config.DateColumn(format="YYYY-MM-DD")
                    for c in meta.columns
                    if pd.api.types.is_datetime64_any_dtype(meta[c])
                },
            )

    # drawn after the uploads, so it is enabled in the run that loads the first file
    buttons.button(
        _("Clear everything"), key=Data.CLEAR, disabled=not has_data(), on_click=clear_loaded
    )
    # where the visitor's data is kept on a shared server, and what the memory gate does
    expired = keep.expired_note()
    if expired:
        st.warning(expired, icon=":material/history:")
    cost_slot.caption(
        say("{cost} {kept}", cost=store.cost_line(), kept=keep.keep_note()),
        help=_(
            "Every upload and computation reserves the memory it needs before it starts, in turn; what "
            "could never fit is refused, and runs of any size are evaluated with the command line "
            "(ranklab evaluate), which streams them."
        ),
    )

    runs = st.session_state[state.RUNS] or {}
    if runs:
        rc1, rc2 = st.columns([3, 1], vertical_alignment="bottom")
        rc1.selectbox(_("Remove a loaded run"), list(runs), key=Data.DROP_RUN)
        rc2.button(
            _("Remove"),
            key=Data.DROP_RUN_BUTTON,
            on_click=lambda: remove_run(st.session_state[Data.DROP_RUN]),
        )

    if not needs(
        has_data(), _("Load a qrels file and at least one run (or the sample) to see diagnostics.")
    ):  # the sample's button is at the top
        p.stop()

    # --- Diagnostics -----------------------------------------------------------------
    st.header(_("Diagnostics"))
    runs = st.session_state[state.RUNS]
    k = int(
        st.number_input(
            _("Cutoff k for ties and unjudged documents"),
            min_value=1,
            max_value=1000,
            value=10,
            key=Data.DIAGNOSTICS_K,
        )
    )
    conv = conventions()
    try:
        with st.spinner(_("Checking the runs ...")):
            diag_evs = evaluate_loaded(diagnostic_measures(k), conv)  # cached per session
    except InputError as exc:
        diag_evs = {}
        st.error(md_text(exc.plain(_)))
        if "duplicate" in str(exc):
            st.caption(_("Choose a duplicates rule under **More conventions** in the sidebar."))
    show_unusable(unusable_runs(diag_evs), runs_warning)
    show_coverage_notes(coverage_notes(diag_evs))
    none = _("none")
    for name, ev in diag_evs.items():
        d = ev.diagnostics
        with st.expander(say(_("{run}: details"), run=name)):
            st.write(
                say(
                    _("Missing queries (judged, not in the run): {ids}"),
                    ids=md_join(d["missing_queries"]) or none,
                )
            )
            st.write(
                say(
                    _("Extra queries (in the run, not judged; ignored): {ids}"),
                    ids=md_join(d["extra_queries"]) or none,
                )
            )
            st.write(
                say(
                    _(
                        "Tied groups: {groups} ({documents} documents); straddling @{k}: {straddling}. Ties are "
                        "broken by the rule '{rule}' (sidebar)."
                    ),
                    groups=d["tied_groups"],
                    documents=d["tied_documents"],
                    k=k,
                    straddling=d["ties_straddling"].get(str(k), 0),
                    rule=conv.ties,
                )
            )
    table = diagnostics(diag_evs, k, runs)
    if len(table):
        # plain headers; counts with thousands separators, means with 4 decimals; a mean over no
        # query is "–" (a run that shares no query with the qrels, named above)
        headers = {
            "lines": _("Lines"),
            "queries evaluated": _("Queries evaluated"),
            "missing queries": _("Missing queries"),
            "extra queries": _("Extra queries"),
            "duplicates": _("Duplicates"),
            f"tied groups straddling @{k}": plain(_("Tied groups straddling @{k}"), k=k),
            f"Judged@{k} (mean)": plain(_("Judged@{k} (mean)"), k=k),
            f"queries with unjudged in top {k}": plain(_("Queries with unjudged in top {k}"), k=k),
        }
        judged = f"Judged@{k} (mean)"
        texts = [judged] if table[judged].isna().any() else []  # "–", never "None"
        shown = table.assign(
            **{c: ["–" if v != v else f"{v:.4f}" for v in table[c]] for c in texts}
        )
        config = {"run": st.column_config.TextColumn(_("Run"))} | {
            c: (
                st.column_config.TextColumn(headers.get(c, c))
                if c in texts
                else st.column_config.NumberColumn(
                    headers.get(c, c),
                    format=MEASURE_FORMAT if table[c].dtype.kind == "f" else count_format(),
                )
            )
            for c in table.columns
        }
        # two tables: the nine columns in one were wider than the page at 1280 px (Spanish)
        at_k = [f"tied groups straddling @{k}", judged, f"queries with unjudged in top {k}"]
        st.markdown(_("**Queries and lines**"))
        st.dataframe(shown.drop(columns=at_k), column_config=config, placeholder=MISSING)
        st.markdown(say(_("**Ties and unjudged documents in the top {k}**"), k=k))
        st.dataframe(shown[at_k], column_config=config, placeholder=MISSING)
        download_table(table, "diagnostics", conv, title=_("Data diagnostics"), key="diag")
