"""The front door's coverage shortcut: a ranking that its own lists rule sound never hides a
problem the whole coverage report would find, and the evaluation's coverage is the same
report either way (made on first use when the shortcut holds)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.io.coverage import CoverageWarning, coverage_report


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    n_q = int(rng.integers(1, 15))
    qrels = {
        f"q{q}": {
            f"d{d}": int(rng.integers(-1, 3))
            for d in rng.choice(40, int(rng.integers(1, 6)), replace=False)
        }
        for q in range(n_q)
    }
    offset = int(rng.integers(0, n_q + 3))  # shifts the run's queries: from all shared to none
    judged_docs = rng.random() < 0.7  # else documents nobody judged
    run = {}
    for q in range(int(rng.integers(1, 15))):
        docs = rng.choice(60, int(rng.integers(1, 8)), replace=False)
        run[f"q{q + offset}"] = {
            (f"d{d}" if judged_docs else f"x{d}"): float(rng.integers(0, 4)) for d in docs
        }
    return qrels, run


@pytest.mark.parametrize("seed", range(60))
def test_a_sound_ranking_has_no_coverage_problem(seed):
    qrels, run = _random_case(seed)
    q, r = mc.read_qrels(qrels), mc.read_run(run, name="r")
    for conv in ({}, {"missing_queries": "zero"}, {"depth": 2}, {"judged_only": True}):
        ranking = mc.rank(q, r, **conv)
        if ranking.coverage_is_sound():
            assert coverage_report(q, r)["problem"] is None, (seed, conv)


def test_the_shortcut_holds_often_and_fails_on_the_traps():
    verdicts = [
        mc.rank(mc.read_qrels(c[0]), mc.read_run(c[1])).coverage_is_sound()
        for c in map(_random_case, range(60))
    ]
    assert any(verdicts) and not all(verdicts)  # the random cases hold both kinds


def test_evaluate_reports_the_same_coverage_either_way():
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
    sound = {"q1": {"d1": 2.0, "d9": 1.0}, "q2": {"d3": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)  # a sound run warns nothing
        ev = mc.evaluate(qrels, sound, ["AP"])
    assert ev.coverage == coverage_report(mc.read_qrels(qrels), mc.read_run(sound, name="run"))
    assert ev.coverage["problem"] is None
    with pytest.warns(CoverageWarning):
        bad = mc.evaluate(qrels, {"q1": {"x": 1.0}}, ["AP"])
    assert bad.coverage["problem"] == "none_judged"
