"""The ir_measures drop-in's diversity measures against the real ir_measures (its pyndeval
provider, ndeval.c), measure by measure, per query and aggregate, on random subtopic qrels
(the iteration column is the subtopic) and runs with ties."""

from __future__ import annotations

import math

import numpy as np
import pytest

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pyndeval")

from metrics_core.compat import ir_measures as shim  # noqa: E402

MEASURES = [
    "alpha_nDCG@5",
    "alpha_nDCG@20",
    "alpha_nDCG(alpha=0.3)@10",
    "alpha_DCG@10",
    "ERR_IA@5",
    "ERR_IA(rel=2)@10",
    "nERR_IA@20",
    "NRBP",
    "nNRBP",
    "nNRBP(beta=0.8,alpha=0.7)",
    "AP_IA",
    "MAP_IA(rel=2)",
    "P_IA@10",
    "StRecall@5",
    "StRecall@20",
]


def collection(seed: int, queries: int = 25) -> tuple[str, str]:
    """(qrels text, run text): subtopics 1..5 per query, labels 0..2, scores with ties, a
    query judged without a relevant document, run queries without judgements."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, queries + 1):
        for s in range(1, int(rng.integers(1, 6)) + 1):
            for d in rng.choice(40, size=int(rng.integers(0, 10)), replace=False):
                rel = 0 if q == 3 else int(rng.integers(0, 3))
                qrels.append((s, q, f"D{d:02d}", rel))
        for d in rng.choice(40, size=int(rng.integers(1, 30)), replace=False):
            run.append((q, f"D{d:02d}", float(rng.integers(0, 6))))
    run.append((queries + 7, "D00", 1.0))  # a run query without judgements
    # written by subtopic: ndeval.c's order of subtopics is pyndeval's first appearance
    qrels.sort()
    q_text = "".join(f"{q} {s} {d} {r}\n" for s, q, d, r in qrels)
    r_text = "".join(f"{q} Q0 {d} 0 {v} run\n" for q, d, v in run)
    return q_text, r_text


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", MEASURES)
def test_diversity_measure_equals_ir_measures(seed, name):
    q_text, r_text = collection(900 + seed)
    theirs_m = ir_measures.parse_measure(name)
    ours_m = shim.parse_measure(name)
    assert repr(ours_m) == repr(theirs_m)
    # one measure a call: ir_measures 0.4.3 gives 0 to every measure of a second pyndeval
    # invocation in the same call (its run iterator is spent by the first)
    theirs = {
        r.query_id: r.value
        for r in ir_measures.iter_calc(
            [theirs_m],
            list(ir_measures.read_trec_qrels(q_text)),
            list(ir_measures.read_trec_run(r_text)),
        )
    }
    ours = {
        r.query_id: r.value
        for r in shim.iter_calc(
            [ours_m], list(shim.read_trec_qrels(q_text)), list(shim.read_trec_run(r_text))
        )
    }
    assert ours.keys() == theirs.keys()
    for q, v in theirs.items():
        if math.isnan(v):  # ndeval's nNRBP 0/0: a query without a relevant subtopic
            assert ours[q] == 0.0 and name.startswith("nNRBP"), q
        else:
            assert ours[q] == v, (q, ours[q], v)


def test_several_invocations_in_one_call_each_get_their_value():
    q_text, r_text = collection(950)
    names = ["ERR_IA@5", "ERR_IA(rel=2)@10", "nNRBP(beta=0.8)"]
    together = shim.calc_aggregate(
        [shim.parse_measure(n) for n in names],
        list(shim.read_trec_qrels(q_text)),
        list(shim.read_trec_run(r_text)),
    )
    for n in names:
        alone = ir_measures.calc_aggregate(
            [ir_measures.parse_measure(n)],
            list(ir_measures.read_trec_qrels(q_text)),
            list(ir_measures.read_trec_run(r_text)),
        )[ir_measures.parse_measure(n)]
        got = together[shim.parse_measure(n)]
        assert got == alone or (math.isnan(alone) and got > 0), n


def test_judged_only_is_ndeval_on_the_judged_documents():
    """ir_measures 0.4.3 fails on judged_only with pyndeval (a TypeError in its filter); its
    meaning -- the run without the documents the qrels do not judge -- is checked here."""
    q_text, r_text = collection(970)
    qrels = list(ir_measures.read_trec_qrels(q_text))
    judged = {(r.query_id, r.doc_id) for r in qrels}
    run = list(ir_measures.read_trec_run(r_text))
    kept = [r for r in run if (r.query_id, r.doc_id) in judged]
    m = ir_measures.parse_measure("alpha_nDCG@10")
    theirs = {r.query_id: r.value for r in ir_measures.iter_calc([m], qrels, kept)}
    ours_m = shim.parse_measure("alpha_nDCG(judged_only=True)@10")
    ours = {r.query_id: r.value for r in shim.iter_calc([ours_m], q_text_records(q_text), run)}
    assert {q: v for q, v in ours.items() if q in theirs} == theirs


def q_text_records(text):
    return list(shim.read_trec_qrels(text))


def test_a_path_and_a_dict_without_subtopics(tmp_path):
    q_text, r_text = collection(960, queries=8)
    path = tmp_path / "qrels.txt"
    path.write_text(q_text)
    m = shim.parse_measure("alpha_nDCG@10")
    run = list(shim.read_trec_run(r_text))
    assert shim.calc_aggregate([m], str(path), run) == shim.calc_aggregate(
        [m], list(shim.read_trec_qrels(q_text)), run
    )
    with pytest.warns(UserWarning, match="no subtopics"):
        shim.calc_aggregate([m], {"1": {"D01": 1}}, {"1": {"D01": 1.0}})
    with pytest.raises(Exception, match="needs a cutoff"):
        shim.calc_aggregate([shim.alpha_nDCG], {"1": {"D01": 1}}, {"1": {"D01": 1.0}})
