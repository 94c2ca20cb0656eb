"""The Overview's leaderboard, kept in the session, and its tie band and grid style."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from metrics_core.report.leaderboard_grid import (
    BEST,
    CI_INDENT,
    TIE_ROW,
    UNJUDGED_ROW,
    leaderboard_grid,
    tie_band,
)
from metrics_core.report.legends import family_sentence, leaderboard_legend
from ui.common import state
from ui.common.cache import keep_only, remember
from ui.common.i18n import N_
from ui.common.i18n import gettext as _
from ui.ranking.state import Overview

#: The board's tables in the session cache (:mod:`ui.common.cache`).
BOARDS, BANDS = "overview.boards", "overview.bands"
UNJUDGED_BANDS = "overview.unjudged_bands"

#: The Overview's board settings: their widget keys and defaults (the page reads the settings
#: before it draws their widgets, after the leaderboard).
BOARD_KEYS = Overview.BOARD
BOARD_DEFAULTS = {
    "n_resamples": 1000,
    "confidence": 0.95,
    "seed": 0,
    "test": "permutation",
    "correction": "holm",
}
#: Permutations of the permutation test on the Overview.
BOARD_PERMUTATIONS = 10_000
BOARD_MEMO_SIZE = 4


def board_setting(name: str):
    """The current value of one of the Overview's board settings (its default until set)."""
    return st.session_state.get(BOARD_KEYS[name], BOARD_DEFAULTS.get(name))


def baseline_choice(slot, names: list[str]) -> str:
    """The board's baseline, drawn in ``slot`` and chosen among ``names``: the runs on the
    board. A run the prologue set aside (it shares no query with the qrels) is on no table,
    so it is no baseline (the box showed it while the table named another run the baseline);
    a choice that left the board falls back to the first run."""
    key = BOARD_KEYS["baseline"]
    if st.session_state.get(key) not in names:
        st.session_state.pop(key, None)
    return slot.selectbox(
        _("Baseline"),
        names,
        key=key,
        help=_("Significance markers compare every run with this one."),
    )


def _settings(
    baseline: str, query_set: str, n_resamples, confidence, seed, correction: str, test: str
) -> dict:
    return {
        "baseline": baseline,
        "query_set": query_set,
        "n_resamples": int(n_resamples),
        "confidence": float(confidence),
        "seed": int(seed),
        "correction": correction,
        "test": test,
        "permutations": BOARD_PERMUTATIONS,
    }


def overview_board(
    evaluations: dict,
    baseline: str,
    measures,
    query_set: str,
    n_resamples: int,
    confidence: float,
    seed: int,
    correction: str,
    test: str,
) -> pd.DataFrame:
    """The Overview's leaderboard of ``evaluations`` (metrics_core's leaderboard: one query set,
    bootstrap CI, corrected tests), kept in the session for these very evaluations and settings
    (:func:`ui.common.cache.remember`: a rerun neither recomputes it nor hashes the per-query
    values to find it)."""
    from metrics_core.stats.comparison import leaderboard

    settings = _settings(baseline, query_set, n_resamples, confidence, seed, correction, test)
    held = tuple(evaluations.values())
    data = (
        id(st.session_state.get(state.QRELS)),
        tuple((name, id(run)) for name, run in (st.session_state.get(state.RUNS) or {}).items()),
    )
    keep_only(BOARDS, lambda key, _held: key[0] == data)  # boards of data no longer loaded go
    key = (data, tuple(evaluations), tuple(measures), tuple(sorted(settings.items())))
    return remember(
        BOARDS,
        key,
        lambda: leaderboard(
            list(held),
            baseline,
            list(measures),
            query_set=query_set,
            n_resamples=settings["n_resamples"],
            confidence=settings["confidence"],
            seed=settings["seed"],
            n_permutations=BOARD_PERMUTATIONS,
            correction=correction,
            test=test,
        ),
        held=held,
        size=BOARD_MEMO_SIZE,
    )


TIE_LEGEND = N_(
    "Tie band: range of the mean over every order of tied scores (shown where that "
    "order changes the mean)."
)

#: The library's names of the tests, corrections and query sets, marked for the catalogs
#: (:data:`metrics_core.report.legends.TEST_NAMES`, ``CORRECTION_NAMES``, ``QUERY_SET_LABELS``):
#: shown through ``_()``.
LIBRARY_WORDS = (
    N_("paired t-test"),
    N_("Wilcoxon signed-rank test"),
    N_("paired randomization test"),
    N_("Holm"),
    N_("Bonferroni"),
    N_("Benjamini-Hochberg"),
    N_("no"),
    N_("the queries every run answered"),
    N_("every qrels query, a run that did not answer a query scoring 0 (trec_eval -c)"),
    N_("the queries both runs of each pair answered"),
    N_("Mean"),
)


def board_legend(board: pd.DataFrame, explain: bool = False) -> str:
    """The leaderboard's legend in the visitor's language:
    :func:`metrics_core.report.legends.leaderboard_legend` (best mark, significance marker,
    test, the correction's family in words, interval, query set and n), the words the HTML
    report prints under the same grid. Short by default, so that the cards stay on the first
    screen; ``explain=True`` adds why another table's corrected p-value differs."""
    return leaderboard_legend(board, gettext=_, explain=explain)


def board_family(board: pd.DataFrame) -> str | None:
    """Which comparisons the board's correction covers, and why another table's corrected
    p-value for the same pair differs (:func:`metrics_core.report.legends.family_sentence`);
    None when the board compares nothing (one run)."""
    return family_sentence(board, gettext=_) or None


def translated_grid(
    board: pd.DataFrame, band: pd.DataFrame | None = None, unjudged: pd.DataFrame | None = None
) -> pd.DataFrame:
    """:func:`leaderboard_grid` in the visitor's language (its columns name the mean of RR
    MRR), with the tie band and the unjudged band."""
    return leaderboard_grid(board, band, gettext=_, unjudged=unjudged)


def cached_tie_band(
    board: pd.DataFrame, evaluations: dict, bounds: dict, table: str = BANDS
) -> pd.DataFrame:
    """:func:`metrics_core.report.leaderboard_grid.tie_band` of the board, kept in the session for
    the same board, evaluations and bounds (a rerun does not recompute it); the unjudged band is
    the same function on the unjudged bounds (``table=UNJUDGED_BANDS``)."""
    held = (board, *evaluations.values(), *(bounds.get(n) for n in evaluations))
    return remember(
        table,
        tuple(evaluations),
        lambda: tie_band(board, {n: ev.per_query for n, ev in evaluations.items()}, bounds),
        held=held,
        size=1,
    )


def cached_unjudged_band(board: pd.DataFrame, evaluations: dict, bounds: dict) -> pd.DataFrame:
    """The board's band over the labellings of the unjudged documents (see
    :func:`cached_tie_band`)."""
    return cached_tie_band(board, evaluations, bounds, UNJUDGED_BANDS)


UNJUDGED_LEGEND = N_(
    "Unjudged band: range of the mean over every labelling of the retrieved documents the "
    "qrels do not judge, with labels 0 to the qrels' highest (shown where it changes the mean)."
)


def reversal_note(board: pd.DataFrame, unjudged: pd.DataFrame) -> str:
    """One line naming the pairs of runs whose order the unjudged documents could reverse
    (:func:`metrics_core.report.leaderboard_grid.reversible_pairs`), by measure: "every
    pair" where all of a measure's pairs could turn; empty when none could."""
    from metrics_core.report.leaderboard_grid import reversible_pairs
    from metrics_core.report.thesis import display_measure

    pairs = reversible_pairs(board, unjudged) if len(unjudged) else []
    if not pairs:
        return ""
    by_measure: dict[str, list[str]] = {}
    for m, ahead, behind in pairs:
        by_measure.setdefault(m, []).append(f"{ahead} > {behind}")
    counts = board.dropna(subset=["mean"]).groupby("measure")["run"].nunique()
    every = [m for m, got in by_measure.items() if len(got) == counts[m] * (counts[m] - 1) // 2]
    parts = []
    if every:
        parts.append(
            _("every pair on {measures}").format(
                measures=", ".join(display_measure(m) for m in every)
            )
        )
    parts += [
        f"{display_measure(m)}: {', '.join(got)}" for m, got in by_measure.items() if m not in every
    ]
    return _("⇅ Orders the unjudged documents could reverse: {pairs}.").format(
        pairs="; ".join(parts)
    )


def style_grid(grid: pd.DataFrame):
    """pandas Styler: best cells bold on a light background, CI rows grey."""

    def cell(v):
        if isinstance(v, str) and BEST in v:
            return "font-weight: bold; background-color: #e4f4e4"
        return ""

    first = grid.columns[0]
    band_rows = (TIE_ROW, UNJUDGED_ROW, CI_INDENT + _("tie band"), CI_INDENT + _("unjudged band"))

    def row(r):
        label = str(r[first])
        if label in band_rows:
            return ["color: #92400e; font-size: 0.85em; font-style: italic" for _ in r]
        grey = label.startswith("   ")
        return ["color: #6b7280; font-size: 0.85em" if grey else "" for _ in r]

    return grid.style.apply(row, axis=1).map(cell)


__all__ = [
    "BOARD_KEYS",
    "baseline_choice",
    "BOARD_DEFAULTS",
    "BOARD_PERMUTATIONS",
    "TIE_LEGEND",
    "board_setting",
    "overview_board",
    "cached_tie_band",
    "cached_unjudged_band",
    "reversal_note",
    "UNJUDGED_LEGEND",
    "style_grid",
    "board_legend",
    "board_family",
    "translated_grid",
    "LIBRARY_WORDS",
    "leaderboard_grid",
    "tie_band",
    "TIE_ROW",
    "BEST",
]
