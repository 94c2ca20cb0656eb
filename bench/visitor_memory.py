"""What a visitor's data and work take in the app's *anonymous* memory, against what the memory
gate (``ui/common/budget.py``) reserves for them.

    python bench/visitor_memory.py [--lines 100000,1000000,2000000,5000000] [--queries 1000]

The app keeps a visitor's runs, qrels and rankings in mapped files (``ui/common/store.py``):
their pages are the page cache, not the process's anonymous memory, which is what the gate
counts. Each case runs in a fresh process, first on a small input (so that the modules it
imports are not counted), then on the input measured: the peak of ``RssAnon`` (sampled every
2 ms on a thread) above its value just before the call, the anonymous memory left after it
(garbage collected, heap trimmed), and the seconds. Cases, on TREC runs of ``--lines`` lines
over ``--queries`` queries (``bench/make_data.py``'s generator):

- ``read whole``: ``mc.read_run`` of the upload's bytes, then moved to its files (the app's
  path below 64 MB); the gate reserves ``PARSE_PEAK_FACTOR`` x the text;
- ``read in batches``: the streamed reader straight into ``metrics_core.scale.spill.RunWriter``
  (the app's path from 64 MB); the gate reserves ``STREAM_PARSE_FIXED`` + 12 bytes a line;
- ``evaluate``: ``mc.evaluate`` on the mapped run with the app's ranker (the ranking moved to
  its files), or in blocks of 2,000,000 rows above that (the app's ``STREAM_ROWS``); the gate
  reserves ``WORK_FIXED`` + ``WORK_BYTES_PER_ROW`` a row, at most 2,000,000 rows.

Each line prints the measured peak beside the gate's reservation and says when the peak is
above it. Run it alone on the machine (on a shared one, under its benchmark lock).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MB = 1_000_000
MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@100", "nDCG@20", "Bpref", "P@5", "Judged@10"]
STREAM_ROWS = 2_000_000


def anon() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


class Peak:
    """The highest ``RssAnon`` seen since :meth:`start`, sampled every 2 ms on a thread."""

    def start(self) -> None:
        self.base = anon()
        self.peak = self.base
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, anon())
            self._stop.wait(0.002)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, anon())
        return self.peak - self.base


def data(lines: int, queries: int) -> tuple[Path, Path]:
    """A seeded run (``lines`` lines) and its qrels, written once under bench/data/visitor/."""
    from bench.make_data import generate, write_table

    out = ROOT / "bench" / "data" / "visitor"
    run, qrels = out / f"r{lines}_{queries}.run", out / f"q{queries}.qrels"
    if not run.exists() or not qrels.exists():
        out.mkdir(parents=True, exist_ok=True)
        run_table, qrels_table = generate(queries, max(lines // queries, 1))
        write_table(run_table, run)
        write_table(qrels_table, qrels)
    return run, qrels


def case(name: str, lines: int, queries: int) -> dict:
    """One case in this process (see the module docstring)."""
    import metrics_core as mc
    from metrics_core.io import open_run_stream
    from metrics_core.scale import spill
    from ui.common import budget

    budget.limit_arenas()
    folder = Path(tempfile.mkdtemp(prefix="ranklab-bench-", dir=spill.disk_folder()[0]))
    run_path, qrels_path = data(lines, queries)
    qrels = spill.spill_data(mc.read_qrels(qrels_path), folder / "q")
    counter = iter(range(10**6))

    def read_whole(text: bytes):
        return spill.spill_data(mc.read_run(text), folder / f"w{next(counter)}")

    def read_batches(text: bytes):
        with spill.RunWriter(folder / f"b{next(counter)}") as writer:
            for batch in open_run_stream(text).batches():
                writer.add(*(batch.column(c) for c in ("qid", "docid", "score", "line")))
            return writer.finish(name="run")

    def evaluate(run):
        if len(run) > STREAM_ROWS:
            return mc.evaluate(qrels, run, MEASURES, stream_rows=STREAM_ROWS)
        stem = folder / f"k{next(counter)}"
        ev = mc.evaluate(
            qrels,
            run,
            MEASURES,
            ranker=lambda c: spill.spill_ranking(mc.rank(qrels, run, cutoffs=c), stem),
        )
        spill.shed(ev.ranking)
        return ev

    full = run_path.read_bytes()
    small = full[: full.index(b"\n", 400_000) + 1]
    if name == "evaluate":  # warm up, then the input: the run read and mapped
        evaluate(read_whole(small))
        run = read_batches(full) if lines > STREAM_ROWS else read_whole(full)
        del full
        todo = lambda: evaluate(run)  # noqa: E731
        need = budget.WORK_FIXED + min(lines, budget.WORK_ROWS_MAX) * budget.WORK_BYTES_PER_ROW
    else:
        reader = read_whole if name == "read whole" else read_batches
        reader(small)
        todo = lambda: reader(full)  # noqa: E731
        need = budget.estimate(full, "run" if name == "read whole" else "run-stream")
    gc.collect()
    budget.trim()
    peak = Peak()
    peak.start()
    t0 = time.perf_counter()
    result = todo()
    seconds = time.perf_counter() - t0
    grew = peak.stop()
    base = peak.base
    del result
    gc.collect()
    budget.trim()
    return {
        "case": name,
        "lines": lines,
        "run MB": round(run_path.stat().st_size / MB, 1),
        "seconds": round(seconds, 2),
        "peak MB": round(grew / MB, 1),
        "left MB": round((anon() - base) / MB, 1),
        "reserved MB": round(need / MB, 1),
        "bytes a line": round(grew / lines, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", default="100000,1000000,2000000,5000000")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--cases", default="read whole,read in batches,evaluate")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a case in this process: NAME:LINES
    args = ap.parse_args()
    if args.one:
        name, lines = args.one.rsplit(":", 1)
        print(json.dumps(case(name, int(lines), args.queries)))
        return 0
    rows = []
    for lines in (int(x) for x in args.lines.split(",")):
        for name in args.cases.split(","):
            if name == "read whole" and lines > 2_000_000:
                continue  # the app reads these in batches
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    f"{name}:{lines}",
                    "--queries",
                    str(args.queries),
                ],
                capture_output=True,
                text=True,
                env=dict(os.environ, PYTHONPATH=str(ROOT)),
            )
            if out.returncode:
                print(f"{name} {lines:,}: failed\n{out.stderr[-2000:]}", flush=True)
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            flag = "  ABOVE the reservation" if row["peak MB"] > row["reserved MB"] else ""
            print(
                f"{name:16s} {lines:>9,} lines ({row['run MB']:6.1f} MB): {row['seconds']:5.2f} s, "
                f"peak +{row['peak MB']:6.1f} MB ({row['bytes a line']:5.1f} B a line), "
                f"left +{row['left MB']:5.1f} MB; the gate reserves {row['reserved MB']:6.1f} MB{flag}",
                flush=True,
            )
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
