"""Time RankLab against pytrec_eval, ranx and ir_measures, whole process each.

Every tool runs as its own process that reads the TREC qrels and run files and
computes P@5, P@10, R@100, RR@10, AP, nDCG@10 and nDCG@100; wall time is taken around
the process and peak memory is the child's ``ru_maxrss`` from ``os.wait4``. The mean
of every measure is compared with RankLab's (check column, tolerance 1e-4).

    pip install -r bench/requirements.txt
    python bench/bench_ranking.py --quick                  # seconds: checks the script
    python bench/bench_ranking.py --datasets 10m ties --write-md BENCHMARKS.md

Missing data files are generated with ``make_data.py`` (seeded, so the same bytes).
Raw results go to ``bench/out/ranking_<stamp>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import make_data  # noqa: E402
from peers import MEASURES  # noqa: E402

TOOLS = ["ranklab", "pytrec_eval", "ranx", "ir_measures"]
TOOL_LABELS = {
    "ranklab": "RankLab (CLI)",
    "ranklab_lib": "RankLab (Python API)",
    "pytrec_eval": "pytrec_eval",
    "ranx": "ranx",
    "ir_measures": "ir_measures",
}
PACKAGES = {
    "pytrec_eval": "pytrec-eval-terrier",
    "ranx": "ranx",
    "ir_measures": "ir-measures",
}
TOLERANCE = 1e-4
SECTION_TITLE = "## Ranking"


def tool_command(tool: str, qrels: Path, run: Path, out: Path) -> list[str]:
    """The command line a user of each tool would run (relative paths for display)."""
    if tool == "ranklab":
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
        ]
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


def available(tool: str) -> bool:
    if tool in ("ranklab", "ranklab_lib"):
        return (ROOT / "metrics_core" / "cli" / "evaluate.py").exists()
    try:
        version(PACKAGES[tool])
        return True
    except PackageNotFoundError:
        return False


def time_process(
    cmd: list[str], timeout: float, stdout=subprocess.DEVNULL, max_rss_mb: float | None = None
) -> dict:
    """Run ``cmd``; return wall seconds, peak RSS (MiB) and the exit status. ``stdout``:
    where the child's output goes (an open file keeps it, e.g. trec_eval's values).
    ``max_rss_mb``: stop the child when its resident memory passes this (a peer that needs
    more than the machine has would take the machine down); ``over_memory_cap`` says so."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.PIPE)
    watch = None
    if max_rss_mb is not None:
        import psutil

        watch = psutil.Process(proc.pid)
    over = False
    # wait4 gives this child's own rusage (ru_maxrss in KiB on Linux); poll it so a
    # timeout can stop the child. stderr is drained after exit (tools print little).
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if watch is not None:
            try:
                over = watch.memory_info().rss / 2**20 > max_rss_mb
            except Exception:  # psutil.Error: the child just ended
                pass
        if over or time.perf_counter() - start > timeout:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.005)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    return {
        "wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rc": proc.returncode,
        "over_memory_cap": over,
        "stderr_tail": stderr[-600:],
    }


def ensure_data(preset: str, data_dir: Path, shuffled: bool) -> dict:
    cfg = make_data.PRESETS[preset]
    name = cfg["name"]
    qrels, run, shuf = (
        data_dir / f"{name}.qrels",
        data_dir / f"{name}.run",
        data_dir / f"{name}.shuf.run",
    )
    if not (qrels.exists() and run.exists()) or (shuffled and not shuf.exists()):
        argv = ["--preset", preset, "--out", str(data_dir)] + (["--shuffle"] if shuffled else [])
        print(f"generating {preset}: make_data.py {' '.join(argv)}", file=sys.stderr)
        make_data.main(argv)
    sets = [
        {
            "dataset": f"{cfg['queries']:,} q × {cfg['depth']:,} docs"
            + (" (ties)" if preset == "ties" else ""),
            "preset": preset,
            "qrels": qrels,
            "run": run,
            "lines": cfg["queries"] * cfg["depth"],
        }
    ]
    if shuffled:
        sets.append(
            dict(sets[0], dataset=sets[0]["dataset"] + ", shuffled", run=shuf, shuffled=True)
        )
    return sets


def warm_page_cache(*paths: Path) -> None:
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass


def compare(result: dict, reference: dict | None) -> tuple[str, dict]:
    if reference is None:
        return "no reference", {}
    diffs = {m: abs(result[m] - reference[m]) for m in MEASURES if m in result and m in reference}
    missing = [m for m in MEASURES if m not in result]
    over = {m: d for m, d in diffs.items() if d > TOLERANCE}
    worst = max(diffs.values()) if diffs else float("nan")
    if over:
        text = "differs: " + ", ".join(f"{m} {d:.1e}" for m, d in over.items())
    else:
        text = f"ok (max diff {worst:.0e})"
    if missing:
        text += "; missing " + ", ".join(missing)
    return text, diffs


def print_rows(rows: list, table_text: str, json_path: Path | None = None) -> None:
    """Print the machine line and ``table_text``; with ``json_path``, also write the
    machine and the rows there (the scripts that time whole processes end with this)."""
    info = machine_info()
    print(
        f"machine: {info['cores']} cores, {info['memory']}, {info['cpu']}; load "
        f"{os.getloadavg()[0]:.1f}; commit {info['ranklab_commit']}"
    )
    print(table_text)
    if json_path:
        json_path.write_text(json.dumps({"machine": info, "rows": rows}, indent=1))


def machine_info() -> dict:
    model = platform.processor() or ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        found = re.search(r"Model name:\s*(.+)", out)
        model = found.group(1).strip() if found else model
    except OSError:
        pass
    versions = {}
    for dist in [
        "numpy",
        "pandas",
        "pyarrow",
        "pytrec-eval-terrier",
        "ranx",
        "numba",
        "ir-measures",
    ]:
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = "not installed"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        head = "?"
    mem = ""
    try:
        meminfo = Path("/proc/meminfo").read_text()
        kib = int(re.search(r"MemTotal:\s+(\d+)", meminfo).group(1))
        mem = f"{kib / 2**20:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "versions": versions,
        "ranklab_commit": head,
    }


def fmt_table(rows: list[dict]) -> str:
    lines = [
        "| tool | dataset | wall s | CPU s | peak RSS MB | RankLab faster by (wall) "
        "| by (CPU) | check vs RankLab (1e-4) |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        speed = f"{r['speedup']:.1f}×" if r.get("speedup") else "–"
        cpu_speed = f"{r['cpu_speedup']:.1f}×" if r.get("cpu_speedup") else "–"
        if r["rc"] != 0:
            lines.append(
                f"| {TOOL_LABELS[r['tool']]} | {r['dataset']} | failed (exit {r['rc']}) | | | | | |"
            )
            continue
        lines.append(
            f"| {TOOL_LABELS[r['tool']]} | {r['dataset']} | {r['wall_s']:.2f} | "
            f"{r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | {speed} | {cpu_speed} | "
            f"{r['check']} |"
        )
    return "\n".join(lines)


def fmt_phases(rows: list[dict]) -> str:
    lines = ["| tool | dataset | in-process phases (s) |", "|---|---|---|"]
    for r in rows:
        phases = r.get("phases") or {}
        if phases:
            text = ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
            lines.append(f"| {TOOL_LABELS[r['tool']]} | {r['dataset']} | {text} |")
    return "\n".join(lines)


def display_cmd(cmd: list[str]) -> str:
    shown = ["python" if c == sys.executable else c for c in cmd]
    shown = [os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in shown]
    shown = ["OUT.json" if c.startswith(tempfile.gettempdir()) else c for c in shown]
    return shlex.join(shown)


def run_benchmark(args) -> tuple[list[dict], dict]:
    tools = [t for t in args.tools if available(t)]
    skipped = [t for t in args.tools if t not in tools]
    for t in skipped:
        print(f"skipping {t}: not installed", file=sys.stderr)
    datasets = [d for p in args.datasets for d in ensure_data(p, args.data_dir, args.shuffled)]

    workdir = Path(tempfile.mkdtemp(prefix="ranklab_bench_"))
    if args.warmup:
        # Untimed: compiles ranx's numba cache and writes .pyc files once, so that the
        # timed runs measure what a user sees from the second call on.
        warm = ensure_data("quick", args.data_dir, False)[0]
        for tool in tools:
            res = time_process(
                tool_command(tool, warm["qrels"], warm["run"], workdir / "warm.json"), args.timeout
            )
            print(f"warm-up {tool}: {res['wall_s']:.1f} s", file=sys.stderr)

    load_before = os.getloadavg()
    rows, commands = [], {}
    for ds in datasets:
        warm_page_cache(ds["qrels"], ds["run"])
        repeats = args.repeats or (1 if ds["lines"] >= 5_000_000 else 3)
        reference = None
        for tool in tools:
            if ds.get("shuffled") and tool not in args.shuffled_tools:
                continue  # the peers build hash maps: line order does not matter to them
            out = workdir / f"{tool}.json"
            cmd = tool_command(tool, ds["qrels"], ds["run"], out)
            commands.setdefault(ds["preset"], {})[tool] = display_cmd(cmd)
            runs = []
            for _ in range(repeats):
                out.unlink(missing_ok=True)
                res = time_process(cmd, args.timeout)
                runs.append(res)
                print(
                    f"{tool:12s} {ds['dataset']:32s} {res['wall_s']:8.2f} s "
                    f"{res['peak_rss_mb']:8.0f} MB rc={res['rc']}",
                    file=sys.stderr,
                )
                if res["rc"] != 0:
                    print(res["stderr_tail"], file=sys.stderr)
                    break
            best = min(runs, key=lambda r: r["wall_s"])
            row = {
                "tool": tool,
                "dataset": ds["dataset"],
                "preset": ds["preset"],
                "run_file": str(ds["run"]),
                "repeats": len(runs),
                "walls": [r["wall_s"] for r in runs],
                "wall_s": sorted(r["wall_s"] for r in runs)[len(runs) // 2],
                "best_s": best["wall_s"],
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "cpu_s": best["cpu_s"],
                "rc": runs[-1]["rc"],
            }
            if row["rc"] == 0:
                payload = json.loads(out.read_text())
                if tool == "ranklab":
                    row["aggregate"] = payload["runs"][0]["aggregate"]
                    row["diagnostics"] = {
                        k: v
                        for k, v in payload["runs"][0]["diagnostics"].items()
                        if not isinstance(v, list)
                    }
                else:
                    row["aggregate"] = payload["aggregate"]
                    row["phases"] = payload.get("phases")
                if reference is None and tool in ("ranklab", "pytrec_eval"):
                    reference = row["aggregate"]
                row["check"], row["diffs"] = compare(row["aggregate"], reference)
                if tool == "ranklab":
                    row["check"] = "reference"
            rows.append(row)
        base = next(
            (
                r
                for r in rows
                if r["dataset"] == ds["dataset"] and r["tool"] == "ranklab" and r["rc"] == 0
            ),
            None,
        )
        for r in rows:
            if r["dataset"] == ds["dataset"] and base and r["rc"] == 0:
                r["speedup"] = r["wall_s"] / base["wall_s"]
                r["cpu_speedup"] = r["cpu_s"] / base["cpu_s"]
    info = machine_info()
    info["load_before"], info["load_after"] = load_before, os.getloadavg()
    info["commands"] = commands
    info["skipped"] = skipped
    info["date"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return rows, info


def section_markdown(rows: list[dict], info: dict, args) -> str:
    v = info["versions"]
    repeats = (
        f"{args.repeats} run(s)"
        if args.repeats
        else "the repeats (1 on the 10 M-line files, 3 otherwise)"
    )
    presets = " ".join(args.datasets)
    shuffled = " --shuffled" if args.shuffled else ""
    load = f"load average {info['load_before'][0]:.1f} before, {info['load_after'][0]:.1f} after"
    parts = [
        SECTION_TITLE,
        "",
        f"Measured {info['date']} on {info['cores']} cores ({info['cpu']}), "
        f"{info['memory']} RAM, Python {info['python']}; {load}."
        + (f" {args.note}" if args.note else ""),
        f"RankLab at commit {info['ranklab_commit']}; numpy {v['numpy']}, pandas "
        f"{v['pandas']}, pyarrow {v['pyarrow']}; peers: pytrec-eval-terrier "
        f"{v['pytrec-eval-terrier']}, ranx {v['ranx']} (numba {v['numba']}), ir-measures "
        f"{v['ir-measures']}.",
        "",
        "Each row is one whole process (interpreter start, imports, reading the TREC qrels "
        "and run files, computing P@5, P@10, R@100, RR@10, AP, nDCG@10, nDCG@100, writing "
        f"the means). Wall time is the median of {repeats}; peak RSS is the process's "
        "maximum resident set (`ru_maxrss`); CPU s is user + system time of the process "
        "(above the wall time when it used both cores). "
        "\"RankLab faster by\" is the tool's wall (or CPU) time over RankLab's. Each tool ran once "
        "untimed beforehand on a small file (ranx compiles and caches its numba code), "
        "and the data files were in the page cache.",
        "",
        fmt_table(rows),
        "",
        "In-process phases reported by the peer scripts (seconds, from `time.perf_counter`; "
        "the rest of the wall time is interpreter start and imports):",
        "",
        fmt_phases(rows),
        "",
        "Data (`bench/make_data.py`, seed 0): doc ids `doc1000000`–`doc9999999`, run "
        "lines in rank order, graded qrels 0–3 with 50–200 judged documents per query "
        "(10–40 for the ties set) of which 30–80 % are retrieved. `10m`: 10,000 queries × "
        "1,000 docs, scores with 4 decimals (a few ties). `ties`: 100,000 queries × 100 "
        "docs, scores with 1 decimal (many ties).",
        "",
        "Agreement (check column, tolerance 1e-4 on each mean):",
        "",
        "- pytrec_eval is trec_eval: RankLab must match it exactly. pytrec_eval has no "
        "RR@10; the script derives it from `recip_rank` (RR@10 = recip_rank if "
        "recip_rank ≥ 1/10, else 0), which is exact.",
        "- ranx sorts each query's documents with numba's `np.argsort` on the negated "
        "scores (quicksort, not stable, no doc-id key), so equal scores come out in an "
        "order of its own rather than trec_eval's (score descending, then doc id "
        "descending); any measure can move where tied documents of different relevance "
        "straddle a cutoff or a relevant position; on the ties set all measures do.",
        "- ir_measures computes P, R, AP and nDCG through pytrec_eval (identical), but "
        "RR@10 through its `msmarco` provider (pytrec_eval's provider has no cutoff for "
        "RR), which orders equal scores by doc id ascending, so RR@10 differs where ties "
        "straddle the first relevant document.",
        "",
        "Reproduce:",
        "",
        "```",
        "pip install -r bench/requirements.txt",
        f"python bench/bench_ranking.py --datasets {presets}{shuffled} --write-md BENCHMARKS.md",
        "```",
        "",
        "The processes it times (data files generated on first use into `bench/data/`):",
        "",
        "```",
    ]
    seen = set()
    for r in rows:
        if r["preset"] not in seen:
            seen.add(r["preset"])
            parts.append(
                f"python bench/make_data.py --preset {r['preset']}"
                + (" --shuffle" if args.shuffled else "")
            )
        run_file = Path(r["run_file"])
        stem = run_file.name.removesuffix(".run").removesuffix(".shuf")
        cmd = tool_command(
            r["tool"],
            run_file.with_name(stem + ".qrels"),
            run_file,
            Path(tempfile.gettempdir()) / "OUT.json",
        )
        parts.append(display_cmd(cmd))
    parts += ["```", ""]
    return "\n".join(parts)


def write_section(path: Path, section: str) -> None:
    """Replace (or append) the Ranking section of BENCHMARKS.md, leaving the rest."""
    text = path.read_text() if path.exists() else "# Benchmarks\n\n"
    pattern = re.compile(r"^## Ranking\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="1,000 q × 100 docs only, 1 repeat: checks the script"
    )
    parser.add_argument(
        "--datasets", nargs="+", choices=sorted(make_data.PRESETS), default=["10m", "ties"]
    )
    parser.add_argument(
        "--shuffled", action="store_true", help="also time the run files with lines in random order"
    )
    parser.add_argument(
        "--shuffled-tools",
        nargs="+",
        default=["ranklab", "pytrec_eval"],
        choices=TOOLS + ["ranklab_lib"],
        help="tools timed on the shuffled files (default: %(default)s)",
    )
    parser.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS + ["ranklab_lib"])
    parser.add_argument("--repeats", type=int, help="default 1 on ≥5 M lines, else 3")
    parser.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds per process before it is killed"
    )
    parser.add_argument("--no-warmup", dest="warmup", action="store_false")
    parser.add_argument("--data-dir", type=Path, default=make_data.DEFAULT_OUT)
    parser.add_argument("--write-md", type=Path, help="update this file's Ranking section")
    parser.add_argument("--note", default="", help="sentence added under the heading")
    parser.add_argument(
        "--from-json", type=Path, help="re-render the tables from a raw results file; times nothing"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets = ["quick"]
        args.repeats = args.repeats or 1

    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        rows, info = saved["rows"], saved["info"]
        for r in rows:
            base = next(
                (
                    b
                    for b in rows
                    if b["dataset"] == r["dataset"] and b["tool"] == "ranklab" and b["rc"] == 0
                ),
                None,
            )
            if base and r["rc"] == 0:
                r["speedup"] = r["wall_s"] / base["wall_s"]
                r["cpu_speedup"] = r["cpu_s"] / base["cpu_s"]
        args.datasets = sorted({r["preset"] for r in rows}, key=list(info["commands"]).index)
        args.shuffled = any("shuffled" in r["dataset"] for r in rows)
    else:
        rows, info = run_benchmark(args)
    print(fmt_table(rows))
    print()
    print(fmt_phases(rows))
    if not args.from_json:
        out_dir = BENCH / "out"
        out_dir.mkdir(exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d_%H%M%S")
        raw = out_dir / f"ranking_{stamp}.json"
        raw.write_text(json.dumps({"rows": rows, "info": info}, indent=1, default=str))
        print(f"\nraw results: {raw}", file=sys.stderr)
    if args.write_md:
        write_section(args.write_md, section_markdown(rows, info, args))
        print(f"updated {args.write_md}", file=sys.stderr)
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
