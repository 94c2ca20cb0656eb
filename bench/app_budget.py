"""The app's hosting budget, measured on a real server in Chromium (Playwright).

    python bench/app_budget.py [--lines 1000000] [--queries 10000] [--repeat 10]
                               [--upload-repeat 3] [--routes data overview] [--upload-only]

1. **Server memory**: start ``streamlit run app.py``, load the sample on the Data page,
   then visit every page but Hash codes through the menu (one browser session); the
   resident set size (RSS) of the server process is read after each page, and whether
   torch was loaded (``libtorch`` in ``/proc/PID/maps``).
2. **A 1 M-line upload to the leaderboard**: with a seeded qrels loaded, hand a 1 M-line run
   (bench/explorer_upload.py's data) to a drop zone and time until the Overview's
   leaderboard grid has painted it (its canvas, checked on every animation frame), then
   until the grid's accessible rows name the run and until the Overview has finished.
   Two routes (``--routes``): dropped on the Data page, the Overview opened from the menu
   as soon as the sidebar lists the run; or dropped on the Overview's own drop zone. A
   fresh server for each of ``--upload-repeat`` uploads.
3. **A slider redraw**: on Calibration (decision threshold) and Detection (threshold),
   move the slider one step with the keyboard and time until the page shows the new
   confusion counts (the slider's fragment reran and the browser drew it); the median
   of ``--repeat`` steps.

Prints one line per figure; BENCHMARKS.md ("App hosting budget") records them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: Menu titles of every page but Hash codes, in menu order.
PAGES = (
    "Home",
    "Data",
    "Overview",
    "Per query",
    "Breakdown",
    "Click feedback",
    "History",
    "Detection",
    "Calibration",
    "Dynamic K",
    "Compare systems",
    "Measures explained",
)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    env_extra: dict | None = None,
    prefix: list[str] | None = None,
    log: Path | None = None,
    startup_s: float = 90,
    cwd: Path = ROOT,
):
    """``streamlit run app.py`` (the ``app.py`` of ``cwd``: this repository's by default) on a
    free local port; returns (process, url).

    ``prefix``: a command that runs it (``prefix + [python, -m, streamlit, ...]``, e.g. one that
    puts it in a memory cgroup first); ``log``: a file for the server's output (else dropped)."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    env.pop("RANKLAB_HISTORY_STORE", None)  # the default: a history per session
    env.update(env_extra or {})
    out = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(
        [
            *(prefix or []),
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.fileWatcherType",
            "none",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=cwd,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    if log is not None:
        out.close()  # the server holds its own copy
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + startup_s
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("streamlit did not start") from None
            time.sleep(0.25)
    return proc, url


def rss_mb(pid: int) -> float:
    """Resident set size of the server process (MB, 10^6 bytes)."""
    import psutil

    return psutil.Process(pid).memory_info().rss / 1e6


def torch_loaded(pid: int) -> bool:
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def settle(page, timeout_ms: int = 120_000) -> None:
    """Wait until the app has finished running: a page title is shown and the "running"
    indicator has stayed away for 0.6 s (a run can start a moment after a click)."""
    page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=timeout_ms)
    quiet = 0
    for _ in range(timeout_ms // 200):
        busy = page.locator('[data-testid="stStatusWidget"]').count() > 0
        quiet = 0 if busy else quiet + 1
        if quiet >= 3:
            return
        page.wait_for_timeout(200)
    raise TimeoutError("the app kept running")


def open_page(page, title: str) -> None:
    """Open a page through the menu (the same browser session keeps its data)."""
    link = page.locator(f'[data-testid="stSidebarNav"] a:has(span[label="{title}"])').first
    if not link.is_visible():  # a narrow window: open the sidebar first
        page.locator('[data-testid="stExpandSidebarButton"]').first.click()
    link.click()
    settle(page)


def new_page(browser, timeout_ms: int):
    """(context, page) of a fresh browser session at 1280x800."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    return context, page


def open_data_page(page, url: str) -> None:
    page.goto(url + "/data")
    page.wait_for_selector("h1")
    settle(page)


def load_sample(page, url: str) -> None:
    open_data_page(page, url)
    page.get_by_role("button", name=re.compile("Load sample")).first.click()
    settle(page)


def memory_after_pages(browser, url: str, pid: int) -> dict:
    """RSS after the sample is loaded and after each page but Hash codes."""
    context, page = new_page(browser, 120_000)
    try:
        start = rss_mb(pid)
        load_sample(page, url)
        after = {"start": start, "sample loaded": rss_mb(pid)}
        for title in PAGES:
            open_page(page, title)
            after[title] = rss_mb(pid)
        return {"rss": after, "torch": torch_loaded(pid)}
    finally:
        context.close()


#: True once the Overview's leaderboard grid (the page's first data grid) has painted text
#: in its first data row: what the visitor sees. The grid is a canvas, so this reads its
#: pixels (dark text in the Run column, under the 35-px header). Elements Streamlit marks
#: stale (left from the page before, while the new run draws) are not counted.
BOARD_PAINTED_JS = """() => {
  const fresh = (e) => { const c = e.closest('[data-testid="stElementContainer"]');
                         return !c || c.getAttribute('data-stale') !== 'true'; };
  const main = document.querySelector('[data-testid="stMain"]');
  const title = main && [...main.querySelectorAll('h1')].find(fresh);
  if (!title || !title.textContent.includes('Overview')) return false;
  const grid = [...main.querySelectorAll('[data-testid="stDataFrame"]')].find(fresh);
  const c = grid && grid.querySelector('canvas[data-testid="data-grid-canvas"]');
  if (!c || c.height < 60 * devicePixelRatio) return false;
  const r = devicePixelRatio, w = Math.min(c.width, Math.round(160 * r));
  const px = c.getContext('2d').getImageData(0, Math.round(38 * r), w, Math.round(22 * r)).data;
  let dark = 0;
  for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && px[i] < 128 && px[i + 1] < 128 && px[i + 2] < 128) dark++;
  return dark > 20;
}"""

#: True once the sidebar lists the run ``name`` as loaded ("NAME (1,000,000 lines)").
LISTED_JS = """(name) => [...document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]')]
  .some(e => e.textContent.includes(name + ' ('))"""


def _until(page, js: str, arg=None, timeout_ms: int = 180_000) -> float:
    """Wait until ``js`` is true, checked on every animation frame (a locator's wait backs
    off to checks 0.5 s apart, which would add up to that much to a timing)."""
    page.wait_for_function(js, arg=arg, polling="raf", timeout=timeout_ms)
    return time.perf_counter()


def _board_lists(page, name: str) -> float:
    """Wait until the leaderboard grid's rows (the grid's accessible table, which the data
    grid fills after painting) include the run ``name``; returns when."""
    main = page.locator('[data-testid="stMain"]')
    main.locator('[data-testid="stDataFrame"] [role="row"]', has_text=name).first.wait_for(
        state="attached"
    )
    return time.perf_counter()


def time_upload(browser, url: str, lines: int, queries: int, route: str = "data") -> dict:
    """Seconds from handing a ``lines``-line run to a drop zone until the Overview's
    leaderboard shows it, the qrels being loaded already.

    ``route="data"``: dropped on the Data page; the Overview is opened from the menu as soon
    as the sidebar lists the run. ``route="overview"``: dropped on the Overview's own drop
    zone (shown there while no run is loaded). Returns the times until the run is listed
    (Data page), until the leaderboard is painted, until its rows are in the page's
    accessible table, and until the Overview has finished running.
    """
    from bench.explorer_upload import make_data

    qrels, run = make_data(ROOT / "bench" / "data" / "explorer", lines, queries)
    context, page = new_page(browser, 180_000)
    try:
        open_data_page(page, url)
        page.locator('[data-testid="stFileUploader"] input[type="file"]').nth(0).set_input_files(
            str(qrels)
        )
        page.get_by_text(re.compile(f"{queries:,} queries")).first.wait_for()  # what is loaded
        settle(page)
        if route == "overview":
            open_page(page, "Overview")
        drop = page.locator(
            '[data-testid="stMain"] [data-testid="stFileUploader"] input[type="file"]'
        )
        drop = (
            drop.nth(1) if route == "data" else drop.first
        )  # the Data page: qrels, runs, metadata
        out = {"run bytes": run.stat().st_size}
        t1 = time.perf_counter()
        drop.set_input_files(str(run))
        if route == "data":
            out["listed s"] = _until(page, LISTED_JS, run.stem) - t1
            link = page.locator('[data-testid="stSidebarNav"] a:has(span[label="Overview"])').first
            if not link.is_visible():
                page.locator('[data-testid="stExpandSidebarButton"]').first.click()
            link.click()
        out["painted s"] = _until(page, BOARD_PAINTED_JS) - t1
        out["rows s"] = _board_lists(page, run.stem) - t1
        settle(page)  # returns when the page has finished running
        page.locator('[data-testid="stMain"] h1', has_text="Overview").first.wait_for()
        out["finished s"] = time.perf_counter() - t1
        return out
    finally:
        context.close()


def time_slider(
    browser, url: str, page_title: str, slider_label: str, shown_js: str, repeat: int
) -> list:
    """Seconds from one ArrowRight on the slider until ``shown_js(value)`` is true."""
    context, page = new_page(browser, 60_000)
    try:
        open_data_page(page, url)
        open_page(page, page_title)
        slider = page.locator('[data-testid="stSlider"]', has_text=slider_label).first
        thumb = slider.locator('input[type="range"]').first  # the slider's keyboard control
        thumb.wait_for(state="attached")
        times = []
        for _ in range(repeat + 1):  # the first step warms the caches up; not counted
            before = thumb.input_value()
            thumb.focus()
            t0 = time.perf_counter()
            page.keyboard.press("ArrowRight")
            page.wait_for_function(shown_js, arg=before, polling="raf", timeout=60_000)
            times.append(time.perf_counter() - t0)
            settle(page)
        return times[1:]
    finally:
        context.close()


def shown_js(slider_label: str, caption: str, decimals: int) -> str:
    """A predicate for ``page.wait_for_function(..., arg=previous value)``: the slider named
    ``slider_label`` moved and the page shows ``caption`` followed by its new value (the
    table under it was redrawn), with the app no longer running."""
    return f"""(before) => {{
  const s = [...document.querySelectorAll('[data-testid="stSlider"]')].find(e => e.innerText.includes({slider_label!r}));
  const v = s && s.querySelector('input[type="range"]').value;
  if (!v || v === before) return false;
  const want = {caption!r} + Number(v).toFixed({decimals});
  return [...document.querySelectorAll('[data-testid="stMarkdown"]')].some(m => m.innerText.includes(want))
    && !document.querySelector('[data-testid="stStatusWidget"]');
}}"""


#: The confusion table was redrawn for the new slider value (its caption names it).
CAL_SHOWN = shown_js("Decision threshold", "At threshold ", 2)
DET_SHOWN = shown_js("Threshold", "score ≥ ", 4)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--upload-repeat", type=int, default=3, help="uploads timed per route")
    ap.add_argument(
        "--routes",
        nargs="+",
        choices=("data", "overview"),
        default=("data", "overview"),
        help="where the run is dropped: the Data page, or the Overview's own drop zone",
    )
    ap.add_argument("--skip-upload", action="store_true")
    ap.add_argument("--upload-only", action="store_true")
    args = ap.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("chromium not found (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM_ARGS

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        if not args.upload_only:
            proc, url = start_server()
            try:
                mem = memory_after_pages(browser, url, proc.pid)
                for k, v in mem["rss"].items():
                    print(f"rss after {k}: {v:.0f} MB")
                print(
                    f"server RSS, sample loaded, every page but Hash codes: max {max(mem['rss'].values()):.0f} "
                    f"MB; torch loaded: {mem['torch']}"
                )
                for title, label, js in (
                    ("Calibration", "Decision threshold", CAL_SHOWN),
                    ("Detection", "Threshold", DET_SHOWN),
                ):
                    t = time_slider(browser, url, title, label, js, args.repeat)
                    print(
                        f"{title} slider step until redrawn: median {statistics.median(t) * 1000:.0f} ms "
                        f"(min {min(t) * 1000:.0f}, max {max(t) * 1000:.0f}, {len(t)} steps)"
                    )
            finally:
                proc.terminate()
                proc.wait(20)
        if not args.skip_upload:
            for route in args.routes:
                for _ in range(args.upload_repeat):
                    proc, url = start_server()  # a fresh server each time: nothing cached
                    try:
                        up = time_upload(browser, url, args.lines, args.queries, route)
                        where = (
                            "dropped on the Data page, Overview opened once listed"
                            if route == "data"
                            else "dropped on the Overview"
                        )
                        listed = f"listed {up['listed s']:.2f} s; " if "listed s" in up else ""
                        print(
                            f"{args.lines:,}-line run ({up['run bytes'] / 1e6:.1f} MB), {where}: {listed}"
                            f"leaderboard painted {up['painted s']:.2f} s; its rows in the accessible table "
                            f"{up['rows s']:.2f} s; Overview finished {up['finished s']:.2f} s; "
                            f"server RSS {rss_mb(proc.pid):.0f} MB"
                        )
                    finally:
                        proc.terminate()
                        proc.wait(20)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
