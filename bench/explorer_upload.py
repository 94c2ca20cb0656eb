"""Time a 1M-line run uploaded through the browser until the Overview shows its numbers.

    python bench/explorer_upload.py [--lines 1000000] [--queries 10000]

Makes a seeded TREC run and qrels under bench/data/explorer/, starts ``streamlit run
app.py`` on a free port, and drives Debian's Chromium (Playwright): upload the qrels on
the Data page, then the run (timed from handing the file to the drop zone until the
sidebar lists the run: transfer + parse), then open Overview (timed until the first
metric card shows: evaluation of the default measures + bootstrap CIs + drawing).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM_ARGS, streamlit_server  # noqa: E402


def make_data(out: Path, lines: int, queries: int, seed: int = 0) -> tuple[Path, Path]:
    """A seeded TREC run (``lines`` rows, two-decimal scores so ties occur) and qrels."""
    out.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = out / f"big{lines}.txt", out / f"qrels{queries}.txt"
    if run_path.exists() and qrels_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    depth = lines // queries
    q = np.repeat(np.arange(queries), depth)
    # distinct documents within a query (a run with duplicates is refused by default)
    d = (
        np.tile(np.arange(depth), queries) * 491
        + np.repeat(rng.integers(0, 50_000, queries), depth)
    ) % 50_000
    s = np.round(rng.random(len(q)) * 100, 2)
    ranks = np.tile(np.arange(1, depth + 1), queries)
    with run_path.open("w") as fh:
        fh.writelines(
            f"q{a} Q0 D{b} {r} {c:.2f} big\n" for a, b, r, c in zip(q, d, ranks, s, strict=True)
        )
    # 30 judged documents per query, drawn from the query's retrieved documents
    cols = np.argsort(rng.random((queries, depth)), axis=1)[:, :30]
    jd = np.take_along_axis(d.reshape(queries, depth), cols, axis=1).ravel()
    jq = np.repeat(np.arange(queries), cols.shape[1])
    rel = rng.choice(4, size=len(jq), p=[0.6, 0.2, 0.12, 0.08])
    with qrels_path.open("w") as fh:
        fh.writelines(f"q{a} 0 D{b} {c}\n" for a, b, c in zip(jq, jd, rel, strict=True))
    return qrels_path, run_path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=10_000)
    args = ap.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("chromium not found (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    qrels, run = make_data(ROOT / "bench" / "data" / "explorer", args.lines, args.queries)
    print(
        f"run: {run.name} {run.stat().st_size / 1e6:.1f} MB, qrels {qrels.stat().st_size / 1e6:.1f} MB"
    )
    with streamlit_server() as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(120_000)
        page.goto(base + "/data")
        page.wait_for_selector("h1")
        inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        t0 = time.perf_counter()
        inputs.nth(0).set_input_files(str(qrels))
        page.get_by_text(f"qrels: {args.queries:,} queries").wait_for()
        t1 = time.perf_counter()
        inputs.nth(1).set_input_files(str(run))
        page.get_by_text(f"runs: {run.stem}").wait_for()
        t2 = time.perf_counter()
        page.locator('[data-testid="stSidebarNav"] a', has_text="Overview").click()
        card = page.locator('[data-testid="stMetric"]', has_text=f"{run.stem} · RR")
        card.wait_for()
        t3 = time.perf_counter()
        value = card.locator('[data-testid="stMetricValue"]').inner_text()
        browser.close()
    print(f"qrels upload+parse: {t1 - t0:.2f} s")
    print(f"run upload+parse ({args.lines:,} lines): {t2 - t1:.2f} s")
    print(f"overview shown (7 measures, bootstrap CIs): {t3 - t2:.2f} s")
    print(f"run upload until overview: {t3 - t1:.2f} s (RR = {value})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
