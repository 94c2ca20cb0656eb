"""Every ranking measure, for all queries at once, each defined once.

Each function takes the :class:`~metrics_core.ranking.engine.RankedLists`, the parsed
:class:`~metrics_core.ranking.definition.MeasureSpec` and the
:class:`~metrics_core.conventions.Conventions`, and returns one float64 value per
evaluated query. No loop over queries: reductions are ``np.bincount`` over the rows that
matter (usually only the relevant ones) or O(queries) gathers from one ``cumsum``.

The :func:`~metrics_core.ranking.definition.measure` decorator above each function is the
family's whole definition (names, parameters, formula, edge cases, reference, worked
example); the registry, the parser, the app's picker and the Learn page read it. Adding a
measure is one decorated function here.

Definitions follow trec_eval 10.0 (Buckley; NIST) under the default conventions, and the
named alternatives under other conventions. Notation: for a query, ``rel_i`` is 1 when
the document at rank ``i`` is relevant (judged label >= threshold), ``R`` the number of
relevant documents in the qrels, ``N`` the judged non-relevant ones.
"""

from __future__ import annotations

import math

import numpy as np

from metrics_core.conventions import Conventions
from metrics_core.ranking.definition import Example, MeasureSpec, measure
from metrics_core.ranking.engine import RankedLists
from metrics_core.stats.aggregate import geometric_mean

MIN_GEO_MEAN = 1e-5  # trec_eval's floor for geometric means


# The worked example most families share: one query, three documents retrieved (d1, d2,
# d3 in that order), d1, d3 and d4 relevant (d4 not retrieved), d2 judged non-relevant.
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
_SHARED = "Ranking d1, d2, d3; relevant: d1, d3 and d4 (not retrieved); d2 judged non-relevant."
TREC_EVAL = "trec_eval 10.0 (NIST; Buckley), measure {}."
IIR = ("C. D. Manning, P. Raghavan, H. Schutze, Introduction to Information Retrieval, "
       "Cambridge University Press, 2008, ch. 8.")


def _example(name: str, value: float, explanation: str = _SHARED) -> Example:
    return Example(QRELS, RUN, name, value, explanation)


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


@measure("P", "precision of the top k (all retrieved without @k)", cutoff="optional",
         params=("rel", "denom"), aliases=("precision",), trec=("P_{k}", "set_P"),
         formula=r"P@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{k}",
         edge_cases=("Fewer than k retrieved: still divided by k (trec_eval); denom=retrieved divides by "
                     "min(k, retrieved), and a query with nothing retrieved scores 0.",
                     "Without @k: relevant retrieved / retrieved (trec_eval set_P).",
                     "Relevant means label >= the relevance threshold (rel, default 1)."),
         reference=IIR + " " + TREC_EVAL.format("P_k"),
         example=_example("P@2", 0.5, _SHARED + " One relevant (d1) in the top 2: 1/2."),
         common=("P@5", "P@10"))
def precision(R, spec, conv):
    """P@k: relevant in the top k, divided by k (trec_eval P_k).

    ``denom=retrieved`` divides by min(k, retrieved) ; a query with
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


@measure("R", "recall of the top k (all retrieved without @k)", cutoff="optional", params=("rel",),
         aliases=("recall",), trec=("recall_{k}",),
         formula=r"R@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{R}",
         edge_cases=("No relevant document in the qrels (R = 0): 0, and the query still counts in the mean.",),
         reference=IIR + " " + TREC_EVAL.format("recall_k"),
         example=_example("R@2", 1 / 3, _SHARED + " One of the three relevant documents in the top 2."),
         common=("R@10", "R@100"), perfect=1.0, cut_invariant=True)
def recall(R, spec, conv):
    """R@k: relevant in the top k divided by R; 0 when R = 0 (trec_eval recall_k)."""
    thr = _threshold(spec, conv)
    return _safe_div(_hits_top(R, thr, spec.cutoff), R.num_rel(thr))


@measure("F1", "harmonic mean of P@k and R@k", cutoff="optional", params=("rel", "denom"),
         aliases=("f",), formula=r"F_1@k = \frac{2\,P@k\,R@k}{P@k + R@k}",
         edge_cases=("0 when P@k + R@k = 0.",),
         reference=IIR + " (the F measure with beta = 1; C. J. van Rijsbergen, Information Retrieval, 1979).",
         example=_example("F1@2", 0.4, _SHARED + " P@2 = 1/2, R@2 = 1/3: 2 (1/6) / (5/6) = 0.4."),
         common=("F1@10",))
def f1(R, spec, conv):
    """F1@k = 2 P@k R@k / (P@k + R@k); 0 when both are 0."""
    p = precision(R, spec, conv)
    r = recall(R, spec, conv)
    return _safe_div(2 * p * r, p + r)


@measure("Hits", "number of relevant documents in the top k", cutoff="optional", params=("rel",),
         formula=r"Hits@k = |\mathrm{rel} \cap \mathrm{top}_k|",
         edge_cases=("A count, not a fraction; the aggregate is its mean over queries.",),
         reference="The hits-in-top-k count of question-answering and retrieval test suites; "
                   "P@k times k.",
         example=_example("Hits@2", 1.0), common=("Hits@5",), value_range=(0.0, None), cut_invariant=True)
def hits(R, spec, conv):
    """Number of relevant documents in the top k."""
    return _hits_top(R, _threshold(spec, conv), spec.cutoff).astype(np.float64)


@measure("RR", "reciprocal rank of the first relevant document (MRR is its mean over queries)",
         cutoff="optional", params=("rel", "miss"), aliases=("mrr", "reciprocal_rank"), trec=("recip_rank",),
         formula=r"RR@k = \frac{1}{\mathrm{rank}_1} \text{ if } \mathrm{rank}_1 \le k",
         edge_cases=("No relevant document retrieved: 0.",
                     "RR@k with nothing relevant in the top k: 0, or 1/(k+1) with miss=k_plus_1.",
                     "MRR, the mean reciprocal rank, is the aggregate of RR over queries."),
         reference="E. M. Voorhees, The TREC-8 Question Answering Track Report, TREC 1999. "
                   + TREC_EVAL.format("recip_rank"),
         example=_example("RR", 1.0, _SHARED + " The first document is relevant: 1/1."),
         common=("RR", "RR@10"), perfect=1.0, cut_invariant=True)
def reciprocal_rank(R, spec, conv):
    """RR: 1 / rank of the first relevant document; 0 when none (trec_eval recip_rank).

    RR@k looks only at the top k; with ``miss=k_plus_1`` a query without a relevant
    document in the top k scores 1/(k+1) instead of 0.
    """
    first = R.first_relevant_rank(_threshold(spec, conv))
    k = spec.cutoff
    found = first > 0 if k is None else (first > 0) & (first <= k)
    out = np.where(found, 1.0 / np.maximum(first, 1), 0.0)
    if k is not None and spec.param("miss", conv) == "k_plus_1":
        out = np.where(found, out, 1.0 / (k + 1))
    return out


@measure("FirstRel", "rank of the first relevant document", params=("rel",), aggregate="nanmean",
         aliases=("first_relevant_position",), formula=r"\mathrm{rank}_1",
         edge_cases=("No relevant document retrieved: NaN; the aggregate is the mean over the other "
                     "queries.",),
         reference="The position of the first relevant result, the quantity behind RR "
                   "(Voorhees, TREC-8 QA track, 1999).",
         example=_example("FirstRel", 1.0), common=("FirstRel",), value_range=(1.0, None), perfect=1.0,
         may_be_nan=True)
def first_relevant(R, spec, conv):
    """Rank of the first relevant document; NaN when no relevant document was retrieved."""
    first = R.first_relevant_rank(_threshold(spec, conv)).astype(np.float64)
    first[first == 0] = np.nan
    return first


@measure("Success", "1 if a relevant document is in the top k", cutoff="optional", params=("rel",),
         trec=("success_{k}",), formula=r"Success@k = [\mathrm{rank}_1 \le k]",
         edge_cases=("Without @k: 1 when any relevant document is retrieved.",),
         reference=TREC_EVAL.format("success_k") + " Also called Hit@k or top-k accuracy.",
         example=_example("Success@1", 1.0), common=("Success@1", "Success@10"), perfect=1.0,
         cut_invariant=True)
def success(R, spec, conv):
    """Success@k: 1 when a relevant document is in the top k, else 0 (trec_eval success_k)."""
    first = R.first_relevant_rank(_threshold(spec, conv))
    k = spec.cutoff
    return ((first > 0) & ((first <= k) if k is not None else True)).astype(np.float64)


@measure("AP", "average precision (MAP is its mean over queries)", cutoff="optional",
         params=("rel", "norm"), aliases=("map", "average_precision"), trec=("map", "map_cut_{k}"),
         formula=r"AP@k = \frac{1}{R} \sum_{i \le k} P@i \cdot \mathrm{rel}_i",
         edge_cases=("Divides by every relevant document of the qrels: unretrieved ones add precision 0.",
                     "norm=min_rel_k divides by min(R, k); norm=rel_retrieved by the relevant documents "
                     "retrieved within the cut.",
                     "No relevant document (normaliser 0): 0."),
         reference="C. Buckley, E. M. Voorhees, Evaluating evaluation measure stability, SIGIR 2000. "
                   + IIR + " " + TREC_EVAL.format("map"),
         example=_example("AP", 5 / 9, _SHARED + " (1/1 + 2/3) / 3 = 5/9."),
         common=("AP", "AP@100"), perfect=1.0, cut_invariant=True)
def average_precision(R, spec, conv):
    """AP@k = (1/norm) * sum over relevant ranks i <= k of P@i (trec_eval map / map_cut_k).

    ``norm`` is R (default), min(R, k) or the number of relevant
    documents retrieved within the cut. 0 when norm is 0.
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


@measure("GMAP", "average precision, geometric mean over queries", params=("rel", "norm"),
         aggregate="gmean", aliases=("gm_map",), trec=("gm_map",),
         formula=r"GMAP = \exp\Big(\frac{1}{|Q|}\sum_q \ln \max(AP_q, 10^{-5})\Big)",
         edge_cases=("AP values are floored at 1e-5 before the logarithm (trec_eval), so one query "
                     "with AP = 0 does not make the mean 0.",
                     "Per query the value is AP; only the aggregate differs."),
         reference="S. Robertson, On GMAP: and other transformations, CIKM 2006. "
                   + TREC_EVAL.format("gm_map"),
         example=_example("GMAP", 5 / 9, _SHARED + " One query: the geometric mean is its AP, 5/9."),
         common=("GMAP",), perfect=1.0)
def geometric_map(R, spec, conv):
    """Per query, AP (trec_eval gm_map); the aggregate is the geometric mean."""
    return average_precision(R, spec, conv)


def _gain(labels: np.ndarray, kind: str) -> np.ndarray:
    """Gain of positive labels: the label (trec_eval) or 2**label - 1."""
    if kind == "exp":
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


@measure("DCG", "discounted cumulative gain", cutoff="optional", params=("gain", "discount"),
         formula=r"DCG@k = \sum_{i \le k} \frac{g(\mathrm{rel}_i)}{\log_2(i+1)}",
         edge_cases=("Unnormalised: it grows with the number and grades of relevant documents.",
                     "Negative labels give no gain.",
                     "gain=exp uses 2^label - 1; discount=jarvelin uses 1/max(1, log2 i)."),
         reference="K. Jarvelin, J. Kekalainen, Cumulated gain-based evaluation of IR techniques, "
                   "ACM TOIS 20(4), 2002. C. Burges et al., Learning to rank using gradient descent, "
                   "ICML 2005 (exponential gain).",
         example=_example("DCG@3", 1.5, _SHARED + " 1/log2(2) + 1/log2(4) = 1.5."),
         common=("DCG@10",), value_range=(0.0, None), cut_invariant=True)
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
        # ideal=retrieved: the best reordering of the retrieved labels
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


@measure("nDCG", "normalised discounted cumulative gain", cutoff="optional",
         params=("gain", "discount", "ideal"), aliases=("ndcg",), trec=("ndcg", "ndcg_cut_{k}"),
         formula=r"nDCG@k = \frac{DCG@k}{IDCG@k},\; DCG@k = \sum_{i \le k} \frac{g(\mathrm{rel}_i)}{\log_2(i+1)}",
         edge_cases=("IDCG sorts every judged document of the query by label (trec_eval); "
                     "ideal=retrieved sorts only the retrieved ones.",
                     "IDCG = 0 (no positive label): 0.",
                     "Gain linear (the label) or 2^label - 1 (gain=exp); discount 1/log2(i+1) or "
                     "1/max(1, log2 i) (discount=jarvelin). Negative labels give no gain."),
         reference="K. Jarvelin, J. Kekalainen, Cumulated gain-based evaluation of IR techniques, "
                   "ACM TOIS 20(4), 2002. " + TREC_EVAL.format("ndcg_cut_k"),
         example=_example("nDCG", 1.5 / (1 + 1 / math.log2(3) + 0.5),
                          _SHARED + " DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) + 1/log2(4)."),
         common=("nDCG@10", "nDCG"), perfect=1.0, cut_invariant=True)
def ndcg(R, spec, conv):
    """nDCG@k = DCG@k / IDCG@k; 0 when IDCG is 0 (trec_eval ndcg / ndcg_cut_k).

    Gains are the labels (``gain=exp``: 2**label - 1); the ideal ranking sorts all judged
    documents of the qrels (``ideal=retrieved``: the retrieved ones), cut at k too.
    """
    return _safe_div(dcg(R, spec, conv), _ideal_dcg(R, spec, conv))


@measure("Rprec", "precision at rank R (R = relevant documents of the query)", params=("rel",),
         aliases=("r-prec", "r_precision"), trec=("Rprec",),
         formula=r"Rprec = \frac{|\mathrm{rel} \cap \mathrm{top}_R|}{R}",
         edge_cases=("R = 0: 0.", "Fewer than R retrieved: still divided by R."),
         reference=IIR + " " + TREC_EVAL.format("Rprec"),
         example=_example("Rprec", 2 / 3, _SHARED + " R = 3; two relevant documents in the top 3."),
         common=("Rprec",), perfect=1.0)
def r_precision(R, spec, conv):
    """Rprec: relevant in the top R, divided by R; 0 when R = 0 (trec_eval Rprec)."""
    thr = _threshold(spec, conv)
    rows = R.relevant_rows(thr)
    num_rel = R.num_rel(thr)
    seg = R.seg[rows]
    within = R.pos_of(rows) <= num_rel[seg]
    return _safe_div(np.bincount(seg[within], minlength=R.n_queries), num_rel)


@measure("Bpref", "binary preference: relevant documents ranked above judged non-relevant ones",
         params=("rel",), trec=("bpref",),
         formula=r"bpref = \frac{1}{R}\sum_{r} \Big(1 - \frac{\min(n_{r}, R)}{\min(N, R)}\Big)",
         edge_cases=("Only judged documents count: unjudged retrieved documents are skipped.",
                     "n_r counts judged non-relevant documents above the relevant document r; a term "
                     "is 1 when n_r = 0.", "R = 0: 0."),
         reference="C. Buckley, E. M. Voorhees, Retrieval evaluation with incomplete information, "
                   "SIGIR 2004. " + TREC_EVAL.format("bpref"),
         example=_example("Bpref", 1 / 3, _SHARED + " d1 scores 1, d3 (one judged non-relevant "
                          "above, N = 1) scores 0, d4 is not retrieved: 1/3."),
         common=("Bpref",), perfect=1.0)
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


@measure("IPrec", "interpolated precision at a recall level", cutoff="fraction",
         params=("rel", "rounding"), trec=("iprec_at_recall_{k}",),
         formula=r"IPrec@r = \max_{i:\,R@i \ge r} P@i",
         edge_cases=("The level becomes c = round(r R) relevant documents (trec_eval 10); "
                     "rounding=trec9 takes floor(r R + 0.9) as trec_eval 9 and pytrec_eval do.",
                     "Fewer than c relevant retrieved: 0."),
         reference=IIR + " (section 8.4). " + TREC_EVAL.format("iprec_at_recall"),
         example=_example("IPrec@0.5", 2 / 3, _SHARED + " c = round(1.5) = 2 relevant: the best "
                          "precision from the second relevant document on is 2/3."),
         common=("IPrec@0.1",), perfect=1.0)
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


@measure("Judged", "fraction of the top k that is judged", cutoff="required",
         formula=r"Judged@k = \frac{|\mathrm{judged} \cap \mathrm{top}_k|}{k}",
         edge_cases=("Divides by k, so short rankings score lower.", "Negative labels count as judged."),
         reference="The judgement rate of the top k (ir_measures' Judged@k): a check for holes in "
                   "the judgements before trusting the other measures.",
         example=_example("Judged@3", 1.0, _SHARED + " d1, d2 and d3 are all judged."),
         common=("Judged@10",))
def judged(R, spec, conv):
    """Judged@k: judged documents in the top k, divided by k (negative labels are judged)."""
    return R.count_top(R.judged_rows, spec.cutoff) / float(spec.cutoff)


@measure("NumQ", "number of queries evaluated", aggregate="sum", integer=True, trec=("num_q",),
         formula=r"|Q|", edge_cases=("Summed over queries in the aggregate (trec_eval).",),
         reference=TREC_EVAL.format("num_q"), example=_example("NumQ", 1.0), common=("NumQ",),
         value_range=(1.0, 1.0))
def num_q(R, spec, conv):
    """1 per evaluated query (summed: the number of queries)."""
    return np.ones(R.n_queries, dtype=np.float64)


@measure("NumRet", "number of documents retrieved", aggregate="sum", integer=True, trec=("num_ret",),
         formula=r"|\mathrm{retrieved}|", edge_cases=("Counted after the depth cut; summed over queries.",),
         reference=TREC_EVAL.format("num_ret"), example=_example("NumRet", 3.0), common=("NumRet",),
         value_range=(0.0, None))
def num_ret(R, spec, conv):
    """Documents retrieved (after the depth cut)."""
    return R.counts.astype(np.float64)


@measure("NumRel", "number of relevant documents in the qrels", params=("rel",), aggregate="sum",
         integer=True, trec=("num_rel",), formula=r"R",
         edge_cases=("Negative labels are not relevant; summed over queries.",),
         reference=TREC_EVAL.format("num_rel"), example=_example("NumRel", 3.0), common=("NumRel",),
         value_range=(0.0, None))
def num_rel(R, spec, conv):
    """Relevant documents in the qrels (labels >= threshold; negatives excluded)."""
    return R.num_rel(_threshold(spec, conv)).astype(np.float64)


@measure("NumRelRet", "number of relevant documents retrieved", params=("rel",), aggregate="sum",
         integer=True, trec=("num_rel_ret",), formula=r"|\mathrm{rel} \cap \mathrm{retrieved}|",
         edge_cases=("Summed over queries.",), reference=TREC_EVAL.format("num_rel_ret"),
         example=_example("NumRelRet", 2.0), common=("NumRelRet",), value_range=(0.0, None))
def num_rel_ret(R, spec, conv):
    """Relevant documents retrieved."""
    return _hits_top(R, _threshold(spec, conv), None).astype(np.float64)


def compute(R: RankedLists, spec: MeasureSpec, conv: Conventions) -> np.ndarray:
    """Per-query values of one measure."""
    return spec.definition.compute(R, spec, conv)


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
