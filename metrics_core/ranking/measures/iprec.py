"""Interpolated precision at a recall level (trec_eval iprec_at_recall_x)."""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import measure
from metrics_core.ranking.measures.common import (
    IIR,
    TREC_EVAL,
    shared_example,
    threshold_of,
)
from metrics_core.ranking.measures.summaries import missing_mask


@measure(
    "IPrec",
    N_("interpolated precision at a recall level"),
    better="higher",
    cutoff="fraction",
    params=("rel", "rounding"),
    trec=("iprec_at_recall_{k}",),
    formula=r"IPrec@r = \max_{i:\,R@i \ge r} P@i",
    edge_cases=(
        N_(
            "The level becomes c = round(r R) relevant documents (trec_eval 10); "
            "rounding=trec9 takes floor(r R + 0.9) as trec_eval 9 and pytrec_eval do."
        ),
        N_("Fewer than c relevant retrieved: 0."),
    ),
    reference=(IIR, N_("(section 8.4)."), TREC_EVAL.format("iprec_at_recall")),
    example=shared_example(
        "IPrec@0.5",
        2 / 3,
        N_(
            "c = round(1.5) = 2 relevant: the best precision from the "
            "second relevant document on is 2/3."
        ),
    ),
    common=("IPrec@0.1",),
    perfect=1.0,
)
def interpolated_precision(R, spec, conv):
    """IPrec@r: the highest precision at any rank whose recall is at least r.

    As trec_eval's iprec_at_recall: the level becomes c = round(r * R) relevant
    documents (half away from zero, trec_eval 10); the value is max over ranks at or
    below the c-th relevant document of P@i; 0 when fewer than c relevant are retrieved.
    ``rounding=trec9`` uses trec_eval 9's c = floor(r * R + 0.9) (what pytrec_eval
    computes).
    """
    thr = threshold_of(spec, conv)
    rows = R.relevant_rows(thr)
    num_rel = R.num_rel(thr)
    out = np.zeros(R.n_queries, dtype=np.float64)
    # trec_eval 10 rounds r * R to the nearest whole number (lround); trec_eval 9 and
    # earlier -- and so pytrec_eval -- took (long)(r * R + 0.9)
    bump = 0.9 if _rounding(spec, conv) == "trec9" else 0.5
    c = np.floor(spec.cutoff * num_rel + bump).astype(np.int64)
    if not len(rows):
        return _iprec_empty(R, c, out, conv)
    suffix, nrr, first_row = _precision_suffix_max(R, thr)
    idx = first_row + np.maximum(c, 1) - 1
    ok = (nrr > 0) & (c <= nrr)
    out[ok] = suffix[idx[ok]]
    return _iprec_empty(R, c, out, conv)


def _precision_suffix_max(R, thr: float):
    """Per relevant row (in rank order), the highest precision at it or any relevant row
    below it in its query; with each query's number of relevant rows retrieved and its
    first one. The same for every recall level: cached on ``R`` (IPrec@r, 11pt_avg)."""
    return R.memo(("precision_suffix_max", thr), lambda: _suffix_max(R, thr))


def _suffix_max(R, thr: float):
    rows = R.relevant_rows(thr)
    seg = R.seg[rows]
    prec = R.count_upto(rows, rows) / R.pos_of(rows)
    # suffix maximum within each query, exactly: max over dense ranks of the values
    uniq, inv = np.unique(prec, return_inverse=True)
    width = len(uniq)
    rev_seg = (R.n_queries - 1 - seg[::-1]).astype(np.int64)
    key_ = rev_seg * width + inv[::-1]
    suffix = uniq[(np.maximum.accumulate(key_) - rev_seg * width)][::-1]
    nrr = np.bincount(seg, minlength=R.n_queries)
    first_row = np.concatenate(([0], np.cumsum(nrr)))[:-1]
    return suffix, nrr, first_row


def _iprec_empty(R, c, out, conv):
    """trec_eval -J: a query left with no retrieved document has precision 0/0, which
    trec_eval carries into the recall levels that round to 0 documents (NaN)."""
    if conv.judged_only:
        empty = (R.counts == 0) & (c == 0)
        if conv.compat == "trec_eval9":
            empty &= ~missing_mask(R)  # trec_eval 9 does not evaluate missing queries
        out[empty] = np.nan
    return out


def _rounding(spec, conv) -> str:
    """IPrec's rounding of r * R: given in the name, else trec_eval 9's under
    ``compat=trec_eval9``, else trec_eval 10's."""
    for k, v in getattr(spec, "params", ()):  # a Derived spec (11-point average) has none
        if k == "rounding":
            return v
    if conv.compat == "trec_eval9":
        return "trec9"
    return spec.param("rounding", conv)
