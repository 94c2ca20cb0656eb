"""NCG@k and NCG against brute force: the gains of the top k over the k largest judged gains,
written out as plain loops over each query's ranking (trec_eval's order: score descending,
equal scores by document id descending), on random graded runs with ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def graded(draw):
    """({qid: {doc: label}}, {qid: {doc: score}}): labels -1..3, scores from four values
    (ties), documents judged and not, a query judged without a positive label."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 5))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 10)))]
        qrels[f"q{q}"] = {d: draw(st.integers(-1, 3)) for d in docs if draw(st.booleans())} or {
            docs[0]: 0
        }
        run[f"q{q}"] = {d: float(draw(st.integers(0, 3))) for d in docs if draw(st.booleans())} or {
            docs[-1]: 1.0
        }
    return qrels, run


def trec_order(ranking: dict) -> list[str]:
    return [
        d for d, _ in sorted(ranking.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)
    ]


def gain(label: float, kind: str) -> float:
    if label <= 0:
        return 0.0
    return 2.0**label - 1.0 if kind == "exp" else float(label)


def ncg_brute(judged: dict, ranking: dict, k: int | None, kind: str) -> float:
    order = trec_order(ranking)[:k] if k else trec_order(ranking)
    got = 0.0
    for d in order:
        got += gain(judged.get(d, 0), kind)
    ideal_gains = sorted((gain(v, kind) for v in judged.values()), reverse=True)
    ideal = sum(ideal_gains[:k] if k else ideal_gains)
    return got / ideal if ideal else 0.0


@SETTINGS
@given(
    data=graded(), k=st.sampled_from([None, 1, 2, 5, 100]), kind=st.sampled_from(["linear", "exp"])
)
def test_ncg_equals_brute_force(data, k, kind):
    qrels, run = data
    name = "NCG" + ("(gain=exp)" if kind == "exp" else "") + (f"@{k}" if k else "")
    ev = mc.evaluate(qrels, run, [name])
    col = ev.per_query[mc.parse_measure(name).name]
    assert len(col) == len(set(run) & set(qrels))
    for q in col.index:
        assert col[q] == ncg_brute(qrels[q], run[q], k, kind), (q, name)


def test_ncg_known_values_and_names():
    qrels = {"q": {"a": 3, "b": 0, "c": 1, "d": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    ev = mc.evaluate(qrels, run, ["NCG@2", "NCG@3", "NCG", "ncg@1"])
    assert ev.aggregate == {
        "NCG@2": 3 / 5,  # a, b against a, d
        "NCG@3": 4 / 6,  # a, b, c against a, d, c
        "NCG": 4 / 6,  # the gain retrieved over the gain judged
        "NCG@1": 1.0,
    }
    # NCG@k never exceeds 1 and reaches it on the ideal order
    best = {"q": {"a": 4.0, "d": 3.0, "c": 2.0, "b": 1.0}}
    assert set(mc.evaluate(qrels, best, ["NCG@1", "NCG@2", "NCG@4"]).aggregate.values()) == {1.0}


def test_ncg_in_the_ir_measures_drop_in():
    from metrics_core.compat import ir_measures

    qrels = {"q": {"a": 3, "b": 0, "c": 1, "d": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    m = ir_measures.parse_measure("NCG@2")
    assert repr(m) == "NCG@2"
    assert ir_measures.calc_aggregate([m, ir_measures.NCG], qrels, run) == {
        m: pytest.approx(3 / 5),
        ir_measures.NCG: pytest.approx(4 / 6),
    }


def test_ncg_whole_equals_streamed():
    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in range(12)} for i in range(30)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 5)) for j in range(15)} for i in range(30)}
    names = ["NCG@5", "NCG@20", "NCG"]
    whole = mc.evaluate(qrels, run, names)
    streamed = mc.evaluate(mc.read_qrels(qrels), mc.read_run(run), names, block_rows=40)
    assert whole.aggregate == streamed.aggregate
    assert whole.per_query.equals(streamed.per_query)
