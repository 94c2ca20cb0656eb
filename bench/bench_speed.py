"""RankLab's streamed evaluation beside trec_eval 9 (and 10), whole processes, interleaved.

The issue's measurement: one whole process per tool (interpreter start, reading the TREC
qrels and run, P@5, P@10, R@100, RR@10, AP, nDCG@10, nDCG@100, writing the means), the
files in the page cache. The tools run in rounds -- (base,) RankLab, trec_eval 9,
trec_eval 10 -- so a change in the machine's load touches every tool alike; the table
gives the minimum and the median wall time of the rounds, the CPU time (user + system)
and the peak memory of the fastest round, and the ratio trec_eval 9 / RankLab on the
minima. ``--base REV`` adds RankLab at a git revision (a temporary worktree), whose means
must equal this checkout's bit for bit. trec_eval's means (6 of the measures; it has no
RR@10) must equal RankLab's within 1e-12.

    python bench/bench_speed.py --sizes 10m 50m --repeats 3 --data-dir /tmp/speed_data
    python bench/bench_speed.py --sizes 10m --repeats 5 --base 2b96727 --no-trec-eval10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import make_data  # noqa: E402
from bench_ranking import time_process, warm_page_cache  # noqa: E402
from bench_streaming import TREC_MEASURES, time_to_file, trec_cmd, trec_eval_binaries, trec_values  # noqa: E402
from peers import MEASURES  # noqa: E402


def ranklab(checkout: Path, qrels: Path, run: Path, out: Path) -> list[str]:
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    return [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(checkout)!r}); "
        "from metrics_core.cli import main; raise SystemExit(main())",
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
    ]


def rounds(tools: dict, repeats: int, timeout: float, tmp: Path) -> dict:
    """Every tool once per round, ``repeats`` rounds; the runs of each tool and its means."""
    runs: dict = {name: [] for name in tools}
    means: dict = {}
    for _ in range(repeats):
        for name, (cmd, kind) in tools.items():
            out = tmp / "out.txt"
            res = time_to_file(cmd, out, timeout) if kind == "trec" else time_process(cmd, timeout)
            if res["rc"] != 0:
                raise SystemExit(f"{name} failed: {res['stderr_tail']}")
            runs[name].append(res)
            if kind == "trec":
                vals = trec_values(out)
                means[name] = {m: vals[t] for m, t in TREC_MEASURES.items() if t in vals}
            else:
                means[name] = json.loads((tmp / f"{name}.json").read_text())["runs"][0]["aggregate"]
            print(
                f"{name}: {res['wall_s']:.2f} s, {res['cpu_s']:.2f} s CPU, {res['peak_rss_mb']:.0f} MB",
                file=sys.stderr,
                flush=True,
            )
    return {"runs": runs, "means": means}


def checks(means: dict) -> dict:
    ours = means["RankLab"]
    out = {}
    for name, vals in means.items():
        if name == "RankLab":
            out[name] = "reference"
        elif name.startswith("trec_eval"):
            diff = max(abs(vals[m] - ours[m]) for m in vals)
            out[name] = f"max diff {diff:.0e} on {len(vals)} measures" + (
                " (OVER 1e-12)" if diff > 1e-12 else ""
            )
        else:
            out[name] = "identical" if vals == ours else "DIFFERS"
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="+", default=["10m"], choices=sorted(make_data.PRESETS))
    p.add_argument("--data-dir", type=Path, default=make_data.DEFAULT_OUT)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--base", help="also time RankLab at this git revision")
    p.add_argument("--no-trec-eval10", action="store_true")
    p.add_argument("--timeout", type=float, default=900)
    args = p.parse_args(argv)
    binaries = trec_eval_binaries()
    tmp = Path(tempfile.mkdtemp(prefix="bench-speed-"))
    base = None
    if args.base:
        base = tmp / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base],
            check=True,
        )
    print(f"load average at the start: {os.getloadavg()}", file=sys.stderr)
    try:
        for preset in args.sizes:
            cfg = make_data.PRESETS[preset]
            qrels, run = (
                args.data_dir / f"{cfg['name']}.qrels",
                args.data_dir / f"{cfg['name']}.run",
            )
            if not (qrels.exists() and run.exists()):
                make_data.main(["--preset", preset, "--out", str(args.data_dir)])
            warm_page_cache(qrels, run)
            tools = {}
            if base is not None:
                tools[f"RankLab at {args.base}"] = (
                    ranklab(base, qrels, run, tmp / f"RankLab at {args.base}.json"),
                    "py",
                )
            tools["RankLab"] = (ranklab(ROOT, qrels, run, tmp / "RankLab.json"), "py")
            for name, binary in binaries.items():
                if binary and not (args.no_trec_eval10 and name == "trec_eval 10"):
                    tools[name] = (trec_cmd(binary, qrels, run), "trec")
            got = rounds(tools, args.repeats, args.timeout, tmp)
            check = checks(got["means"])
            lines = cfg["queries"] * cfg["depth"]
            print(
                f"\n{lines / 1e6:g} M lines ({run.stat().st_size / 1e9:.2f} GB), {args.repeats} rounds, "
                f"load average now {os.getloadavg()[0]:.1f}"
            )
            print("| tool | wall s, min | wall s, median | CPU s | peak MB | check |")
            print("|---|---:|---:|---:|---:|---|")
            best = {}
            for name, runs in got["runs"].items():
                fastest = min(runs, key=lambda r: r["wall_s"])
                best[name] = fastest["wall_s"]
                print(
                    f"| {name} | {fastest['wall_s']:.2f} | {statistics.median(r['wall_s'] for r in runs):.2f} | "
                    f"{fastest['cpu_s']:.2f} | {fastest['peak_rss_mb']:.0f} | {check[name]} |"
                )
            for name in best:
                if name.startswith("trec_eval"):
                    print(f"{name} / RankLab (minima): {best[name] / best['RankLab']:.2f}x")
    finally:
        if base is not None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
