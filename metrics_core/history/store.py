"""The history store: suites, saved evaluations and their values in one SQLite file."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core import __version__
from metrics_core.errors import InputError
from metrics_core.history.report import REPORT_MEASURES, summarize_rows
from metrics_core.history.schema import SCHEMA_VERSION, migrate
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS, worst_labels

BUSY_TIMEOUT_MS = 30_000
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def default_store_path() -> Path:
    """``$RANKLAB_HOME/history.sqlite3``, or ``~/.ranklab/history.sqlite3``."""
    home = os.environ.get("RANKLAB_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".ranklab"
    return base / "history.sqlite3"


def format_timestamp(value=None) -> str:
    """A UTC timestamp as stored: ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (sorts as text).

    ``value`` may be None (now), a :class:`datetime` (naive means UTC), a :class:`date`
    (midnight UTC) or an ISO 8601 string.

    >>> format_timestamp("2025-01-28")
    '2025-01-28T00:00:00.000000Z'
    >>> format_timestamp("2025-01-28T12:00:00+02:00")
    '2025-01-28T10:00:00.000000Z'
    """
    return _to_utc(value).strftime(TIMESTAMP_FORMAT)


def _to_utc(value, what: str = "timestamp") -> datetime:
    if value is None:
        return datetime.now(timezone.utc)
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise InputError(f"{what} {value!r} is not a date", hint="write it as YYYY-MM-DD or "
                             "YYYY-MM-DDTHH:MM:SS (UTC unless an offset is given)") from None
    else:
        raise InputError(f"{what} {value!r} is not a date", hint="give a date, datetime or ISO string")
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def _is_date_only(value) -> bool:
    if isinstance(value, datetime) or isinstance(value, pd.Timestamp):
        return False
    if isinstance(value, date):
        return True
    return isinstance(value, str) and len(value.strip()) == 10


def _qrels_frame(qrels) -> pd.DataFrame:
    from metrics_core.io import read_qrels

    frame = read_qrels(qrels).to_frame()
    return frame.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)


def _qrels_digest(frame: pd.DataFrame) -> str:
    """sha256 of the lines ``query<TAB>doc<TAB>repr(float(label))``, one per judgement.

    Built with column operations (a million judgements in a fraction of a second, where a
    loop over rows took seconds): the text of each distinct label once -- by its bits,
    so -0.0 keeps its own text -- then one concatenation.
    """
    labels = frame["relevance"].to_numpy(dtype=np.float64)
    bits, which = np.unique(labels.view(np.int64), return_inverse=True)
    label_text = np.array([repr(float(v)) for v in bits.view(np.float64)], dtype=object)
    lines = (frame["query_id"].astype(str).to_numpy(dtype=object) + "\t"
             + frame["doc_id"].astype(str).to_numpy(dtype=object) + "\t"
             + label_text[which.reshape(-1)] + "\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def _float_or_none(v) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f



@dataclass(frozen=True)
class EvaluationRecord:
    """A saved evaluation as :meth:`HistoryStore.load_evaluation` returns it."""

    id: int
    suite: str
    run_name: str
    timestamp: str
    conventions: dict
    ranklab_version: str
    measures: list
    aggregate: dict
    per_query: pd.DataFrame
    note: str | None = None
    batch: int | None = None


def store_error(path, exc: Exception, conn=None) -> InputError:
    """An :class:`InputError` for a SQLite error on the store at ``path``: a read-only
    store, or a damaged one (with the result of SQLite's integrity check and how to recover)."""
    text = str(exc)
    if text.startswith("Execution failed on sql") and "': " in text:
        text = text.rsplit("': ", 1)[1]  # pandas' wrapper: keep SQLite's own message
    if "readonly" in text.replace("-", "").replace(" ", "").lower():
        return InputError("the history store is read-only: it can be listed and reported, "
                          "not changed", source=str(path),
                          hint="make the file and its folder writable, or choose another --store")
    check = "not run"
    if conn is not None:
        try:
            rows = conn.execute("PRAGMA quick_check(3)").fetchall()
            check = "; ".join(" ".join(str(r[0]).split()) for r in rows)
        except sqlite3.Error as inner:
            check = str(inner)
    return InputError(f"the history store is damaged or not a history store ({text}; "
                      f"integrity check: {check})", source=str(path),
                      hint="restore it from a backup, or recover what is readable with "
                           "`sqlite3 FILE .recover | sqlite3 NEW.sqlite3` and use NEW as --store")


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

    def __init__(self, path: str | os.PathLike | None = None, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS):
        self.path = default_store_path() if path is None else path
        in_memory = str(self.path) == ":memory:"
        if not in_memory:
            self.path = Path(self.path).expanduser()
            if self.path.is_dir():
                raise InputError("is a folder, not a store file", source=str(self.path),
                                 hint="give a file path such as history.sqlite3")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        # a store we may not write (read-only file or folder) is opened read-only: it can
        # still be listed and reported; saving to it is refused with a clear message
        self.read_only = not in_memory and self.path.exists() and not (
            os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK))
        try:
            if self.read_only:
                uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
                self._conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_ms / 1000,
                                             isolation_level=None, check_same_thread=False)
            else:
                self._conn = sqlite3.connect(str(self.path), timeout=busy_timeout_ms / 1000,
                                             isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open the history store: {exc}", source=str(self.path)) from None
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA foreign_keys = ON")
            if self.read_only:
                if self.schema_version() != SCHEMA_VERSION:
                    raise InputError(f"the read-only history store has schema version "
                                     f"{self.schema_version()}, not {SCHEMA_VERSION}",
                                     source=str(self.path),
                                     hint="make the file writable once so it can be upgraded")
                return
            if not in_memory:
                self._enable_wal()
            self._ensure_schema()
        except sqlite3.DatabaseError as exc:
            error = store_error(self.path, exc, self._conn)
            self._conn.close()
            raise error from None
        except BaseException:
            self._conn.close()
            raise

    # -- connection and schema -------------------------------------------------------
    def _enable_wal(self) -> None:
        # Switching to WAL needs a moment alone with the file; a second process doing the
        # same at the same time can get SQLITE_BUSY despite the busy timeout, so retry.
        for attempt in range(50):
            try:
                mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.DatabaseError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    self._conn.close()
                    raise InputError(f"not a history store ({exc})", source=str(self.path),
                                     hint="choose another file") from None
                time.sleep(0.02 * (attempt + 1))
        else:  # pragma: no cover - only under extreme contention
            raise InputError("the history store stays locked by another process", source=str(self.path))
        if str(mode).lower() != "wal":  # pragma: no cover - e.g. a read-only folder
            raise InputError(f"cannot use WAL mode (journal mode is {mode})", source=str(self.path))
        self._conn.execute("PRAGMA synchronous = NORMAL")

    def _ensure_schema(self) -> None:
        try:
            version = self.schema_version()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a history store ({exc})", source=str(self.path)) from None
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise InputError(f"the history store has schema version {version}, newer than this "
                             f"RankLab ({SCHEMA_VERSION})", source=str(self.path),
                             hint="upgrade RankLab or choose another store file")
        with self._transaction() as cur:
            # Read again under the write lock: another process may have just done it.
            version = cur.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                tables = cur.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
                if tables:
                    raise InputError("not a RankLab history store (it has other tables)",
                                     source=str(self.path), hint="choose another file")
            migrate(cur, version)

    def schema_version(self) -> int:
        """The store's ``PRAGMA user_version``."""
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    class _Tx:
        def __init__(self, conn):
            self.conn = conn

        def __enter__(self):
            self.conn.execute("BEGIN IMMEDIATE")
            return self.conn.cursor()

        def __exit__(self, exc_type, exc, tb):
            if exc_type is None:
                self.conn.execute("COMMIT")
            else:
                self.conn.execute("ROLLBACK")
            return False

    def _transaction(self):
        """One write transaction: ``BEGIN IMMEDIATE`` takes the write lock up front (so
        two writers queue on the busy timeout instead of deadlocking on an upgrade);
        any exception rolls everything back."""
        return self._Tx(self._conn)

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ("ok" when the file is sound)."""
        return self._conn.execute("PRAGMA integrity_check").fetchone()[0]

    # -- one file to download and upload -------------------------------------------------
    def to_bytes(self) -> bytes:
        """The whole store as the bytes of one SQLite database file (for a download).

        Works for an in-memory store too; :meth:`from_bytes` reads it back.
        """
        if str(self.path) != ":memory:":
            self._conn.execute("PRAGMA wal_checkpoint(FULL)")
        image = bytes(self._conn.serialize())
        # a WAL-mode file says so in its header (bytes 18-19 = 2); the image is complete
        # after the checkpoint, so mark it as an ordinary rollback-journal file
        return image[:18] + b"\x01\x01" + image[20:] if image[18:20] == b"\x02\x02" else image

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "uploaded file") -> HistoryStore:
        """An in-memory store holding a copy of a history file's bytes (an upload).

        The bytes must be a RankLab history store: an SQLite database (never anything
        unpickled or executed) that passes ``PRAGMA integrity_check``, whose schema
        version is one this RankLab reads and whose tables, indexes and columns are the
        store's own -- no view or trigger, nothing foreign. Older versions are migrated
        in memory. Anything else is one :class:`InputError` naming ``source``.
        """
        data = bytes(data)
        if len(data) < 100 or not data.startswith(b"SQLite format 3\x00"):
            raise InputError("not a RankLab history file (it is not an SQLite database)", source=source,
                             hint="upload a file saved with the History page's download button")
        if data[18:20] == b"\x02\x02":  # saved from a WAL-mode store file
            data = data[:18] + b"\x01\x01" + data[20:]
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA trusted_schema = OFF")
            conn.deserialize(data)
            conn.execute("PRAGMA trusted_schema = OFF")
            _check_image(conn, source)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise InputError(f"not a RankLab history file ({exc})", source=source,
                             hint="upload a file saved with the History page's download button") from None
        except BaseException:
            conn.close()
            raise
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
    def add_suite(self, name: str, qrels, meta: pd.DataFrame | None = None, *, exist_ok: bool = True) -> int:
        """Create the suite ``name`` with its qrels and optional query metadata.

        ``qrels`` is anything :func:`metrics_core.read_qrels` accepts. ``meta`` is a
        DataFrame indexed by query id (or with a ``query_id`` column); a ``query`` or
        ``text`` column becomes the query text of the report, other columns are kept as
        JSON. When the suite exists with the same qrels its id is returned (and ``meta``
        replaces its metadata); different qrels are an error: a suite's ground truth is
        fixed, so that its evaluations stay comparable.
        """
        name = _check_name(name)
        frame = _qrels_frame(qrels)
        with self._transaction() as cur:
            return self._add_suite(cur, name, frame, meta, exist_ok)

    def _add_suite(self, cur, name, frame, meta, exist_ok) -> int:
        digest = _qrels_digest(frame)
        row = cur.execute("SELECT id, qrels_sha256 FROM suites WHERE name = ?", (name,)).fetchone()
        if row is not None:
            if not exist_ok:
                raise InputError(f"suite {name!r} exists already", hint="choose another name")
            if row[1] != digest:
                raise InputError(f"suite {name!r} exists with different qrels",
                                 hint="a suite's ground truth is fixed; choose a new suite name")
            suite_id = row[0]
        else:
            cur.execute("INSERT INTO suites (name, created_at, qrels_sha256) VALUES (?, ?, ?)",
                        (name, format_timestamp(), digest))
            suite_id = cur.lastrowid
            cur.executemany("INSERT INTO suite_qrels VALUES (?, ?, ?, ?)",
                            ((suite_id, q, d, float(r)) for q, d, r in frame.itertuples(index=False, name=None)))
        if meta is not None:
            cur.execute("DELETE FROM suite_queries WHERE suite_id = ?", (suite_id,))
            cur.executemany("INSERT INTO suite_queries VALUES (?, ?, ?, ?)", _meta_rows(suite_id, meta))
        return suite_id

    def set_suite_meta(self, name: str, meta: pd.DataFrame) -> None:
        """Replace the query metadata of an existing suite (see :meth:`add_suite`)."""
        suite_id = self._suite_id(_check_name(name))
        with self._transaction() as cur:
            cur.execute("DELETE FROM suite_queries WHERE suite_id = ?", (suite_id,))
            cur.executemany("INSERT INTO suite_queries VALUES (?, ?, ?, ?)", _meta_rows(suite_id, meta))

    def suites(self) -> pd.DataFrame:
        """Suites with their number of queries, judgements and evaluations."""
        return pd.read_sql_query(
            "SELECT s.name AS suite, s.created_at AS created, "
            "(SELECT count(DISTINCT query_id) FROM suite_qrels WHERE suite_id = s.id) AS queries, "
            "(SELECT count(*) FROM suite_qrels WHERE suite_id = s.id) AS judgements, "
            "(SELECT count(*) FROM evaluations WHERE suite_id = s.id) AS evaluations "
            "FROM suites s ORDER BY s.name", self._conn)

    def suite_names(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT name FROM suites ORDER BY name")]

    def _suite_id(self, name: str) -> int:
        row = self._conn.execute("SELECT id FROM suites WHERE name = ?", (name,)).fetchone()
        if row is None:
            known = ", ".join(self.suite_names()) or "none yet"
            raise InputError(f"no suite named {name!r}", hint=f"known suites: {known}")
        return row[0]

    def get_suite_qrels(self, name: str):
        """The suite's qrels as a :class:`metrics_core.Qrels`."""
        from metrics_core.io import read_qrels

        suite_id = self._suite_id(name)
        frame = pd.read_sql_query("SELECT query_id, doc_id, relevance FROM suite_qrels WHERE suite_id = ? "
                                  "ORDER BY rowid", self._conn, params=(suite_id,))
        return read_qrels(frame)

    def get_suite_meta(self, name: str) -> pd.DataFrame:
        """The suite's query metadata: index ``query_id``, column ``query`` plus the extra columns."""
        suite_id = self._suite_id(name)
        rows = self._conn.execute("SELECT query_id, query_text, metadata FROM suite_queries WHERE suite_id = ? "
                                  "ORDER BY query_id", (suite_id,)).fetchall()
        records = [{"query_id": q, "query": t, **(json.loads(m) if m else {})} for q, t, m in rows]
        frame = pd.DataFrame.from_records(records, columns=None if records else ["query_id", "query"])
        return frame.set_index("query_id")

    # -- evaluations -----------------------------------------------------------------
    def save_evaluation(self, suite: str, evaluation, timestamp=None, *, qrels=None, meta=None,
                        note: str | None = None) -> int:
        """Save one evaluation of ``suite`` (a batch of one); returns its id.

        ``evaluation`` has ``run_name``, ``per_query`` (DataFrame indexed by query id,
        one column per measure), ``aggregate`` (measure -> value), ``conventions`` (with
        ``as_dict()``) and optionally ``measures`` -- a :class:`metrics_core.Evaluation`.
        When the suite does not exist, ``qrels`` (and ``meta``) create it in the same
        transaction. ``timestamp`` defaults to now (UTC). Everything is written in one
        transaction: on any failure nothing is saved.
        """
        return self.save_evaluations(suite, [evaluation], timestamp, qrels=qrels, meta=meta, note=note)[0]

    def save_evaluations(self, suite: str, evaluations, timestamp=None, *, qrels=None, meta=None,
                         note: str | None = None) -> list[int]:
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
        >>> evs[0].run_name, evs[1].run_name = "a", "b"
        >>> store.save_evaluations("s", evs, "2025-01-01", qrels=qrels)
        [1, 2]
        >>> store.list_evaluations()[["id", "run", "batch"]].values.tolist()
        [[1, 'a', 1], [2, 'b', 1]]
        """
        suite = _check_name(suite)
        prepared = [_prepare(ev) for ev in evaluations]
        if not prepared:
            return []
        stamp = format_timestamp(timestamp)
        frame = _qrels_frame(qrels) if qrels is not None else None
        ids = []
        with self._transaction() as cur:
            row = cur.execute("SELECT id FROM suites WHERE name = ?", (suite,)).fetchone()
            if row is None and frame is None:
                known = ", ".join(self.suite_names()) or "none yet"
                raise InputError(f"no suite named {suite!r}", hint=f"give its qrels to create it (known: {known})")
            if frame is not None:
                suite_id = self._add_suite(cur, suite, frame, meta, True)
            else:
                suite_id = row[0]
            batch = cur.execute("SELECT coalesce(max(batch_id), 0) + 1 FROM evaluations").fetchone()[0]
            for run_name, per_query, measures, aggregate, conv in prepared:
                evaluation_id = self._insert_evaluation_row(cur, suite_id, run_name, stamp, conv, measures, note,
                                                            batch)
                self._insert_values(cur, evaluation_id, aggregate, per_query, measures)
                ids.append(evaluation_id)
        return ids

    def _insert_evaluation_row(self, cur, suite_id, run_name, stamp, conv, measures, note, batch) -> int:
        cur.execute("INSERT INTO evaluations (suite_id, run_name, created_at, conventions, ranklab_version, "
                    "measures, note, batch_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (suite_id, run_name, stamp, json.dumps(conv, sort_keys=True, default=str), __version__,
                     json.dumps(measures), note, batch))
        return cur.lastrowid

    def _insert_values(self, cur, evaluation_id, aggregate, per_query, measures) -> None:
        cur.executemany("INSERT INTO aggregate_values VALUES (?, ?, ?)",
                        ((evaluation_id, m, v) for m, v in aggregate.items()))
        cols = [m for m in measures if m in per_query.columns]
        if not cols or per_query.empty:
            return
        # Long format in one vectorised step: (query, measure, value) for every cell.
        values = per_query[cols].to_numpy(dtype=float)
        qids = np.repeat(per_query.index.astype(str).to_numpy(dtype=object), len(cols))
        names = np.tile(np.asarray(cols, dtype=object), len(per_query))
        flat = values.ravel()
        cells = [None if math.isnan(v) else v for v in flat.tolist()]
        cur.executemany("INSERT INTO query_values VALUES (?, ?, ?, ?)",
                        zip([evaluation_id] * len(cells), qids.tolist(), names.tolist(), cells, strict=True))

    def delete_evaluation(self, evaluation_id: int) -> None:
        """Delete one evaluation and its values (an unknown id is an error)."""
        with self._transaction() as cur:
            cur.execute("DELETE FROM query_values WHERE evaluation_id = ?", (int(evaluation_id),))
            cur.execute("DELETE FROM aggregate_values WHERE evaluation_id = ?", (int(evaluation_id),))
            cur.execute("DELETE FROM evaluations WHERE id = ?", (int(evaluation_id),))
            if cur.rowcount == 0:
                raise InputError(f"no evaluation with id {evaluation_id}", hint="see `history list` for the ids")

    def count_evaluations(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM evaluations").fetchone()[0])

    def list_evaluations(self, suite: str | None = None, date_from=None, date_to=None) -> pd.DataFrame:
        """Saved evaluations, oldest first: ``id, suite, run, timestamp, ranklab_version,
        measures, note`` plus one column per aggregate measure.

        ``date_from`` / ``date_to`` (inclusive) take dates, datetimes or ISO strings; a
        date alone in ``date_to`` includes that whole day (UTC).
        """
        where, params = self._filters(suite, date_from, date_to)
        base = pd.read_sql_query(
            "SELECT e.id, s.name AS suite, e.run_name AS run, e.created_at AS timestamp, "
            "e.ranklab_version, e.measures, e.note, e.conventions, e.batch_id AS batch FROM evaluations e "
            f"JOIN suites s ON s.id = e.suite_id {where} ORDER BY e.created_at, e.id", self._conn, params=params)
        base["measures"] = [json.loads(m) if m else [] for m in base["measures"]]
        if base.empty:
            return base
        ids = base["id"].tolist()
        agg = self._read_long("aggregate_values", ids)
        if not agg.empty:
            wide = agg.pivot(index="evaluation_id", columns="measure", values="value")
            order = _measure_order(base["measures"], wide.columns)
            base = base.join(wide[order], on="id")
        return base

    def load_evaluation(self, evaluation_id: int) -> EvaluationRecord:
        """One saved evaluation with its per-query values."""
        found = self._conn.execute(
            "SELECT e.id, s.name, e.run_name, e.created_at, e.conventions, e.ranklab_version, e.measures, e.note, "
            "e.batch_id "
            "FROM evaluations e JOIN suites s ON s.id = e.suite_id WHERE e.id = ?", (int(evaluation_id),)).fetchone()
        if found is None:
            raise InputError(f"no evaluation with id {evaluation_id}", hint="see `history list` for the ids")
        eid, suite, run, stamp, conv, version, measures, note, batch = found
        measures = json.loads(measures) if measures else []
        agg = dict(self._conn.execute("SELECT measure, value FROM aggregate_values WHERE evaluation_id = ? "
                                      "ORDER BY rowid", (eid,)).fetchall())
        if not measures:
            measures = list(agg)
        agg = {m: (np.nan if v is None else v) for m, v in agg.items()}
        long = self._read_long("query_values", [eid])
        if long.empty:
            per_query = pd.DataFrame(columns=measures, dtype=float)
        else:
            per_query = long.pivot(index="query_id", columns="measure", values="value")
            per_query = per_query[[m for m in measures if m in per_query.columns]]
        per_query.index.name = "query_id"
        per_query.columns.name = None
        return EvaluationRecord(eid, suite, run, stamp, json.loads(conv), version, measures, agg,
                                per_query.astype(float), note, batch)

    def _read_long(self, table: str, ids: Sequence[int]) -> pd.DataFrame:
        cols = "evaluation_id, query_id, measure, value" if table == "query_values" else "evaluation_id, measure, value"
        # A temporary id list instead of a giant IN (...) (SQLite caps bound parameters).
        frames = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            frames.append(pd.read_sql_query(f"SELECT {cols} FROM {table} WHERE evaluation_id IN ({marks})",
                                            self._conn, params=chunk))
        out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols.split(", "))
        out["value"] = out["value"].astype(float)
        return out

    def _filters(self, suite, date_from, date_to):
        clauses, params = [], []
        if suite:
            clauses.append("e.suite_id = ?")
            params.append(self._suite_id(suite))
        lo = _to_utc(date_from, "start date") if date_from not in (None, "") else None
        hi = None
        if date_to not in (None, ""):
            hi = _to_utc(date_to, "end date")
            if _is_date_only(date_to):
                hi = hi + timedelta(days=1)
                clauses.append("e.created_at < ?")
            else:
                clauses.append("e.created_at <= ?")
            params.append(hi.strftime(TIMESTAMP_FORMAT))
        if lo is not None:
            clauses.append("e.created_at >= ?")
            params.append(lo.strftime(TIMESTAMP_FORMAT))
        if lo is not None and hi is not None and lo > hi:
            raise InputError("the start date is after the end date", hint="swap --from and --to")
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", params

    # -- the comparative report --------------------------------------------------------
    def report(self, suite: str | None = None, date_from=None, date_to=None, *, per_query: bool = False,
               measures: Sequence[str] = REPORT_MEASURES, thresholds: Mapping[str, float] | None = None,
               summary: bool = True) -> pd.DataFrame:
        """The comparative report (one row per evaluation, a summary row).

        One row per evaluation (its aggregate values) or, with ``per_query=True``, per
        query and evaluation; then, when ``summary``, a last row ``ID == "Summary"`` with
        the number of rows, the mean of each measure over the rows and the overall label
        (see the module docstring for the rules). Columns: ``ID, Suite, Run, Date``,
        (``Query ID, Query`` per query), the measures, ``Interpretation``. The summary is
        also in ``df.attrs["summary"]``.
        """
        thresholds = dict(DEFAULT_GOOD_THRESHOLDS if thresholds is None else thresholds)
        measures = list(measures)
        evals = self.list_evaluations(suite, date_from, date_to)
        head = ["ID", "Suite", "Run", "Date"] + (["Query ID", "Query"] if per_query else [])
        if evals.empty:
            rows = pd.DataFrame(columns=head + measures + ["Interpretation"])
        elif not per_query:
            rows = pd.DataFrame({"ID": evals["id"], "Suite": evals["suite"], "Run": evals["run"],
                                 "Date": evals["timestamp"]})
            for m in measures:
                rows[m] = evals[m].astype(float) if m in evals.columns else np.nan
        else:
            long = self._read_long("query_values", evals["id"].tolist())
            long = long[long["measure"].isin(measures)]
            wide = long.pivot_table(index=["evaluation_id", "query_id"], columns="measure", values="value",
                                    aggfunc="first", dropna=False).reset_index()
            info = evals.set_index("id")
            rows = pd.DataFrame({"ID": wide["evaluation_id"].to_numpy(),
                                 "Suite": info.loc[wide["evaluation_id"], "suite"].to_numpy(),
                                 "Run": info.loc[wide["evaluation_id"], "run"].to_numpy(),
                                 "Date": info.loc[wide["evaluation_id"], "timestamp"].to_numpy(),
                                 "Query ID": wide["query_id"].astype(str).to_numpy()})
            rows["Query"] = self._query_texts(rows)
            for m in measures:
                rows[m] = wide[m].astype(float).to_numpy() if m in wide.columns else np.nan
            order = {e: i for i, e in enumerate(evals["id"])}
            rows = rows.sort_values(["ID", "Query ID"], key=lambda s: s.map(order) if s.name == "ID" else s,
                                    kind="stable").reset_index(drop=True)
        rows["Interpretation"] = worst_labels({m: rows[m] for m in measures}, thresholds)
        rows["Date"] = rows["Date"].astype(str).str.slice(0, 10)
        summ = summarize_rows(rows, measures, thresholds, per_query=per_query)
        if summary:
            n_suites = rows["Suite"].nunique()
            what = "query evaluation" if per_query else "evaluation"
            text = f"{summ['count']} {what}{'s' if summ['count'] != 1 else ''}"
            text += f" ({n_suites} suite{'s' if n_suites != 1 else ''})"
            extra = {"ID": "Summary", "Suite": "", "Run": text, "Date": "",
                     **({"Query ID": "", "Query": ""} if per_query else {}),
                     **{m: summ["means"][m] for m in measures}, "Interpretation": summ["label"]}
            rows = pd.concat([rows.astype({"ID": object}), pd.DataFrame([extra])], ignore_index=True)
            rows["ID"] = rows["ID"].astype(object)
        rows.attrs["summary"] = summ
        return rows

    def _query_texts(self, rows: pd.DataFrame) -> list:
        texts = {}
        for name in rows["Suite"].unique():
            meta = self.get_suite_meta(name)
            if "query" in meta.columns:
                texts.update({(name, q): t for q, t in meta["query"].items()})
        return [texts.get((s, q)) or "" for s, q in zip(rows["Suite"], rows["Query ID"], strict=True)]


def _check_image(conn, source) -> None:
    """Refuse a database that is damaged, of an unknown version, or not the store's schema."""
    from metrics_core.history.schema import known_objects

    bad = InputError  # one message shape for every refusal below
    hint = "upload a file saved with the History page's download button"
    if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
        raise bad("not a RankLab history file (the database is damaged)", source=source, hint=hint)
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise bad(f"the history file has schema version {version}, newer than this RankLab ({SCHEMA_VERSION})",
                  source=source, hint="upgrade RankLab")
    allowed = known_objects(version)
    if allowed is None:
        raise bad("not a RankLab history file (no RankLab tables)", source=source, hint=hint)
    found = {(t, n) for t, n in conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
    foreign = sorted(n for t, n in found if (t, n) not in allowed)
    missing = sorted(n for t, n in allowed if (t, n) not in found and t == "table")
    if foreign or missing:
        what = f"unexpected {', '.join(foreign)}" if foreign else f"missing {', '.join(missing)}"
        raise bad(f"not a RankLab history file ({what})", source=source, hint=hint)


def _prepare(evaluation):
    """(run name, per-query frame, measures, aggregate, conventions) of one evaluation."""
    per_query = evaluation.per_query
    measures = list(getattr(evaluation, "measures", None) or per_query.columns)
    aggregate = {m: _float_or_none(v) for m, v in dict(evaluation.aggregate).items()}
    for m in aggregate:
        if m not in measures:
            measures.append(m)
    conventions = evaluation.conventions
    conv = conventions.as_dict() if hasattr(conventions, "as_dict") else dict(conventions or {})
    return str(evaluation.run_name), per_query, measures, aggregate, conv


def _check_name(name) -> str:
    text = str(name or "").strip()
    if not text:
        raise InputError("a suite needs a name", hint="e.g. --suite regression-2025")
    return text


def _measure_order(measure_lists, present) -> list:
    order = []
    for ms in measure_lists:
        for m in ms:
            if m in present and m not in order:
                order.append(m)
    return order + sorted(m for m in present if m not in order)


def _meta_rows(suite_id: int, meta: pd.DataFrame):
    frame = meta.copy()
    if "query_id" in frame.columns:
        frame = frame.set_index("query_id")
    text_col = next((c for c in ("query", "text", "query_text") if c in frame.columns), None)
    extra = [c for c in frame.columns if c != text_col]
    for qid, row in frame.iterrows():
        other = {c: _plain(row[c]) for c in extra}
        yield (suite_id, str(qid), None if text_col is None else str(row[text_col]),
               json.dumps(other, default=str) if other else None)


def _plain(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return None if np.isnan(v) else float(v)
    return v
