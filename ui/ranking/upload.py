"""The qrels, run and metadata boxes (Data page, Overview): parse once per upload, errors
shown, column mapping.

Each box is an upload slot (:class:`ui.common.upload.UploadSlot`). Each uploaded file is
parsed once per (content, format, column mapping): the outcome (loaded or the error text) is
remembered in session state by file id, so reruns neither re-parse nor forget the error. A
bad upload never replaces data already loaded.
"""

from __future__ import annotations

import streamlit as st

from metrics_core.io.limits import using_limits
from metrics_core.io.tables import ROLES
from ui.common import budget, state
from ui.common.i18n import count, ngettext
from ui.common.i18n import gettext as _
from ui.common.style import md_join, md_text, say
from ui.common.upload import (
    UPLOAD_FORMATS,
    UploadSlot,
    human_size,
    read_once,
    release,
    table_columns,
)
from ui.ranking import run_files
from ui.ranking import state as rs
from ui.ranking.data import parse_qrels, parse_run, read_metadata


def _state_dict(key: str) -> dict:
    if key not in st.session_state:
        st.session_state[key] = {}
    return st.session_state[key]


def parse_once(kind: str, uploaded, fmt: str = "auto") -> tuple[bool, str | None]:
    """Parse one uploaded file of ``kind`` ("qrels", "run" or "meta") into state, once
    (:func:`ui.common.upload.read_once`), within the server's memory gate
    (:func:`ui.common.budget.reserve`, in :func:`ui.ranking.data.parse_run` for runs and
    qrels: refused before parsing when it could never fit); once parsed, its raw bytes leave
    the server (:func:`ui.common.upload.release`) and the data lies in the session's folder
    (:mod:`ui.common.store`).

    Returns ``(changed, error)``: whether the loaded data changed, and the error text
    (also when this very upload failed on an earlier rerun). Draws nothing but a
    transient spinner; the caller decides how to show the error.
    """
    mapping = _state_dict(rs.COLUMN_MAPPINGS).get((kind, uploaded.name))
    signature = (
        getattr(uploaded, "file_id", None),
        uploaded.size,
        fmt,
        tuple(sorted((mapping or {}).items())),
    )
    # a run file is known by its content (read once, before its bytes are released): two files
    # of one name are two runs, one content dropped twice is one run
    if kind == "run" and run_files.is_loaded(uploaded):
        return False, None
    ident = run_files.content_of(uploaded) if kind == "run" else uploaded.name

    def load() -> None:
        data = uploaded.getvalue()
        # within the server's memory gate (refused before reading when it could never fit, in
        # line while other visitors' work holds the memory) and into the session's folder
        with st.spinner(
            say(_("Reading {name} ({size}) ..."), name=uploaded.name, size=human_size(len(data)))
        ):
            if kind == "qrels":
                st.session_state[state.QRELS] = parse_qrels(data, uploaded.name, fmt, mapping)
            elif kind == "run":
                # named with the box's other runs (unique, said so) by run_files.name_box
                run_files.parsed(uploaded, parse_run(data, uploaded.name, fmt, mapping))
            else:
                index_col = (mapping or {}).get("query_id")
                with budget.reserve(data, "meta", uploaded.name) as limits, using_limits(limits):
                    st.session_state[state.META] = read_metadata(
                        data, uploaded.name, index_col=index_col
                    )
        sources = _state_dict(rs.SOURCES)
        sources[(kind, uploaded.name)] = len(data)
        del data
        release([uploaded])  # parsed: the raw upload leaves the server's memory
        budget.trim(collect=False)  # and the parser's freed buffers go back to the system

    read_now, error = read_once(f"{rs.UPLOADS_DONE}.{kind}.{ident}", signature, load, uploaded.name)
    return read_now and error is None, error


def still_loaded() -> str:
    """What stays loaded after a failed upload, in the pages' words."""
    qrels, runs, meta = (
        st.session_state[state.QRELS],
        st.session_state[state.RUNS] or {},
        st.session_state[state.META],
    )
    parts = []
    if qrels is not None:
        n = len(qrels.unique_query_ids())
        parts.append(say(ngettext("{n} query", "{n} queries", n), n=n))
    if runs:
        parts.append(say(ngettext("{n} run", "{n} runs", len(runs)), n=len(runs)))
    if meta is not None:
        parts.append(
            say(
                ngettext("metadata for {n} query", "metadata for {n} queries", len(meta)),
                n=len(meta),
            )
        )
    return (
        say(_("Previous data still loaded: {what}."), what=", ".join(parts))
        if parts
        else _("Nothing else is loaded yet.")
    )


def has_message(page: str, kind: str) -> bool:
    """Whether the box of ``kind`` on ``page`` shows the message of a failed file."""
    return UploadSlot(rs.upload_key(page, kind), "").message is not None


def upload_box(
    kind: str,
    label: str,
    fmt: str = "auto",
    multiple: bool = False,
    help: str | None = None,
    page: str = "data",
) -> bool:
    """One uploader of ``kind`` ("qrels", "run" or "meta") and at most one message under it.

    A file that fails to load leaves the uploader (its key changes, which empties it) unless
    choosing its columns here can fix it; the message says what failed and what is still
    loaded. ``page`` keeps the uploaders of different pages apart (their widget keys and
    messages); what they load is the same session data, and a file is parsed once whichever
    page it was dropped on. Returns True when the loaded data changed.
    """
    slot = UploadSlot(rs.upload_key(page, kind), label, multiple=multiple, help=help)
    fresh = (
        slot.widget_key not in st.session_state
    )  # drawn anew (page change, reload): nothing removed
    files = slot.files()
    changed, failed = False, []
    for f in files:
        ok, error = parse_once(kind, f, fmt)
        changed |= ok
        if error:
            failed.append((f, error))
    if kind == "run":  # name the runs (unique, said so), drop those of files taken out of the box
        changed |= run_files.name_box(
            slot.key,
            [f for f in files if all(f is not g for g, _err in failed)],
            fresh,
            held=run_files.held_ids(slot.widget_key),
            order=run_files.box_order(slot.widget_key),
        )
    fixable = [(f, e) for f, e in failed if needs_mapping(kind, e)]
    release(
        [f for f, e in failed if not needs_mapping(kind, e)]
    )  # refused: its bytes leave the server too
    if failed and not fixable:
        names = ", ".join(md_text(f.name) for f, _ in failed)
        text = "; ".join(e.rstrip(". ") for _, e in failed)
        slot.fail(
            say(_("Could not load {names}: {problems}."), names=names, problems=text)
            if len(failed) > 1
            else f"{text}."
        )
    if fixable:
        f, error = fixable[0]
        more = (
            (
                " "
                + say(
                    ngettext(
                        "({n} more file needs its columns too)",
                        "({n} more files need their columns too)",
                        len(fixable) - 1,
                    ),
                    n=len(fixable) - 1,
                )
            )
            if len(fixable) > 1
            else ""
        )
        st.error(
            say(
                "{problem} {loaded}",
                problem=say(
                    _("{problem}. Choose its columns below{more}."),
                    problem=error.rstrip(". "),
                    more=more,
                ),
                loaded=still_loaded(),
            )
        )
        column_mapping(kind, f, fmt)
    elif slot.message:
        st.error(say("{message} {loaded}", message=slot.message, loaded=still_loaded()))
    show_loaded(kind)
    return changed


def show_loaded(kind: str) -> None:
    """Under a box, what it has loaded (the box itself is empty after a reload or when the
    visitor comes back to the page, and its raw files are released once parsed)."""
    sources = st.session_state.get(rs.SOURCES) or {}
    if kind == "run":
        runs = st.session_state.get(state.RUNS) or {}
        if runs:
            st.caption(
                say(
                    _("Loaded: {what}"),
                    what=md_join(
                        say(
                            ngettext("{name} ({n} line)", "{name} ({n} lines)", len(run)),
                            name=name,
                            n=count(len(run)),
                        )
                        for name, run in runs.items()
                    ),
                )
            )
        return
    loaded = st.session_state.get(state.QRELS if kind == "qrels" else state.META)
    files = [name for (k, name) in sources if k == kind]
    if loaded is not None and files:
        st.caption(say(_("Loaded: {what}"), what=files[-1]))


def needs_mapping(kind: str, error: str) -> bool:
    """Whether choosing columns on the page can fix this error."""
    if kind == "meta":
        return "no query id column" in error
    return "column found" in error or "is not in the table" in error


def handle_upload(kind: str, uploaded, fmt: str = "auto") -> bool:
    """Parse one uploaded file into state, once, showing its error (and the column
    mapping when choosing columns can fix it). Returns True when the loaded data changed."""
    changed, error = parse_once(kind, uploaded, fmt)
    if kind == "run" and not error:  # named as a box names its runs (unique, said so)
        changed |= run_files.name_box(f"{rs.UPLOADS_DONE}.single", [uploaded], fresh=True)
    if error:
        _show_error(kind, uploaded, fmt, error)
    return changed


def _show_error(kind: str, uploaded, fmt: str, error: str) -> None:
    st.error(error)
    if needs_mapping(kind, error):
        column_mapping(kind, uploaded, fmt)


def column_mapping(kind: str, uploaded, fmt: str) -> None:
    """Selectboxes mapping each role to a column of the table; applied with a button."""
    columns = table_columns(uploaded.getvalue(), uploaded.name, fmt)
    if not columns:
        return
    roles = ("query_id",) if kind == "meta" else ROLES[kind]
    st.markdown(
        say(_("**Column mapping for {name}**: which column holds what?"), name=uploaded.name)
    )
    cols = st.columns(len(roles) + 1)
    chosen = {}
    for i, role in enumerate(roles):
        chosen[role] = cols[i].selectbox(
            role,
            columns,
            index=min(i, len(columns) - 1),
            key=f"{rs.MAPPING_WIDGET}.{kind}.{uploaded.name}.{role}",
        )
    if cols[-1].button(
        _("Use these columns"), key=f"{rs.MAPPING_WIDGET}.{kind}.{uploaded.name}.apply"
    ):
        _state_dict(rs.COLUMN_MAPPINGS)[(kind, uploaded.name)] = chosen
        st.rerun()


__all__ = [
    "UPLOAD_FORMATS",
    "upload_box",
    "has_message",
    "parse_once",
    "handle_upload",
    "column_mapping",
    "needs_mapping",
    "still_loaded",
    "table_columns",
]
