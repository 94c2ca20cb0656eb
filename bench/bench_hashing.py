"""Hash-code mAP: the per-query argsort loop (the usual DeepHash-style code, with a stable
sort) against RankLab's histogram evaluation, on random codes with class structure.

    python bench/bench_hashing.py                 # both sizes of issue 6
    python bench/bench_hashing.py --quick         # a small check of the script itself
    python bench/bench_hashing.py --loop-subset 200 --repeat 5   # ratios on a shared machine
    python bench/bench_hashing.py --device cuda   # the device route against plain torch (issue 32)
    python bench/bench_hashing.py --device cuda --sizes 1,5 --repeat 2 --no-cpu-route   # a subset
    python bench/bench_hashing.py --device cpu --quick   # the same table with CPU torch (a check)
    python bench/bench_hashing_stages.py 1,2         # where a device evaluation's time goes
    bash bench/gpu_check.sh                       # one short GPU check: tests, then every size

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


# -- the device route (issue 32) --------------------------------------------------------------
#: queries, database, bits, classes (negative: multi-label with that many labels), as in issue 32
DEVICE_SIZES = [
    (1000, 54000, 64, 10),
    (10000, 50000, 32, 10),
    (5000, 128000, 64, 100),
    (2100, 193734, 64, -21),
    (10000, 1000000, 64, 100),
]
QUICK_DEVICE_SIZES = [(100, 3000, 64, 10), (300, 2000, 32, -5)]
#: The CPU route is skipped at and above this many (query, item) pairs (minutes on the CPU).
CPU_ROUTE_MAX_PAIRS = 2 * 10**9


def make_device_case(nq, ndb, bits, classes, device, seed=0):
    """±1 codes (float, as a sign() of network outputs gives them) and labels, made on
    ``device``: class ids, or (``classes`` < 0) multi-label 0/1 rows with one to three labels."""
    g = torch.Generator(device=device).manual_seed(seed)
    n_lab = abs(classes)

    def codes_and_labels(n):
        if classes > 0:
            labels = torch.randint(0, n_lab, (n,), generator=g, device=device)
            centre_of = labels
        else:
            labels = torch.zeros((n, n_lab), dtype=torch.float32, device=device)
            main = torch.randint(0, n_lab, (n,), generator=g, device=device)
            labels[torch.arange(n, device=device), main] = 1
            extra = torch.randint(0, n_lab, (n, 2), generator=g, device=device)
            keep = torch.rand((n, 2), generator=g, device=device) < 0.3
            labels[torch.arange(n, device=device)[:, None].expand(n, 2)[keep], extra[keep]] = 1
            centre_of = main
        centres = torch.where(
            torch.rand(
                (n_lab, bits),
                generator=torch.Generator(device=device).manual_seed(7),
                device=device,
            )
            < 0.5,
            -1.0,
            1.0,
        )
        c = centres[centre_of].clone()
        flip = torch.rand((n, bits), generator=g, device=device) < 0.2
        c[flip] *= -1
        return c, labels

    qc, ql = codes_and_labels(nq)
    dc, dl = codes_and_labels(ndb)
    return qc, dc, ql, dl


def plain_torch_map(qc, dc, ql, dl, pairs_per_chunk=2**28):
    """What a hashing researcher writes: distances by a half-precision matrix product, a
    stable argsort per query, the relevance gathered in that order, cumulative sums (float32);
    AP 0 for a query without relevant items. Chunks of queries bound the memory."""
    bits, ndb = qc.shape[1], dc.shape[0]
    q, dT = qc.half(), dc.half().T.contiguous()
    multi = ql.ndim == 2
    if multi:
        qlab, dlabT = ql.half(), dl.half().T.contiguous()
    pos = torch.arange(1, ndb + 1, device=qc.device, dtype=torch.float32)
    chunk = max(1, pairs_per_chunk // ndb)
    total = torch.zeros((), dtype=torch.float64, device=qc.device)
    for lo in range(0, q.shape[0], chunk):
        dist = 0.5 * (bits - q[lo : lo + chunk] @ dT)
        order = torch.argsort(dist, dim=1, stable=True)
        rel = (
            (qlab[lo : lo + chunk] @ dlabT > 0)
            if multi
            else (ql[lo : lo + chunk, None] == dl[None, :])
        )
        rel = torch.gather(rel, 1, order).float()
        cum = torch.cumsum(rel, dim=1)
        n_rel = rel.sum(dim=1)
        ap = (cum / pos * rel).sum(dim=1) / n_rel.clamp(min=1)
        total += ap.double().sum()
    return float(total) / q.shape[0]


def timed(fn, device, repeat):
    """Best of ``repeat`` after one warm-up (fewer when one run takes over 20 s), and the
    peak device memory of the warm-up."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    sync()
    t = time.perf_counter()
    value = fn()
    sync()
    first = time.perf_counter() - t
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0
    best = first
    for _ in range(repeat if first < 20 else 0):
        t = time.perf_counter()
        value = fn()
        sync()
        best = min(best, time.perf_counter() - t)
    return best, value, peak


def pick_sizes(text: str | None, quick: bool) -> list:
    """The device sizes to run: ``--sizes`` as 1-based positions in DEVICE_SIZES ("1,5"),
    else all of them (the two quick ones with ``--quick``)."""
    if quick:
        return QUICK_DEVICE_SIZES
    if not text:
        return DEVICE_SIZES
    try:
        picked = [DEVICE_SIZES[int(i) - 1] for i in text.split(",") if int(i) >= 1]
    except (ValueError, IndexError):
        raise SystemExit(f"--sizes takes positions 1..{len(DEVICE_SIZES)}, got {text!r}") from None
    if not picked:
        raise SystemExit(f"--sizes takes positions 1..{len(DEVICE_SIZES)}, got {text!r}")
    return picked


def device_main(args) -> int:
    from metrics_core.hashing import evaluate_hashing as evaluate
    from metrics_core.hashing.device import pick_engine
    from metrics_core.hashing.histograms import hamming_counts

    device = torch.device(args.device)
    engine = args.engine or (pick_engine("auto", device) if device.type == "cuda" else "torch")
    sizes = pick_sizes(args.sizes, args.quick)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(
        f"device {name}; torch {torch.__version__}; numpy {np.__version__}; engine {engine}; "
        f"CPU threads {torch.get_num_threads()}, cores {len(os.sched_getaffinity(0))}; "
        f"best of {args.repeat} after a warm-up",
        flush=True,
    )
    print(
        "columns: RankLab's device route, expected ties, and the part of it that counts on the "
        "device (the rest: the measures from the counts, on the device, and the host's means); "
        "stable ties; plain torch (matmul, stable "
        "argsort, gather, cumsum); RankLab's CPU route, expected; speed-ups against plain "
        "torch; peak device memory"
    )
    print(
        "| queries x database x bits | expected (s) | of which counts (s) | stable (s) "
        "| plain torch (s) | CPU route (s) | speed-up expected / stable | peak MB expected / "
        "stable / plain | mAP expected | mAP stable = plain |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---|---|---|")
    for nq, ndb, bits, classes in sizes:
        qc, dc, ql, dl = make_device_case(nq, ndb, bits, classes, device)
        kw = dict(device=device, engine=engine, ks=(), memory_budget=args.memory_budget)
        t_exp, exp, m_exp = timed(
            lambda: evaluate(qc, dc, ql, dl, ties="expected", **kw), device, args.repeat
        )
        # the counts alone; the rest of t_exp is the measures from them (on the device) and
        # the host's divisions and means
        t_counts, _, _ = timed(
            lambda: hamming_counts(
                qc, dc, ql, dl, device=device, engine=engine, memory_budget=args.memory_budget
            ),
            device,
            args.repeat,
        )
        t_st, st, m_st = timed(
            lambda: evaluate(qc, dc, ql, dl, ties="stable", **kw), device, args.repeat
        )
        t_ref, ref, m_ref = timed(lambda: plain_torch_map(qc, dc, ql, dl), device, args.repeat)
        assert abs(st["map"] - ref) < 1e-5, (st["map"], ref)  # float32 sums in the plain code
        if args.no_cpu_route:
            cpu_text = "skipped (--no-cpu-route)"
        elif nq * ndb < CPU_ROUTE_MAX_PAIRS:
            host = [x.cpu().numpy() for x in (qc, dc, ql, dl)]
            t_cpu, cpu, _ = timed(
                lambda: evaluate(*host, device="cpu", ties="expected", ks=()),
                torch.device("cpu"),
                args.repeat,
            )
            assert repr(cpu["map"]) == repr(exp["map"]), (cpu["map"], exp["map"])  # bit for bit
            np.testing.assert_array_equal(cpu["ap"], exp["ap"])
            cpu_text = f"{t_cpu:.3f}"
        else:
            cpu_text = "skipped (minutes on the CPU)"
        kind = f", {-classes} labels (multi-label)" if classes < 0 else f", {classes} classes"
        print(
            f"| {nq:,} x {ndb:,} x {bits}{kind} | {t_exp:.4f} | {t_counts:.4f} | {t_st:.4f} | "
            f"{t_ref:.4f} | {cpu_text} | {t_ref / t_exp:.1f}x / {t_ref / t_st:.1f}x | "
            f"{m_exp / 2**20:.0f} / {m_st / 2**20:.0f} / {m_ref / 2**20:.0f} | "
            f"{exp['map']:.6f} | {st['map']:.6f} = {ref:.6f} |",
            flush=True,
        )
    return 0


def tune_main(args) -> int:
    """Time the Triton engine's block sizes (histograms alone, and the stable pass) on two of
    the sizes: what the defaults in metrics_core/hashing/triton_engine.py were chosen from."""
    from metrics_core.hashing import triton_engine
    from metrics_core.hashing.histograms import hamming_counts

    device = torch.device(args.device)
    defaults = {
        k: getattr(triton_engine, k)
        for k in ("HIST_BN", "HIST_BQ", "HIST_WARPS", "STABLE_BQ", "STABLE_PROGRAMS")
    }
    hist_configs = [
        (2048, 8, 4),
        (1024, 8, 4),
        (4096, 8, 8),
        (2048, 4, 4),
        (2048, 16, 4),
        (2048, 8, 8),
    ]
    stable_configs = [(32, 8192), (32, 32768), (64, 8192), (32, 2048)]
    for nq, ndb, bits, classes in [DEVICE_SIZES[0], DEVICE_SIZES[-1]]:
        qc, dc, ql, dl = make_device_case(nq, ndb, bits, classes, device)
        for bn, bq, warps in hist_configs:
            triton_engine.HIST_BN, triton_engine.HIST_BQ, triton_engine.HIST_WARPS = bn, bq, warps
            t, _, _ = timed(
                lambda: hamming_counts(qc, dc, ql, dl, device=device, engine="triton"), device, 2
            )
            print(
                f"tune {nq}x{ndb}x{bits} histograms BN={bn} BQ={bq} warps={warps}: {t:.4f} s",
                flush=True,
            )
        triton_engine.HIST_BN, triton_engine.HIST_BQ, triton_engine.HIST_WARPS = (
            defaults[k] for k in ("HIST_BN", "HIST_BQ", "HIST_WARPS")
        )
        for bq, programs in stable_configs:
            triton_engine.STABLE_BQ, triton_engine.STABLE_PROGRAMS = bq, programs
            t, _, _ = timed(
                lambda: hamming_counts(
                    qc,
                    dc,
                    ql,
                    dl,
                    device=device,
                    engine="triton",
                    memory_budget=args.memory_budget,
                    stable=(None, ()),
                ),
                device,
                1,
            )
            print(
                f"tune {nq}x{ndb}x{bits} stable BQ={bq} programs={programs}: {t:.4f} s", flush=True
            )
        triton_engine.STABLE_BQ, triton_engine.STABLE_PROGRAMS = (
            defaults["STABLE_BQ"],
            defaults["STABLE_PROGRAMS"],
        )
    return 0


def time_it(fn, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true")
    p.add_argument(
        "--loop-subset", type=int, default=1000, help="queries timed in the loop on big cases"
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="alternate loop / RankLab timings this many times (device mode: best of N, default 3)",
    )
    p.add_argument(
        "--device", help="cuda (or cpu): RankLab's device route against plain torch code"
    )
    p.add_argument(
        "--memory-budget", type=int, default=1 << 30, help="device mode: bytes per chunk"
    )
    p.add_argument(
        "--engine", choices=("torch", "triton"), help="device mode: the engine (default: auto)"
    )
    p.add_argument("--tune", action="store_true", help="device mode: time the Triton block sizes")
    p.add_argument(
        "--sizes",
        help=f"device mode: positions 1..{len(DEVICE_SIZES)} of the sizes to run, e.g. 1,5 "
        "(default: all)",
    )
    p.add_argument(
        "--no-cpu-route",
        action="store_true",
        help="device mode: leave out RankLab's CPU route (its column, and its bit-for-bit check)",
    )
    args = p.parse_args(argv)
    if args.device and args.tune:
        return tune_main(args)
    if args.device:
        args.repeat = 3 if args.repeat is None else args.repeat
        return device_main(args)
    args.repeat = 1 if args.repeat is None else args.repeat
    sizes = (
        [(50, 2000, 16), (200, 5000, 32)] if args.quick else [(1000, 54000, 64), (10000, 50000, 32)]
    )
    torch.set_num_threads(max(1, torch.get_num_threads()))
    print(
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, CUDA {torch.cuda.is_available()}, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        "| queries x database x bits | loop (s) | RankLab stable (s) | RankLab expected (s) | speed-up (expected) | mAP stable | mAP expected [band] |"
    )
    print("|---|---|---|---|---|---|---|")
    for nq, ndb, bits in sizes:
        qc, dc, ql, dl = make_codes(nq, ndb, bits)
        sub = min(nq, args.loop_subset)
        loops, exps, ratios = [], [], []
        for _ in range(max(1, args.repeat)):
            t_loop, loop_map_sub = time_it(lambda: legacy_loop_map(qc[:sub], dc, ql[:sub], dl))
            t_exp, expected = time_it(
                lambda: evaluate_hashing(qc, dc, ql, dl, ties="expected", ks=()), repeat=2
            )
            loops.append(t_loop * nq / sub)
            exps.append(t_exp)
            ratios.append(loops[-1] / t_exp)
        t_loop_full, t_exp = float(np.median(loops)), float(np.median(exps))
        t_stable, stable = time_it(lambda: evaluate_hashing(qc, dc, ql, dl, ties="stable", ks=()))
        stable_sub = evaluate_hashing(qc[:sub], dc, ql[:sub], dl, ties="stable", ks=())["map"]
        assert abs(stable_sub - loop_map_sub) < 1e-9, (stable_sub, loop_map_sub)
        note = "" if sub == nq else f" (loop timed on {sub} queries, scaled)"
        lo, hi = expected["map_band"]
        spread = (
            ""
            if len(ratios) == 1
            else f" (median of {len(ratios)}; {min(ratios):.0f}-{max(ratios):.0f}x)"
        )
        print(
            f"| {nq:,} x {ndb:,} x {bits} | {t_loop_full:.2f}{note} | {t_stable:.2f} | {t_exp:.3f} | "
            f"{float(np.median(ratios)):.0f}x{spread} | {stable['map']:.4f} | {expected['map']:.4f} [{lo:.4f}, {hi:.4f}] |"
        )
        if len(ratios) > 1:
            print("  ratios per repeat: " + ", ".join(f"{r:.1f}" for r in ratios))
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
