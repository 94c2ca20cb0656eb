"""The history store's SQLite schema, its versions and the migrations between them.

The version is SQLite's ``PRAGMA user_version``. Version 1: suites, their qrels,
evaluations, aggregate and per-query values. Version 2 adds the query metadata table and
each evaluation's measure list and note. Version 3 adds each evaluation's batch (the
evaluations saved together, e.g. several runs of one evaluation).
"""

from __future__ import annotations

import json
import sqlite3

#: The schema version this code writes. Version 1 had no query metadata table and no
#: measure list or note on evaluations; :func:`_migrate_1_to_2` upgrades it.
SCHEMA_VERSION = 3
BUSY_TIMEOUT_MS = 30_000


SCHEMA_V1 = """
CREATE TABLE suites (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    qrels_sha256 TEXT NOT NULL
);
CREATE TABLE suite_qrels (
    suite_id INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    relevance REAL NOT NULL
);
CREATE INDEX suite_qrels_suite ON suite_qrels(suite_id);
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    suite_id INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
    run_name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    conventions TEXT NOT NULL,
    ranklab_version TEXT NOT NULL
);
CREATE INDEX evaluations_created ON evaluations(created_at);
CREATE TABLE aggregate_values (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
    measure TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (evaluation_id, measure)
);
CREATE TABLE query_values (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
    query_id TEXT NOT NULL,
    measure TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (evaluation_id, query_id, measure)
);
"""

# Version 2: query metadata of a suite (the query text the report shows next to the id,
# plus any other columns as JSON), and on each evaluation its measures in request order
# and a free-text note.
SCHEMA_V2_CHANGES = """
CREATE TABLE suite_queries (
    suite_id INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
    query_id TEXT NOT NULL,
    query_text TEXT,
    metadata TEXT,
    PRIMARY KEY (suite_id, query_id)
);
ALTER TABLE evaluations ADD COLUMN measures TEXT;
ALTER TABLE evaluations ADD COLUMN note TEXT;
"""


# Version 3: the batch an evaluation was saved in (the runs saved together share it).
SCHEMA_V3_CHANGES = """
ALTER TABLE evaluations ADD COLUMN batch_id INTEGER;
UPDATE evaluations SET batch_id = id;
CREATE INDEX evaluations_batch ON evaluations(batch_id);
"""


def _create_v1(cur) -> None:
    for statement in SCHEMA_V1.split(";"):
        if statement.strip():
            cur.execute(statement)


def _migrate_1_to_2(cur) -> None:
    """Version 1 -> 2: add the query metadata table and the evaluations' measure list and
    note; fill the measure list of old evaluations from their aggregate values."""
    for statement in SCHEMA_V2_CHANGES.split(";"):
        if statement.strip():
            cur.execute(statement)
    rows = cur.execute(
        "SELECT evaluation_id, measure FROM aggregate_values ORDER BY evaluation_id, rowid"
    ).fetchall()
    by_eval: dict[int, list] = {}
    for eid, m in rows:
        by_eval.setdefault(eid, []).append(m)
    cur.executemany(
        "UPDATE evaluations SET measures = ? WHERE id = ?",
        ((json.dumps(ms), eid) for eid, ms in by_eval.items()),
    )


def create_v1_store(path) -> None:
    """Write an empty schema-version-1 store (for migration tests and tooling)."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        _create_v1(conn.cursor())
        conn.execute("PRAGMA user_version = 1")
        conn.execute("COMMIT")
    finally:
        conn.close()


def _migrate_2_to_3(cur) -> None:
    """Version 2 -> 3: add the batch id; an evaluation saved before batches existed is
    its own batch (nothing records which evaluations were saved together)."""
    for statement in SCHEMA_V3_CHANGES.split(";"):
        if statement.strip():
            cur.execute(statement)


def migrate(cur, version: int) -> int:
    """Bring a store of schema ``version`` (0 = empty file) to :data:`SCHEMA_VERSION`
    inside the caller's transaction; returns the new version."""
    if version == 0:
        _create_v1(cur)
        version = 1
    if version == 1:
        _migrate_1_to_2(cur)
        version = 2
    if version == 2:
        _migrate_2_to_3(cur)
        version = 3
    cur.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return version


def normalized_sql(sql: str | None) -> str | None:
    """``sql`` with a space on each side of each bracket and comma and each run of
    whitespace made one space; None stays None (SQLite's own indexes have no SQL).

    Whitespace there carries no meaning in SQL outside quoted text, and the store's schema
    holds no quoted text, so an SQL that normalises to the store's own is the store's own
    (a match leaves no room for a quote). A store whose DDL was written with other spacing
    (as the version-1 DDL kept in tests/history, no space inside its brackets) is its own.

    >>> normalized_sql("CREATE TABLE t (\\n    a TEXT\\n, b TEXT)")
    'CREATE TABLE t ( a TEXT , b TEXT )'
    >>> normalized_sql("CREATE TABLE t(a TEXT,b TEXT)")
    'CREATE TABLE t ( a TEXT , b TEXT )'
    """
    if sql is None:
        return None
    for mark in "(),":
        sql = sql.replace(mark, f" {mark} ")
    return " ".join(sql.split())


def schema_objects(version: int) -> dict | None:
    """Every object a store of schema ``version`` holds: ``{(type, name): (table, sql)}``,
    the SQL through :func:`normalized_sql` (None for the indexes SQLite makes for a
    primary key or UNIQUE); None for a version that never existed. Built by running the
    DDL above in memory, so it follows it (including how ``ALTER TABLE`` rewrites a
    table's SQL)."""
    if not 1 <= version <= SCHEMA_VERSION:
        return None
    conn = sqlite3.connect(":memory:")
    try:
        cur = conn.cursor()
        _create_v1(cur)
        if version >= 2:
            _migrate_1_to_2(cur)
        if version >= 3:
            _migrate_2_to_3(cur)
        return {
            (t, n): (tbl, normalized_sql(sql))
            for t, n, tbl, sql in cur.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
        }
    finally:
        conn.close()
