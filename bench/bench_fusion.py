"""Rank fusion side by side: ``mc.fuse`` against ranx's ``fuse`` on two synthetic runs.

Usage: python bench/bench_fusion.py [--lines N] [--methods rrf,wsum] [--repeat N]

Two runs of ``--lines`` lines each (``--depth`` documents per query, half of each run's
documents shared with the other, each query's lines best first as in a run file), built in memory; each tool gets its own run objects
(RankLab's columnar Run, ranx's Run from a DataFrame) before the clock starts. Each
(tool, method) runs in a fresh process: time = best wall time of ``--repeat`` calls, and the
best CPU time of the process (all its threads; on a shared machine the steadier figure); memory =
the largest resident set sampled every 10 ms during the calls minus the resident set just
before them (the working memory of fusing, the runs already loaded), and the process's
peak. ranx's numba functions are compiled (and cached) by a call on a small run first,
outside the clock. Both results are checked to hold the same (query, document) pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_frames(lines: int, depth: int, seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    nq = max(1, lines // depth)
    q = np.repeat(np.arange(nq), depth)
    out = []
    for r in range(2):
        # documents 0..depth-1 of each query are shared, the rest are this run's own
        local = (
            rng.permutation(2 * depth)[:depth]
            if r == 0
            else rng.permutation(depth * 2)[:depth] + depth // 2
        )
        docs = (q * 10 * depth + np.tile(local, nq)).astype(np.int64)
        frame = pd.DataFrame(
            {
                "q_id": np.char.add("q", q.astype(str)).astype(object),
                "doc_id": np.char.add("d", docs.astype(str)).astype(object),
                "score": rng.random(len(q)),
            }
        )
        # written as run files are: query by query, best first
        order = np.lexsort((-frame["score"].to_numpy(), q))
        out.append(frame.iloc[order].reset_index(drop=True))
    return out


def rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def measure(fn, repeat: int):
    peak = [rss()]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.01)

    before = rss()
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    times, cpus, result = [], [], None
    for _ in range(repeat):
        result = None
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    stop.set()
    t.join()
    return min(times), min(cpus), (peak[0] - before) / 2**20, result


def child(tool: str, method: str, lines: int, depth: int, repeat: int) -> dict:
    frames = make_frames(lines, depth)
    params = {"weights": [0.5, 0.5]} if method == "wsum" else {}
    if tool == "ranx":
        import ranx

        frames = [
            f.astype({"q_id": object, "doc_id": object}) for f in frames
        ]  # ranx wants object ids
        small = [ranx.Run.from_df(f.head(1000).copy(), name=f"r{i}") for i, f in enumerate(frames)]
        ranx.fuse(small, norm="min-max", method=method, params=params)  # numba compiles here
        runs = [ranx.Run.from_df(f, name=f"r{i}") for i, f in enumerate(frames)]
        del frames
        secs, cpu, mem, out = measure(
            lambda: ranx.fuse(runs, norm="min-max", method=method, params=params), repeat
        )
        pairs = sum(len(v) for v in out.run.values())
    else:
        import metrics_core as mc

        runs = [
            mc.read_run(f.rename(columns={"q_id": "query_id"}), name=f"r{i}")
            for i, f in enumerate(frames)
        ]
        del frames
        secs, cpu, mem, out = measure(
            lambda: mc.fuse(runs, method=method, norm="min-max", weights=params.get("weights")),
            repeat,
        )
        pairs = len(out)
    import resource

    return {
        "tool": tool,
        "method": method,
        "seconds": secs,
        "cpu_seconds": cpu,
        "fuse_mib": mem,
        "process_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "pairs": pairs,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=10_000_000, help="lines per run")
    ap.add_argument("--depth", type=int, default=1000, help="documents per query")
    ap.add_argument("--methods", default="rrf,wsum")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--tools", default="ranklab,ranx")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], a.child[1], a.lines, a.depth, a.repeat)))
        return
    rows = []
    for method in a.methods.split(","):
        for tool in a.tools.split(","):
            cmd = [
                sys.executable,
                __file__,
                "--child",
                tool,
                method,
                "--lines",
                str(a.lines),
                "--depth",
                str(a.depth),
                "--repeat",
                str(a.repeat),
            ]
            out = subprocess.run(
                cmd, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}
            )
            if out.returncode:
                print(out.stderr[-2000:], file=sys.stderr)
                continue
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(
                f"{method:6s} {tool:8s} {r['seconds']:8.2f} s wall {r['cpu_seconds']:8.2f} s CPU  "
                f"fuse +{r['fuse_mib']:8.0f} MiB  "
                f"process peak {r['process_peak_mib']:8.0f} MiB  pairs {r['pairs']}",
                flush=True,
            )
    by = {(r["method"], r["tool"]): r for r in rows}
    for method in a.methods.split(","):
        ours, theirs = by.get((method, "ranklab")), by.get((method, "ranx"))
        if ours and theirs:
            assert ours["pairs"] == theirs["pairs"], "the two tools fused different candidates"
            print(
                f"{method}: RankLab {theirs['seconds'] / ours['seconds']:.1f}x faster (wall), "
                f"{theirs['cpu_seconds'] / ours['cpu_seconds']:.1f}x less CPU time, "
                f"fusing memory {ours['fuse_mib'] / max(theirs['fuse_mib'], 1):.2f} of ranx's"
            )
    print(
        json.dumps(
            {"lines_per_run": a.lines, "depth": a.depth, "cpus": os.cpu_count(), "rows": rows}
        )
    )


if __name__ == "__main__":
    main()
