"""History actions the other pages call: save the current evaluation, open the store.

The Overview page's "Save this evaluation" button calls :func:`save_current_evaluation`
(or draws :func:`save_evaluation_form`, which wraps it in a small form).
"""

from __future__ import annotations

import streamlit as st

from metrics_core.errors import InputError
from metrics_core.history import HistoryStore
from ui import history_state


def open_store(path: str | None = None) -> HistoryStore:
    """The history store of this session (``path`` overrides the chosen file)."""
    return HistoryStore(path or history_state.store_path())


def save_current_evaluation(evaluation, suite: str, qrels=None, meta=None, *, store_path: str | None = None,
                            timestamp=None, note: str | None = None) -> int:
    """Save one evaluation into the history store; returns the new evaluation id.

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
        Default: the store chosen on the History page (``ranklab.history.store_path``).
    timestamp, note
        Default now (UTC); a free-text note.

    Raises
    ------
    metrics_core.InputError
        Bad suite name, a new suite without qrels, different qrels for an existing suite.
    """
    with open_store(store_path) as store:
        return store.save_evaluation(suite, evaluation, timestamp=timestamp, qrels=qrels, meta=meta, note=note)


def save_evaluation_form(evaluations, qrels, meta=None, *, key: str = "overview") -> int | None:
    """A "Save this evaluation" form: suite name, run choice, note, button.

    ``evaluations`` is a list of ``mc.Evaluation`` (one per run). Shows success or the
    error message (never a traceback); returns the saved id or None.
    """
    evaluations = list(evaluations)
    if not evaluations:
        return None
    with st.form(f"ranklab.history.save_form.{key}"):
        suite = st.text_input("Test suite name", key=f"{history_state.SAVE_SUITE}.{key}",
                              help="Evaluations of the same suite are compared over time on the History page.")
        names = [ev.run_name for ev in evaluations]
        chosen = st.multiselect("Runs to save", names, default=names)
        note = st.text_input("Note (optional)")
        submitted = st.form_submit_button("Save this evaluation", icon=":material/save:")
    if not submitted:
        return None
    last = None
    try:
        for ev in evaluations:
            if ev.run_name in chosen:
                last = save_current_evaluation(ev, suite, qrels, meta, note=note or None)
    except InputError as exc:
        st.error(str(exc))
        return None
    if last is not None:
        st.success(f"Saved to the history ({history_state.store_path()}), last id {last}.")
    return last
