"""The history store's building blocks: timestamps, the qrels digest, the saved-evaluation
record, the connection (WAL mode, an uploaded image) and the error messages."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import sys
import time
import urllib.parse
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.history.schema import SCHEMA_VERSION, normalized_sql, schema_objects
from metrics_core.io.limits import WORDS, current_limits, over_input

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
    return to_utc(value).strftime(TIMESTAMP_FORMAT)


#: "{what} {value!r} is not a date" for each ``what`` of :func:`to_utc` (one whole text each,
#: so that a translation can order its words)
NOT_A_DATE = {
    "timestamp": N_("timestamp {value!r} is not a date"),
    "start date": N_("start date {value!r} is not a date"),
    "end date": N_("end date {value!r} is not a date"),
}


def to_utc(value, what: str = "timestamp") -> datetime:
    """``value`` (None = now, a datetime, a date or an ISO string) as an aware UTC datetime.

    ``what`` names the value in a refusal (a key of :data:`NOT_A_DATE`, or any text).

    >>> to_utc("2025-03-01").isoformat()
    '2025-03-01T00:00:00+00:00'
    >>> to_utc("March", "start date")
    Traceback (most recent call last):
    ...
    metrics_core.errors.InputError: start date 'March' is not a date. write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC unless an offset is given)
    """
    problem = NOT_A_DATE.get(what) or N_("{what} {value!r} is not a date")
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
            raise InputError(
                problem,
                hint=N_(
                    "write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC unless an offset is given)"
                ),
                params={"what": what, "value": value},
            ) from None
    else:
        raise InputError(
            problem,
            hint=N_("give a date, datetime or ISO string"),
            params={"what": what, "value": value},
        )
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def is_date_only(value) -> bool:
    """Whether ``value`` names a day (a date, or a ``YYYY-MM-DD`` string), not an instant."""
    if isinstance(value, datetime) or isinstance(value, pd.Timestamp):
        return False
    if isinstance(value, date):
        return True
    return isinstance(value, str) and len(value.strip()) == 10


def qrels_frame(qrels) -> pd.DataFrame:
    """``qrels`` (anything :func:`metrics_core.read_qrels` reads) as a frame sorted by query and doc."""
    from metrics_core.io import read_qrels

    frame = read_qrels(qrels).to_frame()
    return frame.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)


def qrels_digest(frame: pd.DataFrame) -> str:
    """sha256 of the lines ``query<TAB>doc<TAB>repr(float(label))``, one per judgement.

    Built with column operations (a million judgements in a fraction of a second, where a
    loop over rows took seconds): the text of each distinct label once -- by its bits,
    so -0.0 keeps its own text -- then one concatenation.
    """
    labels = frame["relevance"].to_numpy(dtype=np.float64)
    bits, which = np.unique(labels.view(np.int64), return_inverse=True)
    label_text = np.array([repr(float(v)) for v in bits.view(np.float64)], dtype=object)
    lines = (
        frame["query_id"].astype(str).to_numpy(dtype=object)
        + "\t"
        + frame["doc_id"].astype(str).to_numpy(dtype=object)
        + "\t"
        + label_text[which.reshape(-1)]
        + "\n"
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def float_or_none(v) -> float | None:
    """``float(v)``, or None for None and NaN (SQL NULL)."""
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
        return InputError(
            N_("the history store is read-only: it can be listed and reported, not changed"),
            source=str(path),
            hint=N_("make the file and its folder writable, or choose another store path="),
        )
    check = "not run"
    if conn is not None:
        try:
            rows = conn.execute("PRAGMA quick_check(3)").fetchall()
            check = "; ".join(" ".join(str(r[0]).split()) for r in rows)
        except sqlite3.Error as inner:
            check = str(inner)
    return InputError(
        N_(
            "the history store is damaged or not a history store ({reason}; "
            "integrity check: {check})"
        ),
        source=str(path),
        hint=N_(
            "restore it from a backup, or recover what is readable with "
            "`sqlite3 FILE .recover | sqlite3 NEW.sqlite3` and use NEW as the store path="
        ),
        params={"reason": text, "check": check},
    )


def open_connection(path, read_only: bool, busy_timeout_ms: int) -> sqlite3.Connection:
    """An autocommit connection to the store file (``mode=ro`` when ``read_only``)."""
    try:
        if read_only:
            uri = "file:" + urllib.parse.quote(str(Path(path).resolve())) + "?mode=ro"
            return sqlite3.connect(
                uri,
                uri=True,
                timeout=busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        return sqlite3.connect(
            str(path), timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise InputError(
            N_("cannot open the history store: {reason}"), source=str(path), params={"reason": exc}
        ) from None


class WriteTransaction:
    """``with WriteTransaction(conn) as cur``: ``BEGIN IMMEDIATE`` (the write lock up front,
    so two writers queue on the busy timeout instead of deadlocking on an upgrade), then
    ``COMMIT``, or ``ROLLBACK`` on any exception."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn.cursor()

    def __exit__(self, exc_type, exc, tb):
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
        return False


def image_bytes(conn, checkpoint: bool = True) -> bytes:
    """The whole database as the bytes of one SQLite file (after a WAL checkpoint when
    ``checkpoint``), marked as an ordinary rollback-journal file."""
    if checkpoint:
        conn.execute("PRAGMA wal_checkpoint(FULL)")
    image = bytes(conn.serialize())
    # a WAL-mode file says so in its header (bytes 18-19 = 2); the image is complete
    # after the checkpoint, so mark it as an ordinary rollback-journal file
    return image[:18] + b"\x01\x01" + image[20:] if image[18:20] == b"\x02\x02" else image


def enable_wal(conn, path) -> None:
    """Put the store file in WAL mode (several processes may write), retrying while
    another process holds the file; ``synchronous = NORMAL`` as WAL allows."""
    # Switching to WAL needs a moment alone with the file; a second process doing the
    # same at the same time can get SQLITE_BUSY despite the busy timeout, so retry.
    for attempt in range(50):
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.DatabaseError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                conn.close()
                raise InputError(
                    N_("not a history store ({reason})"),
                    source=str(path),
                    hint=N_("choose another file"),
                    params={"reason": exc},
                ) from None
            time.sleep(0.02 * (attempt + 1))
    else:  # pragma: no cover - only under extreme contention
        raise InputError(N_("the history store stays locked by another process"), source=str(path))
    if str(mode).lower() != "wal":  # pragma: no cover - e.g. a read-only folder
        raise InputError(
            N_("cannot use WAL mode (journal mode is {mode})"),
            source=str(path),
            params={"mode": mode},
        )
    conn.execute("PRAGMA synchronous = NORMAL")


def date_filters(suite_id, date_from, date_to):
    """The WHERE clause and parameters of a listing: the suite (its id, or None) and the
    dates (inclusive; a date alone in ``date_to`` includes that whole day, UTC)."""
    clauses, params = [], []
    if suite_id is not None:
        clauses.append("e.suite_id = ?")
        params.append(suite_id)
    lo = to_utc(date_from, "start date") if date_from not in (None, "") else None
    hi = None
    if date_to not in (None, ""):
        hi = to_utc(date_to, "end date")
        if is_date_only(date_to):
            hi = hi + timedelta(days=1)
            clauses.append("e.created_at < ?")
        else:
            clauses.append("e.created_at <= ?")
        params.append(hi.strftime(TIMESTAMP_FORMAT))
    if lo is not None:
        clauses.append("e.created_at >= ?")
        params.append(lo.strftime(TIMESTAMP_FORMAT))
    if lo is not None and hi is not None and lo > hi:
        raise InputError(
            N_("the start date is after the end date"),
            hint=N_("swap date_from= and date_to="),
            plain_hint=N_("swap the two dates"),
        )
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


#: the advice for an uploaded file that is not a history file
UPLOAD_HINT = N_("upload a file saved with the History page's download button")


def image_connection(data: bytes, source: str):
    """An in-memory SQLite connection holding a copy of a history file's bytes, checked by
    :func:`check_image` (an :class:`InputError` naming ``source`` otherwise)."""
    limit = current_limits().input_bytes
    if len(data) > limit:  # deserialised, the database takes its size again
        raise over_input(source, WORDS["file"], len(data), limit)
    data = bytes(data)
    if len(data) < 100 or not data.startswith(b"SQLite format 3\x00"):
        raise InputError(
            N_("not a RankLab history file (it is not an SQLite database)"),
            source=source,
            hint=UPLOAD_HINT,
        )
    if data[18:20] == b"\x02\x02":  # saved from a WAL-mode store file
        data = data[:18] + b"\x01\x01" + data[20:]
    if sys.version_info < (3, 11):  # sqlite3's Connection.deserialize is new in 3.11
        raise InputError(
            N_("reading an uploaded history file needs Python 3.11 or newer"),
            source=source,
            hint=N_("run RankLab with Python 3.11 or newer"),
        )
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.deserialize(data)
        conn.execute("PRAGMA trusted_schema = OFF")
        check_image(conn, source)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InputError(
            N_("not a RankLab history file ({reason})"),
            source=source,
            hint=UPLOAD_HINT,
            params={"reason": exc},
        ) from None
    except BaseException:
        conn.close()
        raise
    return conn


def check_image(conn, source) -> None:
    """Refuse a database of an unknown version, whose schema is not the store's own, or
    that is damaged.

    The schema is compared first (:func:`check_schema`): an upload's CHECK constraint,
    DEFAULT, generated column, view or trigger never runs, because a file that carries one
    is refused before anything else touches its tables. Only then does
    ``PRAGMA integrity_check`` (which evaluates the tables' CHECK constraints, now the
    store's own, of which it has none) look at the pages.
    """
    check_schema(conn, source)
    if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
        raise InputError(
            N_("not a RankLab history file (the database is damaged)"),
            source=source,
            hint=UPLOAD_HINT,
        )


def check_schema(conn, source, hint: str = UPLOAD_HINT) -> None:
    """Refuse a database of a schema version newer than this RankLab's or none, or whose
    objects are not those of its version: compared object by object (type, name, table
    and SQL, up to whitespace: :func:`~metrics_core.history.schema.normalized_sql`), read
    from ``sqlite_master``, which evaluates nothing. Every version that
    :func:`~metrics_core.history.schema.migrate` upgrades is accepted with its own objects,
    so an older store passes before it is migrated. ``hint`` is the advice of a refusal.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise InputError(
            N_(
                "the history file has schema version {version}, newer than this RankLab "
                "({supported})"
            ),
            source=source,
            hint=N_("upgrade RankLab"),
            params={"version": version, "supported": SCHEMA_VERSION},
        )
    allowed = schema_objects(version)
    if allowed is None:
        raise InputError(
            N_("not a RankLab history file (no RankLab tables)"), source=source, hint=hint
        )
    found = {
        (t, n): (tbl, normalized_sql(sql))
        for t, n, tbl, sql in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
    }
    foreign = sorted(n for (t, n) in found if (t, n) not in allowed)
    missing = sorted(n for (t, n) in allowed if (t, n) not in found and t == "table")
    if foreign or missing:
        problem = (
            N_("not a RankLab history file (unexpected {names})")
            if foreign
            else N_("not a RankLab history file (missing {names})")
        )
        raise InputError(
            problem,
            source=source,
            hint=hint,
            params={"names": ", ".join(foreign or missing)},
        )
    changed = sorted(n for (t, n), spec in found.items() if allowed[(t, n)] != spec)
    if changed:
        raise InputError(
            N_("not a RankLab history file (the SQL of {names} is not RankLab's own schema)"),
            source=source,
            hint=hint,
            params={"names": ", ".join(changed)},
        )


def unknown_suite(name: str, known, saving: bool = False) -> InputError:
    """The :class:`InputError` for a suite name the store does not hold (``known``: the
    names it holds); ``saving``: the refusal of a save without the suite's qrels.

    >>> str(unknown_suite("web", []))
    "no suite named 'web'. known suites: none yet"
    >>> str(unknown_suite("web", ["news", "qa"], saving=True))
    "no suite named 'web'. give its qrels to create it (known: news, qa)"
    """
    if saving:
        hint = (
            N_("give its qrels to create it (known: {known})")
            if known
            else N_("give its qrels to create it (known: none yet)")
        )
    else:
        hint = N_("known suites: {known}") if known else N_("known suites: none yet")
    return InputError(
        N_("no suite named {name!r}"), hint=hint, params={"name": name, "known": ", ".join(known)}
    )


def prepare_evaluation(evaluation):
    """(run name, per-query frame, measures, aggregate, conventions) of one evaluation."""
    per_query = evaluation.per_query
    measures = list(getattr(evaluation, "measures", None) or per_query.columns)
    aggregate = {m: float_or_none(v) for m, v in dict(evaluation.aggregate).items()}
    for m in aggregate:
        if m not in measures:
            measures.append(m)
    conventions = evaluation.conventions
    conv = conventions.as_dict() if hasattr(conventions, "as_dict") else dict(conventions or {})
    return str(evaluation.run_name), per_query, measures, aggregate, conv


def check_name(name) -> str:
    """A suite name, stripped; empty is an :class:`InputError`."""
    text = str(name or "").strip()
    if not text:
        raise InputError(
            N_("a suite needs a name"),
            hint=N_("e.g. suite='regression-2025'"),
            plain_hint=N_("e.g. regression-2025"),
        )
    return text


def measure_order(measure_lists, present) -> list:
    """The measures in ``present``, in the order the evaluations requested them, then the rest sorted."""
    order = []
    for ms in measure_lists:
        for m in ms:
            if m in present and m not in order:
                order.append(m)
    return order + sorted(m for m in present if m not in order)


def meta_rows(suite_id: int, meta: pd.DataFrame):
    """Rows ``(suite_id, query_id, query text, other columns as JSON)`` of a metadata frame."""
    frame = meta.copy()
    if "query_id" in frame.columns:
        frame = frame.set_index("query_id")
    text_col = next((c for c in ("query", "text", "query_text") if c in frame.columns), None)
    extra = [c for c in frame.columns if c != text_col]
    for qid, row in frame.iterrows():
        other = {c: plain_value(row[c]) for c in extra}
        yield (
            suite_id,
            str(qid),
            None if text_col is None else str(row[text_col]),
            json.dumps(other, default=str) if other else None,
        )


def plain_value(v):
    """A numpy scalar as a Python number (NaN as None), for JSON."""
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return None if np.isnan(v) else float(v)
    return v
