"""Dynamic K against a per-query brute-force reference of seed 002 §3."""

import math

import numpy as np
import pandas as pd
import pytest

from metrics_core import dynamic_k as dk
from metrics_core.errors import InputError


def _reference(df, tau, k_min, hard_cap, ratio, conflict="k_max"):
    """Plain per-query loop, written from the seed's text."""
    recs, precs, ks = [], [], []
    for _, g in df.groupby("unit", sort=True):
        g = g.sort_values("probability", ascending=False, kind="stable")
        n = len(g)
        above = int((g["probability"] >= tau).sum())
        k_max = min(hard_cap, math.floor(round(n * ratio, 9)))
        if conflict == "k_max":
            k = min(max(above, k_min), k_max, n)
        else:
            k = min(max(min(above, k_max), k_min), n)
        sel = g.iloc[:k]
        gold = int(g["is_gold"].sum())
        hits = int(sel["is_gold"].sum())
        recs.append(hits / gold if gold else (1.0 if k == 0 else 0.0))
        precs.append(hits / k if k else (1.0 if gold == 0 else 0.0))
        ks.append(k)
    return float(np.mean(recs)), float(np.mean(precs)), float(np.mean(ks))


def _random_candidates(seed):
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(int(rng.integers(1, 40))):
        n = int(rng.integers(1, 30))
        gold = (rng.random(n) < rng.choice([0.0, 0.1, 0.4])).astype(int)
        prob = np.round(rng.random(n), 1)  # many ties
        rows += [(f"q{q}", f"c{j}", prob[j], gold[j], "AB"[q % 2]) for j in range(n)]
    df = pd.DataFrame(rows, columns=["query", "candidate", "probability", "is_gold", "criterion"])
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)  # shuffled rows


@pytest.mark.parametrize("seed", range(25))
def test_against_reference(seed):
    df = _random_candidates(seed)
    df["unit"] = df["query"]
    t = dk.prepare(df["query"], df["probability"], df["is_gold"])
    rng = np.random.default_rng(seed)
    for _ in range(4):
        tau = float(rng.choice([0.0, 0.3, 0.5, 0.9, 1.0]))
        k_min, cap = int(rng.integers(0, 4)), int(rng.integers(0, 12))
        ratio = float(rng.choice([0.25, 0.3, 0.5, 1.0]))
        for conflict in ("k_max", "k_min"):
            r = dk.dynamic_k_scores(t, tau, k_min, cap, ratio, conflict=conflict)
            ref = _reference(df, tau, k_min, cap, ratio, conflict)
            assert (r["recall"], r["precision"], r["avg_k"]) == pytest.approx(ref, rel=1e-12)


def test_hand_example_and_empty_set_rules():
    # q1: 2 gold; probs .9(g) .8 .7(g) .2 .1 .05 -> n=6, k_max=min(10, 3)=3, above .5: 3 -> K=3
    # q2: no gold, 4 candidates all below tau -> K = k_min = 2 -> recall 0, precision 0
    # q3: no gold, 1 candidate -> k_max = floor(0.5) = 0 -> K=0 -> recall 1, precision 1
    # q4: 2 candidates, gold, k_max = 1 < k_min: K = 1 (k_max wins)
    df = pd.DataFrame(
        {
            "query": ["q1"] * 6 + ["q2"] * 4 + ["q3"] + ["q4"] * 2,
            "probability": [0.9, 0.8, 0.7, 0.2, 0.1, 0.05, 0.1, 0.2, 0.3, 0.4, 0.9, 0.3, 0.6],
            "is_gold": [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
        }
    )
    t = dk.prepare(df["query"], df["probability"], df["is_gold"])
    assert dk.select_k(t).tolist() == [3, 2, 0, 1]
    r = dk.dynamic_k_scores(t, per_query=True)
    pq = r["per_query"].set_index("query")
    assert pq["recall"].tolist() == [1.0, 0.0, 1.0, 0.5]
    assert pq["precision"].tolist() == [2 / 3, 0.0, 1.0, 1.0]
    assert r["recall"] == pytest.approx(2.5 / 4)
    assert r["avg_k"] == 1.5
    assert r["micro_recall"] == 3 / 4 and r["micro_precision"] == 3 / 6
    # k_min wins: q3 gets its 1 candidate, q4 both
    assert dk.select_k(t, conflict="k_min").tolist() == [3, 2, 1, 2]


def test_ratio_floor_is_exact():
    # 100 candidates * 0.29 = 28.999999999999996 in floats; the cap must be 29
    t = dk.prepare(["q"] * 100, np.linspace(1, 0.5, 100), [0] * 100)
    assert dk.select_k(t, tau=0.0, k_min=0, hard_cap=1000, k_max_ratio=0.29).tolist() == [29]


def test_curve_matches_pointwise():
    df = _random_candidates(3)
    t = dk.prepare(df["query"], df["probability"], df["is_gold"])
    curve = dk.dynamic_k_curve(t, [0.0, 0.25, 0.5, 1.0])
    for row in curve.itertuples():
        r = dk.dynamic_k_scores(t, row.tau)
        assert (row.recall, row.precision, row.avg_k) == (r["recall"], r["precision"], r["avg_k"])
    assert curve["avg_k"].is_monotonic_decreasing


def test_per_criterion_micro_macro():
    df = _random_candidates(7)
    df["unit"] = list(zip(df["query"], df["criterion"], strict=True))
    t = dk.prepare(df["query"], df["probability"], df["is_gold"], criterion=df["criterion"])
    r = dk.per_criterion(t, 0.5)
    for c in ("A", "B"):
        ref = _reference(df[df["criterion"] == c], 0.5, 2, 10, 0.5)
        assert (r["table"].loc[c, "recall"], r["table"].loc[c, "precision"]) == pytest.approx(
            ref[:2]
        )
    assert r["macro"]["recall"] == pytest.approx(r["table"]["recall"].mean())
    overall = dk.dynamic_k_scores(t, 0.5)
    assert r["micro"]["recall"] == overall["micro_recall"]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"probability": [0.5, 1.5]}, "not in"),
        ({"probability": [0.5, np.nan]}, "not in"),
        ({"is_gold": [0, 2]}, "not 0 or 1"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"query": ["a", "a"], "probability": [0.5, 0.4], "is_gold": [0, 1]} | kwargs
    with pytest.raises(InputError, match=match):
        dk.prepare(**args)
    t = dk.prepare(["a"], [0.5], [1])
    with pytest.raises(InputError, match="conflict"):
        dk.select_k(t, conflict="both")
