"""Many visitors at once: the server's memory under its budget, given back after they leave, and
no visitor seeing another's data.

    python bench/load_test.py --visitors 8 [--lines 100000] [--queries 1000]
                              [--server-mb 900] [--visitor-mb 64] [--wait-after 200] [--json OUT]

Starts ``streamlit run app.py`` with the budget of ``ui/common/budget.py`` set by
``RANKLAB_SERVER_MB`` / ``RANKLAB_VISITOR_MB``, then drives ``--visitors`` Chromium visitors at
once (Playwright's async API, Debian's ``/usr/bin/chromium``; one browser context each, i.e. one
Streamlit session each). Every visitor has distinct data, made here and seeded by its number:
qrels of ``--queries`` queries and two runs of ``--lines`` lines whose run names and document
ids carry the visitor's number. Each visitor uploads its qrels and its two runs on the Data
page, opens the Overview through the menu and waits until the leaderboard lists its runs.

Reported (one line each, then a JSON object):

- the server's resident memory (RSS) before the visitors, at its peak (sampled every 0.25 s),
  when every visitor has its leaderboard, and after the visitors closed their tabs: every 10 s
  until ``--wait-after`` seconds (Streamlit drops a closed tab's session after
  ``server.disconnectedSessionTTL``; the app then releases data kept for a reload and trims);
- per visitor: whether its pages named its own runs and no other visitor's (the isolation
  check: the status line and the leaderboard's rows), or the one line that refused its upload;
- the upload's file sizes; what one visitor's data holds (RSS at the boards less idle, over the
  visitors whose runs loaded); after how many seconds RSS was back within
  :data:`BACK_WITHIN_MB` MB of idle.

While the visitors' computations do not all fit in the server's budget, some wait their turn
(``ui.common.budget.work``: a spinner says so) rather than pass the budget.

The browser runs on the same machine: on a small one, many visitors at once take minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.app_budget import rss_mb, start_server  # noqa: E402
from tests.e2e.conftest import CHROMIUM_ARGS  # noqa: E402

DATA_DIR = ROOT / "bench" / "data" / "load"
#: Memory is "back" when the server's RSS is within this many MB of its idle size (issue 28).
BACK_WITHIN_MB = 50


def make_visitor_data(i: int, lines: int, queries: int) -> tuple[Path, Path, Path]:
    """Visitor ``i``'s qrels and two runs (``v{i}a``, ``v{i}b``): ids that carry ``i``, so data
    shown to another visitor is seen. Written once under bench/data/load/."""
    out = DATA_DIR / f"v{i:02d}_{lines}_{queries}"
    qrels, run_a, run_b = out / "qrels.txt", out / f"v{i:02d}a.txt", out / f"v{i:02d}b.txt"
    if qrels.exists() and run_a.exists() and run_b.exists():
        return qrels, run_a, run_b
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1000 + i)
    depth = max(lines // queries, 1)
    docs = 40 * depth
    q = np.repeat(np.arange(queries), depth)
    offset = rng.integers(0, docs, queries)  # each query's documents; run b shifted from run a's
    for path, tag, shift in ((run_a, f"v{i:02d}a", 0), (run_b, f"v{i:02d}b", 21)):
        d = (np.tile(np.arange(depth), queries) * 7 + np.repeat(offset + shift, depth)) % docs
        s = rng.random(len(q)) * 20
        with path.open("w") as fh:
            fh.writelines(
                f"v{i:02d}-q{a:05d} Q0 v{i:02d}-clueweb12-{b:07d}-doc {r} {c:.6f} {tag}\n"
                for a, b, r, c in zip(
                    q, d, np.tile(np.arange(1, depth + 1), queries), s, strict=True
                )
            )
    # 30 judgements a query, among the documents both runs retrieve
    jd = (np.arange(30)[None, :] * 14 + offset[:, None]) % docs
    rel = rng.choice(4, size=jd.shape, p=[0.6, 0.2, 0.12, 0.08])
    with qrels.open("w") as fh:
        fh.writelines(
            f"v{i:02d}-q{a:05d} 0 v{i:02d}-clueweb12-{b:07d}-doc {c}\n"
            for a in range(queries)
            for b, c in zip(jd[a], rel[a], strict=True)
        )
    return qrels, run_a, run_b


class Sampler:
    """The server's RSS every 0.25 s in a thread: its peak since the last :meth:`mark`."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except Exception:  # the server is gone: the report says so
                return
            time.sleep(0.25)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(2)


SETTLED_JS = "() => !document.querySelector('[data-testid=stStatusWidget]')"
NAMES = re.compile(r"\bv(\d\d)[ab]\b|\bv(\d\d)-")


async def settle(page, timeout_ms: int) -> None:
    await page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=timeout_ms)
    quiet = 0
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        busy = await page.locator('[data-testid="stStatusWidget"]').count() > 0
        quiet = 0 if busy else quiet + 1
        if quiet >= 3:
            return
        await page.wait_for_timeout(250)
    raise TimeoutError("the app kept running")


async def drop(page, box, files: list[Path], shown, timeout_ms: int, tries: int = 3) -> None:
    """Hand ``files`` to an upload box until ``shown`` appears (a file handed over while the
    page reruns can be lost with the widget it was given to: handed over again)."""
    for attempt in range(tries):
        await box.set_input_files([str(f) for f in files])
        try:
            await shown.first.wait_for(
                timeout=timeout_ms if attempt == tries - 1 else min(timeout_ms, 60_000)
            )
            return
        except Exception:
            if attempt == tries - 1:
                raise
            await settle(page, timeout_ms)


async def visitor(
    browser, url: str, i: int, files: tuple[Path, Path, Path], timeout_ms: int
) -> dict:
    """One visitor: upload, open the Overview, check what the pages name."""
    qrels, run_a, run_b = files
    own = {f"{i:02d}"}
    out: dict = {"visitor": i}
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    page.set_default_timeout(timeout_ms)
    out["context"] = context
    t0 = time.perf_counter()
    try:
        await page.goto(url + "/data")
        await settle(page, timeout_ms)
        await page.wait_for_timeout(1500)  # the first runs (the address gets its token) are over
        await settle(page, timeout_ms)
        boxes = page.locator(
            '[data-testid="stMain"] [data-testid="stFileUploader"] input[type="file"]'
        )
        out["stage"] = "qrels"
        await drop(
            page,
            boxes.nth(0),
            [qrels],
            page.get_by_text(re.compile(r"queries, [\d,]+ judgements")),
            timeout_ms,
        )
        await settle(page, timeout_ms)
        out["stage"] = "runs"
        await drop(
            page,
            boxes.nth(1),
            [run_a, run_b],
            page.get_by_text(re.compile(rf"Loaded: v{i:02d}a \(|could not|would need about")),
            timeout_ms,
        )
        await settle(page, timeout_ms)
        refused = page.locator('[data-testid="stAlertContentError"]')
        if await refused.count() and (await refused.first.inner_text()).strip():
            out["refused"] = (await refused.first.inner_text()).strip()
        main_text = await page.locator('[data-testid="stMain"]').inner_text()
        out["stage"] = "overview"
        link = page.locator('[data-testid="stSidebarNav"] a:has(span[label="Overview"])').first
        await link.click()
        await settle(page, timeout_ms)
        if "refused" not in out:
            rows = page.locator(
                '[data-testid="stMain"] [data-testid="stDataFrame"] [role="row"]',
                has_text=f"v{i:02d}a",
            )
            await rows.first.wait_for(state="attached")
        overview_text = await page.locator('[data-testid="stMain"]').inner_text()
        grid_rows = await page.locator('[data-testid="stDataFrame"] [role="row"]').all_inner_texts()
        seen = {
            a or b
            for a, b in NAMES.findall(
                main_text + "\n" + overview_text + "\n" + "\n".join(grid_rows)
            )
        }
        out["seconds"] = round(time.perf_counter() - t0, 1)
        out["own runs shown"] = own <= seen or "refused" in out
        out["others shown"] = sorted(seen - own)
    except Exception as exc:  # reported, not raised: the other visitors go on
        out["error"] = (
            f"{out.get('stage', 'start')}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        )
        try:
            shot = DATA_DIR / f"error_v{i:02d}.png"
            await page.screenshot(path=str(shot), full_page=True)
            out["screenshot"] = str(shot)
        except Exception:  # the page is gone too
            pass
    return out


async def warm_up(url: str, timeout_ms: int) -> dict:
    """One small visitor before the measurement: the server imports the pages' libraries on its
    first visit (about 150 MB that every later visitor shares); "idle" is measured after it."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            out = await visitor(browser, url, 99, make_visitor_data(99, 2_000, 20), timeout_ms)
            ctx = out.pop("context", None)
            if ctx is not None:
                await ctx.close()
            return out
        finally:
            await browser.close()


async def drive(
    url: str, visitors: int, lines: int, queries: int, timeout_ms: int, sampler: Sampler
) -> list:
    from playwright.async_api import async_playwright

    files = [make_visitor_data(i, lines, queries) for i in range(visitors)]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            results = await asyncio.gather(
                *(visitor(browser, url, i, files[i], timeout_ms) for i in range(visitors))
            )
            sampler.at_boards = rss_mb(sampler.pid)
            for r in results:  # the visitors close their tabs
                ctx = r.pop("context", None)
                if ctx is not None:
                    await ctx.close()
        finally:
            await browser.close()
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--visitors", type=int, default=8)
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--server-mb", type=int, default=900)
    ap.add_argument("--visitor-mb", type=int, default=64)
    ap.add_argument(
        "--wait-after", type=int, default=200, help="seconds of RSS readings after the tabs close"
    )
    ap.add_argument("--timeout", type=int, default=900, help="seconds a visitor may take")
    ap.add_argument("--json", type=Path, help="write the report here too")
    args = ap.parse_args()

    files = [make_visitor_data(i, args.lines, args.queries) for i in range(args.visitors)][0]
    sizes = {p.name: round(p.stat().st_size / 1e6, 2) for p in files}
    proc, url = start_server(
        {"RANKLAB_SERVER_MB": str(args.server_mb), "RANKLAB_VISITOR_MB": str(args.visitor_mb)}
    )
    report: dict = {
        "visitors": args.visitors,
        "lines": args.lines,
        "files MB (visitor 0)": sizes,
        "server budget MB": args.server_mb,
        "visitor budget MB": args.visitor_mb,
        "cpus": os.cpu_count(),
    }
    try:
        import urllib.request

        with urllib.request.urlopen(url + "/data", timeout=30):
            pass
        report["rss fresh MB"] = round(rss_mb(proc.pid), 1)
        warm = asyncio.run(warm_up(url, args.timeout * 1000))
        if "error" in warm:
            report["warm-up error"] = warm["error"]
        time.sleep(5)
        report["rss idle MB"] = round(rss_mb(proc.pid), 1)
        sampler = Sampler(proc.pid)
        sampler.at_boards = 0.0
        t0 = time.perf_counter()
        results = asyncio.run(
            drive(url, args.visitors, args.lines, args.queries, args.timeout * 1000, sampler)
        )
        report["drive s"] = round(time.perf_counter() - t0, 1)
        report["rss at boards MB"] = round(sampler.at_boards, 1)
        report["rss peak MB"] = round(sampler.peak, 1)
        report["server alive"] = proc.poll() is None
        after = {}
        closed = time.perf_counter()
        while time.perf_counter() - closed < args.wait_after and proc.poll() is None:
            time.sleep(10)
            after[int(time.perf_counter() - closed)] = round(rss_mb(proc.pid), 1)
            print(
                f"  {list(after)[-1]:>4} s after the tabs closed: {list(after.values())[-1]} MB",
                flush=True,
            )
        sampler.stop()
        report["rss after close MB"] = after
        report["rss peak MB"] = round(max(sampler.peak, report["rss peak MB"]), 1)
        report["isolated"] = all(not r.get("others shown") for r in results if "error" not in r)
        report["own runs shown"] = sum(bool(r.get("own runs shown")) for r in results)
        report["refused"] = [r["refused"] for r in results if "refused" in r]
        loaded = args.visitors - len(report["refused"])
        if loaded:  # what one visitor's data holds in the server, its pages drawn
            report["per visitor MB"] = round(
                (report["rss at boards MB"] - report["rss idle MB"]) / loaded, 1
            )
        back = [t for t, mb in after.items() if mb <= report["rss idle MB"] + BACK_WITHIN_MB]
        report[f"back within {BACK_WITHIN_MB} MB of idle after s"] = back[0] if back else None
        report["errors"] = [r["error"] for r in results if "error" in r]
        report["visitor seconds"] = [r.get("seconds") for r in results]
    finally:
        proc.terminate()
        proc.wait(20)
    last = list(report.get("rss after close MB", {}).values())
    print(
        f"visitors: {args.visitors} x (qrels + 2 runs of {args.lines:,} lines; visitor 0's files {sizes} MB)"
    )
    print(
        f"RSS idle {report.get('rss idle MB')} MB; at the boards {report.get('rss at boards MB')} MB; "
        f"peak {report.get('rss peak MB')} MB (budget {args.server_mb} MB); "
        f"{args.wait_after} s after the tabs closed {last[-1] if last else '?'} MB; per visitor "
        f"{report.get('per visitor MB')} MB; back within {BACK_WITHIN_MB} MB of idle after "
        f"{report.get(f'back within {BACK_WITHIN_MB} MB of idle after s')} s"
    )
    print(
        f"isolation: {'held' if report.get('isolated') else 'BROKEN'}; own runs shown to "
        f"{report.get('own runs shown')} of {args.visitors}; refused {len(report.get('refused', []))}; "
        f"errors {len(report.get('errors', []))}"
    )
    print(json.dumps(report, indent=1, default=str))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return (
        0
        if report.get("isolated") and not report.get("errors") and report.get("server alive")
        else 1
    )


if __name__ == "__main__":
    raise SystemExit(main())
