"""The Compare page's computations: the comparison of every run with a baseline (cached on
the per-query values and settings), its on-screen table and its exports."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import streamlit as st

from metrics_core.cli.evaluate import evaluations_json
from metrics_core.report import format_table, json_safe, provenance
from metrics_core.stats.comparison import TESTS, comparison_records, markers_legend, paper_table

#: Short names of the tests and corrections in the page's column headers and choices (the
#: library's ``TEST_NAMES`` / ``CORRECTION_NAMES`` are the legend's full names).
TEST_LABELS = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "permutation": "randomization"}
CORRECTION_LABELS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg (FDR)",
                     "none": "none"}
#: The settings a comparison states in its exports.
EXPORT_SETTINGS = ("baseline", "permutations", "seed", "correction", "confidence", "query_set")
JSON_SETTINGS = ("baseline", "permutations", "bootstrap", "seed", "correction", "confidence", "alpha", "query_set")


@st.cache_data(show_spinner="Running the significance tests ...", max_entries=8)
def compare(frames: dict, baseline: str, measures: list, permutations: int, seed: int, correction: str,
            confidence: float, query_set: str) -> pd.DataFrame:
    """``compare_runs``, cached on the per-query values and settings: widget changes that only
    pick what to draw do not rerun 10,000 permutations."""
    from metrics_core.stats.comparison import compare_runs

    evaluations = [SimpleNamespace(run_name=name, per_query=frame) for name, frame in frames.items()]
    return compare_runs(evaluations, baseline, measures, n_permutations=permutations, seed=seed,
                        correction=correction, confidence=confidence, query_set=query_set)


def answer_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The comparison's rows for the screen: the columns shown, the interval and the
    wins / ties / losses as text."""
    shown = frame[["run", "measure", "n_queries", "mean_baseline", "mean_run", "mean_delta", "ci_lo", "ci_hi",
                   *(f"p_corrected_{t}" for t in TESTS), "wins", "ties", "losses", "effect_size",
                   "markers"]].copy()
    shown["ci"] = [f"{lo:.4f} to {hi:.4f}" if pd.notna(lo) else "–"
                   for lo, hi in zip(shown["ci_lo"], shown["ci_hi"], strict=True)]
    shown["wtl"] = [f"{w} / {t} / {l_}" for w, t, l_ in zip(shown["wins"], shown["ties"], shown["losses"], strict=True)]
    return shown


def export_texts(frame: pd.DataFrame, shown: pd.DataFrame, evaluations: list, conventions) -> dict[str, str]:
    """The Compare page's files: the whole comparison as JSON (the command line's document),
    the paper table as Markdown and LaTeX (run mean, delta and markers) and the on-screen
    table as CSV, each stating the settings."""
    legend = markers_legend(frame, tests=TESTS)
    prov = provenance(conventions, **{k: frame.attrs[k] for k in EXPORT_SETTINGS})
    payload = evaluations_json(evaluations, conventions, per_query=False)
    payload["comparison"] = {k: frame.attrs[k] for k in JSON_SETTINGS}
    payload["comparisons"] = comparison_records(frame)
    paper = paper_table(frame, tests=TESTS)
    return {"json": json.dumps(json_safe(payload), indent=2),
            "markdown": format_table(paper, "markdown", prov=prov, title=legend),
            "latex": format_table(paper, "latex", prov=prov, title=legend),
            "csv": format_table(shown.drop(columns=["ci", "wtl"]), "csv", prov=prov, index=False, title=legend)}


__all__ = ["TEST_LABELS", "CORRECTION_LABELS", "compare", "answer_table", "export_texts", "EXPORT_SETTINGS", "JSON_SETTINGS"]
