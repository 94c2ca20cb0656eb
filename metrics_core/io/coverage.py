"""Never a silent zero: how much of a run the qrels can judge, and a warning when too little.

Two traps give every measure 0 (or nothing at all) without any error: a run read with the
wrong document-id column (PyTerrier's integer ``docid`` instead of its ``docno``), and a
run whose query ids are not the qrels' (another topic set, ``1`` against ``q1``).
:func:`coverage_report` measures both with a few Arrow joins over the whole run (no loop
over queries); :func:`warn_coverage` adds an :class:`CoverageWarning` when one is found,
and :func:`coverage_message` gives the one line the command line prints.
"""

from __future__ import annotations

import warnings

import pyarrow as pa

from metrics_core.data import Qrels, Run
from metrics_core.errors import InputWarning
from metrics_core.io.columns import column_hint

#: Default smallest share of the shared queries that must have a judged document retrieved.
MIN_SHARE = 0.1
#: Run rows joined with the qrels at a time: the join's temporaries follow the rows it is
#: given (Arrow's hash join: 238 MB for a run and qrels of 1,000,000 rows each), so a run of
#: millions of lines is joined block by block, with the same counts.
BLOCK_ROWS = 1 << 20


class CoverageWarning(InputWarning):
    """A run shares no query with the qrels, or (almost) none of its documents is judged."""


def _plain(arr) -> pa.ChunkedArray | pa.Array:
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return arr


def _query_set(data) -> pa.Array:
    """The distinct query ids of ``data`` (as strings, queries given without rows included).

    Dictionary-encoded ids are made distinct before they are decoded: only the distinct ids
    become strings, never one string per row (a 5,000,000-row run would otherwise decode
    every row's id at once). Chunks may carry different dictionaries: distinct again after.
    """
    import pyarrow.compute as pc

    ids = pc.unique(data.qid)
    if pa.types.is_dictionary(ids.type):
        ids = pc.unique(_plain(ids))
    if data.extra_query_ids:
        ids = pc.unique(pa.concat_arrays([ids, pa.array(list(data.extra_query_ids), pa.string())]))
    return ids


def coverage_report(qrels: Qrels, run: Run, *, min_share: float = MIN_SHARE) -> dict:
    """How much of ``run`` the qrels judge.

    Returns
    -------
    dict
        ``run_queries``, ``qrels_queries``, ``shared_queries`` (counts of distinct ids,
        queries given without rows included); ``retrieved`` (run rows of the shared
        queries); ``judged`` (those whose (query, document) pair is in the qrels, whatever
        the label); ``judged_share`` (judged / retrieved, None when nothing is retrieved);
        ``queries_with_judged`` (shared queries with at least one judged document
        retrieved); ``doc_ids_in_qrels`` (share of all run rows whose document id appears
        in the qrels under any query: high while ``judged`` is 0 means the query ids
        disagree; computed only for the problems ``none_judged`` and ``few_judged``,
        None otherwise); ``doc_id_column`` and ``other_doc_id_columns`` (for tables: the column
        read as the document id, and the other columns with a document-id name);
        ``problem``: None, ``"empty_run"`` (no row at all), ``"no_shared_query"``, ``"none_judged"`` (no retrieved document
        is judged) or ``"few_judged"`` (fewer than ``min_share`` of the shared queries
        have a judged document retrieved).

    Examples
    --------
    >>> from metrics_core.io import read_qrels, read_run
    >>> q = read_qrels({"q1": {"d1": 1}, "q2": {"d2": 1}})
    >>> r = coverage_report(q, read_run({"q1": {"x": 1.0}, "q2": {"y": 1.0}}))
    >>> r["problem"], r["judged"], r["shared_queries"]
    ('none_judged', 0, 2)
    >>> coverage_report(q, read_run({"7": {"d1": 1.0}}))["problem"]
    'no_shared_query'
    """
    import pyarrow.compute as pc

    run_q, qrels_q = _query_set(run), _query_set(qrels)
    shared = pc.is_in(run_q, value_set=qrels_q)
    n_shared = int(pc.sum(shared).as_py() or 0)
    keys = pa.table({"q": _plain(qrels.qid), "d": qrels.docid})  # a semi join: duplicates harmless
    retrieved = judged = 0
    judged_queries = []
    for start in range(0, len(run), BLOCK_ROWS):  # block by block (BLOCK_ROWS): the same sums
        rq = _plain(run.qid.slice(start, BLOCK_ROWS))
        retrieved += int(pc.sum(pc.is_in(rq, value_set=qrels_q)).as_py() or 0)
        rows = pa.table({"q": rq, "d": run.docid.slice(start, BLOCK_ROWS)})
        found = rows.join(keys, keys=["q", "d"], join_type="left semi")
        judged += found.num_rows
        if found.num_rows:
            judged_queries.append(pc.unique(found.column("q")))
    with_judged = len(pc.unique(pa.chunked_array(judged_queries))) if judged_queries else 0
    used = getattr(run, "columns_used", None) or {}
    problem = None
    if not len(run_q):
        problem = "empty_run"
    elif not n_shared:
        problem = "no_shared_query"
    elif retrieved and not judged:
        problem = "none_judged"
    elif retrieved and with_judged < min_share * n_shared:
        problem = "few_judged"
    known = None  # looked up only to explain a problem (a pass over every document id)
    if problem in ("none_judged", "few_judged"):
        known = int(pc.sum(pc.is_in(run.docid, value_set=pc.unique(qrels.docid))).as_py() or 0)
    return {
        "run_queries": len(run_q),
        "qrels_queries": len(qrels_q),
        "shared_queries": n_shared,
        "retrieved": retrieved,
        "judged": judged,
        "judged_share": judged / retrieved if retrieved else None,
        "queries_with_judged": with_judged,
        "doc_ids_in_qrels": known / len(run) if known is not None and len(run) else None,
        "doc_id_column": used.get("doc_id"),
        "other_doc_id_columns": list(
            (getattr(run, "column_candidates", None) or {}).get("doc_id", [])
        ),
        "problem": problem,
    }


def coverage_message(report: dict, run_name: str) -> str | None:
    """The one-line warning for a report's problem (None when there is none).

    >>> coverage_message({"problem": "no_shared_query", "run_queries": 3, "qrels_queries": 5}, "bm25")
    'bm25: the run shares no query with the qrels (3 run queries, 5 qrels queries): nothing is evaluated. Check that both use the same query ids'
    """
    problem = report.get("problem")
    if problem is None:
        return None
    if problem == "empty_run":
        return (
            f"{run_name}: the run is empty: every qrels query is missing from it (skipped, or "
            "scored 0 with missing_queries='zero', trec_eval's -c)"
        )
    if problem == "no_shared_query":
        return (
            f"{run_name}: the run shares no query with the qrels ({report['run_queries']:,} run "
            f"queries, {report['qrels_queries']:,} qrels queries): nothing is evaluated. "
            "Check that both use the same query ids"
        )
    if problem == "none_judged":
        text = (
            f"{run_name}: none of the {report['retrieved']:,} retrieved documents of the "
            f"{report['shared_queries']:,} shared queries is judged: every measure is 0"
        )
    else:
        text = (
            f"{run_name}: only {report['queries_with_judged']:,} of {report['shared_queries']:,} "
            f"shared queries have a judged document retrieved ({report['judged']:,} of "
            f"{report['retrieved']:,} retrieved documents are judged)"
        )
    column, others = report.get("doc_id_column"), report.get("other_doc_id_columns") or []
    if (report.get("doc_ids_in_qrels") or 0) > 0.5:
        text += (
            f". {report['doc_ids_in_qrels']:.0%} of its document ids are judged under other "
            "queries: check the query ids"
        )
    elif column:
        text += f". Document ids were read from column {column!r}"
        if others:
            text += " (the table also has " + ", ".join(repr(c) for c in others) + ")"
        text += ". " + column_hint("doc_id")
    else:
        text += ". Check that the run and the qrels use the same document ids"
    return text


def warn_coverage(
    qrels: Qrels, run: Run, *, min_share: float = MIN_SHARE, stacklevel: int = 2
) -> dict:
    """:func:`coverage_report`, with a :class:`CoverageWarning` when it finds a problem.

    Examples
    --------
    >>> import warnings
    >>> from metrics_core.io import read_qrels, read_run
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     report = warn_coverage(read_qrels({"q1": {"d1": 1}}), read_run({"q1": {"x": 1.0}}, name="r"))
    >>> report["problem"], caught[0].category.__name__
    ('none_judged', 'CoverageWarning')
    """
    report = coverage_report(qrels, run, min_share=min_share)
    message = coverage_message(report, run.name)
    if message:
        warnings.warn(message, CoverageWarning, stacklevel=stacklevel + 1)
    return report
