"""The server's memory gate (:mod:`ui.common.budget`): computations on visitors' data reserve
what they need, admitted by what is free, in arrival order, in a line that always moves.

- Work that fits goes at once; work that does not waits for the work in flight, then runs.
- Work that could never fit (its need above what the server at rest can give) is refused at
  once, in one line naming the need, the limit and the command line.
- The first in line, with nothing in flight and its need not free (memory held by data at
  rest), is refused in one line, and the next one's turn comes; so is a wait past its limit.
- Strict arrival order: a small computation does not pass a larger one ahead of it; a visitor
  whose page was rerun while waiting keeps its place.
- Many simulated visitors whose needs together exceed the budget (some holding memory at
  rest, some nested, some waiting for another's result) all finish or are refused, in bounded
  time, and never more is reserved than is free.

The server's anonymous memory is pinned (``process_anon``) and the gate is fresh in each test,
so that the arithmetic is the test's, not the test process's. No timing is asserted: the
threads are ordered by events, and the time bounds are generous ceilings against a hang."""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from metrics_core.errors import InputError
from ui.common import budget

ROOT = Path(__file__).resolve().parents[2]

MB = budget.MB


class _Memory:
    """The server's anonymous memory as the test sets it: 100 MB at rest, plus ``at_rest``."""

    def __init__(self) -> None:
        self.at_rest = 0
        self.lock = threading.Lock()

    def __call__(self) -> int:
        with self.lock:
            return 100 * MB + self.at_rest


@pytest.fixture
def memory(monkeypatch):
    """A server of 200 MB whose anonymous memory is 100 MB: 100 MB free, 100 MB the most one
    computation can ever be given. A fresh gate; no heap trimming (nothing to give back)."""
    monkeypatch.setenv("RANKLAB_SERVER_MB", "200")
    monkeypatch.setenv("RANKLAB_WAIT_SECONDS", "120")
    monkeypatch.setattr(budget, "cgroup_limit", lambda: None)
    mem = _Memory()
    monkeypatch.setattr(budget, "process_anon", mem)
    monkeypatch.setattr(budget, "trim", lambda collect=True: None)
    monkeypatch.setattr(budget, "_gate", budget._Gate())
    assert budget.capacity() == 100 * MB
    yield mem
    assert budget.reserved() == 0 and not budget._gate.line  # everything given back
    assert not budget._gate.running


@pytest.fixture
def server(memory):
    return None


def _until(condition, what: str) -> None:
    """Wait (on an event, bounded) until ``condition()`` holds."""
    tick = threading.Event()
    for _ in range(3_000):
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
    _until(lambda: budget.waiting() == 1, "b waiting in line")
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


def test_work_that_could_never_fit_is_refused_at_once_in_one_line(server):
    """Over what the server at rest can give: refused before joining the line, even while
    other work is in flight (waiting would never help), naming the need, the limit and the
    command line."""
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(30 * MB, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    with pytest.raises(InputError) as named:
        with budget.work(150 * MB, "bm25"):
            raise AssertionError("the work ran")
    line = named.value.plain()
    assert "evaluating bm25 needs about 150 MB" in line, line
    assert "at most 100 MB" in line and "ranklab evaluate" in line and "\n" not in line
    assert not budget._gate.line  # it never waited
    with pytest.raises(InputError) as unnamed:
        with budget.work(150 * MB):
            raise AssertionError("the work ran")
    assert "this computation needs about 150 MB" in unnamed.value.plain()
    a_go.set()
    a.join(60)


def test_work_that_fits_an_idle_server_runs_whatever_one_visitor_uses(server):
    """No fixed share: one visitor may take what the server has free (here all of it)."""
    with budget.work(100 * MB, "a large run"):
        assert budget.reserved() == 100 * MB


def test_the_first_in_line_with_nothing_in_flight_is_refused_and_the_line_moves(memory):
    """Memory held at rest (uploads of visitors who wait), nothing in flight to give any
    back: the first in line is refused in one line instead of waiting for ever, and the next,
    whose need is free, runs."""
    memory.at_rest = 70 * MB  # 30 MB free
    with pytest.raises(InputError) as refused:
        with budget.work(60 * MB, "dense"):
            raise AssertionError("the work ran past the budget")
    line = refused.value.plain()
    assert "evaluating dense would need about 60 MB" in line and "30 MB free" in line, line
    assert "Try again" in line and "ranklab evaluate" in line
    with budget.work(20 * MB):
        assert budget.reserved() == 20 * MB


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


def test_an_upload_waits_behind_work_in_flight_rather_than_being_refused(server):
    data = b"q1 Q0 d1 1 1.0 x\n" * 200_000  # 3.4 MB of text: about 10 MB at its peak
    need = budget.estimate(data, "run")
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(100 * MB - need // 2, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    parsed = threading.Event()

    def upload() -> None:
        with budget.reserve(data, "run", "big.txt"):
            log.append(("upload", "in", budget.reserved()))
            parsed.set()

    u = threading.Thread(target=upload, daemon=True)
    u.start()
    _until(lambda: budget.waiting() == 1, "the upload waiting in line")
    assert not parsed.is_set()
    a_go.set()
    assert parsed.wait(60)
    a.join(60)
    u.join(60)
    assert [(n, e) for n, e, _r in log] == [("a", "in"), ("a", "out"), ("upload", "in")]


def test_an_upload_behind_a_stuck_first_in_line_is_read_first_and_the_first_then_runs(memory):
    """The first in line needs more than is free with nothing in flight: the memory at rest
    includes the bytes of uploads waiting behind it. Rather than refusing it, an upload behind
    it that fits is read first; it gives its bytes back, and the first runs. (Before: the
    first was refused -- two of 25 load-test visitors lost their runs while uploading.)"""
    data = b"q1 Q0 d1 1 1.0 x\n" * 200_000  # 3.4 MB of text: about 18 MB at its peak
    assert budget.estimate(data, "run") < 30 * MB
    memory.at_rest = 60 * MB  # 40 MB free of the 100 the server can give
    log: list = []
    h_in, h_go = threading.Event(), threading.Event()
    h = _holder(10 * MB, h_in, h_go, log, "h")  # in flight while the two arrive
    h.start()
    assert h_in.wait(60)
    first, go, threads = _in_order([("A", 45 * MB)])

    def upload() -> None:
        with budget.reserve(data, "run", "u.txt"):
            log.append(("upload", "in"))
            with memory.lock:
                memory.at_rest -= 20 * MB  # read: its bytes (and the widget's copy) go

    u = threading.Thread(target=upload, daemon=True)
    before = budget.waiting()
    u.start()
    _until(lambda: budget.waiting() > before, "the upload in line behind A")
    h_go.set()  # nothing in flight: A (45 MB) does not fit in 40; the upload (18) does
    _until(lambda: first == ["A"], "A runs once the upload gave its bytes back")
    assert ("upload", "in") in log
    go["A"].set()
    for t in [h, u, *threads]:
        t.join(60)


def test_an_upload_that_could_never_fit_is_refused_at_once_naming_the_file(server):
    data = b"q1 Q0 d1 1 1.0 x\n" * 3_000_000  # 51 MB of text read whole: 151 MB at its peak
    with pytest.raises(InputError) as refused:
        with budget.reserve(data, "run", "huge.txt"):
            raise AssertionError("read past the budget")
    line = refused.value.plain()
    assert line.startswith("huge.txt: reading it needs about 151 MB beside the file"), line
    assert "at most 49 MB" in line and "ranklab evaluate" in line  # 100 MB less the file's 51


def _in_order(names: list, sessions: dict | None = None):
    """Threads that each take ``need`` in turn, each one started once the one before waits in
    line (so their arrival order is the list's); each logs when it is admitted and holds its
    reservation until its own event is set."""
    log: list = []
    go = {name: threading.Event() for name, _need in names}
    threads = []
    for name, need in names:

        def run(name=name, need=need) -> None:
            if sessions:
                budget.state.session_id = lambda: sessions[threading.current_thread().name]
            with budget.work(need):
                log.append(name)
                go[name].wait(60)

        t = threading.Thread(target=run, name=name, daemon=True)
        before = budget.waiting()
        t.start()
        _until(lambda before=before: budget.waiting() > before, f"{name} in line")
        threads.append(t)
    return log, go, threads


def test_visitors_are_served_in_arrival_order(server):
    """A (90 MB) runs; B (50), C (10), D (50), E (10) arrive in that order. When A ends, B and
    C run (they fit together); D waits for B, and E, which would fit now, waits behind D:
    a larger computation is never passed over by smaller ones."""
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(90 * MB, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    order, go, threads = _in_order([("B", 50 * MB), ("C", 10 * MB), ("D", 50 * MB), ("E", 10 * MB)])
    assert order == []
    a_go.set()
    _until(lambda: order == ["B", "C"], "B and C running")
    _until(lambda: budget.waiting() == 2, "D and E waiting")
    assert budget.reserved() == 60 * MB  # E's 10 MB would fit: it waits behind D all the same
    go["B"].set()
    _until(lambda: order == ["B", "C", "D", "E"], "D, then E")
    for g in go.values():
        g.set()
    for t in [a, *threads]:
        t.join(60)
    assert order == ["B", "C", "D", "E"]


def test_a_waiter_shows_its_place_and_what_is_ahead(server):
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(90 * MB, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    order, go, threads = _in_order([("B", 50 * MB), ("C", 30 * MB), ("D", 20 * MB)])
    with budget._gate.lock:
        d = budget._gate.line[-1]
        place = budget._place(d)
    assert place[:3] == (3, 2, 80 * MB)  # third in line, behind 2 computations of 80 MB
    line = budget._wait_line(*place)
    assert "number 3 in line, behind 2 computations that need 80 MB" in line, line
    assert "yours is next" in budget._wait_line(1, 0, 0, None)
    assert budget._wait_line(2, 1, 5 * MB, 42.0).endswith("About 40 s to go.")
    assert budget._wait_line(2, 1, 5 * MB, 150.0).endswith("About 2 min to go.")
    a_go.set()
    for g in go.values():
        g.set()
    for t in [a, *threads]:
        t.join(60)


def test_a_visitor_whose_page_reran_while_waiting_keeps_its_place(server, monkeypatch):
    """Streamlit stops a waiting run when the visitor's page reruns (the note the page writes
    while it waits is where the stop is raised): the waiter leaves the line, and its next
    computation comes back to its place, ahead of those who came after it."""
    sessions = {"B": "visitor-b", "C": "visitor-c", "B again": "visitor-b"}
    monkeypatch.setattr(
        budget.state, "session_id", lambda: sessions.get(threading.current_thread().name, "")
    )
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(90 * MB, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)

    class Stopped(Exception):
        pass

    stop_b = threading.Event()
    real_show = budget._Waiting.show

    def show(self, text):  # what Streamlit does to a run it stops: raises at its next write
        if threading.current_thread().name == "B" and stop_b.is_set():
            raise Stopped
        real_show(self, text)

    monkeypatch.setattr(budget._Waiting, "show", show)
    out: list = []

    def first_b() -> None:
        try:
            with budget.work(60 * MB):
                out.append("B ran")
        except Stopped:
            out.append("B stopped")

    b = threading.Thread(target=first_b, name="B", daemon=True)
    b.start()
    _until(lambda: budget.waiting() == 1, "B in line")
    order, go, threads = _in_order([("C", 60 * MB)])
    stop_b.set()
    _until(lambda: out == ["B stopped"], "B's run stopped")
    assert budget.waiting() == 1  # C alone in line now
    order2, go2, threads2 = _in_order([("B again", 60 * MB)])
    with budget._gate.lock:
        assert [t.session for t in budget._gate.line] == ["visitor-b", "visitor-c"]
    a_go.set()
    _until(lambda: order2 == ["B again"], "B's rerun served first")
    assert order == []
    go2["B again"].set()
    _until(lambda: order == ["C"], "then C")
    go["C"].set()
    for t in [a, b, *threads, *threads2]:
        t.join(60)


def test_a_pages_next_computation_keeps_its_place_a_new_page_goes_to_the_back(server, monkeypatch):
    """A page's run is one arrival. B's Overview ran a first step (its evaluation) while C
    waited; B's next step on the same page (its statistics) comes back to B's place, ahead of
    C, instead of joining the back of the line (with 25 visitors, every step sent to the back
    made everyone's leaderboard come at the very end). A step of another page of B's is a new
    arrival, behind C."""
    who = {
        "B1": ("visitor-b", "overview"),
        "B2": ("visitor-b", "overview"),
        "B3": ("visitor-b", "compare"),
        "C": ("visitor-c", "overview"),
    }
    name = lambda: threading.current_thread().name  # noqa: E731
    monkeypatch.setattr(budget.state, "session_id", lambda: who.get(name(), ("", ""))[0])
    monkeypatch.setattr(budget.state, "page_id", lambda: who.get(name(), ("", ""))[1])
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(90 * MB, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    first, go1, t1 = _in_order([("B1", 60 * MB)])
    order, go, threads = _in_order([("C", 60 * MB)])
    a_go.set()
    _until(lambda: first == ["B1"], "B's first step runs")
    go1["B1"].set()  # B's first step ends; its page asks for the next at once
    t1[0].join(60)
    second: list = []
    b2_go = threading.Event()

    def b2() -> None:  # the page's next step: admitted at once, ahead of C who waits
        with budget.work(60 * MB):
            second.append("B2")
            b2_go.wait(60)

    t2 = [threading.Thread(target=b2, name="B2", daemon=True)]
    t2[0].start()
    _until(lambda: second == ["B2"], "B's second step runs before C")
    assert order == [] and budget.waiting() == 1  # C still in line
    third, go3, t3 = _in_order([("B3", 60 * MB)])  # B opens another page: a new arrival
    b2_go.set()
    _until(lambda: order == ["C"], "C before B's other page")
    assert third == []
    go["C"].set()
    _until(lambda: third == ["B3"], "then B's other page")
    go3["B3"].set()
    for t in [a, *t1, *threads, *t2, *t3]:
        t.join(60)


def test_memory_claimed_for_a_pages_next_step_holds_memory_not_the_line(server, monkeypatch):
    """When B's step ends, what it gave back stays claimed a moment for B's next step; C, who
    arrived after B, is admitted meanwhile when its need fits beside the claim. (A held door
    that stopped everyone served one page at a time: 25 visitors waited, the server's CPU at
    0.1-0.4 of a core, bench/load_test.py.)"""
    monkeypatch.setattr(budget, "CONTINUE_S", 60.0)  # the claim outlasts the test
    who = {"B1": "visitor-b", "B2": "visitor-b", "C": "visitor-c"}
    name = lambda: threading.current_thread().name  # noqa: E731
    monkeypatch.setattr(budget.state, "session_id", lambda: who.get(name(), ""))
    monkeypatch.setattr(budget.state, "page_id", lambda: "overview" if name() in who else "")
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(50 * MB, a_in, a_go, log, "a")  # another visitor's work, 50 MB
    a.start()
    assert a_in.wait(60)
    b1_in, b1_go = threading.Event(), threading.Event()
    b1 = _holder(40 * MB, b1_in, b1_go, log, "B1")
    b1.name = "B1"
    b1.start()
    assert b1_in.wait(60)  # B's first step runs beside A
    order, go, threads = _in_order([("C", 30 * MB)])  # 10 MB free: C waits
    b1_go.set()
    b1.join(60)
    with budget._gate.lock:
        assert budget._gate.door_held(budget._gate.line[0])[0] == 40 * MB  # B's claim
    assert order == []  # 50 MB free, 40 of them claimed for B: C still waits
    a_go.set()  # 100 MB free, 40 claimed: C's 30 MB fits beside the claim
    _until(lambda: order == ["C"], "C admitted while B's claim holds")
    done: list = []

    def b2() -> None:  # B's next step: its own claim is its own, 70 MB free
        with budget.work(40 * MB):
            done.append(budget.reserved())

    t = threading.Thread(target=b2, name="B2", daemon=True)
    t.start()
    t.join(60)
    assert done == [70 * MB]
    go["C"].set()
    for th in [a, *threads, t]:
        th.join(60)


def test_a_run_stopped_as_it_is_admitted_gives_its_memory_back(server, monkeypatch):
    """Streamlit may stop a visitor's run at the very moment its computation is admitted (the
    waiting note leaves the page there): the reservation goes back, the line goes on."""

    class Stopped(BaseException):  # as Streamlit's StopException
        pass

    def close(self):
        if threading.current_thread().name == "B":
            raise Stopped

    monkeypatch.setattr(budget._Waiting, "close", close)
    log: list = []
    a_in, a_go = threading.Event(), threading.Event()
    a = _holder(90 * MB, a_in, a_go, log, "a")
    a.start()
    assert a_in.wait(60)
    out: list = []

    def b() -> None:
        try:
            with budget.work(60 * MB):
                out.append("ran")
        except Stopped:
            out.append("stopped")

    t = threading.Thread(target=b, name="B", daemon=True)
    t.start()
    _until(lambda: budget.waiting() == 1, "B in line")
    a_go.set()
    t.join(60)
    a.join(60)
    assert out == ["stopped"] and budget.reserved() == 0
    with budget.work(100 * MB):  # all of it free again
        pass


def test_many_visitors_over_the_budget_all_finish_or_are_refused_never_hang(memory):
    """48 simulated visitors at once, whose needs together are ten times the budget: some
    could never fit, some hold memory at rest while they wait (their upload), some do nested
    work, some wait for a result another visitor's admitted work is building (as a page waits
    for the ranking its previous run is building: ``ui.ranking.data.rank_once``, whose build is
    registered only once admitted). Every one finishes or is refused, within a bounded time;
    never more is reserved than is free; and the line is left in strict arrival order: every
    ticket leaves it (admitted, or refused with nothing in flight) from its head, each after
    every ticket that entered before it."""
    left_line: list = []  # (arrival number, whether it was the head) of each ticket leaving

    class Line(list):
        def remove(self, ticket) -> None:
            left_line.append((ticket.seq, bool(self) and self[0] is ticket))
            super().remove(ticket)

    budget._gate.line = Line()
    rng = random.Random(7)
    outcomes: dict[int, str] = {}
    over: list = []
    lock = threading.Lock()
    building: dict[int, threading.Event] = {}  # shared builds, registered by admitted work

    def visitor(i: int, need: int, rest: int, nested: bool, shared: int) -> None:
        with lock:
            memory.at_rest += rest  # its upload, held while it waits
        try:
            with budget.work(need * MB, f"run{i}"):
                if budget.reserved() > 100 * MB:
                    over.append(budget.reserved())
                if nested:
                    with budget.work(need * MB):
                        pass
                with lock:
                    running = building.get(shared)
                    mine = running is None
                    if mine:
                        running = building[shared] = threading.Event()
                if mine:  # builds it (a little work), then hands it over
                    threading.Event().wait(rng.random() * 0.03)
                    running.set()
                else:  # waits for another admitted visitor's build
                    assert running.wait(60), "waited for a build that never ends"
            outcomes[i] = "ran"
        except InputError as exc:
            outcomes[i] = "refused: " + exc.plain()
        finally:
            with lock:
                memory.at_rest -= rest

    plans = [
        (
            i,
            rng.choice([5, 10, 20, 40, 60, 90, 120]),  # 120 MB could never fit
            rng.choice([0, 0, 0, 2, 5]),
            rng.random() < 0.3,
            rng.randrange(6),
        )
        for i in range(48)
    ]
    threads = [threading.Thread(target=visitor, args=p, daemon=True) for p in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not [t for t in threads if t.is_alive()], "a visitor still waits: the gate hangs"
    assert len(outcomes) == 48 and not over
    ran = [i for i, o in outcomes.items() if o == "ran"]
    never = [i for i, o in outcomes.items() if "at most 100 MB" in o]
    assert len(ran) >= 24, outcomes  # the line moved: most were served
    assert never == [i for i, p in enumerate(plans) if p[1] == 120]
    assert all("\n" not in o for o in outcomes.values())
    # strict arrival order: only the head ever leaves, in the order the tickets came
    # (nested work is part of its visitor's reservation: it never joins the line)
    assert len(left_line) == budget._gate.seq == len(plans) - len(never)
    assert all(head for _seq, head in left_line), left_line
    assert [seq for seq, _head in left_line] == sorted(seq for seq, _head in left_line)


def _page_with_a_full_server():
    import streamlit as st

    from ui.common.cache import remember

    run = st.session_state["ranklab.runs"]["bm25"]
    remember("test.table", None, lambda: len(run), held=(run,))
    st.write("built")


def test_a_page_computation_the_server_cannot_hold_ends_the_run_with_one_line(monkeypatch, sample):
    """Not an evaluation (whose page shows its refusal with its other errors): the build's
    refusal ends the page's run with one line, never a traceback."""
    qrels, runs, _meta = sample
    # the server's memory pinned above its budget (the test process's own memory moves: a
    # budget of "what it holds now less 1 MB" flaked when a collection freed some before the
    # page ran)
    monkeypatch.setattr(budget, "process_anon", lambda: 100 * MB)
    monkeypatch.setenv("RANKLAB_SERVER_MB", "99")
    monkeypatch.setattr(budget, "cgroup_limit", lambda: None)
    monkeypatch.setattr(budget, "trim", lambda collect=True: None)
    monkeypatch.setattr(budget, "_gate", budget._Gate())
    at = AppTest.from_function(_page_with_a_full_server, default_timeout=120)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "this computation needs about" in errors[0], errors
    assert "ranklab evaluate" in errors[0]
    assert not any("built" in m.value for m in at.markdown)


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
            _until(lambda: budget.waiting() > 0, "the Overview waiting in line")
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


def test_the_web_servers_idle_worker_threads_end_once_the_crowd_left(monkeypatch):
    """Uploads and files are served in AnyIO's worker threads, which AnyIO ends only when the
    next request comes: after a crowd left, none came, and every worker stayed with what its
    requests left in memory. The reclaimer's empty call into the pool lets AnyIO end the idle
    ones; the reclaimer makes it when sessions have left."""
    import asyncio

    anyio_backend = pytest.importorskip("anyio._backends._asyncio")
    import anyio.to_thread

    # AnyIO ends a worker idle for MAX_IDLE_TIME (10 s): here at once
    monkeypatch.setattr(anyio_backend.WorkerThread, "MAX_IDLE_TIME", 0)
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:  # a server's long-lived task: AnyIO's workers belong to it
        await stop.wait()

    server = threading.Thread(
        target=loop.run_until_complete, args=(serve(),), name="test-loop", daemon=True
    )
    server.start()
    try:
        gate = threading.Barrier(6)

        async def crowd() -> None:  # six requests in flight at once: six workers
            await asyncio.gather(*(anyio.to_thread.run_sync(gate.wait) for _ in range(6)))

        others = set(budget._workers())  # another test's pool, if any, is not this one's
        asyncio.run_coroutine_threadsafe(crowd(), loop).result(timeout=60)
        workers = [t for t in budget._workers() if t not in others]
        assert len(workers) >= 6
        ended = budget.release_idle_workers(loop, wait_s=30)
        assert ended >= 0
        # the idle ones end as soon as they are scheduled: waited for, not timed
        deadline = time.monotonic() + 60
        while sum(t.is_alive() for t in workers) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(t.is_alive() for t in workers) <= 1  # what stays: the one that ran the call
        # what it said had ended did end (another test's idle workers may have ended too)
        assert ended <= sum(not t.is_alive() for t in workers) + len(others)
    finally:
        loop.call_soon_threadsafe(stop.set)
        server.join(10)
        loop.close()
    assert budget.release_idle_workers() == 0  # outside a running server: nothing to do

    # the reclaimer calls it when sessions left, not on a tick where nothing changed
    from ui.common import reclaim

    calls = []
    monkeypatch.setattr(budget, "release_idle_workers", lambda: calls.append(1) or 0)
    for name in ("note_rest", "trim"):
        monkeypatch.setattr(budget, name, lambda *a, **k: None)
    for name in ("close_expired_sessions", "release_gone_sessions"):
        monkeypatch.setattr(budget, name, lambda: 0)
    monkeypatch.setattr(reclaim.refusals, "forget", lambda now: None)
    monkeypatch.setattr(reclaim.keep, "purge", lambda now: 0)
    monkeypatch.setattr(reclaim.keep, "kept_folders", lambda: set())
    monkeypatch.setattr(reclaim.store, "sweep", lambda now, kept: 0)
    monkeypatch.setattr(budget, "sessions_open", lambda: {"a", "b"})
    reclaim._tick({"a", "b"})
    assert calls == []
    reclaim._tick({"a", "b", "c"})
    assert calls == [1]


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


def test_the_per_query_page_keeps_the_overviews_tie_bounds_not_a_full_tie_report(
    monkeypatch, sample
):
    """The Per query page's tie columns come from the tie bounds the Overview keeps (arrays per
    measure), not from the full tie report: its per-query dicts of Python floats (about
    150,000 small objects a load-test visitor) outlived nothing but scattered Python's small
    object arenas, which stayed with the server after the sessions left. Same text, same
    numbers as the full report's minimum and maximum."""
    import metrics_core as mc
    from metrics_core.ranking.ranked import Ranking

    qrels, runs, _meta = sample
    runs = dict(runs)
    measures = ["AP", "P@10", "nDCG@10", "RR"]
    full = {}
    for name, run in runs.items():
        ev = mc.evaluate(qrels, run, measures, mc.Conventions())
        full[name] = ev.ranking.tie_report(ev.specs, values=ev.values)

    def no_full_report(self, *a, **k):
        raise AssertionError("the full tie report was computed for a page")

    monkeypatch.setattr(Ranking, "tie_report", no_full_report)
    at = AppTest.from_file(str(ROOT / "pages" / "per_query.py"), default_timeout=120)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = runs
    at.session_state["ranklab.measures"] = measures
    at.run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    name = at.selectbox[0].value
    per = full[name]["per_query"]
    covered = [m for m in measures if m in full[name]["aggregate"]]
    expected = {
        q: " · ".join(
            f"{m} {per[q][m]['min']:.4f}–{per[q][m]['max']:.4f}"
            for m in covered
            if m in per.get(q, {}) and per[q][m]["min"] != per[q][m]["max"]
        )
        for q in table.index
    }
    shown = table.iloc[:, -1].to_dict()
    assert any(expected.values()), "the sample has no tie-dependent query: nothing checked"
    assert shown == expected


def test_an_upload_arriving_past_the_budget_is_refused_before_it_is_kept(memory, monkeypatch):
    """Streamlit keeps an upload's bytes from its arrival, before any page can reserve
    memory for it: the upload manager refuses a file that arrives while the server's memory
    is past its budget (HTTP 507), and keeps it otherwise. (50 visitors uploading at once took
    the server past its cgroup: killed.)"""
    from starlette.exceptions import HTTPException

    kept: list = []

    class Manager:
        def add_file(self, session_id, file):
            kept.append((session_id, file))

    monkeypatch.setattr(budget, "_UPLOADS_GUARDED", [])
    manager = Manager()
    assert budget.guard_uploads(manager)
    manager.add_file(session_id="s", file="f1")  # 100 MB of 200: kept
    assert kept == [("s", "f1")]
    memory.at_rest = 101 * MB  # the server past its budget now
    with pytest.raises(HTTPException) as refused:
        manager.add_file(session_id="s", file="f2")
    assert refused.value.status_code == 507 and "try again" in refused.value.detail
    assert kept == [("s", "f1")]
    memory.at_rest = 0


def test_the_waiting_note_is_written_when_it_changes_and_the_stop_checked_in_between(monkeypatch):
    """A waiter looks at its note every half second. It is written when its text changes (at
    most every NOTE_EVERY_S), not each time: each write is a message every waiter's browser
    draws. Between writes Streamlit's own stop check runs, so a visitor who left still leaves
    the line at once."""
    clock = [1000.0]
    monkeypatch.setattr(budget.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(budget.state, "in_app", lambda: True)
    writes: list = []

    class Slot:
        def info(self, text, icon=None):
            writes.append(text)

        def empty(self):
            writes.append(None)

    monkeypatch.setattr(budget.st, "empty", Slot)
    checks: list = []
    monkeypatch.setattr(budget, "_stop_point", lambda: checks.append(clock[0]) or True)
    note = budget._Waiting()
    for _ in range(10):  # five seconds in line, the same place
        note.show("number 3 in line")
        clock[0] += 0.5
    assert writes == ["number 3 in line"]
    assert len(checks) == 9  # every other look is a stop check
    note.show("number 2 in line")  # the line moved: written (more than 2 s since the last)
    clock[0] += 0.5
    note.show("yours is next")  # moved again half a second later: waits its turn ...
    assert writes[-1] == "number 2 in line"
    clock[0] += budget.NOTE_EVERY_S
    note.show("yours is next")  # ... and is written at the next look past NOTE_EVERY_S
    assert writes == ["number 3 in line", "number 2 in line", "yours is next"]


def test_work_waits_for_the_uploads_being_received(memory):
    """Uploads being received take their bytes as they arrive (the door's guard counts their
    declared lengths): the gate gives no computation the memory they are taking, and a
    computation that needs it waits for them rather than being refused (they end)."""
    budget._uploads_in_flight[0] = 50 * MB  # 100 MB free less 50 MB arriving
    ran: list = []
    try:
        t = threading.Thread(target=lambda: _run_work(60 * MB, ran), daemon=True)
        t.start()
        _until(lambda: budget.waiting() == 1, "the computation in line")
        threading.Event().wait(1.2)  # two looks at the line: still waiting, not refused
        assert ran == [] and budget.waiting() == 1
    finally:
        budget._uploads_in_flight[0] = 0  # the uploads received
    _until(lambda: ran == ["ran"], "admitted once the uploads ended")
    t.join(60)


def _run_work(need: int, log: list) -> None:
    try:
        with budget.work(need):
            log.append("ran")
    except InputError:
        log.append("refused")


def test_only_the_builds_that_run_statistics_reserve_for_them(monkeypatch, sample):
    """The Overview's builds reserve what they take: ranking, evaluating and the tie and
    unjudged bands the ranking's need (:func:`ui.common.budget.work_need` without
    statistics), the leaderboard the statistics' too. Every build reserved the
    statistics' need before (70 MB for 1,000 queries against a ranking's peak of 11-30 MB for
    100,000 lines), so the gate held visitors in line with the server's memory unused."""
    from pathlib import Path

    from ui.common import cache
    from ui.ranking import data as rd

    qrels, runs, meta = sample
    work, stats = 3 * MB + 1, 5 * MB + 3  # told apart by their values
    monkeypatch.setattr(budget, "work_need", lambda statistics=True: stats if statistics else work)
    seen: dict = {}
    real = budget.work

    def recording(need, name=None):
        table = sys._getframe(1).f_locals.get("name")  # the cache's table (remember's frame)
        seen.setdefault(table, set()).add(need)
        return real(need, name)

    monkeypatch.setattr(cache.budget, "work", recording)
    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[2] / "pages" / "overview.py"), default_timeout=120
    )
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert not at.exception
    assert seen[rd.BOARDS] == {stats}
    for table in (rd.RANKINGS, rd.EVALUATIONS, rd.TIE_BOUNDS, rd.UNJUDGED_BOUNDS):
        assert seen[table] == {work}, table


@pytest.mark.parametrize(
    "n, text",
    [
        (12_400_000, "12 MB"),
        (4_460_000, "4.5 MB"),
        (1_000_000, "1.0 MB"),
        (999_700, "1.0 MB"),  # 999.7 kB rounds to a megabyte, never "1000 kB"
        (48_200, "48 kB"),
        (300, "1 kB"),
        (0, "0 MB"),
    ],
)
def test_sizes_in_the_gates_lines(n, text):
    assert budget.size_text(n) == text


def test_a_few_kilobytes_never_read_as_nothing():
    """The Data page's "Your data takes ..." for a few kilobytes of files said "0.0 MB"."""
    for n in (1, 999, 49_999, 50_000, 999_999):
        assert not budget.size_text(n).startswith("0"), n
