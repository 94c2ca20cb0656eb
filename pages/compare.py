"""Compare systems: every run against a baseline on one query set, the answer first
(delta with its interval, corrected p, wins/ties/losses, markers), then per-query deltas,
folds and criteria, and paper tables with the same markers."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from ui.common import state
from ui.common.downloads import download_buttons
from ui.common.frame import page, query_set_choice
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import (
    COUNT_FORMAT,
    MEASURE_FORMAT,
    MISSING,
    display_measure,
    md_text,
    natural_sorted,
    say,
)
from ui.compare import figures as figs
from ui.compare import state as cs
from ui.compare.all_pairs import all_pairs_section
from ui.compare.data import (
    COMPARE_MEASURES,
    CORRECTIONS,
    MARKERS,
    TESTS,
    answer_columns,
    answer_config,
    answer_numbers,
    answer_table,
    compare,
    correction_label,
    criterion_views,
    detail_numbers,
    detail_table,
    export_need,
    export_texts,
    fold_views,
    per_query_deltas,
    power_legend,
    power_numbers,
    power_table,
    systems_from_text,
    test_label,
)
from ui.ranking.data import evaluate_loaded, has_runs, measure_options
from ui.ranking.prologue import ranking_prologue
from ui.ranking.selection import picked_chart_point, selected_query
from ui.ranking.widgets import column_label
from ui.samples import load_every_sample

DEFAULT_MEASURES = list(COMPARE_MEASURES)

with page(_("Compare systems")) as p:
    if not needs(
        has_runs(2),
        _(
            "Load qrels and at least two runs first (Data page, or the sample below); this page "
            "compares every run with a baseline of your choice."
        ),
        key=cs.SAMPLE,
        sample=load_every_sample,
    ):
        p.stop()

    names = list(st.session_state[state.RUNS])
    measure_names = measure_options()
    query_set = query_set_choice(cs.QUERY_SET)
    conventions = st.session_state[state.CONVENTIONS]
    if st.toggle(
        _("All pairs: every run against every other"),
        key=cs.ALL_PAIRS,
        help=_("Letters show, per measure, which runs each one beats (corrected p below alpha)."),
    ):
        all_pairs_section(
            p,
            names,
            sorted(set(measure_names) | set(DEFAULT_MEASURES)),
            DEFAULT_MEASURES,
            query_set,
            conventions,
            evaluate_loaded,
        )
    answer = st.container()  # the answer is drawn here, above the settings, once computed
    try:  # the systems of the last submitted settings name baselines too
        system_names = list(systems_from_text(st.session_state.get(cs.SYSTEMS, ""), names))
    except InputError:
        system_names = []
    with st.form(cs.SETTINGS_FORM):
        c1, c2 = st.columns([1, 3])
        baseline = c1.selectbox(_("Baseline"), [*system_names, *names], index=0)
        measures = c2.multiselect(
            _("Measures (any name, e.g. nDCG@10, P(rel=2)@5)"),
            options=sorted(set(measure_names) | set(DEFAULT_MEASURES)),
            default=[m for m in DEFAULT_MEASURES],
            accept_new_options=True,
            placeholder=_("Choose options"),
        )
        with st.expander(_("Tests and intervals: permutations, seed, correction, CI level")):
            c3, c4, c5, c6, c7 = st.columns(5)
            permutations = c3.number_input(
                _("Permutations"), min_value=100, max_value=100000, value=10000, step=1000
            )
            seed = c4.number_input(_("Seed"), min_value=0, value=0, step=1)
            correction = c5.selectbox(_("Correction"), CORRECTIONS, format_func=correction_label)
            test = c6.selectbox(
                _("Test shown"),
                TESTS,
                index=TESTS.index("permutation"),
                format_func=test_label,
                help=_("Whose corrected p-value is in the table; every test's p is below it."),
            )
            confidence = c7.select_slider(_("CI level"), options=[0.9, 0.95, 0.99], value=0.95)
        with st.expander(_("How many queries: power and a difference to detect")):
            c8, c9 = st.columns(2)
            power = c8.select_slider(
                _("Power"),
                options=[0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99],
                value=0.8,
                help=_("The chance the paired t-test detects a true difference of that size."),
            )
            chosen = c9.number_input(
                _("Difference to detect (0: only the observed one)"),
                min_value=0.0,
                max_value=1000.0,
                value=0.0,
                step=0.01,
                format="%.3f",
            )
        with st.expander(_("Systems of several runs (seeds, folds)")):
            systems_text = st.text_area(
                _("One system per line: NAME=run,run,..."),
                key=cs.SYSTEMS,
                placeholder=_("dense=dense_seed1,dense_seed2,dense_seed3"),
                help=_(
                    "A system is compared through its per-query mean over its runs, with the "
                    "spread between its runs and a test that accounts for queries and seeds."
                ),
            )
        st.form_submit_button(_("Compare"))

    if not measures:
        st.warning(_("Pick at least one measure."))
        p.stop()

    # the prologue: a run that shares no query (or no judged document) with the qrels is named
    # and left out; every other run keeps its numbers
    loaded = ranking_prologue(
        measures, conventions, sample=load_every_sample, min_runs=2, warning_slot=answer
    )
    if loaded is None:
        p.stop()
    evaluations, measures = list(loaded.evaluations.values()), loaded.measures
    names = loaded.names
    try:
        systems = systems_from_text(systems_text, names)
    except InputError as exc:
        answer.error(md_text(exc.plain(_)))
        p.stop()
    if baseline not in names and baseline not in systems:
        answer.info(
            say(
                _("{run} is set aside, so the baseline is {baseline}."),
                run=baseline,
                baseline=names[0],
            )
        )
        baseline = names[0]
    comparison = compare(
        evaluations,
        baseline,
        list(measures),
        int(permutations),
        int(seed),
        correction,
        float(confidence),
        query_set,
        conventions,
        systems,
        power=float(power),
        power_delta=float(chosen) or None,
    )
    if systems:  # from here on, each system is one run: its per-query means
        evaluations = list(comparison.runs)
        names = [ev.run_name for ev in evaluations]
    by_name = {ev.run_name: ev for ev in evaluations}
    frame = comparison.to_frame()
    cs.remember_settings(comparison)
    legend = comparison.legend(gettext=_)
    screen_legend = comparison.legend(paper=False, gettext=_)

    with answer:
        st.subheader(say(_("Every run vs {baseline}"), baseline=baseline))
        shown = answer_table(comparison)
        shown["measure"] = shown["measure"].map(display_measure)  # means over queries: RR's is MRR
        numbers = answer_numbers(test, bool(systems))
        # a missing value reads "–" (never "None"), with its reason under the table
        st.dataframe(
            shown.style.format({c: "{:.4f}" for c in numbers}, na_rep="–"),
            hide_index=True,
            key=cs.TABLE,
            column_order=answer_columns(test, bool(systems)),
            column_config=answer_config(
                test, baseline, float(confidence), correction, bool(systems)
            ),
            placeholder=MISSING,
        )
        if shown[numbers].isna().any().any():
            st.caption(
                _(
                    "“–”: no value, because the run and the baseline have no query in common for this "
                    "measure, or every difference is zero (no p-value)."
                )
            )
        st.caption(md_text(screen_legend))

        with st.expander(_("p-values of every test (raw and corrected), effect size")):
            detail = detail_table(comparison)
            # a grid (plain text): st.table read its cells as Markdown, a run tag
            # "[tag](http://...)" became a live link
            st.dataframe(
                detail,
                hide_index=True,
                column_config={
                    c: st.column_config.NumberColumn(format=MEASURE_FORMAT)
                    for c in detail_numbers(detail)
                },
                placeholder=MISSING,
            )
            st.caption(
                say(
                    _(
                        "Effect size: mean difference / standard deviation of the differences (paired Cohen's "
                        "d). Markers: {markers}."
                    ),
                    markers=", ".join(f"{MARKERS[t]} {test_label(t)}" for t in TESTS),
                )
            )

        with st.expander(_("How many queries each comparison needs")):
            needed = power_table(comparison)
            st.dataframe(
                needed.style.format({c: "{:.4f}" for c in power_numbers(needed)}, na_rep="–"),
                hide_index=True,
                key=cs.POWER_TABLE,
                placeholder=MISSING,
            )
            st.caption(md_text(power_legend(comparison)))

    st.plotly_chart(
        figs.delta_ci_figure(
            frame, st.selectbox(_("Interval chart: measure"), measures, format_func=display_measure)
        ),
        key=cs.CI_CHART,
    )

    st.subheader(_("Per-query differences"))
    others = [n for n in names if n != baseline]
    c1, c2 = st.columns(2)
    run_name = c1.selectbox(_("Run"), others)
    measure = c2.selectbox(_("Measure"), measures)
    deltas = per_query_deltas(evaluations, baseline, run_name, measure, query_set)
    event = st.plotly_chart(
        figs.delta_bar_figure(deltas, run_name, baseline, measure),
        key=cs.DELTAS_CHART,
        on_select="rerun",
        selection_mode="points",
    )
    picked_chart_point(event)
    selected = selected_query()
    if selected is not None:
        st.write(say(_("Selected query: {query} (shown on the Per query page)"), query=selected))

    meta = st.session_state[state.META]
    if isinstance(meta, pd.DataFrame) and len(meta.columns):
        common = evaluations[0].per_query.index
        for ev in evaluations[1:]:
            common = common.intersection(ev.per_query.index)
        common = pd.Index(natural_sorted(common), name=evaluations[0].per_query.index.name)
        on_set = {ev.run_name: ev.per_query.loc[common] for ev in evaluations}
        columns = list(meta.columns)
        st.subheader(_("Folds"))
        fold_col = st.selectbox(
            _("Fold column"),
            columns,
            index=columns.index("fold") if "fold" in columns else 0,
            format_func=column_label,
        )
        try:
            fold_tables, summary = fold_views(on_set, meta, fold_col)
            st.dataframe(summary.rename(columns=display_measure), placeholder=MISSING)
            st.caption(
                say(
                    _(
                        "Mean ± population standard deviation (ddof=0) of the per-fold means, on the "
                        "{n} queries every run has."
                    ),
                    n=len(common),
                )
            )
            st.plotly_chart(
                figs.fold_figure(fold_tables, measure, column_label(fold_col)), key=cs.FOLDS_CHART
            )
        except InputError as exc:
            st.error(md_text(exc.plain(_)))
        st.subheader(_("Criteria"))
        crit_col = st.selectbox(
            _("Criterion column"),
            columns,
            index=columns.index("criterion") if "criterion" in columns else 0,
            format_func=column_label,
        )
        try:
            crit_tables = criterion_views(on_set, meta, crit_col)
            crit_long = pd.concat(crit_tables, names=["run"]).reset_index()
            st.dataframe(
                crit_long.rename(columns=display_measure),
                hide_index=True,
                column_config={
                    display_measure(m): st.column_config.NumberColumn(format=MEASURE_FORMAT)
                    for m in measures
                }
                | {
                    "run": st.column_config.TextColumn(_("Run"), pinned=True),
                    crit_col: st.column_config.TextColumn(column_label(crit_col)),
                    "count": st.column_config.NumberColumn(
                        _("Count"),
                        format=COUNT_FORMAT,
                        help=_(
                            "queries of the criterion; micro: all (query, criterion) pairs; "
                            "macro: the number of criteria"
                        ),
                    ),
                },
                placeholder=MISSING,
            )
            st.caption(
                _(
                    "micro: mean over all (query, criterion) pairs; macro: unweighted mean of the "
                    "per-criterion means."
                )
            )
            st.plotly_chart(
                figs.criterion_figure(crit_tables, measure, column_label(crit_col)),
                key=cs.CRITERIA_CHART,
            )
        except InputError as exc:
            st.error(md_text(exc.plain(_)))
    else:
        st.caption(
            _(
                "Load query metadata with a fold or criterion column to see fold and criterion views."
            )
        )

    st.subheader(_("Export"))
    st.caption(
        say(
            _(
                "Paper table (Markdown and LaTeX): run mean (Δ vs baseline) with the same markers as above. "
                "{legend}"
            ),
            legend=legend,
        )
    )
    st.caption(_("The whole comparison as one HTML file: Download report on the Overview page."))
    download_buttons(
        export_texts(comparison), "comparison", key="comparison", need=export_need(comparison)
    )
