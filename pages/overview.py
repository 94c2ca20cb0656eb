"""Overview: the leaderboard first (runs x measures on one query set, with intervals, the best
value marked and significance against a baseline), then the details."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from metrics_core.report.leaderboard import leaderboard_grid
from metrics_core.stats.comparison import CORRECTION_NAMES, TEST_NAMES, TESTS, leaderboard_legend
from metrics_core.stats.significance import CORRECTIONS
from ui.common import state
from ui.common.downloads import download_table
from ui.common.frame import conventions, page, query_set_choice
from ui.common.style import HEADERS, MEASURE_FORMAT
from ui.ranking.board import (
    BOARD_DEFAULTS,
    BOARD_KEYS,
    TIE_LEGEND,
    board_setting,
    cached_tie_band,
    overview_board,
    style_grid,
)
from ui.ranking.data import (
    evaluate_loaded,
    loaded_rows,
    tie_bounds,
    tie_bounds_ready,
    too_large_for_ties,
)
from ui.ranking.figures import overview_bars
from ui.ranking.report import report_button
from ui.ranking.state import Overview
from ui.ranking.upload import upload_box
from ui.ranking.widgets import (
    history_save_hook,
    measure_chooser,
    require_data,
    summary_table,
    thresholds_editor,
)

# The leaderboard first: when the tie band is not computed yet and the runs are large (it takes
# about a third of an evaluation's time), the board is drawn without it, then again with it;
# small runs get their band at once (one drawing, no grid replaced under the reader's eyes).
EARLY_BOARD_ROWS = 200_000
NO_BAND = pd.DataFrame(columns=["run", "measure", "low", "high", "dependent"]).set_index(["run", "measure"])

# The sidebar is drawn after the leaderboard (page_end): the answer reaches the browser first.
with page("Overview", sidebar=False) as p:
    if not require_data(runs_upload="overview"):
        p.stop()

    runs = list(st.session_state[state.RUNS])
    top = st.columns([1, 1, 2])
    baseline = top[0].selectbox("Baseline", runs, key=BOARD_KEYS["baseline"],
                                help="Significance markers compare every run with this one.")
    headline_slot = top[1].empty()
    query_set = query_set_choice(Overview.QUERY_SET, top[2])
    grid_slot = st.empty()
    cards_slot = st.empty()

    with st.expander("Add runs"):  # read before the evaluation: a new run is on this run's board
        upload_box("run", "Runs to add to the leaderboard (any format the Data page reads)", multiple=True,
                   page="overview")
    settings_slot = st.container()  # the settings' widgets, drawn after the leaderboard (below)

    # The settings as they stand (their widgets keep them in the session; defaults until changed).
    measures = list(st.session_state[state.MEASURES])
    n_resamples, confidence, seed = (int(board_setting("n_resamples")), float(board_setting("confidence")),
                                     int(board_setting("seed")))
    test, correction = board_setting("test"), board_setting("correction")

    def draw_settings() -> None:
        """The settings' widgets (in their slot above): drawn after the leaderboard, and on an
        evaluation error too, so they keep their values (a widget not drawn in a run loses it)."""
        with settings_slot.expander("Measures, intervals and tests"):
            measure_chooser()  # a change reruns the page with the new measures
            c1, c2, c3, c4, c5 = st.columns(5)
            c1.number_input("Bootstrap resamples", 100, 20000, BOARD_DEFAULTS["n_resamples"], step=100,
                            key=BOARD_KEYS["n_resamples"])
            c2.select_slider("Confidence", [0.8, 0.9, 0.95, 0.99], value=BOARD_DEFAULTS["confidence"],
                             key=BOARD_KEYS["confidence"])
            c3.number_input("Seed", 0, 2**31 - 1, BOARD_DEFAULTS["seed"], key=BOARD_KEYS["seed"])
            c4.selectbox("Test", TESTS, index=TESTS.index(BOARD_DEFAULTS["test"]), format_func=TEST_NAMES.get,
                         key=BOARD_KEYS["test"])
            c5.selectbox("Correction", CORRECTIONS, index=CORRECTIONS.index(BOARD_DEFAULTS["correction"]),
                         format_func=CORRECTION_NAMES.get, key=BOARD_KEYS["correction"])

    conv = conventions()
    try:
        with st.spinner("Evaluating ..."):
            evaluations = evaluate_loaded(measures, conv)
    except InputError as exc:
        st.error(str(exc))
        draw_settings()  # where a measure can be changed
        p.stop()
    measures = list(evaluations[next(iter(evaluations))].measures)
    headline = headline_slot.selectbox("Headline measure", measures, key=Overview.HEADLINE,
                                       help="The measure of the cards under the table.")
    if baseline not in evaluations:
        baseline = next(iter(evaluations))
    with st.spinner("Computing the leaderboard ..."):
        board = overview_board(evaluations, baseline, measures, query_set, n_resamples, confidence, seed, correction,
                               test)
    legend = leaderboard_legend(board)

    def draw_board(band, note: str = "") -> None:
        """The grid, its legend and the cards (into their slots: a second call replaces them)."""
        grid = leaderboard_grid(board, band)
        # rows a little lower than the default 35 px when the tie band adds rows, so the legend and
        # the cards stay on the first screen at 1280x800
        row_height = 35 if len(grid) <= 2 * len(evaluations) else 28
        with grid_slot.container():
            st.dataframe(style_grid(grid), hide_index=True, height=35 + row_height * len(grid) + 3,
                         row_height=row_height, column_config={"Run": st.column_config.TextColumn(pinned=True)},
                         key=Overview.GRID)
            st.caption(legend + (" " + TIE_LEGEND if len(band) else ""))
            if note:
                st.caption(note)
        with cards_slot.container():
            part = board[board["measure"] == headline].set_index("run")
            cards = st.columns(min(len(part), 4))
            for i, (name, r) in enumerate(list(part.iterrows())[:4]):
                delta = None if name == baseline else f"{r['delta']:+.4f} vs {baseline}{r['marker']}"
                tie = (f"; tie band {band.loc[(name, headline), 'low']:.4f}–{band.loc[(name, headline), 'high']:.4f}"
                       if (name, headline) in band.index else "")
                cards[i].metric(f"{name} · {headline}", f"{r['mean']:.4f}", delta=delta,
                                help=f"{confidence:.0%} CI {r['ci_lo']:.4f}–{r['ci_hi']:.4f} over "
                                     f"{int(r['n_queries'])} queries"
                                     + ("" if name == baseline else f"; corrected p = {r['p_corrected']:.4f}")
                                     + tie)
            if len(part) > 4:
                st.caption(f"Cards for the first 4 of {len(part)} runs; every run is in the table.")

    if loaded_rows() > EARLY_BOARD_ROWS and not tie_bounds_ready(evaluations):
        draw_board(NO_BAND)
    with st.spinner("Computing the tie band ..."):
        bounds = tie_bounds(evaluations)
    band = cached_tie_band(board, evaluations, bounds)
    draw_board(band, too_large_for_ties(bounds))

    draw_settings()

    st.subheader("Details")
    report_button(list(evaluations.values()), baseline, measures, query_set, conv, key="overview",
                  n_resamples=n_resamples, confidence=confidence, seed=seed, correction=correction, test=test)
    long = board[["run", "measure", "n_queries", "mean", "median", "ci_lo", "ci_hi", "delta", "p_corrected",
                  "marker"]]
    fmt = {c: st.column_config.NumberColumn(HEADERS.get(c, c), format=MEASURE_FORMAT)
           for c in ("mean", "median", "ci_lo", "ci_hi")}
    fmt["delta"] = st.column_config.NumberColumn(f"Δ vs {baseline}", format=MEASURE_FORMAT)
    fmt["p_corrected"] = st.column_config.NumberColumn("p (corrected)", format=MEASURE_FORMAT)
    fmt["n_queries"] = st.column_config.NumberColumn("Queries", format="%d")
    fmt["run"] = st.column_config.TextColumn("Run", pinned=True)
    fmt["measure"] = st.column_config.TextColumn("Measure")
    fmt["marker"] = st.column_config.TextColumn("Significant")
    st.dataframe(long, hide_index=True, column_config=fmt, key=Overview.LONG,
                 height=min(36 * (len(long) + 1) + 4, 600))
    download_table(long.rename(columns=HEADERS | {"delta": f"delta vs {baseline}", "marker": "significant"}),
                   "leaderboard", conv, title="Leaderboard. " + legend, key="leaderboard")

    # Details drawn only when opened (expanders that rerun on change): the first screen does not
    # wait for another bootstrap per run, nor the browser for the chart library.
    own_queries = st.expander("Each run on its own queries, as trec_eval reports it",
                              key=Overview.OWN_QUERIES, on_change="rerun")
    with own_queries:
        if own_queries.open:
            thresholds, ratio = thresholds_editor("overview")
            table = summary_table(evaluations, thresholds, ratio, n_resamples, confidence, seed)
            st.dataframe(
                table, hide_index=True,
                column_order=["run", "measure", "queries", "aggregate", "median", "ci_low", "ci_high",
                              "interpretation"],
                column_config={"run": st.column_config.TextColumn("Run", pinned=True),
                               "measure": "Measure", "queries": st.column_config.NumberColumn("Queries", format="%d"),
                               "aggregate": st.column_config.NumberColumn("Value", format=MEASURE_FORMAT),
                               "median": st.column_config.NumberColumn("Median", format=MEASURE_FORMAT),
                               "ci_low": st.column_config.NumberColumn("CI low", format=MEASURE_FORMAT),
                               "ci_high": st.column_config.NumberColumn("CI high", format=MEASURE_FORMAT),
                               "interpretation": "Interpretation"},
                height=min(36 * (len(table) + 1) + 4, 600),
            )
            own = ("every qrels query (a query the run did not answer scores 0)" if query_set == "qrels"
                   else "the queries it answered")
            st.caption(f"Value: each run's mean over {own} (sums for counts, geometric mean for GMAP), as "
                       "trec_eval prints it; with 'queries every run answered', runs that missed queries are "
                       "on different query sets in this table only. Interpretation: Good / Fair / Needs "
                       "improvement against the interpretation thresholds above (blank: no threshold for the "
                       "measure).")
            download_table(table.drop(columns=["mean"]).set_index(["run", "measure"]), "overview", conv,
                           title="Each run on its own queries", key="overview",
                           bootstrap=f"{n_resamples} resamples, {confidence:.0%}, seed {seed}")

    chart = st.expander("Chart: each run's mean and interval", key=Overview.CHART_OPEN,
                        on_change="rerun")
    with chart:
        if chart.open:
            chart_measures = st.multiselect("Measures in the chart", measures,
                                            default=[m for m in measures if not m.startswith("Num")][:8],
                                            key=Overview.CHART_MEASURES)
            if chart_measures:
                bars = board[board["measure"].isin(chart_measures)].rename(columns={"ci_lo": "ci_low", "ci_hi": "ci_high"})
                st.plotly_chart(overview_bars(bars), key=Overview.CHART)

    history_save_hook(evaluations, conv)
