"""Judged fraction and the counts: queries, retrieved, relevant, relevant retrieved."""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import measure
from metrics_core.ranking.kernels import safe_div
from metrics_core.ranking.measures.common import (
    TREC_EVAL,
    hits_top,
    shared_example,
    threshold_of,
)


@measure(
    "Judged",
    N_("fraction of the top k that is judged (of all retrieved without @k)"),
    better=None,
    cutoff="optional",
    params=("divide",),
    formula=r"Judged@k = \frac{|\mathrm{judged} \cap \mathrm{top}_k|}{\min(k, |\mathrm{retrieved}|)}",
    edge_cases=(
        N_(
            "Fewer than k retrieved: divided by the number retrieved (ir_measures), so a short "
            "ranking whose documents are all judged scores 1; divide=k divides by k instead "
            "(the missing ranks count as unjudged)."
        ),
        N_("Without @k: judged retrieved / retrieved."),
        N_("Nothing retrieved: 0."),
        N_("Negative labels count as judged (the document is in the qrels)."),
    ),
    reference=(
        "S. MacAvaney et al., ir_measures: a toolkit for IR evaluation (ECIR 2022),",
        N_(
            "measure Judged@k: a check for holes in the judgements before trusting the other "
            "measures."
        ),
    ),
    example=shared_example("Judged@3", 1.0, N_("d1, d2 and d3 are all judged.")),
    common=("Judged@10",),
)
def judged(R, spec, conv):
    """Judged@k: judged documents in the top k over min(k, retrieved), as ir_measures'
    ``Judged@k`` (negative labels are judged; nothing retrieved: 0). ``divide=k``: over k.
    Without @k: judged retrieved / retrieved.

    >>> import metrics_core as mc
    >>> qrels, run = {"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 2.0, "d2": 1.0}}
    >>> mc.evaluate(qrels, run, ["Judged@4", "Judged(divide=k)@4", "Judged"]).aggregate
    {'Judged@4': 1.0, 'Judged(divide=k)@4': 0.5, 'Judged': 1.0}
    """
    k = spec.cutoff
    if k is None:
        return safe_div(np.bincount(R.seg[R.judged_rows], minlength=R.n_queries), R.counts)
    found = R.count_top(R.judged_rows, k)
    if spec.param("divide", conv) == "k":
        return found / float(k)
    return safe_div(found, np.minimum(R.counts, k))


@measure(
    "NumQ",
    N_("number of queries evaluated"),
    better=None,
    aggregate="sum",
    integer=True,
    trec=("num_q",),
    formula=r"|Q|",
    edge_cases=(N_("Summed over queries in the aggregate (trec_eval)."),),
    reference=TREC_EVAL.format("num_q"),
    example=shared_example("NumQ", 1.0),
    common=("NumQ",),
    value_range=(1.0, 1.0),
)
def num_q(R, spec, conv):
    """1 per evaluated query (summed: the number of queries)."""
    return np.ones(R.n_queries, dtype=np.float64)


@measure(
    "NumRet",
    N_("number of documents retrieved"),
    better=None,
    aggregate="sum",
    integer=True,
    trec=("num_ret",),
    formula=r"|\mathrm{retrieved}|",
    edge_cases=(N_("Counted after the depth cut; summed over queries."),),
    reference=TREC_EVAL.format("num_ret"),
    example=shared_example("NumRet", 3.0),
    common=("NumRet",),
    value_range=(0.0, None),
)
def num_ret(R, spec, conv):
    """Documents retrieved (after the depth cut)."""
    return R.counts.astype(np.float64)


@measure(
    "NumRel",
    N_("number of relevant documents in the qrels"),
    better=None,
    params=("rel",),
    aggregate="sum",
    integer=True,
    trec=("num_rel",),
    formula=r"R",
    edge_cases=(N_("Negative labels are not relevant; summed over queries."),),
    reference=TREC_EVAL.format("num_rel"),
    example=shared_example("NumRel", 3.0),
    common=("NumRel",),
    value_range=(0.0, None),
)
def num_rel(R, spec, conv):
    """Relevant documents in the qrels (labels >= threshold; negatives excluded)."""
    return R.num_rel(threshold_of(spec, conv)).astype(np.float64)


@measure(
    "NumRelRet",
    N_("number of relevant documents retrieved"),
    better=None,
    params=("rel",),
    aggregate="sum",
    integer=True,
    trec=("num_rel_ret",),
    formula=r"|\mathrm{rel} \cap \mathrm{retrieved}|",
    edge_cases=(N_("Summed over queries."),),
    reference=TREC_EVAL.format("num_rel_ret"),
    example=shared_example("NumRelRet", 2.0),
    common=("NumRelRet",),
    value_range=(0.0, None),
)
def num_rel_ret(R, spec, conv):
    """Relevant documents retrieved."""
    return hits_top(R, threshold_of(spec, conv), None).astype(np.float64)
