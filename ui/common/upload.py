"""The upload slot every page uses: one file uploader, its file read once, at most one message.

:class:`UploadSlot` is the uploader itself: its widget key carries a nonce, so a failed file
can leave the box (:meth:`UploadSlot.fail` gives the box a new key, which empties it) and its
message stays under the empty box until the next upload. :func:`upload_slot` is the whole
pattern for a page whose upload replaces one thing in session state (detection scores,
candidates, hash codes, a click log, a saved history): it calls ``load(files)`` once per new
upload (never on a rerun, so a later "use the sample" click is not undone) and shows its
error. The Data page's boxes (:func:`ui.ranking.upload.upload_box`) are slots too, reading
each file of a multiple upload on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from contextlib import ExitStack

import pandas as pd
import streamlit as st
from streamlit.runtime.uploaded_file_manager import DeletedFile

from metrics_core.errors import InputError
from metrics_core.io.limits import using_limits
from metrics_core.io.source import read_source
from metrics_core.io.tables import json_to_frame, read_table_frame
from ui.common import budget, refusals, state
from ui.common.i18n import _, current_language
from ui.common.style import md_text, say
from ui.common.uploader_words import types_css

#: The table formats the readers know ("auto": from the file name and content).
UPLOAD_FORMATS = ("auto", "trec", "csv", "tsv", "parquet", "json", "jsonl")
#: File types of the table uploaders (scores, candidates, click logs).
TABLE_TYPES = ["csv", "tsv", "txt", "parquet", "json", "jsonl"]


def human_size(n: int) -> str:
    """A byte count for people: ``532 B``, ``1.5 KB``, ``12.0 MB``.

    Examples
    --------
    >>> human_size(532), human_size(1536)
    ('532 B', '1.5 KB')
    """
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def table_columns(data: bytes, filename: str, fmt: str = "auto") -> list[str] | None:
    """Column names of a table upload (None when it is not a readable table); the table is
    read to find them, inside the memory gate with the upload's estimate
    (:func:`ui.common.budget.estimate`)."""
    try:
        with budget.work(budget.estimate(data, "table")):
            raw = read_source(data, filename)
            frame, _ = read_table_frame(raw, "auto" if fmt in ("auto", "trec") else fmt)
            if not isinstance(frame, pd.DataFrame):
                frame = json_to_frame(frame, "run", raw.name)
            return [str(c) for c in frame.columns]
    except (InputError, ValueError, TypeError):
        return None


def failure_text(exc: Exception, name: str | None = None) -> str:
    """What a failed load says: the reader's message, or for anything else what failed
    (never a traceback)."""
    if isinstance(exc, InputError):
        return md_text(exc.plain(_))  # the reader's message in the application's words and language
    reason = md_text(f"{type(exc).__name__}: {exc}")
    if name:
        return say(_("{name}: the file could not be read ({reason})"), name=name, reason=reason)
    return say(_("The file could not be read ({reason})"), reason=reason)


def read_once(
    key: str, signature: Hashable, load: Callable[[], None], name: str | None = None
) -> tuple[bool, str | None]:
    """The app's one way to read an upload once: run ``load()`` when ``signature`` is new under
        ``key``, never again on a rerun.

        ``signature`` is what identifies the upload: its file id and size, and any option that
        changes how it is read (a column mapping, a format). An upload is acted on when it changes,
        not on every rerun: otherwise the file still sitting in the widget would undo a later "use
        the sample" click, and every rerun would read it again. A failed load keeps what was loaded;
        its message (``name`` prefixes a non-``InputError`` one) is handed back on every rerun until
        the next upload. The outcome is recorded before ``load()`` runs, so a load that reruns the
        script is done. Returns ``(read now, error text or None)``: ``read now`` is True in the run
    that called ``load()`` (whether it failed or not); draws nothing.
    """
    seen_all = st.session_state.setdefault(state.READ_ONCE, {})
    seen = seen_all.get(key)
    if seen is not None and seen[0] == signature:
        return False, seen[1]
    seen_all[key] = (signature, None)
    try:
        load()
        error = None
    except Exception as exc:  # never a traceback for an upload: say what failed
        error = failure_text(exc, name)
    seen_all[key] = (signature, error)
    return True, error


def release(files) -> None:
    """Drop the raw bytes of uploaded ``files`` from the server: call it once an upload is
    parsed. The box keeps its file chips in the browser; the page lists what is loaded under it.

    Streamlit holds an upload's bytes in two places: its upload manager keeps every file for
    the whole session (while the box shows it), and each ``UploadedFile`` the box handed over
    shares those bytes (``io.BytesIO``), and the widget's state keeps that object after the run
    (into the next one). Both go: the manager's record is removed and the object closed, which
    lets the bytes go at once; reading a released file is an error."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    remove = getattr(ctx.uploaded_file_mgr, "remove_file", None) if ctx is not None else None
    for f in files:
        file_id = getattr(f, "file_id", None)
        if file_id and remove is not None and ctx is not None:
            remove(ctx.session_id, file_id)
        close = getattr(f, "close", None)
        if close is not None and ctx is not None:  # the object's share of the bytes
            close()


def show_refused() -> None:
    """The files of this visitor that the server refused at its door (memory full: HTTP 507,
    :func:`ui.common.budget.guard_uploads`), one line each, as any failed upload says it
    (:func:`failure_text`), in the visitor's language: the page skeleton calls it at each run
    (:func:`ui.common.frame.page`). A refusal stands until a file of that name is received or
    :data:`ui.common.refusals.SHOW_FOR_S` has passed; only this session's are ever read
    (:mod:`ui.common.refusals`)."""
    now = time.monotonic()
    session = state.session_id()
    standing = {
        name: at
        for name, at in (st.session_state.get(state.UPLOAD_REFUSED) or {}).items()
        if now - at <= refusals.SHOW_FOR_S
    }
    news = refusals.peek(session)
    for name, refused in news:
        standing.pop(name, None)
        if refused:
            standing[name] = now
    # each access to the session's state and each element is where Streamlit may stop this
    # run (the visitor's own rerun came): the news are taken only once written and kept, or a
    # run stopped in between lost them (50 load-test visitors: most refused saw no line)
    if standing or state.UPLOAD_REFUSED in st.session_state:
        st.session_state[state.UPLOAD_REFUSED] = standing
    for name in standing:
        st.error(failure_text(budget.upload_refused(name)))
    if news:
        refusals.take(session, len(news))


def read_error(key: str) -> str | None:
    """The error of the last upload read under ``key`` (None when it loaded, or none was read)."""
    return (st.session_state.get(state.READ_ONCE) or {}).get(key, (None, None))[1]


def forget_read(key: str) -> None:
    """Forget the outcome under ``key`` (the same upload is read again next time)."""
    st.session_state.setdefault(state.READ_ONCE, {}).pop(key, None)


class UploadSlot:
    """One ``st.file_uploader`` whose failed files can leave it, with one message under it.

    Parameters
    ----------
    key : str
        The slot's name (a ``ranklab.*`` key of its section's state module); the widget's key
        is ``f"{key}.{nonce}"``, the nonce growing each time a failed file leaves the box.
    label, types, multiple, help
        As ``st.file_uploader``'s ``label``, ``type``, ``accept_multiple_files``, ``help``.
    """

    def __init__(
        self,
        key: str,
        label: str,
        *,
        types: list[str] | None = None,
        multiple: bool = False,
        help: str | None = None,
    ):
        self.key, self.label, self.types, self.multiple, self.help = (
            key,
            label,
            types,
            multiple,
            help,
        )

    @property
    def nonce(self) -> int:
        return st.session_state.setdefault(state.UPLOAD_NONCES, {}).get(self.key, 0)

    @property
    def widget_key(self) -> str:
        return f"{self.key}.{self.nonce}"

    @property
    def message(self) -> str | None:
        """The message of the last file that failed here (kept until the next upload)."""
        return st.session_state.setdefault(state.UPLOAD_MESSAGES, {}).get(self.key)

    def files(self, container=None) -> list:
        """Draw the uploader (in ``container``, default the page) and return its files; a new
        upload clears the old message."""
        where = container or st
        words = types_css(self.widget_key, self.types, current_language())
        if words:  # the limit line with this box's types, in the visitor's language
            where.html(words)
        got = where.file_uploader(
            self.label,
            type=self.types,
            key=self.widget_key,
            accept_multiple_files=self.multiple,
            help=self.help,
        )
        files = list(got or []) if self.multiple else ([got] if got is not None else [])
        # files whose bytes were released once read (their chips stay in the box): done with
        files = [f for f in files if not isinstance(f, DeletedFile)]
        for f in files:  # handed to the page, whose reading waits in the gate's line: what
            # the server's door claimed for reading it is given back (budget.guarded_upload_app)
            budget.unclaim(state.session_id(), getattr(f, "file_id", None) or "")
        if files:
            st.session_state.setdefault(state.UPLOAD_MESSAGES, {}).pop(self.key, None)
        return files

    def fail(self, message: str) -> None:
        """Keep ``message`` for the box, empty the box (its key changes) and rerun."""
        st.session_state.setdefault(state.UPLOAD_MESSAGES, {})[self.key] = message
        st.session_state.setdefault(state.UPLOAD_NONCES, {})[self.key] = self.nonce + 1
        st.rerun()


def signature_of(files) -> tuple:
    """What identifies an upload: each file's id (a new id for each drop) and size."""
    return tuple((getattr(f, "file_id", None), getattr(f, "size", None), f.name) for f in files)


def upload_slot(
    key: str,
    label: str,
    load: Callable[[list], None],
    *,
    types: list[str] | None = None,
    multiple: bool = False,
    help: str | None = None,
    container=None,
    options: Hashable = None,
    leave_on_error: bool = False,
    after_error: Callable[[str], str] | None = None,
) -> bool:
    """An upload box whose files replace something in session state, read once per upload.

    ``load(files)`` (the files of the box; one for a single-file box) runs when the upload is
    new: a new drop, or new reading ``options`` (e.g. the columns chosen beside the box). An
    ``InputError`` (or any other exception) is shown as one message under the box, never a
    traceback, and what was loaded stays. With ``leave_on_error`` the failed file also leaves
    the box (so the box is empty and ready for another file), and the page reruns once;
    ``after_error`` may add to the message (what is still loaded). Returns True in the run
    that loaded an upload.
    """
    slot = UploadSlot(key, label, types=types, multiple=multiple, help=help)
    files = slot.files(container)
    show = (container or st).error
    if not files:
        if slot.message:
            show(slot.message)
        return False
    signature = (signature_of(files), options)

    def checked_load() -> (
        None
    ):  # within the memory budget: refused before reading when it does not fit
        with ExitStack() as stack:
            limits = [
                stack.enter_context(budget.reserve(f.getvalue(), "table", f.name)) for f in files
            ]
            # the readers decode no more than the reservations were made for
            stack.enter_context(using_limits(max(limits, key=lambda x: x.input_bytes)))
            load(files)

    read_now, error = read_once(
        key, signature, checked_load, files[0].name if len(files) == 1 else None
    )
    if read_now and not error:
        release(files)  # read: its bytes leave the server (the chip stays in the box)
    if error and read_now and leave_on_error:
        forget_read(key)
        slot.fail(after_error(error) if after_error else error)
    if error:
        show(error)
    return read_now and error is None


__all__ = [
    "UPLOAD_FORMATS",
    "TABLE_TYPES",
    "UploadSlot",
    "upload_slot",
    "read_once",
    "read_error",
    "forget_read",
    "release",
    "table_columns",
    "human_size",
    "failure_text",
    "show_refused",
    "signature_of",
]
