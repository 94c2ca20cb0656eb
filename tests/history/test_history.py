"""The history store: round trip, transactions, concurrent writers, migration, report."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import InputError
from metrics_core.history import (
    SAMPLE_PATH,
    SCHEMA_VERSION,
    HistoryStore,
    create_v1_store,
    default_store_path,
    load_sample_history,
    overall_label,
    row_label,
)
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS

MEASURES = ["RR", "nDCG@10", "P@5"]


def random_data(seed: int, n_queries: int = 12):
    """Random graded qrels and a run with tied scores."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(15)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 6, replace=False)}
        run[f"q{q}"] = {d: float(rng.integers(0, 4)) for d in rng.choice(docs, 10, replace=False)}
    return qrels, run


def fake_evaluation(name: str, rng: np.random.Generator, n_queries: int = 5):
    """An evaluation-like object (the store needs only these attributes)."""
    per_query = pd.DataFrame(
        rng.random((n_queries, 3)),
        columns=MEASURES,
        index=pd.Index([f"q{i}" for i in range(n_queries)], name="query_id"),
    )
    return SimpleNamespace(
        run_name=name,
        measures=list(MEASURES),
        per_query=per_query,
        aggregate=per_query.mean().to_dict(),
        conventions=mc.Conventions(),
    )


@pytest.fixture
def store(tmp_path):
    with HistoryStore(tmp_path / "h" / "history.sqlite3") as s:
        yield s


def test_created_on_first_use_with_wal(tmp_path):
    path = tmp_path / "new" / "folder" / "history.sqlite3"
    with HistoryStore(path) as s:
        assert s.schema_version() == SCHEMA_VERSION
        assert s.count_evaluations() == 0
    assert path.is_file()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_default_path_follows_ranklab_home(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKLAB_HOME", str(tmp_path / "home"))
    assert default_store_path() == tmp_path / "home" / "history.sqlite3"
    monkeypatch.delenv("RANKLAB_HOME")
    assert default_store_path().parts[-2:] == (".ranklab", "history.sqlite3")


def test_round_trip_of_a_real_evaluation(store):
    qrels, run = random_data(0)
    ev = mc.evaluate(qrels, run, MEASURES + ["AP"], missing_queries="zero")
    meta = pd.DataFrame(
        {"query": [f"text {q}" for q in qrels], "category": ["a", "b"] * 6},
        index=pd.Index(list(qrels), name="query_id"),
    )
    store.add_suite("s1", qrels, meta)
    eid = store.save_evaluation("s1", ev, timestamp="2025-01-28T10:00:00+02:00", note="first")
    rec = store.load_evaluation(eid)
    assert rec.suite == "s1" and rec.run_name == ev.run_name and rec.note == "first"
    assert rec.timestamp == "2025-01-28T08:00:00.000000Z"
    assert rec.measures == ev.measures
    assert rec.conventions == json.loads(json.dumps(ev.conventions.as_dict()))
    assert rec.conventions["missing_queries"] == "zero"
    assert rec.ranklab_version == mc.__version__
    assert rec.aggregate == pytest.approx(ev.aggregate, abs=0, rel=0)
    pd.testing.assert_frame_equal(
        rec.per_query,
        ev.per_query.astype(float),
        check_exact=True,
        check_index_type=False,
        check_dtype=False,
    )
    # qrels and metadata come back
    got = (
        store.get_suite_qrels("s1")
        .to_frame()
        .sort_values(["query_id", "doc_id"])
        .reset_index(drop=True)
    )
    want = (
        mc.read_qrels(qrels).to_frame().sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    back = store.get_suite_meta("s1")
    assert back.loc["q3", "query"] == "text q3" and back.loc["q3", "category"] == "b"


def test_suite_ground_truth_is_fixed(store):
    store.add_suite("s", {"q1": {"d1": 1}})
    assert store.add_suite("s", {"q1": {"d1": 1}}) == store.add_suite("s", {"q1": {"d1": 1}})
    with pytest.raises(InputError, match="different qrels"):
        store.add_suite("s", {"q1": {"d2": 1}})
    with pytest.raises(InputError, match="no suite named 'other'"):
        store.save_evaluation("other", fake_evaluation("r", np.random.default_rng(0)))


def test_nan_values_stored_as_null(store):
    ev = fake_evaluation("r", np.random.default_rng(1))
    ev.per_query.iloc[2, 1] = np.nan
    ev.aggregate["nDCG@10"] = float("nan")
    eid = store.save_evaluation("s", ev, qrels={"q0": {"d": 1}})
    rec = store.load_evaluation(eid)
    assert np.isnan(rec.per_query.iloc[2, 1]) and np.isnan(rec.aggregate["nDCG@10"])
    assert rec.per_query.iloc[2, 0] == ev.per_query.iloc[2, 0]


def test_failure_mid_write_leaves_nothing(store, monkeypatch):
    """An error after the evaluation row is inserted rolls back the row and the suite
    created in the same transaction."""
    inserted = []
    original = HistoryStore._insert_evaluation_row

    def spy(self, cur, *a, **k):
        eid = original(self, cur, *a, **k)
        # the row really is there inside the transaction
        inserted.append(cur.execute("SELECT count(*) FROM evaluations").fetchone()[0])
        return eid

    def boom(self, cur, evaluation_id, aggregate, per_query, measures):
        cur.executemany(
            "INSERT INTO aggregate_values VALUES (?, ?, ?)",
            ((evaluation_id, m, v) for m, v in aggregate.items()),
        )
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(HistoryStore, "_insert_evaluation_row", spy)
    monkeypatch.setattr(HistoryStore, "_insert_values", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.save_evaluation(
            "s", fake_evaluation("r", np.random.default_rng(2)), qrels={"q0": {"d": 1}}
        )
    assert inserted == [1]
    counts = store.row_counts()
    for table in ("suites", "suite_qrels", "evaluations", "aggregate_values", "query_values"):
        assert counts[table] == 0, table
    # the store still works afterwards
    monkeypatch.undo()
    assert (
        store.save_evaluation(
            "s", fake_evaluation("r", np.random.default_rng(2)), qrels={"q0": {"d": 1}}
        )
        >= 1
    )
    assert store.count_evaluations() == 1


def _writer(path, worker, n, barrier):
    rng = np.random.default_rng(worker)
    barrier.wait()
    with HistoryStore(path, busy_timeout_ms=60_000) as s:
        for i in range(n):
            s.save_evaluation(
                "shared",
                fake_evaluation(f"w{worker}-{i}", rng, n_queries=20),
                qrels={"q0": {"d0": 1}, "q1": {"d1": 2}},
            )


def test_two_processes_write_at_once(tmp_path):
    path = tmp_path / "concurrent.sqlite3"
    n = 15
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(path, w, n, barrier)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    with HistoryStore(path) as s:
        assert s.integrity_check() == "ok"
        listed = s.list_evaluations()
        assert len(listed) == 2 * n
        assert sorted(listed["run"]) == sorted(f"w{w}-{i}" for w in (1, 2) for i in range(n))
        assert s.row_counts()["query_values"] == 2 * n * 20 * 3
        assert s.suite_names() == ["shared"]


# The schema of version 1 as it shipped, frozen here (not read from the module), so that a
# change to the module's copy cannot hide a broken migration.
V1_DDL = """
CREATE TABLE suites (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL,
                     qrels_sha256 TEXT NOT NULL);
CREATE TABLE suite_qrels (suite_id INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
                          query_id TEXT NOT NULL, doc_id TEXT NOT NULL, relevance REAL NOT NULL);
CREATE INDEX suite_qrels_suite ON suite_qrels(suite_id);
CREATE TABLE evaluations (id INTEGER PRIMARY KEY, suite_id INTEGER NOT NULL REFERENCES suites(id)
                          ON DELETE CASCADE, run_name TEXT NOT NULL, created_at TEXT NOT NULL,
                          conventions TEXT NOT NULL, ranklab_version TEXT NOT NULL);
CREATE INDEX evaluations_created ON evaluations(created_at);
CREATE TABLE aggregate_values (evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
                               measure TEXT NOT NULL, value REAL, PRIMARY KEY (evaluation_id, measure));
CREATE TABLE query_values (evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
                           query_id TEXT NOT NULL, measure TEXT NOT NULL, value REAL,
                           PRIMARY KEY (evaluation_id, query_id, measure));
PRAGMA user_version = 1;
"""


def test_create_v1_store_matches_the_frozen_v1_schema(tmp_path):
    def tables(path):
        conn = sqlite3.connect(path)
        out = {
            name: [r[1:3] for r in conn.execute(f"PRAGMA table_info({name})")]
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.close()
        return out, version

    create_v1_store(tmp_path / "a.sqlite3")
    conn = sqlite3.connect(tmp_path / "b.sqlite3")
    conn.executescript(V1_DDL)
    conn.close()
    assert tables(tmp_path / "a.sqlite3") == tables(tmp_path / "b.sqlite3")


def test_opens_and_migrates_a_v1_store(tmp_path):
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(V1_DDL)
    conn.execute("INSERT INTO suites VALUES (1, 'legacy', '2024-12-01T00:00:00.000000Z', 'x')")
    conn.execute("INSERT INTO suite_qrels VALUES (1, 'q1', 'd1', 1.0)")
    conn.execute(
        "INSERT INTO evaluations VALUES (7, 1, 'old-run', '2024-12-02T00:00:00.000000Z', '{}', '0.0.1')"
    )
    conn.executemany(
        "INSERT INTO aggregate_values VALUES (7, ?, ?)", [("nDCG@10", 0.5), ("RR", 1.0)]
    )
    conn.executemany(
        "INSERT INTO query_values VALUES (7, 'q1', ?, ?)", [("nDCG@10", 0.5), ("RR", 1.0)]
    )
    conn.commit()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    columns = [r[1] for r in conn.execute("PRAGMA table_info(evaluations)")]
    assert "measures" not in columns
    conn.close()

    with HistoryStore(path) as s:
        assert s.schema_version() == SCHEMA_VERSION
        rec = s.load_evaluation(7)
        assert rec.measures == ["nDCG@10", "RR"]  # filled from the old aggregate rows
        assert rec.aggregate == {"nDCG@10": 0.5, "RR": 1.0} and rec.note is None
        assert rec.per_query.loc["q1", "RR"] == 1.0
        # the v2 table works on the migrated store
        s.set_suite_meta("legacy", pd.DataFrame({"query": ["hello"]}, index=["q1"]))
        assert s.get_suite_meta("legacy").loc["q1", "query"] == "hello"
        assert s.report(measures=["RR"])["RR"].tolist()[:1] == [1.0]
    with HistoryStore(path) as s:  # reopening does not migrate twice
        assert s.schema_version() == SCHEMA_VERSION


def test_a_v1_store_of_other_spacing_uploads_and_a_store_file_out_of_schema_is_refused(tmp_path):
    """The frozen version-1 DDL (no space inside its brackets) is the store's own schema on
    an upload as on a store path; a store file whose objects are not those of its version
    (a trigger beside the v1 tables, a CHECK written into the current ``suite_qrels``) is
    refused when it is opened, before an insert could run what it adds."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(V1_DDL)
    image = bytes(conn.serialize())
    conn.close()
    with HistoryStore.from_bytes(image, "old.sqlite3") as s:
        assert s.schema_version() == SCHEMA_VERSION

    old = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(old)
    conn.executescript(V1_DDL)
    conn.execute("CREATE TRIGGER t AFTER INSERT ON suites BEGIN DELETE FROM suite_qrels; END")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match=r"not a RankLab history file \(unexpected t\)"):
        HistoryStore(old)

    path = tmp_path / "current.sqlite3"
    with HistoryStore(path) as s:
        s.add_suite("s", {"q1": {"d1": 1}})
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET sql = replace(sql, 'relevance REAL NOT NULL', "
        "'relevance REAL NOT NULL CHECK (relevance < 0)') WHERE name = 'suite_qrels'"
    )
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="the SQL of suite_qrels is not RankLab's own schema"):
        HistoryStore(path)


def test_refuses_newer_schema_and_foreign_files(tmp_path):
    newer = tmp_path / "newer.sqlite3"
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(InputError, match="newer"):
        HistoryStore(newer)
    other = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="not a RankLab history store"):
        HistoryStore(other)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(InputError):
        HistoryStore(junk)


def test_report_numbers_equal_metrics_core(store):
    qrels, _ = random_data(3)
    store.add_suite("s", qrels)
    evs = []
    for i in range(4):
        _, run = random_data(10 + i)
        ev = mc.evaluate(qrels, run, MEASURES)
        ev = ev.renamed(f"v{i}")
        store.save_evaluation("s", ev, timestamp=f"2025-02-0{i + 1}T12:00:00Z")
        evs.append(ev)
    rep = store.report("s")
    body, last = rep.iloc[:-1], rep.iloc[-1]
    assert body["Run"].tolist() == ["v0", "v1", "v2", "v3"]
    assert body["Date"].tolist() == ["2025-02-01", "2025-02-02", "2025-02-03", "2025-02-04"]
    for m in MEASURES:
        np.testing.assert_array_equal(
            body[m].to_numpy(dtype=float), [ev.aggregate[m] for ev in evs]
        )
        assert last[m] == pytest.approx(np.mean([ev.aggregate[m] for ev in evs]), rel=1e-12)
    for (_, row), ev in zip(body.iterrows(), evs, strict=True):
        assert row["Interpretation"] == row_label(ev.aggregate, DEFAULT_GOOD_THRESHOLDS)
    assert last["ID"] == "Summary" and last["Run"] == "4 evaluations (1 suite)"
    assert last["Interpretation"] == overall_label(
        {m: last[m] for m in MEASURES}, DEFAULT_GOOD_THRESHOLDS
    )

    per_query = store.report("s", per_query=True)
    body = per_query.iloc[:-1]
    assert len(body) == 4 * len(evs[0].per_query)
    for i, ev in enumerate(evs):
        rows = body[body["Run"] == f"v{i}"].set_index("Query ID")
        for m in MEASURES:
            np.testing.assert_array_equal(
                rows[m].to_numpy(dtype=float), ev.per_query.loc[rows.index, m].to_numpy(dtype=float)
            )
    all_values = pd.concat([ev.per_query for ev in evs])
    for m in MEASURES:
        assert per_query.iloc[-1][m] == pytest.approx(all_values[m].mean(), rel=1e-12)


def test_seed_001_example_labels():
    """Seed 001's comparative table: rows Good, Good, Needs improvement; summary Acceptable."""
    rows = [(0.833, 0.72, 0.60), (1.000, 0.85, 0.80), (0.250, 0.41, 0.20)]
    labels = [row_label(dict(zip(MEASURES, r, strict=True)), DEFAULT_GOOD_THRESHOLDS) for r in rows]
    assert labels == ["Good", "Good", "Needs improvement"]
    means = dict(zip(MEASURES, np.mean(rows, axis=0), strict=True))
    assert overall_label(means, DEFAULT_GOOD_THRESHOLDS) == "Acceptable"
    assert (
        overall_label(dict(zip(MEASURES, rows[1], strict=True)), DEFAULT_GOOD_THRESHOLDS)
        == "Efficient"
    )
    assert (
        overall_label(dict(zip(MEASURES, rows[2], strict=True)), DEFAULT_GOOD_THRESHOLDS)
        == "Needs improvement"
    )
    assert overall_label({"AP": 0.1}, DEFAULT_GOOD_THRESHOLDS) == ""


def test_date_filter(store):
    rng = np.random.default_rng(4)
    stamps = [
        "2025-01-27T23:59:59Z",
        "2025-01-28T00:00:00Z",
        "2025-01-28T23:59:59Z",
        "2025-01-29T00:00:00Z",
        "2025-02-10T08:00:00Z",
    ]
    ids = [
        store.save_evaluation(
            "s", fake_evaluation(f"r{i}", rng), timestamp=t, qrels={"q0": {"d": 1}}
        )
        for i, t in enumerate(stamps)
    ]
    on_28 = store.list_evaluations(date_from="2025-01-28", date_to="2025-01-28")
    assert on_28["id"].tolist() == ids[1:3]
    assert store.list_evaluations(date_from="2025-01-29")["id"].tolist() == ids[3:]
    assert store.list_evaluations(date_to="2025-01-28T12:00:00Z")["id"].tolist() == ids[:2]
    rep = store.report(date_from="2025-01-28", date_to="2025-01-29")
    assert rep["ID"].tolist() == ids[1:4] + ["Summary"]
    assert store.report(date_from="2030-01-01").iloc[-1]["Run"].startswith("0 evaluations")
    with pytest.raises(InputError, match="not a date"):
        store.list_evaluations(date_from="last tuesday")
    with pytest.raises(InputError, match="after the end"):
        store.list_evaluations(date_from="2025-02-01", date_to="2025-01-01")


def test_suite_filter_and_delete(store):
    rng = np.random.default_rng(5)
    a = store.save_evaluation("a", fake_evaluation("ra", rng), qrels={"q0": {"d": 1}})
    b = store.save_evaluation("b", fake_evaluation("rb", rng), qrels={"q0": {"e": 1}})
    assert store.list_evaluations("b")["id"].tolist() == [b]
    store.delete_evaluation(a)
    assert store.list_evaluations()["id"].tolist() == [b]
    assert store.row_counts(a)["query_values"] == 0
    with pytest.raises(InputError, match="no evaluation with id"):
        store.delete_evaluation(a)
    with pytest.raises(InputError, match="no suite named"):
        store.list_evaluations("zzz")


def test_sample_history_loads_with_exact_values(tmp_path):
    with HistoryStore(tmp_path / "s.sqlite3") as s:
        ids = load_sample_history(s)
        assert len(ids) == s.count_evaluations() >= 4
        data = json.loads(SAMPLE_PATH.read_text(encoding="utf-8"))
        suite = data["suites"][0]
        first = suite["evaluations"][0]
        run = {
            q: {d: float(len(docs) - i) for i, d in enumerate(docs)}
            for q, docs in first["ranking"].items()
        }
        ev = mc.evaluate(suite["qrels"], run, MEASURES)
        rec = s.load_evaluation(ids[0])
        assert rec.aggregate == ev.aggregate
        rep = s.report(per_query=True)
        assert set(rep["Query"].iloc[:-1]) == set(suite["queries"].values())
        # the sample shows every label somewhere
        assert {"Good", "Fair", "Needs improvement"} <= set(s.report()["Interpretation"])


def test_qrels_digest_is_the_sha256_of_its_lines():
    """The digest stored with a suite (compared across sessions) is the sha256 of the lines
    query<TAB>doc<TAB>repr(float(label)); -0.0 and 0.0 keep their own texts."""
    import hashlib

    from metrics_core.history import qrels_digest

    frame = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q10", "q2", "é"],
            "doc_id": ["d1", "d 2", "d1", "x", "y", "z"],
            "relevance": [1, 0.0, -0.0, 2.5, -1, 3],
        }
    )
    want = hashlib.sha256(
        "".join(
            f"{q}\t{d}\t{float(r)!r}\n" for q, d, r in frame.itertuples(index=False, name=None)
        ).encode()
    ).hexdigest()
    assert qrels_digest(frame) == want
    assert qrels_digest(frame.iloc[:0]) == hashlib.sha256(b"").hexdigest()


def test_public_counts_values_and_errors_replace_the_connection(store):
    from metrics_core.history import comparative_report

    rng = np.random.default_rng(8)
    a = store.save_evaluation(
        "s", fake_evaluation("ra", rng, n_queries=4), qrels={"q0": {"d": 1}, "q1": {"e": 2}}
    )
    b = store.save_evaluation("s", fake_evaluation("rb", rng, n_queries=3))
    assert store.row_counts() == {
        "suites": 1,
        "suite_qrels": 2,
        "evaluations": 2,
        "aggregate_values": 6,
        "query_values": (4 + 3) * 3,
    }
    assert store.row_counts(b) == {"evaluations": 1, "aggregate_values": 3, "query_values": 9}
    long = store.query_values([a, b])
    assert (
        list(long.columns) == ["evaluation_id", "query_id", "measure", "value"] and len(long) == 21
    )
    rec = store.load_evaluation(a)
    mine = long[long["evaluation_id"] == a].pivot(
        index="query_id", columns="measure", values="value"
    )
    pd.testing.assert_frame_equal(mine[MEASURES], rec.per_query, check_names=False)
    # the report is one library function of the store's public methods
    pd.testing.assert_frame_equal(
        comparative_report(store, per_query=True), store.report(per_query=True)
    )
    err = store.error(sqlite3.DatabaseError("database disk image is malformed"))
    assert (
        isinstance(err, InputError)
        and "integrity check: ok" in str(err)
        and str(store.path) in str(err)
    )
