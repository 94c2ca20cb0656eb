"""``metrics_core.compat.beir.EvaluateRetrieval`` against BEIR's (installed for the tests
without its model dependencies): evaluate with and without ignore_identical_ids, and every
custom metric, on ArguAna-shaped collections with ties."""

from __future__ import annotations

import copy

import numpy as np
import pytest

evaluation = pytest.importorskip("beir.retrieval.evaluation")

from metrics_core.compat.beir import EvaluateRetrieval  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402

KS = [1, 3, 5, 10]


def collection(seed: int):
    rng = np.random.default_rng(seed)
    qrels, results = {}, {}
    for q in range(25):
        qid = f"a{q}"
        docs = [f"a{j}" for j in rng.choice(60, size=20, replace=False) if f"a{j}" != qid]
        qrels[qid] = {d: int(rng.integers(0, 3)) for d in docs[:5]}
        if not any(qrels[qid].values()):
            qrels[qid][docs[0]] = 1
        ranked = [qid, *docs[3:], *docs[:3]]
        results[qid] = {d: float(rng.integers(0, 6)) for d in ranked}  # ties
    return qrels, results


@pytest.mark.parametrize("ignore", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_evaluate_equals_beir(seed, ignore):
    qrels, results = collection(seed)
    theirs = evaluation.EvaluateRetrieval.evaluate(
        qrels, copy.deepcopy(results), KS, ignore_identical_ids=ignore
    )
    ours = EvaluateRetrieval.evaluate(qrels, results, KS, ignore_identical_ids=ignore)
    assert ours == theirs


@pytest.mark.parametrize("metric", ["mrr", "r_cap", "hole", "acc", "MRR@k", "top_k_accuracy"])
@pytest.mark.parametrize("seed", range(3))
def test_custom_metrics_equal_beir(seed, metric):
    qrels, results = collection(10 + seed)
    theirs = evaluation.EvaluateRetrieval.evaluate_custom(qrels, copy.deepcopy(results), KS, metric)
    assert EvaluateRetrieval.evaluate_custom(qrels, results, KS, metric) == theirs


def test_hole_counts_unjudged_run_queries_and_refusals():
    qrels = {"q1": {"d1": 1}}
    results = {"q1": {"d1": 2.0, "d9": 1.0}, "q2": {"d8": 1.0}}
    theirs = evaluation.EvaluateRetrieval.evaluate_custom(qrels, results, [1, 2], "hole")
    assert EvaluateRetrieval.evaluate_custom(qrels, results, [1, 2], "hole") == theirs
    with pytest.raises(InputError, match="retrieval is not offered"):
        EvaluateRetrieval().retrieve({}, {})
    with pytest.raises(InputError, match="custom metrics"):
        EvaluateRetrieval.evaluate_custom(qrels, results, [1], "ndcg")
