"""Diversity and novelty measures from subtopic judgements, with ndeval's conventions
(TREC Web track, ``ndeval.c`` 4.5): alpha-nDCG, alpha-DCG, ERR-IA, nERR-IA, NRBP, nNRBP,
P-IA, MAP-IA and subtopic recall.

Read the qrels with their subtopics (ndeval's lines ``qid subtopic docid relevance``;
:func:`metrics_core.io.read_qrels` with ``subtopics=True``, which the front door does when a
measure of this module is asked for). The arithmetic is in
:mod:`metrics_core.ranking.subtopics`; ndeval's conventions, each kept:

- a document is relevant to a subtopic when its label for it is at or above the relevance
  threshold (ndeval reads labels above 1 as 1; pyndeval's ``relevance_level``);
- M, the query's subtopics, counts only those with a relevant document in the qrels;
- unjudged documents, and judged ones relevant to no subtopic, gain nothing;
- the ideal ranking is ndeval's greedy one (not always the best: a run can score above 1
  on the normalised measures), equal gains broken by the larger document id;
- alpha-DCG@k and ERR-IA@k are divided by the "ideal ideal" (every subtopic covered at
  every rank), except at k = 1, which ndeval leaves undivided;
- a query with no relevant subtopic scores 0 on every measure (ndeval gives nNRBP 0/0
  there, printed ``nan``); the mean is over the evaluated queries, ndeval's ``amean``
  (queries of the run that the qrels judge; ``missing_queries="zero"`` is its ``-c``).

ndeval computes cut-offs up to 20; the same formulas are extended to any k here. ndeval
orders a run by its rank column (``-traditional``: by score, equal scores by document id
descending, RankLab's default tie rule); pyndeval and ir_measures by score, equal scores by
document id ascending (``ties="docid_asc"``).
"""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import Example, measure
from metrics_core.ranking.kernels import safe_div
from metrics_core.ranking.measures.common import threshold_of
from metrics_core.ranking.subtopics import (
    discounts,
    ideal_ideal,
    intents,
    powers,
    upto,
)

CLARKE_2008 = (
    "C. L. A. Clarke, M. Kolla, G. V. Cormack, O. Vechtomova, A. Ashkan, S. Buttcher, "
    "I. MacKinnon, Novelty and diversity in information retrieval evaluation, SIGIR 2008."
)
CLARKE_2009 = (
    "C. L. A. Clarke, M. Kolla, O. Vechtomova, An effectiveness measure for ambiguous and "
    "underspecified queries, ICTIR 2009."
)
CHAPELLE_2009 = (
    "O. Chapelle, D. Metzler, Y. Zhang, P. Grinspan, Expected reciprocal rank for graded "
    "relevance, CIKM 2009."
)
AGRAWAL_2009 = (
    "R. Agrawal, S. Gollapudi, A. Halverson, S. Ieong, Diversifying search results, WSDM 2009."
)
ZHAI_2003 = (
    "C. Zhai, W. W. Cohen, J. Lafferty, Beyond independent relevance: methods and evaluation "
    "metrics for subtopic retrieval, SIGIR 2003."
)
NDEVAL = N_("Computed as ndeval 4.5 (TREC Web track) computes it.")

#: the worked example of every diversity measure: one query, three subtopics
QRELS = {"q1": {"1": {"d1": 1, "d3": 1}, "2": {"d2": 1}, "3": {"d4": 1}}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
SHARED = N_(
    "Ranking d1, d2, d3; subtopic 1: d1 and d3, subtopic 2: d2, subtopic 3: d4 (not "
    "retrieved); M = 3, alpha = 0.5. Gains 1, 1, 0.5 (d3 covers subtopic 1 again)."
)
IDEAL = N_("The greedy ideal: d4, d3, d2, d1 (equal gains to the larger id), gains 1, 1, 1, 0.5.")


def example(name: str, value: float, step: str, ideal: bool = False) -> Example:
    parts = (SHARED, IDEAL, step) if ideal else (SHARED, step)
    return Example(QRELS, RUN, name, value, " ".join(parts), parts)


D2, D3 = 1 / np.log2(3.0), 0.5

ALPHA_EDGES = (
    N_(
        "g_i sums (1 - alpha)^c over the subtopics the document at rank i is relevant to, c "
        "the documents above it relevant to the same subtopic."
    ),
    N_(
        "M counts the query's subtopics with a relevant document in the qrels; no such subtopic: 0."
    ),
    N_("Unjudged documents gain nothing."),
)
UNDIVIDED = N_(
    "Divided by the ideal ideal (every subtopic covered at every rank: ndeval's "
    "collection-independent normalisation), except at k = 1, which ndeval leaves undivided."
)
GREEDY = N_(
    "The ideal ranking is ndeval's greedy one over the judged documents (equal gains: the "
    "larger document id first); it is not always the best, so a run can score above 1."
)
NDEVAL_CUTS = N_("ndeval computes k up to 20; the same formula beyond.")


def _k(spec) -> int:
    return int(spec.cutoff)


def _dcg(it, alpha: float, k: int):
    seg, pos, gain = it.gains(alpha)
    disc = discounts(max(k, 1))
    keep = pos <= k
    return upto(seg[keep], pos[keep], gain[keep] * disc[pos[keep] - 1], None, it.n)


def _err(it, alpha: float, k: int):
    seg, pos, gain = it.gains(alpha)
    keep = pos <= k
    return upto(seg[keep], pos[keep], gain[keep] / pos[keep], None, it.n)


def _ideal_sums(it, alpha: float, k: int, kind: str):
    seg, t, g = it.ideal(alpha, k)
    terms = g * discounts(k)[t - 1] if kind == "dcg" else g / t
    return np.bincount(seg, weights=terms, minlength=it.n)


def _normalised(values, it, alpha: float, k: int, kind: str):
    """ndeval's division by the ideal ideal at rank k (none at k = 1); 0 where M is 0."""
    if k == 1:
        return np.where(it.m > 0, values, 0.0)
    return safe_div(values, np.where(it.m > 0, ideal_ideal(it.m, k, alpha, kind), 0.0))


def _alpha(spec, conv) -> float:
    return float(spec.param("alpha", conv))


@measure(
    "alpha-nDCG",
    N_("alpha-nDCG: novelty-biased nDCG over the subtopics (intents) of a query"),
    better="higher",
    cutoff="required",
    params=("rel", "alpha"),
    aliases=("alpha_nDCG", "alpha-ndcg"),
    formula=r"\alpha\text{-}nDCG@k = \frac{\alpha\text{-}DCG@k}{\alpha\text{-}DCG^{*}@k},\; "
    r"\alpha\text{-}DCG@k = \sum_{i \le k} \frac{g_i}{\log_2(i+1)},\; "
    r"g_i = \sum_s r_{i,s} (1-\alpha)^{c_{i,s}}",
    edge_cases=(*ALPHA_EDGES, GREEDY, N_("No relevant document in the top k: 0."), NDEVAL_CUTS),
    reference=(CLARKE_2008, NDEVAL),
    example=example(
        "alpha-nDCG@3",
        (1 + D2 + 0.5 * D3) / (1 + D2 + D3),
        N_("(1 + 1/log2(3) + 0.5/2) / (1 + 1/log2(3) + 1/2)."),
        ideal=True,
    ),
    common=("alpha-nDCG@20", "alpha-nDCG@10"),
    value_range=(0.0, None),
    subtopics=True,
)
def alpha_ndcg(R, spec, conv):
    """alpha-nDCG@k (Clarke et al., SIGIR 2008) as ndeval computes it: the run's alpha-DCG
    over the greedy ideal ranking's, both divided by ndeval's ideal ideal (which cancels but
    for the last bit); 0 when the run's is 0."""
    it = intents(R, threshold_of(spec, conv), conv)
    a, k = _alpha(spec, conv), _k(spec)
    run = _normalised(_dcg(it, a, k), it, a, k, "dcg")
    ideal = _normalised(_ideal_sums(it, a, k, "dcg"), it, a, k, "dcg")
    return np.where(run != 0, safe_div(run, ideal), 0.0)


@measure(
    "alpha-DCG",
    N_("alpha-DCG: novelty-biased DCG over the subtopics, over ndeval's ideal ideal"),
    better="higher",
    cutoff="required",
    params=("rel", "alpha"),
    aliases=("alpha_DCG", "alpha-dcg"),
    formula=r"\alpha\text{-}DCG@k = \frac{\sum_{i \le k} g_i / \log_2(i+1)}"
    r"{\sum_{i \le k} M (1-\alpha)^{i-1} / \log_2(i+1)}",
    edge_cases=(*ALPHA_EDGES, UNDIVIDED, NDEVAL_CUTS),
    reference=(CLARKE_2008, NDEVAL),
    example=example(
        "alpha-DCG@2",
        (1 + D2) / (3 + 1.5 * D2),
        N_("(1 + 1/log2(3)) / (3 + 1.5/log2(3))."),
    ),
    common=("alpha-DCG@20",),
    value_range=(0.0, None),
    subtopics=True,
)
def alpha_dcg(R, spec, conv):
    """ndeval's alpha-DCG@k: the novelty-biased DCG divided by the ideal ideal's (M new
    subtopics at rank 1, each repeated at every rank after: ndeval's collection-independent
    normalisation); undivided at k = 1."""
    it = intents(R, threshold_of(spec, conv), conv)
    a, k = _alpha(spec, conv), _k(spec)
    return _normalised(_dcg(it, a, k), it, a, k, "dcg")


@measure(
    "ERR-IA",
    N_("intent-aware ERR: each subtopic's reciprocal-rank gains, over ndeval's ideal ideal"),
    better="higher",
    cutoff="required",
    params=("rel", "alpha"),
    aliases=("ERR_IA", "err-ia"),
    formula=r"ERR\text{-}IA@k = \frac{\sum_{i \le k} g_i / i}"
    r"{\sum_{i \le k} M (1-\alpha)^{i-1} / i}",
    edge_cases=(
        *ALPHA_EDGES,
        N_("A subtopic's gain halves at each repetition (alpha = 0.5): ERR's cascade."),
        UNDIVIDED,
        NDEVAL_CUTS,
    ),
    reference=(CHAPELLE_2009, AGRAWAL_2009, NDEVAL),
    example=example(
        "ERR-IA@3", (1 + 1 / 2 + 0.5 / 3) / 4, N_("(1/1 + 1/2 + 0.5/3) / (3 + 1.5/2 + 0.75/3).")
    ),
    common=("ERR-IA@20",),
    value_range=(0.0, None),
    subtopics=True,
)
def err_ia(R, spec, conv):
    """ndeval's ERR-IA@k: sum over ranks i <= k of g_i / i, divided by the ideal ideal's
    (undivided at k = 1)."""
    it = intents(R, threshold_of(spec, conv), conv)
    a, k = _alpha(spec, conv), _k(spec)
    return _normalised(_err(it, a, k), it, a, k, "err")


@measure(
    "nERR-IA",
    N_("normalised intent-aware ERR: the run's ERR-IA over the greedy ideal ranking's"),
    better="higher",
    cutoff="required",
    params=("rel", "alpha"),
    aliases=("nERR_IA", "nerr-ia"),
    formula=r"nERR\text{-}IA@k = \frac{\sum_{i \le k} g_i / i}{\sum_{i \le k} g^{*}_i / i}",
    edge_cases=(*ALPHA_EDGES, GREEDY, N_("No relevant document in the top k: 0."), NDEVAL_CUTS),
    reference=(CHAPELLE_2009, AGRAWAL_2009, NDEVAL),
    example=example(
        "nERR-IA@3",
        (1 + 1 / 2 + 0.5 / 3) / (1 + 1 / 2 + 1 / 3),
        N_("(1/1 + 1/2 + 0.5/3) / (1/1 + 1/2 + 1/3) = 10/11."),
        ideal=True,
    ),
    common=("nERR-IA@20",),
    value_range=(0.0, None),
    subtopics=True,
)
def nerr_ia(R, spec, conv):
    """ndeval's nERR-IA@k: ERR-IA@k of the run over that of the greedy ideal ranking (both
    divided by the ideal ideal first, as ndeval divides); 0 when the run's is 0."""
    it = intents(R, threshold_of(spec, conv), conv)
    a, k = _alpha(spec, conv), _k(spec)
    run_dcg = _dcg(it, a, k)
    run = _normalised(_err(it, a, k), it, a, k, "err")
    ideal = _normalised(_ideal_sums(it, a, k, "err"), it, a, k, "err")
    return np.where(run_dcg != 0, safe_div(run, ideal), 0.0)


def _nrbp(it, alpha: float, beta: float, seg, pos, gain):
    decay = powers(beta, int(pos.max(initial=1)))
    total = np.bincount(seg, weights=gain * decay[pos - 1], minlength=it.n)
    factor = safe_div(np.full(it.n, 1.0 - (1.0 - alpha) * beta), it.m)
    return total * factor


def _nrbp_depth(it, beta: float) -> int:
    """Ranks of the ideal ranking that NRBP can feel: all of them, or up to where the
    decay beta^(i-1) reaches 0."""
    most = it.most_documents()
    if most == 0 or beta >= 1.0:
        return most
    decay = powers(beta, most)
    zero = np.flatnonzero(decay == 0.0)
    return int(zero[0]) if len(zero) else most


NRBP_EDGES = (
    *ALPHA_EDGES,
    N_("The whole ranking counts, each rank i weighted beta^(i-1) (beta: patience, 0.5)."),
)


@measure(
    "NRBP",
    N_("novelty- and rank-biased precision over the subtopics"),
    better="higher",
    params=("rel", "alpha", "beta"),
    aliases=("nrbp",),
    formula=r"NRBP = \frac{1 - (1-\alpha)\beta}{M} \sum_{i} g_i \beta^{i-1}",
    edge_cases=NRBP_EDGES,
    reference=(CLARKE_2009, NDEVAL),
    example=example(
        "NRBP",
        (1 + 0.5 + 0.5 * 0.25) * (1 - 0.5 * 0.5) / 3,
        N_("(1 + 1(0.5) + 0.5(0.25)) (1 - 0.5 x 0.5) / 3."),
    ),
    common=("NRBP",),
    defaults=(("beta", 0.5),),
    bounds=(("beta", 0.0, 1.0),),
    subtopics=True,
)
def nrbp(R, spec, conv):
    """NRBP (Clarke, Kolla & Vechtomova, ICTIR 2009) as ndeval computes it: the
    novelty-biased gains weighted beta^(i-1) over the whole ranking, times
    (1 - (1 - alpha) beta) / M."""
    it = intents(R, threshold_of(spec, conv), conv)
    a, b = _alpha(spec, conv), float(spec.param("beta", conv))
    return _nrbp(it, a, b, *it.gains(a))


@measure(
    "nNRBP",
    N_("normalised NRBP: the run's NRBP over the greedy ideal ranking's"),
    better="higher",
    params=("rel", "alpha", "beta"),
    aliases=("nnrbp",),
    formula=r"nNRBP = \frac{\sum_i g_i \beta^{i-1}}{\sum_i g^{*}_i \beta^{i-1}}",
    edge_cases=(
        *NRBP_EDGES,
        GREEDY,
        N_("No relevant subtopic: 0 (ndeval divides 0 by 0 there and prints nan)."),
    ),
    reference=(CLARKE_2009, NDEVAL),
    example=example(
        "nNRBP",
        (1 + 0.5 + 0.5 * 0.25) / (1 + 0.5 + 0.25 + 0.5 * 0.125),
        N_("(1 + 0.5 + 0.125) / (1 + 0.5 + 0.25 + 0.0625) = 26/29."),
        ideal=True,
    ),
    common=("nNRBP",),
    value_range=(0.0, None),
    defaults=(("beta", 0.5),),
    bounds=(("beta", 0.0, 1.0),),
    subtopics=True,
)
def nnrbp(R, spec, conv):
    """ndeval's nNRBP: NRBP of the run over NRBP of the greedy ideal ranking (followed as
    deep as beta^(i-1) is not 0); 0 for a query without a relevant subtopic."""
    it = intents(R, threshold_of(spec, conv), conv)
    a, b = _alpha(spec, conv), float(spec.param("beta", conv))
    run = _nrbp(it, a, b, *it.gains(a))
    seg, t, g = it.ideal(a, _nrbp_depth(it, b))
    ideal = _nrbp(it, a, b, seg, t, g)
    return safe_div(run, ideal)


@measure(
    "P-IA",
    N_("intent-aware precision: relevant (document, subtopic) pairs in the top k over k M"),
    better="higher",
    cutoff="required",
    params=("rel",),
    aliases=("P_IA", "p-ia"),
    formula=r"P\text{-}IA@k = \frac{1}{M} \sum_s \frac{|\{i \le k : r_{i,s}\}|}{k}",
    edge_cases=(
        N_(
            "M counts the query's subtopics with a relevant document in the qrels; no such "
            "subtopic: 0."
        ),
        N_("Fewer than k documents retrieved: still divided by k."),
        NDEVAL_CUTS,
    ),
    reference=(AGRAWAL_2009, NDEVAL),
    example=example("P-IA@3", 3 / 9, N_("Three relevant pairs in the top 3: 3 / (3 x 3).")),
    common=("P-IA@20",),
    subtopics=True,
)
def p_ia(R, spec, conv):
    """P-IA@k (Agrawal et al., WSDM 2009), as ndeval computes it: the mean over the M
    subtopics of P@k with that subtopic's judgements."""
    it = intents(R, threshold_of(spec, conv), conv)
    k = _k(spec)
    count = np.bincount(it.seg[it.pos <= k], minlength=it.n)
    return safe_div(count, it.m * k)


@measure(
    "MAP-IA",
    N_("intent-aware average precision: AP of each subtopic, averaged over the subtopics"),
    better="higher",
    params=("rel",),
    aliases=("MAP_IA", "AP_IA", "AP-IA", "map-ia"),
    formula=r"MAP\text{-}IA = \frac{1}{M} \sum_s \frac{1}{R_s} \sum_{i : r_{i,s}} "
    r"\frac{|\{j \le i : r_{j,s}\}|}{i}",
    edge_cases=(
        N_("R_s: the documents relevant to subtopic s in the qrels."),
        N_(
            "M counts the query's subtopics with a relevant document in the qrels; no such "
            "subtopic: 0."
        ),
        N_("The whole ranking counts (no cutoff)."),
    ),
    reference=(AGRAWAL_2009, NDEVAL),
    example=example(
        "MAP-IA",
        ((1 + 2 / 3) / 2 + 1 / 2) / 3,
        N_("Subtopic 1: (1/1 + 2/3) / 2; subtopic 2: (1/2) / 1; subtopic 3: 0; over 3."),
    ),
    common=("MAP-IA",),
    subtopics=True,
)
def map_ia(R, spec, conv):
    """MAP-IA as ndeval computes it: per subtopic, the precision at each of its relevant
    documents summed down the ranking and divided by its relevant documents in the qrels;
    those added in subtopic order and divided by M."""
    it = intents(R, threshold_of(spec, conv), conv)
    by_key = np.lexsort((it.pos, it.key))
    key, pos, seen = it.key[by_key], it.pos[by_key], it.seen[by_key]
    first = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    at = np.cumsum(first) - 1
    totals = np.bincount(at, weights=(seen + 1) / pos, minlength=int(first.sum()))
    keys = key[first]
    nrel = it.nrel[np.searchsorted(it.keys, keys)]
    seg = it.seg[by_key][first]
    total = np.bincount(seg, weights=totals / nrel, minlength=it.n)
    return safe_div(total, it.m)


@measure(
    "strec",
    N_("subtopic recall: the share of the query's subtopics covered by the top k"),
    better="higher",
    cutoff="required",
    params=("rel",),
    aliases=("StRecall", "S-recall", "subtopic_recall"),
    formula=r"strec@k = \frac{|\{s : \exists\, i \le k,\ r_{i,s}\}|}{M}",
    edge_cases=(
        N_(
            "M counts the query's subtopics with a relevant document in the qrels; no such "
            "subtopic: 0."
        ),
        NDEVAL_CUTS,
    ),
    reference=(ZHAI_2003, NDEVAL),
    example=example("strec@2", 2 / 3, N_("d1 and d2 cover subtopics 1 and 2 of 3.")),
    common=("strec@20",),
    subtopics=True,
)
def subtopic_recall(R, spec, conv):
    """strec@k (S-recall; Zhai, Cohen & Lafferty, SIGIR 2003), as ndeval computes it:
    subtopics with a relevant document in the top k, over M."""
    it = intents(R, threshold_of(spec, conv), conv)
    k = _k(spec)
    new = (it.seen == 0) & (it.pos <= k)
    return safe_div(np.bincount(it.seg[new], minlength=it.n), it.m)
