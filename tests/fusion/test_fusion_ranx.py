"""mc.fuse against ranx 0.3 (the reference): every method and normalisation on random runs
with missing documents and missing queries, scores drawn from a continuous distribution (no
ties decide an order). The fused scores must be equal, document for document."""

from __future__ import annotations

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

import metrics_core as mc  # noqa: E402
from metrics_core.fusion import METHODS, NORMS, fuse, train  # noqa: E402

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


def _padded(run):
    """ranx needs every run to hold the same queries: an unanswered query is an empty list."""
    return {f"q{q}": dict(run.get(f"q{q}", {})) for q in range(N_QUERIES)}


def _ranx_run(run, name):
    r = ranx.Run(_padded(run), name=name)
    return r


def _ranx_normalised(runs, norm):
    """ranx's normalisation of each run. Its parallel zero-mean unit-variance loses a query's
    documents when another query of the run is empty, so each run is normalised without its
    unanswered queries, which are added back empty afterwards."""
    if norm is None:
        return [_ranx_run(r, f"r{i}") for i, r in enumerate(runs)]
    if norm == "borda":
        return ranx.normalization.borda_norm([_ranx_run(r, f"r{i}") for i, r in enumerate(runs)])
    out = []
    for i, r in enumerate(runs):
        answered = ranx.Run({q: docs for q, docs in r.items() if docs}, name=f"r{i}")
        normed = ranx.meta.normalize(answered, norm=norm)
        out.append(_ranx_run(normed.to_dict(), f"r{i}"))
    return out


def _ours(run):
    return {(q, d): s for q, d, s in zip(run.query_ids, run.doc_ids, run.scores, strict=True)}


def _theirs(run):
    return {(q, d): s for q, docs in run.to_dict().items() for d, s in docs.items()}


def _assert_same(ours, theirs, what):
    a, b = _ours(ours), _theirs(theirs)
    assert set(a) == set(b), f"{what}: different (query, document) pairs"
    keys = sorted(a)
    np.testing.assert_allclose(
        [a[k] for k in keys], [b[k] for k in keys], rtol=1e-9, atol=1e-12, err_msg=what
    )


def _runs(seed, n=3):
    rng = np.random.default_rng(seed)
    return [_random_run(rng) for _ in range(n)], _random_qrels(rng)


PARAMS = {
    "combgmnz": {"gamma": 0.7},
    "rbc": {"phi": 0.8},
    "rrf": {"k": 20},
    "logn_isr": {"sigma": 0.3},
    "slidefuse": {"w": 2},
}
RANX_NAMES = {
    "combsum": "sum",
    "combmnz": "mnz",
    "combanz": "anz",
    "combmax": "max",
    "combmin": "min",
    "combmed": "med",
    "combgmnz": "gmnz",
}
UNSUPERVISED = [m for m, s in METHODS.items() if not s.supervised and "condorcet" not in m]
SUPERVISED = [m for m, s in METHODS.items() if s.supervised]


CASES = [(m, n) for m in UNSUPERVISED for n in ("min-max", None)] + [
    (m, n)
    for m in ("combsum", "combmnz", "wsum", "rrf")
    for n in NORMS
    if n not in ("none", "min-max")
]


@pytest.mark.parametrize(("method", "norm"), CASES)
def test_unsupervised_methods_give_ranx_scores(method, norm):
    runs, _ = _runs(1)
    if norm == "borda" and METHODS[method].family == "rank":
        pytest.skip("ranx ranks Borda-normalised candidates in Python set order")
    weights = [0.5, 0.3, 0.2] if METHODS[method].weighted else None
    params = dict(PARAMS.get(method, {}))
    ours = fuse(
        {f"r{i}": r for i, r in enumerate(runs)},
        method=method,
        norm=norm,
        weights=weights,
        params=params,
    )
    ranx_params = dict(params)
    if weights is not None:
        ranx_params["weights"] = weights
    theirs = ranx.fuse(
        _ranx_normalised(runs, norm),
        norm=None,
        method=RANX_NAMES.get(method, method),
        params=ranx_params,
    )
    _assert_same(ours, theirs, f"{method} / {norm}")


@pytest.mark.parametrize("method", SUPERVISED)
def test_supervised_methods_train_and_fuse_as_ranx(method):
    runs, qrels = _runs(2)
    ranx_runs = [_ranx_run(r, f"r{i}") for i, r in enumerate(runs)]
    ranx_qrels = ranx.Qrels({q: {d: v for d, v in docs.items()} for q, docs in qrels.items()})
    norm_runs = [ranx.normalization.min_max_norm(r) for r in ranx_runs]
    trainer = getattr(ranx.fusion, f"{method}_train")
    fuser = getattr(ranx.fusion, method)
    extra = {"w": 2} if method == "slidefuse" else {}
    if method == "probfuse":
        estimate = trainer(ranx_qrels, norm_runs, 4)
    else:
        estimate = trainer(ranx_qrels, norm_runs)
    theirs = fuser(norm_runs, estimate, **extra)
    named = {f"r{i}": r for i, r in enumerate(runs)}
    ours_params = train(qrels, named, method, "min-max", n_segments=4)
    key = next(iter(ours_params))
    for mine, ref in zip(ours_params[key], estimate, strict=True):
        np.testing.assert_allclose(
            np.ravel(mine), np.ravel(ref)[: np.size(mine)], rtol=1e-9, atol=1e-12
        )
    ours = fuse(named, method=method, norm="min-max", params={**ours_params, **extra})
    _assert_same(ours, theirs, method)
    # the same estimates handed over as ranx computed them give the same run
    given = fuse(named, method=method, norm="min-max", params={key: estimate, **extra})
    _assert_same(given, theirs, f"{method}, ranx's estimates")


def _consistent_queries(runs, weights):
    """Queries whose majority relation is a strict total order (no tie, no cycle): there
    ranx's comparison sort has one answer, and it must be ours."""
    good = []
    for q in range(N_QUERIES):
        lists = [list(sorted(r.get(f"q{q}", {}).items(), key=lambda kv: -kv[1])) for r in runs]
        ranks = [{d: i for i, (d, _) in enumerate(lst)} for lst in lists]
        cands = sorted({d for lst in lists for d, _ in lst})
        wins = []
        ok = True
        for x in cands:
            n = 0
            for y in cands:
                if x == y:
                    continue
                vx = sum(
                    w
                    for w, rk in zip(weights, ranks, strict=True)
                    if rk.get(x, 1e9) < rk.get(y, 1e9)
                )
                vy = sum(
                    w
                    for w, rk in zip(weights, ranks, strict=True)
                    if rk.get(y, 1e9) < rk.get(x, 1e9)
                )
                if (vx >= sum(weights) - vx) == (vy >= sum(weights) - vy):
                    ok = False
                n += vx >= sum(weights) - vx
            wins.append(n)
        if ok and len(set(wins)) == len(wins):
            good.append(f"q{q}")
    return good


@pytest.mark.parametrize("method", ["condorcet", "w_condorcet"])
def test_condorcet_gives_ranx_order_where_the_majority_order_is_strict(method):
    rng = np.random.default_rng(3)
    base = {f"q{q}": {f"d{j}": float(rng.normal()) for j in range(8)} for q in range(N_QUERIES)}
    runs = []
    for _ in range(3):  # three noisy copies of one order, every document in every run
        runs.append(
            {
                q: {d: s + float(rng.normal(scale=0.4)) for d, s in docs.items()}
                for q, docs in base.items()
            }
        )
    weights = [0.45, 0.35, 0.2] if method == "w_condorcet" else [1.0, 1.0, 1.0]
    good = _consistent_queries(runs, weights)
    assert len(good) >= N_QUERIES // 2
    ours = fuse(
        {f"r{i}": r for i, r in enumerate(runs)},
        method=method,
        weights=weights if method == "w_condorcet" else None,
    )
    params = {"weights": weights} if method == "w_condorcet" else {}
    theirs = ranx.fuse(
        [_ranx_run(r, f"r{i}") for i, r in enumerate(runs)], method=method, params=params
    )
    a, b = _ours(ours), _theirs(theirs)
    for (q, d), v in b.items():
        if q in good:
            assert a[(q, d)] == pytest.approx(v), (q, d)


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
    from metrics_core.fusion.core import _condorcet

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
        pos = _condorcet(ranks, pq, nq, w)
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
