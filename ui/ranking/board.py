"""The Overview's leaderboard settings, legends, grid and style (the board and its tie band
are computed by :func:`ui.ranking.data.overview_board` and :func:`ui.ranking.data.cached_tie_band`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from metrics_core.report.leaderboard_grid import (
    BEST,
    CI_INDENT,
    TIE_ROW,
    UNJUDGED_ROW,
    leaderboard_grid,
)
from metrics_core.report.legends import (
    CORRECTION_NAMES,
    TEST_NAMES,
    family_sentence,
    leaderboard_legend,
)
from metrics_core.stats.comparison import TESTS
from metrics_core.stats.significance import CORRECTIONS
from ui.common.i18n import N_
from ui.common.i18n import gettext as _
from ui.common.style import Said, md_join, say
from ui.ranking.state import Overview

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


def board_settings(n_resamples, confidence, seed, correction: str, test: str) -> dict:
    """The board's statistics settings as :func:`ui.ranking.data.overview_board` takes them."""
    return {
        "n_resamples": int(n_resamples),
        "confidence": float(confidence),
        "seed": int(seed),
        "correction": correction,
        "test": test,
        "permutations": BOARD_PERMUTATIONS,
    }


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
    """:func:`leaderboard_grid` in the visitor's language (its columns: the measures'
    canonical names, as the pickers give them), with the tie band and the unjudged band."""
    return leaderboard_grid(board, band, gettext=_, unjudged=unjudged)


UNJUDGED_LEGEND = N_(
    "Unjudged band: range of the mean over every labelling of the retrieved documents the "
    "qrels do not judge, with labels 0 to the qrels' highest (shown where it changes the mean)."
)


def reversal_note(board: pd.DataFrame, pairs: list[tuple[str, str, str]]) -> Said | str:
    """One line naming the pairs of runs whose order the unjudged documents could reverse
    (``pairs``: :func:`ui.ranking.data.reversible`), by measure: "every pair" where all of a
    measure's pairs could turn; empty when none could. Names shown as text (:func:`say`)."""
    if not pairs:
        return ""
    by_measure: dict[str, list[Said]] = {}
    for m, ahead, behind in pairs:
        by_measure.setdefault(m, []).append(say("{ahead} > {behind}", ahead=ahead, behind=behind))
    counts = board.dropna(subset=["mean"]).groupby("measure")["run"].nunique()
    every = [m for m, got in by_measure.items() if len(got) == counts[m] * (counts[m] - 1) // 2]
    parts: list[Said] = []
    if every:
        parts.append(say(_("every pair on {measures}"), measures=md_join(every)))
    parts += [
        say("{measure}: {pairs}", measure=m, pairs=md_join(got))
        for m, got in by_measure.items()
        if m not in every
    ]
    return say(
        _("⇅ Orders the unjudged documents could reverse: {pairs}."), pairs=md_join(parts, "; ")
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
    "CORRECTION_NAMES",
    "CORRECTIONS",
    "TEST_NAMES",
    "TESTS",
    "BOARD_KEYS",
    "baseline_choice",
    "BOARD_DEFAULTS",
    "BOARD_PERMUTATIONS",
    "TIE_LEGEND",
    "UNJUDGED_LEGEND",
    "reversal_note",
    "board_setting",
    "board_settings",
    "style_grid",
    "board_legend",
    "board_family",
    "translated_grid",
    "LIBRARY_WORDS",
    "leaderboard_grid",
    "TIE_ROW",
    "BEST",
]
