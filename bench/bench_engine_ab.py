"""The engine before and after a change, side by side in one run.

Runs ``python -m metrics_core evaluate`` (the ranking benchmark's seven measures) from two
checkouts of RankLab, alternating A, B, A, B ... on the same files, and reports the median
wall time and peak memory of each, with the ratio B / A. The checkout A is a git
revision, checked out into a temporary worktree; B is this working tree. Both must give
the same per-query values; the means may differ in the last bit where the summation order
changed (the script prints the largest difference).

    python bench/bench_engine_ab.py --base 9dccee6 --datasets 10m ties --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import bench_ranking  # noqa: E402
import make_data  # noqa: E402
from peers import MEASURES  # noqa: E402


def command(checkout: Path, qrels: Path, run: Path, out: Path) -> list[str]:
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
        "--per-query",
        "--format",
        "json",
        "-o",
        str(out),
        "--quiet",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="git revision of the 'before' engine")
    parser.add_argument(
        "--datasets", nargs="+", default=["10m", "ties"], choices=sorted(make_data.PRESETS)
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=make_data.DEFAULT_OUT)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = tmp / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base],
            check=True,
        )
        try:
            rows = []
            for preset in args.datasets:
                data = bench_ranking.ensure_data(preset, args.data_dir, False)[0]
                bench_ranking.warm_page_cache(data["qrels"], data["run"])
                times = {"A": [], "B": []}
                for i in range(args.repeats):
                    for side, checkout in (("A", base), ("B", ROOT)):
                        out = tmp / f"{side}.json"
                        r = bench_ranking.time_process(
                            command(checkout, data["qrels"], data["run"], out), 1800
                        )
                        if r["rc"] != 0:
                            raise SystemExit(f"{side} failed: {r['stderr_tail']}")
                        times[side].append(r)
                        print(
                            f"{preset} {side} #{i + 1}: {r['wall_s']:.2f} s, {r['peak_rss_mb']:.0f} MiB",
                            file=sys.stderr,
                        )
                a, b = (json.loads((tmp / f"{s}.json").read_text())["runs"][0] for s in "AB")
                same = a["per_query"] == b["per_query"]
                agg = max(abs(a["aggregate"][m] - b["aggregate"][m]) for m in a["aggregate"])
                med = {
                    s: (
                        statistics.median(x["wall_s"] for x in times[s]),
                        statistics.median(x["peak_rss_mb"] for x in times[s]),
                    )
                    for s in times
                }
                rows.append((data["dataset"], med, same, agg))
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
            )

    print(
        f"| file | before ({args.base}) | after | time after/before | memory after/before "
        "| per-query values | means, largest difference |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, med, same, agg in rows:
        (ta, ma), (tb, mb) = med["A"], med["B"]
        print(
            f"| {name} | {ta:.2f} s, {ma:.0f} MiB | {tb:.2f} s, {mb:.0f} MiB | {tb / ta:.3f} | "
            f"{mb / ma:.3f} | {'identical' if same else 'DIFFERENT'} | {agg:.1e} |"
        )
    return 0 if all(r[2] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
