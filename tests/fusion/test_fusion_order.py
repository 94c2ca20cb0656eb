"""The fused run's rows and order: ranx's ranks of the inputs (numba's quicksort of the rows'
order) and trec_eval's tie rule on the output, input in any row order, the exact path when
fingerprints collide, duplicates refused, the same run bit for bit in any number of shards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import InputError
from metrics_core.fusion import fuse

# numba compiles ranx's functions (and its own argsort) once per process, tens of seconds
# in a fresh environment: the tests that call them run in one process of pytest -n 2
pytestmark = pytest.mark.xdist_group("numba")


def _tied_runs(seed, n_queries=15, n_docs=40):
    """Runs with many equal scores (a few distinct values), ids of different lengths,
    rows shuffled (not query by query, not best first)."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(3):
        rows = [
            (f"q{q}", f"doc{j}" + "x" * int(rng.integers(0, 12)) if j % 7 == 0 else f"d{j}", s)
            for q in range(n_queries)
            if rng.random() < 0.9
            for j in range(n_docs)
            if rng.random() < 0.6
            for s in [float(rng.integers(0, 4))]
        ]
        # one spelling per document: drop the rows whose id was drawn twice for a query
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
        frame = frame.drop_duplicates(["query_id", "doc_id"])
        runs.append(frame.sample(frac=1.0, random_state=int(rng.integers(1 << 30))))
    return runs


def _numba_argsort():
    numba = pytest.importorskip("numba")

    @numba.njit
    def argsort(a):
        return np.argsort(a)

    return argsort


def _reference(frames, method, k=60):
    """RRF / CombSUM with min-max, written the plain way: each run's documents ranked as ranx
    ranks them (numba's quicksort of the negated scores in the rows' order, the oracle
    itself), then the fused list sorted by score descending, document id descending
    (trec_eval's tie rule)."""
    argsort = _numba_argsort()
    fused: dict = {}
    for frame in frames:
        for q, g in frame.groupby("query_id", sort=False):
            docs, scores = g["doc_id"].tolist(), g["score"].to_numpy(dtype=np.float64)
            items = [(docs[i], float(scores[i])) for i in argsort(-scores)]
            hi, lo = items[0][1], items[-1][1]
            for r, (d, s) in enumerate(items):
                v = 1.0 / (k + r + 1) if method == "rrf" else (s - lo) / max(hi - lo, 1e-9)
                fused[(q, d)] = fused.get((q, d), 0.0) + v
    out = []
    for q in sorted({q for q, _ in fused}):
        group = [(d, v) for (qq, d), v in fused.items() if qq == q]
        group.sort(key=lambda t: (t[1], t[0]), reverse=True)  # score, then id, descending
        out += [(q, d, v) for d, v in group]
    return out


@pytest.mark.parametrize("method", ["rrf", "combsum"])
def test_fused_order_follows_the_tie_rule_on_tied_shuffled_runs(method):
    frames = _tied_runs(7)
    runs = {f"r{i}": mc.read_run(f.copy(), name=f"r{i}") for i, f in enumerate(frames)}
    ours = fuse(runs, method=method, norm="min-max")
    got = list(zip(ours.query_ids, ours.doc_ids, ours.scores, strict=True))
    want = _reference(frames, method)
    assert [(q, d) for q, d, _ in got] == [(q, d) for q, d, _ in want]
    np.testing.assert_allclose([s for *_, s in got], [s for *_, s in want], rtol=1e-12)


def test_colliding_fingerprints_take_the_exact_path(monkeypatch):
    """Every document given one fingerprint: the string check finds the collision and the
    candidates are numbered from exact codes, with the same fused run."""
    import metrics_core.fusion.prepare as prepare

    frames = _tied_runs(8)
    runs = {f"r{i}": mc.read_run(f.copy(), name=f"r{i}") for i, f in enumerate(frames)}
    normal = fuse(runs, method="rrf")

    def one_fingerprint(arr, out=None):
        out = np.empty(len(arr), np.uint64) if out is None else out
        out[:] = 0
        return out

    monkeypatch.setattr(prepare, "hash_strings", one_fingerprint)
    exact = fuse(runs, method="rrf")
    assert list(exact.query_ids) == list(normal.query_ids)
    assert list(exact.doc_ids) == list(normal.doc_ids)
    assert exact.scores.tolist() == normal.scores.tolist()


def test_a_document_twice_in_one_run_is_refused_with_its_names():
    a = {"q1": {"d1": 2.0, "d2": 1.0}}
    dup = mc.Run(["q1", "q1", "q1"], ["d1", "d2", "d1"], [3.0, 2.0, 1.0], name="dup")
    with pytest.raises(InputError) as err:
        fuse({"a": a, "dup": dup}, method="rrf")
    text = str(err.value)
    assert "d1" in text and "q1" in text and "dup" in text


def test_keys_too_wide_to_pack_take_the_plain_sorts(monkeypatch):
    """Query codes, document codes and positions that would not fit in 64 bits (every
    field given 30 bits here): candidates numbered by a lexsort, the fused run ordered by
    two sorts, with the same fused run."""
    import metrics_core.fusion.order as order

    frames = _tied_runs(9)
    runs = {f"r{i}": mc.read_run(f.copy(), name=f"r{i}") for i, f in enumerate(frames)}
    normal = fuse(runs, method="rrf")
    monkeypatch.setattr(order, "_bits", lambda n: 30)
    wide = fuse(runs, method="rrf")
    assert list(wide.query_ids) == list(normal.query_ids)
    assert list(wide.doc_ids) == list(normal.doc_ids)
    assert wide.scores.tolist() == normal.scores.tolist()


def _in_shards(monkeypatch, cores=3):
    """Every fusion cut into shards of whole queries (one per core, ``cores`` cores), however
    few the rows, and run in that many threads."""
    import metrics_core.fusion.prepare as prepare
    import metrics_core.threads as threads

    monkeypatch.setattr(prepare, "SHARD_ROWS", 1)
    monkeypatch.setattr(threads, "usable_cores", lambda: cores)


def _rows(run):
    return (
        list(run.query_ids),
        list(run.doc_ids),
        np.asarray(run.scores, dtype=np.float64).tobytes(),
    )


SHARD_PARAMS = {
    "combgmnz": {"gamma": 1.5},
    "rbc": {"phi": 0.8},
    "mapfuse": {"map_scores": [0.3, 0.2, 0.25]},
    "posfuse": {"probs": [np.linspace(0.9, 0.1, 30)] * 3},
    "probfuse": {"probs": [np.linspace(0.5, 0.1, 5)] * 3},
    "segfuse": {"probs": [np.linspace(0.5, 0.1, 8)] * 3},
    "slidefuse": {"probs": [np.linspace(0.9, 0.1, 30)] * 3, "w": 2},
    "bayesfuse": {"log_odds": [np.linspace(1.0, -3.0, 30)] * 3},
}


@pytest.mark.parametrize("cores", [2, 3])
def test_shards_in_threads_give_the_run_of_one_piece(monkeypatch, cores):
    """The queries are independent: the runs cut into shards of whole queries, fused in
    threads and joined give, bit for bit, the run fused in one piece, for every method and
    normalisation (tied, shuffled runs with missing documents and queries)."""
    from metrics_core.fusion import METHODS, NORMS
    from metrics_core.fusion.catalog import resolve_params
    from metrics_core.fusion.core import fuse_prepared
    from metrics_core.fusion.prepare import as_runs, prepare_shards

    _in_shards(monkeypatch, cores)
    runs = as_runs(
        {f"r{i}": mc.read_run(f.copy(), name=f"r{i}") for i, f in enumerate(_tied_runs(11))}
    )
    whole, shards = prepare_shards(runs, 1), prepare_shards(runs)
    assert len(whole) == 1 and len(shards) == cores
    assert [s.query_base for s in shards] == sorted({s.query_base for s in shards})
    assert sum(s.n_candidates for s in shards) == whole[0].n_candidates
    for method in METHODS:
        for norm in NORMS if method in ("rrf", "combsum", "wsum", "bordafuse") else ["min-max"]:
            p = resolve_params(method, SHARD_PARAMS.get(method), None, len(runs))
            one = fuse_prepared(whole, method, norm, p)
            cut = fuse_prepared(shards, method, norm, p)
            assert _rows(cut) == _rows(one), (method, norm)


def test_fuse_in_shards_follows_the_tie_rule_and_refuses_duplicates(monkeypatch):
    _in_shards(monkeypatch)
    frames = _tied_runs(12)
    runs = {f"r{i}": mc.read_run(f.copy(), name=f"r{i}") for i, f in enumerate(frames)}
    ours = fuse(runs, method="rrf", norm="min-max")
    got = [(q, d) for q, d in zip(ours.query_ids, ours.doc_ids, strict=True)]
    assert got == [(q, d) for q, d, _ in _reference(frames, "rrf")]
    a = {"q1": {"d1": 2.0}, "q2": {"d1": 1.0}, "q3": {"d1": 1.0}}
    dup = mc.Run(["q1", "q3", "q3"], ["d1", "d2", "d2"], [3.0, 2.0, 1.0], name="dup")
    with pytest.raises(InputError) as err:
        fuse({"a": a, "dup": dup}, method="rrf")
    assert "d2" in str(err.value) and "q3" in str(err.value)


def test_colliding_fingerprints_in_shards_take_the_exact_path(monkeypatch):
    import metrics_core.fusion.prepare as prepare

    frames = _tied_runs(13)
    runs = {f"r{i}": mc.read_run(f.copy(), name=f"r{i}") for i, f in enumerate(frames)}
    normal = fuse(runs, method="rrf")
    _in_shards(monkeypatch)

    def one_fingerprint(arr, out=None):
        out = np.empty(len(arr), np.uint64) if out is None else out
        out[:] = 0
        return out

    monkeypatch.setattr(prepare, "hash_strings", one_fingerprint)
    assert _rows(fuse(runs, method="rrf")) == _rows(normal)


@pytest.mark.parametrize("piece", [1, 5, 37])
def test_pieces_of_a_few_rows_give_the_run_of_one_piece(monkeypatch, piece):
    """The candidates are numbered and the fused run ordered in pieces of whole queries:
    pieces of a few rows (every query a piece of its own, or several) give, bit for bit,
    the run of one piece, in trec_eval's and ranx's output orders, with 1 and 3 shards."""
    import metrics_core.fusion.order as order
    import metrics_core.fusion.prepare as prepare
    from metrics_core.fusion.catalog import resolve_params
    from metrics_core.fusion.core import fuse_prepared
    from metrics_core.fusion.prepare import as_runs, prepare_shards

    runs = as_runs(
        {f"r{i}": mc.read_run(f.copy(), name=f"r{i}") for i, f in enumerate(_tied_runs(14))}
    )
    cases = [("rrf", "min-max"), ("wsum", "zmuv"), ("combmnz", "rank"), ("condorcet", "min-max")]

    def fused(shards):
        return [
            _rows(fuse_prepared(shards, m, norm, resolve_params(m, None, None, 3), output=out))
            for m, norm in cases
            for out in ("trec_eval", "ranx")
        ]

    one = fused(prepare_shards(runs, 1))
    monkeypatch.setattr(order, "PIECE_ROWS", piece)
    monkeypatch.setattr(order, "SORT_CHUNK", piece)
    monkeypatch.setattr(prepare, "SHARD_ROWS", 1)
    for n in (1, 3):
        assert fused(prepare_shards(runs, n)) == one, n
