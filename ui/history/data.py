"""The History section's data module: every call into the saved evaluations' store
(:class:`metrics_core.history.HistoryStore`) goes through here, inside the app's memory gate
(:func:`ui.common.budget.work`): opening this session's store, saving evaluations (the
Overview's form), reading the report, the list and the suites, deleting, importing an
uploaded history and exporting it (its download, made when clicked).

The needs are the store's size: :func:`store_need` counts its per-query values (a count holds
nothing) and reserves :data:`BYTES_PER_VALUE` each, measured by ``bench/app_gate_needs.py``.
"""

from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

from metrics_core.history import REPORT_MEASURES, HistoryStore, load_sample_history
from ui.common import budget
from ui.history import state as history_state

#: Bytes the report, the list, a deletion or the file of a history take per per-query value
#: saved (the store's largest table), beside :data:`STORE_BYTES`: measured by
#: ``bench/app_gate_needs.py`` (under ``flock /work/bench.lock``) on histories of 30,000 and
#: 300,000 values: the report and the list 279 a value above 7.3 MB, the file 103; rounded up.
BYTES_PER_VALUE = 300
#: Bytes reading an uploaded history takes per byte of the file (the file's image, its
#: integrity check and migration): 0.6 at most, measured as above; rounded up.
IMPORT_BYTES_PER_BYTE = 1
#: Bytes a store's work takes beside its values (its schema, SQLite's page cache).
STORE_BYTES = 8_000_000
#: Bytes saving takes per per-query value of the evaluations saved: not measured apart; the
#: report's rate (it reads those rows back), rounded up.
SAVE_BYTES_PER_VALUE = 300


def store_need(store: HistoryStore) -> int:
    """What reading or writing ``store`` whole may take: :data:`BYTES_PER_VALUE` per per-query
    value saved in it (counted inside the gate: a count holds nothing)."""
    with budget.work(0):
        values = store.row_counts()["query_values"]
    return STORE_BYTES + values * BYTES_PER_VALUE


def session_store() -> HistoryStore:
    """This session's in-memory history (created on first use)."""
    store = st.session_state.get(history_state.SESSION_STORE)
    if store is None:
        with budget.work(STORE_BYTES):
            store = HistoryStore(":memory:")
        st.session_state[history_state.SESSION_STORE] = store
    return store


def replace_session_store(store: HistoryStore) -> None:
    """Use ``store`` (an uploaded history) as this session's history."""
    old = st.session_state.get(history_state.SESSION_STORE)
    st.session_state[history_state.SESSION_STORE] = store
    st.session_state[history_state.PENDING_DELETE] = None
    if old is not None and old is not store:
        with budget.work(0):  # gives memory back
            old.close()


@contextmanager
def open_store(path: str | None = None):
    """The history of this session, as a context manager.

    With a deployer's store (:func:`ui.history.state.deployer_store_path`) the shared
    file is opened and closed again; otherwise it is this session's in-memory store,
    which stays open. ``path`` is for tests and tools, never a visitor's text.
    """
    path = path or history_state.deployer_store_path()
    if path is None:
        yield session_store()
        return
    with budget.work(STORE_BYTES):
        store = HistoryStore(path)
    try:
        yield store
    finally:
        with budget.work(0):
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
    """Save several runs' evaluations as one batch (same time, shown side by side), inside
    the gate: :data:`SAVE_BYTES_PER_VALUE` per per-query value saved."""
    evaluations = list(evaluations)
    values = sum(int(ev.per_query.size) for ev in evaluations)
    with open_store(store_path) as store, budget.work(STORE_BYTES + values * SAVE_BYTES_PER_VALUE):
        return store.save_evaluations(
            suite, evaluations, timestamp=timestamp, qrels=qrels, meta=meta, note=note
        )


def import_history(data: bytes, name: str) -> HistoryStore:
    """An uploaded history file as a store (InputError for anything that is not one), read
    inside the gate: :data:`IMPORT_BYTES_PER_BYTE` per byte of the file."""
    with budget.work(STORE_BYTES + len(data) * IMPORT_BYTES_PER_BYTE):
        return HistoryStore.from_bytes(data, source=name)


def history_bytes(store: HistoryStore):
    """The download's data, deferred (made when the button is clicked, inside the gate): this
    session's store (it stays open), or a shared store opened again at click time (the page
    closes its own connection when it has run)."""
    path = history_state.deployer_store_path()
    if path is None:

        def mine() -> bytes:
            with budget.work(store_need(store)):
                return store.to_bytes()

        return mine

    def shared() -> bytes:
        with open_store(path) as again, budget.work(store_need(again)):
            return again.to_bytes()

    return shared


def sample_view() -> HistoryStore:
    """The sample history shown while nothing is saved: built once per session (read only)."""
    view = st.session_state.get(history_state.SAMPLE_VIEW)
    if view is None:
        with budget.work(STORE_BYTES):
            view = HistoryStore(":memory:")
            load_sample_history(view)
        st.session_state[history_state.SAMPLE_VIEW] = view
    return view


def load_sample_into(store: HistoryStore) -> None:
    """The sample history's evaluations saved into ``store`` (the page's button)."""
    with budget.work(STORE_BYTES):
        load_sample_history(store)


def count(store: HistoryStore) -> int:
    """How many evaluations ``store`` holds (a count holds nothing)."""
    with budget.work(0):
        return store.count_evaluations()


def suites(store: HistoryStore) -> list[str]:
    """The suites' names."""
    with budget.work(store_need(store)):
        return store.suite_names()


def evaluations(store: HistoryStore, suite=None, date_from=None, date_to=None):
    """The saved evaluations (:meth:`~metrics_core.history.HistoryStore.list_evaluations`)."""
    with budget.work(store_need(store)):
        return store.list_evaluations(suite, date_from, date_to)


def report(store: HistoryStore, suite, date_from, date_to, **options):
    """The comparative report (:meth:`~metrics_core.history.HistoryStore.report`)."""
    with budget.work(store_need(store)):
        return store.report(suite, date_from, date_to, **options)


def delete(store: HistoryStore, evaluation_id: int) -> None:
    """Delete one saved evaluation (InputError when it cannot be deleted)."""
    with budget.work(store_need(store)):
        store.delete_evaluation(evaluation_id)


def saved_per_query(store: HistoryStore, ids, label) -> tuple[dict, object]:
    """name -> per-query frame of the saved evaluations ``ids`` (``label(run, id)`` names
    them), and their suites' metadata (the comparative table's rows)."""
    import pandas as pd

    with budget.work(store_need(store)):
        listed = store.list_evaluations().set_index("id")
        frames, metas = {}, []
        for i in ids:
            record = store.load_evaluation(int(i))
            frames[label(record.run_name, int(i))] = record.per_query
            meta = store.get_suite_meta(listed.at[int(i), "suite"])
            if meta is not None and len(meta):
                metas.append(meta)
    meta = pd.concat(metas) if metas else None
    if meta is not None:
        meta = meta[~meta.index.duplicated(keep="last")]
    return frames, meta


__all__ = [
    "REPORT_MEASURES",
    "count",
    "delete",
    "evaluations",
    "history_bytes",
    "import_history",
    "load_sample_into",
    "open_store",
    "replace_session_store",
    "report",
    "sample_view",
    "save_current_evaluation",
    "save_current_evaluations",
    "saved_per_query",
    "session_store",
    "store_need",
    "suites",
]
