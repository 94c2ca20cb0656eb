"""R-precision, bpref and its geometric mean (trec_eval Rprec, bpref, gm_bpref)."""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import measure
from metrics_core.ranking.kernels import safe_div
from metrics_core.ranking.measures.common import (
    IIR,
    TREC_EVAL,
    shared_example,
    threshold_of,
)


@measure(
    "Rprec",
    N_("precision at rank R (R = relevant documents of the query)"),
    better="higher",
    params=("rel",),
    aliases=("r-prec", "r_precision"),
    trec=("Rprec",),
    formula=r"Rprec = \frac{|\mathrm{rel} \cap \mathrm{top}_R|}{R}",
    edge_cases=(N_("R = 0: 0."), N_("Fewer than R retrieved: still divided by R.")),
    reference=(IIR, TREC_EVAL.format("Rprec")),
    example=shared_example("Rprec", 2 / 3, N_("R = 3; two relevant documents in the top 3.")),
    common=("Rprec",),
    perfect=1.0,
)
def r_precision(R, spec, conv):
    """Rprec: relevant in the top R, divided by R; 0 when R = 0 (trec_eval Rprec)."""
    thr = threshold_of(spec, conv)
    rows = R.relevant_rows(thr)
    num_rel = R.num_rel(thr)
    seg = R.seg[rows]
    within = R.pos_of(rows) <= num_rel[seg]
    return safe_div(np.bincount(seg[within], minlength=R.n_queries), num_rel)


@measure(
    "Bpref",
    N_("binary preference: relevant documents ranked above judged non-relevant ones"),
    better="higher",
    params=("rel",),
    trec=("bpref",),
    formula=r"bpref = \frac{1}{R}\sum_{r} \Big(1 - \frac{\min(n_{r}, R)}{\min(N, R)}\Big)",
    edge_cases=(
        N_("Only judged documents count: unjudged retrieved documents are skipped."),
        N_(
            "n_r counts judged non-relevant documents above the relevant document r; a term "
            "is 1 when n_r = 0."
        ),
        N_("R = 0: 0."),
    ),
    reference=(
        "C. Buckley, E. M. Voorhees, Retrieval evaluation with incomplete information, SIGIR 2004.",
        TREC_EVAL.format("bpref"),
    ),
    example=shared_example(
        "Bpref",
        1 / 3,
        N_(
            "d1 scores 1, d3 (one judged non-relevant above, N = 1) scores 0,"
            " d4 is not retrieved: 1/3."
        ),
    ),
    common=("Bpref",),
    perfect=1.0,
)
def bpref(R, spec, conv):
    """bpref = (1/R) * sum over retrieved relevant r of (1 - min(n_r, R) / min(N, R)).

    ``n_r`` counts judged non-relevant documents ranked above r; a term is 1 when
    ``n_r`` = 0. Unjudged documents (and negative labels) are skipped (trec_eval bpref).
    """
    thr = threshold_of(spec, conv)
    rows = R.relevant_rows(thr)
    nonrel_above = R.count_upto(R.judged_nonrelevant_rows(thr), rows)
    seg = R.seg[rows]
    num_rel = R.num_rel(thr)
    num_nonrel = R.num_nonrel(thr)
    r_q = num_rel[seg].astype(np.float64)
    denom = np.minimum(num_nonrel[seg], num_rel[seg]).astype(np.float64)
    frac = safe_div(np.minimum(nonrel_above, r_q), denom)
    term = np.where(nonrel_above > 0, 1.0 - frac, 1.0)
    return safe_div(np.bincount(seg, weights=term, minlength=R.n_queries), num_rel)


@measure(
    "GMBpref",
    N_("bpref, geometric mean over queries"),
    better="higher",
    params=("rel",),
    aggregate="gmean",
    aliases=("gm_bpref",),
    trec=("gm_bpref",),
    formula=r"GMBpref = \exp\Big(\frac{1}{|Q|}\sum_q \ln \max(bpref_q, 10^{-5})\Big)",
    edge_cases=(
        N_(
            "Per query the value is bpref; only the aggregate differs (trec_eval prints "
            "it only for all queries)."
        ),
        N_("Values are floored at 1e-5 before the logarithm."),
    ),
    reference=(
        "C. Buckley, E. M. Voorhees, Retrieval evaluation with incomplete information, SIGIR 2004.",
        TREC_EVAL.format("gm_bpref"),
    ),
    example=shared_example(
        "GMBpref",
        1 / 3,
        N_(
            "One query: its bpref. d1 adds 1; d3, below the one "
            "non-relevant document, adds 1 - min(1, 3)/min(1, 3) = 0; R = "
            "3."
        ),
    ),
    common=("GMBpref",),
    perfect=1.0,
)
def geometric_bpref(R, spec, conv):
    """Per query, bpref (trec_eval gm_bpref); the aggregate is the geometric mean."""
    return bpref(R, spec, conv)
