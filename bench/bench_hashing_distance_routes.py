"""Two routes to the per-query (distance, relevant) histograms on CPU, same output:

* matmul: float32 product Q Dᵀ (torch), key 2d + relevant, one bincount per chunk;
* popcount: codes packed into uint64 words, XOR + numpy.bitwise_count, same key and bincount.

    python bench/bench_hashing_distance_routes.py [--rows 200]

Asserts both give identical histograms; prints the best of 3 for each (1,000-query-equivalent
timings are rows-proportional).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch


def matmul_route(q, d, ql, dl):
    rows, bits = q.shape
    width = bits + 1
    s = torch.from_numpy(q.astype(np.float32)) @ torch.from_numpy(d.astype(np.float32)).T
    key = s.neg_().add_(bits)  # 2d, exact in float32
    key.add_(torch.from_numpy(ql[:, None] == dl[None, :]).to(torch.float32))
    key = key.to(torch.int64) + torch.arange(rows)[:, None] * (2 * width)
    return torch.bincount(key.reshape(-1), minlength=rows * 2 * width).numpy()


def _pack(codes):
    pad = -codes.shape[1] % 64
    return np.packbits(np.pad(codes > 0, ((0, 0), (0, pad))), axis=1).view(np.uint64)


def popcount_route(q, d, ql, dl):
    rows, bits = q.shape
    width = bits + 1
    qp, dp = _pack(q), _pack(d)
    dist = np.zeros((rows, len(d)), dtype=np.uint16)
    for w in range(qp.shape[1]):
        dist += np.bitwise_count(qp[:, None, w] ^ dp[None, :, w])
    key = dist * 2 + (ql[:, None] == dl[None, :])
    key += (np.arange(rows, dtype=np.uint16) * (2 * width))[:, None]
    return np.bincount(key.ravel(), minlength=rows * 2 * width)


def best(fn, *args, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=200)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, numpy {np.__version__}")
    print("| queries x database x bits | matmul route (s) | XOR+popcount route (s) |")
    print("|---|---|---|")
    for n_db, bits in ((54000, 64), (50000, 32)):
        q = rng.choice(np.array([-1, 1], dtype=np.int8), (args.rows, bits))
        d = rng.choice(np.array([-1, 1], dtype=np.int8), (n_db, bits))
        ql, dl = rng.integers(0, 10, args.rows), rng.integers(0, 10, n_db)
        t_mm, a = best(matmul_route, q, d, ql, dl)
        t_pc, b = best(popcount_route, q, d, ql, dl)
        assert np.array_equal(a, b), "routes disagree"
        print(f"| {args.rows:,} x {n_db:,} x {bits} | {t_mm:.3f} | {t_pc:.3f} |", flush=True)


if __name__ == "__main__":
    main()
