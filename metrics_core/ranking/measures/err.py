"""Expected reciprocal rank (Chapelle et al., CIKM 2009)."""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import measure
from metrics_core.ranking.kernels import seg_cumprod_exclusive
from metrics_core.ranking.measures.common import shared_example


@measure(
    "ERR",
    N_("expected reciprocal rank: a cascade user stops at a satisfying document"),
    better="higher",
    cutoff="optional",
    params=("max_grade",),
    aliases=("err",),
    formula=r"ERR@k = \sum_{i \le k} \frac{1}{i} R_i \prod_{j < i} (1 - R_j),\; "
    r"R_i = \frac{2^{g_i} - 1}{2^{g_{max}}}",
    edge_cases=(
        N_(
            "Grades are the labels; negative labels and unjudged documents are 0, labels "
            "above max_grade (default 4) count as max_grade."
        ),
        N_("Not normalised: a perfect ranking scores below 1."),
    ),
    reference="O. Chapelle, D. Metzler, Y. Zhang, P. Grinspan, Expected reciprocal rank for "
    "graded relevance, CIKM 2009.",
    example=shared_example(
        "ERR(max_grade=1)",
        0.5 + (1 / 3) * 0.5 * 0.5,
        N_(
            "With max_grade 1, R = 1/2 for a relevant document: 1/2 at rank 1, then (1/3)(1/2)(1/2)"
            " at rank 3."
        ),
    ),
    common=("ERR@20",),
    cut_invariant=True,
)
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
    reach = seg_cumprod_exclusive(seg, keep_going)
    w = reach * stop / pos
    return np.bincount(seg, weights=w, minlength=R.n_queries)
