"""Comparative table: runs (or saved evaluations) x chosen measures, each cell and a summary
row labelled, filtered by the queries' dates, exported for a thesis."""

import streamlit as st

from metrics_core.errors import InputError
from ui.common import state
from ui.common.frame import page
from ui.common.i18n import _, current_language, thesis_words
from ui.common.prologue import needs
from ui.common.style import md_text, plain
from ui.compare import data as compare_data
from ui.compare import state as cs
from ui.compare import table as tb
from ui.compare.data import thesis
from ui.history import data as hd
from ui.ranking.data import evaluate_loaded, has_data
from ui.ranking.prologue import ranking_prologue
from ui.samples import load_every_sample

with page(
    _("Comparative table"),
    sidebar=False,
    caption=_(
        "Runs or saved evaluations against the measures you choose, each value and row "
        "labelled (by default Good, Fair or Needs improvement) and a summary row with the "
        "overall verdict (Efficient, Acceptable or Needs improvement), ready for a thesis: "
        "CSV, Markdown, LaTeX or HTML."
    ),
) as p:
    lang = current_language()
    source = st.radio(
        _("Rows"),
        list(tb.SOURCES),
        format_func=lambda s: _(tb.SOURCES[s]),
        key=tb.Table.SOURCE,
        horizontal=True,
    )
    if source in ("runs", "queries"):
        if not needs(
            has_data(),
            _("No runs loaded: load qrels and runs on the Data page, or the sample."),
            key=tb.Table.SAMPLE,
            sample=load_every_sample,
        ):
            p.stop()
        if source == "queries":  # each query of one run labelled: a controlled test's report
            query_run = st.selectbox(
                _("Run"), list(st.session_state[state.RUNS]), key=tb.Table.QUERY_RUN
            )
        measures = tb.measure_choice(st.session_state.get(state.MEASURES) or [])
        words, level_names, verdict_names = thesis_words(source)
        if source == "queries":  # the caption names the run instead of a count of queries per row
            words["queries_caption"] = (
                plain(_("run {run}"), run=query_run).replace("{", "{{").replace("}", "}}")
            )
    else:
        with hd.open_store() as store:
            showing_sample = hd.count(store) == 0
            view = hd.sample_view() if showing_sample else store
            listed = hd.evaluations(view)
            if showing_sample:
                st.info(
                    _(
                        "Nothing is saved in this session's history yet, so these are the sample "
                        "history's evaluations. Save evaluations with the Overview page's form."
                    )
                )
            labels = {int(r["id"]): tb.evaluation_label(r) for _i, r in listed.iterrows()}
            tb.default_evaluations(labels)
            chosen = st.multiselect(
                _("Saved evaluations"),
                list(labels),
                key=tb.Table.EVALUATIONS,
                format_func=labels.get,
                placeholder=_("Choose options"),
            )
            if not chosen:
                st.info(_("Choose at least one saved evaluation."))
                p.stop()
            rows, meta = hd.saved_per_query(
                view, chosen, lambda run, i: tb.evaluation_label({"run": run, "id": i})
            )
        measures = tb.measure_choice([c for frame in rows.values() for c in frame.columns])
        words, level_names, verdict_names = thesis_words("evaluations")
    if not measures:
        st.info(_("Choose at least one measure."))
        p.stop()
    # the table, its summary row and its downloads first; the settings that shape it below
    answer = st.container()
    st.subheader(_("Settings"))
    with st.expander(_("Labels and thresholds"), icon=":material/tune:"):
        thresholds = tb.thresholds_editor(measures)
        names = tb.names_editor(lang, level_names, "level", _("Names of the levels"))
        verdicts = tb.names_editor(
            lang, verdict_names, "verdict", _("Names of the summary's verdict")
        )
    if source == "runs":
        # the ranking pages' prologue: unusable runs named and left out
        loaded = ranking_prologue(
            list(measures), st.session_state.get(state.CONVENTIONS), sample=load_every_sample
        )
        if loaded is None:
            p.stop()
        rows, meta = list(loaded.evaluations.values()), loaded.meta
        # the Compare page's systems of several runs: one row each, the mean of its runs
        rows, systems = compare_data.as_systems(rows, st.session_state.get(cs.SYSTEMS, ""))
        if systems:
            answer.caption(md_text(compare_data.systems_caption(systems)))
    elif source == "queries":
        try:
            rows, meta = tb.query_rows(evaluate_loaded(list(measures))[query_run].per_query)
        except InputError as exc:
            st.error(md_text(exc.plain(_)))
            p.stop()
    dates = tb.date_filter(meta)
    names_of_rows = [ev.run_name for ev in rows] if source == "runs" else list(rows)
    # one query per row: no paired test between rows
    significance = (
        tb.significance_choice(names_of_rows, words) if source != "queries" else (None, "t", "holm")
    )
    try:
        grading = tb.grading_from(thresholds, names, verdicts)
        table = thesis(rows, measures, meta, grading, dates, significance)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        p.stop()
    with answer:
        tb.show(table, words, lang)
