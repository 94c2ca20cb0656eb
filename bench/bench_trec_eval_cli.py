"""trec_eval's command line on RankLab's engine against ``evaluate`` and trec_eval 10 and 9.

Every row is one whole process on the same qrels and run, in one run of this script, files
in the page cache: the ``trec_eval`` subcommand (trec_eval's output, byte for byte), the
same measures through ``evaluate`` (JSON means), and NIST's trec_eval 10 and 9 built from
``../shared/reference/`` in their stock output format. Two measure sets: ``official``
(trec_eval's default, no ``-m``) and ``-q -m all_trec`` (every measure, every query).
The subcommand's output is compared with trec_eval 10's, byte for byte.

    python bench/make_data.py --preset 10m --out bench/data
    python bench/bench_trec_eval_cli.py --qrels bench/data/q10k_d1000.qrels \\
        --run bench/data/q10k_d1000.run --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from bench_ranking import machine_info, time_process, warm_page_cache  # noqa: E402
from bench_streaming import shared_dir  # noqa: E402

#: trec_eval's official measures, as RankLab names them (for ``evaluate``)
OFFICIAL = [
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "AP",
    "GMAP",
    "Rprec",
    "Bpref",
    "RR",
    *[f"IPrec@{x / 10:.1f}" for x in range(11)],
    "P@5",
    "P@10",
    "P@15",
    "P@20",
    "P@30",
    "P@100",
    "P@200",
    "P@500",
    "P@1000",
]


def stock_binaries() -> dict:
    """trec_eval 10 and 9 in their stock output format (``%6.4f``), compiled once into a
    cache folder from the unmodified sources beside the repository (none without a compiler)."""
    cache = (
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ranklab-trec_eval-stock"
    )
    out = {}
    for version, label in (("trec_eval-10.0", "trec_eval 10"), ("trec_eval-9.0.8", "trec_eval 9")):
        src, build = shared_dir() / "reference" / version, cache / version
        if not (build / "trec_eval").exists() and src.is_dir():
            build.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-r", str(src), str(build)], check=False)
            subprocess.run(["make", "-s", "-C", str(build)], capture_output=True, check=False)
        if (build / "trec_eval").exists():
            out[label] = build / "trec_eval"
    return out


def timed(cmd: list[str], repeat: int, timeout: float) -> tuple[float, float, bytes]:
    """Median wall seconds, largest peak RSS (MiB) and the output of ``repeat`` whole runs."""
    walls, peaks, output = [], [], b""
    for _ in range(repeat):
        with tempfile.TemporaryFile() as sink:
            r = time_process(cmd, timeout, stdout=sink)
            sink.seek(0)
            output = sink.read()
        if r["rc"] not in (0, None):
            raise SystemExit(f"{' '.join(cmd)} exited {r['rc']}: {r['stderr_tail']}")
        walls.append(r["wall_s"])
        peaks.append(r["peak_rss_mb"])
    return statistics.median(walls), max(peaks), output


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args(argv)
    binaries = stock_binaries()
    files = [str(args.qrels), str(args.run)]
    py = [sys.executable, "-m", "metrics_core"]
    evaluate = [*py, "evaluate", "--qrels", files[0], "--run", files[1], "--format", "json"]
    sets = {
        "official": ([], [*evaluate, *[a for m in OFFICIAL for a in ("-m", m)]]),
        "-q -m all_trec": (["-q", "-m", "all_trec"], None),
    }
    warm_page_cache(args.qrels, args.run)
    print(f"<!-- {machine_info()} -->")
    print(f"| measures | process | wall s (median of {args.repeat}) | peak MB | bytes equal to |")
    print("|---|---|---|---|---|")
    for label, (flags, evaluate_cmd) in sets.items():
        reference = {
            name: timed([str(b), *flags, *files], args.repeat, args.timeout)
            for name, b in binaries.items()
        }
        rows = [
            ("RankLab trec_eval", [*py, "trec_eval", *flags, *files], "trec_eval 10"),
            (
                "RankLab trec_eval --compat trec_eval9",
                [*py, "trec_eval", "--compat", "trec_eval9", *flags, *files],
                "trec_eval 9",
            ),
        ]
        if evaluate_cmd:
            rows.append(("RankLab evaluate, same measures (JSON means)", evaluate_cmd, None))
        for name, cmd, twin in rows:
            wall, peak, output = timed(cmd, args.repeat, args.timeout)
            equal = (
                ""
                if twin is None or twin not in reference
                else (twin if output == reference[twin][2] else f"NOT {twin}")
            )
            print(f"| {label} | {name} | {wall:.2f} | {peak:.0f} | {equal} |", flush=True)
        for name, (wall, peak, _) in reference.items():
            print(f"| {label} | {name} (C) | {wall:.2f} | {peak:.0f} | |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
