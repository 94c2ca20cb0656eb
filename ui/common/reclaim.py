"""Memory goes back after visitors leave: the reclaimer thread, once per server process.

Every :data:`RECLAIM_EVERY_S` seconds it shuts down the sessions whose tab closed more than
``server.disconnectedSessionTTL`` ago (:func:`ui.common.budget.close_expired_sessions`),
empties those Streamlit no longer lists but still holds
(:func:`ui.common.budget.release_gone_sessions`), ends the web server's worker threads that
visitors who left kept idle (:func:`ui.common.budget.release_idle_workers`), releases the data
kept for a reload past its time and removes its folder (:func:`ui.common.keep.purge`), removes
the session folders nothing names any more (:func:`ui.common.store.sweep`), drops the uploads
refused at the door of sessions that ended (:func:`ui.common.refusals.forget`), reads the
server's memory at rest for the gate (:func:`ui.common.budget.note_rest`), and hands the freed
heap back (:func:`ui.common.budget.trim`) when sessions left. At its start it sets the
allocator (:func:`ui.common.budget.limit_arenas`) and sweeps the folders of servers that are
gone (:func:`ui.common.store.sweep_stale_servers`).
"""

from __future__ import annotations

import threading
import time

from ui.common import budget, keep, refusals, store

#: Seconds between two checks of the reclaimer (gc, then glibc's malloc_trim when sessions left).
RECLAIM_EVERY_S = 20.0
_reclaimer: dict[str, threading.Thread | None] = {"thread": None}
_lock = threading.Lock()


def _tick(last: set[str] | None) -> set[str] | None:
    """One round of the reclaimer; returns the sessions open now (None: unknown)."""
    budget.note_rest()  # the server at rest: the least memory held
    closed = budget.close_expired_sessions()  # tabs closed more than the TTL ago
    cleared = budget.release_gone_sessions()  # dropped sessions something still holds
    now = budget.sessions_open()
    left = closed or cleared or now is None or last is None or len(now) < len(last)
    if left:
        budget.release_idle_workers()  # the web server's threads left idle by a crowd
    refusals.forget(now)  # uploads refused at the door, of sessions that ended
    released = keep.purge(now)  # data kept for a reload, past its time, and its folder
    store.sweep(now, keep.kept_folders())  # folders nothing names any more
    if left or released:
        budget.trim()
    return now


def start() -> bool:
    """Start the reclaimer, once per server process (see the module docstring). True when
    this call started it."""
    with _lock:
        if _reclaimer["thread"] is not None:
            return False
        budget.limit_arenas()
        budget.note_rest()  # the server at rest, before any visitor's data
        try:  # the folders of servers that are gone (killed, crashed): their visitors' files
            store.sweep_stale_servers()
        except OSError:
            pass

        def loop() -> None:
            last = budget.sessions_open()
            while True:
                time.sleep(RECLAIM_EVERY_S)
                try:
                    last = _tick(last)
                except Exception:  # the reclaimer never dies: the next tick tries again
                    last = None

        thread = threading.Thread(target=loop, name="ranklab-reclaimer", daemon=True)
        _reclaimer["thread"] = thread
        thread.start()
    return True


__all__ = ["RECLAIM_EVERY_S", "start"]
