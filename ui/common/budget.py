"""The server's memory gate: every computation on a visitor's data reserves what it needs
before it starts; admission by what is free, in arrival order, a line that always moves.

A free host gives the whole app about 1 GB; one visitor's work must never take the process
past it (every other visitor would lose their session). The server's budget is
``RANKLAB_SERVER_MB`` (default :data:`DEFAULT_SERVER_MB`), and never more than
:data:`CGROUP_SHARE` of the memory cgroup's limit when the server runs in one
(:func:`server_budget`).

**What is counted.** The process's *anonymous* memory (``RssAnon`` + ``RssShmem`` of
``/proc/self/status``: :func:`process_anon`), not its resident size. Visitors' data lies off
the heap, in memory-mapped files of their session's folder (:mod:`ui.common.store`): those
pages are the page cache, which the system drops and reads again when memory is short (a
memory cgroup charges them but reclaims them first); anonymous memory it can only keep. So
the memory the gate shares out is the work in flight, not every visitor's data.

**Admission.** :func:`work` (the builds of :func:`ui.common.cache.remember`: ranking,
evaluating, statistics ...) and :func:`reserve` (an upload being read) ask for what they need
at their peak (measured per row and per query, below). Free memory is the budget less the
anonymous memory now and less what admitted work has reserved but may not have taken yet.
There is no fixed share per visitor: one visitor may use whatever is free.

- Work that could never fit, its need above what an idle server can give (:func:`capacity`:
  the budget less the least memory the server has held with nothing in flight), is refused at
  once, in one line: what it needs, the limit, what to do (the command line, which streams).
- Otherwise it joins one line, in arrival order (a visitor whose page was rerun while it waited
  keeps its place). Only the first in line is admitted, when its need is free: a large
  computation is never passed over by small ones. While it waits, the page says where it
  stands: its place, what is ahead, about how long (from the recent computations' times).
- A page's run is one arrival: when one of its computations ends, the memory it gave back
  stays claimed a moment (:data:`CONTINUE_S`, or until the page's run ends) for its next one,
  which takes the same place (:meth:`_Gate.hold_door`); so visitors are served page by page in
  the order they came, not step by step in turns (with 25 visitors in turns, every leaderboard
  came at the very end). The claim holds memory, not the line: those behind are admitted
  meanwhile when their need fits beside it (a held door that stopped everyone served one page
  at a time: 25 visitors waited with the server's CPU 0.1-0.4 of a core).
- Uploads are admitted at the server's door (:func:`guarded_upload_app`), before their bodies
  are read, by their bytes and what reading them will need (:func:`arrival_need`), which stays
  claimed until the file's page starts reading it; a file that does not fit waits there, holding
  nothing, in arrival order, at most :data:`UPLOAD_HOLD_S`, then is refused in one line. A
  file whose visitor already has a file of the same drop admitted and not read is admitted
  when it fits in what is free, claims aside (:func:`_box_waits`): the page reads none of the
  box's files before all of them are in, so those claims wait for it.
  Uploads and computations stand in one line: a computation that arrived after an upload
  began waiting at the door is given only what is free beside it, as far as the end of the
  work in flight would admit that upload (:func:`_door_ahead`); the reading of an upload
  received never gives way (its bytes are what the door waits for).
- Each page drawing now (not waiting in line nor computing) counts :data:`PAGE_RUN_BYTES`
  (what Streamlit builds and sends for it, which no reservation holds).
- The first in line, when nothing is in flight and its need is still not free after the freed
  heap is handed back (the memory is held by data at rest), lets an upload waiting behind it
  that fits be read first (reading it gives the upload's bytes back: :func:`_passer`); when
  none fits, it is refused in one line, and the next one's turn comes. So is a wait past
  ``RANKLAB_WAIT_SECONDS`` (default :data:`DEFAULT_WAIT_SECONDS`).

**Why the gate cannot deadlock** (nor stall with everyone waiting):

1. A waiter holds no reservation. A thread that holds one never joins the line again: work
   started inside it is part of it (:func:`work`), an upload read inside it is tried once,
   without waiting (:func:`reserve`).
2. Admitted work never waits for a waiter: it runs the library to the end and gives its
   reservation back, even when it fails or its visitor leaves (the reservation is released in
   a ``finally``). The app's only wait between computations (:func:`ui.ranking.data.rank_once`:
   a page waits for the ranking another run of the same session is building) waits for a
   build that runs inside a reservation, so for admitted work.
3. The first in line waits only while admitted work is in flight (or, at most
   :data:`CONTINUE_S`, while memory is claimed for the next step of a page that came before
   it: a claim no thread waits on, which lapses by itself; or while an upload that came
   before it waits at the door, if the end of that work would admit it: the door waits for
   no computation, so the upload goes in once the work ends, or is no longer given way to);
   that work ends (2), and then the first is admitted, lets an upload that fits pass
   (which is admitted work, so ends), or is refused. Every end of work moves the line; the
   rest of the line waits behind the first, whose turn comes in finite time, and so on.
4. A waiter whose visitor left (the tab closed, another page opened: Streamlit stops its run)
   leaves the line at its next look at the page (every half second), so no one waits behind
   a visitor who is gone; ``RANKLAB_WAIT_SECONDS`` bounds any wait.
5. A file at the door waits for free memory or for what is claimed for files admitted before
   it. A claim is given back when its page sees the file, which needs only that visitor's own
   box complete; the box's remaining files pass the claims (:func:`_box_waits`), so no claim
   waits for a file that waits for it. :data:`UPLOAD_HOLD_S` bounds any wait at the door.

So a waiter never holds memory another waiter needs (1), the memory waited for is always
memory that admitted work will give back (2, 3), and the only memory not given back -- data
at rest -- is answered by a refusal, not a wait. ``tests/app/test_memory_gate.py`` runs many
simulated visitors in threads whose needs together exceed the budget: each one finishes or is
refused, in bounded time, and in arrival order.

Memory goes back: the reclaimer (:mod:`ui.common.reclaim`) shuts down sessions whose tab
closed, empties those Streamlit still holds (:func:`release_gone_sessions`), releases data kept
for a reload and removes its folder, and trims the heap (:func:`trim`); :func:`limit_arenas` keeps large blocks
out of glibc's heaps and makes every heap, the threads' too, give its freed top back.
"""

from __future__ import annotations

import os
import re
import threading
import time
import weakref
from contextlib import contextmanager

import streamlit as st

from metrics_core.errors import N_, InputError
from ui.common import refusals, state
from ui.common.style import say

MB = 1_000_000
#: The server's budget of anonymous memory for a 1 GB host (a watchdog kills at 1,024 MB:
#: what is left is for the libraries' code, the page cache of the visitors' mapped files and
#: the system's own).
DEFAULT_SERVER_MB = 900
#: Inside a memory cgroup the budget is at most this share of its limit (the rest: the page
#: cache of mapped files and libraries, which the cgroup charges too; at 0.85 of 1 GiB, 25
#: load-test visitors kept the cgroup at its limit, reclaiming: bench/load_test.py).
CGROUP_SHARE = 0.8
#: Seconds a computation or an upload waits for memory before it is refused.
DEFAULT_WAIT_SECONDS = 300
#: A visitor whose page was rerun while waiting keeps its place in line for this long (s).
KEEP_PLACE_S = 30.0
#: A page's run is one arrival: when one of its computations ends, the line's door is held
#: this long (s) for its next one (or until the page's run ends), which takes its place again
#: instead of the back of the line ...
CONTINUE_S = 2.0
#: ... for at most this long after the page first arrived (a visitor who keeps its page
#: busy cannot keep the head of the line for ever).
CONTINUE_MAX_S = 120.0

# --- what a computation needs (measured: bench/visitor_memory.py, BENCHMARKS.md) ------------
#: Reading a TREC run or qrels whole: the parser's temporaries at the peak, as a multiple of
#: the text (1 M lines, 33 MB: +89 MB; 5 M lines, 167 MB: +437 MB), the upload's own bytes
#: already held. What stays once read is not counted: it leaves the heap (ui.common.store).
PARSE_PEAK_FACTOR = 2.8
#: ... and a fixed part (the reader's buffers and pools; a small file's peak is mostly this).
PARSE_FIXED = 8 * MB
#: A gzip or binary upload: its text is its trailer's stated size (gzip) or this many times
#: its bytes (a guess that errs on the large side).
BINARY_TEXT_FACTOR = 8
#: Reading a TREC run batch by batch into the session's folder (ui.ranking.data): a batch's
#: temporaries, plus the query codes and scores kept until the end (12 bytes a row).
STREAM_PARSE_FIXED = 60 * MB
STREAM_PARSE_BYTES_PER_ROW = 12
#: Bytes of temporaries per run row while a run is ranked and evaluated (the sort keys, the
#: join, the ranked lists being built before they leave the heap), and a fixed part.
WORK_BYTES_PER_ROW = 110
WORK_FIXED = 24 * MB
#: Bytes of temporaries per query while the leaderboard's statistics run: the paired
#: randomization test's sign bits, 10,000 permutations of 8-byte values a query, drawn in
#: blocks of at most 2**23 values (``metrics_core.stats.significance``), so at most
#: :data:`STATS_BYTES_MAX`: 67 MB above the evaluated data for two runs over 1,000 queries
#: (measured), 4 MB for the 50 queries of the sample.
STATS_BYTES_PER_QUERY = 80_000
STATS_BYTES_MAX = 70 * MB
#: The most rows evaluated at once (``ui.ranking.data.STREAM_ROWS``: larger runs go in blocks).
WORK_ROWS_MAX = 2_000_000
#: A reservation at least this large hands the heap's freed pages back when it ends
#: (``malloc_trim``: a few milliseconds), so the memory measured next is what stays.
TRIM_AFTER_BYTES = 16 * MB


#: Memory a visitor's page run takes beside the gate's reservations while it runs: Streamlit
#: builds and sends what the page draws (messages, the widgets' state, tables on their way
#: to the browser). Each page running now is counted at this much (:func:`_free`): 50 load-test
#: visitors' pages, running together while the gate's budget was taken, added 100-160 MB in
#: a second or two that no reservation held, and the cgroup killed the server.
PAGE_RUN_BYTES = 4 * MB
#: Seconds an upload waits at the server's door for room before it is refused
#: (:func:`guarded_upload_app`): its body is not read while it waits.
UPLOAD_HOLD_S = 60.0
#: Seconds an upload's reading stays claimed after it arrived (:func:`arrival_need`), unless
#: its page read it or its visitor left first.
UPLOAD_CLAIM_S = 120.0
#: Uploads of at least this many bytes may be read batch by batch (a TREC run:
#: :data:`STREAM_PARSE_FIXED` and :data:`STREAM_PARSE_BYTES_PER_ROW`), the app's threshold
#: for it (``ui.ranking.data.STREAM_PARSE_BYTES``).
STREAM_UPLOAD_BYTES = 64 << 20
#: The fewest bytes a line of an upload is counted at when its lines are not known yet.
MIN_LINE_BYTES = 16


def _env_mb(name: str, default: float) -> int:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        value = default
    return int(max(value, 1) * MB)


def cgroup_limit(proc_file: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> int | None:
    """The memory limit in bytes of the cgroup this process runs in (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``), or None: no cgroup, no limit, not Linux."""
    try:
        with open(proc_file) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    paths = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            paths.append(f"{root}{parts[2].rstrip('/')}/memory.max")
        elif "memory" in parts[1].split(","):
            paths.append(f"{root}/memory{parts[2].rstrip('/')}/memory.limit_in_bytes")
    for path in paths:
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:  # "max" or v1's huge number: no limit
            return int(text)
    return None


def server_budget() -> int:
    """The server's budget of anonymous memory in bytes: ``RANKLAB_SERVER_MB`` (default
    :data:`DEFAULT_SERVER_MB`), at most :data:`CGROUP_SHARE` of the cgroup's limit."""
    budget = _env_mb("RANKLAB_SERVER_MB", DEFAULT_SERVER_MB)
    limit = cgroup_limit()
    return budget if limit is None else min(budget, int(limit * CGROUP_SHARE))


def _status_kb(*fields: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            found = {
                name: int(rest.split()[0])
                for name, _, rest in (line.partition(":") for line in fh)
                if name in fields
            }
    except (OSError, ValueError, IndexError):
        return None
    return sum(found.values()) if found else None


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


def process_anon() -> int:
    """The server process's anonymous memory in bytes (``RssAnon`` + ``RssShmem``): what the
    system cannot drop. Its resident size where the kernel does not say (not Linux)."""
    kb = _status_kb("RssAnon", "RssShmem")
    return kb * 1024 if kb is not None else process_rss()


def size_text(n: int) -> str:
    """A byte count as the gate's lines write it: ``12 MB``, ``4.5 MB``; under 1 MB in
    kilobytes (``48 kB``, at least ``1 kB``: a few kilobytes never read "0.0 MB"); nothing
    at all is ``0 MB``.

    >>> [size_text(n) for n in (12_400_000, 4_460_000, 999_700, 48_200, 300, 0)]
    ['12 MB', '4.5 MB', '1.0 MB', '48 kB', '1 kB', '0 MB']
    """
    if n >= 10 * MB:
        return f"{n / MB:.0f} MB"
    if n >= MB:
        return f"{n / MB:.1f} MB"
    if n <= 0:
        return "0 MB"
    kb = max(1, round(n / 1000))
    return "1.0 MB" if kb >= 1000 else f"{kb} kB"


def _text_size(data: bytes) -> tuple[int, bool]:
    """``(bytes of text, binary)``: an upload's text size, read from a gzip trailer (modulo
    4 GiB, never less than the file), or guessed for another binary upload."""
    if data[:2] == b"\x1f\x8b" and len(data) >= 18:
        return max(int.from_bytes(data[-4:], "little"), len(data)), True
    if data[:4] == b"PAR1" or b"\x00" in data[:4096] or data[:4] == b"\x28\xb5\x2f\xfd":
        return len(data) * BINARY_TEXT_FACTOR, True
    return len(data), False


def estimate(data: bytes, kind: str) -> int:
    """The bytes reading ``data`` needs at its peak, beyond its own bytes (already held):
    ``kind`` "run-stream" (a TREC run read batch by batch into the session's folder:
    :data:`STREAM_PARSE_FIXED` and 12 bytes a line), any other kind ("run", "qrels", "meta",
    "table") read whole (:data:`PARSE_FIXED` and :data:`PARSE_PEAK_FACTOR` times its text; a compressed upload's text
    from its gzip trailer, a binary one guessed at :data:`BINARY_TEXT_FACTOR` times its size).

    >>> estimate(b"q1 Q0 d1 1 1.0 r\\n" * 1000, "run")
    8047600
    """
    text, binary = _text_size(data)
    if kind == "run-stream" and not binary:
        return _stream_need(data.count(b"\n") + 1)
    return _whole_need(text) + (len(data) if binary else 0)


def _stream_need(lines: int) -> int:
    """What reading ``lines`` lines batch by batch needs at its peak."""
    return STREAM_PARSE_FIXED + lines * STREAM_PARSE_BYTES_PER_ROW


def _whole_need(text: int) -> int:
    """What reading ``text`` bytes of text whole needs at its peak, beside the text."""
    return PARSE_FIXED + int(PARSE_PEAK_FACTOR * text)


def arrival_need(length: int) -> int:
    """What reading an upload of ``length`` bytes will need beside its own bytes, judged at
    the server's door from its declared length (its content is not known yet): a text read
    whole (:func:`estimate`), or from :data:`STREAM_UPLOAD_BYTES` read batch by batch, its
    lines counted at :data:`MIN_LINE_BYTES` at least.

    >>> arrival_need(1_000_000)
    10800000
    """
    if length >= STREAM_UPLOAD_BYTES:
        return _stream_need(length // MIN_LINE_BYTES + 1)
    return _whole_need(length)


def work_need(statistics: bool = True) -> int:
    """The temporaries one computation on this visitor's ranking data may take at its peak:
    the larger of ranking and evaluating its largest run (:data:`WORK_FIXED` and
    :data:`WORK_BYTES_PER_ROW`, at most :data:`WORK_ROWS_MAX` rows: a larger run is evaluated
    in blocks) and, unless ``statistics`` is False (the builds that run no statistics: the
    cache's default, :func:`ui.common.cache.remember`), the statistics over the qrels' queries
    of the leaderboard, its bootstrap and Compare's tests (:data:`STATS_BYTES_PER_QUERY`, at
    most :data:`STATS_BYTES_MAX`); 0 without runs (nothing of the ranking section's to do)."""
    runs = st.session_state.get(state.RUNS) or {}
    rows = max((len(r) for r in runs.values()), default=0)
    if not rows:
        return 0
    qrels = st.session_state.get(state.QRELS)
    queries = len(qrels.unique_query_ids()) if qrels is not None and statistics else 0
    return max(
        WORK_FIXED + min(rows, WORK_ROWS_MAX) * WORK_BYTES_PER_ROW,
        min(queries * STATS_BYTES_PER_QUERY, STATS_BYTES_MAX),
    )


def wait_seconds() -> float:
    """How long a computation or an upload waits for memory before it is refused
    (``RANKLAB_WAIT_SECONDS``, default :data:`DEFAULT_WAIT_SECONDS`)."""
    try:
        return max(float(os.environ.get("RANKLAB_WAIT_SECONDS", DEFAULT_WAIT_SECONDS)), 0.0)
    except ValueError:
        return float(DEFAULT_WAIT_SECONDS)


# --- the gate -------------------------------------------------------------------------------
class _Ticket:
    """One computation waiting, then running: its need, its arrival (its place in line), its
    visitor (a rerun's new ticket keeps the place of the last one)."""

    __slots__ = ("need", "arrived", "seq", "session", "page", "beside", "started", "thread")

    def __init__(
        self, need: int, arrived: float, seq: int, session: str, page: str = "", beside: int = 0
    ):
        self.need, self.arrived, self.seq, self.session = need, arrived, seq, session
        self.page, self.beside = page, beside
        self.started = 0.0
        self.thread = threading.get_ident()

    def order(self) -> tuple[float, int]:
        return self.arrived, self.seq


class _Gate:
    """The server's memory, shared by every visitor's work: one lock and condition for the
    process; the line (tickets in arrival order), the work in flight and what it reserved, the
    least memory held with nothing in flight, the recent computations' mean time. A thread
    holding a reservation marks it (:attr:`local`): work started inside it is part of it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.line: list[_Ticket] = []
        self.running: list[_Ticket] = []
        self.reserved = 0
        self.floor: int | None = None
        self.mean_s: float | None = None
        self.seq = 0
        #: session -> (arrival of its ticket that left the line unserved, when it left)
        self.left: dict[str, tuple[float, float]] = {}
        #: session -> (arrival of its page's computation that just ended, until when its
        #: memory stays claimed for the page's next one, the page, the bytes): :meth:`hold_door`
        self.served: dict[str, tuple[float, float, str, int]] = {}
        #: the first in line when it cannot be served with nothing in flight, while an upload
        #: behind it is read first (:func:`_passer`)
        self.stuck: _Ticket | None = None
        self.local = threading.local()

    def enter(self, need: int, session: str, page: str = "", beside: int = 0) -> _Ticket:
        """A new ticket in line (call with the lock held): a visitor already in line, or just
        out of it by a rerun, keeps its arrival; so does the next step of a page whose last
        computation has just ended (:meth:`hold_door`): the page arrived once."""
        now = time.monotonic()
        for gone in [s for s, (_a, left) in self.left.items() if now - left > KEEP_PLACE_S]:
            del self.left[gone]
        for gone in [s for s, (_a, until, _p, _n) in self.served.items() if until <= now]:
            del self.served[gone]
        arrived = now
        if session:
            same = [t.arrived for t in self.line if t.session == session]
            before = self.left.get(session)
            if before is not None and now - before[1] <= KEEP_PLACE_S:
                same.append(before[0])
            went = self.served.pop(session, None)  # its next step is here: the door is its own
            if went is not None and went[2] == page:
                same.append(went[0])
            arrived = min(same, default=now)
        self.seq += 1
        ticket = _Ticket(need, arrived, self.seq, session, page, beside)
        self.line.append(ticket)
        self.line.sort(key=_Ticket.order)
        return ticket

    def hold_door(self, ticket: _Ticket) -> None:
        """A page's computation has ended: for :data:`CONTINUE_S` (or until its page's run
        ends: :func:`page_run_ended`) the memory it gave back stays claimed for the page's
        next computation, which takes its place again instead of the back of the line (with
        25 visitors whose every step went to the back, everyone's leaderboard came at the
        very end; served page by page, the first come first). Whoever arrived after it is
        admitted meanwhile only beside the claim (:meth:`door_held`). Not past
        :data:`CONTINUE_MAX_S` after the page arrived: a page kept busy does not keep the
        head of the line. Call with the lock held."""
        now = time.monotonic()
        if ticket.session and now - ticket.arrived <= CONTINUE_MAX_S:
            self.served[ticket.session] = (
                ticket.arrived,
                now + CONTINUE_S,
                ticket.page,
                ticket.need,
            )

    def door_held(self, ticket: _Ticket) -> tuple[int, float]:
        """``(bytes, seconds)``: the memory claimed for the next steps of pages that arrived
        before ``ticket`` (:meth:`hold_door`), and how long until the first claim lapses
        (``(0, 0.0)``: nothing claimed). Call with the lock held."""
        now = time.monotonic()
        held = [
            (need, until - now)
            for s, (arrived, until, _p, need) in self.served.items()
            if s != ticket.session and until > now and arrived < ticket.arrived
        ]
        if not held:
            return 0, 0.0
        return sum(n for n, _s in held), min(s for _n, s in held)


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


def _free() -> int:
    """Bytes the server may still give now: its budget less its anonymous memory, what is
    reserved by work in flight, the uploads being received and :data:`PAGE_RUN_BYTES` for each
    other page running now (:func:`page_run_started`); notes the least memory held with
    nothing in flight (call with the lock held)."""
    anon = process_anon()
    if not _gate.running and (_gate.floor is None or anon < _gate.floor):
        _gate.floor = anon
    # the uploads being received take their bytes as they arrive (:func:`guarded_upload_app`)
    pages = PAGE_RUN_BYTES * _other_pages()
    return server_budget() - anon - _gate.reserved - _uploads_in_flight[0] - pages


#: the threads whose page run is in progress (:func:`page_run_started`)
_pages_running: set[int] = set()


def _other_pages() -> int:
    """How many page runs are drawing now on other threads than this one (call with the lock
    held): not those waiting in line or inside a reservation (what they draw next comes after
    their computation, whose memory is counted); a run whose thread has ended without saying
    so is forgotten."""
    if not _pages_running:
        return 0
    alive = {t.ident for t in threading.enumerate()}
    _pages_running.intersection_update(alive)
    busy = {t.thread for t in _gate.line} | {t.thread for t in _gate.running}
    busy.add(threading.get_ident())
    return sum(1 for t in _pages_running if t not in busy)


def page_run_started() -> None:
    """A visitor's page run starts on this thread (:func:`ui.common.frame.page`): until it
    ends (:func:`page_run_ended`) the gate counts :data:`PAGE_RUN_BYTES` for it."""
    with _gate.lock:
        _pages_running.add(threading.get_ident())


def capacity() -> int:
    """The most one computation can ever be given: the budget less the least anonymous
    memory the server has held with nothing in flight (the server at rest)."""
    with _gate.lock:
        _free()
        floor = _gate.floor if _gate.floor is not None else process_anon()
    return server_budget() - floor


def note_rest() -> None:
    """Read the server's memory now, as the least it holds at rest when nothing is in flight
    (the reclaimer does it every tick, so that :func:`capacity` follows the server at rest)."""
    with _gate.lock:
        _free()


def reserved() -> int:
    """Bytes reserved now by uploads being read and computations running, server-wide."""
    with _gate.lock:
        return _gate.reserved


def waiting() -> int:
    """How many computations wait in line now."""
    with _gate.lock:
        return len(_gate.line)


def _place(ticket: _Ticket, free: int | None = None) -> tuple[int, int, int, float | None]:
    """``(place, ahead, their need, seconds)`` of a ticket in line: its place (1: next), how
    many wait ahead of it (the uploads at the door it gives way to included:
    :func:`_door_ahead`, with ``free`` the memory free now) and what they need, and about how
    long until its turn (the recent computations' mean time for each one ahead and for the
    work in flight; None before any has finished). Call with the lock held."""
    ahead = [t.need for t in _gate.line if t.order() < ticket.order()]
    if free is not None:
        ahead += _door_ahead(ticket, free)
    mean = _gate.mean_s
    seconds = None if mean is None else mean * (len(ahead) + (1 if _gate.running else 0))
    return len(ahead) + 1, len(ahead), sum(ahead), seconds


def _door_ahead(ticket: _Ticket, free: int) -> list[int]:
    """The needs of the uploads waiting at the server's door (:func:`guarded_upload_app`) that
    ``ticket`` gives way to, ``free`` being the memory free now: one line, in arrival order,
    for uploads and computations. A computation is given only what is free beside the
    uploads that arrived before it (a visitor whose run waited at the door while the earlier
    visitors' next pages took every megabyte freed got its leaderboard last), as far as the
    end of the work in flight can admit them (the door's own test, with what is reserved
    given back: an upload that cannot fit then waits for memory no computation gives back).
    Never the reading of an upload received (``ticket.beside``): its place was taken when the
    door admitted it, and its bytes, held until it is read, are what the door waits for.
    Given way to without those two limits, 17 visitors' readings and the uploads at the door
    waited on each other for 60 s, until the door refused. Call with the lock held."""
    if ticket.beside or not _at_door:
        return []
    room = free + _gate.reserved - _claimed()
    needs: list[int] = []
    for upload in _at_door:  # the door admits them in this order
        if upload.arrived >= ticket.arrived or upload.need > room:
            break
        needs.append(upload.need)
        room -= upload.need
    return needs


def _about(seconds: float) -> str:
    from ui.common.i18n import gettext as _

    if seconds < 60:
        return say(_("{n} s"), n=max(5, int(round(seconds / 5.0)) * 5))
    return say(_("{n} min"), n=int(round(seconds / 60.0)))


def _wait_line(place: int, ahead: int, ahead_need: int, seconds: float | None) -> str:
    """What a waiting visitor reads: where it stands in line, what is ahead, about how long."""
    from ui.common.i18n import gettext as _
    from ui.common.i18n import ngettext

    if ahead == 0:
        where = _(
            "Waiting for memory: yours is next; it starts when the computations running now "
            "give their memory back."
        )
    else:
        where = say(
            ngettext(
                "Waiting for memory: you are number {place} in line, behind {n} computation "
                "that needs {need}.",
                "Waiting for memory: you are number {place} in line, behind {n} computations "
                "that need {need}.",
                ahead,
            ),
            place=place,
            n=ahead,
            need=size_text(ahead_need),
        )
    if seconds is None:
        return where
    return say(
        "{where} {time}", where=where, time=say(_("About {time} to go."), time=_about(seconds))
    )


#: The waiting note is rewritten at most this often (s): each write is a message the
#: visitor's browser renders, for every waiter.
NOTE_EVERY_S = 2.0


class _Waiting:
    """The page's note while a computation waits in line (nothing outside a script run).
    Each look at it (every half second) is also where Streamlit stops the run of a visitor who
    left or changed page (its own stop check, :func:`_stop_point`), so a waiter nobody waits
    for leaves the line. The note is written when its text changes, at most every
    :data:`NOTE_EVERY_S` (it was rewritten every half second unchanged: with 25 visitors in
    line, 50 messages a second for their browsers to draw)."""

    def __init__(self) -> None:
        self.slot = None
        self.text = ""
        self.shown = 0.0

    def show(self, text: str) -> None:
        if not state.in_app():
            return
        now = time.monotonic()
        if self.slot is None:
            self.slot = st.empty()
        elif (text == self.text or now - self.shown < NOTE_EVERY_S) and _stop_point():
            return
        elif text == self.text and now - self.shown < 0.5:
            return
        self.slot.info(text, icon=":material/hourglass_top:")
        self.text, self.shown = text, now

    def close(self) -> None:
        """Take the note off the page (Streamlit may stop the run here: the caller handles
        it)."""
        slot, self.slot = self.slot, None
        if slot is not None:
            slot.empty()


def _stop_point() -> bool:
    """Where Streamlit stops or reruns this script run if it was asked to (the visitor left,
    changed page, or changed a widget): its own check, which every element written also makes
    (``get_run_yield_check``). False where there is none (outside a script run, or a Streamlit
    without it: the note is then rewritten, which makes the check)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check
    except ImportError:
        return False
    check = get_run_yield_check()
    if check is None:
        return False
    check()
    return True


@contextmanager
def _held(need: int, refusal, never, *, wait: bool = True, beside: int = 0):
    """Reserve ``need`` bytes of the server's budget while the block runs (see the module
    docstring: admission, the line, why it cannot deadlock).

    ``never(limit)``: the InputError of work that could never fit (raised at once);
    ``refusal(free)``: the one of work the server cannot give memory now (the first in line
    with nothing in flight, or a wait past :func:`wait_seconds`). ``wait=False``: refused at
    once when it does not fit now (an upload read inside another reservation of the same
    thread, which must not wait for itself). ``beside``: memory the work's input holds already
    (an upload's own bytes), which an idle server must hold beside the need."""
    need = max(int(need), 0)
    limit = capacity() - max(int(beside), 0)
    if need > limit:
        raise never(max(limit, 0))
    note = _Waiting()
    session, page = state.session_id(), state.page_id()
    with _gate.cond:
        ticket = _gate.enter(need, session, page, max(int(beside), 0))
    admitted = False
    try:
        deadline = time.monotonic() + wait_seconds()
        trimmed = False
        while True:
            with _gate.cond:
                first = _gate.line[0] is ticket
                free = _free()
                claimed, held = _gate.door_held(ticket)
                at_door = sum(_door_ahead(ticket, free)) if wait else 0  # else: now or never
                turn = first or _passes(ticket, free)
                if turn and need <= free - claimed - at_door:
                    _gate.line.remove(ticket)
                    if _gate.stuck is ticket:
                        _gate.stuck = None
                    _gate.reserved += need
                    ticket.started = time.monotonic()
                    _gate.running.append(ticket)
                    _gate.left.pop(session, None)
                    admitted = True
                    break
                in_flight = bool(_gate.running) or _uploads_in_flight[0] > 0
                expired = time.monotonic() >= deadline
                stuck = first and not in_flight and not held and not at_door and trimmed
                if stuck and _passer(free) is not None:
                    # memory at rest includes uploads waiting behind: one that fits is read
                    # first, and gives its bytes back (rather than this one refused)
                    _gate.stuck = ticket
                    _gate.cond.notify_all()
                    stuck = False
                if not wait or expired or stuck:
                    raise refusal(max(free, 0))
                if first and not in_flight and not held and not at_door and not trimmed:
                    trim_now = True  # freed pages, and garbage, still counted: once
                else:
                    trim_now = False
                    place = _place(ticket, free)
            if trim_now:
                trim()
                trimmed = True
                continue
            note.show(_wait_line(*place))
            with _gate.cond:
                _gate.cond.wait(min(0.5, held) if held else 0.5)
    finally:
        if not admitted:
            with _gate.cond:
                if _gate.stuck is ticket:
                    _gate.stuck = None
                if ticket in _gate.line:
                    _gate.line.remove(ticket)
                    if session:  # left unserved (refused, or its run stopped): a rerun's place
                        _gate.left[session] = (ticket.arrived, time.monotonic())
                _gate.cond.notify_all()
            try:
                note.close()
            except BaseException:  # noqa: S110  (the refusal or the stop under way goes on)
                pass
    try:  # the note leaves the page; a run stopped right now stops here, its memory given back
        note.close()
    except BaseException:
        _give_back(ticket)
        raise
    before = _mine()
    _gate.local.held = before + need
    try:
        yield
    finally:
        _gate.local.held = before
        _give_back(ticket)


def _passer(free: int) -> _Ticket | None:
    """The first upload in line, after the first, that fits in ``free`` now (call with the
    lock held): when the first in line is stuck (its need not free with nothing in flight,
    the heap trimmed), reading it gives its bytes back, which may be what the first needs."""
    return next((t for t in _gate.line[1:] if t.beside > 0 and t.need <= free), None)


def _passes(ticket: _Ticket, free: int) -> bool:
    """Whether ``ticket`` goes before the stuck first in line (:func:`_passer`)."""
    stuck = _gate.stuck
    return (
        stuck is not None
        and bool(_gate.line)
        and _gate.line[0] is stuck
        and not _gate.running
        and _passer(free) is ticket
    )


def page_run_ended() -> None:
    """The visitor's page run has ended (:func:`ui.common.frame.page`): the door held for its
    next computation opens (:meth:`_Gate.hold_door`), and the run is no longer counted
    (:func:`page_run_started`)."""
    session = state.session_id()
    with _gate.cond:
        me = threading.get_ident()
        counted = me in _pages_running
        _pages_running.discard(me)
        opened = bool(session) and _gate.served.pop(session, None) is not None
        if counted or opened:
            _gate.cond.notify_all()


def _give_back(ticket: _Ticket) -> None:
    """End an admitted computation: its reservation back to the server, the door held a
    moment for its page's next computation, the line told."""
    with _gate.cond:
        _gate.reserved -= ticket.need
        _gate.running.remove(ticket)
        _gate.hold_door(ticket)
        took = time.monotonic() - ticket.started
        _gate.mean_s = took if _gate.mean_s is None else 0.7 * _gate.mean_s + 0.3 * took
        waiters = bool(_gate.line)
    if waiters or ticket.need >= TRIM_AFTER_BYTES:
        # the freed temporaries go back to the system: the memory that the next admission
        # measures is what stays, not what was given up
        trim(collect=False)
    with _gate.cond:
        _gate.cond.notify_all()


_COMMAND_LINE = N_(
    "Evaluate it with the command line (ranklab evaluate --qrels QRELS --run RUN), which "
    "streams it in bounded memory"
)
_TRY_AGAIN = N_(
    "Try again in a few minutes, or evaluate it with the command line "
    "(ranklab evaluate --qrels QRELS --run RUN), which streams it"
)


@contextmanager
def reserve(data: bytes, kind: str, name: str):
    """Hold what reading ``data`` as ``kind`` needs (:func:`estimate`) while the block runs
    (the parse); raises InputError (one line: what it needs, the limit or what is free, what
    to do) before any work: at once when it could never fit, after waiting its turn
    (:func:`_held`) when the server's memory is taken by work in flight.

    Gives the readers' limits for the block (:class:`metrics_core.io.limits.Limits`, to use
    with ``using_limits``): the input limit is the text the reservation was made for (the
    upload's size, a gzip trailer's stated size, or the guess for another binary upload), so
    that an input decoding to more than was reserved (a bomb whose trailer lies, a Parquet
    file whose dictionary explodes) is refused by its reader before it takes what the gate did
    not give; the other limits stay the process's."""
    from metrics_core.io.limits import current_limits

    need = estimate(data, kind)
    limits = current_limits()
    text, _binary = _text_size(data)
    limits = limits.with_input_bytes(min(max(text, len(data), 1 << 20), limits.input_bytes))

    def never(limit: int) -> InputError:
        return InputError(
            N_(
                "reading it needs about {need} beside the file itself; this server can give it "
                "at most {limit}"
            ),
            source=name,
            params={"need": size_text(need), "limit": size_text(limit)},
            hint=_COMMAND_LINE,
        )

    def refusal(free: int) -> InputError:
        return InputError(
            N_(
                "it would need about {need} while it is read; the server has {free} free "
                "for everyone now"
            ),
            source=name,
            params={"name": name, "need": size_text(need), "free": size_text(free)},
            hint=_TRY_AGAIN,
        )

    with _gated(), _held(need, refusal, never, wait=not _mine(), beside=len(data)):
        yield limits


def upload_refused(name: str) -> InputError:
    """The one line of a file refused at the server's door (:func:`guard_uploads`): its name,
    the server's memory full with other visitors' work now, what to do."""
    return InputError(
        N_(
            "the server's memory is full with other visitors' work now, so the file was not "
            "received"
        ),
        source=name,
        hint=_TRY_AGAIN,
    )


@contextmanager
def work(need: int, name: str | None = None):
    """Hold ``need`` bytes of the server's budget while a computation runs (the one cache's
    builds: :func:`ui.common.cache.remember`), so that visitors' computations together never
    take the process past the server's budget: refused at once in one line when it could
    never fit (:func:`capacity`), otherwise in line, served in arrival order (the page says
    its place and about how long), refused in one line only when the server cannot give the
    memory (module docstring). Work started inside another reservation of the same thread is
    part of it (nothing more is reserved). ``name``: the run the work evaluates."""
    if need <= 0 or _mine():
        with _gated():
            yield
        return

    def never(limit: int) -> InputError:
        params = {"need": size_text(need), "limit": size_text(limit)}
        if name is not None:
            return InputError(
                N_(
                    "evaluating {name} needs about {need}; this server can give one "
                    "computation at most {limit}"
                ),
                params={"name": name, **params},
                hint=_COMMAND_LINE,
            )
        return InputError(
            N_(
                "this computation needs about {need}; this server can give one computation "
                "at most {limit}"
            ),
            params=params,
            hint=_COMMAND_LINE,
        )

    def refusal(free: int) -> InputError:
        params = {"need": size_text(need), "free": size_text(free)}
        if name is not None:
            return InputError(
                N_(
                    "evaluating {name} would need about {need}; the server has {free} free for "
                    "everyone now"
                ),
                params={"name": name, **params},
                hint=_TRY_AGAIN,
            )
        return InputError(
            N_(
                "this computation would need about {need}; the server has {free} free for "
                "everyone now"
            ),
            params=params,
            hint=_TRY_AGAIN,
        )

    with _gated(), _held(need, refusal, never):
        yield


# --- memory goes back: sessions dropped, arenas trimmed ---------------------------------------
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
        loop = _server_loop()
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


def _server_loop():
    """The server's event loop (Streamlit's internal; raises outside a running server)."""
    from streamlit.runtime import Runtime

    return Runtime.instance()._get_async_objs().eventloop


#: The name AnyIO gives the worker threads of its pool.
WORKER_THREAD = "AnyIO worker thread"


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == WORKER_THREAD]


def release_idle_workers(loop=None, wait_s: float = 5.0) -> int:
    """End the web server's worker threads that sit idle.

    Streamlit's web server reads uploads and serves files in AnyIO's worker threads, one per
    request in flight: 25 visitors arriving together started 21 to 27. AnyIO ends a worker
    idle for 10 s only when the next request reaches the pool, so after a crowd left, when
    nothing comes, every worker stayed, each with its stack and the objects made for it
    during the crowd's peak (its queue, locks, conditions; found among the few objects that
    kept Python's small-object arenas of that peak, by mapping the server's live objects to
    their addresses 180 s after a 25-visitor load test; ending them did not measurably lower
    that memory: BENCHMARKS.md). One empty call into the pool, on the server's event loop
    (``loop``, by default Streamlit's), lets AnyIO end the idle ones (one stays: the one that
    ran the call). Returns how many had ended when none more ended for half a second, or at
    ``wait_s`` (0 outside a running server, or without AnyIO)."""
    import asyncio

    try:
        import anyio.to_thread

        loop = loop if loop is not None else _server_loop()
    except Exception:  # no server, or another Streamlit: its workers end when it ends them
        return 0
    before = _workers()
    if len(before) < 2:
        return 0

    async def nudge() -> None:
        await anyio.to_thread.run_sync(_nothing)

    try:
        asyncio.run_coroutine_threadsafe(nudge(), loop).result(timeout=30)
    except Exception:  # the loop stopped or is busy for that long: the next tick tries again
        return 0
    # the ended ones leave as soon as they are scheduled; a busy one does not end here
    deadline = time.monotonic() + wait_s
    alive, quiet_since = before, time.monotonic()
    while alive and time.monotonic() < deadline and time.monotonic() - quiet_since < 0.5:
        time.sleep(0.02)
        still = [t for t in alive if t.is_alive()]
        if len(still) < len(alive):
            alive, quiet_since = still, time.monotonic()
    return len(before) - len(alive)


def _nothing() -> None:
    return None


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


_UPLOADS_GUARDED: list = []


def guard_uploads(manager=None) -> bool:
    """Once per process: the server's upload manager refuses a file whose arrival takes the
    server's anonymous memory, with what is reserved, past its budget (HTTP 507: the file's
    chip in the box says it failed; its bytes go when the request ends), instead of keeping
    it until its visitor's page reads it; the refusal is recorded for the visitor's session,
    which is asked to rerun, and its page shows it in one line (:mod:`ui.common.refusals`,
    :func:`upload_refused`). Streamlit keeps every upload's bytes in memory from
    the moment it arrives, before any page runs, so the gate cannot see it coming: 50 load-test
    visitors uploading 15.6 MB each at the same moment took the server past its 1 GiB cgroup,
    every visitor's session lost. A file that leaves the manager (its page read it, or its
    visitor left) gives back what its reading was claimed at the door
    (:func:`guarded_upload_app`). ``manager``: the upload manager (default: the running
    server's). Returns whether the guard is on."""
    if _UPLOADS_GUARDED:
        return True
    server = manager is None
    if manager is None:
        try:
            from streamlit.runtime import Runtime

            manager = Runtime.instance().uploaded_file_mgr
        except Exception:  # no server (a script, a test): nothing to guard
            return False
    add = manager.add_file

    def add_within_budget(session_id, file):
        name = getattr(file, "name", "")
        if process_anon() + reserved() > server_budget():
            _refuse_upload(session_id, name)
        added = add(session_id=session_id, file=file)
        refusals.arrived(session_id, name)  # a refusal of that name is taken back
        return added

    manager.add_file = add_within_budget
    remove_file = getattr(manager, "remove_file", None)
    if remove_file is not None:

        def remove_and_unclaim(session_id, file_id):
            unclaim(session_id, file_id)
            return remove_file(session_id=session_id, file_id=file_id)

        manager.remove_file = remove_and_unclaim
    remove_session_files = getattr(manager, "remove_session_files", None)
    if remove_session_files is not None:

        def remove_all_and_unclaim(session_id):
            unclaim(session_id)
            return remove_session_files(session_id=session_id)

        manager.remove_session_files = remove_all_and_unclaim
    _UPLOADS_GUARDED.append(manager)
    if server:  # and its request handler: refused before the body is read
        guard_upload_requests()
    return True


def _refuse_upload(session_id: str, name: str) -> None:
    """Refuse an upload at the server's door: recorded for its visitor's page, which says it
    in one line in its language (:mod:`ui.common.refusals`), and HTTP 507 for the browser."""
    from starlette.exceptions import HTTPException

    refusals.refused(session_id, name)
    raise HTTPException(
        status_code=507,
        detail="The server's memory is full with other visitors' work now: try again in a "
        "few minutes.",
    )


#: Bytes of uploads being received now (their requests' declared lengths), server-wide:
#: :func:`guarded_upload_app`.
_uploads_in_flight = [0]
#: (session, file id) -> (what its reading was claimed at, until when): the uploads admitted
#: at the door whose page has not read them yet (:func:`guarded_upload_app`, :func:`unclaim`)
_claims: dict[tuple[str, str], tuple[int, float]] = {}


class _Arrival:
    """An upload waiting at the server's door (:func:`guarded_upload_app`): when it arrived
    and what it needs (its bytes and its reading)."""

    __slots__ = ("arrived", "need")

    def __init__(self, need: int) -> None:
        self.arrived, self.need = time.monotonic(), need


#: the uploads waiting at the door for room, in arrival order (changed with the gate's lock
#: held: the gate reads it, :func:`_door_ahead`)
_at_door: list[_Arrival] = []
_FILENAME = re.compile(rb'filename="([^"\r\n]{0,1000})"')


def _declared_length(scope) -> int:
    for key, value in scope.get("headers") or ():
        if key.lower() == b"content-length":
            try:
                return max(int(value), 0)
            except ValueError:
                return 0
    return 0


def _claimed() -> int:
    """Bytes claimed now for reading the uploads admitted at the door and not read yet (call
    with the lock held); a claim past :data:`UPLOAD_CLAIM_S` lapses."""
    now = time.monotonic()
    for gone in [k for k, (_n, until) in _claims.items() if until <= now]:
        del _claims[gone]
    return sum(n for n, _u in _claims.values())


def _box_waits(session_id: str) -> bool:
    """Whether a file of ``session_id`` was admitted at the door and is not read yet (call with
    the lock held, after :func:`_claimed`). Streamlit hands an upload box's files to its page
    only once every one of them is received (its uploader sends the box's value when none is
    still uploading), so such a claim cannot be given back before this visitor's next file is
    in: that file is admitted when its bytes and its reading fit in what is free, claims aside,
    before the files waiting ahead of it. Held behind the claims, it waited for itself: 20 of
    25 load-test visitors had their second run refused after the door's hold, the server idle,
    the budget claimed by first runs whose pages waited for their second."""
    return bool(session_id) and any(k[0] == session_id for k in _claims)


def unclaim(session_id: str, file_id: str | None = None) -> None:
    """An upload (all of a session's when ``file_id`` is None) left the upload manager: what
    its reading was claimed at the door is given back."""
    with _gate.lock:
        for key in [k for k in _claims if k[0] == session_id and file_id in (None, k[1])]:
            del _claims[key]


def guarded_upload_app(inner):
    """Streamlit's upload request handler (an ASGI app: ``inner``) behind the server's door.

    A file is admitted when its declared length and what reading it will need
    (:func:`arrival_need`) are free beside the memory held, reserved, arriving and claimed for
    the reading of the files admitted before it (:func:`_claimed`); until its page starts
    reading it (:func:`unclaim`) its reading stays claimed. One that does not fit waits, its body unread,
    in arrival order, at most :data:`UPLOAD_HOLD_S`, then is refused (HTTP 507, recorded for
    its visitor's page: :mod:`ui.common.refusals`); one that could never fit is refused at once.
    Streamlit's handler reads the whole body into memory before its upload manager is asked
    (:func:`guard_uploads`): 50 visitors' runs arriving together were all in memory before any
    was refused (the server went from 409 to 1,065 MB anonymous in 9 s and its cgroup killed
    it); admitted by their bytes alone, 436 MB of them filled the budget and no page could read
    them. Only the first part of a refused body is read, for the file's name."""

    async def app(scope, receive, send):
        if scope.get("type") != "http" or scope.get("method") != "PUT":
            await inner(scope, receive, send)
            return
        import asyncio

        params = scope.get("path_params") or {}
        key = (str(params.get("session_id", "")), str(params.get("file_id", "")))
        length = _declared_length(scope)
        need = arrival_need(length) if length else 0
        token = _Arrival(length + need)
        with _gate.lock:
            _at_door.append(token)
        try:
            never = length + need > capacity()
            deadline = time.monotonic() + UPLOAD_HOLD_S
            while not never:
                with _gate.lock:
                    free, claimed = _free(), _claimed()
                    room = free - claimed >= length + need
                    # its box's other files wait for it (_box_waits): claims aside
                    passes = _box_waits(key[0]) and free >= length + need
                    if length == 0 or (_at_door[0] is token and room) or passes:
                        _uploads_in_flight[0] += length
                        if need:
                            _claims[key] = (need, time.monotonic() + UPLOAD_CLAIM_S)
                        _at_door.remove(token)
                        _gate.cond.notify_all()  # computations behind it may go now
                        break
                if time.monotonic() >= deadline:
                    never = True
                    break
                await asyncio.sleep(0.25)
        finally:
            with _gate.lock:
                if token in _at_door:  # refused, or its request ended while it waited
                    _at_door.remove(token)
                    _gate.cond.notify_all()
        if never:
            first = await receive()
            found = _FILENAME.search(first.get("body", b"")[:65536])
            name = found.group(1).decode("utf-8", "replace") if found else "?"
            _refuse_upload(key[0], name)
        status = [0]

        async def sending(message):
            if message.get("type") == "http.response.start":
                status[0] = int(message.get("status", 0))
            await send(message)

        try:
            await inner(scope, receive, sending)
        finally:
            with _gate.lock:
                _uploads_in_flight[0] -= length
                if not 200 <= status[0] < 300:  # not received: nothing to read
                    _claims.pop(key, None)

    app.ranklab_guarded = True  # type: ignore[attr-defined]
    return app


def guard_upload_requests(routes=None) -> int:
    """Put Streamlit's upload request handlers (``routes``: by default found among the live
    objects, the routes whose endpoint is Streamlit's ``_upload_put``) behind
    :func:`guarded_upload_app`; returns how many were guarded now. Streamlit's internals:
    where its routes are not found nothing changes (the upload manager's guard stays)."""
    if routes is None:
        try:
            import gc

            from starlette.routing import Route
        except ImportError:
            return 0
        # ``type(o) is Route``: isinstance asks an object of another type for its
        # ``__class__``, which a proxy may answer by raising (the scan then found nothing)
        found = [o for o in gc.get_objects() if type(o) is Route]
        routes = [
            o
            for o in found
            if getattr(getattr(o, "endpoint", None), "__name__", "") == "_upload_put"
        ]
    done = 0
    for route in routes:
        if not getattr(route.app, "ranklab_guarded", False):
            route.app = guarded_upload_app(route.app)
            done += 1
    return done


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


__all__ = [
    "DEFAULT_SERVER_MB",
    "server_budget",
    "cgroup_limit",
    "process_rss",
    "process_anon",
    "capacity",
    "estimate",
    "reserve",
    "work",
    "work_need",
    "gated",
    "reserved",
    "waiting",
    "wait_seconds",
    "trim",
    "limit_arenas",
    "note_rest",
    "size_text",
    "upload_refused",
    "close_expired_sessions",
    "release_gone_sessions",
    "release_idle_workers",
    "sessions_open",
]
