"""Fixtures of the real-browser tests: Debian's Chromium driven by Playwright, and
``streamlit run app.py`` started as a subprocess on a free port.

Skipped cleanly when ``chromium`` is not on PATH (``.ci/run`` installs Debian's package)
or Playwright is not installed; nothing downloads a browser.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
STARTUP_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(env_changes: dict | None = None):
    """A fresh ``streamlit run app.py`` on 127.0.0.1; yields its base URL, stops it
    afterwards. ``env_changes``: environment variables to set (a value of None unsets)."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    # one server serves a whole test module's sessions one after another (each kept for a
    # reload after it ends): a budget larger than a 1 GB host's, unless a test sets its own
    # (the load test, tests/e2e/test_visitors_browser.py, runs under its own budget)
    env.setdefault("RANKLAB_SERVER_MB", "4000")
    env.setdefault("RANKLAB_VISITOR_MB", "512")
    for key, value in (env_changes or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    cmd = [
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
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{out[-3000:]}")
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("streamlit did not become healthy in time")
            time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout:
            proc.stdout.close()


E2E_DIR = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Every browser test is marked ``e2e`` (the README's quick tier,
    ``-m "not e2e and not slow"``, leaves them out), runs in one process of
    ``pytest -n 2 --dist loadgroup`` (the group ``browser``: one Chromium and one app server
    at a time, the other core left to the other tests), and may run up to twice more when it
    fails.

    A real Chromium drives a real server on a machine whose cores are shared (CI runs on two),
    so a page can render after an assertion gave up waiting. A rerun is printed in pytest's
    summary line ("N rerun") and in its report (``R``); a real defect fails all three runs.
    Reruns need ``pytest-rerunfailures`` (in requirements-dev.txt); without it they are off.
    """
    reruns = config.pluginmanager.hasplugin("rerunfailures")
    group = config.pluginmanager.hasplugin("xdist")
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if group:
                item.add_marker(pytest.mark.xdist_group("browser"))
            if reruns:
                item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=2))


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture(scope="module")
def _fresh_servers():
    """Fresh servers, each started while the test before runs (a server's start is seconds
    of CPU): ``take()`` gives one nobody has opened a page on, and starts the next."""
    starter = ThreadPoolExecutor(max_workers=1)

    def start():
        servers = streamlit_server()
        return servers, servers.__enter__()

    ahead = [starter.submit(start)]

    def take():
        ready = ahead.pop()
        ahead.append(starter.submit(start))
        return ready.result()

    try:
        yield take
    finally:
        for future in ahead:
            with contextlib.suppress(Exception):
                future.result()[0].__exit__(None, None, None)
        starter.shutdown()


@pytest.fixture
def fresh_server(_fresh_servers):
    """The address of a freshly started app server, its first page still to be opened (a
    server of its own for this test, stopped after it)."""
    servers, url = _fresh_servers()
    try:
        yield url
    finally:
        servers.__exit__(None, None, None)


@pytest.fixture(scope="module")
def server():
    """One app server for a test module: its tests open their own browser contexts (their
    own sessions), one after another; starting a server takes seconds on two busy cores."""
    with streamlit_server() as url:
        yield url


@pytest.fixture
def new_page(browser):
    """A factory of pages, each in its own browser context: ``new_page(width, height,
    locale="es-ES")`` (the browser's language, as ``navigator.language`` and the
    ``Accept-Language`` header give it). The contexts close after the test."""
    contexts = []

    def make(width: int = 1280, height: int = 800, locale: str | None = None):
        options = {"viewport": {"width": width, "height": height}, "accept_downloads": True}
        if locale:
            options["locale"] = locale
        context = browser.new_context(**options)
        contexts.append(context)
        pg = context.new_page()
        pg.set_default_timeout(60_000)
        return pg

    try:
        yield make
    finally:
        for context in contexts:
            context.close()
