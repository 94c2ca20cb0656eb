"""trec_eval 10's gain measures: binary G, G, nDCG over the relevant documents, R-nDCG."""

from __future__ import annotations

import math

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import measure
from metrics_core.ranking.kernels import ideal_ranking, safe_div, seg_cumsum
from metrics_core.ranking.measures.common import TREC_EVAL, shared_example, threshold_of
from metrics_core.ranking.ranked_lists import RankedLists


@measure(
    "BinG",
    N_("binary G: each relevant document discounted by the non-relevant ones above it"),
    better="higher",
    params=("rel",),
    aliases=("bing",),
    trec=("binG",),
    formula=r"binG = \frac{1}{R}\sum_{r} \frac{1}{\log_2(2 + n_{<r})}",
    edge_cases=(N_("Unjudged documents count as non-relevant."), N_("No relevant document: 0.")),
    reference=(TREC_EVAL.format("binG"), N_("(experimental, 2008).")),
    example=shared_example(
        "BinG",
        (1 + 1 / math.log2(3)) / 3,
        N_("d1: 1/log2(2); d3: one non-relevant above, 1/log2(3); divided by 3."),
    ),
    common=("BinG",),
    perfect=1.0,
)
def binary_g(R, spec, conv):
    """binG: (1/R) * sum over retrieved relevant of 1 / log2(2 + non-relevant above it)
    (trec_eval ``binG``; unjudged documents count as non-relevant)."""
    thr = threshold_of(spec, conv)
    rows = R.relevant_rows(thr)
    above = R.pos_of(rows) - R.count_upto(rows, rows)
    w = 1.0 / np.log2((2 + above).astype(np.float64))
    total = np.bincount(R.seg[rows], weights=w, minlength=R.n_queries)
    return safe_div(total, R.num_rel(thr))


def _ideal_prefix(R: RankedLists):
    """Per query, the ideal ranking's gains (positive labels, descending) with their
    running sums: (seg, label, pos, first index of each query's block, count per query)."""
    seg, lab, pos = ideal_ranking(R, "qrels")
    n_pos = np.bincount(seg, minlength=R.n_queries)
    head = np.concatenate(([0], np.cumsum(n_pos)))[:-1]
    return seg, lab.astype(np.float64), pos, head, n_pos


def _at_ideal(values: np.ndarray, head, n_pos, seg, t, default_total):
    """values[head[seg] + t - 1] for 1 <= t <= n_pos[seg]; ``default_total`` beyond."""
    inside = (t >= 1) & (t <= n_pos[seg])
    idx = np.where(inside, head[seg] + t - 1, 0)
    return np.where(inside, values[idx] if len(values) else 0.0, default_total)


@measure(
    "G",
    N_("normalised gain G: each document's gain discounted by the gain still missing"),
    better="higher",
    aliases=("g",),
    trec=("G",),
    formula=r"G = \frac{1}{\sum g^*}\sum_i \frac{g_i}{\log_2(2 + C_i - S_i)}",
    edge_cases=(
        N_(
            "g_i is the label (negative labels and unjudged: 0); S_i the gain retrieved up to "
            "rank i; C_i the sum up to rank i of max(ideal gain, 1)."
        ),
        N_("No positive label: 0."),
    ),
    reference=(TREC_EVAL.format("G"), N_("(experimental, 2008).")),
    example=shared_example(
        "G",
        (1 / math.log2(2 + 1 - 1) + 1 / math.log2(2 + 3 - 2)) / 3,
        N_("d1: C=1, S=1; d3: C=3, S=2; ideal gain 3."),
    ),
    common=("G",),
)
def normalized_g(R, spec, conv):
    """G (trec_eval's experimental gain measure): sum over retrieved documents of
    gain_i / log2(2 + C_i - S_i), divided by the total ideal gain; ``S_i`` is the gain
    retrieved up to rank i, ``C_i`` the sum up to rank i of max(ideal gain, 1)."""
    iseg, ilab, ipos, head, n_pos = _ideal_prefix(R)
    cost = seg_cumsum(iseg, np.where(ilab >= 1.0, ilab, 1.0))
    cost_total = np.bincount(iseg, weights=np.where(ilab >= 1.0, ilab, 1.0), minlength=R.n_queries)
    ideal_total = np.bincount(iseg, weights=ilab, minlength=R.n_queries)
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    seg = R.seg[rows]
    gain = R.label[rows].astype(np.float64)
    s = seg_cumsum(seg, gain)
    pos = R.pos_of(rows)
    c = _at_ideal(cost, head, n_pos, seg, pos, 0.0)
    beyond = pos > n_pos[seg]
    c = np.where(beyond, cost_total[seg] + (pos - n_pos[seg]), c)
    w = gain / np.log2(2 + c - s)
    total = np.bincount(seg, weights=w, minlength=R.n_queries)
    return safe_div(total, ideal_total)


def _dcg_prefix(R: RankedLists):
    """Rows with a positive label, their query and running DCG (gain / log2(rank + 1))."""
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    seg = R.seg[rows]
    pos = R.pos_of(rows)
    d = seg_cumsum(seg, R.label[rows].astype(np.float64) / np.log2((pos + 1).astype(np.float64)))
    return rows, seg, pos, d


def _dcg_upto(R: RankedLists, rows, d, q, t):
    """DCG of the top t of queries q from the running sums ``d`` at ``rows``."""
    lim = R.starts[q] + np.minimum(t, R.counts[q])
    idx = np.searchsorted(rows, lim) - 1
    ok = (idx >= 0) & (idx >= np.searchsorted(rows, R.starts[q])) & (len(rows) > 0)
    return np.where(ok, d[np.maximum(idx, 0)] if len(d) else 0.0, 0.0)


@measure(
    "nDCGRel",
    N_("nDCG averaged over the relevant documents"),
    better="higher",
    aliases=("ndcg_rel",),
    trec=("ndcg_rel",),
    formula=r"\frac{1}{|g > 0|}\Big(\sum_{r\ \mathrm{ret}} nDCG@\mathrm{rank}(r) + "
    r"|\mathrm{missed}|\, \frac{DCG}{IDCG}\Big)",
    edge_cases=(
        N_("Relevant here: a positive label (whatever the threshold)."),
        N_("Each relevant document not retrieved adds the whole ranking's DCG / IDCG."),
        N_("No positive label: 0."),
    ),
    reference=(
        TREC_EVAL.format("ndcg_rel"),
        N_("(experimental); nDCG after"),
        "K. Jarvelin, J. Kekalainen, ACM TOIS 20(4), 2002.",
    ),
    example=shared_example(
        "nDCGRel",
        (1.0 + 1.5 / (1 + 1 / math.log2(3) + 0.5) + 1.5 / (1 + 1 / math.log2(3) + 0.5)) / 3,
        N_("nDCG@1 = 1 at d1, nDCG@3 at d3, and d4 (missed) adds DCG/IDCG."),
    ),
    common=("nDCGRel",),
    perfect=1.0,
)
def ndcg_rel(R, spec, conv):
    """ndcg_rel: nDCG averaged over the documents with positive gain -- at each such
    retrieved document the nDCG at its rank, for each such document not retrieved the
    nDCG of the whole ranking (trec_eval ``ndcg_rel``)."""
    iseg, ilab, ipos, head, n_pos = _ideal_prefix(R)
    idcg = seg_cumsum(iseg, ilab / np.log2((ipos + 1).astype(np.float64)))
    idcg_total = _at_ideal(idcg, head, n_pos, np.arange(R.n_queries), n_pos, 0.0)
    rows, seg, pos, d = _dcg_prefix(R)
    ideal_here = _at_ideal(idcg, head, n_pos, seg, pos, idcg_total[seg])
    with np.errstate(divide="ignore", invalid="ignore"):
        w = d / ideal_here
    total = np.bincount(seg, weights=w, minlength=R.n_queries)
    found = np.bincount(seg, minlength=R.n_queries)
    final = _dcg_upto(R, rows, d, np.arange(R.n_queries), R.counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + (n_pos - found).astype(np.float64) * final / idcg_total
    ok = total > 0
    return np.where(ok, total / np.where(ok, n_pos, 1), 0.0)


@measure(
    "RnDCG",
    N_("nDCG averaged at the R levels (ranks where the ideal gain changes)"),
    better="higher",
    params=("rel",),
    aliases=("rndcg",),
    trec=("Rndcg",),
    formula=r"\frac{1}{|B|}\sum_{b \in B} \frac{DCG@b}{IDCG@b}",
    edge_cases=(
        N_(
            "B: every rank after which the ideal ranking's gain drops (the last positive "
            "label included), and the end of a ranking longer than the positive labels "
            "plus one (trec_eval's rule)."
        ),
        N_("No relevant document: 0."),
    ),
    reference=(
        TREC_EVAL.format("Rndcg"),
        N_("(experimental); nDCG after"),
        "K. Jarvelin, J. Kekalainen, ACM TOIS 20(4), 2002.",
    ),
    example=shared_example(
        "RnDCG",
        1.5 / (1 + 1 / math.log2(3) + 0.5),
        N_("One gain level (3 documents): B = {3}, nDCG@3."),
    ),
    common=("RnDCG",),
    perfect=1.0,
)
def r_ndcg(R, spec, conv):
    """Rndcg: nDCG averaged at the R levels -- the ranks where the ideal ranking's gain
    changes (the last positive gain included), and at the end of a ranking longer than
    the positive judgements plus one (trec_eval ``Rndcg``). 0 when R = 0."""
    thr = threshold_of(spec, conv)
    iseg, ilab, ipos, head, n_pos = _ideal_prefix(R)
    idcg = seg_cumsum(iseg, ilab / np.log2((ipos + 1).astype(np.float64)))
    # boundaries b: the ideal gain at rank b+1 differs from rank b (or rank b is the last
    # positive one)
    nxt_diff = np.r_[ilab[1:] != ilab[:-1], True] if len(ilab) else np.zeros(0, dtype=bool)
    last = np.r_[iseg[1:] != iseg[:-1], True] if len(iseg) else np.zeros(0, dtype=bool)
    bmask = nxt_diff | last
    bq, bt = iseg[bmask], ipos[bmask]
    ideal_b = idcg[bmask]
    idcg_total = _at_ideal(idcg, head, n_pos, np.arange(R.n_queries), n_pos, 0.0)
    # the end of the ranking, after the boundaries
    eq = np.flatnonzero(R.counts > n_pos + 1)
    bq = np.r_[bq, eq].astype(np.int64)
    bt = np.r_[bt, R.counts[eq]].astype(np.int64)
    ideal_b = np.r_[ideal_b, idcg_total[eq]]
    order = np.lexsort(
        (np.r_[np.zeros(int(bmask.sum()), dtype=np.int8), np.ones(len(eq), dtype=np.int8)], bq)
    )
    bq, bt, ideal_b = bq[order], bt[order], ideal_b[order]
    rows, seg, pos, d = _dcg_prefix(R)
    num = _dcg_upto(R, rows, d, bq, bt)
    good = ideal_b > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(good, num / ideal_b, 0.0)
    total = np.bincount(bq, weights=w, minlength=R.n_queries)
    count = np.bincount(bq[good], minlength=R.n_queries)
    out = safe_div(total, count)
    return np.where(R.num_rel(thr) > 0, out, 0.0)
