"""``metrics_core.compat.ir_measures`` equals the real ir_measures (0.4.x).

Random collections with unanswered qrels queries, unjudged run queries, tied scores,
graded labels and queries without relevant documents; measures given as strings and as
ir_measures objects. Per-query values must be equal exactly; aggregates up to the order
of a floating-point sum (ir_measures adds in its providers' order, RankLab in query order).
"""

from __future__ import annotations

import math

import pytest

ir_measures = pytest.importorskip("ir_measures")

from metrics_core.compat import ir_measures as shim  # noqa: E402
from tests.compat.test_pytrec_eval_shim import random_data  # noqa: E402

MEASURES = [
    "P@1",
    "P@5",
    "P@10",
    "R@5",
    "R@100",
    "AP",
    "AP@10",
    "nDCG",
    "nDCG@3",
    "nDCG@10",
    "RR",
    "Rprec",
    "Bpref",
    "Success@1",
    "Success@10",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "NumQ",
    "IPrec@0.0",
    "IPrec@0.5",
    "Judged@5",
    "Judged@10",
    "P(rel=2)@5",
    "R(rel=2)@10",
    "infAP",
]


@pytest.mark.parametrize("seed", range(8))
def test_per_query_and_aggregate_equal_ir_measures(seed):
    qrels, run = random_data(200 + seed, n_queries=25)
    objects = [ir_measures.parse_measure(m) for m in MEASURES]
    expected = {
        (r.query_id, str(r.measure)): r.value for r in ir_measures.iter_calc(objects, qrels, run)
    }
    got = {(r.query_id, str(r.measure)): r.value for r in shim.iter_calc(objects, qrels, run)}
    assert got.keys() == expected.keys()
    bad = [
        (k, got[k], v)
        for k, v in expected.items()
        if not (got[k] == v or (math.isnan(v) and math.isnan(got[k])))
    ]
    assert not bad
    agg_expected = ir_measures.calc_aggregate(objects, qrels, run)
    agg_got = shim.calc_aggregate(objects, qrels, run)
    assert list(agg_got) == objects
    for obj in objects:
        assert agg_got[obj] == pytest.approx(agg_expected[obj], rel=1e-12, abs=1e-15), str(obj)
    by_string = shim.calc_aggregate(MEASURES, qrels, run)
    assert list(by_string) == MEASURES and list(by_string.values()) == list(agg_got.values())


def test_objects_key_the_results_and_unanswered_queries_score_zero():
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}
    run = {"q1": {"d1": 1.0, "d3": 2.0}, "q9": {"d1": 1.0}}
    measure = ir_measures.parse_measure("P@1")
    agg = shim.calc_aggregate([measure, "NumRel"], qrels, run)
    assert list(agg) == [measure, "NumRel"]
    assert agg[measure] == ir_measures.calc_aggregate([measure], qrels, run)[measure] == 0.0
    assert agg["NumRel"] == 1.0  # the unanswered q2 counts 0, as in ir_measures
    records = list(shim.iter_calc(["RR"], qrels, run))
    assert [(r.query_id, r.value) for r in records] == [("q1", 0.5), ("q2", 0.0)]


def test_records_and_frames_as_inputs():
    import pandas as pd

    qrels = [ir_measures.Qrel("q1", "d1", 1), ir_measures.Qrel("q1", "d2", 0)]
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d1"], "score": [2.0, 1.0]})
    assert shim.calc_aggregate(["RR"], qrels, run) == {"RR": 0.5}
    agg, per_query = shim.calc(["RR", "P@2"], qrels, run)
    # ir_measures' shape: the aggregates, then the list of per-query metrics
    assert agg == {"RR": 0.5, "P@2": 0.5}
    assert [tuple(m) for m in per_query] == [("q1", "RR", 0.5), ("q1", "P@2", 0.5)]
