"""Saved evaluations in an embedded SQLite store, and their comparative report.

A *suite* is a controlled test: a name, its qrels (the ground truth) and optional query
metadata (the query text, a category ...). Each new version of a system is evaluated
against a suite and the evaluation is saved with its date (UTC), the conventions, the
RankLab version, the aggregate values and the value of every measure for every query.
:meth:`HistoryStore.report` lists the saved evaluations (one row per evaluation, or per
query and evaluation) with interpretation labels and a summary row.

The store is one SQLite file (stdlib :mod:`sqlite3`), created on first use. Its schema
is versioned with ``PRAGMA user_version`` and older stores are migrated when opened.
Every write is one ``BEGIN IMMEDIATE`` transaction, so a failure half way leaves nothing
behind; the file is in WAL mode with a busy timeout, so several processes (two app
sessions, the app and the command line) can write at once.

Interpretation
--------------
A value is *Good* at or above its threshold (MRR, i.e. mean ``RR``: 0.7; ``nDCG@10``:
0.6; ``P@5``: 0.5), *Fair* at or above half of it, else *Needs improvement*
(:func:`metrics_core.report.interpret`). A row's label is the **worst** label of its
measures. The summary row holds the number of rows, the mean of each measure over the
rows and an overall label from the labels of those means: *Efficient* when every mean
is Good, *Needs improvement* when any mean is Needs improvement, *Acceptable* otherwise.
A table with means 0.694, 0.66 and 0.533 is therefore *Acceptable*.

Examples
--------
>>> import metrics_core as mc
>>> store = HistoryStore(":memory:")
>>> qrels = {"q1": {"d1": 1}, "q2": {"d3": 1}}
>>> _ = store.add_suite("smoke", qrels)
>>> ev = mc.evaluate(qrels, {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 1.0, "d3": 0.5}},
...                  ["RR", "nDCG@10", "P@5"])
>>> store.save_evaluation("smoke", ev, timestamp="2025-01-28T10:00:00Z")
1
>>> report = store.report()
>>> report["ID"].tolist(), report["RR"].tolist(), report["Interpretation"].tolist()
([1, 'Summary'], [0.75, 0.75], ['Needs improvement', 'Needs improvement'])
"""

from __future__ import annotations

from metrics_core.history.comparative_report import (
    OVERALL_LABELS,
    REPORT_MEASURES,
    comparative_report,
    overall_label,
    row_label,
    summarize_rows,
    summary_text,
)
from metrics_core.history.sample import SAMPLE_PATH, load_sample_history
from metrics_core.history.schema import (
    SCHEMA_V1,
    SCHEMA_V2_CHANGES,
    SCHEMA_V3_CHANGES,
    SCHEMA_VERSION,
    create_v1_store,
)
from metrics_core.history.store import (
    BUSY_TIMEOUT_MS,
    TIMESTAMP_FORMAT,
    EvaluationRecord,
    HistoryStore,
    default_store_path,
    format_timestamp,
    qrels_digest,
    store_error,
)

__all__ = [
    "HistoryStore",
    "EvaluationRecord",
    "REPORT_MEASURES",
    "OVERALL_LABELS",
    "SCHEMA_VERSION",
    "SCHEMA_V1",
    "SCHEMA_V2_CHANGES",
    "SCHEMA_V3_CHANGES",
    "BUSY_TIMEOUT_MS",
    "TIMESTAMP_FORMAT",
    "SAMPLE_PATH",
    "create_v1_store",
    "default_store_path",
    "format_timestamp",
    "load_sample_history",
    "overall_label",
    "row_label",
    "summarize_rows",
    "store_error",
    "qrels_digest",
    "comparative_report",
    "summary_text",
]
