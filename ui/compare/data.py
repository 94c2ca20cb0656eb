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
from metrics_core.stats.comparison import TESTS
from ui.common.cache import remember
from ui.common.i18n import gettext as _

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
            )

    return remember(COMPARISONS, key, build, held=tuple(evaluations), size=8)


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
    "answer_table",
    "export_texts",
]
