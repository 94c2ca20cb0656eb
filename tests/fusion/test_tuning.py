"""Cross-validated tuning: folds by query, parameters chosen on training queries only,
held-out scores that match an evaluation of the held-out run, in-sample only by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.fusion.tuning import GRIDS, weight_grid


def _data(seed=0, n_queries=15, n_docs=20):
    rng = np.random.default_rng(seed)
    runs = {}
    for name in ("bm25", "dense"):
        runs[name] = {
            f"q{q}": {f"d{j}": float(rng.normal()) for j in range(n_docs) if rng.random() < 0.7}
            for q in range(n_queries)
        }
    qrels = {
        f"q{q}": {f"d{j}": int(rng.integers(0, 3)) for j in range(n_docs) if rng.random() < 0.4}
        | {"d1": 1}
        for q in range(n_queries)
    }
    return runs, qrels


def test_weight_grid_is_every_composition_of_one():
    grid = weight_grid(3)
    assert len(grid) == 66  # C(10 + 2, 2)
    assert all(abs(sum(w) - 1) < 1e-9 for w in grid)
    assert (0.1, 0.2, 0.7) in grid  # lost by ranx's float test sum(seq) == 1.0


def test_cross_validation_scores_held_out_queries_with_fold_parameters():
    runs, qrels = _data()
    res = mc.tune_fusion(
        qrels, runs, method="wsum", measure="nDCG@10", k=3, seed=7, n_permutations=200
    )
    assert not res.in_sample and res.warning is None
    assert list(res.folds["n_test"]) == [5, 5, 5]
    assert set(res.folds["n_train"]) == {10}
    assert res.settings["seed"] == 7 and "3-fold" in res.describe()
    for params in res.folds["params"]:
        assert tuple(params["weights"]) in set(weight_grid(2))
    # the held-out run, evaluated, gives the reported held-out scores
    ev = mc.evaluate(qrels, res.run, ["nDCG@10"], missing_queries="zero")
    per_query = ev.per_query["nDCG@10"]
    per_query.index = per_query.index.astype(str)
    np.testing.assert_allclose(
        per_query.reindex(res.per_query.index).to_numpy(), res.per_query[res.run.name].to_numpy()
    )
    # each fold's test score is the mean of the fold's held-out values, with the fold's choice
    first = res.folds.iloc[0]
    fused = mc.fuse(runs, method="wsum", weights=first["params"]["weights"])
    direct = mc.evaluate(qrels, fused, ["nDCG@10"], missing_queries="zero").per_query["nDCG@10"]
    direct.index = direct.index.astype(str)
    test_queries = res.per_query.index[: first["n_test"]]
    assert direct.reindex(test_queries).mean() == pytest.approx(first["test_score"])
    # significance against each input run on those same queries
    assert list(res.summary.index) == ["bm25", "dense"]
    assert (res.summary["n_queries"] == 15).all()
    assert (
        (res.summary["p_corrected"] >= res.summary["p_permutation"])
        | np.isclose(res.summary["p_corrected"], res.summary["p_permutation"])
    ).all()
    assert res.summary.loc["bm25", "delta"] == pytest.approx(
        res.per_query[res.run.name].mean() - res.per_query["bm25"].mean()
    )


def test_choice_uses_only_training_queries():
    runs, qrels = _data(1)
    res = mc.tune_fusion(qrels, runs, method="rrf", measure="AP", k=5, n_permutations=100)
    for _, row in res.folds.iterrows():
        held = set(
            res.per_query.index[
                res.folds.index.get_loc(_) * 3 : (res.folds.index.get_loc(_) + 1) * 3
            ]
        )
        train = sorted(set(res.per_query.index) - held)
        scores = {}
        for params in GRIDS["rrf"](2):
            fused = mc.fuse(runs, method="rrf", params=params)
            pq = mc.evaluate(qrels, fused, ["AP"], missing_queries="zero").per_query["AP"]
            pq.index = pq.index.astype(str)
            scores[params["k"]] = pq.reindex(train).fillna(0).mean()
        best = max(scores.values())
        assert scores[row["params"]["k"]] == pytest.approx(best)
        assert row["train_score"] == pytest.approx(best)


def test_user_folds_from_query_metadata():
    runs, qrels = _data(2)
    meta = pd.DataFrame({"fold": ["a", "b", "c"] * 5}, index=[f"q{q}" for q in range(15)])
    res = mc.tune_fusion(qrels, runs, method="combmnz", folds=meta, n_permutations=100)
    assert list(res.folds["fold"]) == ["a", "b", "c"]
    assert res.settings["fold_column"] == "fold" and "query metadata" in res.describe()


def test_supervised_method_is_trained_on_training_queries_only():
    runs, qrels = _data(3)
    res = mc.tune_fusion(
        qrels,
        runs,
        method="probfuse",
        measure="AP",
        k=3,
        grid=[{"n_segments": 2}, {"n_segments": 5}],
        n_permutations=100,
    )
    assert len(res.folds) == 3 and set(res.folds["params"].map(lambda p: p["n_segments"])) <= {2, 5}


def test_in_sample_only_by_name_and_says_so():
    runs, qrels = _data(4)
    res = mc.tune_fusion(qrels, runs, method="rrf", validation="in-sample", n_permutations=100)
    assert res.in_sample and "optimistic" in res.warning and "optimistic" in res.describe()
    assert res.to_dict()["in_sample"] is True
    with pytest.raises(mc.InputError):
        mc.tune_fusion(qrels, runs, method="rrf", validation="same queries")
