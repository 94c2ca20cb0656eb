"""The history store's read queries: the evaluation list, one saved evaluation, long values."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.history.records import EvaluationRecord, measure_order

__all__ = ["evaluation_list", "load_record", "read_long"]


def evaluation_list(conn, where: str, params) -> pd.DataFrame:
    """The evaluations a ``WHERE`` clause selects (:func:`~metrics_core.history.records.date_filters`),
    oldest first, with one column per aggregate measure (see
    :meth:`~metrics_core.history.HistoryStore.list_evaluations`)."""
    base = pd.read_sql_query(
        "SELECT e.id, s.name AS suite, e.run_name AS run, e.created_at AS timestamp, "
        "e.ranklab_version, e.measures, e.note, e.conventions, e.batch_id AS batch FROM evaluations e "
        f"JOIN suites s ON s.id = e.suite_id {where} ORDER BY e.created_at, e.id",
        conn,
        params=params,
    )
    base["measures"] = [json.loads(m) if m else [] for m in base["measures"]]
    if base.empty:
        return base
    ids = base["id"].tolist()
    agg = read_long(conn, "aggregate_values", ids)
    if not agg.empty:
        wide = agg.pivot(index="evaluation_id", columns="measure", values="value")
        order = measure_order(base["measures"], wide.columns)
        base = base.join(wide[order], on="id")
    return base


def load_record(conn, evaluation_id: int) -> EvaluationRecord:
    """One saved evaluation with its per-query values (an :class:`InputError` for an unknown id)."""
    found = conn.execute(
        "SELECT e.id, s.name, e.run_name, e.created_at, e.conventions, e.ranklab_version, e.measures, e.note, "
        "e.batch_id "
        "FROM evaluations e JOIN suites s ON s.id = e.suite_id WHERE e.id = ?",
        (int(evaluation_id),),
    ).fetchone()
    if found is None:
        raise InputError(
            N_("no evaluation with id {id}"),
            hint=N_("see `history list` for the ids"),
            plain_hint=N_("choose an id from the list of saved evaluations"),
            params={"id": evaluation_id},
        )
    eid, suite, run, stamp, conv, version, measures, note, batch = found
    measures = json.loads(measures) if measures else []
    agg = dict(
        conn.execute(
            "SELECT measure, value FROM aggregate_values WHERE evaluation_id = ? ORDER BY rowid",
            (eid,),
        ).fetchall()
    )
    if not measures:
        measures = list(agg)
    agg = {m: (np.nan if v is None else v) for m, v in agg.items()}
    long = read_long(conn, "query_values", [eid])
    if long.empty:
        per_query = pd.DataFrame(columns=measures, dtype=float)
    else:
        per_query = long.pivot(index="query_id", columns="measure", values="value")
        per_query = per_query[[m for m in measures if m in per_query.columns]]
    per_query.index.name = "query_id"
    per_query.columns.name = None
    return EvaluationRecord(
        eid,
        suite,
        run,
        stamp,
        json.loads(conv),
        version,
        measures,
        agg,
        per_query.astype(float),
        note,
        batch,
    )


def read_long(conn, table: str, ids: Sequence[int]) -> pd.DataFrame:
    """``aggregate_values`` or ``query_values`` of the evaluations ``ids``, long, ``value`` as float."""
    cols = (
        "evaluation_id, query_id, measure, value"
        if table == "query_values"
        else "evaluation_id, measure, value"
    )
    # A temporary id list instead of a giant IN (...) (SQLite caps bound parameters).
    frames = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        frames.append(
            pd.read_sql_query(
                f"SELECT {cols} FROM {table} WHERE evaluation_id IN ({marks})", conn, params=chunk
            )
        )
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols.split(", "))
    out["value"] = out["value"].astype(float)
    return out
