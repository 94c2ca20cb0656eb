"""measure_direction reads the registry's declaration (the name rule where it declares none);
per_query_deltas against a plain loop on random values with ties and gaps."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import metrics_core.ranking.registry as registry
from metrics_core.stats.comparison import leaderboard
from metrics_core.stats.deltas import per_query_deltas
from metrics_core.stats.direction import DIRECTIONS, measure_direction


@pytest.mark.parametrize(
    "name",
    [
        *registry.COMMON_MEASURES,
        "P(rel=2)@5",
        "nDCG(gain=exp)@10",
        "NumRet",
        "FirstRel(rel=2)",
        "MRR",
        "Judged@10",
    ],
)
def test_direction_is_the_declared_one(name):
    spec = registry.parse_measure(name)
    assert spec.better in DIRECTIONS
    assert measure_direction(name) == DIRECTIONS[spec.better] == spec.direction


def test_known_directions_and_an_unknown_column():
    assert [measure_direction(m) for m in ("AP", "FirstRel", "NumRet", "my_score")] == [1, -1, 0, 1]


def test_a_declared_direction_wins_over_the_name(monkeypatch):
    declared = {"NumRet": "higher", "AP": "lower", "RR": None}
    real = registry.parse_measure

    def parse(name):
        spec = real(name)
        if spec.family in declared:
            return SimpleNamespace(family=spec.family, better=declared[spec.family])
        return spec

    monkeypatch.setattr(registry, "parse_measure", parse)
    assert [measure_direction(m) for m in ("NumRet", "AP@100", "RR")] == [1, -1, 0]


def test_leaderboard_best_follows_the_direction():
    idx = pd.Index(["q1", "q2", "q3"], name="query_id")
    a = SimpleNamespace(
        run_name="a",
        per_query=pd.DataFrame(
            {"AP": [0.2, 0.4, 0.6], "FirstRel": [1.0, 2.0, 1.0], "NumRet": [5.0, 5.0, 5.0]},
            index=idx,
        ),
    )
    b = SimpleNamespace(
        run_name="b",
        per_query=pd.DataFrame(
            {"AP": [0.3, 0.5, 0.7], "FirstRel": [3.0, 2.0, 4.0], "NumRet": [9.0, 9.0, 9.0]},
            index=idx,
        ),
    )
    board = leaderboard([a, b], "a", n_resamples=50, n_permutations=50)
    best = {(r.run, r.measure): r.best for r in board.itertuples()}
    assert best[("b", "AP")] and not best[("a", "AP")]
    assert best[("a", "FirstRel")] and not best[("b", "FirstRel")]  # a rank: lower is better
    assert not best[("a", "NumRet")] and not best[("b", "NumRet")]  # a count: no best


def test_per_query_deltas_against_a_loop():
    rng = np.random.default_rng(4)
    ids = [f"q{i}" for i in range(200)]
    base = pd.Series(rng.integers(0, 5, 200) / 4, index=ids)  # many equal values: ties
    run = pd.Series(rng.integers(0, 5, 200) / 4, index=ids)
    base.iloc[rng.choice(200, 20, replace=False)] = np.nan
    run = run.drop(index=run.index[rng.choice(200, 15, replace=False)])
    out = per_query_deltas(base.to_frame("AP"), run.to_frame("AP"), "AP")
    expected = sorted(
        (run[q] - base[q], q) for q in ids if q in run.index and not np.isnan(base[q])
    )
    assert list(zip(out.to_numpy(), out.index, strict=True)) == expected
    assert out.name == "delta"
    pd.testing.assert_series_equal(per_query_deltas(base, run), out)


def test_per_query_deltas_of_the_compare_page():
    idx = pd.Index(["q1", "q2", "q3", "q4"], name="query_id")
    base = pd.DataFrame({"AP": [0.5, 0.2, 0.9, 0.4]}, index=idx)
    run = pd.DataFrame({"AP": [0.7, 0.2, 0.1, 0.5]}, index=idx)
    deltas = per_query_deltas(base, run, "AP")
    assert list(deltas.index) == ["q3", "q2", "q4", "q1"]
    assert deltas.tolist() == pytest.approx([-0.8, 0.0, 0.1, 0.2])
