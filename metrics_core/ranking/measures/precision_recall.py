"""Precision, recall, F1 and hits of the top k (trec_eval P_k, recall_k; ir_measures P, R)."""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import measure
from metrics_core.ranking.kernels import safe_div
from metrics_core.ranking.measures.common import (
    IIR,
    TREC_EVAL,
    hits_top,
    shared_example,
    threshold_of,
)


@measure(
    "P",
    N_("precision of the top k (all retrieved without @k)"),
    better="higher",
    cutoff="optional",
    params=("rel", "denom"),
    aliases=("precision",),
    trec=("P_{k}", "set_P"),
    formula=r"P@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{k}",
    edge_cases=(
        N_(
            "Fewer than k retrieved: still divided by k (trec_eval); denom=retrieved divides by "
            "min(k, retrieved), and a query with nothing retrieved scores 0."
        ),
        N_("Without @k: relevant retrieved / retrieved (trec_eval set_P)."),
        N_("Relevant means label >= the relevance threshold (rel, default 1)."),
    ),
    reference=(IIR, TREC_EVAL.format("P_k")),
    example=shared_example("P@2", 0.5, N_("One relevant (d1) in the top 2: 1/2.")),
    common=("P@5", "P@10"),
)
def precision(R, spec, conv):
    """P@k: relevant in the top k, divided by k (trec_eval P_k).

    ``denom=retrieved`` divides by min(k, retrieved) ; a query with
    nothing retrieved scores 0. Without @k: relevant retrieved / retrieved (set_P).
    """
    thr = threshold_of(spec, conv)
    k = spec.cutoff
    hits = hits_top(R, thr, k)
    if k is None:
        return safe_div(hits, R.counts)
    if spec.param("denom", conv) == "retrieved":
        return safe_div(hits, np.minimum(R.counts, k))
    return hits / float(k)


@measure(
    "R",
    N_("recall of the top k (all retrieved without @k)"),
    better="higher",
    cutoff="optional",
    params=("rel",),
    aliases=("recall",),
    trec=("recall_{k}", "set_recall"),
    formula=r"R@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{R}",
    edge_cases=(
        N_("No relevant document in the qrels (R = 0): 0, and the query still counts in the mean."),
    ),
    reference=(IIR, TREC_EVAL.format("recall_k")),
    example=shared_example("R@2", 1 / 3, N_("One of the three relevant documents in the top 2.")),
    common=("R@10", "R@100"),
    perfect=1.0,
    cut_invariant=True,
)
def recall(R, spec, conv):
    """R@k: relevant in the top k divided by R; 0 when R = 0 (trec_eval recall_k)."""
    thr = threshold_of(spec, conv)
    return safe_div(hits_top(R, thr, spec.cutoff), R.num_rel(thr))


@measure(
    "F1",
    N_("harmonic mean of P@k and R@k"),
    better="higher",
    cutoff="optional",
    params=("rel", "denom"),
    aliases=("f",),
    formula=r"F_1@k = \frac{2\,P@k\,R@k}{P@k + R@k}",
    edge_cases=(N_("0 when P@k + R@k = 0."),),
    reference=(
        IIR,
        N_("(the F measure with beta = 1;"),
        "C. J. van Rijsbergen, Information Retrieval, 1979).",
    ),
    example=shared_example("F1@2", 0.4, N_("P@2 = 1/2, R@2 = 1/3: 2 (1/6) / (5/6) = 0.4.")),
    common=("F1@10",),
)
def f1(R, spec, conv):
    """F1@k = 2 P@k R@k / (P@k + R@k); 0 when both are 0."""
    p = precision(R, spec, conv)
    r = recall(R, spec, conv)
    return safe_div(2 * p * r, p + r)


@measure(
    "Hits",
    N_("number of relevant documents in the top k"),
    better="higher",
    cutoff="optional",
    params=("rel",),
    formula=r"Hits@k = |\mathrm{rel} \cap \mathrm{top}_k|",
    edge_cases=(N_("A count, not a fraction; the aggregate is its mean over queries."),),
    reference=(
        N_("The hits-in-top-k count of question-answering and retrieval test suites; P@k times k."),
    ),
    example=shared_example("Hits@2", 1.0),
    common=("Hits@5",),
    value_range=(0.0, None),
    cut_invariant=True,
)
def hits(R, spec, conv):
    """Number of relevant documents in the top k."""
    return hits_top(R, threshold_of(spec, conv), spec.cutoff).astype(np.float64)
