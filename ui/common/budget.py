"""The memory budget of a hosted app: the server's and each visitor's share, checked before
work starts.

A free host gives the whole app about 1 GB; one visitor's upload must never take the process
past it (every other visitor would lose their session). Two numbers, set by whoever deploys:

- ``RANKLAB_SERVER_MB`` (default 900): the most the server process may hold (resident memory);
- ``RANKLAB_VISITOR_MB`` (default 64): one visitor's share (their parsed data and rankings).

Before an upload is parsed, :func:`check_upload` estimates from its size and line count what it
will cost while parsing (the peak) and once loaded (what stays), and refuses it with one line
that says what fits and what to do when it would exceed the visitor's share or the server's
free memory (``InputError``, shown under the box like any reader's error). Uploads in flight
are reserved (:func:`reserve`), so two visitors cannot both take the last free megabytes.
:func:`visitor_cost` measures what a visitor's loaded data holds now; the Data page shows it.

Costs per row are measured (bench/load_test.py): a parsed run holds its ids as Arrow strings
(about the id text) plus 8 bytes a score; its ranking (kept for the tie band and the per-query
views) about :data:`RANKING_BYTES_PER_ROW`.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

import streamlit as st

from metrics_core.errors import N_, InputError
from ui.common import state

MB = 1_000_000
#: Defaults for a 1 GB host: the server's ceiling (a watchdog kills at 1,024 MB) and one visitor's share.
DEFAULT_SERVER_MB = 900
DEFAULT_VISITOR_MB = 64
#: Bytes a ranked row holds (ranking of a 100,000-line run: 5.6 MB, measured).
RANKING_BYTES_PER_ROW = 56
#: Bytes a parsed row holds beyond its id text (the score, offsets, codes).
PARSED_BYTES_PER_ROW = 24
#: A compressed or binary upload: rows are guessed from its size (a TREC line compresses to
#: about 6 bytes with gzip); the estimate errs on the large side.
COMPRESSED_BYTES_PER_ROW = 6
#: Parsing holds the text, its columns and the parsed arrays at once: the peak, as a multiple
#: of the text (measured on 100,000-line runs), on top of what stays.
PARSE_PEAK_FACTOR = 2.0

_lock = threading.Lock()
_reserved = {"bytes": 0}


def server_budget() -> int:
    """The server's ceiling in bytes (``RANKLAB_SERVER_MB``, default :data:`DEFAULT_SERVER_MB`)."""
    return _env_mb("RANKLAB_SERVER_MB", DEFAULT_SERVER_MB)


def visitor_budget() -> int:
    """One visitor's share in bytes (``RANKLAB_VISITOR_MB``, default :data:`DEFAULT_VISITOR_MB`)."""
    return _env_mb("RANKLAB_VISITOR_MB", DEFAULT_VISITOR_MB)


def _env_mb(name: str, default: int) -> int:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        value = default
    return int(max(value, 1) * MB)


def process_rss() -> int:
    """The server process's resident memory in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        try:
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        except (ImportError, OSError):
            return 0


def estimate(data: bytes, kind: str) -> tuple[int, int]:
    """``(peak, held)``: the bytes parsing ``data`` as ``kind`` ("run", "qrels", "meta" or any
    other table) needs at its peak, and what stays once parsed (with the run's ranking).

    Rows are counted from the line ends of a text upload; a gzip upload's from the text size
    its trailer states (20 bytes a line at least); another binary one (Parquet) is guessed at
    :data:`COMPRESSED_BYTES_PER_ROW` bytes a row."""
    binary = data[:2] == b"\x1f\x8b" or data[:4] == b"PAR1" or b"\x00" in data[:4096]
    if data[:2] == b"\x1f\x8b" and len(data) >= 18:
        # gzip states its text's size (mod 4 GiB) in its last 4 bytes: the rows of that text,
        # at 20 bytes a line at least; never fewer than the compressed guess
        text = max(int.from_bytes(data[-4:], "little"), len(data))
        rows = max(text // 20, len(data) // COMPRESSED_BYTES_PER_ROW)
    elif binary:
        rows = len(data) // COMPRESSED_BYTES_PER_ROW
        text = rows * 40
    else:
        rows = data.count(b"\n") + 1
        text = len(data)
    held = text + rows * PARSED_BYTES_PER_ROW
    if kind == "run":
        held += rows * RANKING_BYTES_PER_ROW
    peak = held + int(PARSE_PEAK_FACTOR * text) + (len(data) if binary else 0)
    return peak, held


def visitor_cost() -> int:
    """What this visitor's loaded ranking data holds now, in bytes: each run's and the qrels'
    arrays, and a ranking per run; the query metadata and the other pages' tables."""
    total = 0
    for data in [
        st.session_state.get(state.QRELS),
        *(st.session_state.get(state.RUNS) or {}).values(),
    ]:
        if data is not None:
            total += visitor_cost_of(data)
    meta = st.session_state.get(state.META)
    if meta is not None:
        try:
            total += int(meta.memory_usage(deep=True).sum())
        except (AttributeError, TypeError, ValueError):
            pass
    return total


def visitor_cost_of(data) -> int:
    """What one loaded qrels or run holds (its arrays; a run's ranking too)."""
    cost = _columns_bytes(data)
    if data is not st.session_state.get(state.QRELS):
        cost += len(data) * RANKING_BYTES_PER_ROW
    return cost


def _columns_bytes(data) -> int:
    total = 0
    for name in ("qid", "docid", "values", "line_numbers"):
        arr = getattr(data, name, None)
        if arr is not None:
            total += int(getattr(arr, "nbytes", 0))
    return total


def _mb(n: int) -> str:
    return f"{n / MB:.0f} MB" if n >= 10 * MB else f"{n / MB:.1f} MB"


@contextmanager
def reserve(data: bytes, kind: str, name: str, replaces: int = 0):
    """Check ``data`` against the budgets, then hold its peak as reserved while the block runs
    (the parse); raises InputError (one line: what it needs, what fits, what to do) before any
    work when it does not fit. ``replaces``: bytes the upload frees once loaded (the file it
    replaces)."""
    peak, held = estimate(data, kind)
    share, used = visitor_budget(), visitor_cost()
    if used - replaces + held > share:
        raise InputError(
            N_(
                "it would need about {need} once loaded; your share of this server is {share} "
                "and your data holds {used}"
            ),
            source=name,
            params={"name": name, "need": _mb(held), "share": _mb(share), "used": _mb(used)},
            hint=N_(
                "Remove a run on the Data page, or evaluate larger runs with the command line "
                "(ranklab evaluate --qrels QRELS --run RUN), which streams them"
            ),
        )
    with _lock:
        free = server_budget() - process_rss() - _reserved["bytes"]
        if peak > free:
            raise InputError(
                N_(
                    "it would need about {need} while it is read; the server has {free} free "
                    "for everyone now"
                ),
                source=name,
                params={"name": name, "need": _mb(peak), "free": _mb(max(free, 0))},
                hint=N_(
                    "Try again in a few minutes, or evaluate it with the command line "
                    "(ranklab evaluate --qrels QRELS --run RUN), which streams it"
                ),
            )
        _reserved["bytes"] += peak
    try:
        yield
    finally:
        with _lock:
            _reserved["bytes"] -= peak


#: Bytes of temporaries a run's evaluation needs per row while it runs (the sort keys, the join,
#: the ranked lists being built), on top of what it keeps.
WORK_BYTES_PER_ROW = 160


@contextmanager
def reserve_work(rows: int, name: str):
    """Hold the temporary memory of evaluating ``rows`` run rows while the block runs; raises
    InputError (one line: what it needs, what is free, what to do) before the work when the
    server has not that much free."""
    need = int(rows) * WORK_BYTES_PER_ROW
    with _lock:
        free = server_budget() - process_rss() - _reserved["bytes"]
        if need > free:
            raise InputError(
                N_(
                    "evaluating {name} would need about {need}; the server has {free} free for "
                    "everyone now"
                ),
                params={"name": name, "need": _mb(need), "free": _mb(max(free, 0))},
                hint=N_(
                    "Try again in a few minutes, or evaluate it with the command line "
                    "(ranklab evaluate --qrels QRELS --run RUN), which streams it"
                ),
            )
        _reserved["bytes"] += need
    try:
        yield
    finally:
        with _lock:
            _reserved["bytes"] -= need


def cost_line() -> str:
    """What the visitor's data costs, in the visitor's words (the Data page's caption)."""
    from ui.common.i18n import gettext as _

    return _("Your data holds about {used} of your {share} share of this server's memory.").format(
        used=_mb(visitor_cost()), share=_mb(visitor_budget())
    )


# --- memory goes back: sessions dropped, arenas trimmed ---------------------------------------
#: Seconds between two checks of the reclaimer (gc, then glibc's malloc_trim when sessions left).
RECLAIM_EVERY_S = 20.0
_reclaimer: dict[str, threading.Thread | None] = {"thread": None}


def sessions_open() -> set[str] | None:
    """The ids of the sessions the server holds (None outside a running server)."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return None
        return {info.session.id for info in Runtime.instance()._session_mgr.list_sessions()}
    except Exception:  # a Streamlit without this internal: the reclaimer then runs on every tick
        return None


def close_expired_sessions() -> int:
    """Shut down the sessions whose tab closed more than ``server.disconnectedSessionTTL`` ago.

    Streamlit keeps a closed tab's session for that long (so a reconnect can resume it), then
    only forgets it when a later session is stored: until then its state (the visitor's runs)
    stays in memory, and it is never shut down. Done on the server's event loop, where
    Streamlit touches its session store. Returns how many sessions were shut down (0 where
    this Streamlit keeps its sessions otherwise)."""
    from concurrent.futures import Future

    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return 0
        runtime = Runtime.instance()
        # Streamlit's own session storage (its attribute, not one of RankLab's objects)
        cache = vars(runtime._session_mgr._session_storage)["_cache"]
        loop = runtime._get_async_objs().eventloop
    except (
        Exception
    ):  # another Streamlit's internals: sessions then leave when Streamlit drops them
        return 0
    done: Future = Future()

    def close() -> None:
        try:
            removed = cache.expire()
            for _sid, info in removed:
                info.session.shutdown()
            done.set_result(len(removed))
        except Exception as exc:
            done.set_exception(exc)

    loop.call_soon_threadsafe(close)
    try:
        return int(done.result(timeout=30))
    except Exception:
        return 0


def _libc():
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc: nothing to trim
        return None


def trim(collect: bool = True) -> None:
    """Collect garbage (unless ``collect`` is False) and hand freed heap pages back to the
    system (``malloc_trim`` on glibc; nothing elsewhere): parsing leaves many freed mid-sized
    buffers whose pages glibc otherwise keeps. Without ``collect`` it takes milliseconds: called
    after each parsed upload."""
    if collect:
        import gc

        gc.collect()
    import sys

    arrow = sys.modules.get("pyarrow")
    if arrow is not None:  # Arrow's own pool keeps freed buffers unless told
        arrow.default_memory_pool().release_unused()
    libc = _libc()
    if libc is not None:
        try:
            libc.malloc_trim(0)
        except AttributeError:
            pass


#: glibc's ``mallopt`` parameter of the number of heap arenas (``M_ARENA_MAX``).
_M_ARENA_MAX = -8


def limit_arenas(arenas: int = 2) -> None:
    """At most ``arenas`` glibc heaps, and Arrow's buffers from the same allocator: Streamlit runs
    each session's script on its own thread,
    and glibc would give threads up to 8 heaps a core, each keeping freed pages (what
    ``MALLOC_ARENA_MAX`` does when set before the server starts)."""
    libc = _libc()
    if libc is not None and not os.environ.get("MALLOC_ARENA_MAX"):
        try:
            libc.mallopt(_M_ARENA_MAX, arenas)
        except AttributeError:
            pass
    # Arrow's buffers (parsed ids) from the system allocator: Arrow's default pool (mimalloc or
    # jemalloc) kept freed pages, so 4 parsed and ranked 100,000-line runs held 55 MB and 43 MB
    # after they were freed; with the system pool 29 MB, and all of it came back (measured)
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        try:
            import pyarrow as pa

            pa.set_memory_pool(pa.system_memory_pool())
        except (ImportError, AttributeError):
            pass


def start_reclaimer() -> bool:
    """Start, once per server process, the thread that gives memory back after visitors leave:
    every :data:`RECLAIM_EVERY_S` seconds, the data kept for a reload past its time is released
    (:func:`ui.common.keep.purge`) and, when that or the number of sessions fell (Streamlit
    drops a session ``server.disconnectedSessionTTL`` seconds after its tab closed), :func:`trim`.
    True when this call started it."""
    with _lock:
        if _reclaimer["thread"] is not None:
            return False
        limit_arenas()

        def loop() -> None:
            import time

            from ui.common import keep

            last = sessions_open()
            while True:
                time.sleep(RECLAIM_EVERY_S)
                try:
                    closed = close_expired_sessions()  # tabs closed more than the TTL ago
                    now = sessions_open()
                    released = keep.purge(now)  # data kept for a reload, past its time
                    if closed or released or now is None or last is None or len(now) < len(last):
                        trim()
                    last = now
                except Exception:  # the reclaimer never dies: the next tick tries again
                    last = None

        thread = threading.Thread(target=loop, name="ranklab-reclaimer", daemon=True)
        _reclaimer["thread"] = thread
        thread.start()
    return True


__all__ = [
    "DEFAULT_SERVER_MB",
    "DEFAULT_VISITOR_MB",
    "server_budget",
    "visitor_budget",
    "process_rss",
    "estimate",
    "visitor_cost",
    "visitor_cost_of",
    "reserve",
    "reserve_work",
    "cost_line",
    "trim",
    "limit_arenas",
    "start_reclaimer",
    "close_expired_sessions",
    "sessions_open",
]
