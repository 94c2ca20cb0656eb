"""trec_eval's output, computed by RankLab's engine.

:func:`trec_eval_output` evaluates a qrels file and a run file as ``trec_eval [options]
QRELS RUN`` does and returns what trec_eval 10 (or 9.0.8, ``version=9``) prints, byte for
byte: the measures of the ``-m`` arguments in trec_eval's order (``official`` when none),
its names (``P_5``, ``iprec_at_recall_0.10``, ``utility_2,-1,0,0``), its formats (``%-22s``
names, ``%6.4f`` values, whole counts, ``runid``, ``relstring``), per query with ``-q`` and
the ``all`` summary unless ``-n``. One call of :func:`metrics_core.evaluate` computes every
value; this module only chooses the names and prints.

Queries, as each version treats them (trec_eval's sources, ``trec_eval.c``):

- trec_eval 10 walks the qrels queries in id order: a qrels query absent from the run stops
  it with status 4 (``result qid 'Q' not found in qrels``) unless ``-c``, which scores it
  on an empty ranking; run queries absent from the qrels are ignored.
- trec_eval 9 walks the run queries that have qrels; with ``-c`` the missing ones are not
  printed but count as 0 in the averages.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from metrics_core.compat.trec_measures import Requested, TrecEvalExit, requested
from metrics_core.errors import InputError
from metrics_core.io.coverage import CoverageWarning

__all__ = [
    "TrecEvalOptions",
    "TrecEvalExit",
    "trec_eval_output",
    "last_run_id",
    "relstrings",
    "custom_11pt_avg",
]


@dataclass(frozen=True)
class TrecEvalOptions:
    """trec_eval's options that concern ordinary qrels and runs.

    ``measures`` are the ``-m`` arguments as written (``P.5,10``, ``ndcg_cut.10``,
    ``all_trec``); ``relevance_level`` is ``-l``, ``max_docs`` ``-M``, ``num_docs`` ``-N``,
    ``judged_only`` ``-J``, ``complete`` ``-c``, ``per_query`` ``-q``, ``summary`` is off
    with ``-n``; ``version`` is 10 or 9.
    """

    measures: tuple = ()
    per_query: bool = False
    complete: bool = False
    judged_only: bool = False
    summary: bool = True
    relevance_level: int = 1
    max_docs: int | None = None
    num_docs: int = 0
    version: int = 10


def _line(name: str, qid: str, value: str) -> str:
    return f"{name:<22}\t{qid}\t{value}\n"


def last_run_id(data: bytes) -> str:
    """The run tag of the last content line (what trec_eval prints as ``runid``).

    >>> last_run_id(b"q1 Q0 d1 1 2.0 first\\nq1 Q0 d2 2 1.0 second\\n\\n# note\\n")
    'second'
    """
    for raw in reversed(data.splitlines()):
        line = raw.strip()
        if line and not line.startswith(b"#"):
            parts = line.split()
            return parts[5].decode("utf-8", "replace") if len(parts) > 5 else ""
    return ""


def _read_tail(path: str, size: int = 1 << 16) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        while True:
            start = max(0, end - size)
            fh.seek(start)
            chunk = fh.read(end - start)
            if start == 0 or last_run_id(chunk.split(b"\n", 1)[-1]) or size > end:
                return chunk if start == 0 else chunk.split(b"\n", 1)[-1]
            size *= 4


def relstrings(qrels, run, conv, length: int, queries) -> dict[str, str]:
    """trec_eval's ``relstring``: the labels of the first ``length`` ranked documents of
    each query, one character each (``0``-``9``; ``>`` above 9; ``-`` not in the qrels;
    ``.`` in the qrels with a negative label), after ``-M`` and ``-J``.
    The ranking is trec_eval's: score descending (float32 under trec_eval 9), then
    document id descending. ``queries`` absent from the run get an empty string.
    """
    import pandas as pd

    scores = run.scores.astype(np.float32 if conv.compat == "trec_eval9" else np.float64)
    if conv.judged_only:
        rows = np.arange(len(scores))
    else:  # only the first min(length, depth) ranks matter: keep their scores and ties
        rows = np.flatnonzero(_top_candidates(run, scores, min(length, conv.depth or length)))
    frame = pd.DataFrame(
        {
            "query_id": _strings(run.qid.take(rows)),
            "doc_id": _strings(run.docid.take(rows)),
            "score": scores[rows],
        }
    )
    frame = frame.sort_values(
        ["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable"
    )
    if conv.depth is not None:
        frame = frame[frame.groupby("query_id", sort=False).cumcount() < conv.depth]
    labels = qrels.to_frame().rename(columns={qrels.to_frame().columns[2]: "label"})
    labels["label"] = np.trunc(labels["label"].astype(float))
    labels.loc[
        labels["label"] < 0, "label"
    ] = -2.0  # judged with a negative label: "in the pool, unjudged"
    frame = frame.merge(
        labels[["query_id", "doc_id", "label"]], on=["query_id", "doc_id"], how="left"
    )
    frame["label"] = frame["label"].fillna(-1.0)
    if conv.judged_only:
        frame = frame[frame["label"] >= 0]
    frame = frame[frame.groupby("query_id", sort=False).cumcount() < length]
    lab = frame["label"].to_numpy()
    chars = np.where(
        lab > 9,
        ">",
        np.where(lab >= 0, lab.clip(0, 9).astype(int).astype(str), np.where(lab == -1, "-", ".")),
    )
    text = "".join(chars.tolist())
    qids = frame["query_id"].to_numpy()
    starts = (
        np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]])
        if len(qids)
        else np.zeros(0, dtype=np.int64)
    )
    ends = np.r_[starts[1:], len(qids)] if len(qids) else starts
    joined = {qids[a]: text[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)}
    return {q: joined.get(q, "") for q in queries}


def _strings(values) -> list:
    """Arrow strings (plain or dictionary-encoded, chunked or not) as a Python list."""
    import pyarrow as pa

    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    return values.to_pylist()


def _top_candidates(run, scores: np.ndarray, n: int) -> np.ndarray:
    """Rows whose score reaches their query's n-th highest score (the first n ranks, and
    every document tied with the n-th): a numeric sort, no string comparison."""
    import pyarrow as pa
    import pyarrow.compute as pc

    qid = run.qid.combine_chunks() if isinstance(run.qid, pa.ChunkedArray) else run.qid
    if not pa.types.is_dictionary(qid.type):
        qid = pc.dictionary_encode(qid)
    codes = qid.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    scores = scores.astype(np.float64)
    by_score = np.argsort(-scores, kind="stable")
    order = by_score[np.argsort(codes[by_score], kind="stable")]
    sizes = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    nth = scores[order][starts + np.minimum(n, sizes) - 1] if n > 0 else np.full(len(sizes), np.inf)
    return scores >= nth[codes]


def _conventions(opt: TrecEvalOptions) -> dict:
    return {
        "relevance_threshold": opt.relevance_level,
        "depth": opt.max_docs,
        "judged_only": opt.judged_only,
        "num_docs": opt.num_docs,
        "missing_queries": "zero" if opt.complete else "skip",
        "compat": "trec_eval9" if opt.version == 9 else "trec_eval10",
    }


def custom_11pt_avg(req: Requested, frame) -> np.ndarray:
    """11pt_avg at the given recall levels: their interpolated precisions, added from the
    last level given to the first (trec_eval's order), over the number of levels.
    ``frame``: per-query values by measure name (a DataFrame or a dict of arrays)."""
    total: np.ndarray | float = 0.0
    for name in reversed(req.ranklab):
        total = total + np.asarray(frame[name], dtype=np.float64)
    return np.asarray(total, dtype=np.float64) / len(req.ranklab)


def sorted_table(ev) -> tuple[list[str], dict[str, np.ndarray]]:
    """The evaluated query ids sorted by string (trec_eval's order, :attr:`per_query`'s
    index) and each measure's values in that order, without building a DataFrame (pandas
    alone takes about 0.2 s to import: the command line's means never need it)."""
    ids = [str(q) for q in ev.evaluated_ids]
    order = sorted(range(len(ids)), key=ids.__getitem__)
    values = {m: np.asarray(v, dtype=np.float64)[order] for m, v in ev.values.items()}
    return [ids[i] for i in order], values


def _columns(reqs, ev, opt: TrecEvalOptions, table) -> dict[str, tuple[np.ndarray, float]]:
    """printed name -> (per-query values in :func:`sorted_table`'s order, summary value)."""
    index, frame = table
    out = {}
    for req in reqs:
        if req.measure.kind in ("runid", "relstring"):
            continue
        if req.measure.name == "11pt_avg" and req.params:
            out[req.printed[0]] = _with_mean(custom_11pt_avg(req, frame))
            continue
        for printed, name in zip(req.printed, req.ranklab, strict=True):
            canonical = _canonical(name)
            out[printed] = (frame[canonical], ev.aggregate[canonical])
            if req.measure.name == "utility":
                out[printed] = _with_mean(_utility(name, ev, opt, table))
            if printed == "num_rel" and opt.complete:
                # with -c, trec_eval's summary counts every qrels label > 0, whatever -l says
                out[printed] = (out[printed][0], ev.aggregate["NumRel(rel=1)"])
            if (
                opt.version == 10
                and opt.complete
                and printed.startswith(("utility_", "rbp_resid_"))
            ):
                out[printed] = _with_mean(_bogus(printed, name, out[printed][0], ev, opt, table))
    return out


def _with_mean(values: np.ndarray) -> tuple[np.ndarray, float]:
    """Values and their mean, added in query order as trec_eval adds them."""
    return values, (float(np.cumsum(values)[-1] / len(values)) if len(values) else 0.0)


def _missing_rows(ev, index: list[str]) -> np.ndarray:
    missing = set(ev.diagnostics.get("missing_queries") or ())
    return np.fromiter((q in missing for q in index), dtype=bool, count=len(index))


def _utility(name: str, ev, opt: TrecEvalOptions, table) -> np.ndarray:
    """trec_eval's utility from the counts, in its order of operations:
    a relret + b (ret - relret) + c (rel - relret) + d (N + relret - ret - rel). A query
    left with no document by -J still counts its missed relevant ones."""
    index, frame = table
    a, b, c, d = (_spec(name).param(k, ev.conventions) for k in "abcd")
    ret, relret, rel = (frame[n] for n in ("NumRet", "NumRelRet", "NumRel"))
    values = (
        a * relret
        + b * (ret - relret)
        + c * (rel - relret)
        + d * (opt.num_docs + relret - ret - rel)
    )
    values[_missing_rows(ev, index)] = 0.0
    return values


def _bogus(
    printed: str, name: str, values: np.ndarray, ev, opt: TrecEvalOptions, table
) -> np.ndarray:
    """trec_eval 10 with -c scores a missing query on a one-document ranking (an unjudged
    document) and then zeroes ``utility`` and ``rbp_resid``, but only under those exact
    names: with parameters (``utility_2,-1,0,1``) the one-document values stay."""
    index, frame = table
    rows = _missing_rows(ev, index)
    if not rows.any():
        return values
    values = values.astype(np.float64).copy()
    spec = _spec(name)
    retrieved = 0.0 if opt.judged_only else 1.0
    if printed.startswith("utility_"):
        a, b, c, d = (spec.param(k, ev.conventions) for k in "abcd")
        num_rel = frame["NumRel"][rows]
        values[rows] = (
            a * 0.0
            + b * (retrieved - 0.0)
            + c * (num_rel - 0.0)
            + d * (opt.num_docs + 0.0 - retrieved - num_rel)
        )
    elif retrieved:
        p = spec.param("p", ev.conventions)
        values[rows] = 1.0 * p + (1 - p) * 1.0
    return values


def _spec(name: str):
    from metrics_core.ranking.registry import parse_measure

    return parse_measure(name)


def _canonical(name: str) -> str:
    return _spec(name).name


def _evaluate(qrels_source, run_source, reqs, opt):
    import metrics_core as mc

    qrels_source = (
        qrels_source if isinstance(qrels_source, mc.Qrels) else mc.read_qrels(qrels_source)
    )
    if any(r.measure.kind == "relstring" for r in reqs) and opt.per_query:  # read once, used twice
        run_source = run_source if isinstance(run_source, mc.Run) else mc.read_run(run_source)

    names = []
    for req in reqs:
        names += [n for n in req.ranklab if n is not None]
    if opt.complete and any(r.measure.name == "num_rel" for r in reqs):
        names.append("NumRel(rel=1)")
    if any(r.measure.name == "utility" for r in reqs):
        names += ["NumRet", "NumRelRet", "NumRel"]
    names = list(dict.fromkeys(names)) or ["NumRet"]
    with warnings.catch_warnings():  # trec_eval's own words and status say it (no common query)
        warnings.simplefilter("ignore", CoverageWarning)
        ev = mc.evaluate(qrels_source, run_source, names, **_conventions(opt))
    return ev, qrels_source, run_source


def trec_eval_output(
    qrels_source, run_source, options: TrecEvalOptions, *, run_bytes: bytes | None = None
):
    """What trec_eval prints for these inputs and options.

    Returns ``(stdout_text, status, stderr_line)``: status 0 and no stderr line on success;
    otherwise trec_eval's exit status and its one-line message (stdout then holds what
    trec_eval had printed before stopping).
    Raises :class:`~metrics_core.errors.InputError` for unreadable input.
    """
    try:
        reqs = requested(list(options.measures), options.version)
    except TrecEvalExit as exc:
        return "", exc.status, exc.message
    try:
        ev, qrels_read, run_read = _evaluate(qrels_source, run_source, reqs, options)
    except InputError as exc:
        if "no quer" in str(exc).lower() and "common" in str(exc).lower():
            return "", 7, "trec_eval: No queries with both results and relevance info"
        raise
    missing = set(ev.diagnostics.get("missing_queries") or ())
    table = sorted_table(ev)
    index = table[0]
    shown, stop = _walk(index, missing, _all_negative(qrels_read), reqs, options)
    if stop is None and (not index or not shown):
        return "", 7, "trec_eval: No queries with both results and relevance info"
    columns = _columns(reqs, ev, options, table)
    text = (
        _per_query(reqs, ev, columns, shown, index, qrels_read, run_read, options)
        if options.per_query
        else []
    )
    if stop is not None:
        return "".join(text), 4, stop
    if options.summary:
        text += _summary(reqs, columns, run_source, run_bytes)
    return "".join(text), 0, None


def _all_negative(qrels) -> set[str]:
    """Queries whose every judgement is negative (one Arrow group-by, no pandas)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    qid = qrels.qid
    if pa.types.is_dictionary(qid.type):
        qid = qid.cast(qid.type.value_type)
    labels = np.trunc(np.asarray(qrels.relevance, dtype=np.float64))
    top = pa.table({"q": qid, "label": labels}).group_by("q").aggregate([("label", "max")])
    return set(top.column("q").filter(pc.less(top.column("label_max"), 0)).to_pylist())


def _walk(index: list[str], missing: set, negative: set, reqs, opt: TrecEvalOptions):
    """The queries trec_eval prints, in its order, and the message it stops with (or None).

    trec_eval 10 walks the qrels queries: one the run does not answer stops it unless -c.
    trec_eval 9 walks the run queries that have judgements. Both stop when the first query
    they rank has only negative judgements (its table of relevance levels is then never
    allocated), naming the first measure that ranks documents; later such queries are
    measured (a label of -2 or below there makes trec_eval crash; RankLab measures it)."""
    if opt.version == 10:
        order = sorted(set(index) | missing)
    else:
        order = [q for q in index if q not in missing]
    ranking = next((r.measure.name for r in reqs if r.measure.name not in ("runid", "num_q")), None)
    shown: list[str] = []
    for q in order:
        if q in missing and opt.version == 10 and not opt.complete:
            return shown, f"trec_eval: result qid '{q}' not found in qrels"
        if q in negative and not shown and ranking is not None:
            return shown, f"trec_eval: Can't calculate measure '{ranking}'"
        shown.append(q)
    return shown, None


def _format(req: Requested, value) -> str:
    if req.measure.kind == "long":
        return str(int(value))
    value = float(value)
    if value != value:  # NaN: trec_eval's 0/0 is the x86 default NaN, printed "-nan"
        return "  -nan"
    return f"{value:6.4f}"


def _per_query(reqs, ev, columns, shown, index, qrels_source, run_source, opt) -> list[str]:
    position = {q: i for i, q in enumerate(index)}
    rows = [position[q] for q in shown]
    rel = None
    per_measure = []
    for req in reqs:
        if req.measure.summary_only or req.measure.kind == "runid":
            continue
        if req.measure.kind == "relstring":
            rel = _relstrings(
                qrels_source, run_source, ev, req.params[0], shown, req.printed[0] != "relstring"
            )
            per_measure.append([_line(req.printed[0], q, f"'{rel[q]}'") for q in shown])
            continue
        for printed in req.printed:
            values = columns[printed][0]
            per_measure.append(
                [
                    _line(printed, q, _format(req, values[i]))
                    for q, i in zip(shown, rows, strict=True)
                ]
            )
    return ["".join(parts) for parts in zip(*per_measure, strict=True)] if per_measure else []


def _relstrings(qrels_source, run_source, ev, length, shown, named: bool):
    import metrics_core as mc

    qrels = qrels_source if isinstance(qrels_source, mc.Qrels) else mc.read_qrels(qrels_source)
    run = run_source if isinstance(run_source, mc.Run) else mc.read_run(run_source)
    missing = set(ev.diagnostics.get("missing_queries") or ())
    out = relstrings(qrels, run, ev.conventions, length, shown)
    # a missing query (-c): trec_eval 10 clears the string only under the name "relstring";
    # with a length it keeps the one unjudged document of its stand-in ranking
    bogus = "-" if (named and length >= 1 and not ev.conventions.judged_only) else ""
    return {q: (bogus if q in missing else s) for q, s in out.items()}


def _summary(reqs, columns, run_source, run_bytes) -> list[str]:
    out = []
    for req in reqs:
        kind = req.measure.kind
        if kind == "relstring":
            continue
        if kind == "runid":
            data = run_bytes if run_bytes is not None else _read_tail(os.fspath(run_source))
            out.append(_line("runid", "all", last_run_id(data)))
            continue
        for printed in req.printed:
            out.append(_line(printed, "all", _format(req, columns[printed][1])))
    return out
