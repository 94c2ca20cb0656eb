"""What a visitor's browser and the server spend before the leaderboard: this app beside a bare
Streamlit app doing the same steps, in the same Chromium, one visitor alone.

    python bench/bare_app_floor.py [--repeats 3] [--lines 100000] [--queries 1000]
                                   [--judgements 100000] [--visitors 25] [--json OUT]

The load test (``bench/load_test.py``) compares its p95 time to the leaderboard with the
shortest this machine allows (:func:`bench.load_test.board_floor`): one visitor's CPU seconds
before its board, measured alone, times the visitors ahead of the p95 one, over the cores.
Here the browsers share the server's cores, so that floor holds the browser's cost of drawing
the app's pages as well as the server's work. This script separates what is Streamlit's own:
a **bare app** (written to a temporary folder: a home page, a Data page with two upload boxes
that read the qrels and the runs with pandas and say what they read, an Overview page with one
table of P@10 per run) goes through exactly the load test's steps
(:func:`bench.load_test.visitor_session`: the same files, the same upload boxes, the same
captions and leaderboard waited for, the menu), and so does this app, each visitor alone on its
server, ``--repeats`` times each. Printed per app:
the median CPU seconds of each kind of process from the first upload to the leaderboard, and
the p95 floor that cost implies for ``--visitors`` visitors on this machine.

Nothing is timed against a target: the figures say about how much of the floor any Streamlit
page doing these steps costs on this machine, and how much this app's pages add to it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import load_test as lt  # noqa: E402
from bench.app_budget import start_server  # noqa: E402

#: The bare app: the load test's steps and nothing else (its captions are the ones the load
#: test waits for; its run names are the files' names, as this app's are).
BARE_APP = """
import pandas as pd
import streamlit as st

st.set_page_config(page_title="Bare", layout="wide")
QRELS = ["query", "iteration", "doc", "label"]
RUN = ["query", "q0", "doc", "rank", "score", "tag"]


def read(upload, names):
    return pd.read_csv(upload, sep=" ", header=None, names=names, dtype={"query": str, "doc": str})


def data():
    st.title("Data")
    left, right = st.columns(2)
    with left:
        upload = st.file_uploader("Qrels")
        if upload is not None:
            if st.session_state.get("qrels id") != upload.file_id:
                st.session_state["qrels"] = read(upload, QRELS)
                st.session_state["qrels id"] = upload.file_id
            qrels = st.session_state["qrels"]
            st.caption(f"{qrels['query'].nunique():,} queries, {len(qrels):,} judgements")
    with right:
        uploads = st.file_uploader("Runs", accept_multiple_files=True)
        runs = st.session_state.setdefault("runs", {})
        for upload in uploads or []:
            name = upload.name.rsplit(".", 1)[0]
            if name not in runs:
                runs[name] = read(upload, RUN)
        if runs:
            st.caption("Loaded: " + ", ".join(f"{n} ({len(r):,} lines)" for n, r in runs.items()))


def overview():
    st.title("Overview")
    qrels, runs = st.session_state.get("qrels"), st.session_state.get("runs") or {}
    if qrels is None or not runs:
        st.write("Load a qrels file and runs on the Data page.")
        return
    relevant = qrels[qrels["label"] > 0][["query", "doc"]].assign(hit=1)
    rows = []
    for name, run in runs.items():
        top = run.sort_values(["query", "score"], ascending=[True, False]).groupby("query").head(10)
        hits = top.merge(relevant, on=["query", "doc"], how="left")["hit"].fillna(0)
        rows.append({"run": name, "P@10": hits.groupby(top["query"].values).sum().mean() / 10})
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def home():
    st.title("Home")


st.navigation(
    [
        st.Page(home, title="Home", default=True),
        st.Page(data, title="Data", url_path="data"),
        st.Page(overview, title="Overview", url_path="overview"),
    ]
).run()
"""

#: The apps measured, in this order: the bare app (its folder made by :func:`main`), this app.
APPS = ("bare Streamlit app", "RankLab")


async def measure(app_dir: Path, args, first: int) -> list[dict]:
    """``args.repeats`` visitors, one after another, alone on a server of ``app_dir``'s app:
    each one's CPU seconds by kind of process from its first upload to its leaderboard."""
    from playwright.async_api import async_playwright

    proc, url = start_server(cwd=app_dir)
    lt.SERVER["gone"] = lambda: proc.poll() is not None
    out = []
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**lt.launch_args())
            warm = await lt.Visitor.open(browser, url, first + 99, args.timeout * 1000)
            await warm.close()  # the server's imports and first page, not counted
            for i in range(first, first + args.repeats):
                files = lt.make_visitor_data(i, args.lines, args.queries, args.judgements)
                r = await lt.alone_visit(
                    browser, url, proc.pid, files, i, args.timeout * 1000, ("Overview",)
                )
                if "CPU s before its board" not in r:
                    raise SystemExit(
                        f"no leaderboard for visitor {i}: {r.get('error') or r.get('pages')}"
                    )
                before = r["CPU s before its board"]
                spent = {k: v for k, v in before.items() if k != "everything else"}
                out.append(spent)
                print(f"  visitor {i}: board after {r.get('board s')} s, CPU s {spent}", flush=True)
            await browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return out


def medians(samples: list[dict]) -> dict[str, float]:
    """The median of each kind over the samples (a kind a sample lacks counts 0 there).

    >>> medians([{"server": 1.0}, {"server": 3.0, "chromium renderers": 2.0}, {"server": 2.0}])
    {'chromium renderers': 0.0, 'server': 2.0}
    """
    kinds = sorted({k for s in samples for k in s})
    return {k: round(statistics.median(s.get(k, 0.0) for s in samples), 2) for k in kinds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--judgements", type=int, default=100_000)
    ap.add_argument("--visitors", type=int, default=25, help="the crowd the floor is for")
    ap.add_argument("--timeout", type=int, default=300, help="seconds a step may take")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    cpus = os.cpu_count() or 1
    report: dict = {"machine": {"cpus": cpus}, "args": vars(args) | {"json": str(args.json)}}
    with tempfile.TemporaryDirectory(prefix="ranklab-bare-") as bare:
        (Path(bare) / "app.py").write_text(BARE_APP, encoding="utf-8")
        for n, (name, app_dir) in enumerate(zip(APPS, (Path(bare), ROOT), strict=True)):
            print(f"{name}:", flush=True)
            samples = asyncio.run(measure(app_dir, args, first=n * args.repeats))
            cost = medians(samples)
            report[name] = {
                "CPU s before the board (median)": cost,
                "samples": samples,
                "floor": lt.board_floor(cost, args.visitors, cpus),
            }
    print(f"\nFrom the first upload to the leaderboard, one visitor alone ({args.repeats} each):")
    for name in APPS:
        cost, floor = report[name]["CPU s before the board (median)"], report[name]["floor"]
        print(
            f"  {name:20s} {floor['CPU s a visitor']:5.2f} CPU s "
            f"({floor['browsers share']:.0%} the browser's); "
            f"p95 floor for {args.visitors} visitors on {cpus} cores: {floor['s']} s"
        )
        print(f"  {'':20s} {cost}")
    out = args.json or lt.OUT_DIR / "bare_app_floor.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"report: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
