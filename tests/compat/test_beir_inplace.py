"""BEIR's in-place deletion, reproduced: evaluate(ignore_identical_ids=True) pops each
query's own id from the caller's results (beir/retrieval/evaluation.py), so a second
evaluate -- with either setting -- or evaluate_custom on the same results gives BEIR's
numbers: those of the results without the identical ids."""

from __future__ import annotations

import copy

from metrics_core.compat.beir import EvaluateRetrieval


def _data():
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
    results = {
        "q1": {"q1": 9.0, "d2": 5.0, "x": 4.0, "d1": 3.0},
        "q2": {"q2": 8.0, "y": 7.0, "d3": 6.0},
    }
    return qrels, results


def test_first_call_deletes_identical_ids_in_place_and_second_call_sees_them_gone():
    qrels, results = _data()
    first = EvaluateRetrieval.evaluate(qrels, results, [1, 3])
    assert "q1" not in results["q1"] and "q2" not in results["q2"]
    # BEIR's second call with ignore_identical_ids=False: the ids are gone, same numbers
    second = EvaluateRetrieval.evaluate(qrels, results, [1, 3], ignore_identical_ids=False)
    assert second == first
    # what the second call would give had the ids stayed (the drop-in no longer did)
    _, untouched = _data()
    kept = EvaluateRetrieval.evaluate(qrels, untouched, [1, 3], ignore_identical_ids=False)
    assert kept != first and "q1" in untouched["q1"]


def test_custom_metrics_after_evaluate_see_the_deletion():
    qrels, results = _data()
    before = EvaluateRetrieval.evaluate_custom(qrels, copy.deepcopy(results), [1], "mrr")
    EvaluateRetrieval.evaluate(qrels, results, [1])
    after = EvaluateRetrieval.evaluate_custom(qrels, results, [1], "mrr")
    assert before == {"MRR@1": 0.0} and after == {"MRR@1": 0.5}
