"""Threads for whole-array work: numpy's array loops and sorts and Arrow's kernels release
the GIL, so independent pieces of one job (runs, ranges of whole queries) run on several
cores at once with the same numbers as one piece after another.

:func:`usable_cores` is how many cores this process may use (its CPU affinity, not the
machine's count); :func:`map_in_threads` maps a function over pieces in a pool of that
many threads, kept between calls (made anew in a forked child, whose copy has no threads).
Called from inside a piece (a thread of the pool), :func:`map_in_threads` runs its items
in that thread: the pool's threads never wait on pieces that have no thread left to run them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")

_POOL: tuple[int, int, ThreadPoolExecutor] | None = None  # (process id, threads, pool)
_POOL_LOCK = threading.Lock()
_PREFIX = "ranklab-pool"


def usable_cores() -> int:
    """The cores this process may run on (``sched_getaffinity``; ``os.cpu_count()``
    where the platform has no affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _pool(workers: int) -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid() or _POOL[1] < workers:
            # too few threads: a larger pool replaces it. The old one is not shut down (a
            # map of another thread may still be submitting to it); its threads end when
            # the last map that holds it returns and it is collected.
            _POOL = (
                os.getpid(),
                workers,
                ThreadPoolExecutor(max_workers=workers, thread_name_prefix=_PREFIX),
            )
        return _POOL[2]


def map_in_threads(fn: Callable[[T], U], items: Iterable[T], workers: int | None = None) -> list[U]:
    """``[fn(x) for x in items]``, the items run in up to ``workers`` threads (default
    :func:`usable_cores`); results in the items' order. An exception of ``fn`` is raised
    here, the first in the items' order. One item or one worker, or a call from a thread of
    the pool: no other thread.

    >>> map_in_threads(lambda x: x * x, [1, 2, 3])
    [1, 4, 9]
    """
    seq = list(items)
    n = min(len(seq), usable_cores() if workers is None else max(1, workers))
    if n <= 1 or threading.current_thread().name.startswith(_PREFIX):
        return [fn(x) for x in seq]
    return list(_pool(n).map(fn, seq))


__all__ = ["usable_cores", "map_in_threads"]
