"""Make the detection / calibration / dynamic-K sample files (seeded, reproducible).

    python sample_data/make_detection_samples.py

detection_scores.csv: one row per (query, criterion) pair of a no-evidence gate --
label 1 when the pair has evidence; score a slightly over-confident probability rounded
to two decimals (so there are many ties), AUROC near 0.75.
dynamic_k_candidates.csv: candidate sentences per (query, criterion) with a reranker
probability and a gold flag; about a third of the pairs have no gold at all.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
CRITERIA = ["A.1", "A.2", "A.3", "A.4", "A.5", "A.6", "A.7", "A.8", "A.9"]


def detection_scores(rng: np.random.Generator, n_queries: int = 400) -> pd.DataFrame:
    q = np.repeat(np.arange(n_queries), len(CRITERIA))
    crit = np.tile(CRITERIA, n_queries)
    # per-criterion base rates and separability differ, as they do in practice
    base = np.tile(np.linspace(0.15, 0.55, len(CRITERIA)), n_queries)
    sep = np.tile(np.linspace(0.2, 0.8, len(CRITERIA)), n_queries)
    label = (rng.random(q.size) < base).astype(int)
    logit = np.log(base / (1 - base)) + sep * (label - 0.5) * 2 + rng.normal(0, 1.0, q.size)
    prob = 1 / (1 + np.exp(-1.3 * logit))  # over-confident by a factor 1.3
    score = np.round(prob, 2)
    fold = q % 5
    return pd.DataFrame(
        {
            "query_id": [f"q{i:04d}" for i in q],
            "score": score,
            "label": label,
            "criterion": crit,
            "fold": fold,
        }
    )


def dynamic_k_candidates(rng: np.random.Generator, n_queries: int = 300) -> pd.DataFrame:
    rows = []
    for i in range(n_queries):
        crit = CRITERIA[i % len(CRITERIA)]
        n = int(rng.integers(3, 25))
        n_gold = 0 if rng.random() < 0.33 else int(rng.integers(1, min(5, n) + 1))
        gold = np.zeros(n, dtype=int)
        gold[rng.choice(n, n_gold, replace=False)] = 1
        logit = -1.5 + 3.0 * gold + rng.normal(0, 1.2, n)
        prob = np.round(1 / (1 + np.exp(-logit)), 3)
        for j in range(n):
            rows.append((f"q{i:04d}", f"s{j:02d}", prob[j], gold[j], crit))
    return pd.DataFrame(rows, columns=["query", "candidate", "probability", "is_gold", "criterion"])


def main() -> None:
    rng = np.random.default_rng(20260117)
    detection_scores(rng).to_csv(HERE / "detection_scores.csv", index=False)
    dynamic_k_candidates(rng).to_csv(HERE / "dynamic_k_candidates.csv", index=False)


if __name__ == "__main__":
    main()
