"""Hash-code mAP: the per-query argsort loop (the usual DeepHash-style code, with a stable
sort) against RankLab's histogram evaluation, on random codes with class structure.

    python bench/bench_hashing.py                 # both sizes of issue 6
    python bench/bench_hashing.py --quick         # a small check of the script itself

The loop on the 10,000-query case is timed on a subset of queries and extrapolated
(said in the output). Results must agree in stable mode; the script asserts it.
"""

from __future__ import annotations

import argparse
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
    args = p.parse_args(argv)
    sizes = [(50, 2000, 16), (200, 5000, 32)] if args.quick else [(1000, 54000, 64), (10000, 50000, 32)]
    torch.set_num_threads(max(1, torch.get_num_threads()))
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, CUDA {torch.cuda.is_available()}")
    print("| queries x database x bits | loop (s) | RankLab stable (s) | RankLab expected (s) | speed-up (expected) | mAP stable | mAP expected [band] |")
    print("|---|---|---|---|---|---|---|")
    for nq, ndb, bits in sizes:
        qc, dc, ql, dl = make_codes(nq, ndb, bits)
        sub = min(nq, args.loop_subset)
        t_loop, loop_map_sub = time_it(lambda: legacy_loop_map(qc[:sub], dc, ql[:sub], dl))
        t_loop_full = t_loop * nq / sub
        t_stable, stable = time_it(lambda: evaluate_hashing(qc, dc, ql, dl, ties="stable", ks=()))
        t_exp, expected = time_it(lambda: evaluate_hashing(qc, dc, ql, dl, ties="expected", ks=()), repeat=2)
        stable_sub = evaluate_hashing(qc[:sub], dc, ql[:sub], dl, ties="stable", ks=())["map"]
        assert abs(stable_sub - loop_map_sub) < 1e-9, (stable_sub, loop_map_sub)
        note = "" if sub == nq else f" (loop timed on {sub} queries, scaled)"
        lo, hi = expected["map_band"]
        print(f"| {nq:,} x {ndb:,} x {bits} | {t_loop_full:.2f}{note} | {t_stable:.2f} | {t_exp:.3f} | "
              f"{t_loop_full / t_exp:.0f}x | {stable['map']:.4f} | {expected['map']:.4f} [{lo:.4f}, {hi:.4f}] |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
