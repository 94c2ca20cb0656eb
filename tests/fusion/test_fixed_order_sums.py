"""Every fused score in one fixed order (ranx's: run after run), so the fused run is the
same bit for bit on any processor, core count and number of shards.

Inputs are chosen so that the order of a sum changes its result: six runs whose scores
span sixteen orders of magnitude, fused without normalisation. A summation that blocks or
pairs the runs (as BLAS kernels and numpy's pairwise sum do, differently on different
processors) gives other bits on most candidates; the test computes such a blocked sum
beside the run-after-run one and checks both that they differ here (the inputs can tell)
and that mc.fuse gives the run-after-run one (a blocked implementation would fail)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.fusion.catalog import resolve_params
from metrics_core.fusion.core import fuse_prepared
from metrics_core.fusion.prepare import as_runs, prepare_shards

N_RUNS = 6
WEIGHTS = [0.3, 0.1, 0.7, 0.2, 0.9, 0.15]


def _runs(seed=0, n_queries=40, n_docs=30):
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(N_RUNS):
        rows = []
        for q in range(n_queries):
            for j in range(n_docs):
                if rng.random() < 0.8:
                    scale = 10.0 ** rng.integers(-8, 9)
                    rows.append((f"q{q}", f"d{j}", float(rng.normal() * scale)))
        runs[f"r{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs


def _values(frames):
    """(query, doc) -> one value per run (None where it did not retrieve the document)."""
    out: dict = {}
    for i, f in enumerate(frames.values()):
        for q, d, s in zip(f["query_id"], f["doc_id"], f["score"], strict=True):
            out.setdefault((q, d), [None] * N_RUNS)[i] = s
    return out


def _sequential(vals, weights=None):
    acc = 0.0
    for i, v in enumerate(vals):
        x = 0.0 if v is None else v
        acc += x if weights is None else weights[i] * x
    return acc


def _blocked(vals, weights=None):
    """The runs summed in pairs, then the pairs' sums: one of the orders a blocked kernel
    uses."""
    xs = [
        (0.0 if v is None else v) * (1.0 if weights is None else weights[i])
        for i, v in enumerate(vals)
    ]
    while len(xs) > 1:
        xs = [xs[i] + xs[i + 1] if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
    return xs[0]


@pytest.mark.parametrize("method", ["combsum", "wsum"])
def test_scores_are_added_run_after_run_and_a_blocked_order_would_differ(method):
    frames = _runs()
    weights = WEIGHTS if method == "wsum" else None
    fused = mc.fuse(
        {n: mc.read_run(f, name=n) for n, f in frames.items()},
        method=method,
        norm=None,
        weights=weights,
    )
    got = {(q, d): s for q, d, s in zip(fused.query_ids, fused.doc_ids, fused.scores, strict=True)}
    values = _values(frames)
    sequential = {k: _sequential(v, weights) for k, v in values.items()}
    blocked = {k: _blocked(v, weights) for k, v in values.items()}
    differ = sum(sequential[k] != blocked[k] for k in values)
    assert differ > len(values) // 10, "inputs too tame: a blocked order gives the same bits"
    wrong = [k for k in values if got[k] != sequential[k]]
    assert not wrong, f"{len(wrong)} fused scores not summed run after run, e.g. {wrong[:3]}"


def _bits(run):
    return (
        list(run.query_ids),
        list(run.doc_ids),
        np.asarray(run.scores, dtype=np.float64).tobytes(),
    )


@pytest.mark.parametrize(
    ("method", "norm"),
    [
        ("combsum", "none"),
        ("wsum", "none"),
        ("wsum", "min-max"),
        ("combmnz", "sum"),
        ("mixed", "zmuv"),
        ("w_bordafuse", "none"),
        ("bayesfuse", "none"),
        ("wmnz", "max"),
    ],
)
def test_one_two_and_three_shards_give_the_same_run_bit_for_bit(monkeypatch, method, norm):
    import metrics_core.fusion.prepare as prepare

    monkeypatch.setattr(prepare, "SHARD_ROWS", 1)  # shards however few the rows
    runs = as_runs({n: mc.read_run(f, name=n) for n, f in _runs(3).items()})
    params = {"log_odds": [np.linspace(1.0, -3.0, 30)] * N_RUNS} if method == "bayesfuse" else None
    p = resolve_params(
        method,
        params,
        WEIGHTS if method in ("wsum", "mixed", "w_bordafuse", "wmnz") else None,
        N_RUNS,
    )
    results = []
    for n in (1, 2, 3):
        shards = prepare_shards(runs, n)
        assert len(shards) == n
        results.append(_bits(fuse_prepared(shards, method, norm, p)))
    assert results[0] == results[1] == results[2]
