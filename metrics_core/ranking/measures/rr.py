"""Reciprocal rank, rank of the first relevant document, success (trec_eval recip_rank, success)."""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import measure
from metrics_core.ranking.measures.common import TREC_EVAL, shared_example, threshold_of


@measure(
    "RR",
    N_("reciprocal rank of the first relevant document (MRR is its mean over queries)"),
    better="higher",
    cutoff="optional",
    params=("rel", "miss"),
    aliases=("mrr", "reciprocal_rank"),
    trec=("recip_rank",),
    formula=r"RR@k = \frac{1}{\mathrm{rank}_1} \text{ if } \mathrm{rank}_1 \le k",
    edge_cases=(
        N_("No relevant document retrieved: 0."),
        N_("RR@k with nothing relevant in the top k: 0, or 1/(k+1) with miss=k_plus_1."),
        N_("MRR, the mean reciprocal rank, is the aggregate of RR over queries."),
    ),
    reference=(
        "E. M. Voorhees, The TREC-8 Question Answering Track Report, TREC 1999.",
        TREC_EVAL.format("recip_rank"),
    ),
    example=shared_example("RR", 1.0, N_("The first document is relevant: 1/1.")),
    common=("RR", "RR@10"),
    perfect=1.0,
    cut_invariant=True,
)
def reciprocal_rank(R, spec, conv):
    """RR: 1 / rank of the first relevant document; 0 when none (trec_eval recip_rank).

    RR@k looks only at the top k; with ``miss=k_plus_1`` a query without a relevant
    document in the top k scores 1/(k+1) instead of 0.
    """
    first = R.first_relevant_rank(threshold_of(spec, conv))
    k = spec.cutoff
    found = first > 0 if k is None else (first > 0) & (first <= k)
    out = np.where(found, 1.0 / np.maximum(first, 1), 0.0)
    if k is not None and spec.param("miss", conv) == "k_plus_1":
        out = np.where(found, out, 1.0 / (k + 1))
    return out


@measure(
    "FirstRel",
    N_("rank of the first relevant document"),
    better="lower",
    params=("rel",),
    aggregate="nanmean",
    aliases=("first_relevant_position",),
    formula=r"\mathrm{rank}_1",
    edge_cases=(
        N_(
            "No relevant document retrieved: NaN; the aggregate is the mean over the other queries."
        ),
    ),
    reference=(
        N_("The position of the first relevant result, the quantity behind RR"),
        "(Voorhees, TREC-8 QA track, 1999).",
    ),
    example=shared_example("FirstRel", 1.0),
    common=("FirstRel",),
    value_range=(1.0, None),
    perfect=1.0,
    may_be_nan=True,
)
def first_relevant(R, spec, conv):
    """Rank of the first relevant document; NaN when no relevant document was retrieved."""
    first = R.first_relevant_rank(threshold_of(spec, conv)).astype(np.float64)
    first[first == 0] = np.nan
    return first


@measure(
    "Success",
    N_("1 if a relevant document is in the top k"),
    better="higher",
    cutoff="optional",
    params=("rel",),
    trec=("success_{k}",),
    formula=r"Success@k = [\mathrm{rank}_1 \le k]",
    edge_cases=(N_("Without @k: 1 when any relevant document is retrieved."),),
    reference=(TREC_EVAL.format("success_k"), N_("Also called Hit@k or top-k accuracy.")),
    example=shared_example("Success@1", 1.0),
    common=("Success@1", "Success@10"),
    perfect=1.0,
    cut_invariant=True,
)
def success(R, spec, conv):
    """Success@k: 1 when a relevant document is in the top k, else 0 (trec_eval success_k)."""
    first = R.first_relevant_rank(threshold_of(spec, conv))
    k = spec.cutoff
    return ((first > 0) & ((first <= k) if k is not None else True)).astype(np.float64)
