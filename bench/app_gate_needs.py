"""What the app's computations take at their peak, per unit of their input: the needs that the
sections' data modules reserve in the app's memory gate (``ui.common.budget.work``).

Usage: python bench/app_gate_needs.py [--cases NAME,NAME] [--sizes SMALL,LARGE]

Each case runs, in a fresh process, once on a small input (so the modules it imports are not
counted) and then on the input measured: the peak resident set during the call (``VmHWM``,
reset before it) minus the resident set just before it (the input already built). Two sizes
give the cost per unit (the slope) and the fixed part; the report prints both, and the
largest cost per unit seen. Run it with no other measurement at the same time (for example
every measurement under one ``flock`` lock file).
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _rss(field: str) -> int:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


# --- the cases: build(n) -> (input, units); work(input) -----------------------------------------
def _codes(n: int, bits: int = 64):
    rng = np.random.default_rng(0)
    return rng.integers(0, 2, (n, bits)).astype(np.int8)


def codes_npy(n):
    buf = io.BytesIO()
    np.save(buf, _codes(n))
    data = buf.getvalue()
    return data, len(data)


def codes_csv(n):
    text = "\n".join(",".join(map(str, row)) for row in _codes(n)) + "\n"
    data = text.encode()
    return data, len(data)


def codes_pt(n):
    import torch

    buf = io.BytesIO()
    torch.save(torch.from_numpy(_codes(n)), buf)
    data = buf.getvalue()
    return data, len(data)


def read_codes(kind):
    def work(data):
        from metrics_core.io.codes import read_matrix

        read_matrix(data, "codes", name=f"codes.{kind}")

    return work


def torch_import(n):
    return None, 1


def do_torch_import(_):
    import torch  # noqa: F401


def hashing(n):
    """n queries against 10 n database codes of 64 bits, 10 classes."""
    rng = np.random.default_rng(0)
    q, db = _codes(n), _codes(10 * n)
    return (q, db, rng.integers(0, 10, n), rng.integers(0, 10, 10 * n)), 11 * n


def do_hashing(args):
    import torch  # noqa: F401  (imported by the page before: torch_import is its own case)

    from metrics_core.hashing import evaluate_hashing
    from ui.hashing.data import EVALUATION_BUDGET

    evaluate_hashing(*args, device="cpu", memory_budget=EVALUATION_BUDGET)


def scores(n):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    return (y, np.round(rng.random(n), 3), rng.integers(0, 5, n).astype(str)), n


def do_curve(args):
    from metrics_core import detection as det

    det.binary_curve(args[0], args[1])


def do_detection_bootstrap(args):
    from metrics_core import detection as det

    det.bootstrap_ci(args[0], args[1], ["auroc", "auprc", "tpr@0.05"], n_resamples=200, seed=0)


def do_per_group(args):
    from metrics_core import detection as det

    det.per_group_scores(args[0], args[1], args[2])


def do_calibration(args):
    from metrics_core import calibration as cal

    cal.calibration_report(args[0], args[1], 10, "uniform")


def do_calibration_bootstrap(args):
    from metrics_core import calibration as cal

    cal.bootstrap_calibration_ci(args[0], args[1], 10, "uniform", n_resamples=200, seed=0)


def scores_csv(n):
    y, p, _c = scores(n)[0]
    text = "label,score\n" + "".join(f"{a},{b}\n" for a, b in zip(y, p, strict=True))
    data = text.encode()
    return data, len(data)


def do_read_scores(data):
    from metrics_core.io.scores import read_scores

    read_scores(data, name="scores.csv")


def candidates(n):
    """n candidates, 20 a query."""
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(n // 20), 20).astype(str)
    return (q, rng.random(len(q)), rng.integers(0, 2, len(q)), None), len(q)


def do_dynamic_k(args):
    from metrics_core import dynamic_k as dk

    table = dk.prepare(*args)
    dk.dynamic_k_curve(table, None, 1, 10, 0.5)
    dk.dynamic_k_scores(table, 0.5, 1, 10, 0.5)


def history(n):
    """A history of n per-query values: 10 evaluations of n/30 queries and 3 measures."""
    import pandas as pd

    import metrics_core as mc
    from metrics_core.history import HistoryStore

    nq = max(n // 30, 1)
    qrels = {f"q{i}": {"d": 1} for i in range(nq)}
    store = HistoryStore(":memory:")
    rng = np.random.default_rng(0)
    for k in range(10):
        run = {f"q{i}": {"d": float(rng.random()), "e": float(rng.random())} for i in range(nq)}
        ev = mc.evaluate(qrels, run, ["RR", "nDCG@10", "P@5"]).renamed(f"r{k}")
        store.save_evaluations("suite", [ev], qrels=qrels, timestamp=pd.Timestamp("2024-01-01"))
    return store, store.row_counts()["query_values"]


def do_history_report(store):
    store.report(None, None, None, per_query=True)
    store.list_evaluations()


def do_history_export(store):
    store.to_bytes()


def history_file(n):
    store, values = history(n)
    data = store.to_bytes()
    return data, len(data)


def do_history_import(data):
    from metrics_core.history import HistoryStore

    HistoryStore.from_bytes(data)


def table(n):
    """A table of n rows, 6 columns (a per-query table)."""
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.random((n, 5)), columns=list("abcde"))
    frame.insert(0, "query", [f"q{i}" for i in range(n)])
    return frame, int(frame.memory_usage(deep=True).sum())


def do_export(frame):
    from metrics_core.report import format_table, provenance

    prov = provenance(None)
    for fmt in ("csv", "json", "markdown", "latex"):
        format_table(frame, fmt, prov=prov, title="t")


CASES = {
    "torch_import": (torch_import, do_torch_import, "import"),
    "codes_npy": (codes_npy, read_codes("npy"), "byte of the file"),
    "codes_csv": (codes_csv, read_codes("csv"), "byte of the file"),
    "codes_pt": (codes_pt, read_codes("pt"), "byte of the file"),
    "hashing": (hashing, do_hashing, "query or database code"),
    "read_scores": (scores_csv, do_read_scores, "byte of the file"),
    "curve": (scores, do_curve, "row"),
    "detection_bootstrap": (scores, do_detection_bootstrap, "row"),
    "per_group": (scores, do_per_group, "row"),
    "calibration": (scores, do_calibration, "row"),
    "calibration_bootstrap": (scores, do_calibration_bootstrap, "row"),
    "dynamic_k": (candidates, do_dynamic_k, "row"),
    "history_report": (history, do_history_report, "per-query value"),
    "history_export": (history, do_history_export, "per-query value"),
    "history_import": (history_file, do_history_import, "byte of the file"),
    "export": (table, do_export, "byte of the table"),
}
#: (small, large) input sizes of each case.
SIZES = {
    "torch_import": (1, 1),
    "codes_npy": (20_000, 200_000),
    "codes_csv": (5_000, 50_000),
    "codes_pt": (20_000, 200_000),
    "hashing": (500, 4_000),
    "history_report": (30_000, 300_000),
    "history_export": (30_000, 300_000),
    "history_import": (30_000, 300_000),
    "export": (20_000, 200_000),
}
DEFAULT_SIZES = (200_000, 2_000_000)


def one(case: str, n: int) -> dict:
    build, work, unit = CASES[case]
    if case != "torch_import":
        if case in ("codes_pt", "hashing"):
            import torch  # noqa: F401  (torch's import is a case of its own)
        small, _ = build(max(n // 20, 10))
        work(small)
        del small
    data, units = build(n)
    gc.collect()
    pathlib.Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM
    before = _rss("VmRSS")
    work(data)
    peak = _rss("VmHWM") - before
    return {"case": case, "n": n, "units": units, "unit": unit, "peak_mb": round(peak / 1e6, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        case, n = args.one.split(":")
        print(json.dumps(one(case, int(n))))
        return
    for case in args.cases.split(","):
        got = []
        for n in dict.fromkeys(SIZES.get(case, DEFAULT_SIZES)):
            out = subprocess.run(
                [sys.executable, __file__, "--one", f"{case}:{n}"],
                capture_output=True,
                text=True,
            )
            if out.returncode:
                print(json.dumps({"case": case, "n": n, "error": out.stderr[-400:]}), flush=True)
                break
            got.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(got[-1]), flush=True)
        if len(got) == 2 and got[1]["units"] > got[0]["units"]:
            (a, b) = got
            slope = (b["peak_mb"] - a["peak_mb"]) * 1e6 / (b["units"] - a["units"])
            fixed = a["peak_mb"] - slope * a["units"] / 1e6
            most = max(g["peak_mb"] * 1e6 / g["units"] for g in got)
            print(
                json.dumps(
                    {
                        "case": case,
                        "bytes_per_unit": round(slope, 1),
                        "fixed_mb": round(fixed, 1),
                        "most_bytes_per_unit": round(most, 1),
                        "unit": a["unit"],
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
