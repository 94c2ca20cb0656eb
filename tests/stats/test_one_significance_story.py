"""One significance story: the same pair with the same runs, measures and settings gets the
same p-value from the leaderboard (Overview) and from compare_runs (Compare); when the two
tables hold different runs or measures, their corrected p-values differ and each legend
says which comparisons its correction covers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.report.comparison import compare
from metrics_core.report.legends import family_sentence, leaderboard_legend, markers_legend
from metrics_core.stats.comparison import (
    compare_runs,
    correction_family,
    effectiveness_measures,
    leaderboard,
)
from metrics_core.stats.significance import correct_pvalues

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "ranking"
OVERVIEW = list(mc.measures.EXPLORER_MEASURES)  # what Overview evaluates by default
COMPARE = list(mc.measures.COMPARE_MEASURES)  # what Compare evaluates by default


@pytest.fixture(scope="module")
def evaluations():
    qrels = mc.read_qrels(str(SAMPLE / "qrels.txt"))
    out = []
    for name in ("bm25", "dense", "hybrid"):
        ev = mc.evaluate(
            qrels, mc.read_run(str(SAMPLE / f"{name}.txt")), sorted(set(OVERVIEW) | set(COMPARE))
        )
        ev = ev.renamed(name)
        out.append(ev)
    return out


def _pair(frame, run, measure, column):
    row = frame[(frame["run"] == run) & (frame["measure"] == measure)]
    assert len(row) == 1
    return float(row[column].iloc[0])


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh", "none"])
@pytest.mark.parametrize("measures", [OVERVIEW, COMPARE])
def test_same_runs_measures_settings_give_the_same_p_everywhere(evaluations, measures, correction):
    board = leaderboard(evaluations, "bm25", measures, n_resamples=200, correction=correction)
    frame = compare_runs(evaluations, "bm25", measures, correction=correction)
    obj = compare(evaluations, "bm25", measures=measures, correction=correction)
    for run in ("dense", "hybrid"):
        for m in measures:
            p = _pair(frame, run, m, "p_corrected_permutation")
            # counts and coverage (Judged@10) are outside the family: NaN on every table
            np.testing.assert_equal(
                [
                    _pair(board, run, m, "p_corrected"),
                    _pair(obj.to_frame(), run, m, "p_corrected_permutation"),
                ],
                [p, p],
            )
            assert np.isnan(p) == (m not in effectiveness_measures(measures))
            assert _pair(board, run, m, "p") == _pair(frame, run, m, "p_permutation")
    assert correction_family(board) == correction_family(frame)
    assert family_sentence(board) == family_sentence(frame)


def test_the_two_pages_differ_only_by_their_family_and_say_so(evaluations):
    """The issue's case: hybrid vs bm25 on RR, Holm over Overview's 12 comparisons of
    effectiveness (Judged@10, a coverage figure, is outside the family) and over Compare's 8.
    The uncorrected p is one; each corrected p is Holm over its own table."""
    board = leaderboard(evaluations, "bm25", OVERVIEW, n_resamples=200)
    frame = compare_runs(evaluations, "bm25", COMPARE)
    raw = _pair(frame, "hybrid", "RR", "p_permutation")
    assert _pair(board, "hybrid", "RR", "p") == raw
    assert correction_family(board)["n"] == 2 * len(effectiveness_measures(OVERVIEW)) == 12
    assert correction_family(frame)["n"] == 2 * len(COMPARE) == 8
    # each corrected p is Holm over exactly its family's uncorrected p-values
    for table, col in ((board, "p"), (frame, "p_permutation")):
        rows = table[
            (table["run"] != "bm25") & table["measure"].isin(effectiveness_measures(OVERVIEW))
        ]
        corrected = correct_pvalues(rows[col].to_numpy(), "holm")
        target = "p_corrected" if col == "p" else "p_corrected_permutation"
        assert np.array_equal(corrected, rows[target].to_numpy())
    assert _pair(board, "hybrid", "RR", "p_corrected") != _pair(
        frame, "hybrid", "RR", "p_corrected_permutation"
    )
    overview_words, compare_words = leaderboard_legend(board), markers_legend(frame, paper=False)
    assert (
        "Holm correction over the 12 comparisons of this table (2 runs against bm25 × 6 measures)"
        in overview_words
    )
    assert (
        "Holm correction over the 8 comparisons of this table (2 runs against bm25 × 4 measures)"
        in compare_words
    )
    for words in (overview_words, compare_words):
        assert "the uncorrected p-value is the same" in words


def test_no_correction_says_so(evaluations):
    frame = compare_runs(evaluations, "bm25", ["RR"], correction="none")
    assert family_sentence(frame).startswith("No multiple-comparison correction")
    assert (frame["p_permutation"] == frame["p_corrected_permutation"]).all()


def test_a_paper_legend_names_the_family_without_the_explanation(evaluations):
    frame = compare_runs(evaluations, "bm25", COMPARE)
    paper = markers_legend(frame)
    assert "Delta vs baseline in parentheses" in paper
    assert (
        "Holm correction over the 8 comparisons of this table (2 runs against bm25 × 4 measures)."
        in paper
    )
    assert "uncorrected" not in paper
