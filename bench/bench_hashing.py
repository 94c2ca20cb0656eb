"""Hash-code mAP: the per-query argsort loop (the usual DeepHash-style code, with a stable
sort) against RankLab's histogram evaluation, on random codes with class structure.

    python bench/bench_hashing.py                 # both sizes of issue 6
    python bench/bench_hashing.py --quick         # a small check of the script itself
    python bench/bench_hashing.py --loop-subset 200 --repeat 5   # ratios on a shared machine

The loop on the 10,000-query case is timed on a subset of queries and extrapolated
(said in the output). Results must agree in stable mode; the script asserts it.
With --repeat N the loop and RankLab's expected mode are timed alternately N times and
the medians are printed, with the ratio of each repeat (loop / RankLab, same repeat) and
the load average: on a machine shared with other jobs the ratio moves less than either time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from metrics_core.hashing import evaluate_hashing  # noqa: E402


def make_codes(n_query, n_db, bits, n_classes=10, noise=0.2, seed=0):
    """Codes near a per-class centre: flip each bit with probability ``noise``."""
    rng = np.random.default_rng(seed)
    centres = rng.choice([-1, 1], (n_classes, bits)).astype(np.int8)
    ql, dl = rng.integers(0, n_classes, n_query), rng.integers(0, n_classes, n_db)

    def codes(labels):
        c = centres[labels].copy()
        c[rng.random(c.shape) < noise] *= -1
        return c

    return codes(ql), codes(dl), ql, dl


def legacy_loop_map(qc, dc, ql, dl):
    """The per-query loop: distances by dot product, stable argsort, cumulative precision."""
    qB, rB = qc.astype(np.float32), dc.astype(np.float32)
    bits = qB.shape[1]
    aps = np.zeros(len(qB))
    for i in range(len(qB)):
        gnd = (dl == ql[i]).astype(np.float64)
        hamm = 0.5 * (bits - rB @ qB[i])
        ind = np.argsort(hamm, kind="stable")
        gnd = gnd[ind]
        tsum = gnd.sum()
        if tsum == 0:
            continue
        count = np.arange(1, tsum + 1)
        tindex = np.flatnonzero(gnd) + 1.0
        aps[i] = np.mean(count / tindex)
    return float(aps.mean())


def time_it(fn, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--loop-subset", type=int, default=1000, help="queries timed in the loop on big cases")
    p.add_argument("--repeat", type=int, default=1, help="alternate loop / RankLab timings this many times")
    args = p.parse_args(argv)
    sizes = [(50, 2000, 16), (200, 5000, 32)] if args.quick else [(1000, 54000, 64), (10000, 50000, 32)]
    torch.set_num_threads(max(1, torch.get_num_threads()))
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, CUDA {torch.cuda.is_available()}, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| queries x database x bits | loop (s) | RankLab stable (s) | RankLab expected (s) | speed-up (expected) | mAP stable | mAP expected [band] |")
    print("|---|---|---|---|---|---|---|")
    for nq, ndb, bits in sizes:
        qc, dc, ql, dl = make_codes(nq, ndb, bits)
        sub = min(nq, args.loop_subset)
        loops, exps, ratios = [], [], []
        for _ in range(max(1, args.repeat)):
            t_loop, loop_map_sub = time_it(lambda: legacy_loop_map(qc[:sub], dc, ql[:sub], dl))
            t_exp, expected = time_it(lambda: evaluate_hashing(qc, dc, ql, dl, ties="expected", ks=()), repeat=2)
            loops.append(t_loop * nq / sub)
            exps.append(t_exp)
            ratios.append(loops[-1] / t_exp)
        t_loop_full, t_exp = float(np.median(loops)), float(np.median(exps))
        t_stable, stable = time_it(lambda: evaluate_hashing(qc, dc, ql, dl, ties="stable", ks=()))
        stable_sub = evaluate_hashing(qc[:sub], dc, ql[:sub], dl, ties="stable", ks=())["map"]
        assert abs(stable_sub - loop_map_sub) < 1e-9, (stable_sub, loop_map_sub)
        note = "" if sub == nq else f" (loop timed on {sub} queries, scaled)"
        lo, hi = expected["map_band"]
        spread = "" if len(ratios) == 1 else f" (median of {len(ratios)}; {min(ratios):.0f}-{max(ratios):.0f}x)"
        print(f"| {nq:,} x {ndb:,} x {bits} | {t_loop_full:.2f}{note} | {t_stable:.2f} | {t_exp:.3f} | "
              f"{float(np.median(ratios)):.0f}x{spread} | {stable['map']:.4f} | {expected['map']:.4f} [{lo:.4f}, {hi:.4f}] |")
        if len(ratios) > 1:
            print("  ratios per repeat: " + ", ".join(f"{r:.1f}" for r in ratios))
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
