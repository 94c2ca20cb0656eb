"""Unjudged fraction, BEIR's Hole@k, R-precision multiples, utility and the 11-point average
(trec_eval 10)."""

from __future__ import annotations

import math

import numpy as np

from metrics_core.errors import N_
from metrics_core.ranking.definition import Example, measure
from metrics_core.ranking.kernels import safe_div
from metrics_core.ranking.measures.common import (
    IIR,
    RUN,
    TREC_EVAL,
    Derived,
    hits_top,
    judged_nonneg_rows,
    shared_example,
    threshold_of,
)
from metrics_core.ranking.measures.iprec import interpolated_precision


@measure(
    "Unjudged",
    N_("fraction of the top k that is unjudged"),
    better=None,
    cutoff="required",
    aliases=("unj",),
    trec=("unj_{k}",),
    formula=r"Unjudged@k = \frac{|\mathrm{unjudged} \cap \mathrm{top}_k|}{k}",
    edge_cases=(
        N_("Unjudged: absent from the qrels, or judged with a negative label (trec_eval)."),
        N_("Fewer than k retrieved: the missing ranks count as judged; divides by k."),
        N_("A query absent from the run: 0."),
    ),
    reference=(TREC_EVAL.format("unj"), N_("A red flag for holes in the judgements.")),
    example=Example(
        {"q1": {"d1": 1, "d3": 0}},
        RUN,
        "Unjudged@3",
        1 / 3,
        N_("Ranking d1, d2, d3; d2 is not judged: 1/3."),
    ),
    common=("Unjudged@10",),
)
def unjudged(R, spec, conv):
    """unj_k: unjudged documents (absent from the qrels or negative label) in the top k,
    divided by k (trec_eval ``unj``)."""
    k = spec.cutoff
    in_top = np.minimum(R.counts, k)
    return (in_top - R.count_top(judged_nonneg_rows(R), k)) / float(k)


@measure(
    "Hole",
    N_("fraction of the top k that no query of the qrels judges (BEIR's Hole@k)"),
    better=None,
    cutoff="required",
    aliases=("hole",),
    formula=r"Hole@k = \frac{|\mathrm{top}_k \setminus J|}{k},\; J = \text{documents judged for any query}",
    edge_cases=(
        N_(
            "Judged anywhere: the document appears in the qrels of any query, with any label, "
            "negative ones included (BEIR); Unjudged@k asks about the query's own judgements."
        ),
        N_("Fewer than k retrieved: the missing ranks count as judged; divides by k."),
        N_('Equal scores: BEIR keeps the input order; ties="input" gives its numbers.'),
        N_("A query absent from the run: 0."),
    ),
    reference=(
        "N. Thakur, N. Reimers, A. Rücklé, A. Srivastava, I. Gurevych, BEIR: a heterogeneous "
        "benchmark for zero-shot evaluation of information retrieval models, NeurIPS 2021 "
        "(Datasets and Benchmarks).",
    ),
    example=Example(
        {"q1": {"d1": 1, "d3": 0}},
        RUN,
        "Hole@3",
        1 / 3,
        N_("Ranking d1, d2, d3; d2 is judged for no query: 1/3."),
    ),
    common=("Hole@10",),
)
def hole(R, spec, conv):
    """Hole@k (BEIR): retrieved documents in the top k that appear nowhere in the qrels
    (no query judges them), divided by k."""
    import pyarrow as pa
    import pyarrow.compute as pc

    k = spec.cutoff
    docid = getattr(R, "run_docid", None)
    if docid is None or R.qrels is None:
        raise RuntimeError("Hole@k needs the ranked lists' document ids")
    rows = np.flatnonzero(R.pos_of(np.arange(len(R.seg))) <= k)
    docs = docid.take(pa.array(R.run_rows()[rows] if len(rows) else np.zeros(0, np.int64)))
    # every judged document id: of the whole qrels, also when R holds one block's queries
    everywhere = getattr(R, "judged_anywhere", None)
    everywhere = R.qrels.docid if everywhere is None else everywhere
    judged = R.memo(("qrels_docids",), lambda: pc.unique(_plain(everywhere)))
    inside = pc.is_in(_plain(docs), value_set=judged).to_numpy(zero_copy_only=False).astype(bool)
    holes = np.bincount(R.seg[rows[~inside]], minlength=R.n_queries)
    return holes / float(k)


def _plain(arr):
    """A string array without its dictionary encoding (ids are compared as text)."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return arr.cast(pa.large_string())


@measure(
    "RprecMult",
    N_("precision at a multiple x of R (x R documents)"),
    better="higher",
    params=("rel", "x"),
    aliases=("rprec_mult",),
    trec=("Rprec_mult_{x}",),
    formula=r"RprecMult(x) = P@c,\; c = \lfloor x R + 0.9 \rfloor",
    edge_cases=(
        N_(
            "trec_eval prints it as Rprec_mult_x (x from 0.2 to 2.0 by default); "
            "Rprec_mult_0.20 is read as RprecMult(x=0.2)."
        ),
        N_("c = 0 (no relevant document): 0; fewer than c retrieved: still divided by c."),
    ),
    reference=TREC_EVAL.format("Rprec_mult"),
    example=shared_example("RprecMult(x=2)", 2 / 6, N_("c = floor(2 * 3 + 0.9) = 6: 2/6.")),
    common=("RprecMult(x=1)", "RprecMult(x=2)"),
)
def rprec_mult(R, spec, conv):
    """Rprec_mult_x: precision at rank c = floor(x * R + 0.9) (trec_eval ``Rprec_mult``,
    precision at a multiple of R); 0 when c = 0."""
    thr = threshold_of(spec, conv)
    x = float(spec.param("x", conv))
    c = np.floor(x * R.num_rel(thr).astype(np.float64) + 0.9).astype(np.int64)
    rows = R.relevant_rows(thr)
    first = R.starts[:-1]
    end = first + np.minimum(R.counts, c)
    hits = np.searchsorted(rows, end) - np.searchsorted(rows, first)
    return safe_div(hits, c)


@measure(
    "Utility",
    N_("set utility: weighted counts of the retrieved and missed documents"),
    better="higher",
    params=("rel", "a", "b", "c", "d"),
    aliases=("utility",),
    trec=("utility",),
    formula=r"U = a\,|rel \cap ret| + b\,|nonrel \cap ret| + c\,|rel \setminus ret| + d\,|nonrel \setminus ret|",
    edge_cases=(
        N_("Defaults a = 1, b = -1, c = 0, d = 0 (trec_eval)."),
        N_("Unjudged retrieved documents count as non-relevant."),
        N_("d needs the collection size (num_docs convention, trec_eval -N)."),
        N_("A query absent from the run: 0."),
    ),
    reference=TREC_EVAL.format("utility"),
    example=shared_example(
        "Utility", 2.0 - 1.0, N_("2 relevant retrieved, 1 non-relevant: 2 - 1.")
    ),
    common=("Utility",),
    value_range=(-math.inf, None),
)
def utility(R, spec, conv):
    """Set utility ``a * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret``
    (trec_eval ``utility``; defaults a=1, b=-1, c=0, d=0). ``nonrel_not_ret`` needs the
    collection size (``num_docs``, trec_eval ``-N``). 0 for a query absent from the run."""
    thr = threshold_of(spec, conv)
    a, b, c, d = (float(spec.param(k, conv)) for k in ("a", "b", "c", "d"))
    nrr = hits_top(R, thr, None).astype(np.float64)
    ret = R.counts.astype(np.float64)
    rel = R.num_rel(thr).astype(np.float64)
    n_docs = float(conv.num_docs or 0)
    out = a * nrr + b * (ret - nrr) + c * (rel - nrr) + d * (n_docs + nrr - ret - rel)
    return np.where(R.counts > 0, out, 0.0)


@measure(
    "IPrecAvg",
    N_("interpolated precision averaged over 11 recall levels (0.0 to 1.0)"),
    better="higher",
    params=("rel",),
    aliases=("11pt_avg", "11pt"),
    trec=("11pt_avg",),
    formula=r"\frac{1}{11}\sum_{r \in \{0, 0.1, \dots, 1\}} IPrec@r",
    edge_cases=(
        N_(
            "The recall levels round as IPrec's (trec_eval 10; trec_eval 9 under "
            "compat=trec_eval9)."
        ),
        N_("An older summary of the precision-recall curve; AP is the usual choice now."),
    ),
    reference=(IIR, N_("(section 8.4)."), TREC_EVAL.format("11pt_avg")),
    example=shared_example(
        "IPrecAvg",
        (5 * 1.0 + 4 * (2 / 3)) / 11,
        N_(
            "c = round(3 r): IPrec is 1 at levels 0 to 0.4 (c <= 1), 2/3 at 0.5 to 0.8 (c = 2), 0 "
            "at 0.9 and 1.0 (c = 3 is not reached)."
        ),
    ),
    common=("IPrecAvg",),
    perfect=1.0,
)
def eleven_point_average(R, spec, conv):
    """11pt_avg: mean of IPrec at recall 0.0, 0.1, ..., 1.0 (trec_eval ``11pt_avg``),
    added from 1.0 down as trec_eval adds them."""
    total = np.zeros(R.n_queries, dtype=np.float64)
    for level in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0):
        total = total + interpolated_precision(R, Derived(spec, level), conv)
    return total / 11.0
