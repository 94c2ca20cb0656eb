"""What the Fusion page's work takes at its peak, per input row: the memory need its data
module (``ui.fusion.data``) reserves in the app's gate.

Usage: python bench/fusion_page_memory.py [--lines 100000,400000] [--methods rrf,wsum] [--depth 20]

For each size and method, in a fresh process: two runs of ``--lines`` lines each (``--depth``
documents a query, half shared), qrels judging a tenth of the pairs; the page's work as the
page does it (``ui.fusion.data.fusion_work``: the fusion, or its cross-validated tuning with
2,000 permutations, each run and the fused run evaluated on three measures, the
randomization test of the fused run against each input); the peak resident set during the
work (``VmHWM``, reset before it) minus the resident set just before it, per input row
(the two runs' lines together). Run it with no other measurement at the same time (for
example every measurement under one ``flock`` lock file).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _rss(field: str) -> int:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def one(lines: int, method: str, tune: bool, depth: int) -> dict:
    sys.path.insert(0, str(ROOT))
    import gc

    import numpy as np

    import metrics_core as mc
    from bench.bench_fusion import make_frames
    from ui.fusion.data import fusion_work

    def data(n: int):
        a, b = make_frames(n, depth)
        runs = {"a": mc.read_run(a, name="a"), "b": mc.read_run(b, name="b")}
        rng = np.random.default_rng(1)
        judged = a.sample(frac=0.1, random_state=1)
        judged = judged.assign(relevance=rng.integers(0, 3, len(judged)))
        qrels = mc.read_qrels(
            judged[["q_id", "doc_id", "relevance"]].rename(columns={"q_id": "query_id"})
        )
        return qrels, runs

    # the same work on a small input first: the modules it imports are not counted
    small = data(2000)
    fusion_work(*small, method, "min-max", None, {}, tune, 5, "nDCG@10", mc.Conventions(), "f")
    del small
    qrels, runs = data(lines)
    gc.collect()
    pathlib.Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM
    before = _rss("VmRSS")
    fusion_work(
        qrels, runs, method, "min-max", None, {}, tune, 5, "nDCG@10", mc.Conventions(), "fused"
    )
    peak = _rss("VmHWM")
    return {
        "lines": 2 * lines,
        "depth": depth,
        "method": method,
        "tune": tune,
        "peak_mb": round((peak - before) / 1e6, 1),
        "bytes_per_row": round((peak - before) / (2 * lines), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", default="100000,400000")
    ap.add_argument("--methods", default="rrf,wsum")
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        lines, method, tune = args.one.split(":")
        print(json.dumps(one(int(lines), method, tune == "1", args.depth)))
        return
    for lines in map(int, args.lines.split(",")):
        for method in args.methods.split(","):
            for tune in (False, True):
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--one",
                        f"{lines}:{method}:{int(tune)}",
                        "--depth",
                        str(args.depth),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                print(out.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
