"""Streaming and Dask: RankLab read whole, RankLab in blocks, trec_eval 9 and 10, Dask,
and (``--peers``) pytrec_eval and ranx.

Every row is one whole process (interpreter start, reading the files, P@5, P@10, R@100,
RR@10, AP, nDCG@10, nDCG@100, writing the means); wall time around the process, peak
memory the process's ``ru_maxrss`` (``os.wait4``). For Dask (``--dask``: the run split
into parts, ``evaluate --scheduler local:2``) the process tree is sampled every 0.1 s
(psutil) and the largest resident set of the client and of each worker is reported.

Checks: the streamed and Dask means must equal the whole-run means bit for bit; trec_eval
(built by ``../shared/reference/build-trec_eval.sh`` beside the repository, or under
``$RANKLAB_SHARED``; values printed with %.17g) is
compared on the measures it has under the same definition (P_5, P_10, recall_100, map,
ndcg_cut_10, ndcg_cut_100), tolerance 1e-12.

    python bench/bench_streaming.py --sizes 10m --data-dir /tmp/stream-bench
    python bench/bench_streaming.py --sizes 10m 50m --dask --peers pytrec_eval ranx

The peers run through ``bench/peers.py`` (as in ``bench_ranking.py``; the means are
compared with RankLab's, where ranx's own tie order can differ) and are stopped when their
resident memory passes ``--peer-max-gb`` (ranx needed 3.8 GB at 10 M lines).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
from peers import MEASURES  # noqa: E402

sys.path.insert(0, str(ROOT))
from metrics_core.scale.streaming import DEFAULT_BLOCK_ROWS  # noqa: E402

TREC_MEASURES = {
    "P@5": "P_5",
    "P@10": "P_10",
    "R@100": "recall_100",
    "AP": "map",
    "nDCG@10": "ndcg_cut_10",
    "nDCG@100": "ndcg_cut_100",
}


def shared_dir() -> Path:
    """The shared folder: ``$RANKLAB_SHARED`` if set, else ``../shared`` beside the repository
    (as the tests find it), so the bench runs from any clone."""
    env = os.environ.get("RANKLAB_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


BUILD = shared_dir() / "reference" / "build-trec_eval.sh"


def trec_eval_binaries() -> dict:
    if not BUILD.exists():
        return {}
    out = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True)
    if out.returncode:
        return {}
    found = dict(line.split("=", 1) for line in out.stdout.split() if "=" in line)
    return {"trec_eval 10": found.get("trec_eval10"), "trec_eval 9": found.get("trec_eval9")}


def ranklab_cmd(qrels, run, out, extra) -> list[str]:
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    return [
        sys.executable,
        "-m",
        "metrics_core",
        "evaluate",
        "--qrels",
        str(qrels),
        "--run",
        str(run),
        *measures,
        "--format",
        "json",
        "-o",
        str(out),
        "--quiet",
        *extra,
    ]


def trec_cmd(binary, qrels, run) -> list[str]:
    return [
        binary,
        "-m",
        "P.5,10",
        "-m",
        "recall.100",
        "-m",
        "map",
        "-m",
        "ndcg_cut.10,100",
        str(qrels),
        str(run),
    ]


def time_to_file(cmd, out_path: Path, timeout: float) -> dict:
    """time_process, with stdout kept (trec_eval prints its values)."""
    with open(out_path, "w") as fh:
        return time_process(cmd, timeout, stdout=fh)


def time_tree(cmd, timeout: float) -> dict:
    """Run ``cmd``, sampling the resident memory of it and its descendants every 0.1 s."""
    import psutil

    env = dict(os.environ, PYTHONWARNINGS="ignore")
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    peaks: dict = {}
    names: dict = {}
    stop = threading.Event()

    def sample():
        try:
            root = psutil.Process(proc.pid)
        except psutil.NoSuchProcess:
            return
        while not stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    peaks[p.pid] = max(peaks.get(p.pid, 0), rss)
                    if p.pid not in names:
                        names[p.pid] = " ".join(p.cmdline())[:200]
                except psutil.Error:
                    pass
            time.sleep(0.1)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    wall = time.perf_counter() - start
    stop.set()
    t.join()
    client = peaks.get(proc.pid, 0) / 2**20
    workers = sorted(
        (v / 2**20 for k, v in peaks.items() if k != proc.pid and "spawn_main" in names.get(k, "")),
        reverse=True,
    )
    return {
        "wall_s": wall,
        "peak_rss_mb": client,
        "worker_peaks_mb": workers,
        "rc": proc.returncode,
        "stderr_tail": err.decode(errors="replace")[-600:],
    }


def peer_command(tool: str, qrels: Path, run: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        str(BENCH / "peers.py"),
        tool,
        "--qrels",
        str(qrels),
        "--run",
        str(run),
        "--out",
        str(out),
    ]


def split_parts(run: Path, folder: Path, n_parts: int) -> Path:
    """Cut the run file into ``n_parts`` files at line boundaries (queries straddle parts)."""
    if folder.exists() and len(list(folder.iterdir())) == n_parts:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    size = run.stat().st_size
    with open(run, "rb") as fh:
        for i in range(n_parts):
            target = size * (i + 1) // n_parts
            with open(folder / f"part{i:03d}.run", "wb") as out:
                while fh.tell() < target:
                    chunk = fh.read(min(1 << 24, target - fh.tell()))
                    if not chunk:
                        break
                    out.write(chunk)
                out.write(fh.readline())  # end the part at a line end
    return folder


def trec_values(path: Path) -> dict:
    vals = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all":
            vals[parts[0]] = float(parts[2])
    return vals


def run(args) -> list[dict]:
    rows = []
    binaries = trec_eval_binaries()
    tmp = Path(tempfile.mkdtemp(prefix="bench-stream-"))
    for preset in args.sizes:
        cfg = make_data.PRESETS[preset]
        name = cfg["name"]
        qrels, runf = args.data_dir / f"{name}.qrels", args.data_dir / f"{name}.run"
        if not (qrels.exists() and runf.exists()):
            make_data.main(["--preset", preset, "--out", str(args.data_dir)])
        lines = cfg["queries"] * cfg["depth"]
        warm_page_cache(qrels, runf)
        label = f"{lines / 1e6:.0f} M lines ({runf.stat().st_size / 1e9:.2f} GB)"
        ref = None
        tools = [
            (
                "RankLab, read whole",
                ranklab_cmd(qrels, runf, tmp / "whole.json", ["--block-rows", "0"]),
                "whole.json",
            ),
            (
                "RankLab, streaming",
                ranklab_cmd(
                    qrels, runf, tmp / "stream.json", ["--block-rows", str(args.block_rows)]
                ),
                "stream.json",
            ),
        ]
        for tool, cmd, out in tools:
            if preset in args.skip_whole and "whole" in tool:
                continue
            res = time_process(cmd, args.timeout)
            means = (
                json.loads((tmp / out).read_text())["runs"][0]["aggregate"]
                if res["rc"] == 0
                else None
            )
            check = "reference" if ref is None else ("identical" if means == ref else "DIFFERS")
            if ref is None:
                ref = means
            rows.append({"tool": tool, "dataset": label, **res, "check": check})
            print(rows[-1], file=sys.stderr, flush=True)
        for tool, binary in binaries.items():
            if not binary or tool not in args.trec:
                continue
            res = time_to_file(trec_cmd(binary, qrels, runf), tmp / "trec.txt", args.timeout)
            vals = trec_values(tmp / "trec.txt")
            diffs = {
                m: abs(vals[t] - ref[m]) for m, t in TREC_MEASURES.items() if t in vals and ref
            }
            check = (
                f"max diff {max(diffs.values()):.0e} on {len(diffs)} measures"
                if diffs
                else "no values"
            )
            rows.append({"tool": tool, "dataset": label, **res, "check": check})
            print(rows[-1], file=sys.stderr, flush=True)
        for tool in args.peers:
            out = tmp / f"{tool}.json"
            res = time_process(
                peer_command(tool, qrels, runf, out),
                args.timeout,
                max_rss_mb=args.peer_max_gb * 1024,
            )
            if res["over_memory_cap"]:
                check = f"stopped: needed more than {args.peer_max_gb:g} GB"
            elif res["rc"] == 0 and ref:
                means = json.loads(out.read_text())["aggregate"]
                diffs = {m: abs(means[m] - ref[m]) for m in means if m in ref}
                check = (
                    f"max diff {max(diffs.values()):.0e} on {len(diffs)} measures"
                    if diffs
                    else "no values"
                )
            else:
                check = "no values"
            rows.append({"tool": tool, "dataset": label, **res, "check": check})
            print(rows[-1], file=sys.stderr, flush=True)
        if args.dask:
            parts = split_parts(runf, args.data_dir / f"{name}.parts{args.parts}", args.parts)
            res = time_tree(
                ranklab_cmd(qrels, parts, tmp / "dask.json", ["--scheduler", "local:2"]),
                args.timeout,
            )
            means = (
                json.loads((tmp / "dask.json").read_text())["runs"][0]["aggregate"]
                if res["rc"] == 0
                else None
            )
            rows.append(
                {
                    "tool": f"RankLab, Dask local:2 ({args.parts} parts)",
                    "dataset": label,
                    **res,
                    "check": "identical" if means == ref else "DIFFERS",
                }
            )
            print(rows[-1], file=sys.stderr, flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return rows


def table(rows) -> str:
    out = ["| tool | run | wall s | CPU s | peak RSS MB | check |", "|---|---|---:|---:|---:|---|"]
    for r in rows:
        mem = f"{r['peak_rss_mb']:.0f}"
        if r.get("worker_peaks_mb"):
            mem += " (client); workers " + ", ".join(f"{w:.0f}" for w in r["worker_peaks_mb"])
        cpu = f"{r['cpu_s']:.1f}" if "cpu_s" in r else "–"
        status = (
            r["check"]
            if r.get("rc", 0) == 0 or r.get("over_memory_cap")
            else f"failed (exit {r.get('rc')})"
        )
        out.append(
            f"| {r['tool']} | {r['dataset']} | {r['wall_s']:.2f} | {cpu} | {mem} | {status} |"
        )
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="+", default=["10m"], choices=sorted(make_data.PRESETS))
    p.add_argument("--data-dir", type=Path, default=make_data.DEFAULT_OUT)
    p.add_argument("--block-rows", type=int, default=DEFAULT_BLOCK_ROWS)
    p.add_argument("--trec", nargs="*", default=["trec_eval 9", "trec_eval 10"])
    p.add_argument(
        "--peers",
        nargs="*",
        default=[],
        choices=["pytrec_eval", "ranx"],
        help="also time these Python peers (pip install -r bench/requirements.txt)",
    )
    p.add_argument(
        "--peer-max-gb",
        type=float,
        default=14.0,
        help="stop a peer whose resident memory passes this (the row says so)",
    )
    p.add_argument("--dask", action="store_true")
    p.add_argument("--parts", type=int, default=8)
    p.add_argument("--skip-whole", nargs="*", default=[], help="presets without the read-whole row")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--json", type=Path, help="also write the rows here")
    args = p.parse_args(argv)
    rows = run(args)
    print_rows(rows, table(rows), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
