"""Judged@k against ir_measures (whose measure it is) on random runs with ties, short
rankings and negative labels; the divide-by-k variant and the uncut Judged."""

from __future__ import annotations

import numpy as np
import pytest

import metrics_core as mc

ir_measures = pytest.importorskip("ir_measures")


def _random(seed: int):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for i in range(40):
        q = f"q{i}"
        n = int(rng.integers(1, 25))  # often fewer than k retrieved
        docs = rng.choice(50, n, replace=False)
        run[q] = {f"d{d}": float(rng.integers(0, 4)) for d in docs}  # many tied scores
        judged = rng.choice(50, int(rng.integers(1, 30)), replace=False)
        qrels[q] = {f"d{d}": int(rng.choice([-1, 0, 0, 1, 2])) for d in judged}
    return qrels, run


@pytest.mark.parametrize("seed", range(6))
def test_judged_equals_ir_measures(seed):
    qrels, run = _random(seed)
    measures = [
        ir_measures.Judged @ 1,
        ir_measures.Judged @ 5,
        ir_measures.Judged @ 10,
        ir_measures.Judged @ 20,
        ir_measures.Judged @ 100,
        ir_measures.Judged,
    ]
    want = {}
    for m in ir_measures.iter_calc(measures, qrels, run):
        want[(m.query_id, str(m.measure))] = m.value
    # ir_measures orders equal scores by document id ascending
    ev = mc.evaluate(
        qrels,
        run,
        ["Judged@1", "Judged@5", "Judged@10", "Judged@20", "Judged@100", "Judged"],
        ties="docid_asc",
    )
    frame = ev.per_query
    compared = 0
    for (q, name), value in want.items():
        assert frame.loc[q, name] == value, (q, name)
        compared += 1
    assert compared == len(frame) * 6


def test_divide_by_k_and_uncut():
    qrels = {"q1": {"d1": 1, "d2": 0, "d9": 2}, "q2": {"x": 1}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"x": 1.0}}
    ev = mc.evaluate(qrels, run, ["Judged@10", "Judged(divide=k)@10", "Judged", "Judged@2"])
    pq = ev.per_query
    assert pq.loc["q1"].tolist() == [2 / 3, 0.2, 2 / 3, 1.0]
    assert pq.loc["q2"].tolist() == [1.0, 0.1, 1.0, 1.0]
    # the case: 1.0 where dividing by k gave 0.5, 0.25 where it gave 0.1
    ev = mc.evaluate(
        {"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}, ["Judged@4", "Judged(divide=k)@4"]
    )
    assert ev.aggregate == {"Judged@4": 1.0, "Judged(divide=k)@4": 0.5}
    ev = mc.evaluate(
        {"q": {"a": 1}},
        {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}},
        ["Judged@10", "Judged(divide=k)@10"],
    )
    assert ev.aggregate == {"Judged@10": 0.25, "Judged(divide=k)@10": 0.1}


def test_nothing_retrieved_scores_zero():
    ev = mc.evaluate(
        {"q1": {"a": 1}, "q2": {"b": 1}},
        {"q1": {"a": 1.0}},
        ["Judged@5", "Judged"],
        missing_queries="zero",
    )
    assert ev.per_query.loc["q2"].tolist() == [0.0, 0.0]
