"""Every ranking measure, for all queries at once.

Each function takes the :class:`~metrics_core.ranking.engine.RankedLists`, the parsed
:class:`~metrics_core.ranking.registry.MeasureSpec` and the
:class:`~metrics_core.conventions.Conventions`, and returns one float64 value per
evaluated query. No loop over queries: reductions are ``np.bincount`` over the rows that
matter (usually only the relevant ones) or O(queries) gathers from one ``cumsum``.

Definitions follow trec_eval 10.0 (Buckley; NIST) under the default conventions, and
seed specifications' variants under named ones. Notation: for a query, ``rel_i`` is 1
when the document at rank ``i`` is relevant (judged label >= threshold), ``R`` the
number of relevant documents in the qrels, ``N`` the judged non-relevant ones.
"""

from __future__ import annotations

import numpy as np

from metrics_core.conventions import Conventions
from metrics_core.ranking.engine import RankedLists
from metrics_core.ranking.registry import MeasureSpec
from metrics_core.stats.aggregate import geometric_mean

MIN_GEO_MEAN = 1e-5  # trec_eval's floor for geometric means


def _safe_div(num, den):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _threshold(spec: MeasureSpec, conv: Conventions) -> float:
    return float(spec.param("rel", conv))


def _hits_top(R: RankedLists, thr: float, k: int | None) -> np.ndarray:
    """Relevant documents among the top k (all retrieved when k is None)."""
    rows = R.relevant_rows(thr)
    if k is None:
        return np.bincount(R.seg[rows], minlength=R.n_queries).astype(np.int64)
    return R.count_top(rows, k)


def precision(R, spec, conv):
    """P@k: relevant in the top k, divided by k (trec_eval P_k).

    ``denom=retrieved`` divides by min(k, retrieved) (seed 003's notebook); a query with
    nothing retrieved scores 0. Without @k: relevant retrieved / retrieved (set_P).
    """
    thr = _threshold(spec, conv)
    k = spec.cutoff
    hits = _hits_top(R, thr, k)
    if k is None:
        return _safe_div(hits, R.counts)
    if spec.param("denom", conv) == "retrieved":
        return _safe_div(hits, np.minimum(R.counts, k))
    return hits / float(k)


def recall(R, spec, conv):
    """R@k: relevant in the top k divided by R; 0 when R = 0 (trec_eval recall_k)."""
    thr = _threshold(spec, conv)
    return _safe_div(_hits_top(R, thr, spec.cutoff), R.num_rel(thr))


def f1(R, spec, conv):
    """F1@k = 2 P@k R@k / (P@k + R@k); 0 when both are 0."""
    p = precision(R, spec, conv)
    r = recall(R, spec, conv)
    return _safe_div(2 * p * r, p + r)


def hits(R, spec, conv):
    """Number of relevant documents in the top k (seed 000's hits_in_top_k)."""
    return _hits_top(R, _threshold(spec, conv), spec.cutoff).astype(np.float64)


def reciprocal_rank(R, spec, conv):
    """RR: 1 / rank of the first relevant document; 0 when none (trec_eval recip_rank).

    RR@k looks only at the top k; with ``miss=k_plus_1`` a query without a relevant
    document in the top k scores 1/(k+1) (seed 001's MRR@K) instead of 0.
    """
    first = R.first_relevant_rank(_threshold(spec, conv))
    k = spec.cutoff
    found = first > 0 if k is None else (first > 0) & (first <= k)
    out = np.where(found, 1.0 / np.maximum(first, 1), 0.0)
    if k is not None and spec.param("miss", conv) == "k_plus_1":
        out = np.where(found, out, 1.0 / (k + 1))
    return out


def first_relevant(R, spec, conv):
    """Rank of the first relevant document; NaN when no relevant document was retrieved."""
    first = R.first_relevant_rank(_threshold(spec, conv)).astype(np.float64)
    first[first == 0] = np.nan
    return first


def success(R, spec, conv):
    """Success@k: 1 when a relevant document is in the top k, else 0 (trec_eval success_k)."""
    first = R.first_relevant_rank(_threshold(spec, conv))
    k = spec.cutoff
    return ((first > 0) & ((first <= k) if k is not None else True)).astype(np.float64)


def average_precision(R, spec, conv):
    """AP@k = (1/norm) * sum over relevant ranks i <= k of P@i (trec_eval map / map_cut_k).

    ``norm`` is R (default), min(R, k) (seed 002's MAP@K) or the number of relevant
    documents retrieved within the cut (seed 003's notebook). 0 when norm is 0.
    """
    thr = _threshold(spec, conv)
    rows = R.relevant_rows(thr)
    k = spec.cutoff
    seg = R.seg[rows]
    pos = R.pos_of(rows)
    cum = R.count_upto(rows, rows)       # relevant at or above each relevant row
    if k is not None:
        keep = pos <= k
        seg, pos, cum = seg[keep], pos[keep], cum[keep]
    total = np.bincount(seg, weights=cum / pos, minlength=R.n_queries)
    rule = spec.param("norm", conv)
    if rule == "rel_retrieved":
        norm = np.bincount(seg, minlength=R.n_queries)
    elif rule == "min_rel_k" and k is not None:
        norm = np.minimum(R.num_rel(thr), k)
    else:
        norm = R.num_rel(thr)
    return _safe_div(total, norm)


_EXP_GAIN_MAX_LABEL = 1023  # 2.0**1024 is inf in float64


def _gain(labels: np.ndarray, kind: str) -> np.ndarray:
    """Gain of positive labels: the label (trec_eval) or 2**label - 1."""
    if kind == "exp":
        if labels.size and labels.max() > _EXP_GAIN_MAX_LABEL:
            from metrics_core.errors import InputError

            raise InputError(f"relevance {labels.max():.17g} is too large for gain=exp: 2**relevance - 1 "
                             f"overflows above {_EXP_GAIN_MAX_LABEL}",
                             hint="Use gain=linear, or relevance grades below 1024")
        return np.exp2(labels) - 1.0
    return labels.astype(np.float64)


def _discount(pos: np.ndarray, kind: str) -> np.ndarray:
    """1/log2(i+1) (trec_eval), or 1/max(1, log2 i) (Jarvelin & Kekalainen's original)."""
    if kind == "jarvelin":
        return 1.0 / np.maximum(1.0, np.log2(pos.astype(np.float64)))
    return 1.0 / np.log2(pos.astype(np.float64) + 1.0)


def _dcg_rows(R: RankedLists, spec, conv):
    # Only positive labels carry gain; negative labels are judged non-relevant (trec_eval).
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    return rows, R.seg[rows], R.pos_of(rows), R.label[rows]


def dcg(R, spec, conv):
    """DCG@k = sum over i <= k of gain(rel_i) * discount(i)."""
    _, seg, pos, lab = _dcg_rows(R, spec, conv)
    k = spec.cutoff
    if k is not None:
        keep = pos <= k
        seg, pos, lab = seg[keep], pos[keep], lab[keep]
    w = _gain(lab, spec.param("gain", conv)) * _discount(pos, spec.param("discount", conv))
    return np.bincount(seg, weights=w, minlength=R.n_queries)


def _ideal_ranking(R: RankedLists, ideal: str):
    """(query, label, rank) of the positive labels in the ideal order: labels descending
    within each query. Cached on ``R``: nDCG@10 and nDCG@100 share one sort."""
    key = ("ideal", ideal)
    if key in R._cache:
        return R._cache[key]
    if ideal == "retrieved":
        # seed 003: the best reordering of the retrieved labels
        jr = R.judged_rows
        rows = jr[R.label[jr] > 0]
        seg, lab = R.seg[rows], R.label[rows]
    else:
        ok = R.qrels_label > 0
        seg, lab = R.qrels_seg[ok], R.qrels_label[ok]
    order = np.lexsort((-lab, seg))
    seg, lab = seg[order], lab[order]
    if len(seg):
        first = np.r_[True, seg[1:] != seg[:-1]]
        start_idx = np.flatnonzero(first)
        group_start = np.repeat(start_idx, np.diff(np.r_[start_idx, len(seg)]))
        pos = np.arange(len(seg)) - group_start + 1
    else:
        pos = np.zeros(0, dtype=np.int64)
    R._cache[key] = (seg, lab, pos)
    return R._cache[key]


def _ideal_dcg(R: RankedLists, spec, conv) -> np.ndarray:
    k = spec.cutoff
    seg, lab, pos = _ideal_ranking(R, spec.param("ideal", conv))
    if k is not None:
        keep = pos <= k
        seg, lab, pos = seg[keep], lab[keep], pos[keep]
    w = _gain(lab, spec.param("gain", conv)) * _discount(pos, spec.param("discount", conv))
    return np.bincount(seg, weights=w, minlength=R.n_queries)


def ndcg(R, spec, conv):
    """nDCG@k = DCG@k / IDCG@k; 0 when IDCG is 0 (trec_eval ndcg / ndcg_cut_k).

    Gains are the labels (``gain=exp``: 2**label - 1); the ideal ranking sorts all judged
    documents of the qrels (``ideal=retrieved``: the retrieved ones), cut at k too.
    """
    return _safe_div(dcg(R, spec, conv), _ideal_dcg(R, spec, conv))


def r_precision(R, spec, conv):
    """Rprec: relevant in the top R, divided by R; 0 when R = 0 (trec_eval Rprec)."""
    thr = _threshold(spec, conv)
    rows = R.relevant_rows(thr)
    num_rel = R.num_rel(thr)
    seg = R.seg[rows]
    within = R.pos_of(rows) <= num_rel[seg]
    return _safe_div(np.bincount(seg[within], minlength=R.n_queries), num_rel)


def bpref(R, spec, conv):
    """bpref = (1/R) * sum over retrieved relevant r of (1 - min(n_r, R) / min(N, R)).

    ``n_r`` counts judged non-relevant documents ranked above r; a term is 1 when
    ``n_r`` = 0. Unjudged documents (and negative labels) are skipped (trec_eval bpref).
    """
    thr = _threshold(spec, conv)
    rows = R.relevant_rows(thr)
    nonrel_above = R.count_upto(R.judged_nonrelevant_rows(thr), rows)
    seg = R.seg[rows]
    num_rel = R.num_rel(thr)
    num_nonrel = R.num_nonrel(thr)
    r_q = num_rel[seg].astype(np.float64)
    denom = np.minimum(num_nonrel[seg], num_rel[seg]).astype(np.float64)
    frac = _safe_div(np.minimum(nonrel_above, r_q), denom)
    term = np.where(nonrel_above > 0, 1.0 - frac, 1.0)
    return _safe_div(np.bincount(seg, weights=term, minlength=R.n_queries), num_rel)


def interpolated_precision(R, spec, conv):
    """IPrec@r: the highest precision at any rank whose recall is at least r.

    As trec_eval's iprec_at_recall: the level becomes c = round(r * R) relevant
    documents (half away from zero, trec_eval 10); the value is max over ranks at or
    below the c-th relevant document of P@i; 0 when fewer than c relevant are retrieved.
    ``rounding=trec9`` uses trec_eval 9's c = floor(r * R + 0.9) (what pytrec_eval
    computes).
    """
    thr = _threshold(spec, conv)
    rows = R.relevant_rows(thr)
    num_rel = R.num_rel(thr)
    out = np.zeros(R.n_queries, dtype=np.float64)
    if not len(rows):
        return out
    seg = R.seg[rows]
    j = R.count_upto(rows, rows)
    prec = j / R.pos_of(rows)
    # suffix maximum of prec within each query, exactly: max over dense ranks of the values
    uniq, inv = np.unique(prec, return_inverse=True)
    width = len(uniq)
    rev_seg = (R.n_queries - 1 - seg[::-1]).astype(np.int64)
    key = rev_seg * width + inv[::-1]
    suffix = uniq[(np.maximum.accumulate(key) - rev_seg * width)][::-1]
    nrr = np.bincount(seg, minlength=R.n_queries)
    first_row = np.concatenate(([0], np.cumsum(nrr)))[:-1]
    # trec_eval 10 rounds r * R to the nearest whole number (lround); trec_eval 9 and
    # earlier -- and so pytrec_eval -- took (long)(r * R + 0.9)
    bump = 0.9 if spec.param("rounding", conv) == "trec9" else 0.5
    c = np.floor(spec.cutoff * num_rel + bump).astype(np.int64)
    idx = first_row + np.maximum(c, 1) - 1
    ok = (nrr > 0) & (c <= nrr)
    out[ok] = suffix[idx[ok]]
    return out


def judged(R, spec, conv):
    """Judged@k: judged documents in the top k, divided by k (negative labels are judged)."""
    return R.count_top(R.judged_rows, spec.cutoff) / float(spec.cutoff)


def num_q(R, spec, conv):
    """1 per evaluated query (summed: the number of queries)."""
    return np.ones(R.n_queries, dtype=np.float64)


def num_ret(R, spec, conv):
    """Documents retrieved (after the depth cut)."""
    return R.counts.astype(np.float64)


def num_rel(R, spec, conv):
    """Relevant documents in the qrels (labels >= threshold; negatives excluded)."""
    return R.num_rel(_threshold(spec, conv)).astype(np.float64)


def num_rel_ret(R, spec, conv):
    """Relevant documents retrieved."""
    return _hits_top(R, _threshold(spec, conv), None).astype(np.float64)


COMPUTE = {
    "P": precision, "R": recall, "F1": f1, "Hits": hits, "RR": reciprocal_rank,
    "FirstRel": first_relevant, "Success": success, "AP": average_precision,
    "GMAP": average_precision, "nDCG": ndcg, "DCG": dcg, "Rprec": r_precision, "Bpref": bpref,
    "IPrec": interpolated_precision, "Judged": judged, "NumQ": num_q, "NumRet": num_ret,
    "NumRel": num_rel, "NumRelRet": num_rel_ret,
}


def compute(R: RankedLists, spec: MeasureSpec, conv: Conventions) -> np.ndarray:
    """Per-query values of one measure."""
    return COMPUTE[spec.family](R, spec, conv)


def aggregate(values: np.ndarray, spec: MeasureSpec) -> float:
    """Summary over queries: mean, sum (counts), geometric mean (GMAP) or NaN-skipping mean."""
    how = spec.definition.aggregate
    if len(values) == 0:
        return 0.0 if how == "sum" else float("nan")
    if how == "sum":
        return float(np.sum(values))
    if how == "gmean":
        return geometric_mean(values, MIN_GEO_MEAN)
    if how == "nanmean":
        ok = ~np.isnan(values)
        return float(np.mean(values[ok])) if ok.any() else float("nan")
    return float(np.mean(values))
