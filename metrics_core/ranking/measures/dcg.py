"""DCG and nDCG (trec_eval ndcg, ndcg_cut_k; ir_measures nDCG), any gain, discount and ideal;
NCG (the cumulative gain over the ideal ranking's, no discount)."""

from __future__ import annotations

import math

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import gains_table, measure
from metrics_core.ranking.kernels import (
    custom_labels_gain,
    discounted,
    gain_of,
    ideal_dcg,
    ideal_ranking,
    safe_div,
)
from metrics_core.ranking.measures.common import TREC_EVAL, shared_example
from metrics_core.ranking.ranked_lists import RankedLists


def _dcg_rows(R: RankedLists, spec, conv):
    # Only positive labels carry gain; negative labels are judged non-relevant (trec_eval).
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    return rows, R.seg[rows], R.pos_of(rows), R.label[rows]


@measure(
    "DCG",
    N_("discounted cumulative gain"),
    better="higher",
    cutoff="optional",
    params=("gain", "discount", "gains"),
    formula=r"DCG@k = \sum_{i \le k} \frac{g(\mathrm{rel}_i)}{\log_2(i+1)}",
    edge_cases=(
        N_("Unnormalised: it grows with the number and grades of relevant documents."),
        N_("Negative labels give no gain."),
        N_("gain=exp uses 2^label - 1; discount=jarvelin uses 1/max(1, log2 i)."),
    ),
    reference=(
        "K. Jarvelin, J. Kekalainen, Cumulated gain-based evaluation of IR techniques, "
        "ACM TOIS 20(4), 2002.",
        "C. Burges et al., Learning to rank using gradient descent, ICML 2005",
        N_("(exponential gain)."),
    ),
    example=shared_example("DCG@3", 1.5, N_("1/log2(2) + 1/log2(4) = 1.5.")),
    common=("DCG@10",),
    value_range=(0.0, None),
    cut_invariant=True,
)
def dcg(R, spec, conv):
    """DCG@k = sum over i <= k of gain(rel_i) * discount(i)."""
    table = gains_table(spec.param("gains", conv))
    if table:
        seg, pos, g = _custom_gain_rows(R, spec, conv, table)
    else:
        _, seg, pos, lab = _dcg_rows(R, spec, conv)
        g = None
    k = spec.cutoff
    if k is not None:
        keep = pos <= k
        seg, pos = seg[keep], pos[keep]
        if g is None:
            lab = lab[keep]
        else:
            g = g[keep]
    if g is None:
        g = gain_of(lab, spec.param("gain", conv))
    w = discounted(g, pos, spec.param("discount", conv))
    return np.bincount(seg, weights=w, minlength=R.n_queries)


def _custom_gain_rows(R: RankedLists, spec, conv, table):
    """(query, rank, gain) of the retrieved rows whose gain is not 0, under a gains table."""
    jr = R.judged_rows
    rows = jr[R.label[jr] >= 0]
    g = custom_labels_gain(R.label[rows].astype(np.float64), table, spec.param("gain", conv))
    keep = g != 0
    rows, g = rows[keep], g[keep]
    return R.seg[rows], R.pos_of(rows), g


@measure(
    "nDCG",
    N_("normalised discounted cumulative gain"),
    better="higher",
    cutoff="optional",
    params=("gain", "discount", "ideal", "gains"),
    aliases=("ndcg",),
    trec=("ndcg", "ndcg_cut_{k}"),
    formula=r"nDCG@k = \frac{DCG@k}{IDCG@k},\; DCG@k = \sum_{i \le k} \frac{g(\mathrm{rel}_i)}{\log_2(i+1)}",
    edge_cases=(
        N_(
            "IDCG sorts every judged document of the query by label (trec_eval); "
            "ideal=retrieved sorts only the retrieved ones."
        ),
        N_("IDCG = 0 (no positive label): 0."),
        N_(
            "Gain linear (the label) or 2^label - 1 (gain=exp); discount 1/log2(i+1) or "
            "1/max(1, log2 i) (discount=jarvelin). Negative labels give no gain."
        ),
        N_(
            "gains=1:3.5,2:9 sets the gain of the labels named (label 0 too; the others "
            "keep theirs), as trec_eval's ndcg.1=3.5,2=9 but without its truncation of "
            "gain differences when it sorts the ideal ranking."
        ),
    ),
    reference=(
        "K. Jarvelin, J. Kekalainen, Cumulated gain-based evaluation of IR techniques, "
        "ACM TOIS 20(4), 2002.",
        TREC_EVAL.format("ndcg_cut_k"),
    ),
    example=shared_example(
        "nDCG",
        1.5 / (1 + 1 / math.log2(3) + 0.5),
        N_("DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) + 1/log2(4)."),
    ),
    common=("nDCG@10", "nDCG"),
    perfect=1.0,
    cut_invariant=True,
)
def ndcg(R, spec, conv):
    """nDCG@k = DCG@k / IDCG@k; 0 when IDCG is 0 (trec_eval ndcg / ndcg_cut_k).

    Gains are the labels (``gain=exp``: 2**label - 1); the ideal ranking sorts all judged
    documents of the qrels (``ideal=retrieved``: the retrieved ones), cut at k too.
    """
    return safe_div(dcg(R, spec, conv), ideal_dcg(R, spec, conv))


def _cumulative_gain(seg, pos, gain, k, n_queries):
    """Sum of ``gain`` per query over the entries ranked at or above ``k`` (all when None),
    added in rank order."""
    if k is not None:
        keep = pos <= k
        seg, gain = seg[keep], gain[keep]
    return np.bincount(seg, weights=gain, minlength=n_queries)


@measure(
    "NCG",
    N_("normalised cumulative gain: the gain retrieved over the ideal ranking's, no discount"),
    better="higher",
    cutoff="optional",
    params=("gain",),
    aliases=("ncg",),
    formula=r"NCG@k = \frac{CG@k}{ICG@k},\; CG@k = \sum_{i \le k} g(\mathrm{rel}_i)",
    edge_cases=(
        N_(
            "ICG@k sums the k largest gains of the query's judged documents (the ideal "
            "ranking of nDCG, without its discount)."
        ),
        N_("ICG = 0 (no positive label): 0."),
        N_("Gain: the label, or 2^label - 1 (gain=exp); negative labels give no gain."),
        N_("Without a cutoff: the gain retrieved over the gain judged (a graded recall)."),
    ),
    reference=(
        "K. Jarvelin, J. Kekalainen, Cumulated gain-based evaluation of IR techniques, "
        "ACM TOIS 20(4), 2002;",
        "N. Craswell, B. Mitra, E. Yilmaz, D. Campos, E. Voorhees, Overview of the TREC 2019 "
        "deep learning track, TREC 2019",
        N_("(NCG@k of the full-ranking runs)."),
    ),
    example=shared_example(
        "NCG@2", 0.5, N_("The top 2 gain 1 + 0; the ideal top 2 gain 1 + 1: 1/2.")
    ),
    common=("NCG@100", "NCG"),
    perfect=1.0,
    cut_invariant=True,
)
def ncg(R, spec, conv):
    """NCG@k = CG@k / ICG@k: the gains of the top k (labels, or 2**label - 1 with
    ``gain=exp``) over the k largest gains of the query's judgements; 0 when those are 0.
    ``NCG`` (no cutoff) is the gain retrieved over the gain judged."""
    kind = spec.param("gain", conv)
    _, seg, pos, lab = _dcg_rows(R, spec, conv)
    got = _cumulative_gain(seg, pos, gain_of(lab, kind), spec.cutoff, R.n_queries)
    iseg, ilab, ipos = ideal_ranking(R, "qrels")
    ideal = _cumulative_gain(
        iseg, ipos, gain_of(ilab.astype(np.float64), kind), spec.cutoff, R.n_queries
    )
    return safe_div(got, ideal)
