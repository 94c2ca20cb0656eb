"""The comparative table page (pages/table.py): runs or saved evaluations x chosen measures,
each cell and a summary row labelled, in the visitor's language.

The table is :func:`metrics_core.report.thesis.thesis_table`; its words come from the
catalogs (:func:`ui.common.i18n.thesis_words`, one vocabulary: *Good / Fair / Needs
improvement* for values and rows, *Efficient / Acceptable / Needs improvement* for the
summary's verdict), the names and thresholds from the page's widgets (defaults from the
semantic-search panel's specification: MRR 0.7, nDCG@10 0.6, P@5 0.5, the middle band down
to half of each). The exports are :mod:`metrics_core.report.thesis_export`'s, with the same
words.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from metrics_core.report.thesis import (
    FAIR_RATIO,
    TESTS,
    Grading,
    display_measure,
)
from metrics_core.report.thesis_export import MISSING, caption, legend
from metrics_core.stats.significance import CORRECTIONS
from ui.common import state
from ui.common.i18n import N_, _
from ui.common.style import md_join, md_text, say
from ui.common.thresholds import default_pair, editor_start, set_thresholds
from ui.compare.data import (
    power_numbers,
    thesis_exports,
    thesis_power_legend,
    thesis_power_table,
)

if TYPE_CHECKING:
    from metrics_core.report.thesis import ThesisTable

#: The specification's measures, the table's default columns.
DEFAULT_MEASURES = ("RR", "nDCG@10", "P@5")
#: Where the rows come from.
SOURCES = {
    "runs": N_("Runs loaded in this session"),
    "queries": N_("Queries of one loaded run"),
    "saved": N_("Saved evaluations (History)"),
}
#: Measures offered besides the session's own.
MORE_MEASURES = ("RR@10", "nDCG", "P@10", "AP", "R@100", "Success@1")


class Table:
    """Session-state keys of the comparative table page."""

    SOURCE = "ranklab.table.source"
    MEASURES = "ranklab.table.measures"
    EVALUATIONS = "ranklab.table.evaluations"
    DATES = "ranklab.table.dates"
    BASELINE = "ranklab.table.baseline"
    TEST = "ranklab.table.test"
    CORRECTION = "ranklab.table.correction"
    SAMPLE = "ranklab.table.sample"
    QUERY_RUN = "ranklab.table.query_run"
    DOWNLOADS = "table"
    FILES = "ranklab.table.files"  # the texts the download buttons of this run offer

    @staticmethod
    def good(measure: str) -> str:
        return f"ranklab.table.good.{measure}"

    @staticmethod
    def fair(measure: str) -> str:
        return f"ranklab.table.fair.{measure}"

    @staticmethod
    def name(lang: str, kind: str, level: int) -> str:
        """A label name's text box (``kind`` "level" or "verdict"), per language."""
        return f"ranklab.table.{kind}.{lang}.{level}"


def default_evaluations(labels) -> None:
    """The saved evaluations shown first: the last four, until the visitor picks others."""
    st.session_state.setdefault(Table.EVALUATIONS, list(labels)[-4:])


def default_thresholds(measure: str) -> tuple[float | None, float | None]:
    """``(good, fair)`` of the specification for ``measure`` (None, None when it has none).

    >>> default_thresholds("RR"), default_thresholds("AP")
    ((0.7, 0.35), (None, None))
    """
    return default_pair(measure)


def grading_from(thresholds: dict, names, verdicts) -> Grading:
    """A :class:`Grading` of the thresholds given (``measure -> (good, fair)``; a measure
    whose good threshold is None has no label; a missing fair threshold is half the good
    one). Raises InputError when fair > good."""
    pairs = {
        m: (g, g * FAIR_RATIO if f is None else f)
        for m, (g, f) in thresholds.items()
        if g is not None
    }
    return Grading(pairs, names=tuple(names), verdicts=tuple(verdicts))


def _cell(value: float, digits: int = 4) -> str:
    return MISSING if value is None or pd.isna(value) else f"{value:.{digits}f}"


def display_frame(table: ThesisTable, words: dict, digits: int = 4) -> pd.DataFrame:
    """The table as shown: one row per run and the summary row, every cell text (a missing
    value is an en dash, never "nan"), headers in ``words``' language.

    Columns: run, queries, per measure its value with its label (``0.6318 (Fair)``, as the
    Markdown export writes it; ``0.6318* (Fair)`` where it differs significantly from the
    baseline, the exports' marker, which the legend under the table explains), the row's
    interpretation (the summary's verdict). The p-values are :func:`p_value_frame`.
    """
    g = table.grading

    def cell(value, level, significant=False):
        name = g.name(level)
        # "*" after a value that differs significantly from the baseline: the exports' marker
        return _cell(value, digits) + ("*" if significant else "") + (f" ({name})" if name else "")

    rows = []
    for run in table.runs:
        row = {words["run"]: run, words["queries"]: str(int(table.n_queries[run]))}
        for m in table.measures:
            row[display_measure(m)] = cell(
                table.values.at[run, m], table.levels.at[run, m], bool(table.significant.at[run, m])
            )
        row[words["label"]] = g.name(table.row_levels[run])
        rows.append(row)
    count = (
        words["runs_count"](len(table.runs))
        if callable(words["runs_count"])
        else words["runs_count"]
    )
    summary = {words["run"]: f"{words['summary']} ({count})", words["queries"]: ""}
    for m in table.measures:
        summary[display_measure(m)] = cell(table.summary[m], table.summary_levels[m])
    summary[words["label"]] = g.name(table.verdict, verdict=True)
    rows.append(summary)
    return pd.DataFrame(rows)


def p_value_frame(table: ThesisTable, words: dict) -> pd.DataFrame | None:
    """The corrected p-values against the baseline, as shown under the table: one row per
    compared run (the baseline is no comparison), one column per measure; None without a
    baseline. A table of their own: as columns of the table they pushed its interpretation,
    the table's point, off the right edge (the marker ``*`` beside a value says which
    differences are significant; the exports keep the p-values as columns)."""
    if table.baseline is None:
        return None

    def p_text(p):
        return MISSING if pd.isna(p) else "< 0.0001" if p < 1e-4 else f"{p:.4f}"

    return pd.DataFrame(
        [
            {words["run"]: run}
            | {
                words["p_of"].format(measure=display_measure(m)): p_text(table.pvalues.at[run, m])
                for m in table.measures
            }
            for run in table.runs
            if run != table.baseline
        ]
    )


# --- where the rows come from ------------------------------------------------------------------


def query_rows(per_query: pd.DataFrame) -> tuple[dict, pd.DataFrame | None]:
    """The queries of one loaded run (its evaluation's ``per_query``) as rows (query id -> its
    one-row per-query frame), each labelled on its own; the summary row is the run's mean.
    The session's metadata."""
    return {
        str(q): per_query.iloc[[i]] for i, q in enumerate(per_query.index)
    }, st.session_state.get(state.META)


def evaluation_label(row) -> str:
    """How a saved evaluation is named in the chooser and in the table."""
    return f"{row['run']} #{int(row['id'])}"


def date_bounds(meta: pd.DataFrame | None) -> tuple[dt.date, dt.date] | None:
    """The first and last query date of the metadata (None without a readable date column)."""
    if meta is None or "date" not in meta.columns:
        return None
    dates = pd.to_datetime(meta["date"], errors="coerce").dropna()
    return (dates.min().date(), dates.max().date()) if len(dates) else None


# --- the page's widgets ----------------------------------------------------------------------


def measure_choice(options) -> list[str]:
    """The measures multiselect (default: MRR, nDCG@10, P@5)."""
    options = list(dict.fromkeys([*DEFAULT_MEASURES, *options, *MORE_MEASURES]))
    st.session_state.setdefault(Table.MEASURES, list(DEFAULT_MEASURES))
    st.session_state[Table.MEASURES] = [m for m in st.session_state[Table.MEASURES] if m in options]
    return st.multiselect(
        _("Measures"),
        options,
        key=Table.MEASURES,
        format_func=display_measure,
        help=_(
            "The mean over the queries of each measure; MRR is the mean of the reciprocal rank."
        ),
        placeholder=_("Choose options"),
    )


def thresholds_editor(measures) -> dict:
    """Good and fair thresholds per measure (number boxes); ``measure -> (good, fair)``.

    The app's one place to change them: the boxes start from the session's thresholds
    (:func:`ui.common.thresholds.editor_start`) and what they hold becomes the session's
    (:func:`ui.common.thresholds.set_thresholds`), which every other page reads."""
    st.caption(
        _(
            "A value is labelled with the first name at or above the good threshold, the second at "
            "or above the fair threshold, else the third. Leave the good threshold empty for no "
            "label. These thresholds label every page (Overview, Clicks, History)."
        )
    )
    out = {}
    for measure, col in zip(measures, st.columns(max(len(measures), 1)), strict=False):
        good, fair = editor_start(measure)
        st.session_state.setdefault(Table.good(measure), good)
        st.session_state.setdefault(Table.fair(measure), fair)
        with col:
            st.markdown(say("**{measure}**", measure=display_measure(measure)))
            g = st.number_input(
                _("Good from"), min_value=None, step=0.05, key=Table.good(measure), format="%.4g"
            )
            f = st.number_input(
                _("Fair from"), min_value=None, step=0.05, key=Table.fair(measure), format="%.4g"
            )
        out[measure] = (g, f)
    if all(g is None or f is None or f <= g for g, f in out.values()):  # else: the table says why
        set_thresholds(out)
    return out


def names_editor(lang: str, defaults, kind: str, title: str) -> tuple[str, str, str]:
    """Three text boxes for the names of the levels (per language); an empty box keeps the
    default name."""
    st.markdown(say("**{title}**", title=title))
    names = []
    for i, (default, col) in enumerate(zip(defaults, st.columns(3), strict=True)):
        key = Table.name(lang, kind, i)
        st.session_state.setdefault(key, default)
        names.append(col.text_input(say(_("Name {n}"), n=i + 1), key=key).strip() or default)
    return tuple(names)


def date_filter(meta) -> tuple[str | None, str | None]:
    """The date range of the queries kept (None, None: every query)."""
    bounds = date_bounds(meta)
    if bounds is None:
        st.caption(
            _(
                "No query dates to filter by: load query metadata with a date column (Data page) "
                "to keep only the queries of a period."
            )
        )
        return None, None
    chosen = st.date_input(
        _("Queries dated"),
        value=bounds,
        min_value=bounds[0],
        max_value=bounds[1],
        key=Table.DATES,
        help=_(
            "Only the queries whose date in the query metadata lies in "
            "this range (both days included)."
        ),
    )
    if not isinstance(chosen, (tuple, list)) or len(chosen) != 2 or tuple(chosen) == bounds:
        return None, None
    return chosen[0].isoformat(), chosen[1].isoformat()


def significance_choice(names, words) -> tuple[str | None, str, str]:
    """Baseline (None: no test), test and correction."""
    c1, c2, c3 = st.columns(3)
    if st.session_state.get(Table.BASELINE) not in (None, *names):
        st.session_state[Table.BASELINE] = None
    baseline = c1.selectbox(
        _("Significance against"),
        [None, *names],
        key=Table.BASELINE,
        format_func=lambda n: _("No significance test") if n is None else n,
    )
    test = c2.selectbox(
        _("Test"),
        TESTS,
        key=Table.TEST,
        format_func=lambda t: words[f"test_{t}"],
        disabled=baseline is None,
    )
    correction = c3.selectbox(
        _("Correction"),
        CORRECTIONS,
        key=Table.CORRECTION,
        format_func=lambda c: words.get(f"correction_{c}", c),
        disabled=baseline is None,
    )
    return baseline, test, correction


def labels_legend(grading) -> str:
    """The sentence under the table that says what its labels mean, with the names in use
    (the visitor may rename them): the levels of each value and row, and the summary row's
    overall verdict (:mod:`metrics_core.report.thesis`: a row's level is its worst; the
    verdict is the worst level of the means, named with the verdict words)."""
    good, fair, poor = grading.names
    efficient, acceptable, poor_verdict = grading.verdicts
    return say(
        _(
            "Each value is labelled **{good}**, **{fair}** or **{poor}** against its measure's "
            "thresholds, and each row with its worst label. The summary row's overall verdict: "
            "**{efficient}** when every mean is **{good}**, **{poor_verdict}** when any mean is "
            "**{poor}**, else **{acceptable}**."
        ),
        good=good,
        fair=fair,
        poor=poor,
        efficient=efficient,
        acceptable=acceptable,
        poor_verdict=poor_verdict,
    )


def show(table: ThesisTable, words: dict, lang: str) -> None:
    """The table, its caption and legend, and the downloads."""
    from ui.common.downloads import download_buttons

    st.markdown(say("**{caption}**", caption=caption(table, words)))
    # every cell is text (the labels beside the values); the columns of numbers alone (queries,
    # p-values) aligned right, as numbers are in every other table
    right = st.column_config.TextColumn(alignment="right")
    st.dataframe(
        display_frame(table, words),
        hide_index=True,
        width="stretch",
        placeholder=MISSING,
        column_config={words["queries"]: right},
    )
    st.caption(labels_legend(table.grading))  # the summary's words too, not only the levels'
    note = legend(table, words)
    if note:
        st.caption(md_text(note))  # it names the baseline: as text
    pvalues = p_value_frame(table, words)
    if pvalues is not None:
        st.caption(say(_("Corrected p-values against {baseline}:"), baseline=table.baseline))
        st.dataframe(
            pvalues,
            hide_index=True,
            placeholder=MISSING,
            column_config={c: right for c in pvalues.columns[1:]},
        )
    needed = thesis_power_table(table)
    if needed is not None and len(needed):
        st.caption(
            say(
                _("How many queries each comparison against {baseline} needs:"),
                baseline=table.baseline,
            )
        )
        four = dict.fromkeys(power_numbers(needed), "{:.4f}")
        st.dataframe(
            needed.style.format(four, na_rep=MISSING), hide_index=True, placeholder=MISSING
        )
        st.caption(md_text(thesis_power_legend(table)))
    if table.undated:
        st.caption(
            say(
                _(
                    "Left out by the date filter because the metadata gives them no date: {queries}."
                ),
                queries=md_join(table.undated),
            )
        )
    files = st.session_state[Table.FILES] = thesis_exports(table, words, lang)
    download_buttons(files, _("comparative_table"), key=Table.DOWNLOADS)


__all__ = [
    "DEFAULT_MEASURES",
    "SOURCES",
    "Table",
    "default_thresholds",
    "grading_from",
    "display_frame",
    "p_value_frame",
    "labels_legend",
    "query_rows",
    "evaluation_label",
    "date_bounds",
    "measure_choice",
    "thresholds_editor",
    "names_editor",
    "date_filter",
    "significance_choice",
    "show",
]
