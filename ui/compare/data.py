"""The Compare page's computations: the comparison of every run with a baseline
(:func:`metrics_core.compare`, cached on the per-query values and settings), its on-screen
table and its exports.

The names of the tests and corrections are the library's one copy
(:data:`metrics_core.report.legends.TEST_NAMES`, ``CORRECTION_NAMES``), translated
where they are shown (:func:`test_label`, :func:`correction_label`).
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import metrics_core as mc
from metrics_core.report.catalogs import N_
from metrics_core.report.comparison import Comparison
from metrics_core.report.evaluations import RunValues
from metrics_core.report.legends import CORRECTION_NAMES, TEST_NAMES
from metrics_core.report.thesis import display_measure
from metrics_core.stats.comparison import COLUMNS, TESTS, Column
from ui.common.cache import remember
from ui.common.i18n import gettext as _
from ui.common.style import COUNT_FORMAT, MEASURE_FORMAT

#: The page's table in the session cache (:mod:`ui.common.cache`).
COMPARISONS = "compare.comparisons"

#: The library's test and correction names, marked for the catalogs (``TEST_NAMES`` and
#: ``CORRECTION_NAMES`` are not in a scanned module; tests/app/test_compare_page.py checks
#: that every one of their values is here).
LIBRARY_WORDS = (
    N_("paired t-test"),
    N_("Wilcoxon signed-rank test"),
    N_("paired randomization test"),
    N_("Holm"),
    N_("Bonferroni"),
    N_("Benjamini-Hochberg"),
    N_("no correction"),
)


def test_label(test: str) -> str:
    """A test's name on screen (:data:`TEST_NAMES`, translated)."""
    return _(TEST_NAMES[test])


def correction_label(correction: str) -> str:
    """A correction's name on screen (:data:`CORRECTION_NAMES`, translated; "none" reads
    "no correction")."""
    return _("no correction") if correction == "none" else _(CORRECTION_NAMES[correction])


def _settings_key(conventions) -> str:
    return repr(conventions.as_dict() if hasattr(conventions, "as_dict") else conventions)


def compare(
    evaluations: list,
    baseline: str,
    measures: list,
    permutations: int,
    seed: int,
    correction: str,
    confidence: float,
    query_set: str,
    conventions=None,
    power: float = 0.8,
    power_delta: float | None = None,
) -> Comparison:
    """:func:`metrics_core.compare` of the loaded evaluations, kept in the session for these
    very evaluations and settings (:func:`ui.common.cache.remember`): widget changes that only
    pick what to draw do not rerun 10,000 permutations."""
    runs = [RunValues.from_evaluation(ev) for ev in evaluations]
    key = (
        _settings_key(conventions),
        baseline,
        tuple(measures),
        int(permutations),
        int(seed),
        correction,
        float(confidence),
        query_set,
        float(power),
        power_delta,
    )

    def build() -> Comparison:
        with st.spinner(_("Running the significance tests ...")):
            return mc.compare(
                runs,
                baseline,
                measures=list(measures),
                n_permutations=int(permutations),
                seed=int(seed),
                correction=correction,
                confidence=float(confidence),
                query_set=query_set,
                conventions=conventions,
                power=float(power),
                power_delta=power_delta,
            )

    return remember(COMPARISONS, key, build, held=tuple(evaluations), size=8)


#: The answer table's cells that join two or more declared columns into one text.
JOINED = {"ci_lo": "ci", "ci_hi": "ci", "wins": "wtl", "ties": "wtl", "losses": "wtl"}


def answer_columns(test: str) -> list[str]:
    """The answer table's columns, in the declared order (:data:`COLUMNS`' ``answer``): the
    corrected p of ``test`` only, the interval and wins / ties / losses each one cell."""
    out = []
    for c in COLUMNS:
        if c.answer and (c.test is None or c.test == test):
            name = JOINED.get(c.name, c.name)
            if name not in out:
                out.append(name)
    return out


def answer_numbers(test: str) -> list[str]:
    """The answer table's numbers of 4 decimals (values and the corrected p of ``test``)."""
    return [
        c.name
        for c in COLUMNS
        if c.answer and c.kind in ("value", "p") and c.name not in JOINED
        if c.test is None or c.test == test
    ]


def answer_table(comparison: Comparison) -> pd.DataFrame:
    """The comparison's rows for the screen: the columns shown, the interval and the
    wins / ties / losses as text ("–" where a run has no common query: no interval)."""
    shown = comparison.wide().copy()
    shown["ci"] = [
        _("{lo} to {hi}").format(lo=f"{lo:.4f}", hi=f"{hi:.4f}") if pd.notna(lo) else "–"
        for lo, hi in zip(shown["ci_lo"], shown["ci_hi"], strict=True)
    ]
    shown["wtl"] = [
        f"{w} / {t} / {l_}"
        for w, t, l_ in zip(shown["wins"], shown["ties"], shown["losses"], strict=True)
    ]
    return shown


def heading(column: Column) -> str:
    """A declared column's heading in the visitor's language (its test named)."""
    text = _(column.heading)
    return text.format(test=test_label(column.test)) if column.test else text


def answer_config(test: str, baseline: str, confidence: float, correction: str) -> dict:
    """The answer table's ``column_config``: each declared column's heading and format, and
    the screen's own short headings (the baseline's name over its mean, "corrected p", the
    interval's level), sized so the columns fit an 800 px window."""
    config = {}
    for c in COLUMNS:
        if c.name not in answer_columns(test):
            continue
        head, helptext = heading(c), _(c.help) if c.help else None
        if c.kind in ("value", "p", "count"):
            number = COUNT_FORMAT if c.kind == "count" else MEASURE_FORMAT
            config[c.name] = st.column_config.NumberColumn(head, format=number, help=helptext)
        else:
            config[c.name] = st.column_config.TextColumn(
                head, help=helptext, pinned=c.name == "run"
            )
    # a grid's heading is plain text (never Markdown): the baseline's name as written
    config["mean_baseline"] = st.column_config.NumberColumn(str(baseline), format=MEASURE_FORMAT)
    config[f"p_corrected_{test}"] = st.column_config.NumberColumn(
        _("corrected p"),
        format=MEASURE_FORMAT,
        help=_("{test}; correction: {correction}").format(
            test=test_label(test), correction=correction_label(correction)
        ),
    )
    # widths: the nine columns fit an 800 px window (the last header was clipped)
    config["ci"] = st.column_config.TextColumn(
        _("Δ {level} CI").format(level=f"{confidence:.0%}"),
        width=112,
        help=_("paired bootstrap percentile interval"),
    )
    config["wtl"] = st.column_config.TextColumn(
        _("W / T / L"),
        help=_("queries where the run wins / ties / loses against the baseline"),
    )
    return config


def detail_table(comparison: Comparison) -> pd.DataFrame:
    """Every test's raw and corrected p-values and the effect size (the declared ``detail``
    columns), headed in the visitor's language; measures as the means read (MRR)."""
    columns = [c for c in COLUMNS if c.detail]
    detail = comparison.to_frame()[[c.name for c in columns]].copy()
    detail["measure"] = detail["measure"].map(display_measure)
    detail.columns = [heading(c) for c in columns]
    return detail


def detail_numbers(comparison_detail: pd.DataFrame) -> list[str]:
    """The headings of :func:`detail_table`'s numbers of 4 decimals (values and p-values)."""
    kinds = {heading(c): c.kind for c in COLUMNS if c.detail}
    return [h for h in comparison_detail.columns if kinds.get(h) in ("value", "p")]


def power_table(comparison: Comparison) -> pd.DataFrame:
    """How many queries each comparison needs (the declared ``power`` columns: topic set size
    design), headed in the visitor's language, run and measure first; the chosen difference's
    column only when one was chosen."""
    frame = comparison.to_frame()
    columns = [c for c in COLUMNS if c.name in ("run", "measure", "n_queries", "mean_delta")]
    columns += [
        c
        for c in COLUMNS
        if c.power
        and not (c.name == "queries_needed_target" and frame["queries_needed_target"].isna().all())
    ]
    table = frame[[c.name for c in columns]].copy()
    table["measure"] = table["measure"].map(display_measure)
    for c in ("queries_needed", "queries_needed_target"):
        if c in table:  # whole numbers; an unreachable size shows as missing
            table[c] = table[c].where(table[c] < float("inf")).astype("Int64")
    table.columns = [heading(c) for c in columns]
    return table


def power_numbers(table: pd.DataFrame) -> list[str]:
    """The headings of :func:`power_table`'s values of 4 decimals."""
    kinds = {heading(c): c.kind for c in COLUMNS}
    return [h for h in table.columns if kinds.get(h) == "value"]


def power_legend(comparison: Comparison) -> str:
    """The sentence under the power table: the method and its references, translated."""
    return comparison.power_sentence(gettext=_)


def export_texts(comparison: Comparison) -> dict[str, str]:
    """The Compare page's files: the whole comparison as JSON (the command line's document),
    the paper table as Markdown and LaTeX (run mean, delta and markers) and the plain
    comparison table as CSV, each stating the settings."""
    return {
        "json": json.dumps(comparison.to_dict(), indent=2),
        "markdown": comparison.to_markdown(),
        "latex": comparison.to_latex(),
        "csv": comparison.to_table("csv"),
    }


__all__ = [
    "LIBRARY_WORDS",
    "TESTS",
    "test_label",
    "correction_label",
    "compare",
    "answer_columns",
    "answer_numbers",
    "answer_table",
    "answer_config",
    "detail_table",
    "detail_numbers",
    "heading",
    "export_texts",
    "power_table",
    "power_numbers",
    "power_legend",
]
