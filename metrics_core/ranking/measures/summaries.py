"""From per-query values to one number: compute a measure, aggregate it as trec_eval does."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.ranking.definition import MeasureSpec
from metrics_core.ranking.kernels import GainOverflow, locate_gain_overflow
from metrics_core.ranking.measures.common import MIN_GEO_MEAN
from metrics_core.ranking.ranked_lists import RankedLists
from metrics_core.ranking.strings import string_order


def compute(R: RankedLists, spec: MeasureSpec, conv: Conventions) -> np.ndarray:
    """Per-query values of one measure (float64, one per query of ``R``). A label too large
    for ``gain=exp`` is an InputError naming the qrels file and line."""
    try:
        return spec.definition.compute(R, spec, conv)
    except GainOverflow as exc:
        raise locate_gain_overflow(exc, R) from None


def aggregate(values: np.ndarray, spec: MeasureSpec, order=None) -> float:
    """Summary over queries: mean, sum (counts), geometric mean (GMAP) or NaN-skipping mean.

    ``order`` (optional): the order in which trec_eval visits the queries (query ids
    sorted as strings). Sums are added one query after another in that order and then
    divided, as trec_eval does, so the mean equals trec_eval's to the last bit.
    """
    how = spec.definition.aggregate
    if len(values) == 0:
        return 0.0 if how == "sum" else float("nan")
    values = np.asarray(values, dtype=np.float64)
    if order is not None:
        values = values[order]
    if how == "sum":
        return float(np.sum(values))
    if how == "gmean":
        # the C library's log and exp, as trec_eval calls them (numpy's vectorised
        # versions can differ in the last bit); one call per query, only here
        logs = np.array([math.log(v) for v in np.maximum(values, MIN_GEO_MEAN).tolist()])
        return math.exp(_sequential_sum(logs) / len(logs))
    if how == "nanmean":
        ok = ~np.isnan(values)
        return (
            float(_sequential_sum(values[ok]) / np.count_nonzero(ok)) if ok.any() else float("nan")
        )
    return float(_sequential_sum(values) / len(values))


def trec_order(R: RankedLists) -> np.ndarray:
    """Indexes of the evaluated queries in trec_eval's order (query ids as strings)."""
    return R.memo(("trec_order",), lambda: string_order(R.query_ids))


def missing_mask(R: RankedLists) -> np.ndarray:
    """True for the evaluated queries that are absent from the run (scored as empty)."""
    return R.memo(("missing",), lambda: _missing(R))


def _missing(R: RankedLists) -> np.ndarray:
    gone = R.diagnostics.missing_queries
    if gone and R.n_queries:
        ids = pa.array(list(R.query_ids), type=pa.string())
        return pc.is_in(ids, value_set=pa.array(gone, type=pa.string())).to_numpy(
            zero_copy_only=False
        )
    return np.zeros(R.n_queries, dtype=bool)


def summarize(R: RankedLists, spec: MeasureSpec, values: np.ndarray, conv: Conventions) -> float:
    """The summary over queries that trec_eval prints as ``all`` (see :func:`summary`)."""
    return summary(
        values,
        spec,
        R.query_ids,
        conv,
        missing=missing_mask(R),
        positive_labels=int(np.count_nonzero(R.qrels_label > 0)),
        order=trec_order(R),
    )


def summary(
    values: np.ndarray,
    spec: MeasureSpec,
    query_ids,
    conv: Conventions,
    missing=None,
    positive_labels: int | None = None,
    order=None,
) -> float:
    """The summary over queries that trec_eval prints as ``all``.

    Queries are added in trec_eval's order (query ids as strings). Under
    ``compat=trec_eval9`` with missing queries scored 0 (``-c``), trec_eval 9.0.8
    evaluates only the queries in the run and patches the average: the geometric mean adds
    ``log(1e-5)`` once per missing query (``missing``: a mask over ``query_ids``) after
    the others, and the summed ``num_rel`` counts every judgement with a label above 0
    (``positive_labels``), whatever the relevance threshold (trec_eval's ``-c`` rule, 9
    and 10; under the default compat RankLab's sum stays the sum of the per-query values).
    """
    if order is None:
        order = string_order(query_ids)
    if conv.compat != "trec_eval9" or conv.missing_queries != "zero":
        return aggregate(values, spec, order)
    if spec.family == "NumRel" and positive_labels is not None:
        return float(positive_labels)
    miss = np.zeros(len(values), dtype=bool) if missing is None else np.asarray(missing, dtype=bool)
    if not miss.any():
        return aggregate(values, spec, order)
    how = spec.definition.aggregate
    present = order[~miss[order]]
    if how == "gmean":
        v = np.maximum(np.asarray(values, dtype=np.float64)[present], MIN_GEO_MEAN).tolist()
        total = _sequential_sum(np.array([math.log(x) for x in v]))
        total += int(miss.sum()) * math.log(MIN_GEO_MEAN)
        return math.exp(total / len(values))
    return aggregate(values, spec, order)


def _sequential_sum(values: np.ndarray) -> float:
    """values[0] + values[1] + ... left to right (``np.sum`` adds pairwise)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0
