"""Inferred AP, rank-biased precision and its residual (trec_eval 10's infAP, rbp)."""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import Example, measure
from metrics_core.ranking.kernels import safe_div, seg_powers
from metrics_core.ranking.measures.common import (
    RUN,
    TREC_EVAL,
    pooled_unjudged_rows,
    shared_example,
    threshold_of,
    unjudged_mask_rows,
)

# --- the rest of trec_eval 10's measures ---------------------------------------------------
# Each equals trec_eval 10.0 per query at full precision: sums are added in the order the C
# loops add them (rank order; ``np.bincount`` and ``np.cumsum`` along a row add
# sequentially), and every expression keeps trec_eval's order of operations.

INFAP_EPSILON = 1e-5  # trec_eval's smoothing constant of infAP


@measure(
    "infAP",
    N_("inferred average precision: AP estimated from a sampled judgement pool"),
    better="higher",
    params=("rel",),
    aliases=("infap", "inferred_ap"),
    trec=("infAP",),
    formula=r"infAP = \frac{1}{R}\sum_{r} \Big(\frac{1}{j+1} + \frac{j}{j+1}\cdot"
    r"\frac{|d_{<j}|}{j}\cdot\frac{r_{<j}+\epsilon}{r_{<j}+n_{<j}+2\epsilon}\Big)",
    edge_cases=(
        N_("Documents absent from the qrels are outside the pool: skipped."),
        N_(
            "A negative label (-2 by convention, any negative in trec_eval) marks a pooled "
            "but unjudged document: counted among the documents above, not as relevant "
            "or non-relevant."
        ),
        N_("A relevant document at rank 1 adds 1; epsilon = 1e-5 (trec_eval)."),
        N_(
            "No relevant document: 0. With every document judged, infAP is close to AP "
            "(not equal: the smoothing epsilon)."
        ),
    ),
    reference=(
        "E. Yilmaz, J. A. Aslam, Estimating average precision with incomplete and "
        "imperfect judgments, CIKM 2006.",
        TREC_EVAL.format("infAP"),
    ),
    example=shared_example(
        "infAP",
        (1 + 1 / 3 + (2 / 3) * 1.0 * ((1 + 1e-5) / (2 + 2e-5))) / 3,
        N_("d1 adds 1; d3 (j = 2) adds 1/3 + (2/3)(2/2)(1+eps)/(2+2 eps); divided by R = 3."),
    ),
    common=("infAP",),
    value_range=(0.0, None),
)
def inferred_ap(R, spec, conv):
    """infAP (Yilmaz & Aslam, 2006), as trec_eval computes it.

    Unjudged documents (not in the qrels) are skipped; documents judged with a negative
    label (``-2`` by convention) are pooled but unjudged. For the relevant document at
    0-based rank ``j`` > 0, with ``r`` relevant, ``n`` non-relevant and ``u`` pooled-
    unjudged documents above it:
    ``1/(j+1) + (j/(j+1)) * ((r + n + u)/j) * ((r + eps)/(r + n + 2 eps))``
    (1 at ``j`` = 0), ``eps`` = 1e-5; the sum is divided by R (0 when R = 0).
    """
    thr = threshold_of(spec, conv)
    rows = R.relevant_rows(thr)
    r_above = (R.count_upto(rows, rows) - 1).astype(np.float64)
    n_above = R.count_upto(R.judged_nonrelevant_rows(thr), rows).astype(np.int64)
    u_above = R.count_upto(pooled_unjudged_rows(R), rows).astype(np.int64)
    fj = (R.pos_of(rows) - 1).astype(np.float64)
    above = (r_above.astype(np.int64) + n_above + u_above).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (above / fj) * (
            (r_above + INFAP_EPSILON) / (r_above + n_above + 2 * INFAP_EPSILON)
        )
    term = np.where(fj == 0, 1.0, term)
    total = np.bincount(R.seg[rows], weights=term, minlength=R.n_queries)
    return safe_div(total, R.num_rel(thr))


@measure(
    "RBP",
    N_("rank-biased precision: gain of a user who goes on with persistence p"),
    better="higher",
    params=("p", "scale"),
    aliases=("rbp",),
    trec=("rbp",),
    formula=r"RBP = (1-p)\sum_{i} g_i\, p^{\,i-1}",
    edge_cases=(
        N_(
            "Gains are the labels, divided by the query's highest label when that is above 1 "
            "(trec_eval); the relevance threshold does not apply."
        ),
        N_("Unjudged documents and negative labels gain 0."),
        N_("p = 0.9 by default (RBP(p=0.95) for a more patient user)."),
    ),
    reference=(
        "A. Moffat, J. Zobel, Rank-biased precision for measurement of retrieval "
        "effectiveness, ACM TOIS 27(1), 2008.",
        TREC_EVAL.format("rbp"),
    ),
    example=shared_example("RBP", 0.1 * (1 + 0.81), N_("(1 - 0.9)(1 + 0.9^2).")),
    common=("RBP", "RBP(p=0.95)"),
)
def rank_biased_precision(R, spec, conv):
    """RBP (Moffat & Zobel, 2008) = (1 - p) * sum_i g_i * p^(i-1), p the persistence.

    Gains are the labels (trec_eval's ``rbp``, which ignores the relevance threshold),
    scaled to [0, 1] by the query's highest label when that exceeds 1 (``scale=none``: the
    label itself, as ranx's ``rbp.p``); unjudged and negative labels gain 0.
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
    if spec.param("scale", conv) == "none":  # ranx: the label itself is the gain
        big = np.zeros_like(big)
    gain = np.where(big, (gain - 0.0) / np.where(big, scale - 0.0, 1.0), gain)
    pw = seg_powers(p, int(R.counts.max()) if R.n_queries else 0)
    w = gain * pw[R.pos_of(rows) - 1]
    return (1.0 - p) * np.bincount(seg, weights=w, minlength=R.n_queries)


@measure(
    "RBPResid",
    N_("RBP residual: how much RBP could still rise from unjudged documents"),
    better=None,
    params=("p",),
    aliases=("rbp_resid", "rbp_residual"),
    trec=("rbp_resid",),
    formula=r"RBP_{resid} = p^{\,n} + (1-p)\sum_{i\ \mathrm{unjudged}} p^{\,i-1}",
    edge_cases=(
        N_("Unjudged: absent from the qrels, or a negative label."),
        N_(
            "No unjudged document retrieved: 0 (trec_eval), even though the ranking's tail "
            "p^n is uncertain too."
        ),
        N_("A query absent from the run: 0."),
    ),
    reference=(
        "A. Moffat, J. Zobel, Rank-biased precision for measurement of retrieval "
        "effectiveness, ACM TOIS 27(1), 2008.",
        TREC_EVAL.format("rbp_resid"),
    ),
    example=Example(
        {"q1": {"d1": 1, "d3": 0}},
        RUN,
        "RBPResid",
        0.9**3 + 0.1 * 0.9,
        N_("Ranking d1, d2, d3; d2 unjudged: 0.9^3 + (1 - 0.9) 0.9."),
    ),
    common=("RBPResid",),
)
def rbp_residual(R, spec, conv):
    """RBP residual: the most RBP could rise if every unjudged retrieved document had
    gain 1 and the ranking continued with such documents: ``p^n + (1-p) * sum over
    unjudged i of p^(i-1)`` (``n`` retrieved); 0 when no retrieved document is unjudged
    (trec_eval ``rbp_resid``)."""
    p = float(spec.param("p", conv))
    pw = seg_powers(p, int(R.counts.max()) + 1 if R.n_queries else 1)
    unj = unjudged_mask_rows(R)
    seg = R.seg[unj]
    s = np.bincount(seg, weights=pw[R.pos_of(unj) - 1], minlength=R.n_queries)
    n_unj = np.bincount(seg, minlength=R.n_queries)
    out = pw[R.counts] + (1 - p) * s
    return np.where(n_unj > 0, out, 0.0)
