"""The server's memory gate (:func:`ui.common.budget.work`): computations on visitors' data
reserve their temporaries, so that together they never take the process past the server's
budget. One that does not fit beside the work in flight waits its turn (never refused while
that work can still give memory back); with nothing in flight it is refused at once, in one
line; a wait past ``RANKLAB_WAIT_SECONDS`` is refused too. The server's resident memory is
pinned (``process_rss``) so that the arithmetic is the test's, not the test process's. No
timing is asserted: the threads are ordered by events."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from metrics_core.errors import InputError
from ui.common import budget

ROOT = Path(__file__).resolve().parents[2]

MB = budget.MB


@pytest.fixture
def server(monkeypatch):
    """A server of 200 MB whose resident memory is 100 MB: 100 MB free before reservations."""
    monkeypatch.setenv("RANKLAB_SERVER_MB", "200")
    monkeypatch.setattr(budget, "process_rss", lambda: 100 * MB)
    monkeypatch.setenv("RANKLAB_WAIT_SECONDS", "120")
    assert budget.reserved() == 0
    yield
    assert budget.reserved() == 0 and not budget._gate.line  # everything given back


def _until(condition, what: str) -> None:
    """Wait (on an event, bounded) until ``condition()`` holds."""
    tick = threading.Event()
    for _ in range(2_000):
        if condition():
            return
        tick.wait(0.01)
    raise AssertionError(f"never happened: {what}")


def _holder(need: int, entered: threading.Event, release: threading.Event, log: list, name: str):
    def run() -> None:
        with budget.work(need):
            log.append((name, "in", budget.reserved()))
            entered.set()
            release.wait(60)
            log.append((name, "out", budget.reserved()))

    return threading.Thread(target=run, daemon=True)


def test_work_that_does_not_fit_waits_for_the_work_in_flight_then_runs(server):
    log: list = []
    a_in, a_go, b_in, b_go = (threading.Event() for _ in range(4))
    a = _holder(60 * MB, a_in, a_go, log, "a")
    b = _holder(60 * MB, b_in, b_go, log, "b")
    a.start()
    assert a_in.wait(60)
    b.start()
    _until(lambda: len(budget._gate.line) == 1, "b waiting in line")
    assert not b_in.is_set()  # 60 + 60 MB do not fit in 100 MB: b waits, it is not refused
    assert budget.reserved() == 60 * MB
    a_go.set()
    assert b_in.wait(60)  # a's memory came back: b runs
    b_go.set()
    a.join(60)
    b.join(60)
    assert [(n, e) for n, e, _r in log] == [("a", "in"), ("a", "out"), ("b", "in"), ("b", "out")]
    assert max(r for _n, _e, r in log) <= 100 * MB  # never more reserved than was free


def test_work_that_fits_beside_the_work_in_flight_does_not_wait(server):
    log: list = []
    a_in, a_go, b_in, b_go = (threading.Event() for _ in range(4))
    a = _holder(40 * MB, a_in, a_go, log, "a")
    b = _holder(40 * MB, b_in, b_go, log, "b")
    a.start()
    assert a_in.wait(60)
    b.start()
    assert b_in.wait(60)  # 40 + 40 MB fit in 100 MB: both at once
    assert budget.reserved() == 80 * MB
    a_go.set()
    b_go.set()
    a.join(60)
    b.join(60)


def test_with_nothing_in_flight_work_that_cannot_fit_is_refused_in_one_line(server):
    with pytest.raises(InputError) as named:
        with budget.work(150 * MB, "bm25"):
            raise AssertionError("the work ran")
    line = named.value.plain()
    assert "evaluating bm25 would need about 150 MB" in line and "100 MB free" in line, line
    assert "ranklab evaluate" in line and "\n" not in line
    with pytest.raises(InputError) as unnamed:
        with budget.work(150 * MB):
            raise AssertionError("the work ran")
    assert "this computation would need about 150 MB" in unnamed.value.plain()


def test_a_wait_past_its_limit_is_refused_and_leaves_the_line(server, monkeypatch):
    monkeypatch.setenv("RANKLAB_WAIT_SECONDS", "0.2")
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(60 * MB, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    with pytest.raises(InputError, match="would need about 60 MB"):
        with budget.work(60 * MB, "dense"):
            raise AssertionError("the work ran past the budget")
    assert not budget._gate.line and budget.reserved() == 60 * MB
    a_go.set()
    a.join(60)


def test_work_nested_in_a_reservation_is_part_of_it(server):
    with budget.work(60 * MB):
        with budget.work(60 * MB):  # would not fit beside the outer one: it is the same work
            assert budget.reserved() == 60 * MB
    assert budget.reserved() == 0


def test_an_upload_waits_behind_work_in_flight_rather_than_being_refused(server, monkeypatch):
    monkeypatch.setattr(budget, "visitor_cost", lambda: 0)
    monkeypatch.setenv("RANKLAB_VISITOR_MB", "1000")
    data = b"q1 Q0 d1 1 1.0 x\n" * 200_000  # 3.4 MB of text: about 28 MB at its peak
    peak, _held = budget.estimate(data, "run")
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(100 * MB - peak // 2, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    parsed = threading.Event()

    def upload() -> None:
        with budget.reserve(data, "run", "big.txt"):
            log.append(("upload", "in", budget.reserved()))
            parsed.set()

    u = threading.Thread(target=upload, daemon=True)
    u.start()
    _until(lambda: len(budget._gate.line) == 1, "the upload waiting in line")
    assert not parsed.is_set()
    a_go.set()
    assert parsed.wait(60)
    a.join(60)
    u.join(60)
    assert [(n, e) for n, e, _r in log] == [("a", "in"), ("a", "out"), ("upload", "in")]


def _page_with_a_full_server():
    import streamlit as st

    from ui.common.cache import remember
    from ui.ranking.data import load_sample_into_state

    load_sample_into_state()
    run = st.session_state["ranklab.runs"]["bm25"]
    remember("test.table", None, lambda: len(run), held=(run,))
    st.write("built")


def test_a_page_computation_the_server_cannot_hold_ends_the_run_with_one_line(monkeypatch):
    """Not an evaluation (whose page shows its refusal with its other errors): the build's
    refusal ends the page's run with one line, never a traceback."""
    monkeypatch.setenv("RANKLAB_SERVER_MB", str(budget.process_rss() // MB - 1))
    monkeypatch.setattr(budget, "trim", lambda collect=True: None)
    at = AppTest.from_function(_page_with_a_full_server, default_timeout=120).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "this computation would need about" in errors[0], errors
    assert not any("built" in m.value for m in at.markdown)


class _State(dict):
    """A session's state as Streamlit keeps it: values, and the widgets' metadata (their
    callbacks, functions of the page's script) that its clear() leaves."""

    def __init__(self):
        super().__init__({"ranklab.runs": {"big": object()}})
        self._new_widget_state = type("WStates", (), {})()
        self._new_widget_state.widget_metadata = {"$$ID-board": lambda: None}


class _Session:
    def __init__(self, sid: str):
        self.id = sid
        self.session_state = _State()


class _Runtime:
    """Streamlit's runtime as the reclaimer reads it: the sessions its manager lists."""

    listed: list = []

    @classmethod
    def exists(cls) -> bool:
        return True

    @classmethod
    def instance(cls):
        return cls

    class _session_mgr:
        @staticmethod
        def list_sessions():
            return [type("Info", (), {"session": s})() for s in _Runtime.listed]


def test_a_session_the_server_dropped_but_something_still_holds_is_emptied(monkeypatch):
    """Streamlit's runtime loop keeps the last session it served, and a finished script thread
    its context: a dropped session's runs stayed in memory. Once the server no longer lists a
    session, its state is cleared; a listed one (open, or closed within its TTL) keeps it."""
    import streamlit.runtime

    monkeypatch.setattr(streamlit.runtime, "Runtime", _Runtime)
    monkeypatch.setattr(budget, "_seen_sessions", {})
    gone, open_ = _Session("gone"), _Session("open")
    _Runtime.listed = [gone, open_]
    assert budget.release_gone_sessions() == 0  # both listed: watched, untouched
    _Runtime.listed = [open_]
    held_elsewhere = gone  # what the runtime loop's variable does
    assert budget.release_gone_sessions() == 1
    assert held_elsewhere.session_state == {}  # the visitor's data is gone with the session
    assert held_elsewhere.session_state._new_widget_state.widget_metadata == {}  # and the page's
    assert open_.session_state["ranklab.runs"]  # the open session keeps its data
    assert budget.release_gone_sessions() == 0  # cleared once


def test_the_blas_limit_does_not_keep_the_thread_that_set_it(monkeypatch):
    """threadpoolctl remembers the thread that set OpenBLAS's limit; in the app that is a
    visitor's script thread, holding its session: it is forgotten once the limit is set."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from ui.common import blas

    if not any(info.get("internal_api") == "openblas" for info in threadpoolctl.threadpool_info()):
        pytest.skip("numpy's BLAS is not OpenBLAS")
    monkeypatch.setattr(blas, "_done", threading.Event())
    setter = threading.Thread(target=blas.limit_threads_once)
    setter.start()
    setter.join(60)
    assert threadpoolctl.OpenBLASController._SHARED_STATE.controlling_thread is not setter


def test_an_overview_waits_for_other_visitors_work_then_shows_its_numbers(server, sample):
    """In the app: the Overview's evaluation does not fit beside another visitor's work in
    flight, waits in line (not refused), and draws its leaderboard once that work ends."""
    from pathlib import Path

    qrels, runs, meta = sample
    root = Path(__file__).resolve().parents[2]
    saw_waiting = threading.Event()
    held, go = threading.Event(), threading.Event()

    def other_visitor() -> None:
        with budget.work(99 * MB):  # all but 1 MB of the free memory
            held.set()
            _until(lambda: len(budget._gate.line) > 0, "the Overview waiting in line")
            saw_waiting.set()
            go.wait(60)

    def release_when_waiting() -> None:
        saw_waiting.wait(120)
        go.set()

    holder = threading.Thread(target=other_visitor, daemon=True)
    holder.start()
    assert held.wait(60)
    threading.Thread(target=release_when_waiting, daemon=True).start()
    at = AppTest.from_file(str(root / "pages" / "overview.py"), default_timeout=120)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    holder.join(60)
    assert saw_waiting.is_set()  # the page's work waited for the other visitor's
    assert not at.exception, at.exception
    assert not [e.value for e in at.error]  # not refused
    assert at.dataframe, "no leaderboard drawn"


_THREAD_HEAP_SCRIPT = r"""
import ctypes, os, sys, threading
sys.path.insert(0, sys.argv[2])
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

# a 30 MB block freed, as the server's imports free blocks of megabytes: glibc then maps blocks
# only from 30 MB up and keeps a heap's free top up to 60 MB
block = libc.malloc(30_000_000)
libc.memset(block, 1, 30_000_000)
libc.free(block)
if sys.argv[1] == "limit":
    from ui.common import budget
    budget.limit_arenas()

def visit():  # a visitor's script thread: 40 MB of 100 kB blocks in its own heap, then freed
    blocks = [libc.malloc(100_000) for _ in range(400)]
    for b in blocks:
        libc.memset(b, 1, 100_000)
    for b in reversed(blocks):
        libc.free(b)

before = rss()
thread = threading.Thread(target=visit)
thread.start()
thread.join()
libc.malloc_trim(0)
print(rss() - before)
"""


def _thread_heap_kept(mode: str) -> int:
    import subprocess
    import sys

    env = dict(os.environ, MALLOC_ARENA_MAX="8")  # the thread gets a heap of its own
    for name in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_"):
        env.pop(name, None)
    out = subprocess.run(
        [sys.executable, "-c", _THREAD_HEAP_SCRIPT, mode, str(ROOT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def test_a_thread_heap_gives_its_freed_top_back():
    """A visitor's script runs on its own thread, in its own glibc heap; ``malloc_trim`` never
    shortens such a heap's top, and glibc keeps it when it is under a threshold that earlier
    large frees raised. With the app's allocator settings the freed top goes back."""
    if not Path("/proc/self/statm").exists():
        pytest.skip("no /proc: not Linux")
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt  # noqa: B018
    except (OSError, AttributeError):
        pytest.skip("not glibc")
    kept_default = _thread_heap_kept("default")
    if kept_default < 20 * budget.MB:  # this glibc gives it back on its own: nothing to show
        pytest.skip(f"this glibc kept {kept_default / budget.MB:.0f} MB without the settings")
    assert _thread_heap_kept("limit") < 5 * budget.MB
