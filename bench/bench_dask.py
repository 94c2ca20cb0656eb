"""Dask scaling: one process streaming the run against a real Dask scheduler with 1, 2 ...
single-threaded workers evaluating the same run given in parts.

A ``dask scheduler`` and N ``dask worker`` processes (``--nthreads 1``) are started on
127.0.0.1 for each N and kept running while ``python -m metrics_core evaluate --scheduler
tcp://...`` is timed (the cluster of a real deployment is already up); the first
evaluation on a fresh cluster is a warm-up (the workers import the library) and is not
counted. Each row is the best (minimum) of ``--repeat`` whole processes; peak RSS of the
client is its ``ru_maxrss``, of each worker the largest resident set sampled every
0.05 s (psutil) during the timed runs. ``--local`` also times ``--scheduler local:N``
(the client starts the cluster itself: its start-up is in the time).

Checks: every Dask run's means equal the single process's bit for bit.

    python bench/bench_dask.py --sizes 10m 50m --workers 1 2 --parts 8 --data-dir /tmp/dask_data
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import make_data  # noqa: E402
from bench_ranking import print_rows, time_process, warm_page_cache  # noqa: E402
from bench_streaming import ranklab_cmd, split_parts  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A ``dask scheduler`` and ``n`` single-threaded ``dask worker`` processes on 127.0.0.1."""

    def __init__(self, n: int, log: Path):
        import distributed

        self.address = f"tcp://127.0.0.1:{free_port()}"
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            PYTHONWARNINGS="ignore",
        )
        self.log = open(log, "w")
        port = self.address.rsplit(":", 1)[1]
        self.procs = [
            subprocess.Popen(
                ["dask", "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
                env=env,
                stdout=self.log,
                stderr=self.log,
            )
        ]
        self.workers = [
            subprocess.Popen(
                [
                    "dask",
                    "worker",
                    self.address,
                    "--host",
                    "127.0.0.1",
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--no-dashboard",
                    "--memory-limit",
                    "0",
                ],
                env=env,
                stdout=self.log,
                stderr=self.log,
                cwd=tempfile.gettempdir(),
            )
            for _ in range(n)
        ]
        self.procs += self.workers
        deadline = time.monotonic() + 60
        while True:
            try:
                with distributed.Client(self.address, timeout="5s") as c:
                    c.wait_for_workers(n, timeout=max(1, deadline - time.monotonic()))
                return
            except (OSError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def worker_pids(self) -> list[int]:
        """The worker processes (``dask worker`` runs the worker in a child process)."""
        import psutil

        pids = []
        for p in self.workers:
            kids = [
                k
                for k in psutil.Process(p.pid).children(recursive=True)
                if "resource_tracker" not in " ".join(k.cmdline())
            ]
            pids += [k.pid for k in kids] or [p.pid]
        return pids

    def close(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.log.close()


def sample_peaks(pids, stop: threading.Event, peaks: dict) -> None:
    import psutil

    procs = {pid: psutil.Process(pid) for pid in pids}
    while not stop.is_set():
        for pid, p in procs.items():
            try:
                peaks[pid] = max(peaks.get(pid, 0), p.memory_info().rss)
            except psutil.Error:
                pass
        time.sleep(0.05)


def cpu_seconds(pids) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def timed(cmd, timeout, pids=()) -> dict:
    peaks: dict = {}
    stop = threading.Event()
    t = threading.Thread(target=sample_peaks, args=(pids, stop, peaks), daemon=True)
    before = cpu_seconds(pids)
    t.start()
    try:
        res = time_process(cmd, timeout)
    finally:
        stop.set()
        t.join()
    res["worker_peaks_mb"] = sorted((v / 2**20 for v in peaks.values()), reverse=True)
    res["worker_cpu_s"] = cpu_seconds(pids) - before
    return res


def means(path: Path):
    return json.loads(path.read_text())["runs"][0]["aggregate"]


def best(rows: list[dict]) -> dict:
    ok = [r for r in rows if r["rc"] == 0] or rows
    out = dict(min(ok, key=lambda r: r["wall_s"]))
    out["walls"] = [round(r["wall_s"], 2) for r in rows]
    out["worker_peaks_mb"] = (
        [max(w) for w in zip(*[r["worker_peaks_mb"] for r in rows], strict=False)]
        if rows[0].get("worker_peaks_mb")
        else []
    )
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in rows)
    out["cpus"] = [round(r.get("cpu_s", 0.0) + r.get("worker_cpu_s", 0.0), 1) for r in rows]
    return out


def run(args) -> list[dict]:
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    for preset in args.sizes:
        cfg = make_data.PRESETS[preset]
        name = cfg["name"]
        qrels, runf = args.data_dir / f"{name}.qrels", args.data_dir / f"{name}.run"
        if not (qrels.exists() and runf.exists()):
            make_data.main(["--preset", preset, "--out", str(args.data_dir)])
        parts = split_parts(runf, args.data_dir / f"{name}.parts{args.parts}", args.parts)
        warm_page_cache(qrels, runf)
        label = f"{cfg['queries'] * cfg['depth'] / 1e6:.0f} M lines, {args.parts} parts"
        one = [
            timed(ranklab_cmd(qrels, runf, tmp / "one.json", []), args.timeout)
            for _ in range(args.repeat)
        ]
        ref = means(tmp / "one.json")
        rows.append(
            {
                "tool": "one process, streaming",
                "dataset": label,
                **best(one),
                "check": "reference",
                "load": os.getloadavg()[0],
            }
        )
        print(rows[-1], file=sys.stderr, flush=True)
        for n in args.workers:
            cluster = Cluster(n, tmp / f"dask{n}.log")
            try:
                out = tmp / f"dask{n}.json"
                cmd = ranklab_cmd(qrels, parts, out, ["--scheduler", cluster.address])
                timed(cmd, args.timeout)  # warm-up: the workers import the library
                reps = [timed(cmd, args.timeout, cluster.worker_pids()) for _ in range(args.repeat)]
                check = "identical" if reps[-1]["rc"] == 0 and means(out) == ref else "DIFFERS"
                rows.append(
                    {
                        "tool": f"Dask, {n} worker{'s' * (n > 1)} (running scheduler)",
                        "dataset": label,
                        **best(reps),
                        "check": check,
                        "load": os.getloadavg()[0],
                    }
                )
                print(rows[-1], file=sys.stderr, flush=True)
            finally:
                cluster.close()
            if args.local:
                out = tmp / f"local{n}.json"
                cmd = ranklab_cmd(qrels, parts, out, ["--scheduler", f"local:{n}"])
                import bench_streaming

                reps = []
                for _ in range(args.repeat):
                    r = bench_streaming.time_tree(cmd, args.timeout)
                    reps.append(r)
                check = "identical" if reps[-1]["rc"] == 0 and means(out) == ref else "DIFFERS"
                rows.append(
                    {
                        "tool": f"Dask local:{n} (cluster started by the command)",
                        "dataset": label,
                        **best(reps),
                        "check": check,
                        "load": os.getloadavg()[0],
                    }
                )
                print(rows[-1], file=sys.stderr, flush=True)
    return rows


def table(rows) -> str:
    out = [
        "| run | setup | wall s (best) | all walls | CPU s, client + workers (each run) | peak RSS MB | check | load |",
        "|---|---|---:|---|---|---|---|---:|",
    ]
    for r in rows:
        mem = f"{r['peak_rss_mb']:.0f}"
        if r.get("worker_peaks_mb"):
            mem += " (client); workers " + ", ".join(f"{w:.0f}" for w in r["worker_peaks_mb"])
        cpu = ", ".join(f"{c:.1f}" for c in r["cpus"])
        status = (
            r["check"]
            if r.get("rc", 0) == 0
            else f"failed (exit {r.get('rc')}): {r.get('stderr_tail', '')[-200:]}"
        )
        out.append(
            f"| {r['dataset']} | {r['tool']} | {r['wall_s']:.2f} | {r['walls']} | {cpu} | {mem} | "
            f"{status} | {r['load']:.1f} |"
        )
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="+", default=["10m"], choices=sorted(make_data.PRESETS))
    p.add_argument("--data-dir", type=Path, default=make_data.DEFAULT_OUT)
    p.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    p.add_argument("--parts", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--local", action="store_true", help="also time --scheduler local:N")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--json", type=Path, help="also write the rows here")
    args = p.parse_args(argv)
    rows = run(args)
    print_rows(rows, table(rows), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
