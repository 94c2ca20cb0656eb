"""Overview: the leaderboard first (runs x measures on one query set, with intervals, the best
value marked and significance against a baseline), then the details."""

import pandas as pd
import streamlit as st

from ui.common import state
from ui.common.downloads import download_table
from ui.common.frame import conventions, page, query_set_choice
from ui.common.i18n import gettext as _
from ui.common.style import HEADERS, MEASURE_FORMAT, MISSING, md_text, plain, say
from ui.common.thresholds import link_to_editor
from ui.history.widgets import save_evaluation_form
from ui.ranking.board import (
    BOARD_DEFAULTS,
    BOARD_KEYS,
    CORRECTION_NAMES,
    CORRECTIONS,
    TEST_NAMES,
    TESTS,
    TIE_LEGEND,
    UNJUDGED_LEGEND,
    baseline_choice,
    board_family,
    board_legend,
    board_setting,
    board_settings,
    reversal_note,
    style_grid,
    translated_grid,
)
from ui.ranking.data import (
    board_first,
    cached_tie_band,
    cached_unjudged_band,
    overview_board,
    reversible,
    tie_bounds,
    too_large_for_ties,
    unjudged_bounds,
)
from ui.ranking.figures import overview_bars
from ui.ranking.prologue import ranking_prologue
from ui.ranking.report import report_button
from ui.ranking.state import Overview
from ui.ranking.upload import upload_box
from ui.ranking.widgets import (
    measure_chooser,
    require_data,
    summary_table,
)
from ui.samples import load_every_sample

# The leaderboard first: when the bands are not computed yet and the runs are large or the
# server busy (ui.ranking.data.board_first), the board is drawn without them, then with them.
NO_BAND = pd.DataFrame(columns=["run", "measure", "low", "high", "dependent"]).set_index(
    ["run", "measure"]
)

# The sidebar is drawn after the leaderboard (page_end): the answer reaches the browser first.
with page(_("Overview"), sidebar=False) as p:
    # the prologue's first step, before the board's widgets
    if not require_data(load_every_sample, runs_upload="overview"):
        p.stop()

    top = st.columns([1, 1, 2])
    baseline_slot = top[0].empty()  # filled with the runs on the board, once they are known
    headline_slot = top[1].empty()
    query_set = query_set_choice(Overview.QUERY_SET, top[2])
    warning_slot = st.empty()  # the runs left out of the board, named above it
    grid_slot = st.empty()
    cards_slot = st.empty()

    with st.expander(_("Add runs")):  # read before the evaluation: a new run is on this run's board
        upload_box(
            "run",
            _("Runs to add to the leaderboard (any format the Data page reads)"),
            multiple=True,
            page="overview",
        )
    settings_slot = st.container()  # the settings' widgets, drawn after the leaderboard (below)

    # The settings as they stand (their widgets keep them in the session; defaults until changed).
    measures = list(st.session_state[state.MEASURES])
    n_resamples, confidence, seed = (
        int(board_setting("n_resamples")),
        float(board_setting("confidence")),
        int(board_setting("seed")),
    )
    test, correction = board_setting("test"), board_setting("correction")

    def draw_settings() -> None:
        """The settings' widgets (in their slot above): drawn after the leaderboard, and on an
        evaluation error too, so they keep their values (a widget not drawn in a run loses it)."""
        with settings_slot.expander(_("Measures, intervals and tests")):
            measure_chooser(_("Measures"))  # a change reruns the page with the new measures
            c1, c2, c3, c4, c5 = st.columns(5)
            c1.number_input(
                _("Bootstrap resamples"),
                100,
                20000,
                BOARD_DEFAULTS["n_resamples"],
                step=100,
                key=BOARD_KEYS["n_resamples"],
            )
            c2.select_slider(
                _("Confidence"),
                [0.8, 0.9, 0.95, 0.99],
                value=BOARD_DEFAULTS["confidence"],
                key=BOARD_KEYS["confidence"],
            )
            c3.number_input(_("Seed"), 0, 2**31 - 1, BOARD_DEFAULTS["seed"], key=BOARD_KEYS["seed"])
            c4.selectbox(
                _("Test"),
                TESTS,
                index=TESTS.index(BOARD_DEFAULTS["test"]),
                format_func=lambda t: _(TEST_NAMES[t]),
                key=BOARD_KEYS["test"],
            )
            c5.selectbox(
                _("Correction"),
                CORRECTIONS,
                index=CORRECTIONS.index(BOARD_DEFAULTS["correction"]),
                format_func=lambda c: _(CORRECTION_NAMES[c]),
                key=BOARD_KEYS["correction"],
            )

    loaded = ranking_prologue(
        measures,
        conventions(),
        sample=load_every_sample,
        warning_slot=warning_slot,
        on_stop=draw_settings,
    )
    if loaded is None:
        p.stop()
    # A run that shares no query (or no judged document) with the qrels says nothing: the
    # prologue named it and left it out, so the board's common queries stay those of the other runs.
    evaluations, measures, conv = loaded.evaluations, loaded.measures, loaded.conventions
    baseline = baseline_choice(baseline_slot, list(evaluations))
    headline = headline_slot.selectbox(
        _("Headline measure"),
        measures,
        key=Overview.HEADLINE,
        help=_("The measure of the cards under the table."),
    )
    with st.spinner(_("Computing the leaderboard ...")):
        board = overview_board(
            evaluations,
            baseline,
            measures,
            query_set,
            board_settings(n_resamples, confidence, seed, correction, test),
        )
    legend = board_legend(board)

    def number(value) -> str:
        """4 decimals, or "–" for a value that does not exist (the reason is in the card's help)."""
        return "–" if pd.isna(value) else f"{value:.4f}"

    def card_delta(name, r) -> dict:
        """The card's delta: short (the star must fit at 800 px), the baseline in the help."""
        if name == baseline or pd.isna(r["delta"]):
            return {}
        return {
            "delta": f"{r['delta']:+.4f}{r['marker']}",
            "delta_color": "normal" if r["marker"] else "off",
        }

    def card_help(name, r, band, unjudged) -> str:
        parts = [
            say(
                _("{confidence} CI {low}–{high} over {n} queries"),
                confidence=f"{confidence:.0%}",
                low=number(r["ci_lo"]),
                high=number(r["ci_hi"]),
                n=int(r["n_queries"]),
            )
        ]
        if name == baseline:
            parts.append(_("the baseline"))
        else:
            parts.append(
                say(
                    _("Δ vs {baseline}; corrected p = {p}"),
                    baseline=baseline,
                    p=number(r["p_corrected"]),
                )
            )
        if (name, headline) in band.index:
            parts.append(
                say(
                    _("tie band {low}–{high}"),
                    low=number(band.loc[(name, headline), "low"]),
                    high=number(band.loc[(name, headline), "high"]),
                )
            )
        if (name, headline) in unjudged.index:
            parts.append(
                say(
                    _("unjudged band {low}–{high}"),
                    low=number(unjudged.loc[(name, headline), "low"]),
                    high=number(unjudged.loc[(name, headline), "high"]),
                )
            )
        return "; ".join(parts)

    def draw_board(band, unjudged, note: str = "") -> None:
        """The grid, its legend and the cards (into their slots: a second call replaces them)."""
        grid = translated_grid(board, band, unjudged)
        # rows a little lower than the default 35 px when the tie band adds rows, so the legend and
        # the cards stay on the first screen at 1280x800
        row_height = 35 if len(grid) <= 2 * len(evaluations) else 28
        with grid_slot.container():
            st.dataframe(
                style_grid(grid),
                hide_index=True,
                height=35 + row_height * len(grid) + 3,
                row_height=row_height,
                column_config={_("Run"): st.column_config.TextColumn(pinned=True)},
                key=Overview.GRID,
                placeholder=MISSING,
            )
            st.caption(
                md_text(
                    legend
                    + (" " + _(TIE_LEGEND) if len(band) else "")
                    + (" " + _(UNJUDGED_LEGEND) if len(unjudged) else "")
                ),
                help=md_text(board_family(board)),
            )
            reversal = reversal_note(board, reversible(board, unjudged))
            if reversal:
                st.caption(reversal)
            if note:
                st.caption(note)
        with cards_slot.container():
            part = board[board["measure"] == headline].set_index("run")
            cards = st.columns(min(len(part), 4))
            for i, (name, r) in enumerate(list(part.iterrows())[:4]):
                cards[i].metric(
                    say("{run} · {measure}", run=name, measure=headline),
                    number(r["mean"]),
                    **card_delta(name, r),
                    help=card_help(name, r, band, unjudged),
                )
            if len(part) > 4:
                st.caption(
                    say(
                        _("Cards for the first 4 of {n} runs; every run is in the table."),
                        n=len(part),
                    )
                )

    if board_first(evaluations):
        draw_board(NO_BAND, NO_BAND)
    with st.spinner(_("Computing the tie band ...")):
        bounds = tie_bounds(evaluations)
    with st.spinner(_("Computing the unjudged band ...")):
        unjudged = cached_unjudged_band(board, evaluations, unjudged_bounds(evaluations))
    band = cached_tie_band(board, evaluations, bounds)
    draw_board(band, unjudged, too_large_for_ties(bounds))

    draw_settings()

    st.subheader(_("Details"))
    report_button(
        list(evaluations.values()),
        baseline,
        measures,
        query_set,
        conv,
        key="overview",
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        correction=correction,
        test=test,
    )
    long = board[
        [
            "run",
            "measure",
            "n_queries",
            "mean",
            "median",
            "ci_lo",
            "ci_hi",
            "delta",
            "p_corrected",
            "marker",
        ]
    ]
    # shown: a value that does not exist (the baseline's delta and p) is "–", never "None"; the
    # numbers stay in the table's data (hidden columns), as the download gives them
    shown_long = long.assign(
        delta_shown=["–" if pd.isna(v) else f"{v:+.4f}" for v in long["delta"]],
        # the significance marker beside its p: a column of its own made the table 785 px wide
        # at 800 px (its heading "Significativo" cut)
        p_shown=[
            "–" if pd.isna(v) else f"{v:.4f} {m}".rstrip()
            for v, m in zip(long["p_corrected"], long["marker"], strict=True)
        ],
    )
    fmt = {
        c: st.column_config.NumberColumn(_(HEADERS.get(c, c)), format=MEASURE_FORMAT)
        for c in ("mean", "median", "ci_lo", "ci_hi")
    }
    fmt["delta_shown"] = st.column_config.TextColumn(plain(_("Δ vs {baseline}"), baseline=baseline))
    fmt["p_shown"] = st.column_config.TextColumn(_("p (corrected)"))
    fmt["n_queries"] = st.column_config.NumberColumn(_("Queries"), format="%d")
    fmt["run"] = st.column_config.TextColumn(_("Run"), pinned=True)
    fmt["measure"] = st.column_config.TextColumn(_("Measure"))
    compared = ["delta_shown", "p_shown"] if long["run"].nunique() > 1 else []  # one run: no test
    st.dataframe(
        shown_long,
        hide_index=True,
        column_config=fmt,
        key=Overview.LONG,
        column_order=["run", "measure", "n_queries", "mean", "median", "ci_lo", "ci_hi", *compared],
        height=min(36 * (len(long) + 1) + 4, 600),
        placeholder=MISSING,
    )
    if compared:
        st.caption(
            _(
                "–: the baseline has no difference with itself nor a p-value. *: significant "
                "after correction."
            )
        )
    download_table(
        long.rename(columns=HEADERS | {"delta": f"delta vs {baseline}", "marker": "significant"}),
        "leaderboard",
        conv,
        title=_("Leaderboard") + ". " + legend,  # the name, then its legend
        key="leaderboard",
    )

    # Details drawn only when opened (expanders that rerun on change): the first screen does not
    # wait for another bootstrap per run, nor the browser for the chart library.
    own_queries = st.expander(
        _("Each run on its own queries, as trec_eval reports it"),
        key=Overview.OWN_QUERIES,
        on_change="rerun",
    )
    with own_queries:
        if own_queries.open:
            table = summary_table(evaluations, n_resamples, confidence, seed)
            st.dataframe(
                table,
                hide_index=True,
                column_order=[
                    "run",
                    "measure",
                    "queries",
                    "aggregate",
                    "median",
                    "ci_low",
                    "ci_high",
                    "interpretation",
                ],
                column_config={
                    "run": st.column_config.TextColumn(_("Run"), pinned=True),
                    "measure": _("Measure"),
                    "queries": st.column_config.NumberColumn(_("Queries"), format="%d"),
                    "aggregate": st.column_config.NumberColumn(_("Value"), format=MEASURE_FORMAT),
                    "median": st.column_config.NumberColumn(_("Median"), format=MEASURE_FORMAT),
                    "ci_low": st.column_config.NumberColumn(_("CI low"), format=MEASURE_FORMAT),
                    "ci_high": st.column_config.NumberColumn(_("CI high"), format=MEASURE_FORMAT),
                    "interpretation": _("Interpretation"),
                },
                height=min(36 * (len(table) + 1) + 4, 600),
                placeholder=MISSING,
            )
            own = (
                _("every qrels query (a query the run did not answer scores 0)")
                if query_set == "qrels"
                else _("the queries it answered")
            )
            st.caption(
                say(
                    _(
                        "Value: each run's mean over {own} (sums for counts, geometric mean for GMAP), as "
                        "trec_eval prints it; with 'queries every run answered', runs that missed queries are "
                        "on different query sets in this table only. Interpretation: Good / Fair / Needs "
                        "improvement against the interpretation thresholds below (blank: no threshold for the "
                        "measure)."
                    ),
                    own=own,
                )
            )
            link_to_editor(measures)
            download_table(
                table.drop(columns=["mean"]).set_index(["run", "measure"]),
                "overview",
                conv,
                title=_("Each run on its own queries"),
                key="overview",
                bootstrap=f"{n_resamples} resamples, {confidence:.0%}, seed {seed}",
            )

    chart = st.expander(
        _("Chart: each run's mean and interval"), key=Overview.CHART_OPEN, on_change="rerun"
    )
    with chart:
        if chart.open:
            chart_measures = st.multiselect(
                _("Measures in the chart"),
                measures,
                default=[m for m in measures if not m.startswith("Num")][:8],
                key=Overview.CHART_MEASURES,
                placeholder=_("Choose options"),
            )
            if chart_measures:
                bars = board[board["measure"].isin(chart_measures)].rename(
                    columns={"ci_lo": "ci_low", "ci_hi": "ci_high"}
                )
                st.plotly_chart(overview_bars(bars), key=Overview.CHART)

    st.subheader(_("Save this evaluation"))  # into the History section's store
    save_evaluation_form(
        list(evaluations.values()),
        st.session_state[state.QRELS],
        st.session_state[state.META],
        key="overview",
    )
