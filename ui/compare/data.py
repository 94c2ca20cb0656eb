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
    systems: dict | None = None,
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
        tuple((k, tuple(v)) for k, v in (systems or {}).items()),
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
                systems=systems or None,
            )

    return remember(COMPARISONS, key, build, held=tuple(evaluations), size=8)


#: The answer table's cells that join two or more declared columns into one text.
JOINED = {"ci_lo": "ci", "ci_hi": "ci", "wins": "wtl", "ties": "wtl", "losses": "wtl"}


def systems_from_text(text: str, names) -> dict:
    """The Compare page's systems, one per line ``NAME=run,run`` (blank lines skipped),
    checked against the loaded runs' ``names`` (:class:`metrics_core.InputError` otherwise)."""
    from metrics_core.stats.systems import check_systems, parse_system

    systems = dict(parse_system(line) for line in str(text or "").splitlines() if line.strip())
    return check_systems(systems, list(names)) if systems else {}


def as_systems(evaluations: list, text: str) -> tuple[list, dict]:
    """The Comparative table's rows with the Compare page's systems (``text``) applied: each
    system one row, its per-query mean over its runs (:func:`metrics_core.stats.systems.group_runs`);
    ``({}, rows)`` unchanged when none is set or a line is wrong (the Compare page says why)."""
    from metrics_core.stats.systems import group_runs

    try:
        systems = systems_from_text(text, [ev.run_name for ev in evaluations])
    except mc.InputError:
        return evaluations, {}
    if not systems:
        return evaluations, {}
    return group_runs(evaluations, systems)[0], systems


def systems_caption(systems: dict) -> str:
    """One sentence naming the systems and their runs."""
    named = "; ".join(
        _("{system} ({n} runs)").format(system=s, n=len(m)) + ": " + ", ".join(m)
        for s, m in systems.items()
    )
    return _(
        "Systems from the Compare page, each the per-query mean of its runs: {systems}."
    ).format(systems=named)


def answer_columns(test: str, systems: bool = False) -> list[str]:
    """The answer table's columns, in the declared order (:data:`COLUMNS`' ``answer``): the
    corrected p of ``test`` only, the interval and wins / ties / losses each one cell; the
    systems' columns (seed SD, the test on queries and seeds) where runs form systems."""
    out = []
    for c in COLUMNS:
        if c.systems and not systems:
            continue
        if c.answer and (c.test is None or c.test == test):
            name = JOINED.get(c.name, c.name)
            if name not in out:
                out.append(name)
    return out


def answer_numbers(test: str, systems: bool = False) -> list[str]:
    """The answer table's numbers of 4 decimals (values and the corrected p of ``test``)."""
    return [
        c.name
        for c in COLUMNS
        if c.answer and c.kind in ("value", "p") and c.name not in JOINED
        if c.test is None or c.test == test
        if systems or not c.systems
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


def answer_config(
    test: str, baseline: str, confidence: float, correction: str, systems: bool = False
) -> dict:
    """The answer table's ``column_config``: each declared column's heading and format, and
    the screen's own short headings (the baseline's name over its mean, "corrected p", the
    interval's level), sized so the columns fit an 800 px window."""
    config = {}
    for c in COLUMNS:
        if c.name not in answer_columns(test, systems):
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
    held = comparison.columns()
    columns = [c for c in COLUMNS if c.detail and c.name in held]
    detail = comparison.to_frame()[[c.name for c in columns]].copy()
    detail["measure"] = detail["measure"].map(display_measure)
    detail.columns = [heading(c) for c in columns]
    return detail


def detail_numbers(comparison_detail: pd.DataFrame) -> list[str]:
    """The headings of :func:`detail_table`'s numbers of 4 decimals (values and p-values)."""
    kinds = {heading(c): c.kind for c in COLUMNS if c.detail}
    return [h for h in comparison_detail.columns if kinds.get(h) in ("value", "p")]


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
    "systems_from_text",
    "as_systems",
    "systems_caption",
    "answer_columns",
    "answer_numbers",
    "answer_table",
    "answer_config",
    "detail_table",
    "detail_numbers",
    "heading",
    "export_texts",
]
