"""The fused run as a run (evaluated, written, read back); Condorcet's merge sort against the
table of every pair; the warning where ranx's Condorcet order is an accident of Python's set
order. (mc.fuse against ranx on every method and normalisation: test_ranx_matrix.py.)"""

from __future__ import annotations

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

# numba compiles ranx's functions (and its own argsort) once per process, tens of seconds
# in a fresh environment: the tests that call them run in one process of pytest -n 2
pytestmark = pytest.mark.xdist_group("numba")

import metrics_core as mc  # noqa: E402
from metrics_core.fusion import FusionOrderWarning  # noqa: E402
from metrics_core.fusion.condorcet import majority_positions  # noqa: E402

N_QUERIES = 12


def _random_run(rng, n_docs=25, keep=0.6, keep_query=0.85):
    run = {}
    for q in range(N_QUERIES):
        if rng.random() > keep_query:
            continue  # the run did not answer this query
        docs = [f"d{j}" for j in range(n_docs) if rng.random() < keep]
        run[f"q{q}"] = {d: float(rng.normal(loc=3.0)) for d in docs}
    return run


def _random_qrels(rng, n_docs=25):
    return {
        f"q{q}": {f"d{j}": int(rng.integers(0, 3)) for j in range(n_docs) if rng.random() < 0.4}
        | {"d0": 1}
        for q in range(N_QUERIES)
    }


def _ours(run):
    return {(q, d): s for q, d, s in zip(run.query_ids, run.doc_ids, run.scores, strict=True)}


def _runs(seed, n=3):
    rng = np.random.default_rng(seed)
    return [_random_run(rng) for _ in range(n)], _random_qrels(rng)


def test_fused_run_evaluates_and_reads_back(tmp_path):
    runs, qrels = _runs(4)
    fused = mc.fuse({f"r{i}": r for i, r in enumerate(runs)}, method="rrf")
    assert isinstance(fused, mc.Run)
    ev = mc.evaluate(qrels, fused, ["nDCG@10", "AP"])
    assert 0 < ev.aggregate["AP"] <= 1
    from metrics_core.fusion import write_run

    for ext in ("txt", "csv", "parquet"):
        path = tmp_path / f"fused.{ext}"
        write_run(fused, str(path))
        back = mc.read_run(str(path))
        assert _ours(back) == pytest.approx(_ours(fused))
        assert mc.evaluate(qrels, back, ["AP"]).aggregate == pytest.approx(
            ev.aggregate | {} if False else {"AP": ev.aggregate["AP"]}
        )


def test_condorcet_order_is_the_strict_majority_order_on_queries_of_any_size():
    """The batch merge sort of every query at once: each query's positions are a
    permutation, and where the weighted majority relation is a strict total order they are
    that order (a candidate beaten by none first), checked against the table of every pair."""
    rng = np.random.default_rng(5)
    strict_queries = 0
    for trial in range(60):
        nq, R = int(rng.integers(1, 4)), int(rng.integers(2, 5))
        counts = rng.integers(1, 35, size=nq)
        pq = np.repeat(np.arange(nq), counts)
        ranks = np.full((len(pq), R), np.inf)
        for q in range(nq):
            idx = np.flatnonzero(pq == q)
            for r in range(R):
                kept = idx[rng.random(len(idx)) < 0.8]
                ranks[rng.permutation(kept), r] = np.arange(len(kept))
        w = rng.random(R) if trial % 2 else np.ones(R)

        def before(x, y, ranks=ranks, w=w):
            votes = ((ranks[x] < ranks[y]) * w).sum(axis=1)
            return votes >= w.sum() - votes

        pos = majority_positions(before, pq, nq)
        for q in range(nq):
            idx = np.flatnonzero(pq == q)
            assert sorted(pos[idx].tolist()) == list(range(len(idx)))
            votes = ((ranks[idx][:, None, :] < ranks[idx][None, :, :]) * w).sum(axis=2)
            first = votes >= w.sum() - votes
            np.fill_diagonal(first, False)
            off = ~np.eye(len(idx), dtype=bool)
            wins = first.sum(axis=1)
            if np.all(first[off] != first.T[off]) and len(set(wins.tolist())) == len(idx):
                strict_queries += 1
                assert pos[idx].tolist() == (len(idx) - 1 - wins).tolist()
    assert strict_queries >= 10


def test_condorcet_names_the_queries_whose_ranx_order_depends_on_python_sets(monkeypatch):
    """ranx sorts the candidates by the majority vote starting from a Python set's order.
    Where the vote is a strict total order the answer is the same from any start; mc.fuse
    names every other query in one warning, and there some start changes ranx's answer."""
    runs, _ = _runs(6, n=2)  # two runs: the vote ties wherever they disagree
    runs.append(runs[0])  # a third run equal to the first: a majority on most pairs
    padded = [{f"q{q}": dict(r.get(f"q{q}", {})) for q in range(N_QUERIES)} for r in runs]
    with pytest.warns(FusionOrderWarning, match="condorcet") as caught:
        fused = mc.fuse({f"r{i}": r for i, r in enumerate(runs)}, method="condorcet")
    text = str(caught[0].message)
    named = {f"q{q}" for q in range(N_QUERIES) if f"q{q}," in text or f"q{q})" in text}
    import sys

    rc = sys.modules["ranx.fusion.condorcet"]  # the module (ranx.fusion.condorcet is the function)

    real = rc.get_candidates
    answers = []
    for seed in range(4):  # ranx from four different starting orders
        rng = np.random.default_rng(seed)

        def shuffled(runs_, rng=rng):
            from numba.typed import List as TypedList

            out = TypedList()
            for cands in real(runs_):
                items = list(cands)
                order = rng.permutation(len(items))
                out.append(TypedList([items[i] for i in order]) if items else cands)
            return out

        monkeypatch.setattr(rc, "get_candidates", shuffled)
        theirs = ranx.fuse(
            [ranx.Run(r, name=f"r{i}") for i, r in enumerate(padded)], method="condorcet"
        )
        answers.append({(q, d): s for q, docs in theirs.to_dict().items() for d, s in docs.items()})
    ours = {
        (q, d): float(s)
        for q, d, s in zip(fused.query_ids, fused.doc_ids, fused.scores, strict=True)
    }
    for (q, d), v in ours.items():
        if q not in named:
            assert all(a[(q, d)] == v for a in answers), (q, d)
    moved = {q for (q, d) in ours if q in named and len({a[(q, d)] for a in answers}) > 1}
    assert moved, "no named query's ranx answer depends on the set order"
