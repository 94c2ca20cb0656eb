"""History actions the other pages call: save the current evaluation, open the store.

The Overview page's "Save this evaluation" button calls :func:`save_current_evaluation`
(or draws :func:`save_evaluation_form`, which wraps it in a small form). The runs saved
together form one batch.
"""

from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

from metrics_core.errors import InputError
from metrics_core.history import HistoryStore
from ui.common.i18n import gettext as _
from ui.common.i18n import ngettext
from ui.common.style import md_text
from ui.history import state as history_state


@contextmanager
def open_store(path: str | None = None):
    """The history of this session, as a context manager.

    With a deployer's store (:func:`ui.history.state.deployer_store_path`) the shared
    file is opened and closed again; otherwise it is this session's in-memory store,
    which stays open. ``path`` is for tests and tools, never a visitor's text.
    """
    path = path or history_state.deployer_store_path()
    if path is None:
        yield history_state.session_store()
        return
    store = HistoryStore(path)
    try:
        yield store
    finally:
        store.close()


def save_current_evaluation(
    evaluation,
    suite: str,
    qrels=None,
    meta=None,
    *,
    store_path: str | None = None,
    timestamp=None,
    note: str | None = None,
) -> int:
    """Save one evaluation into this session's history; returns the new evaluation id.

    Parameters
    ----------
    evaluation : metrics_core.Evaluation
        What ``mc.evaluate`` returned (``run_name``, ``per_query``, ``aggregate``,
        ``conventions``, ``measures``).
    suite : str
        The test suite's name. A new name creates the suite from ``qrels``; an existing
        one must have the same qrels (a suite's ground truth is fixed).
    qrels : metrics_core.Qrels or anything read_qrels accepts, optional
        Needed when the suite is new (pass ``st.session_state["ranklab.qrels"]``).
    meta : pandas.DataFrame, optional
        Query metadata indexed by query id (a ``query``/``text`` column is the query text).
    store_path : str, optional
        A store file for tests and tools; default the session's history (or the
        deployer's shared store).
    timestamp, note
        Default now (UTC); a free-text note.

    Raises
    ------
    metrics_core.InputError
        Bad suite name, a new suite without qrels, different qrels for an existing suite.
    """
    return save_current_evaluations(
        [evaluation], suite, qrels, meta, store_path=store_path, timestamp=timestamp, note=note
    )[0]


def save_current_evaluations(
    evaluations,
    suite: str,
    qrels=None,
    meta=None,
    *,
    store_path: str | None = None,
    timestamp=None,
    note: str | None = None,
) -> list[int]:
    """Save several runs' evaluations as one batch (same time, shown side by side)."""
    with open_store(store_path) as store:
        return store.save_evaluations(
            suite, list(evaluations), timestamp=timestamp, qrels=qrels, meta=meta, note=note
        )


def save_evaluation_form(evaluations, qrels, meta=None, *, key: str = "overview") -> int | None:
    """A "Save this evaluation" form: suite name, run choice, note, button.

    ``evaluations`` is a list of ``mc.Evaluation`` (one per run); the chosen runs are
    saved as one batch. Shows success or the error message (never a traceback); returns
    the last saved id or None.
    """
    evaluations = list(evaluations)
    if not evaluations:
        return None
    with st.form(f"{history_state.SAVE_FORM}.{key}"):
        suite = st.text_input(
            _("Test suite name"),
            key=f"{history_state.SAVE_SUITE}.{key}",
            help=_("Evaluations of the same suite are compared over time on the History page."),
        )
        names = [ev.run_name for ev in evaluations]
        chosen = st.multiselect(
            _("Runs to save"), names, default=names, placeholder=_("Choose options")
        )
        note = st.text_input(_("Note (optional)"))
        submitted = st.form_submit_button(_("Save this evaluation"), icon=":material/save:")
    if not submitted:
        return None
    picked = [ev for ev in evaluations if ev.run_name in chosen]
    if not picked:
        st.error(_("Choose at least one run to save."))
        return None
    try:
        ids = save_current_evaluations(picked, suite, qrels, meta, note=note or None)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        return None
    if history_state.is_shared():
        st.success(
            ngettext(
                "Saved {n} run to the shared history.",
                "Saved {n} runs as one batch to the shared history.",
                len(ids),
            ).format(n=len(ids))
        )
    else:
        st.success(
            ngettext(
                "Saved {n} run to this session's history (download it on the History page to keep it).",
                "Saved {n} runs as one batch to this session's history (download it on the History "
                "page to keep it).",
                len(ids),
            ).format(n=len(ids))
        )
    return ids[-1]
