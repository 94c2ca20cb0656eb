"""What changes between trec_eval 10 and trec_eval 9 conventions, and why.

pytrec_eval and ir_measures wrap trec_eval 9.0.8, so papers that used them report
trec_eval 9's numbers. :func:`compare_modes` evaluates a run under both
(``compat="trec_eval10"`` and ``compat="trec_eval9"``) and lists the queries and measures
whose values differ, each with its cause:

* ``float32 near-tie``: trec_eval 9 holds scores as C floats, so scores that differ only
  beyond float32's precision tie, and the tie rule (document id descending) reorders them;
* ``recall-level rounding``: IPrec@r and IPrecAvg turn the recall level r into
  round(r R) relevant documents in trec_eval 10, floor(r R + 0.9) in trec_eval 9;
* ``missing-query average``: with missing queries scored 0 (``-c``), trec_eval 9 averages
  geometric means and sums ``num_rel`` its own way (only the summary differs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run
from metrics_core.io import read_qrels, read_run
from metrics_core.ranking.ranked import rank
from metrics_core.ranking.registry import DEFAULT_MEASURES, parse_measures, rank_cutoffs

#: what compare-modes evaluates when no measure is named
MODES_MEASURES = DEFAULT_MEASURES + ("GMAP", "IPrec@0.1", "IPrec@0.5", "IPrecAvg")

FLOAT32 = "float32 near-tie"
ROUNDING = "recall-level rounding"
AVERAGE = "missing-query average"


def _reordered_queries(r10, r9) -> np.ndarray:
    """Per query (r10's order): whether the ranking differs between the two modes."""
    changed = np.zeros(r10.n_queries, dtype=bool)
    a, b = r10.run_rows(), r9.run_rows()
    if len(a) and len(a) == len(b):
        diff = a != b
        changed[np.unique(r10.seg[diff])] = True
    return changed


def _rounding_differs(spec, num_rel: np.ndarray) -> np.ndarray:
    """Per query: whether trec_eval 9's recall-level rounding gives another c."""
    levels = (
        [spec.cutoff]
        if spec.family == "IPrec"
        else [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    )
    out = np.zeros(len(num_rel), dtype=bool)
    r = num_rel.astype(np.float64)
    for x in levels:
        out |= np.floor(x * r + 0.5) != np.floor(x * r + 0.9)
    return out


def compare_modes(
    qrels, run, measures=MODES_MEASURES, conventions: Conventions | None = None
) -> dict:
    """Per query and measure, the values under trec_eval 10 and trec_eval 9 conventions
    where they differ, with the causes; the same for the summaries.

    Returns
    -------
    dict
        ``{"name", "queries", "differences": [{"query", "measure", "trec_eval10",
        "trec_eval9", "why"}], "aggregate": {measure: {"trec_eval10", "trec_eval9",
        "why"}}, "summary": {"queries_differing", "values_differing", "by_cause",
        "reordered_queries"}}``.
    """
    conv = conventions or Conventions()
    specs = parse_measures(measures)
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    r = run if isinstance(run, Run) else read_run(run)
    c10, c9 = conv.replace(compat="trec_eval10"), conv.replace(compat="trec_eval9")
    ranking10 = rank(q, r, c10, cutoffs=rank_cutoffs(specs))
    ranking9 = rank(q, r, c9, cutoffs=rank_cutoffs(specs))
    e10, e9 = ranking10.evaluate(specs), ranking9.evaluate(specs)
    r10, r9 = ranking10.lists, ranking9.lists
    ids = r10.query_ids
    reordered = _reordered_queries(r10, r9)
    cols10, cols9 = e10.values, e9.values
    diffs: list[dict[str, Any]] = []
    differing: set[str] = set()
    by_cause: dict[str, int] = {}
    for spec in specs:
        a, b = np.asarray(cols10[spec.name]), np.asarray(cols9[spec.name])
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        rounding = (
            _rounding_differs(spec, r10.num_rel(float(spec.param("rel", c10))))
            if spec.family in ("IPrec", "IPrecAvg")
            else np.zeros(len(ids), dtype=bool)
        )
        for i in np.flatnonzero(~same):
            why = [w for w, hit in ((FLOAT32, reordered[i]), (ROUNDING, rounding[i])) if hit]
            diffs.append(
                {
                    "query": ids[i],
                    "measure": spec.name,
                    "trec_eval10": float(a[i]),
                    "trec_eval9": float(b[i]),
                    "why": why,
                }
            )
            differing.add(ids[i])
            for w in why:
                by_cause[w] = by_cause.get(w, 0) + 1
    aggregate = {}
    missing = conv.missing_queries == "zero" and bool(r10.diagnostics.missing_queries)
    for spec in specs:
        x, y = e10.aggregate[spec.name], e9.aggregate[spec.name]
        if x == y or (np.isnan(x) and np.isnan(y)):
            continue
        why = sorted({w for d in diffs if d["measure"] == spec.name for w in d["why"]})
        if missing and (spec.definition.aggregate == "gmean" or spec.family == "NumRel"):
            why.append(AVERAGE)
        aggregate[spec.name] = {"trec_eval10": x, "trec_eval9": y, "why": why}
    diffs.sort(key=lambda d: (d["query"], [s.name for s in specs].index(d["measure"])))
    return {
        "name": r.name,
        "queries": len(ids),
        "differences": diffs,
        "aggregate": aggregate,
        "summary": {
            "queries_differing": len(differing),
            "values_differing": len(diffs),
            "by_cause": by_cause,
            "reordered_queries": int(reordered.sum()),
        },
    }
