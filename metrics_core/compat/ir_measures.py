"""ir_measures' interface on RankLab's engine: ``calc_aggregate`` and ``iter_calc``.

>>> from metrics_core.compat import ir_measures
>>> qrels = {"q1": {"d1": 1, "d3": 2}, "q2": {"d1": 1}}
>>> run = {"q1": {"d1": 1.0, "d2": 2.0}}
>>> ir_measures.calc_aggregate(["nDCG@10", "P@1", "NumRel"], qrels, run)
{'nDCG@10': 0.11990623328406573, 'P@1': 0.0, 'NumRel': 2.0}
>>> [tuple(m) for m in ir_measures.iter_calc(["P@1"], qrels, run)]
[('q1', 'P@1', 0.0), ('q2', 'P@1', 0.0)]

Measures are ir_measures' names (RankLab's own syntax: ``nDCG@10``, ``P(rel=2)@5``, ``AP``,
``RR@10``, ``Judged@10``), as strings or as ir_measures measure objects (anything whose
``str()`` is such a name; ir_measures itself is not imported). Results are keyed by what
was passed.

ir_measures' conventions, reproduced: trec_eval 9's numbers (ir_measures computes most
measures through pytrec_eval: ``compat="trec_eval9"``); every qrels query is evaluated, a
query the run does not answer scores 0 on every measure (``NumRel`` included) and counts in
the mean; run queries without judgements are ignored; counts (``NumRet``, ``NumRel``,
``NumRelRet``, ``NumQ``) sum over queries, the rest are means; ``Judged@k`` divides by the
number of documents in the top k (min(k, retrieved)), not by k, and ranks equal scores by
document id ascending (``ties="docid_asc"``) on float64 scores.
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Iterable, Iterator

import numpy as np

__all__ = ["Metric", "calc_aggregate", "iter_calc", "calc", "ranklab_name"]

#: a per-query value, as ir_measures yields it
Metric = namedtuple("Metric", ["query_id", "measure", "value"])


def _frame(data, value_name: str):
    """ir_measures' inputs (dict of dicts, DataFrame, iterable of records) -> what the
    readers take (a dict, or a DataFrame with query_id / doc_id / value columns)."""
    if isinstance(data, dict):
        from metrics_core.compat.pytrec_eval import columns_from_mapping

        return columns_from_mapping(data, "run" if value_name == "score" else "qrels")
    if hasattr(data, "columns"):
        return data
    import pandas as pd

    rows = [(r.query_id, r.doc_id, getattr(r, value_name)) if hasattr(r, "query_id") else tuple(r)[:3]
            for r in data]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value_name])


def ranklab_name(measure) -> str:
    """RankLab's name of an ir_measures measure (object or string): the same text, except
    ir_measures' ``NumRet(rel=r)``, which counts relevant retrieved documents.

    >>> ranklab_name("NumRet(rel=1)"), ranklab_name("nDCG@10")
    ('NumRelRet(rel=1)', 'nDCG@10')
    """
    text = str(measure)
    m = re.fullmatch(r"\s*NumRet\((rel=[^)]*)\)\s*", text)
    return f"NumRelRet({m.group(1)})" if m else text


def _evaluate(measures, qrels, run):
    import metrics_core as mc

    items = list(measures)
    specs = [mc.parse_measure(ranklab_name(m)) for m in items]
    names = list(dict.fromkeys(s.name for s in specs if s.family != "Judged")) or ["NumQ"]
    q, r = _frame(qrels, "relevance"), _frame(run, "score")
    ev = mc.evaluate(q, r, names, compat="trec_eval9", missing_queries="zero")
    judged = list(dict.fromkeys(s.name for s in specs if s.family == "Judged"))
    if judged:  # ir_measures ranks for Judged itself: float64 scores, equal ones by doc id ascending
        ev_judged = mc.evaluate(q, r, judged, missing_queries="zero", ties="docid_asc")
        return items, specs, ev, ev_judged.per_query.reindex(ev.per_query.index)
    return items, specs, ev, None


def _columns(specs, ev, judged_frame) -> list[np.ndarray]:
    """Per-query values under ir_measures' conventions, in ``ev.per_query``'s order."""
    frame = ev.per_query
    unanswered = np.asarray(frame.index.isin(list(ev.diagnostics.get("missing_queries") or ())), dtype=bool)
    out = []
    for spec in specs:
        if spec.family == "Judged":  # judged share of the top min(k, retrieved): the registry's own
            values = judged_frame[spec.name].to_numpy(dtype=np.float64).copy()
        else:
            values = frame[spec.name].to_numpy(dtype=np.float64).copy()
        values[unanswered] = 0.0
        out.append(values)
    return out


def iter_calc(measures: Iterable, qrels, run) -> Iterator[Metric]:
    """Per-query values: ``Metric(query_id, measure, value)`` for every qrels query and
    measure (query by query, measures in the order given)."""
    items, specs, ev, judged = _evaluate(measures, qrels, run)
    columns = _columns(specs, ev, judged)
    matrix = np.column_stack(columns).tolist() if columns else []
    for qid, row in zip(ev.per_query.index, matrix, strict=True):
        for item, value in zip(items, row, strict=True):
            yield Metric(str(qid), item, value)


def _aggregate(spec, values: np.ndarray) -> float:
    if spec.definition.aggregate == "sum":
        return float(np.cumsum(values)[-1]) if len(values) else 0.0
    return float(np.cumsum(values)[-1] / len(values)) if len(values) else float("nan")


def calc_aggregate(measures: Iterable, qrels, run) -> dict:
    """Summary of each measure over every qrels query: ``{measure: value}``."""
    items, specs, ev, judged = _evaluate(measures, qrels, run)
    return {item: _aggregate(spec, values)
            for item, spec, values in zip(items, specs, _columns(specs, ev, judged), strict=True)}


def calc(measures: Iterable, qrels, run) -> tuple[dict, dict]:
    """``(aggregate, per_query)``: :func:`calc_aggregate` and ``{query_id: {measure: value}}``."""
    items, specs, ev, judged = _evaluate(measures, qrels, run)
    columns = _columns(specs, ev, judged)
    from metrics_core.compat.shapes import nested_from_columns

    per_query = nested_from_columns(ev.per_query.index, items, columns)
    return {i: _aggregate(s, v) for i, s, v in zip(items, specs, columns, strict=True)}, per_query
