"""A session holds its query ids once: the qrels' ids, each run's ranking and each evaluation's
per-query table refer to the same ``str`` objects, and looking a query up in an evaluation's
table makes no new ones (a server with many visitors held every id several times over, in
small objects that kept the interpreter's memory arenas after the visitors left)."""

from __future__ import annotations

import gc
import sys

import numpy as np

import metrics_core as mc
from metrics_core.data import shared_ids


def _ids(n: int) -> list[str]:
    # made at run time: equal strings, distinct objects (what a parser hands over)
    return ["".join(("Q", str(i))) for i in range(n)]


def _data(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    qrels = {q: {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for q in _ids(n)}
    run = {q: {f"d{j}": float(rng.integers(0, 4)) for j in range(10)} for q in _ids(n)}
    return qrels, run


def test_shared_ids_gives_one_object_for_equal_strings_and_keeps_the_rest():
    a, b = _ids(3), _ids(3)
    assert a == b and a[0] is not b[0]
    sa, sb = shared_ids(a), shared_ids(b)
    assert sa == a and all(x is y for x, y in zip(sa, sb, strict=True))
    assert shared_ids([1, None, "x"]) == [1, None, "x"]


def test_two_runs_evaluations_share_their_query_id_objects():
    qrels, run_a = _data(1)
    _, run_b = _data(2)
    ev_a = mc.evaluate(qrels, run_a, ["AP", "nDCG@10"])
    ev_b = mc.evaluate(qrels, mc.read_run(run_b), ["AP", "nDCG@10"])
    a, b = list(ev_a.per_query.index), list(ev_b.per_query.index)
    assert a == b == sorted(_ids(300))
    assert all(x is y for x, y in zip(a, b, strict=True))
    ranked = dict(zip(ev_a.ranking.query_ids, ev_a.ranking.query_ids, strict=True))
    assert all(ranked[q] is q for q in a)  # the table's ids are the ranking's own


def test_looking_up_queries_in_a_per_query_table_makes_no_new_strings():
    qrels, run = _data(3)
    table = mc.evaluate(qrels, run, ["AP"]).per_query
    wanted = _ids(300)[::-1]
    gc.collect()
    before = sys.getallocatedblocks()
    positions = table.index.get_indexer(wanted)  # the index's hash table is built here
    grown = sys.getallocatedblocks() - before
    assert (positions >= 0).all() and table.index[positions].tolist() == wanted
    # an index of Arrow-backed strings made a str object per id for its hash table (300 here)
    assert grown < len(wanted) // 3, grown
