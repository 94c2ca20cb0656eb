"""One BLAS thread for the server's matrix products.

The bootstrap's and the permutation test's ``counts @ values`` run in the server, which
its visitors share. On a small host OpenBLAS's spinning worker threads compete with the
other sessions, the server itself and (on one machine) the browser: the Overview's
leaderboard of a 1 M-line run took 0.56-0.62 s in the running app with the default
threads, 0.11-0.20 s with one (0.16 s and 0.09 s in a fresh quiet process). The command
line and the library keep the default.

(Importing the pages' modules on a background thread when the server starts was tried
and dropped: it saved about 0.2 s on the first Overview but slowed the first page runs
of the visitor, holding the interpreter lock, and made the synced threshold widgets of
the Detection page lose key presses.)
"""

from __future__ import annotations

import threading

_done = threading.Event()
_lock = threading.Lock()


def limit_threads_once() -> bool:
    """Limit BLAS to one thread, once per process; True when this call did it."""
    with _lock:
        if _done.is_set():
            return False
        _done.set()
    try:
        import numpy  # noqa: F401  (loads its BLAS, so threadpoolctl finds it)
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
    except Exception:  # no threadpoolctl, or a BLAS it does not know: leave the default
        return True
    try:
        # threadpoolctl remembers the thread that set OpenBLAS's limit (a visitor's script
        # thread, with its session's state): forgotten, so that session can be freed
        from threadpoolctl import OpenBLASController

        OpenBLASController.clear_controlling_thread()
    except Exception:  # no threadpoolctl, or a BLAS it does not know: leave the default
        pass
    return True


__all__ = ["limit_threads_once"]
