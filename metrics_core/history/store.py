"""The history store: suites, saved evaluations and their values in one SQLite file."""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core._version import __version__
from metrics_core.errors import N_, InputError
from metrics_core.history.comparative_report import REPORT_MEASURES, comparative_report
from metrics_core.history.queries import evaluation_list, load_record, read_long
from metrics_core.history.records import (
    BUSY_TIMEOUT_MS,
    TIMESTAMP_FORMAT,
    EvaluationRecord,
    WriteTransaction,
    check_name,
    check_schema,
    date_filters,
    default_store_path,
    enable_wal,
    format_timestamp,
    image_bytes,
    image_connection,
    meta_rows,
    open_connection,
    prepare_evaluation,
    qrels_digest,
    qrels_frame,
    store_error,
    unknown_suite,
)
from metrics_core.history.schema import SCHEMA_VERSION, migrate

__all__ = [
    "HistoryStore",
    "EvaluationRecord",
    "BUSY_TIMEOUT_MS",
    "TIMESTAMP_FORMAT",
    "default_store_path",
    "format_timestamp",
    "qrels_digest",
    "store_error",
]


class HistoryStore:
    """Saved evaluations in one SQLite file.

    Parameters
    ----------
    path : str or Path, optional
        The database file (folders are created). Default :func:`default_store_path`.
        ``":memory:"`` keeps everything in memory (no WAL; one connection).
    busy_timeout_ms : int
        How long a writer waits for another writer's lock before failing.
    """

    def __init__(
        self, path: str | os.PathLike | None = None, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS
    ):
        given = default_store_path() if path is None else path
        self.path: str | os.PathLike = given  # ":memory:", or the file (a Path)
        in_memory = str(given) == ":memory:"
        self.read_only = False
        if not in_memory:
            file = Path(given).expanduser()
            self.path = file
            if file.is_dir():
                raise InputError(
                    N_("is a folder, not a store file"),
                    source=str(file),
                    hint=N_("give a file path such as history.sqlite3"),
                )
            file.parent.mkdir(parents=True, exist_ok=True)
            # a store we may not write (read-only file or folder) is opened read-only: it can
            # still be listed and reported; saving to it is refused with a clear message
            self.read_only = file.exists() and not (
                os.access(file, os.W_OK) and os.access(file.parent, os.W_OK)
            )
        self._conn = open_connection(self.path, self.read_only, busy_timeout_ms)
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA foreign_keys = ON")
            if not in_memory:
                self._check_file_schema()
            if self.read_only:
                if self.schema_version() != SCHEMA_VERSION:
                    raise InputError(
                        N_(
                            "the read-only history store has schema version {version}, "
                            "not {supported}"
                        ),
                        source=str(self.path),
                        hint=N_("make the file writable once so it can be upgraded"),
                        params={"version": self.schema_version(), "supported": SCHEMA_VERSION},
                    )
                return
            if not in_memory:
                enable_wal(self._conn, self.path)
            self._ensure_schema()
        except sqlite3.DatabaseError as exc:
            error = store_error(self.path, exc, self._conn)
            self._conn.close()
            raise error from None
        except BaseException:
            self._conn.close()
            raise

    # -- connection and schema -------------------------------------------------------
    def _ensure_schema(self) -> None:
        try:
            version = self.schema_version()
        except sqlite3.DatabaseError as exc:
            raise InputError(
                N_("not a history store ({reason})"), source=str(self.path), params={"reason": exc}
            ) from None
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise InputError(
                N_(
                    "the history store has schema version {version}, newer than this "
                    "RankLab ({supported})"
                ),
                source=str(self.path),
                hint=N_("upgrade RankLab or choose another store file"),
                params={"version": version, "supported": SCHEMA_VERSION},
            )
        with self._transaction() as cur:
            # Read again under the write lock: another process may have just done it.
            version = cur.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                tables = cur.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                ).fetchone()[0]
                if tables:
                    raise InputError(
                        N_("not a RankLab history store (it has other tables)"),
                        source=str(self.path),
                        hint=N_("choose another file"),
                    )
            migrate(cur, version)

    def _check_file_schema(self) -> None:
        """A store file of a version this RankLab reads (1 to :data:`SCHEMA_VERSION`, the
        older ones before they are migrated) must hold that version's objects and nothing
        else (:func:`~metrics_core.history.records.check_schema`), before anything touches
        its tables: a CHECK constraint, DEFAULT or trigger written into the file by hand
        would run on the next insert. An empty file (version 0), a newer version and a
        file that is not a database are refused, or made a store, by the steps after."""
        try:
            version = self.schema_version()
        except sqlite3.DatabaseError:
            return
        if 1 <= version <= SCHEMA_VERSION:
            check_schema(self._conn, str(self.path), hint=N_("choose another file"))

    def schema_version(self) -> int:
        """The store's ``PRAGMA user_version``."""
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection (the store cannot be used afterwards)."""
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _transaction(self):
        """One write transaction: ``BEGIN IMMEDIATE`` takes the write lock up front (so
        two writers queue on the busy timeout instead of deadlocking on an upgrade);
        any exception rolls everything back."""
        return WriteTransaction(self._conn)

    def error(self, exc: Exception) -> InputError:
        """The :class:`InputError` to show for a SQLite error ``exc`` on this store
        (read-only, or damaged with the integrity check's result): :func:`store_error`."""
        return store_error(self.path, exc, self._conn)

    def row_counts(self, evaluation_id: int | None = None) -> dict[str, int]:
        """Rows per table (``suites``, ``suite_qrels``, ``evaluations``, ``aggregate_values``,
        ``query_values``); with ``evaluation_id``, the rows of that evaluation only
        (``evaluations``, ``aggregate_values``, ``query_values``).

        >>> HistoryStore(":memory:").row_counts()["evaluations"]
        0
        """
        if evaluation_id is None:
            tables = ("suites", "suite_qrels", "evaluations", "aggregate_values", "query_values")
            return {
                t: int(self._conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
                for t in tables
            }
        where = {
            "evaluations": "id",
            "aggregate_values": "evaluation_id",
            "query_values": "evaluation_id",
        }
        return {
            t: int(
                self._conn.execute(
                    f"SELECT count(*) FROM {t} WHERE {c} = ?", (int(evaluation_id),)
                ).fetchone()[0]
            )
            for t, c in where.items()
        }

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ("ok" when the file is sound)."""
        return self._conn.execute("PRAGMA integrity_check").fetchone()[0]

    # -- one file to download and upload -------------------------------------------------
    def to_bytes(self) -> bytes:
        """The whole store as the bytes of one SQLite database file (for a download).

        Works for an in-memory store too; :meth:`from_bytes` reads it back.
        """
        return image_bytes(self._conn, checkpoint=str(self.path) != ":memory:")

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "uploaded file") -> HistoryStore:
        """An in-memory store holding a copy of a history file's bytes (an upload).

        The bytes must be a RankLab history store: an SQLite database (never anything
        unpickled or executed) that passes ``PRAGMA integrity_check``, whose schema
        version is one this RankLab reads and whose tables, indexes and columns are the
        store's own -- no view or trigger, nothing foreign. Older versions are migrated
        in memory. Anything else is one :class:`InputError` naming ``source``.
        """
        conn = image_connection(data, source)
        store = cls.__new__(cls)
        store.path = ":memory:"
        store._conn = conn
        conn.execute("PRAGMA foreign_keys = ON")
        try:
            store._ensure_schema()
        except BaseException:
            conn.close()
            raise
        return store

    # -- suites ----------------------------------------------------------------------
    def add_suite(
        self, name: str, qrels, meta: pd.DataFrame | None = None, *, exist_ok: bool = True
    ) -> int:
        """Create the suite ``name`` with its qrels and optional query metadata.

        ``qrels`` is anything :func:`metrics_core.read_qrels` accepts. ``meta`` is a
        DataFrame indexed by query id (or with a ``query_id`` column); a ``query`` or
        ``text`` column becomes the query text of the report, other columns are kept as
        JSON. When the suite exists with the same qrels its id is returned (and ``meta``
        replaces its metadata); different qrels are an error: a suite's ground truth is
        fixed, so that its evaluations stay comparable.
        """
        name = check_name(name)
        frame = qrels_frame(qrels)
        with self._transaction() as cur:
            return self._add_suite(cur, name, frame, meta, exist_ok)

    def _add_suite(self, cur, name, frame, meta, exist_ok) -> int:
        digest = qrels_digest(frame)
        row = cur.execute("SELECT id, qrels_sha256 FROM suites WHERE name = ?", (name,)).fetchone()
        if row is not None:
            if not exist_ok:
                raise InputError(
                    N_("suite {name!r} exists already"),
                    hint=N_("choose another name"),
                    params={"name": name},
                )
            if row[1] != digest:
                raise InputError(
                    N_("suite {name!r} exists with different qrels"),
                    hint=N_("a suite's ground truth is fixed; choose a new suite name"),
                    params={"name": name},
                )
            suite_id = row[0]
        else:
            cur.execute(
                "INSERT INTO suites (name, created_at, qrels_sha256) VALUES (?, ?, ?)",
                (name, format_timestamp(), digest),
            )
            suite_id = cur.lastrowid
            cur.executemany(
                "INSERT INTO suite_qrels VALUES (?, ?, ?, ?)",
                (
                    (suite_id, q, d, float(r))
                    for q, d, r in frame.itertuples(index=False, name=None)
                ),
            )
        if meta is not None:
            cur.execute("DELETE FROM suite_queries WHERE suite_id = ?", (suite_id,))
            cur.executemany(
                "INSERT INTO suite_queries VALUES (?, ?, ?, ?)", meta_rows(suite_id, meta)
            )
        return suite_id

    def set_suite_meta(self, name: str, meta: pd.DataFrame) -> None:
        """Replace the query metadata of an existing suite (see :meth:`add_suite`)."""
        suite_id = self._suite_id(check_name(name))
        with self._transaction() as cur:
            cur.execute("DELETE FROM suite_queries WHERE suite_id = ?", (suite_id,))
            cur.executemany(
                "INSERT INTO suite_queries VALUES (?, ?, ?, ?)", meta_rows(suite_id, meta)
            )

    def suites(self) -> pd.DataFrame:
        """Suites with their number of queries, judgements and evaluations."""
        return pd.read_sql_query(
            "SELECT s.name AS suite, s.created_at AS created, "
            "(SELECT count(DISTINCT query_id) FROM suite_qrels WHERE suite_id = s.id) AS queries, "
            "(SELECT count(*) FROM suite_qrels WHERE suite_id = s.id) AS judgements, "
            "(SELECT count(*) FROM evaluations WHERE suite_id = s.id) AS evaluations "
            "FROM suites s ORDER BY s.name",
            self._conn,
        )

    def suite_names(self) -> list[str]:
        """The suites' names, sorted."""
        return [r[0] for r in self._conn.execute("SELECT name FROM suites ORDER BY name")]

    def _suite_id(self, name: str) -> int:
        row = self._conn.execute("SELECT id FROM suites WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise unknown_suite(name, self.suite_names())
        return row[0]

    def get_suite_qrels(self, name: str):
        """The suite's qrels as a :class:`metrics_core.Qrels`."""
        from metrics_core.io import read_qrels

        suite_id = self._suite_id(name)
        frame = pd.read_sql_query(
            "SELECT query_id, doc_id, relevance FROM suite_qrels WHERE suite_id = ? ORDER BY rowid",
            self._conn,
            params=(suite_id,),
        )
        return read_qrels(frame)

    def get_suite_meta(self, name: str) -> pd.DataFrame:
        """The suite's query metadata: index ``query_id``, column ``query`` plus the extra columns."""
        suite_id = self._suite_id(name)
        rows = self._conn.execute(
            "SELECT query_id, query_text, metadata FROM suite_queries WHERE suite_id = ? "
            "ORDER BY query_id",
            (suite_id,),
        ).fetchall()
        records = [{"query_id": q, "query": t, **(json.loads(m) if m else {})} for q, t, m in rows]
        frame = pd.DataFrame.from_records(
            records, columns=None if records else ["query_id", "query"]
        )
        return frame.set_index("query_id")

    # -- evaluations -----------------------------------------------------------------
    def save_evaluation(
        self,
        suite: str,
        evaluation,
        timestamp=None,
        *,
        qrels=None,
        meta=None,
        note: str | None = None,
    ) -> int:
        """Save one evaluation of ``suite`` (a batch of one); returns its id.

        ``evaluation`` has ``run_name``, ``per_query`` (DataFrame indexed by query id,
        one column per measure), ``aggregate`` (measure -> value), ``conventions`` (with
        ``as_dict()``) and optionally ``measures`` -- a :class:`metrics_core.Evaluation`.
        When the suite does not exist, ``qrels`` (and ``meta``) create it in the same
        transaction. ``timestamp`` defaults to now (UTC). Everything is written in one
        transaction: on any failure nothing is saved.
        """
        return self.save_evaluations(
            suite, [evaluation], timestamp, qrels=qrels, meta=meta, note=note
        )[0]

    def save_evaluations(
        self,
        suite: str,
        evaluations,
        timestamp=None,
        *,
        qrels=None,
        meta=None,
        note: str | None = None,
    ) -> list[int]:
        """Save several evaluations of ``suite`` as one **batch**; returns their ids.

        The runs of one evaluation (e.g. bm25, dense and hybrid scored on the same qrels)
        are saved together: one transaction, one timestamp and one batch id, so the
        History page shows them side by side instead of as a sequence in time. Arguments
        as :meth:`save_evaluation`.

        Examples
        --------
        >>> import metrics_core as mc
        >>> store = HistoryStore(":memory:")
        >>> qrels = {"q1": {"d1": 1}}
        >>> evs = [mc.evaluate(qrels, {"q1": {"d1": 1.0}}, ["RR"]), mc.evaluate(qrels, {"q1": {"d2": 1.0}}, ["RR"])]
        >>> evs = [evs[0].renamed("a"), evs[1].renamed("b")]
        >>> store.save_evaluations("s", evs, "2025-01-01", qrels=qrels)
        [1, 2]
        >>> store.list_evaluations()[["id", "run", "batch"]].values.tolist()
        [[1, 'a', 1], [2, 'b', 1]]
        """
        suite = check_name(suite)
        prepared = [prepare_evaluation(ev) for ev in evaluations]
        if not prepared:
            return []
        stamp = format_timestamp(timestamp)
        frame = qrels_frame(qrels) if qrels is not None else None
        ids = []
        with self._transaction() as cur:
            row = cur.execute("SELECT id FROM suites WHERE name = ?", (suite,)).fetchone()
            if row is None and frame is None:
                raise unknown_suite(suite, self.suite_names(), saving=True)
            if frame is not None:
                suite_id = self._add_suite(cur, suite, frame, meta, True)
            else:
                suite_id = row[0]
            batch = cur.execute(
                "SELECT coalesce(max(batch_id), 0) + 1 FROM evaluations"
            ).fetchone()[0]
            for run_name, per_query, measures, aggregate, conv in prepared:
                evaluation_id = self._insert_evaluation_row(
                    cur, suite_id, run_name, stamp, conv, measures, note, batch
                )
                self._insert_values(cur, evaluation_id, aggregate, per_query, measures)
                ids.append(evaluation_id)
        return ids

    def _insert_evaluation_row(
        self, cur, suite_id, run_name, stamp, conv, measures, note, batch
    ) -> int:
        cur.execute(
            "INSERT INTO evaluations (suite_id, run_name, created_at, conventions, ranklab_version, "
            "measures, note, batch_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                suite_id,
                run_name,
                stamp,
                json.dumps(conv, sort_keys=True, default=str),
                __version__,
                json.dumps(measures),
                note,
                batch,
            ),
        )
        return cur.lastrowid

    def _insert_values(self, cur, evaluation_id, aggregate, per_query, measures) -> None:
        cur.executemany(
            "INSERT INTO aggregate_values VALUES (?, ?, ?)",
            ((evaluation_id, m, v) for m, v in aggregate.items()),
        )
        cols = [m for m in measures if m in per_query.columns]
        if not cols or per_query.empty:
            return
        # Long format in one vectorised step: (query, measure, value) for every cell.
        values = per_query[cols].to_numpy(dtype=float)
        qids = np.repeat(per_query.index.astype(str).to_numpy(dtype=object), len(cols))
        names = np.tile(np.asarray(cols, dtype=object), len(per_query))
        flat = values.ravel()
        cells = [None if math.isnan(v) else v for v in flat.tolist()]
        cur.executemany(
            "INSERT INTO query_values VALUES (?, ?, ?, ?)",
            zip([evaluation_id] * len(cells), qids.tolist(), names.tolist(), cells, strict=True),
        )

    def delete_evaluation(self, evaluation_id: int) -> None:
        """Delete one evaluation and its values (an unknown id is an error)."""
        with self._transaction() as cur:
            cur.execute("DELETE FROM query_values WHERE evaluation_id = ?", (int(evaluation_id),))
            cur.execute(
                "DELETE FROM aggregate_values WHERE evaluation_id = ?", (int(evaluation_id),)
            )
            cur.execute("DELETE FROM evaluations WHERE id = ?", (int(evaluation_id),))
            if cur.rowcount == 0:
                raise InputError(
                    N_("no evaluation with id {id}"),
                    hint=N_("see `history list` for the ids"),
                    plain_hint=N_("choose an id from the list of saved evaluations"),
                    params={"id": evaluation_id},
                )

    def count_evaluations(self) -> int:
        """How many evaluations the store holds."""
        return int(self._conn.execute("SELECT count(*) FROM evaluations").fetchone()[0])

    def list_evaluations(
        self, suite: str | None = None, date_from=None, date_to=None
    ) -> pd.DataFrame:
        """Saved evaluations, oldest first: ``id, suite, run, timestamp, ranklab_version,
        measures, note`` plus one column per aggregate measure.

        ``date_from`` / ``date_to`` (inclusive) take dates, datetimes or ISO strings; a
        date alone in ``date_to`` includes that whole day (UTC).
        """
        return evaluation_list(self._conn, *self._filters(suite, date_from, date_to))

    def load_evaluation(self, evaluation_id: int) -> EvaluationRecord:
        """One saved evaluation with its per-query values."""
        return load_record(self._conn, evaluation_id)

    def query_values(self, ids: Sequence[int]) -> pd.DataFrame:
        """Per-query values of the evaluations ``ids``, long: ``evaluation_id, query_id,
        measure, value`` (NaN where a query has no value)."""
        return read_long(self._conn, "query_values", ids)

    def _filters(self, suite, date_from, date_to):
        return date_filters(self._suite_id(suite) if suite else None, date_from, date_to)

    # -- the comparative report --------------------------------------------------------
    def report(
        self,
        suite: str | None = None,
        date_from=None,
        date_to=None,
        *,
        per_query: bool = False,
        measures: Sequence[str] = REPORT_MEASURES,
        thresholds: Mapping[str, float | tuple[float, float]] | None = None,
        summary: bool = True,
        ngettext=None,
    ) -> pd.DataFrame:
        """The comparative report (one row per evaluation, a summary row).

        One row per evaluation (its aggregate values) or, with ``per_query=True``, per
        query and evaluation; then, when ``summary``, a last row ``ID == "Summary"`` with
        the number of rows, the mean of each measure over the rows and the overall label
        (see the module docstring for the rules). Columns: ``ID, Suite, Run, Date``,
        (``Query ID, Query`` per query), the measures, ``Interpretation``. The summary is
        also in ``df.attrs["summary"]``. ``ngettext`` phrases the summary row's count in
        the caller's language (:func:`metrics_core.history.comparative_report.summary_text`).
        """
        return comparative_report(
            self,
            suite,
            date_from,
            date_to,
            per_query=per_query,
            measures=measures,
            thresholds=thresholds,
            summary=summary,
            ngettext=ngettext,
        )
