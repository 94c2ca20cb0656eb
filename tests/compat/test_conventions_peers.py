"""The conventions people publish with, against the tools that define them:
``ties="expected"`` against scikit-learn's ``ndcg_score`` (which averages over the orders
of tied documents) and the tie report; ``ignore_identical_ids`` and Hole@k against BEIR's
``EvaluateRetrieval`` (installed for the tests without its model dependencies; skipped
where it is absent, with BEIR's documented formula checked by hand below)."""

from __future__ import annotations

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.errors import InputError


def tied_collection(seed: int, n_queries: int = 25):
    """Every query retrieves all of its judged documents (labels 0..3) and some unjudged
    ones, with scores from a handful of values: many ties."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        n = int(rng.integers(2, 30))
        labels = rng.integers(0, 4, size=n)
        scores = rng.integers(0, 4, size=n).astype(float)
        qrels[f"q{q}"] = {f"d{i}": int(labels[i]) for i in range(n)}
        run[f"q{q}"] = {f"d{i}": float(scores[i]) for i in range(n)}
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [None, 1, 3, 10])
def test_expected_ndcg_equals_sklearn_ndcg_score_on_ties(seed, k):
    from sklearn.metrics import ndcg_score

    qrels, run = tied_collection(seed)
    name = "nDCG" if k is None else f"nDCG@{k}"
    ev = mc.evaluate(qrels, run, [name], ties="expected")
    trec = mc.evaluate(qrels, run, [name])
    differs = 0
    for q in qrels:
        docs = list(qrels[q])
        y_true = np.array([[qrels[q][d] for d in docs]], dtype=float)
        y_score = np.array([[run[q][d] for d in docs]])
        if y_true.sum() == 0:
            continue  # sklearn gives 0 where nothing is relevant, as RankLab does
        theirs = ndcg_score(y_true, y_score, k=k)
        assert ev.per_query.loc[q, name] == pytest.approx(theirs, rel=1e-12, abs=1e-15), q
        differs += trec.per_query.loc[q, name] != pytest.approx(theirs, rel=1e-12, abs=1e-15)
    assert differs > 0  # the tie rule alone does not give sklearn's numbers


@pytest.mark.parametrize("seed", range(3))
def test_expected_is_the_tie_reports_expected_value_for_every_covered_measure(seed):
    qrels, run = tied_collection(10 + seed)
    names = [
        "P@5",
        "R@10",
        "Hits@3",
        "Success@2",
        "RR",
        "RR@3",
        "AP",
        "AP@10",
        "Rprec",
        "Bpref",
        "DCG@5",
        "nDCG@10",
        "nDCG(gain=exp)@5",
        "NumRet",
        "NumRelRet",
    ]
    report = mc.evaluate(qrels, run, names, tie_report=True).tie_report
    ev = mc.evaluate(qrels, run, names, ties="expected")
    for name in names:
        if name.startswith("Num"):
            assert ev.aggregate[name] == mc.evaluate(qrels, run, [name]).aggregate[name]
            continue
        for q in qrels:
            assert ev.per_query.loc[q, name] == pytest.approx(
                report["per_query"][q][name]["expected"], rel=1e-12, abs=1e-15
            ), (q, name)
        assert ev.aggregate[name] == pytest.approx(report["aggregate"][name]["expected"], rel=1e-12)
    assert ev.conventions.ties == "expected"


def test_expected_refuses_what_the_tie_report_does_not_cover():
    qrels, run = tied_collection(3, n_queries=3)
    with pytest.raises(InputError, match="ERR@10") as info:
        mc.evaluate(qrels, run, ["nDCG@10", "ERR@10"], ties="expected")
    assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="whole run"):
        mc.evaluate(qrels, run, ["nDCG@10"], ties="expected", block_rows=10)


def beir_like_collection(seed: int):
    """ArguAna-shaped: each query is also a document of the corpus and is retrieved first."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(20):
        qid = f"a{q}"
        docs = [f"a{j}" for j in rng.choice(40, size=12, replace=False) if f"a{j}" != qid]
        qrels[qid] = {d: int(rng.integers(0, 2)) for d in docs[:4]}
        if not any(qrels[qid].values()):
            qrels[qid][docs[0]] = 1
        ranked = [qid] + docs[4:] + docs[:4] if q % 3 else [qid]  # every third: only itself
        run[qid] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return qrels, run


def test_ignore_identical_ids_by_hand():
    qrels = {"q1": {"d1": 1}}
    run = {"q1": {"q1": 3.0, "d1": 2.0, "d2": 1.0}}
    assert mc.evaluate(qrels, run, ["nDCG@10"]).aggregate["nDCG@10"] == pytest.approx(
        1 / np.log2(3)
    )
    assert (
        mc.evaluate(qrels, run, ["nDCG@10"], ignore_identical_ids=True).aggregate["nDCG@10"] == 1.0
    )
    only_itself = {"q1": {"q1": 1.0}}
    ev = mc.evaluate(qrels, only_itself, ["nDCG@10", "NumRet"], ignore_identical_ids=True)
    assert ev.per_query.loc["q1"].tolist() == [0.0, 0.0]  # evaluated as an empty ranking
    assert not ev.diagnostics.get("missing_queries")


@pytest.mark.parametrize("seed", range(3))
def test_ignore_identical_ids_equals_beir(seed):
    evaluation = pytest.importorskip("beir.retrieval.evaluation")
    import copy

    qrels, run = beir_like_collection(seed)
    ks = [1, 3, 10]
    ndcg, _map, recall, precision = evaluation.EvaluateRetrieval.evaluate(
        qrels, copy.deepcopy(run), ks
    )
    names = [f"{m}@{k}" for m in ("nDCG", "AP", "R", "P") for k in ks]
    ev = mc.evaluate(qrels, run, names, compat="trec_eval9", ignore_identical_ids=True)
    for table, family in ((ndcg, "nDCG"), (_map, "AP"), (recall, "R"), (precision, "P")):
        for k in ks:
            beir_key = {"nDCG": "NDCG", "AP": "MAP", "R": "Recall", "P": "P"}[family] + f"@{k}"
            assert round(ev.aggregate[f"{family}@{k}"], 5) == table[beir_key], beir_key
    kept = mc.evaluate(qrels, run, ["nDCG@10"], compat="trec_eval9")
    assert round(kept.aggregate["nDCG@10"], 5) != ndcg["NDCG@10"]


def test_cli_ignore_identical_ids_and_ties_expected(tmp_path, capsys):
    import json

    from metrics_core import cli

    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 q1 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 d2 3 1 t\n")
    args = [
        "evaluate",
        "--qrels",
        str(tmp_path / "q.txt"),
        "--run",
        str(tmp_path / "r.txt"),
        "-m",
        "P@1,RR",
        "--format",
        "json",
    ]
    assert cli.main([*args, "--ignore-identical-ids"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][0]["aggregate"] == {"P@1": 1.0, "RR": 1.0}
    assert out["conventions"]["ignore_identical_ids"] is True
    (tmp_path / "r.txt").write_text("q1 Q0 q1 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 d2 3 2 t\n")
    assert cli.main([*args, "--ignore-identical-ids", "--ties", "expected"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][0]["aggregate"] == {
        "P@1": 0.5,
        "RR": 0.75,
    }  # d1 and d2 tie: first half the time


def hole_by_beirs_formula(qrels, run, k):
    """BEIR's Hole@k, written from its documentation: per run query, the share of its top k
    (score descending, equal scores in input order) that no qrels query judges; summed and
    divided by the number of qrels queries."""
    judged = {d for docs in qrels.values() for d in docs}
    total = 0.0
    for docs in run.values():
        top = sorted(docs.items(), key=lambda item: item[1], reverse=True)[:k]
        total += sum(d not in judged for d, _ in top) / k
    return total / len(qrels)


@pytest.mark.parametrize("seed", range(3))
def test_hole_equals_beir(seed):
    qrels, run = tied_collection(40 + seed)
    rng = np.random.default_rng(seed)
    for q in run:  # unjudged documents, some judged for another query only
        for j in range(int(rng.integers(0, 6))):
            run[q][f"x{j}"] = float(rng.integers(0, 4))
        run[q]["d0"] = 0.5
    ks = [1, 5, 10]
    ev = mc.evaluate(qrels, run, [f"Hole@{k}" for k in ks], ties="input", missing_queries="zero")
    for k in ks:
        assert round(ev.aggregate[f"Hole@{k}"], 5) == round(hole_by_beirs_formula(qrels, run, k), 5)
    try:
        from beir.retrieval.evaluation import EvaluateRetrieval
    except ImportError:
        return
    theirs = EvaluateRetrieval.evaluate_custom(qrels, run, ks, metric="hole@k")
    for k in ks:
        assert round(ev.aggregate[f"Hole@{k}"], 5) == theirs[f"Hole@{k}"]


def test_hole_counts_documents_judged_for_another_query_as_judged():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 0}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    ev = mc.evaluate(qrels, run, ["Hole@3", "Unjudged@3"])
    assert ev.aggregate == {"Hole@3": pytest.approx(1 / 3), "Unjudged@3": pytest.approx(2 / 3)}


def test_identical_ids_and_hole_are_the_same_in_blocks():
    qrels, run = beir_like_collection(7)
    run = mc.read_run(run)  # a Run in memory streams in blocks of whole queries
    names = ["nDCG@10", "P@5", "Hole@5", "RR"]
    whole = mc.evaluate(qrels, run, names, ignore_identical_ids=True, block_rows=0)
    blocks = mc.evaluate(qrels, run, names, ignore_identical_ids=True, block_rows=7)
    assert getattr(blocks, "streaming", None) is not None  # evaluated block by block
    assert blocks.aggregate == pytest.approx(whole.aggregate, rel=1e-12)
    assert whole.aggregate != mc.evaluate(qrels, run, names, block_rows=0).aggregate
