"""Uploads refused at the server's door, told to their visitor on the page.

The upload guard (:func:`ui.common.budget.guard_uploads`) refuses a file whose arrival would
take the server's memory past its budget (HTTP 507), before Streamlit keeps its bytes. The
visitor's box then only marks the file's chip with Streamlit's own English words ("AxiosError:
Request failed with status code 507": Streamlit's frontend shows the request error's own
text, never the response's body), and no run of the page comes, so the page never learns of
it. Here the guard records the refusal under the visitor's session and asks that session to
rerun; the page skeleton (:func:`ui.common.frame.page`, through
:func:`ui.common.upload.show_refused`) takes the session's refusals at each run and shows each
as the app's one line for a file, in the visitor's language.

- **Per session, bounded, never seen by another.** Records are kept by Streamlit's session id
  (the one the upload's address names, which Streamlit checked is an open session); a page
  takes only its own session's (:func:`take`). At most :data:`MAX_PER_SESSION` names a
  session (a name cut at :data:`MAX_NAME` characters) and :data:`MAX_SESSIONS` sessions (the
  oldest dropped); the reclaimer drops those of sessions that ended (:func:`forget`).
- **A file that arrives later** under a refused name (tried again, and received) takes its
  refusal back (:func:`arrived`), so the line does not stay beside the loaded file.
- **The rerun** (:func:`ask_rerun`) is asked on the server's event loop, where Streamlit
  handles a browser's own rerun requests: when the session has no run in flight, it is rerun
  on its last page and address with its widgets as they are now (``st.rerun``'s kind of run:
  ``AppSession._create_scriptrunner``), not with the browser's last widget values replayed. A
  run in flight is never stopped for it (it may be the visitor's own click, or a change of
  page):
  the session is looked at again every :data:`RETRY_EVERY_S` until it is idle (at most
  :data:`RETRY_FOR_S`), and rerun then only if its page has not shown the refusal meanwhile.
  These are Streamlit's internals: where they are missing (another Streamlit), nothing is
  asked, and the line shows at the visitor's next run (``tests/app/test_upload_refusals.py``
  runs them on a real Streamlit runtime).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

#: Names kept for one session (the oldest dropped).
MAX_PER_SESSION = 8
#: Sessions kept (the one refused longest ago dropped first).
MAX_SESSIONS = 1000
#: Characters of a file name kept (a name is the visitor's text: bounded).
MAX_NAME = 200
#: Seconds a refusal stands (shown on the visitor's pages, taken back by the file arriving).
SHOW_FOR_S = 600.0
#: While the session's page runs, it is looked at again this often (s) ...
RETRY_EVERY_S = 0.5
#: ... for at most this long (s).
RETRY_FOR_S = 600.0


class _Record:
    """One session's refusals: the news its page has not taken yet (name, refused: True, or
    arrived since: False), and the names refused that stand (name -> when)."""

    __slots__ = ("news", "standing")

    def __init__(self) -> None:
        self.news: list[tuple[str, bool]] = []
        self.standing: dict[str, float] = {}


_lock = threading.Lock()
_records: OrderedDict[str, _Record] = OrderedDict()


def _now() -> float:
    return time.monotonic()


def _short(name: object) -> str:
    text = str(name or "") or "?"
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"


def _expire(record: _Record, now: float) -> None:
    for name in [n for n, at in record.standing.items() if now - at > SHOW_FOR_S]:
        del record.standing[name]


def refused(session_id: str, name: object) -> None:
    """Record that the file ``name`` sent by session ``session_id`` was refused, and ask the
    session to rerun (:func:`ask_rerun`). Cheap, never raises (the server's event loop calls
    it)."""
    if not session_id:
        return
    name = _short(name)
    now = _now()
    with _lock:
        record = _records.pop(session_id, None) or _Record()
        _records[session_id] = record  # the most recent last
        _expire(record, now)
        record.news.append((name, True))
        del record.news[: -2 * MAX_PER_SESSION]
        record.standing.pop(name, None)
        record.standing[name] = now
        while len(record.standing) > MAX_PER_SESSION:
            del record.standing[next(iter(record.standing))]
        while len(_records) > MAX_SESSIONS:
            _records.popitem(last=False)
    ask_rerun(session_id)


def arrived(session_id: str, name: object) -> None:
    """The file ``name`` of session ``session_id`` was received: a refusal of that name
    standing for the session is taken back (its page's line goes)."""
    name = _short(name)
    with _lock:
        record = _records.get(session_id)
        if record is not None:
            _expire(record, _now())
        if record is not None and record.standing.pop(name, None) is not None:
            record.news.append((name, False))
            del record.news[: -2 * MAX_PER_SESSION]


def peek(session_id: str) -> list[tuple[str, bool]]:
    """The news :func:`take` would give, left in place (a page reads them, writes them, then
    takes them: a run stopped in between leaves them for the next)."""
    if not session_id:
        return []
    with _lock:
        record = _records.get(session_id)
        return list(record.news) if record is not None else []


def take(session_id: str, count: int | None = None) -> list[tuple[str, bool]]:
    """The news of session ``session_id`` since its page last took them, oldest first:
    ``(name, True)`` for a file refused, ``(name, False)`` for a refused name received
    since; only the first ``count`` of them when given (those a page has shown: news come
    since stay). Only that session's; empty for another."""
    if not session_id:
        return []
    with _lock:
        record = _records.get(session_id)
        if record is None:
            return []
        cut = len(record.news) if count is None else max(min(count, len(record.news)), 0)
        news, record.news = record.news[:cut], record.news[cut:]
        _expire(record, _now())
        if not record.standing and not record.news:
            del _records[session_id]
        return news


def pending(session_id: str) -> bool:
    """Whether session ``session_id`` has news its page has not taken."""
    with _lock:
        record = _records.get(session_id)
        return record is not None and bool(record.news)


def forget(open_sessions: set[str] | None) -> int:
    """Drop the records of sessions not in ``open_sessions`` (the reclaimer, with the
    sessions the server holds; None: unknown, nothing dropped). Returns how many."""
    if open_sessions is None:
        return 0
    with _lock:
        gone = [sid for sid in _records if sid not in open_sessions]
        for sid in gone:
            del _records[sid]
    return len(gone)


def clear() -> None:
    """Drop every record (tests)."""
    with _lock:
        _records.clear()


# --- the rerun: Streamlit's internals, failing soft ------------------------------------------
def _runtime():
    from streamlit.runtime import Runtime

    return Runtime.instance() if Runtime.exists() else None


def ask_rerun(session_id: str) -> bool:
    """Ask, on the server's event loop, that session ``session_id`` rerun when it has no run
    in flight (:func:`rerun_when_idle`). False where there is no running server or this
    Streamlit has no such loop: the line then shows at the visitor's next run."""
    try:
        runtime = _runtime()
        if runtime is None:
            return False
        loop = runtime._get_async_objs().eventloop
        loop.call_soon_threadsafe(rerun_when_idle, session_id, time.monotonic() + RETRY_FOR_S)
    except Exception:  # another Streamlit's internals: shown at the next run
        return False
    return True


def rerun_when_idle(session_id: str, until: float) -> str:
    """On the server's event loop: rerun the session now if it is idle and its page has not
    taken its news; look again in :data:`RETRY_EVERY_S` while a run is in flight (until
    ``until``). Returns what was done: "rerun", "later", "taken", "gone", "busy" (given up)
    or "unknown" (Streamlit's internals not there)."""
    if not pending(session_id):
        return "taken"  # a run of its page showed it meanwhile
    try:
        runtime = _runtime()
        info = runtime._session_mgr.get_active_session_info(session_id) if runtime else None
        if info is None:
            return "gone"  # closed or disconnected: a reconnected tab runs its page anyway
        return rerun_idle_session(info.session, session_id, until)
    except Exception:
        return "unknown"


def rerun_idle_session(session, session_id: str, until: float) -> str:
    """:func:`rerun_when_idle` for Streamlit's ``AppSession`` ``session`` (on its event
    loop)."""
    if not hasattr(session, "_scriptrunner") or not hasattr(session, "_client_state"):
        return "unknown"
    if session._scriptrunner is not None:  # a run in flight: never stopped for this
        if time.monotonic() >= until:
            return "busy"
        import asyncio

        asyncio.get_running_loop().call_later(RETRY_EVERY_S, rerun_when_idle, session_id, until)
        return "later"
    # its last page and address, the widgets as they are now (as ``st.rerun`` does): not the
    # browser's last widget values replayed, which may be older than the session's (the page
    # changed them since, or its widgets left it) and would fire their callbacks as if the
    # visitor had changed them (50 load-test visitors: a sidebar callback raised on a number
    # box replayed empty)
    from streamlit.runtime.scriptrunner import RerunData

    last = session._client_state
    session._create_scriptrunner(
        RerunData(
            query_string=last.query_string,
            widget_states=None,
            page_script_hash=last.page_script_hash,
            page_name=last.page_name,
        )
    )
    return "rerun"


__all__ = [
    "MAX_NAME",
    "MAX_PER_SESSION",
    "MAX_SESSIONS",
    "SHOW_FOR_S",
    "arrived",
    "ask_rerun",
    "clear",
    "forget",
    "peek",
    "pending",
    "refused",
    "rerun_when_idle",
    "take",
]
