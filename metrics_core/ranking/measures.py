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
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.ranking.definition import Example, MeasureSpec, gains_table, measure
from metrics_core.ranking.engine import RankedLists
from metrics_core.ranking.strings import string_order

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
         aliases=("recall",), trec=("recall_{k}", "set_recall"),
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
                     "No relevant document (normalizer 0): 0."),
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


def _discounted(gain: np.ndarray, pos: np.ndarray, kind: str) -> np.ndarray:
    """gain * discount(pos); for log2, gain / log2(i+1) as trec_eval divides (multiplying
    by the reciprocal can differ in the last bit)."""
    if kind == "jarvelin":
        return gain * _discount(pos, kind)
    return gain / np.log2(pos.astype(np.float64) + 1.0)


def _dcg_rows(R: RankedLists, spec, conv):
    # Only positive labels carry gain; negative labels are judged non-relevant (trec_eval).
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    return rows, R.seg[rows], R.pos_of(rows), R.label[rows]


@measure("DCG", "discounted cumulative gain", cutoff="optional", params=("gain", "discount", "gains"),
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
        g = _gain(lab, spec.param("gain", conv))
    w = _discounted(g, pos, spec.param("discount", conv))
    return np.bincount(seg, weights=w, minlength=R.n_queries)


def _custom_labels_gain(lab: np.ndarray, table: dict, kind: str) -> np.ndarray:
    """Gains of labels >= 0 with a ``gains`` table: the table's gain for the labels it
    names (exact: no truncation of gain differences, unlike trec_eval's sort), the usual
    gain for the others."""
    g = _gain(lab, kind)
    for label, gain in table.items():
        g = np.where(lab == label, gain, g)
    return g


def _custom_gain_rows(R: RankedLists, spec, conv, table):
    """(query, rank, gain) of the retrieved rows whose gain is not 0, under a gains table."""
    jr = R.judged_rows
    rows = jr[R.label[jr] >= 0]
    g = _custom_labels_gain(R.label[rows].astype(np.float64), table, spec.param("gain", conv))
    keep = g != 0
    rows, g = rows[keep], g[keep]
    return R.seg[rows], R.pos_of(rows), g


def _custom_ideal(R: RankedLists, spec, conv, table):
    """(query, gain, rank) of the ideal ranking under a gains table: positive gains of the
    judged documents (or the retrieved ones, ideal=retrieved), descending."""
    if spec.param("ideal", conv) == "retrieved":
        jr = R.judged_rows
        rows = jr[R.label[jr] >= 0]
        seg, lab = R.seg[rows], R.label[rows].astype(np.float64)
    else:
        ok = R.qrels_label >= 0
        seg, lab = R.qrels_seg[ok], R.qrels_label[ok].astype(np.float64)
    g = _custom_labels_gain(lab, table, spec.param("gain", conv))
    keep = g > 0
    seg, g = seg[keep], g[keep]
    order = np.lexsort((-g, seg))
    seg, g = seg[order], g[order]
    _, within, _ = _segment_layout(seg)
    return seg, g, within + 1


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
    table = gains_table(spec.param("gains", conv))
    if table:
        seg, g, pos = _custom_ideal(R, spec, conv, table)
    else:
        seg, lab, pos = _ideal_ranking(R, spec.param("ideal", conv))
        g = _gain(lab, spec.param("gain", conv))
    if k is not None:
        keep = pos <= k
        seg, g, pos = seg[keep], g[keep], pos[keep]
    w = _discounted(g, pos, spec.param("discount", conv))
    return np.bincount(seg, weights=w, minlength=R.n_queries)


@measure("nDCG", "normalised discounted cumulative gain", cutoff="optional",
         params=("gain", "discount", "ideal", "gains"), aliases=("ndcg",), trec=("ndcg", "ndcg_cut_{k}"),
         formula=r"nDCG@k = \frac{DCG@k}{IDCG@k},\; DCG@k = \sum_{i \le k} \frac{g(\mathrm{rel}_i)}{\log_2(i+1)}",
         edge_cases=("IDCG sorts every judged document of the query by label (trec_eval); "
                     "ideal=retrieved sorts only the retrieved ones.",
                     "IDCG = 0 (no positive label): 0.",
                     "Gain linear (the label) or 2^label - 1 (gain=exp); discount 1/log2(i+1) or "
                     "1/max(1, log2 i) (discount=jarvelin). Negative labels give no gain.",
                     "gains=1:3.5,2:9 sets the gain of the labels named (label 0 too; the others "
                     "keep theirs), as trec_eval's ndcg.1=3.5,2=9 but without its truncation of "
                     "gain differences when it sorts the ideal ranking."),
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


@measure("GMBpref", "bpref, geometric mean over queries", params=("rel",), aggregate="gmean",
         aliases=("gm_bpref",), trec=("gm_bpref",),
         formula=r"GMBpref = \exp\Big(\frac{1}{|Q|}\sum_q \ln \max(bpref_q, 10^{-5})\Big)",
         edge_cases=("Per query the value is bpref; only the aggregate differs (trec_eval prints "
                     "it only for all queries).",
                     "Values are floored at 1e-5 before the logarithm."),
         reference="C. Buckley, E. M. Voorhees, Retrieval evaluation with incomplete information, "
                   "SIGIR 2004. " + TREC_EVAL.format("gm_bpref"),
         example=_example("GMBpref", 1 / 3, _SHARED + " One query: its bpref. d1 adds 1; d3, below "
                          "the one non-relevant document, adds 1 - min(1, 3)/min(1, 3) = 0; R = 3."),
         common=("GMBpref",), perfect=1.0)
def geometric_bpref(R, spec, conv):
    """Per query, bpref (trec_eval gm_bpref); the aggregate is the geometric mean."""
    return bpref(R, spec, conv)


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
    key = ("precision_suffix_max", thr)
    if key not in R._cache:
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
        R._cache[key] = (suffix, nrr, first_row)
    return R._cache[key]


def _iprec_empty(R, c, out, conv):
    """trec_eval -J: a query left with no retrieved document has precision 0/0, which
    trec_eval carries into the recall levels that round to 0 documents (NaN)."""
    if getattr(conv, "judged_only", False):
        empty = (R.counts == 0) & (c == 0)
        if getattr(conv, "compat", "trec_eval10") == "trec_eval9":
            empty &= ~missing_mask(R)  # trec_eval 9 does not evaluate missing queries
        out[empty] = np.nan
    return out


def _rounding(spec, conv) -> str:
    """IPrec's rounding of r * R: given in the name, else trec_eval 9's under
    ``compat=trec_eval9``, else trec_eval 10's."""
    for k, v in getattr(spec, "params", ()):
        if k == "rounding":
            return v
    if getattr(conv, "compat", "trec_eval10") == "trec_eval9":
        return "trec9"
    return spec.param("rounding", conv)


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
        return float(_sequential_sum(values[ok]) / np.count_nonzero(ok)) if ok.any() else float("nan")
    return float(_sequential_sum(values) / len(values))


def trec_order(R: RankedLists) -> np.ndarray:
    """Indexes of the evaluated queries in trec_eval's order (query ids as strings)."""
    key = ("trec_order",)
    if key not in R._cache:
        R._cache[key] = string_order(R.query_ids)
    return R._cache[key]


def missing_mask(R: RankedLists) -> np.ndarray:
    """True for the evaluated queries that are absent from the run (scored as empty)."""
    key = ("missing",)
    if key not in R._cache:
        gone = R.diagnostics.missing_queries
        if gone and R.n_queries:
            ids = pa.array(list(R.query_ids), type=pa.string())
            R._cache[key] = pc.is_in(ids, value_set=pa.array(gone, type=pa.string())).to_numpy(
                zero_copy_only=False)
        else:
            R._cache[key] = np.zeros(R.n_queries, dtype=bool)
    return R._cache[key]


def summarize(R: RankedLists, spec: MeasureSpec, values: np.ndarray, conv: Conventions) -> float:
    """The summary over queries that trec_eval prints as ``all`` (see :func:`summary`)."""
    return summary(values, spec, R.query_ids, conv, missing=missing_mask(R),
                   positive_labels=int(np.count_nonzero(R.qrels_label > 0)), order=trec_order(R))


def summary(values: np.ndarray, spec: MeasureSpec, query_ids, conv: Conventions, missing=None,
            positive_labels: int | None = None, order=None) -> float:
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
    if getattr(conv, "compat", "trec_eval10") != "trec_eval9" or conv.missing_queries != "zero":
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


# --- the rest of trec_eval 10's measures ---------------------------------------------------
# Each equals trec_eval 10.0 per query at full precision: sums are added in the order the C
# loops add them (rank order; ``np.bincount`` and ``np.cumsum`` along a row add
# sequentially), and every expression keeps trec_eval's order of operations.

INFAP_EPSILON = 1e-5  # trec_eval's smoothing constant of infAP


def _segment_layout(seg: np.ndarray):
    """(group of each entry, index within its group, groups' first entries) for entries
    grouped by ``seg`` (equal values adjacent)."""
    n = len(seg)
    if not n:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    first = np.r_[True, seg[1:] != seg[:-1]]
    heads = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    within = np.arange(n) - heads[group]
    return group, within, heads


def _seg_cumsum(seg: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Running sums of ``vals`` within each run of equal ``seg``, added left to right.

    Exactly the sums a C loop accumulates (a cumulative sum over all queries minus an
    offset would round differently): the groups are laid out as rows of a zero-padded
    matrix and summed along the rows (``np.cumsum`` along an axis adds sequentially; the
    padding adds exact zeros). In blocks of rows, so the matrix stays small.
    """
    return _seg_accumulate(seg, vals, np.add, 0.0)


def _seg_accumulate(seg: np.ndarray, vals: np.ndarray, op, pad: float) -> np.ndarray:
    """``op.accumulate`` of ``vals`` within each run of equal ``seg`` (``pad``: op's
    identity), row by row of a padded matrix built in blocks."""
    vals = np.asarray(vals, dtype=np.float64)
    out = np.empty(len(vals), dtype=np.float64)
    if not len(vals):
        return out
    group, within, heads = _segment_layout(seg)
    width = int(within.max()) + 1
    step = max(1, (1 << 22) // width)  # groups per block
    for g0 in range(0, len(heads), step):
        g1 = min(len(heads), g0 + step)
        lo, hi = heads[g0], (heads[g1] if g1 < len(heads) else len(seg))
        mat = np.full((g1 - g0, width), pad, dtype=np.float64)
        mat[group[lo:hi] - g0, within[lo:hi]] = vals[lo:hi]
        op.accumulate(mat, axis=1, out=mat)
        out[lo:hi] = mat[group[lo:hi] - g0, within[lo:hi]]
    return out


def _seg_powers(p: float, count: int) -> np.ndarray:
    """1, p, p*p, ... (``count`` values) by repeated multiplication, as trec_eval's loop."""
    if count <= 0:
        return np.ones(1, dtype=np.float64)
    steps = np.full(count, p, dtype=np.float64)
    steps[0] = 1.0
    return np.cumprod(steps)


def _pooled_unjudged_rows(R: RankedLists) -> np.ndarray:
    """Retrieved rows judged with a negative label: trec_eval's "pooled but unjudged"."""
    jr = R.judged_rows
    return jr[R.label[jr] < 0]


def _judged_nonneg_rows(R: RankedLists) -> np.ndarray:
    """Retrieved rows judged with a label >= 0 (trec_eval's judged documents)."""
    jr = R.judged_rows
    return jr[R.label[jr] >= 0]


@measure("infAP", "inferred average precision: AP estimated from a sampled judgement pool",
         params=("rel",), aliases=("infap", "inferred_ap"), trec=("infAP",),
         formula=r"infAP = \frac{1}{R}\sum_{r} \Big(\frac{1}{j+1} + \frac{j}{j+1}\cdot"
                 r"\frac{|d_{<j}|}{j}\cdot\frac{r_{<j}+\epsilon}{r_{<j}+n_{<j}+2\epsilon}\Big)",
         edge_cases=("Documents absent from the qrels are outside the pool: skipped.",
                     "A negative label (-2 by convention, any negative in trec_eval) marks a pooled "
                     "but unjudged document: counted among the documents above, not as relevant "
                     "or non-relevant.",
                     "A relevant document at rank 1 adds 1; epsilon = 1e-5 (trec_eval).",
                     "No relevant document: 0. With every document judged, infAP is close to AP "
                     "(not equal: the smoothing epsilon)."),
         reference="E. Yilmaz, J. A. Aslam, Estimating average precision with incomplete and "
                   "imperfect judgments, CIKM 2006. " + TREC_EVAL.format("infAP"),
         example=_example("infAP", (1 + 1 / 3 + (2 / 3) * 1.0 * ((1 + 1e-5) / (2 + 2e-5))) / 3,
                          _SHARED + " d1 adds 1; d3 (j = 2) adds 1/3 + (2/3)(2/2)(1+eps)/(2+2 eps); "
                          "divided by R = 3."),
         common=("infAP",), value_range=(0.0, None))
def inferred_ap(R, spec, conv):
    """infAP (Yilmaz & Aslam, 2006), as trec_eval computes it.

    Unjudged documents (not in the qrels) are skipped; documents judged with a negative
    label (``-2`` by convention) are pooled but unjudged. For the relevant document at
    0-based rank ``j`` > 0, with ``r`` relevant, ``n`` non-relevant and ``u`` pooled-
    unjudged documents above it:
    ``1/(j+1) + (j/(j+1)) * ((r + n + u)/j) * ((r + eps)/(r + n + 2 eps))``
    (1 at ``j`` = 0), ``eps`` = 1e-5; the sum is divided by R (0 when R = 0).
    """
    thr = _threshold(spec, conv)
    rows = R.relevant_rows(thr)
    r_above = (R.count_upto(rows, rows) - 1).astype(np.float64)
    n_above = R.count_upto(R.judged_nonrelevant_rows(thr), rows).astype(np.int64)
    u_above = R.count_upto(_pooled_unjudged_rows(R), rows).astype(np.int64)
    fj = (R.pos_of(rows) - 1).astype(np.float64)
    above = (r_above.astype(np.int64) + n_above + u_above).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (above / fj) * (
            (r_above + INFAP_EPSILON) / (r_above + n_above + 2 * INFAP_EPSILON))
    term = np.where(fj == 0, 1.0, term)
    total = np.bincount(R.seg[rows], weights=term, minlength=R.n_queries)
    return _safe_div(total, R.num_rel(thr))


def _level_gains(R: RankedLists, rows: np.ndarray) -> np.ndarray:
    """trec_eval's default gain of retrieved rows: the label, 0 for negative labels."""
    lab = R.label[rows].astype(np.float64)
    return np.where(lab > 0, lab, 0.0)


@measure("RBP", "rank-biased precision: gain of a user who goes on with persistence p",
         params=("p",), aliases=("rbp",), trec=("rbp",),
         formula=r"RBP = (1-p)\sum_{i} g_i\, p^{\,i-1}",
         edge_cases=("Gains are the labels, divided by the query's highest label when that is above 1 "
                     "(trec_eval); the relevance threshold does not apply.",
                     "Unjudged documents and negative labels gain 0.",
                     "p = 0.9 by default (RBP(p=0.95) for a more patient user)."),
         reference="A. Moffat, J. Zobel, Rank-biased precision for measurement of retrieval "
                   "effectiveness, ACM TOIS 27(1), 2008. " + TREC_EVAL.format("rbp"),
         example=_example("RBP", 0.1 * (1 + 0.81), _SHARED + " (1 - 0.9)(1 + 0.9^2)."),
         common=("RBP", "RBP(p=0.95)"))
def rank_biased_precision(R, spec, conv):
    """RBP (Moffat & Zobel, 2008) = (1 - p) * sum_i g_i * p^(i-1), p the persistence.

    Gains are the labels (trec_eval's ``rbp``, which ignores the relevance threshold),
    scaled to [0, 1] by the query's highest label when that exceeds 1; unjudged and
    negative labels gain 0.
    """
    p = float(spec.param("p", conv))
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    seg = R.seg[rows]
    gain = R.label[rows].astype(np.float64)
    # the query's highest label in the qrels: levels 0..max are trec_eval's gains
    ok = R.qrels_label >= 0
    top = np.zeros(R.n_queries, dtype=np.float64)
    np.maximum.at(top, R.qrels_seg[ok], np.floor(R.qrels_label[ok]).astype(np.float64))
    scale = top[seg]
    big = scale > 1
    gain = np.where(big, (gain - 0.0) / np.where(big, scale - 0.0, 1.0), gain)
    pw = _seg_powers(p, int(R.counts.max()) if R.n_queries else 0)
    w = gain * pw[R.pos_of(rows) - 1]
    return (1.0 - p) * np.bincount(seg, weights=w, minlength=R.n_queries)


@measure("RBPResid", "RBP residual: how much RBP could still rise from unjudged documents",
         params=("p",), aliases=("rbp_resid", "rbp_residual"), trec=("rbp_resid",),
         formula=r"RBP_{resid} = p^{\,n} + (1-p)\sum_{i\ \mathrm{unjudged}} p^{\,i-1}",
         edge_cases=("Unjudged: absent from the qrels, or a negative label.",
                     "No unjudged document retrieved: 0 (trec_eval), even though the ranking's tail "
                     "p^n is uncertain too.",
                     "A query absent from the run: 0."),
         reference="A. Moffat, J. Zobel, Rank-biased precision for measurement of retrieval "
                   "effectiveness, ACM TOIS 27(1), 2008. " + TREC_EVAL.format("rbp_resid"),
         example=Example({"q1": {"d1": 1, "d3": 0}}, RUN, "RBPResid", 0.9 ** 3 + 0.1 * 0.9,
                         "Ranking d1, d2, d3; d2 unjudged: 0.9^3 + (1 - 0.9) 0.9."),
         common=("RBPResid",))
def rbp_residual(R, spec, conv):
    """RBP residual: the most RBP could rise if every unjudged retrieved document had
    gain 1 and the ranking continued with such documents: ``p^n + (1-p) * sum over
    unjudged i of p^(i-1)`` (``n`` retrieved); 0 when no retrieved document is unjudged
    (trec_eval ``rbp_resid``)."""
    p = float(spec.param("p", conv))
    pw = _seg_powers(p, int(R.counts.max()) + 1 if R.n_queries else 1)
    unj = _unjudged_mask_rows(R)
    seg = R.seg[unj]
    s = np.bincount(seg, weights=pw[R.pos_of(unj) - 1], minlength=R.n_queries)
    n_unj = np.bincount(seg, minlength=R.n_queries)
    out = pw[R.counts] + (1 - p) * s
    return np.where(n_unj > 0, out, 0.0)


def _unjudged_mask_rows(R: RankedLists) -> np.ndarray:
    """Retrieved rows that trec_eval counts as unjudged: not in the qrels, or judged with
    a negative label; ascending."""
    keep = np.ones(len(R.seg), dtype=bool)
    keep[_judged_nonneg_rows(R)] = False
    return np.flatnonzero(keep)


@measure("Unjudged", "fraction of the top k that is unjudged", cutoff="required",
         aliases=("unj",), trec=("unj_{k}",),
         formula=r"Unjudged@k = \frac{|\mathrm{unjudged} \cap \mathrm{top}_k|}{k}",
         edge_cases=("Unjudged: absent from the qrels, or judged with a negative label (trec_eval).",
                     "Fewer than k retrieved: the missing ranks count as judged; divides by k.",
                     "A query absent from the run: 0."),
         reference=TREC_EVAL.format("unj") + " A red flag for holes in the judgements.",
         example=Example({"q1": {"d1": 1, "d3": 0}}, RUN, "Unjudged@3", 1 / 3,
                         "Ranking d1, d2, d3; d2 is not judged: 1/3."),
         common=("Unjudged@10",))
def unjudged(R, spec, conv):
    """unj_k: unjudged documents (absent from the qrels or negative label) in the top k,
    divided by k (trec_eval ``unj``)."""
    k = spec.cutoff
    in_top = np.minimum(R.counts, k)
    return (in_top - R.count_top(_judged_nonneg_rows(R), k)) / float(k)


@measure("RprecMult", "precision at a multiple x of R (x R documents)", params=("rel", "x"),
         aliases=("rprec_mult",), trec=("Rprec_mult_{x}",),
         formula=r"RprecMult(x) = P@c,\; c = \lfloor x R + 0.9 \rfloor",
         edge_cases=("trec_eval prints it as Rprec_mult_x (x from 0.2 to 2.0 by default); "
                     "Rprec_mult_0.20 is read as RprecMult(x=0.2).",
                     "c = 0 (no relevant document): 0; fewer than c retrieved: still divided by c."),
         reference=TREC_EVAL.format("Rprec_mult"),
         example=_example("RprecMult(x=2)", 2 / 6, _SHARED + " c = floor(2 * 3 + 0.9) = 6: 2/6."),
         common=("RprecMult(x=1)", "RprecMult(x=2)"))
def rprec_mult(R, spec, conv):
    """Rprec_mult_x: precision at rank c = floor(x * R + 0.9) (trec_eval ``Rprec_mult``,
    precision at a multiple of R); 0 when c = 0."""
    thr = _threshold(spec, conv)
    x = float(spec.param("x", conv))
    c = np.floor(x * R.num_rel(thr).astype(np.float64) + 0.9).astype(np.int64)
    rows = R.relevant_rows(thr)
    first = R.starts[:-1]
    end = first + np.minimum(R.counts, c)
    hits = np.searchsorted(rows, end) - np.searchsorted(rows, first)
    return _safe_div(hits, c)


@measure("Utility", "set utility: weighted counts of the retrieved and missed documents",
         params=("rel", "a", "b", "c", "d"), aliases=("utility",), trec=("utility",),
         formula=r"U = a\,|rel \cap ret| + b\,|nonrel \cap ret| + c\,|rel \setminus ret| + d\,|nonrel \setminus ret|",
         edge_cases=("Defaults a = 1, b = -1, c = 0, d = 0 (trec_eval).",
                     "Unjudged retrieved documents count as non-relevant.",
                     "d needs the collection size (num_docs convention, trec_eval -N).",
                     "A query absent from the run: 0."),
         reference=TREC_EVAL.format("utility"),
         example=_example("Utility", 2.0 - 1.0, _SHARED + " 2 relevant retrieved, 1 non-relevant: 2 - 1."),
         common=("Utility",), value_range=(-math.inf, None))
def utility(R, spec, conv):
    """Set utility ``a * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret``
    (trec_eval ``utility``; defaults a=1, b=-1, c=0, d=0). ``nonrel_not_ret`` needs the
    collection size (``num_docs``, trec_eval ``-N``). 0 for a query absent from the run."""
    thr = _threshold(spec, conv)
    a, b, c, d = (float(spec.param(k, conv)) for k in ("a", "b", "c", "d"))
    nrr = _hits_top(R, thr, None).astype(np.float64)
    ret = R.counts.astype(np.float64)
    rel = R.num_rel(thr).astype(np.float64)
    n_docs = float(getattr(conv, "num_docs", 0) or 0)
    out = a * nrr + b * (ret - nrr) + c * (rel - nrr) + d * (n_docs + nrr - ret - rel)
    return np.where(R.counts > 0, out, 0.0)


@measure("IPrecAvg", "interpolated precision averaged over 11 recall levels (0.0 to 1.0)",
         params=("rel",), aliases=("11pt_avg", "11pt"), trec=("11pt_avg",),
         formula=r"\frac{1}{11}\sum_{r \in \{0, 0.1, \dots, 1\}} IPrec@r",
         edge_cases=("The recall levels round as IPrec's (trec_eval 10; trec_eval 9 under "
                     "compat=trec_eval9).",
                     "An older summary of the precision-recall curve; AP is the usual choice now."),
         reference=IIR + " (section 8.4). " + TREC_EVAL.format("11pt_avg"),
         example=_example("IPrecAvg", (5 * 1.0 + 4 * (2 / 3)) / 11,
                          _SHARED + " c = round(3 r): IPrec is 1 at levels 0 to 0.4 (c <= 1), 2/3 at "
                          "0.5 to 0.8 (c = 2), 0 at 0.9 and 1.0 (c = 3 is not reached)."),
         common=("IPrecAvg",), perfect=1.0)
def eleven_point_average(R, spec, conv):
    """11pt_avg: mean of IPrec at recall 0.0, 0.1, ..., 1.0 (trec_eval ``11pt_avg``),
    added from 1.0 down as trec_eval adds them."""
    total = np.zeros(R.n_queries, dtype=np.float64)
    for level in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0):
        total = total + interpolated_precision(R, _Derived(spec, level), conv)
    return total / 11.0


class _Derived:
    """A spec with another cutoff (for measures built from another measure)."""

    def __init__(self, spec, cutoff):
        self._spec, self.cutoff = spec, cutoff

    def param(self, key, conv):
        return self._spec.param(key, conv)


@measure("BinG", "binary G: each relevant document discounted by the non-relevant ones above it",
         params=("rel",), aliases=("bing",), trec=("binG",),
         formula=r"binG = \frac{1}{R}\sum_{r} \frac{1}{\log_2(2 + n_{<r})}",
         edge_cases=("Unjudged documents count as non-relevant.", "No relevant document: 0."),
         reference=TREC_EVAL.format("binG") + " (experimental, 2008).",
         example=_example("BinG", (1 + 1 / math.log2(3)) / 3, _SHARED + " d1: 1/log2(2); d3: one "
                          "non-relevant above, 1/log2(3); divided by 3."),
         common=("BinG",), perfect=1.0)
def binary_g(R, spec, conv):
    """binG: (1/R) * sum over retrieved relevant of 1 / log2(2 + non-relevant above it)
    (trec_eval ``binG``; unjudged documents count as non-relevant)."""
    thr = _threshold(spec, conv)
    rows = R.relevant_rows(thr)
    above = R.pos_of(rows) - R.count_upto(rows, rows)
    w = 1.0 / np.log2((2 + above).astype(np.float64))
    total = np.bincount(R.seg[rows], weights=w, minlength=R.n_queries)
    return _safe_div(total, R.num_rel(thr))


def _ideal_prefix(R: RankedLists):
    """Per query, the ideal ranking's gains (positive labels, descending) with their
    running sums: (seg, label, pos, first index of each query's block, count per query)."""
    seg, lab, pos = _ideal_ranking(R, "qrels")
    n_pos = np.bincount(seg, minlength=R.n_queries)
    head = np.concatenate(([0], np.cumsum(n_pos)))[:-1]
    return seg, lab.astype(np.float64), pos, head, n_pos


def _at_ideal(values: np.ndarray, head, n_pos, seg, t, default_total):
    """values[head[seg] + t - 1] for 1 <= t <= n_pos[seg]; ``default_total`` beyond."""
    inside = (t >= 1) & (t <= n_pos[seg])
    idx = np.where(inside, head[seg] + t - 1, 0)
    return np.where(inside, values[idx] if len(values) else 0.0, default_total)


@measure("G", "normalised gain G: each document's gain discounted by the gain still missing",
         aliases=("g",), trec=("G",),
         formula=r"G = \frac{1}{\sum g^*}\sum_i \frac{g_i}{\log_2(2 + C_i - S_i)}",
         edge_cases=("g_i is the label (negative labels and unjudged: 0); S_i the gain retrieved up to "
                     "rank i; C_i the sum up to rank i of max(ideal gain, 1).",
                     "No positive label: 0."),
         reference=TREC_EVAL.format("G") + " (experimental, 2008).",
         example=_example("G", (1 / math.log2(2 + 1 - 1) + 1 / math.log2(2 + 3 - 2)) / 3,
                          _SHARED + " d1: C=1, S=1; d3: C=3, S=2; ideal gain 3."),
         common=("G",))
def normalized_g(R, spec, conv):
    """G (trec_eval's experimental gain measure): sum over retrieved documents of
    gain_i / log2(2 + C_i - S_i), divided by the total ideal gain; ``S_i`` is the gain
    retrieved up to rank i, ``C_i`` the sum up to rank i of max(ideal gain, 1)."""
    iseg, ilab, ipos, head, n_pos = _ideal_prefix(R)
    cost = _seg_cumsum(iseg, np.where(ilab >= 1.0, ilab, 1.0))
    cost_total = np.bincount(iseg, weights=np.where(ilab >= 1.0, ilab, 1.0), minlength=R.n_queries)
    ideal_total = np.bincount(iseg, weights=ilab, minlength=R.n_queries)
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    seg = R.seg[rows]
    gain = R.label[rows].astype(np.float64)
    s = _seg_cumsum(seg, gain)
    pos = R.pos_of(rows)
    c = _at_ideal(cost, head, n_pos, seg, pos, 0.0)
    beyond = pos > n_pos[seg]
    c = np.where(beyond, cost_total[seg] + (pos - n_pos[seg]), c)
    w = gain / np.log2(2 + c - s)
    total = np.bincount(seg, weights=w, minlength=R.n_queries)
    return _safe_div(total, ideal_total)


def _dcg_prefix(R: RankedLists):
    """Rows with a positive label, their query and running DCG (gain / log2(rank + 1))."""
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    seg = R.seg[rows]
    pos = R.pos_of(rows)
    d = _seg_cumsum(seg, R.label[rows].astype(np.float64) / np.log2((pos + 1).astype(np.float64)))
    return rows, seg, pos, d


def _dcg_upto(R: RankedLists, rows, d, q, t):
    """DCG of the top t of queries q from the running sums ``d`` at ``rows``."""
    lim = R.starts[q] + np.minimum(t, R.counts[q])
    idx = np.searchsorted(rows, lim) - 1
    ok = (idx >= 0) & (idx >= np.searchsorted(rows, R.starts[q])) & (len(rows) > 0)
    return np.where(ok, d[np.maximum(idx, 0)] if len(d) else 0.0, 0.0)


@measure("nDCGRel", "nDCG averaged over the relevant documents",
         aliases=("ndcg_rel",), trec=("ndcg_rel",),
         formula=r"\frac{1}{|g > 0|}\Big(\sum_{r\ \mathrm{ret}} nDCG@\mathrm{rank}(r) + "
                 r"|\mathrm{missed}|\, \frac{DCG}{IDCG}\Big)",
         edge_cases=("Relevant here: a positive label (whatever the threshold).",
                     "Each relevant document not retrieved adds the whole ranking's DCG / IDCG.",
                     "No positive label: 0."),
         reference=TREC_EVAL.format("ndcg_rel") + " (experimental); nDCG after K. Jarvelin, "
                   "J. Kekalainen, ACM TOIS 20(4), 2002.",
         example=_example("nDCGRel", (1.0 + 1.5 / (1 + 1 / math.log2(3) + 0.5)
                                      + 1.5 / (1 + 1 / math.log2(3) + 0.5)) / 3,
                          _SHARED + " nDCG@1 = 1 at d1, nDCG@3 at d3, and d4 (missed) adds DCG/IDCG."),
         common=("nDCGRel",), perfect=1.0)
def ndcg_rel(R, spec, conv):
    """ndcg_rel: nDCG averaged over the documents with positive gain -- at each such
    retrieved document the nDCG at its rank, for each such document not retrieved the
    nDCG of the whole ranking (trec_eval ``ndcg_rel``)."""
    iseg, ilab, ipos, head, n_pos = _ideal_prefix(R)
    idcg = _seg_cumsum(iseg, ilab / np.log2((ipos + 1).astype(np.float64)))
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


@measure("RnDCG", "nDCG averaged at the R levels (ranks where the ideal gain changes)",
         params=("rel",), aliases=("rndcg",), trec=("Rndcg",),
         formula=r"\frac{1}{|B|}\sum_{b \in B} \frac{DCG@b}{IDCG@b}",
         edge_cases=("B: every rank after which the ideal ranking's gain drops (the last positive "
                     "label included), and the end of a ranking longer than the positive labels "
                     "plus one (trec_eval's rule).",
                     "No relevant document: 0."),
         reference=TREC_EVAL.format("Rndcg") + " (experimental); nDCG after K. Jarvelin, "
                   "J. Kekalainen, ACM TOIS 20(4), 2002.",
         example=_example("RnDCG", 1.5 / (1 + 1 / math.log2(3) + 0.5),
                          _SHARED + " One gain level (3 documents): B = {3}, nDCG@3."),
         common=("RnDCG",), perfect=1.0)
def r_ndcg(R, spec, conv):
    """Rndcg: nDCG averaged at the R levels -- the ranks where the ideal ranking's gain
    changes (the last positive gain included), and at the end of a ranking longer than
    the positive judgements plus one (trec_eval ``Rndcg``). 0 when R = 0."""
    thr = _threshold(spec, conv)
    iseg, ilab, ipos, head, n_pos = _ideal_prefix(R)
    idcg = _seg_cumsum(iseg, ilab / np.log2((ipos + 1).astype(np.float64)))
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
    order = np.lexsort((np.r_[np.zeros(int(bmask.sum()), dtype=np.int8), np.ones(len(eq), dtype=np.int8)], bq))
    bq, bt, ideal_b = bq[order], bt[order], ideal_b[order]
    rows, seg, pos, d = _dcg_prefix(R)
    num = _dcg_upto(R, rows, d, bq, bt)
    good = ideal_b > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(good, num / ideal_b, 0.0)
    total = np.bincount(bq, weights=w, minlength=R.n_queries)
    count = np.bincount(bq[good], minlength=R.n_queries)
    out = _safe_div(total, count)
    return np.where(R.num_rel(thr) > 0, out, 0.0)


@measure("RelP", "relative precision: relevant in the top k over the most possible, min(k, R)",
         cutoff="required", params=("rel",), aliases=("relative_p",), trec=("relative_P_{k}",),
         formula=r"RelP@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{\min(k, R)}",
         edge_cases=("Precision up to k = R, recall beyond.", "No relevant document: 0."),
         reference=TREC_EVAL.format("relative_P"),
         example=_example("RelP@2", 1 / 2, _SHARED + " one relevant in the top 2, min(2, 3) = 2."),
         common=("RelP@10",))
def relative_precision(R, spec, conv):
    """relative_P_k: relevant in the top k divided by min(k, R); 0 when R = 0
    (trec_eval ``relative_P``: precision up to R, recall after)."""
    thr = _threshold(spec, conv)
    k = spec.cutoff
    nr = R.num_rel(thr)
    return _safe_div(_hits_top(R, thr, k), np.minimum(nr, k))


@measure("SetRelP", "relevant retrieved over the most possible for the set's size",
         params=("rel",), aliases=("set_relative_p",), trec=("set_relative_P",),
         formula=r"\frac{|\mathrm{rel} \cap \mathrm{ret}|}{\min(|\mathrm{ret}|, R)}",
         edge_cases=("Nothing retrieved or no relevant document: 0.",),
         reference=TREC_EVAL.format("set_relative_P"),
         example=_example("SetRelP", 2 / 3, _SHARED + " 2 relevant of min(3, 3)."),
         common=("SetRelP",))
def set_relative_precision(R, spec, conv):
    """set_relative_P: relevant retrieved / min(retrieved, R)."""
    thr = _threshold(spec, conv)
    return _safe_div(_hits_top(R, thr, None), np.minimum(R.counts, R.num_rel(thr)))


@measure("SetAP", "set average precision: set precision times set recall",
         params=("rel",), aliases=("set_map",), trec=("set_map",),
         formula=r"\frac{|\mathrm{rel} \cap \mathrm{ret}|^2}{|\mathrm{ret}|\, R}",
         edge_cases=("Nothing retrieved or no relevant document: 0.",),
         reference=TREC_EVAL.format("set_map"),
         example=_example("SetAP", 4 / 9, _SHARED + " (2/3)(2/3)."),
         common=("SetAP",))
def set_map(R, spec, conv):
    """set_map: relevant retrieved squared / (retrieved * R) (set precision times set
    recall); 0 when either is 0."""
    thr = _threshold(spec, conv)
    h = _hits_top(R, thr, None).astype(np.float64)
    return _safe_div(h * h, R.counts.astype(np.float64) * R.num_rel(thr).astype(np.float64))


@measure("SetF", "F measure of the retrieved set (beta weighs recall)", params=("rel", "beta"),
         aliases=("set_f",), trec=("set_F",),
         formula=r"F_\beta = \frac{(\beta + 1) P R}{\beta P + R}",
         edge_cases=("trec_eval's form: beta (default 1) multiplies P, not beta squared.",
                     "No relevant document retrieved: 0."),
         reference="C. J. van Rijsbergen, Information Retrieval, Butterworths, 1979. "
                   + TREC_EVAL.format("set_F"),
         example=_example("SetF", 2 / 3, _SHARED + " P = R = 2/3."),
         common=("SetF",))
def set_f(R, spec, conv):
    """set_F: (beta + 1) P R / (beta P + R) over the retrieved set (van Rijsbergen's F
    with beta the relative importance of recall; trec_eval ``set_F``); 0 with no
    relevant retrieved."""
    thr = _threshold(spec, conv)
    x = float(spec.param("beta", conv))
    h = _hits_top(R, thr, None)
    p = _safe_div(h, R.counts)
    r = _safe_div(h, R.num_rel(thr))
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (x + 1.0) * p * r / (x * p + r)
    return np.where(h > 0, f, 0.0)


@measure("NumNonRelJudgedRet", "number of judged non-relevant documents retrieved", params=("rel",),
         aggregate="sum", integer=True, aliases=("num_nonrel_judged_ret",),
         trec=("num_nonrel_judged_ret",), formula=r"|\mathrm{nonrel} \cap \mathrm{ret}|",
         edge_cases=("Judged with 0 <= label < threshold; negative labels are not counted.",
                     "Summed over queries."),
         reference=TREC_EVAL.format("num_nonrel_judged_ret"),
         example=_example("NumNonRelJudgedRet", 1.0), common=("NumNonRelJudgedRet",),
         value_range=(0.0, None))
def num_nonrel_judged_ret(R, spec, conv):
    """Judged non-relevant documents retrieved (labels 0 <= l < threshold)."""
    thr = _threshold(spec, conv)
    return np.bincount(R.seg[R.judged_nonrelevant_rows(thr)], minlength=R.n_queries).astype(np.float64)


@measure("ERR", "expected reciprocal rank: a cascade user stops at a satisfying document",
         cutoff="optional", params=("max_grade",), aliases=("err",),
         formula=r"ERR@k = \sum_{i \le k} \frac{1}{i} R_i \prod_{j < i} (1 - R_j),\; "
                 r"R_i = \frac{2^{g_i} - 1}{2^{g_{max}}}",
         edge_cases=("Grades are the labels; negative labels and unjudged documents are 0, labels "
                     "above max_grade (default 4) count as max_grade.",
                     "Not normalised: a perfect ranking scores below 1."),
         reference="O. Chapelle, D. Metzler, Y. Zhang, P. Grinspan, Expected reciprocal rank for "
                   "graded relevance, CIKM 2009.",
         example=_example("ERR(max_grade=1)", 0.5 + (1 / 3) * 0.5 * 0.5,
                          _SHARED + " With max_grade 1, R = 1/2 for a relevant document: "
                          "1/2 at rank 1, then (1/3)(1/2)(1/2) at rank 3."),
         common=("ERR@20",), cut_invariant=True)
def expected_reciprocal_rank(R, spec, conv):
    """ERR@k (Chapelle, Metzler, Zhang & Grinspan, 2009).

    ``ERR@k = sum_{i<=k} (1/i) * R_i * prod_{j<i} (1 - R_j)`` with the stopping
    probability ``R_i = (2^g_i - 1) / 2^g_max`` of grade ``g_i`` (labels below 0 count
    as 0, labels above ``max_grade`` as ``max_grade``); ``max_grade`` defaults to 4.
    """
    g_max = float(spec.param("max_grade", conv))
    k = spec.cutoff
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    pos = R.pos_of(rows)
    if k is not None:
        keep = pos <= k
        rows, pos = rows[keep], pos[keep]
    seg = R.seg[rows]
    g = np.minimum(R.label[rows].astype(np.float64), g_max)
    stop = (np.exp2(g) - 1.0) / np.exp2(g_max)
    # probability of reaching each row: the product of (1 - R_j) over the rows above
    # with a positive grade (the others have R_j = 0), as a running sum of logs would
    # lose exactness -- a running product within each query
    keep_going = 1.0 - stop
    reach = _seg_cumprod_exclusive(seg, keep_going)
    w = reach * stop / pos
    return np.bincount(seg, weights=w, minlength=R.n_queries)


def _seg_cumprod_exclusive(seg: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Product of the earlier ``vals`` of the same group (1 for a group's first)."""
    out = np.ones(len(vals), dtype=np.float64)
    if not len(vals):
        return out
    inclusive = _seg_accumulate(seg, vals, np.multiply, 1.0)
    _, within, _ = _segment_layout(seg)
    prev = np.flatnonzero(within > 0)
    out[prev] = inclusive[prev - 1]
    return out
