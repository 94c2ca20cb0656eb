"""Average precision and its geometric mean over queries (trec_eval map, map_cut_k, gm_map)."""

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
    "AP",
    N_("average precision (MAP is its mean over queries)"),
    better="higher",
    cutoff="optional",
    params=("rel", "norm"),
    aliases=("map", "average_precision"),
    trec=("map", "map_cut_{k}"),
    formula=r"AP@k = \frac{1}{R} \sum_{i \le k} P@i \cdot \mathrm{rel}_i",
    edge_cases=(
        N_("Divides by every relevant document of the qrels: unretrieved ones add precision 0."),
        N_(
            "norm=min_rel_k divides by min(R, k); norm=rel_retrieved by the relevant documents "
            "retrieved within the cut."
        ),
        N_("No relevant document (normalizer 0): 0."),
    ),
    reference=(
        "C. Buckley, E. M. Voorhees, Evaluating evaluation measure stability, SIGIR 2000.",
        IIR,
        TREC_EVAL.format("map"),
    ),
    example=shared_example("AP", 5 / 9, N_("(1/1 + 2/3) / 3 = 5/9.")),
    common=("AP", "AP@100"),
    perfect=1.0,
    cut_invariant=True,
)
def average_precision(R, spec, conv):
    """AP@k = (1/norm) * sum over relevant ranks i <= k of P@i (trec_eval map / map_cut_k).

    ``norm`` is R (default), min(R, k) or the number of relevant
    documents retrieved within the cut. 0 when norm is 0.
    """
    thr = threshold_of(spec, conv)
    rows = R.relevant_rows(thr)
    k = spec.cutoff
    seg = R.seg[rows]
    pos = R.pos_of(rows)
    cum = R.count_upto(rows, rows)  # relevant at or above each relevant row
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
    return safe_div(total, norm)


@measure(
    "GMAP",
    N_("average precision, geometric mean over queries"),
    better="higher",
    params=("rel", "norm"),
    aggregate="gmean",
    aliases=("gm_map",),
    trec=("gm_map",),
    formula=r"GMAP = \exp\Big(\frac{1}{|Q|}\sum_q \ln \max(AP_q, 10^{-5})\Big)",
    edge_cases=(
        N_(
            "AP values are floored at 1e-5 before the logarithm (trec_eval), so one query "
            "with AP = 0 does not make the mean 0."
        ),
        N_("Per query the value is AP; only the aggregate differs."),
    ),
    reference=(
        "S. Robertson, On GMAP: and other transformations, CIKM 2006.",
        TREC_EVAL.format("gm_map"),
    ),
    example=shared_example("GMAP", 5 / 9, N_("One query: the geometric mean is its AP, 5/9.")),
    common=("GMAP",),
    perfect=1.0,
)
def geometric_map(R, spec, conv):
    """Per query, AP (trec_eval gm_map); the aggregate is the geometric mean."""
    return average_precision(R, spec, conv)
