"""Fold mean ± population std and micro/macro averages vs numpy by hand."""

import numpy as np
import pandas as pd
import pytest

from metrics_core.errors import InputError
from metrics_core.stats import folds


def _data(seed=0, n=57, k=5):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"q{i}" for i in range(n)], name="query_id")
    pq = pd.DataFrame({"AP": rng.random(n), "P@5": rng.integers(0, 6, n) / 5}, index=idx)
    meta = pd.DataFrame(
        {"fold": rng.integers(0, k, n), "criterion": rng.choice(list("abc"), n)}, index=idx
    )
    return pq, meta


@pytest.mark.parametrize("seed", range(3))
def test_fold_summary_vs_numpy(seed):
    pq, meta = _data(seed)
    out = folds.fold_summary(pq, meta, "fold")
    for m in pq.columns:
        per_fold = np.array(
            [
                pq[m].to_numpy()[meta["fold"].to_numpy() == f].mean()
                for f in sorted(meta["fold"].unique())
            ]
        )
        assert out.loc[m, "mean"] == pytest.approx(per_fold.sum() / len(per_fold))
        assert out.loc[m, "std"] == pytest.approx(
            np.sqrt(((per_fold - per_fold.mean()) ** 2).mean())
        )
        assert out.loc[m, "folds"] == len(per_fold)


def test_seed_002_five_folds_population_std():
    # Five fold values given directly (one query per fold).
    values = [0.80, 0.82, 0.78, 0.85, 0.75]
    pq = pd.DataFrame({"nDCG@10": values}, index=[f"q{i}" for i in range(5)])
    meta = pd.DataFrame({"fold": range(5)}, index=pq.index)
    row = folds.fold_summary(pq, meta).loc["nDCG@10"]
    assert row["mean"] == pytest.approx(0.80)
    assert row["std"] == pytest.approx(np.sqrt((0 + 0.0004 + 0.0004 + 0.0025 + 0.0025) / 5))
    assert row["std"] != pytest.approx(np.std(values, ddof=1))
    assert row["formatted"] == "0.8000 ± 0.0341"


def test_micro_macro_hand_example():
    pq = pd.DataFrame({"P@1": [1.0, 0.0, 0.0, 1.0, 1.0]}, index=["q1", "q2", "q3", "q4", "q5"])
    meta = pd.DataFrame({"criterion": ["a", "a", "a", "b", None]}, index=pq.index)
    out = folds.criterion_averages(pq, meta)
    assert out.loc["a", "P@1"] == pytest.approx(1 / 3)
    assert out.loc["b", "P@1"] == 1.0
    assert out.loc["micro", "P@1"] == pytest.approx(2 / 4)  # pooled pairs
    assert out.loc["macro", "P@1"] == pytest.approx((1 / 3 + 1) / 2)
    assert out.loc["micro", "count"] == 4 and out.loc["macro", "count"] == 2
    assert out.attrs["unassigned"] == 1


def test_multilabel_criteria_count_each_pair():
    pq = pd.DataFrame({"AP": [0.2, 0.6]}, index=["q1", "q2"])
    meta = pd.DataFrame({"criterion": [["a", "b"], ["b"]]}, index=pq.index)
    out = folds.criterion_averages(pq, meta)
    assert out.loc["a", "AP"] == pytest.approx(0.2)
    assert out.loc["b", "AP"] == pytest.approx(0.4)
    assert out.loc["micro", "AP"] == pytest.approx((0.2 + 0.2 + 0.6) / 3)
    assert out.loc["macro", "AP"] == pytest.approx(0.3)


@pytest.mark.parametrize("seed", range(3))
def test_micro_is_query_weighted_mean_of_criterion_means(seed):
    pq, meta = _data(seed)
    out = folds.criterion_averages(pq, meta, measures=["AP"])
    crit = out.drop(index=["micro", "macro"])
    assert out.loc["micro", "AP"] == pytest.approx(np.average(crit["AP"], weights=crit["count"]))
    assert out.loc["micro", "AP"] == pytest.approx(pq["AP"].mean())
    assert out.loc["macro", "AP"] == pytest.approx(crit["AP"].mean())


def test_micro_ratio_pools_counts():
    pq = pd.DataFrame({"NumRelRet": [1, 3, 0, 2], "NumRel": [2, 4, 4, 0]}, index=list("wxyz"))
    meta = pd.DataFrame({"criterion": ["a", "a", "b", "b"]}, index=pq.index)
    out = folds.micro_ratio(pq, meta, "NumRelRet", "NumRel")
    assert out["micro"] == pytest.approx(6 / 10)
    assert out["per_criterion"] == pytest.approx({"a": 4 / 6, "b": 2 / 4})
    assert out["macro"] == pytest.approx((4 / 6 + 2 / 4) / 2)


def test_missing_column_is_input_error():
    pq, meta = _data()
    with pytest.raises(InputError, match="no column"):
        folds.fold_summary(pq, meta, "split")
