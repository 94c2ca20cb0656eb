"""The thread pool of whole-array work: results in order, errors raised, no thread for one."""

from __future__ import annotations

import threading

import pytest

from metrics_core import threads


def test_map_in_threads_keeps_the_order_and_uses_several_threads(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 3)
    barrier = threading.Barrier(3, timeout=30)

    def work(x):
        barrier.wait()  # only passes when three items run at once
        return x * 10, threading.get_ident()

    out = threads.map_in_threads(work, [1, 2, 3])
    assert [v for v, _ in out] == [10, 20, 30]
    assert len({t for _, t in out}) == 3


def test_map_in_threads_raises_the_first_error_in_item_order(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)

    def work(x):
        if x > 1:
            raise ValueError(f"item {x}")
        return x

    with pytest.raises(ValueError, match="item 2"):
        threads.map_in_threads(work, [0, 1, 2, 3])


def test_one_core_or_one_item_runs_in_the_calling_thread(monkeypatch):
    me = threading.get_ident()
    monkeypatch.setattr(threads, "usable_cores", lambda: 1)
    assert threads.map_in_threads(lambda _: threading.get_ident(), range(4)) == [me] * 4
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    assert threads.map_in_threads(lambda _: threading.get_ident(), [0]) == [me]
    assert threads.usable_cores() == 4


def test_a_map_inside_a_piece_runs_in_that_thread_without_waiting(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)

    def outer(x):
        me = threading.get_ident()
        inner = threads.map_in_threads(lambda y: (y, threading.get_ident()), [x, x + 1])
        return [v for v, _ in inner], {t for _, t in inner} == {me}

    out = threads.map_in_threads(outer, [0, 10, 20])
    assert out == [([0, 1], True), ([10, 11], True), ([20, 21], True)]


def test_the_kept_pool_is_made_anew_in_a_forked_child(monkeypatch):
    """A forked child's copy of the pool has no threads: the pool of another process id is
    replaced, not used (it would never run the items)."""
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    threads.map_in_threads(lambda x: x, [1, 2])
    assert threads._POOL is not None and threads._POOL[0] == threads.os.getpid()
    parent = threads._POOL
    monkeypatch.setattr(threads, "_POOL", (-1, *parent[1:]))  # as a forked child sees it
    assert threads.map_in_threads(lambda x: x + 1, [1, 2]) == [2, 3]
    assert threads._POOL[0] == threads.os.getpid() and threads._POOL[2] is not parent[2]
    threads._POOL[2].shutdown(wait=False)  # the test's own; the parent's comes back


def test_a_pool_that_grows_leaves_maps_in_flight_running(monkeypatch):
    """A map that asks for more threads than the kept pool has gets a larger pool; a map of
    another thread still submitting to the smaller one is not refused."""
    monkeypatch.setattr(threads, "_POOL", None)
    monkeypatch.setattr(threads, "usable_cores", lambda: 8)
    started, release = threading.Event(), threading.Event()

    def slow(x):
        started.set()
        release.wait(30)
        return x

    out = {}
    first = threading.Thread(target=lambda: out.update(a=threads.map_in_threads(slow, range(6), 2)))
    first.start()
    assert started.wait(30)
    out["b"] = threads.map_in_threads(lambda x: -x, range(5), 4)  # grows the pool meanwhile
    release.set()
    first.join(30)
    assert out == {"a": list(range(6)), "b": [0, -1, -2, -3, -4]}
    threads._POOL[2].shutdown(wait=False)  # the test's own
