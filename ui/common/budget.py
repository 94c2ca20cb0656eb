"""The memory budget of a hosted app: the server's and each visitor's share, checked before
work starts.

A free host gives the whole app about 1 GB; one visitor's upload must never take the process
past it (every other visitor would lose their session). Two numbers, set by whoever deploys:

- ``RANKLAB_SERVER_MB`` (default 900): the most the server process may hold (resident memory);
- ``RANKLAB_VISITOR_MB`` (default 64): one visitor's share (their parsed data and rankings).

Before an upload is parsed, :func:`reserve` estimates from its size and line count what it
will cost while parsing (the peak) and once loaded (what stays), and refuses it with one line
that says what fits and what to do when it would exceed the visitor's share
(``InputError``, shown under the box like any reader's error). The server's free memory is
one line of reservations for everyone (:func:`_held`): an upload being parsed holds its peak,
and every computation on a visitor's data (the builds of :func:`ui.common.cache.remember`)
holds the temporaries it may take (:func:`work`, :func:`work_need`, measured), so two visitors
cannot both take the last free megabytes and the process never passes its budget. What does
not fit beside the work in flight waits its turn, a spinner saying so
(``RANKLAB_WAIT_SECONDS``, default 300); it is refused only when nothing else is in flight
(waiting would not help) or the wait is over. :func:`visitor_cost` measures what a visitor's
loaded data holds now; the Data page shows it.

Memory goes back: the reclaimer (:func:`start_reclaimer`) shuts down sessions whose tab closed,
empties those Streamlit still holds (:func:`release_gone_sessions`), releases data kept for a
reload and trims the heap; :func:`limit_arenas` keeps large blocks out of glibc's heaps and
makes every heap, the threads' too, give its freed top back.

Costs per row are measured (bench/load_test.py): a parsed run holds its ids as Arrow strings
(about the id text) plus 8 bytes a score; its ranking (kept for the tie band and the per-query
views) about :data:`RANKING_BYTES_PER_ROW`.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque
from contextlib import contextmanager

import streamlit as st

from metrics_core.errors import N_, InputError
from ui.common import state
from ui.common.style import plain

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


class _Gate:
    """The server's memory, shared by every visitor's work: what is reserved now, who waits.

    One lock and condition for the whole process; waiters are served in arrival order (the
    first in line goes when its need fits), so a large computation is not passed over forever
    by small ones. A thread holding a reservation marks it (:attr:`local`): work started inside
    it is part of it."""

    def __init__(self) -> None:
        self.cond = threading.Condition(_lock)
        self.line: deque = deque()
        self.local = threading.local()


_gate = _Gate()


@contextmanager
def _gated():
    """Mark this thread as inside the gate while the block runs (:func:`gated`)."""
    depth = getattr(_gate.local, "gated", 0)
    _gate.local.gated = depth + 1
    try:
        yield
    finally:
        _gate.local.gated = depth


def gated() -> bool:
    """Whether this thread runs inside the gate now: within a computation's or an upload's
    reservation (:func:`work`, :func:`reserve`), whatever its size (a need of 0 included).
    The app's data modules call the library only there (tests/app/test_one_gate.py runs
    every page with the library's computations refusing any call made elsewhere)."""
    return getattr(_gate.local, "gated", 0) > 0


def _mine() -> int:
    """Bytes this thread holds reserved now (0 outside a reservation)."""
    held: int = getattr(_gate.local, "held", 0)
    return held


#: A reservation at least this large hands the heap's freed pages back when it ends
#: (``malloc_trim``: a few milliseconds), so the resident size stays what is held.
TRIM_AFTER_BYTES = 16 * MB


def _free() -> int:
    """Bytes the server may still take now: its budget less its resident memory and what is
    reserved by work in flight (call with the lock held)."""
    return server_budget() - process_rss() - _reserved["bytes"]


def wait_seconds() -> float:
    """How long a computation or an upload waits for memory before it is refused
    (``RANKLAB_WAIT_SECONDS``, default :data:`DEFAULT_WAIT_SECONDS`)."""
    try:
        return max(float(os.environ.get("RANKLAB_WAIT_SECONDS", DEFAULT_WAIT_SECONDS)), 0.0)
    except ValueError:
        return float(DEFAULT_WAIT_SECONDS)


def _wait_line() -> str:
    from ui.common.i18n import gettext as _

    return _(
        "Waiting for memory: other visitors' work is using this server's memory now; yours "
        "starts as soon as there is room."
    )


@contextmanager
def _held(need: int, refusal, *, wait: bool = True):
    """Reserve ``need`` bytes of the server's budget while the block runs.

    It goes at once when it fits. When it does not and other work holds reservations, it waits
    (in line, a spinner with :func:`_wait_line` in the app) until their memory comes back, at
    most :func:`wait_seconds`; when nothing else is in flight (waiting would not help), the
    freed heap is trimmed and it is checked once more. Then ``refusal(free)`` (an InputError)
    is raised, before any work. ``wait=False``: refused at once when it does not fit (work
    nested in a reservation of the same thread, which must not wait for itself)."""
    import time

    need = max(int(need), 0)
    ticket = object()
    spinner = None
    with _gate.cond:
        _gate.line.append(ticket)
    try:
        deadline = time.monotonic() + wait_seconds()
        trimmed = False
        while True:
            with _gate.cond:
                first = _gate.line[0] is ticket
                free = _free()
                if first and need <= free:
                    _reserved["bytes"] += need
                    _gate.line.popleft()
                    ticket = None
                    break
                others = _reserved["bytes"] > 0
                if wait and others and time.monotonic() < deadline:
                    _gate.cond.wait(0.5)
                    waiting = True
                else:
                    waiting = False
            if waiting:
                if spinner is None and state.in_app():
                    spinner = st.spinner(_wait_line())
                    spinner.__enter__()
                continue
            if first and not trimmed:  # freed pages, and garbage, still counted: once, in full
                trim()
                trimmed = True
                continue
            if first or not wait or time.monotonic() >= deadline:
                raise refusal(max(free, 0))
            with _gate.cond:  # behind others that wait: their turn first
                _gate.cond.wait(0.5)
    finally:
        if ticket is not None:
            with _gate.cond:
                _gate.line.remove(ticket)
                _gate.cond.notify_all()
        if spinner is not None:
            spinner.__exit__(None, None, None)
    before = _mine()
    _gate.local.held = before + need
    try:
        yield
    finally:
        _gate.local.held = before
        with _gate.cond:
            _reserved["bytes"] -= need
            waiters = bool(_gate.line)
        if waiters or need >= TRIM_AFTER_BYTES:
            # the freed temporaries go back to the system: the resident size that the next
            # reservation measures is what stays, not what was given up
            trim(collect=False)
        with _gate.cond:
            _gate.cond.notify_all()


@contextmanager
def reserve(data: bytes, kind: str, name: str, replaces: int = 0):
    """Check ``data`` against the budgets, then hold its peak as reserved while the block runs
    (the parse); raises InputError (one line: what it needs, what fits, what to do) before any
    work when it does not fit: at once when it is over the visitor's share, after waiting its
    turn (:func:`_held`) when the server's free memory is taken by other visitors' work in
    flight. ``replaces``: bytes the upload frees once loaded (the file it replaces)."""
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

    def refusal(free: int) -> InputError:
        return InputError(
            N_(
                "it would need about {need} while it is read; the server has {free} free "
                "for everyone now"
            ),
            source=name,
            params={"name": name, "need": _mb(peak), "free": _mb(free)},
            hint=N_(
                "Try again in a few minutes, or evaluate it with the command line "
                "(ranklab evaluate --qrels QRELS --run RUN), which streams it"
            ),
        )

    with _gated(), _held(peak, refusal, wait=not _mine()):
        yield


#: Bytes of temporaries per run row while a run is ranked and evaluated (the sort keys, the
#: join, the ranked lists being built): 24 MB above the parsed data for a 100,000-line run of
#: the load test, ranking and evaluation (bench/load_test.py's data, measured).
WORK_BYTES_PER_ROW = 240
#: Bytes of temporaries per query while the leaderboard's statistics run: the paired
#: randomization test's sign bits, 10,000 permutations of 8-byte values a query, drawn in
#: blocks of at most 2**23 values (``metrics_core.stats.significance``), so at most
#: :data:`STATS_BYTES_MAX`: 67 MB above the evaluated data for two runs over 1,000 queries
#: (measured), 4 MB for the 50 queries of the sample.
STATS_BYTES_PER_QUERY = 80_000
STATS_BYTES_MAX = 70 * MB
#: The most rows evaluated at once (``ui.ranking.data.STREAM_ROWS``: larger runs go in blocks).
WORK_ROWS_MAX = 2_000_000
#: Seconds a computation or an upload waits for memory before it is refused.
DEFAULT_WAIT_SECONDS = 300


def work_need(statistics: bool = True) -> int:
    """The temporaries one computation on this visitor's ranking data may take at its peak:
    the larger of ranking and evaluating its largest run (:data:`WORK_BYTES_PER_ROW`, at most
    :data:`WORK_ROWS_MAX` rows) and, unless ``statistics`` is False (an evaluation), the
    leaderboard's statistics over the qrels' queries (:data:`STATS_BYTES_PER_QUERY`, at most
    :data:`STATS_BYTES_MAX`); 0 without runs (nothing of the ranking section's to do)."""
    runs = st.session_state.get(state.RUNS) or {}
    rows = max((len(r) for r in runs.values()), default=0)
    if not rows:
        return 0
    qrels = st.session_state.get(state.QRELS)
    queries = len(qrels.unique_query_ids()) if qrels is not None and statistics else 0
    return max(
        min(rows, WORK_ROWS_MAX) * WORK_BYTES_PER_ROW,
        min(queries * STATS_BYTES_PER_QUERY, STATS_BYTES_MAX),
    )


@contextmanager
def work(need: int, name: str | None = None):
    """Hold ``need`` bytes of the server's budget while a computation runs (the one cache's
    builds: :func:`ui.common.cache.remember`), so that visitors' computations together never
    take the process past the server's budget: when they do not fit beside the work in flight
    they wait their turn (a spinner says so), and are refused with one line (what it needs,
    what is free, what to do) only when nothing else is in flight or the wait is over
    (:func:`wait_seconds`). Work started inside another reservation of the same thread is part
    of it (nothing more is reserved). ``name``: the run the work evaluates, for the refusal."""
    if need <= 0 or _mine():
        with _gated():
            yield
        return

    def refusal(free: int) -> InputError:
        params = {"need": _mb(need), "free": _mb(free)}
        hint = N_(
            "Try again in a few minutes, or evaluate it with the command line "
            "(ranklab evaluate --qrels QRELS --run RUN), which streams it"
        )
        if name is not None:
            return InputError(
                N_(
                    "evaluating {name} would need about {need}; the server has {free} free for "
                    "everyone now"
                ),
                params={"name": name, **params},
                hint=hint,
            )
        return InputError(
            N_(
                "this computation would need about {need}; the server has {free} free for "
                "everyone now"
            ),
            params=params,
            hint=hint,
        )

    with _gated(), _held(need, refusal):
        yield


def reserved() -> int:
    """Bytes reserved now by uploads being read and computations running, server-wide."""
    with _lock:
        return _reserved["bytes"]


def cost_line() -> str:
    """What the visitor's data costs, in the visitor's words (the Data page's caption)."""
    from ui.common.i18n import gettext as _

    return plain(
        _("Your data holds about {used} of your {share} share of this server's memory."),
        used=_mb(visitor_cost()),
        share=_mb(visitor_budget()),
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


#: session id -> weak reference to Streamlit's session object, for the sessions seen listed
_seen_sessions: dict[str, weakref.ref] = {}


def release_gone_sessions() -> int:
    """Empty the state of every session the server no longer lists but something still holds.

    A session that Streamlit dropped is not always freed: its runtime loop keeps the last
    session it served in a local variable, and a finished script thread that last set a
    process-wide setting (threadpoolctl's BLAS limit) is kept with its script context. Each
    held the visitor's whole state (runs, rankings, evaluations), and through its widgets'
    callbacks the last page's globals: 70 MB above idle after 4 load-test visitors left
    (measured). Sessions are watched by weak reference only; the state
    of one gone from the server's list is cleared (nothing can read it any more). Returns how
    many were cleared (0 outside a running server)."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return 0
        listed = {
            info.session.id: info.session
            for info in Runtime.instance()._session_mgr.list_sessions()
        }
    except Exception:  # another Streamlit's internals: its sessions go when it drops them
        return 0
    cleared = 0
    for sid in [sid for sid in _seen_sessions if sid not in listed]:
        session = _seen_sessions.pop(sid)()
        if session is not None:
            try:
                state_ = session.session_state
                state_.clear()
                # Streamlit's clear() keeps the widgets' metadata: their callbacks are functions
                # of the page's script, whose globals hold the page's data (its evaluations)
                widgets = getattr(state_, "_new_widget_state", None)
                getattr(widgets, "widget_metadata", {}).clear()
                cleared += 1
            except Exception:  # a session object without this state: nothing to clear
                pass
    for sid, session in listed.items():
        if sid not in _seen_sessions:
            try:
                _seen_sessions[sid] = weakref.ref(session)
            except TypeError:  # not weakly referable: not watched
                pass
    return cleared


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
        cache = vars(vars(runtime._session_mgr)["_session_storage"])["_cache"]
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


#: glibc's ``mallopt`` parameters: the number of heap arenas (``M_ARENA_MAX``) and the size from
#: which a block is mapped on its own (``M_MMAP_THRESHOLD``).
_M_ARENA_MAX = -8
_M_MMAP_THRESHOLD = -3
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
#: Blocks from this size up are mapped on their own and go back to the system when freed.
#: glibc's default starts at 128 kB but rises with each large block freed (up to 32 MB), after
#: which the arrays of a visitor's evaluation came from the heap, between small objects that
#: outlive them, and their pages stayed: fixed at 256 kB, the load test's visitor held 16 MB
#: instead of 29 MB, and 180 s after 4 visitors left the server was 14 MB above idle instead of
#: 49 MB (bench/load_test.py, 4 visitors, measured side by side).
MMAP_THRESHOLD_BYTES = 256 * 1024
#: A heap whose free top is this large gives it back (``M_TRIM_THRESHOLD``, glibc's default),
#: with no extra kept (``M_TOP_PAD`` 0). glibc raises the threshold to twice each large block
#: freed before :data:`MMAP_THRESHOLD_BYTES` is set (the server's imports free blocks of
#: megabytes), and ``malloc_trim`` never shortens a thread heap's top (only the main heap's):
#: thread heaps then kept their emptied tops, tens of MB.
TRIM_THRESHOLD_BYTES = 128 * 1024


def limit_arenas(arenas: int = 1) -> None:
    """At most ``arenas`` glibc heaps, large blocks mapped on their own
    (:data:`MMAP_THRESHOLD_BYTES`), a heap's free top given back from
    :data:`TRIM_THRESHOLD_BYTES`, and Arrow's buffers from the same allocator.

    Streamlit runs each session's script on its own thread, and glibc gives threads up to 8
    heaps a core, each keeping freed pages. Under ``streamlit run`` the heap limit comes too
    late: the server's threads have made more than 8 heaps when the first page runs, and glibc
    then fixes its limit (16 on 2 cores; measured with ``malloc_info``). What makes the thread
    heaps give memory back is the trim threshold: 180 s after 25 load-test visitors left, the
    server was 80 MB above idle with it and 96 MB without (bench/load_test.py); with the run
    scores out of Arrow's mimalloc too (:mod:`metrics_core.io.trec`), 28 MB. The environment's
    ``MALLOC_ARENA_MAX``, ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_``, set before
    the server starts, win (``MALLOC_ARENA_MAX=1`` does give one heap: 12 visitors, 32 MB above
    idle after 150 s against 51-57 MB with 16 heaps and glibc's trim threshold)."""
    libc = _libc()
    if libc is not None and not os.environ.get("MALLOC_ARENA_MAX"):
        try:
            libc.mallopt(_M_ARENA_MAX, arenas)
        except AttributeError:
            pass
    if libc is not None and not os.environ.get("MALLOC_MMAP_THRESHOLD_"):
        try:
            libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        except AttributeError:
            pass
    if libc is not None and not os.environ.get("MALLOC_TRIM_THRESHOLD_"):
        try:
            libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
            libc.mallopt(_M_TOP_PAD, 0)
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
                    cleared = release_gone_sessions()  # dropped sessions something still holds
                    now = sessions_open()
                    released = keep.purge(now)  # data kept for a reload, past its time
                    if (
                        closed
                        or cleared
                        or released
                        or now is None
                        or last is None
                        or len(now) < len(last)
                    ):
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
    "work",
    "work_need",
    "gated",
    "reserved",
    "wait_seconds",
    "cost_line",
    "trim",
    "limit_arenas",
    "start_reclaimer",
    "close_expired_sessions",
    "release_gone_sessions",
    "sessions_open",
]
