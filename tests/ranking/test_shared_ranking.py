"""One ranking, many measure sets: evaluate_lists on ranked lists built for more cutoffs
than the measures use gives evaluate's numbers and diagnostics (the app ranks a run once for
the Data page's diagnostics and the Overview)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.ranking.engine import build_ranked_lists
from metrics_core.ranking.ranked import evaluate_lists
from metrics_core.ranking.registry import parse_measures, rank_cutoffs


def _data(ties: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i}" for i in range(30)], 15)
    d = np.tile([f"d{j}" for j in range(15)], 30)
    s = rng.integers(0, 5, q.size) if ties else rng.permutation(q.size)
    run = mc.read_run(
        ("".join(f"{a} Q0 {b} 0 {c} r\n" for a, b, c in zip(q, d, s, strict=True))).encode()
    )
    rel = rng.choice(3, q.size, p=[0.6, 0.25, 0.15])
    qrels = mc.read_qrels(
        (
            "".join(f"{a} 0 {b} {c}\n" for a, b, c in zip(q, d, rel, strict=True)) + "q99 0 x 1\n"
        ).encode()
    )  # a judged query the run misses
    return qrels, run


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("missing", ["skip", "zero"])
def test_evaluate_lists_on_a_shared_ranking_equals_evaluate(ties, missing):
    qrels, run = _data(ties)
    conv = mc.Conventions(missing_queries=missing)
    ranked = build_ranked_lists(qrels, run, conv, (1, 2, 3, 5, 10, 20, 100))
    for measures in (
        ["Judged@3", "P@3", "NumRet"],
        ["RR", "nDCG@10", "P@5", "AP", "R@100"],
        ["AP"],
    ):
        want = mc.evaluate(qrels, run, measures, conventions=conv)
        got = evaluate_lists(ranked, parse_measures(measures), conv, run.name)
        pd.testing.assert_frame_equal(got.per_query, want.per_query)
        assert got.aggregate == want.aggregate
        assert got.diagnostics == want.diagnostics
        assert (
            list(got.diagnostics["ties_straddling"]) == [str(k) for k in rank_cutoffs(measures)]
            or not ties
        )


def test_evaluate_lists_refuses_a_cutoff_it_was_not_built_for():
    qrels, run = _data(True)
    ranked = build_ranked_lists(qrels, run, mc.Conventions(), (5,))
    with pytest.raises(ValueError):
        evaluate_lists(ranked, parse_measures(["P@10"]), mc.Conventions(), run.name)
