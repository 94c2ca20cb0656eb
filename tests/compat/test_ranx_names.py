"""ranx's measure spellings reach RankLab's measures, with ranx's values.

Random runs without tied scores (ranx and trec_eval order ties differently; see the
README), labels 0..3, queries without relevant documents; every ranx name of the table in
``metrics_core.ranking.ranx_names`` is compared per query with ranx.evaluate. A separate
test pins down how ranx orders equal scores, which the README states.
"""

from __future__ import annotations

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

# numba compiles ranx's functions (and its own argsort) once per process, tens of seconds
# in a fresh environment: the tests that call them run in one process of pytest -n 2
pytestmark = pytest.mark.xdist_group("numba")

import metrics_core as mc  # noqa: E402
from metrics_core.ranking.ranx_names import RANX_NAMES, translate  # noqa: E402

NAMES = [
    "ndcg@5",
    "ndcg@10",
    "ndcg",
    "ndcg_burges@5",
    "ndcg_burges@10",
    "dcg@3",
    "dcg@10",
    "dcg_burges@3",
    "dcg_burges@10",
    "map@5",
    "map@100",
    "map",
    "mrr@3",
    "mrr",
    "precision@1",
    "precision@10",
    "recall@5",
    "recall@100",
    "f1@5",
    "f1@10",
    "hit_rate@1",
    "hit_rate@5",
    "hits@3",
    "hits@10",
    "r-precision",
]


def random_data(seed: int, ties: bool = False):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(30):
        docs = [f"d{i}" for i in range(int(rng.integers(3, 50)))]
        judged = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
        labels = rng.integers(0, 4, size=len(judged)) if q % 7 else np.zeros(len(judged), int)
        qrels[f"q{q}"] = {str(d): int(v) for d, v in zip(judged, labels, strict=True)}
        retrieved = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
        values = (
            rng.integers(0, 3, len(retrieved)).astype(float)
            if ties
            else rng.permutation(len(retrieved)) + 0.5
        )
        run[f"q{q}"] = {str(d): float(s) for d, s in zip(retrieved, values, strict=True)}
    return qrels, run


def per_query_ranx(qrels, run, names) -> dict[str, dict[str, float]]:
    """ranx's per-query values, by query id."""
    ranx_run = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, names)
    return {n: dict(ranx_run.scores[n]) for n in names}


def test_every_ranx_name_is_tested():
    covered = {n.split("@")[0] for n in NAMES} | {"bpref"}
    assert set(RANX_NAMES) - {"r_precision"} <= covered


@pytest.mark.parametrize("seed", range(6))
def test_ranx_names_equal_ranx_without_ties(seed):
    qrels, run = random_data(seed)
    expected = per_query_ranx(qrels, run, NAMES)
    ev = mc.evaluate(qrels, run, NAMES)
    for name in NAMES:
        canonical = mc.parse_measure(name).name
        assert canonical == mc.parse_measure(translate(name)).name
        ours = ev.per_query[canonical].reindex(list(qrels)).to_numpy()
        theirs = np.array([expected[name][q] for q in qrels], dtype=float)
        both_nan = np.isnan(ours) & np.isnan(theirs)
        np.testing.assert_allclose(
            np.where(both_nan, 0, ours),
            np.where(both_nan, 0, theirs),
            rtol=1e-12,
            atol=1e-15,
            err_msg=name,
        )


@pytest.mark.parametrize("seed", range(4))
def test_bpref_equals_ranx_where_ranx_gives_a_value(seed):
    """ranx's bpref is 0 for every query of a collection that has a query without a
    relevant document, and NaN for some others (ranx 0.3); elsewhere it is trec_eval's."""
    qrels, run = random_data(50 + seed)
    qrels = {q: v for q, v in qrels.items() if max(v.values()) > 0}
    run = {q: run[q] for q in qrels}
    expected = per_query_ranx(qrels, run, ["bpref"])["bpref"]
    ours = mc.evaluate(qrels, run, ["bpref"]).per_query["Bpref"]
    finite = [q for q in qrels if np.isfinite(expected[q])]
    assert len(finite) >= len(qrels) // 2
    for q in finite:
        assert ours[q] == pytest.approx(expected[q], rel=1e-12, abs=1e-15), q


def tied_collection(n_docs: int, seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(40):
        docs = [f"d{i}" for i in rng.permutation(n_docs)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs[: n_docs // 2 + 1]}
        run[f"q{q}"] = {d: float(rng.integers(0, 3)) for d in docs}  # three score values: many ties
    return qrels, run


def differences(qrels, run, ties: str) -> int:
    names = ["precision@1", "precision@3", "mrr", "ndcg@5", "map@10"]
    expected = per_query_ranx(qrels, run, names)
    ev = mc.evaluate(qrels, run, names, ties=ties)
    return sum(
        int(
            np.sum(
                ~np.isclose(
                    ev.per_query[mc.parse_measure(n).name].reindex(list(qrels)).to_numpy(),
                    np.array([expected[n][q] for q in qrels]),
                    rtol=1e-12,
                    atol=1e-15,
                )
            )
        )
        for n in names
    )


@pytest.mark.parametrize("n_docs", [4, 9, 15])
def test_ranx_keeps_input_order_of_ties_in_short_rankings(n_docs):
    """ranx sorts each ranking with numba's unstable quicksort, which sorts arrays of up to
    15 elements by insertion: equal scores then keep the order of the input (ties="input")."""
    qrels, run = tied_collection(n_docs, seed=n_docs)
    assert differences(qrels, run, "input") == 0
    assert differences(qrels, run, "trec") > 0


@pytest.mark.parametrize("n_docs", [16, 40])
def test_no_tie_convention_reproduces_ranx_on_longer_rankings(n_docs):
    """From 16 documents up, the quicksort's partitions scramble equal scores: neither
    trec_eval's order, nor doc id ascending, nor input order gives ranx's values."""
    qrels, run = tied_collection(n_docs, seed=n_docs)
    assert all(differences(qrels, run, ties) > 0 for ties in ("trec", "docid_asc", "input"))


LEVEL_NAMES = [
    "ndcg@10-l2",
    "ndcg-l3",
    "ndcg_burges@5-l2",
    "dcg@10-l2",
    "dcg_burges@3-l3",
    "precision@5-l2",
    "recall@10-l2",
    "map@10-l2",
    "map-l3",
    "mrr-l2",
    "mrr@3-l3",
    "hit_rate@5-l2",
    "hits@10-l2",
    "f1@5-l2",
    "r-precision-l2",
    "precision@5-l1",
    "rbp.90",
    "rbp.5",
    "rbp.95",
    "rbp@80",
]


@pytest.mark.parametrize("seed", range(4))
def test_relevance_levels_and_rbp_equal_ranx(seed):
    """ranx's ``-lL`` (labels below L dropped) and ``rbp.p`` (gain = the label), per query,
    on graded labels 0..3 and queries without relevant documents."""
    qrels, run = random_data(80 + seed)
    expected = per_query_ranx(qrels, run, LEVEL_NAMES)
    ev = mc.evaluate(qrels, run, LEVEL_NAMES, missing_queries="zero")
    for name in LEVEL_NAMES:
        canonical = mc.parse_measure(name).name
        ours = ev.per_query[canonical].reindex(list(qrels)).to_numpy()
        theirs = np.array([expected[name][q] for q in qrels], dtype=float)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15, err_msg=name)


def test_rbp_needs_ranx_persistence_and_level_one():
    assert translate("rbp") is None and translate("rbp.90-l2") is None
    with pytest.raises(mc.InputError):
        mc.parse_measure("rbp.90-l2")
