"""Compare systems: every run against a baseline on one query set, the answer first
(delta with its interval, corrected p, wins/ties/losses, markers), then per-query deltas,
folds and criteria, and paper tables with the same markers."""

import pandas as pd
import streamlit as st

import metrics_core as mc
from metrics_core.report.cells import MISSING
from metrics_core.report.thesis import display_measure
from metrics_core.stats import folds
from metrics_core.stats.comparison import MARKERS, TESTS, aligned_values
from metrics_core.stats.deltas import per_query_deltas
from metrics_core.stats.significance import CORRECTIONS
from ui.common import state
from ui.common.downloads import download_buttons
from ui.common.frame import page, query_set_choice
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import COUNT_FORMAT, MEASURE_FORMAT, md_text, natural_sorted
from ui.compare import figures as figs
from ui.compare import state as cs
from ui.compare.all_pairs import all_pairs_section
from ui.compare.data import (
    answer_columns,
    answer_config,
    answer_numbers,
    answer_table,
    compare,
    correction_label,
    detail_numbers,
    detail_table,
    export_texts,
    power_legend,
    power_numbers,
    power_table,
    test_label,
)
from ui.ranking.data import evaluate_loaded, has_runs, measure_options
from ui.ranking.prologue import ranking_prologue
from ui.ranking.selection import picked_chart_point, selected_query
from ui.ranking.widgets import column_label
from ui.samples import load_every_sample

DEFAULT_MEASURES = list(mc.measures.COMPARE_MEASURES)

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
    with st.form(cs.SETTINGS_FORM):
        c1, c2 = st.columns([1, 3])
        baseline = c1.selectbox(_("Baseline"), names, index=0)
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
    if baseline not in names:
        answer.info(
            _("{run} is set aside, so the baseline is {baseline}.").format(
                run=baseline, baseline=names[0]
            )
        )
        baseline = names[0]
    by_name = {ev.run_name: ev for ev in evaluations}
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
        power=float(power),
        power_delta=float(chosen) or None,
    )
    frame = comparison.to_frame()
    cs.remember_settings(comparison)
    legend = comparison.legend(gettext=_)
    screen_legend = comparison.legend(paper=False, gettext=_)

    with answer:
        st.subheader(_("Every run vs {baseline}").format(baseline=md_text(baseline)))
        shown = answer_table(comparison)
        shown["measure"] = shown["measure"].map(display_measure)  # means over queries: RR's is MRR
        numbers = answer_numbers(test)
        # a missing value reads "–" (never "None"), with its reason under the table
        st.dataframe(
            shown.style.format({c: "{:.4f}" for c in numbers}, na_rep="–"),
            hide_index=True,
            key=cs.TABLE,
            column_order=answer_columns(test),
            column_config=answer_config(test, baseline, float(confidence), correction),
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
            st.table(detail.style.format({c: "{:.4f}" for c in detail_numbers(detail)}, na_rep="–"))
            st.caption(
                _(
                    "Effect size: mean difference / standard deviation of the differences (paired Cohen's "
                    "d). Markers: {markers}."
                ).format(markers=", ".join(f"{MARKERS[t]} {test_label(t)}" for t in TESTS))
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
    table = aligned_values(
        [
            by_name[baseline],
            by_name[run_name],
            *[e for e in evaluations if e.run_name not in (baseline, run_name)],
        ],
        measure,
        query_set,
    )
    deltas = per_query_deltas(
        table[[baseline]].rename(columns={baseline: measure}),
        table[[run_name]].rename(columns={run_name: measure}),
        measure,
    )
    event = st.plotly_chart(
        figs.delta_bar_figure(deltas, run_name, baseline, measure),
        key=cs.DELTAS_CHART,
        on_select="rerun",
        selection_mode="points",
    )
    picked_chart_point(event)
    selected = selected_query()
    if selected is not None:
        st.write(
            _("Selected query: {query} (shown on the Per query page)").format(
                query=md_text(selected)
            )
        )

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
            fold_tables = {
                name: folds.fold_values(pq, meta, fold_col) for name, pq in on_set.items()
            }
            summary = pd.DataFrame(
                {
                    name: folds.fold_summary(pq, meta, fold_col)["formatted"]
                    for name, pq in on_set.items()
                }
            ).T
            st.dataframe(summary.rename(columns=display_measure), placeholder=MISSING)
            st.caption(
                _(
                    "Mean ± population standard deviation (ddof=0) of the per-fold means, on the "
                    "{n} queries every run has."
                ).format(n=len(common))
            )
            st.plotly_chart(
                figs.fold_figure(fold_tables, measure, column_label(fold_col)), key=cs.FOLDS_CHART
            )
        except mc.InputError as exc:
            st.error(md_text(exc.plain(_)))
        st.subheader(_("Criteria"))
        crit_col = st.selectbox(
            _("Criterion column"),
            columns,
            index=columns.index("criterion") if "criterion" in columns else 0,
            format_func=column_label,
        )
        try:
            crit_tables = {
                name: folds.criterion_averages(pq, meta, crit_col) for name, pq in on_set.items()
            }
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
        except mc.InputError as exc:
            st.error(md_text(exc.plain(_)))
    else:
        st.caption(
            _(
                "Load query metadata with a fold or criterion column to see fold and criterion views."
            )
        )

    st.subheader(_("Export"))
    st.caption(
        _(
            "Paper table (Markdown and LaTeX): run mean (Δ vs baseline) with the same markers as above. "
            "{legend}"
        ).format(legend=md_text(legend))
    )
    st.caption(_("The whole comparison as one HTML file: Download report on the Overview page."))
    download_buttons(export_texts(comparison), "comparison", key="comparison")
