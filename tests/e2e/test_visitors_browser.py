"""Hosted for many visitors, in real Chromium: the load test (bench/load_test.py) with a few
small visitors runs end to end and reports what the hosting targets are read from: each
visitor's leaderboard, the pages it opened, waits, refusals, isolation, the server's memory
(and its memory cgroup, or why there is none). A visitor's data and settings come back after a
reload and in another tab at the same address; the upload boxes say what is loaded. No timing
is asserted."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from tests.e2e.conftest import ROOT

pytestmark = pytest.mark.e2e
VISITORS = 2
PAGES = ("Overview", "Per query", "Compare systems", "Fusion")


#: Small visitors' files for the scripts below (the load test's defaults are 100,000 lines).
SMALL = ("--lines", "3000", "--queries", "30", "--judgements", "600", "--timeout", "240")


def _bench(script: str, out, *args: str) -> subprocess.CompletedProcess:
    """``python bench/SCRIPT ARGS --json OUT`` in Chromium (skipped without it)."""
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.async_api")
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_load_test_drives_a_few_visitors_and_reports_them(tmp_path):
    out = tmp_path / "load.json"
    done = _bench(
        "load_test.py",
        out,
        *("--visitors", str(VISITORS), *SMALL),
        *("--wait-after", "0", "--idle-wait", "0", "--settle", "1", "--no-warm-up"),
    )
    report = json.loads(out.read_text())
    tail = done.stdout[-3000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    assert "harness error" not in report, report["harness error"]
    s = report["summary"]
    # every visitor uploaded, got its leaderboard and opened every page, without trouble
    assert s["visitors"] == s["loaded"] == s["got their leaderboard"] == VISITORS, tail
    assert s["errors"] == [] and s["tracebacks"] == [] and s["refused"] == 0, s
    assert 0 < s["leaderboard p50 s"] <= s["leaderboard p95 s"]
    for v in report["visitors"]:
        assert list(v["pages"]) == list(PAGES), v
        assert all("timeout" not in p and p["shows its runs"] for p in v["pages"].values()), v
        assert v["pages"]["Fusion"]["fused run shown"], v
        assert v["upload end to board s"] > 0
    # isolation: each saw its own runs and ids, none another's
    assert s["isolated"] is True and s["saw their own data"] == VISITORS
    # the server: alive, its memory read before, at its peak and while the visitors sat idle
    assert report["server"]["alive at the end"] and not report["server"]["killed"]
    mem = report["memory MB"]
    assert mem["visitors idle"] > mem["idle"] > 0
    assert mem["peak during the visits"]["rss sampled"] >= mem["idle"]
    assert report["timeline"] and len(report["timeline"][0]) == len(report["timeline columns"])
    # in a memory cgroup, or the report says why not
    cg = report["cgroup"]
    assert cg["made"] or cg["why"], cg
    if cg["made"]:
        assert cg["limit MiB"] == 1024
        assert mem["peak during the visits"]["cgroup"] > 0
    assert {t["target"] for t in report["targets"]} >= {
        "the server never killed",
        "no visitor sees another's data",
    }
    # then one visitor alone: its CPU by process before its board and after, and the p95 floor
    # that CPU implies on this machine, said beside the p95 target
    alone = report["visitor alone"]
    before = alone["CPU s before its board"]
    assert alone["board s"] > 0 and before["server"] > 0 and before["chromium renderers"] > 0
    assert alone["CPU s after it"]["chromium renderers"] > 0, alone
    p95 = next(t for t in report["targets"] if "p95" in t["target"])
    assert "this machine allows no p95 under" in p95["seen"], p95


def test_the_bare_app_goes_through_the_load_tests_steps_beside_this_app(tmp_path):
    """bench/bare_app_floor.py: a bare Streamlit app and this app each take a visitor alone
    through the load test's steps to its leaderboard, and the report gives each one's CPU by
    process before the board and the p95 floor it implies (no timing asserted)."""
    out = tmp_path / "bare.json"
    done = _bench("bare_app_floor.py", out, "--repeats", "1", *SMALL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())
    for app in ("bare Streamlit app", "RankLab"):
        (sample,) = report[app]["samples"]  # one visitor reached its board
        cost = report[app]["CPU s before the board (median)"]
        assert cost == sample and cost["server"] > 0 and cost["chromium renderers"] > 0, cost
        floor = report[app]["floor"]
        assert floor["visitors"] == 24 and floor["s"] > 0, floor
        assert f"{app:20s}" in done.stdout


def _settle(page) -> None:
    page.locator('[data-testid="stMain"] h1').first.wait_for()
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000
    )
    page.wait_for_timeout(600)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000
    )


@pytest.mark.parametrize("lang, loaded", [("en", "Loaded: bm25 ("), ("es", "Cargado: bm25 (")])
def test_a_reload_and_a_new_tab_bring_the_data_back(server, new_page, lang, loaded):
    page = new_page(1280, 800)
    page.goto(f"{server}/data?lang={lang}")
    _settle(page)
    page.get_by_role(
        "button", name=re.compile("Load sample data|Cargar datos de ejemplo")
    ).first.click()
    _settle(page)
    page.get_by_text(loaded).first.wait_for()
    address = page.url
    assert re.search(r"[?&]s=[\w-]{16,}", address), address
    page.reload()
    _settle(page)
    page.get_by_text(loaded).first.wait_for()  # the runs box says what is loaded after the reload
    status = page.locator('[data-testid="stMain"]').inner_text()
    assert "bm25, dense, hybrid" in status
    other = new_page(800, 900)  # another tab (another session) at the same address
    other.goto(address)
    _settle(other)
    other.get_by_text(loaded).first.wait_for()
    # an address without the token: a new session, nothing loaded
    fresh = new_page(1280, 800)
    fresh.goto(f"{server}/data?lang={lang}")
    _settle(fresh)
    assert fresh.get_by_text(loaded).count() == 0
