"""Measures of the retrieved set: relative precision, set AP, set F, judged non-relevant retrieved."""

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
    "RelP",
    N_("relative precision: relevant in the top k over the most possible, min(k, R)"),
    better="higher",
    cutoff="required",
    params=("rel",),
    aliases=("relative_p",),
    trec=("relative_P_{k}",),
    formula=r"RelP@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{\min(k, R)}",
    edge_cases=(N_("Precision up to k = R, recall beyond."), N_("No relevant document: 0.")),
    reference=TREC_EVAL.format("relative_P"),
    example=shared_example("RelP@2", 1 / 2, N_("one relevant in the top 2, min(2, 3) = 2.")),
    common=("RelP@10",),
)
def relative_precision(R, spec, conv):
    """relative_P_k: relevant in the top k divided by min(k, R); 0 when R = 0
    (trec_eval ``relative_P``: precision up to R, recall after)."""
    thr = threshold_of(spec, conv)
    k = spec.cutoff
    nr = R.num_rel(thr)
    return safe_div(hits_top(R, thr, k), np.minimum(nr, k))


@measure(
    "SetRelP",
    N_("relevant retrieved over the most possible for the set's size"),
    better="higher",
    params=("rel",),
    aliases=("set_relative_p",),
    trec=("set_relative_P",),
    formula=r"\frac{|\mathrm{rel} \cap \mathrm{ret}|}{\min(|\mathrm{ret}|, R)}",
    edge_cases=(N_("Nothing retrieved or no relevant document: 0."),),
    reference=TREC_EVAL.format("set_relative_P"),
    example=shared_example("SetRelP", 2 / 3, N_("2 relevant of min(3, 3).")),
    common=("SetRelP",),
)
def set_relative_precision(R, spec, conv):
    """set_relative_P: relevant retrieved / min(retrieved, R)."""
    thr = threshold_of(spec, conv)
    return safe_div(hits_top(R, thr, None), np.minimum(R.counts, R.num_rel(thr)))


@measure(
    "SetAP",
    N_("set average precision: set precision times set recall"),
    better="higher",
    params=("rel",),
    aliases=("set_map",),
    trec=("set_map",),
    formula=r"\frac{|\mathrm{rel} \cap \mathrm{ret}|^2}{|\mathrm{ret}|\, R}",
    edge_cases=(N_("Nothing retrieved or no relevant document: 0."),),
    reference=TREC_EVAL.format("set_map"),
    example=shared_example("SetAP", 4 / 9, N_("(2/3)(2/3).")),
    common=("SetAP",),
)
def set_map(R, spec, conv):
    """set_map: relevant retrieved squared / (retrieved * R) (set precision times set
    recall); 0 when either is 0."""
    thr = threshold_of(spec, conv)
    h = hits_top(R, thr, None).astype(np.float64)
    return safe_div(h * h, R.counts.astype(np.float64) * R.num_rel(thr).astype(np.float64))


@measure(
    "SetF",
    N_("F measure of the retrieved set (beta weighs recall)"),
    better="higher",
    params=("rel", "beta"),
    aliases=("set_f",),
    trec=("set_F",),
    formula=r"F_\beta = \frac{(\beta + 1) P R}{\beta P + R}",
    edge_cases=(
        N_("trec_eval's form: beta (default 1) multiplies P, not beta squared."),
        N_("No relevant document retrieved: 0."),
    ),
    reference=(
        "C. J. van Rijsbergen, Information Retrieval, Butterworths, 1979.",
        TREC_EVAL.format("set_F"),
    ),
    example=shared_example("SetF", 2 / 3, N_("P = R = 2/3.")),
    common=("SetF",),
)
def set_f(R, spec, conv):
    """set_F: (beta + 1) P R / (beta P + R) over the retrieved set (van Rijsbergen's F
    with beta the relative importance of recall; trec_eval ``set_F``); 0 with no
    relevant retrieved."""
    thr = threshold_of(spec, conv)
    x = float(spec.param("beta", conv))
    h = hits_top(R, thr, None)
    p = safe_div(h, R.counts)
    r = safe_div(h, R.num_rel(thr))
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (x + 1.0) * p * r / (x * p + r)
    return np.where(h > 0, f, 0.0)


@measure(
    "NumNonRelJudgedRet",
    N_("number of judged non-relevant documents retrieved"),
    better=None,
    params=("rel",),
    aggregate="sum",
    integer=True,
    aliases=("num_nonrel_judged_ret",),
    trec=("num_nonrel_judged_ret",),
    formula=r"|\mathrm{nonrel} \cap \mathrm{ret}|",
    edge_cases=(
        N_("Judged with 0 <= label < threshold; negative labels are not counted."),
        N_("Summed over queries."),
    ),
    reference=TREC_EVAL.format("num_nonrel_judged_ret"),
    example=shared_example("NumNonRelJudgedRet", 1.0),
    common=("NumNonRelJudgedRet",),
    value_range=(0.0, None),
)
def num_nonrel_judged_ret(R, spec, conv):
    """Judged non-relevant documents retrieved (labels 0 <= l < threshold)."""
    thr = threshold_of(spec, conv)
    return np.bincount(R.seg[R.judged_nonrelevant_rows(thr)], minlength=R.n_queries).astype(
        np.float64
    )
