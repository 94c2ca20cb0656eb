"""Time compare_runs: 5 runs x 10,000 queries x 6 measures, 10,000 permutations.

Usage: python bench/bench_compare.py [--queries N] [--permutations N] [--runs N]
Per-query values are synthetic (discrete like P@k, continuous like AP); the timing covers
the whole comparison (4 runs vs the baseline x 6 measures: t, Wilcoxon, permutation,
bootstrap CI with as many resamples as permutations, corrections, W/T/L).
"""

import argparse
import pathlib
import sys
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from metrics_core.stats.comparison import compare_runs  # noqa: E402

MEASURES = ["P@5", "P@10", "nDCG@10", "AP", "RR", "R@100"]


def synthetic(runs, queries, seed=0):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"q{i}" for i in range(queries)], name="query_id")
    out = []
    for r in range(runs):
        cols = {
            m: (rng.integers(0, 6, queries) / 5 if m.startswith("P@") else rng.random(queries))
            for m in MEASURES
        }
        out.append(SimpleNamespace(run_name=f"run{r}", per_query=pd.DataFrame(cols, index=idx)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    evs = synthetic(a.runs, a.queries)
    times = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        frame = compare_runs(evs, "run0", MEASURES, n_permutations=a.permutations, seed=0)
        times.append(time.perf_counter() - t0)
    print(
        f"{a.runs} runs x {a.queries} queries x {len(MEASURES)} measures x {a.permutations} permutations "
        f"({len(frame)} comparisons): best {min(times):.2f} s, median {np.median(times):.2f} s "
        f"over {a.repeat}"
    )


if __name__ == "__main__":
    main()
