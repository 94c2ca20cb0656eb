"""The supervised fusion methods, each declared once: what a run learns from training
judgements (its estimate: a table of probabilities, log-odds or its MAP), what a row adds
with it, and ranx's training arithmetic, operation for operation (ranx's ``*_train``).

Symbols as in :mod:`metrics_core.fusion.methods`; ``P_i(p)``: run ``i``'s estimated
probability of relevance at rank ``p`` (or segment ``k``). A method's ``train(d, params)``
reads one run's rows on the training queries (``d``: see
:func:`metrics_core.fusion.training.train`). Adding a supervised method: its declaration
here, appended to :data:`SUPERVISED` (the catalogue lists them after the others).
"""

from __future__ import annotations

import math

import numpy as np

from metrics_core.errors import N_
from metrics_core.fusion import kernels as k
from metrics_core.fusion.declaration import FusionMethod, FusionParam

_ASLAM_MONTAGUE = N_("Aslam and Montague 2001, Models for metasearch (SIGIR)")
_LILLIS_2010 = N_(
    "Lillis, Zhang, Toolan, Collier, Leonard and Dunnion 2010, Estimating probabilities for effective data fusion (SIGIR)"
)


# --- parameters ---------------------------------------------------------------------------
WINDOW = FusionParam(
    "w",
    N_("half-width of the window of ranks"),
    integer=True,
    low=0,
    grid=lambda: list(range(1, 101)),
    app=(0, 100, 2, 1),
)
SEGMENTS = FusionParam(
    "n_segments",
    N_("number of equal segments each list is cut into"),
    default=10,
    integer=True,
    low=1,
    grid=lambda: list(range(1, 101)),
)


# --- values of a row (ranx's arithmetic, operation for operation) ---------------------------
def _mapfuse(rows, p):
    return rows.estimate(p, "map_scores")[0] / (rows.pos + 1)


def _posfuse(rows, p):
    return k.lookup(rows.estimate(p, "probs"), rows.pos, 0.0)


def _probfuse(rows, p):
    table = rows.estimate(p, "probs")
    size = np.maximum(np.ceil(rows.length / len(table)).astype(np.int64), 1)
    seg = rows.pos // size
    return k.lookup(table, seg, 0.0) / (seg + 1)


def _segfuse(rows, p):
    table = rows.estimate(p, "probs")
    bounds = k.SEGFUSE_BOUNDS
    seg = np.searchsorted(bounds, rows.pos, side="right") - 1
    seg = np.where(rows.pos >= bounds[-1], len(bounds), seg)
    return k.lookup(table, seg, 0.0) * (rows.score + 1)


def _slidefuse(rows, p):
    w = int(p["w"])
    a = np.maximum(rows.pos - w, 0)
    b = np.minimum(rows.pos + w, rows.length - 1)
    return k.window_means(rows.estimate(p, "probs"), a, b)


def _bayesfuse(rows, p):
    return k.lookup(rows.estimate(p, "log_odds"), rows.pos, k.MIN_LOG_ODDS)


def _bayes_sum(t, p):
    return k.run_sum(t, missing=k.MIN_LOG_ODDS)


# --- training (one run's estimate; ``d``: its rows on the training queries) -------------------
def _train_positions(d, p):
    """Per rank p: the relevant share among the training queries whose list reaches p."""
    size = int(d.lengths.max()) if len(d.lengths) else 0
    num = np.bincount(d.pos, weights=d.hits, minlength=size)
    den = np.bincount(d.lengths, minlength=size + 1)[::-1].cumsum()[::-1][1 : size + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return num[:size] / den


def _train_probfuse(d, p):
    """Per segment k: the sum over the training queries (in their order) of the share of
    relevant documents in the query's k-th segment, divided by the number of queries."""
    n_segments = int(p["n_segments"])
    seg = np.ceil(d.row_lengths / n_segments).astype(np.int64)
    kk = d.pos // np.maximum(seg, 1)
    seg_len = np.minimum(seg, d.row_lengths - kk * seg)
    cell = d.query * n_segments + kk
    hits = np.bincount(cell, weights=d.hits, minlength=d.n_queries * n_segments)
    size = np.zeros(d.n_queries * n_segments)
    size[cell] = seg_len
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(size > 0, hits / np.where(size > 0, size, 1), 0.0)
    total = k.sequential_columns(share.reshape(d.n_queries, n_segments))
    return total / max(d.n_queries, 1)


def _segment_hits(d, bounds):
    kk = np.searchsorted(bounds, d.pos, side="right") - 1
    inside = d.pos < bounds[-1]
    n_seg = len(bounds) - 1
    cell = d.query[inside] * n_seg + kk[inside]
    hits = np.bincount(cell, weights=d.hits[inside], minlength=d.n_queries * n_seg)
    return hits.reshape(d.n_queries, n_seg), np.diff(bounds)


def _train_segfuse(d, p):
    """Per segment: the sum over the training queries of the segment's relevant count
    divided by its nominal size, divided by the number of queries."""
    hits, sizes = _segment_hits(d, k.SEGFUSE_BOUNDS)
    return k.sequential_columns(hits / sizes) / max(d.n_queries, 1)


def _train_bayesfuse(d, p):
    """Per segment: the mean precision over the training queries (each query's precision
    divided by their number, then added), 0 raised to 0.001 and 1 lowered by 0.001, as the
    log-odds ``ln(p / (1 - p))``, repeated over the segment's ranks."""
    hits, sizes = _segment_hits(d, k.BAYES_CUTOFFS)
    n = max(d.n_queries, 1)
    avg = k.sequential_columns(hits / sizes / n) if d.n_queries else np.zeros(len(sizes))
    odds = []
    for a in avg.tolist():
        a = a + 0.001 if a == 0 else a
        neg = 1 - a
        neg = neg + 0.001 if neg == 0 else neg
        odds.append(math.log(a / neg))
    return np.repeat(np.array(odds), sizes)


def _train_map(d, p):
    return d.mean_average_precision()


SUPERVISED: list[FusionMethod] = [
    FusionMethod(
        name="mapfuse",
        label="MAPFuse",
        family="rank",
        formula="sum_i MAP_i / r_i(d), MAP_i the run's mean average precision on the "
        "training queries",
        latex=r"\sum_{i:\,d \in R_i} \frac{\mathrm{MAP}_i}{r_i(d)}",
        sentence=N_(
            "Supervised: each run adds its mean average precision on training queries divided by the rank."
        ),
        ref=_LILLIS_2010,
        ranx="mapfuse",
        value=_mapfuse,
        combine=k.combsum,
        estimate="map_scores",
        train=_train_map,
    ),
    FusionMethod(
        name="posfuse",
        label="PosFuse",
        family="rank",
        formula="sum_i P_i(r_i(d)), P_i(p) the share of training queries whose "
        "document at rank p is relevant",
        latex=r"\sum_{i:\,d \in R_i} P_i\big(r_i(d)\big)",
        sentence=N_(
            "Supervised: each run adds the share of training queries whose document at that rank is relevant."
        ),
        ref=N_("Lillis et al. 2010, Estimating probabilities for effective data fusion (SIGIR)"),
        ranx="posfuse",
        value=_posfuse,
        combine=k.combsum,
        estimate="probs",
        train=_train_positions,
    ),
    FusionMethod(
        name="probfuse",
        label="ProbFuse",
        family="rank",
        formula="sum_i P_i(k) / k, k the segment of r_i(d) when the list is cut in "
        "n_segments equal segments",
        latex=r"\sum_{i:\,d \in R_i} \frac{P_i(k)}{k},\ k = \text{segment of } r_i(d)",
        sentence=N_(
            "Supervised: the lists are cut into equal segments; each run adds the probability of relevance "
            "of the document's segment divided by the segment's number."
        ),
        ref=N_(
            "Lillis, Toolan, Collier and Dunnion 2006, ProbFuse: a probabilistic "
            "approach to data fusion (SIGIR)"
        ),
        ranx="probfuse",
        value=_probfuse,
        combine=k.combsum,
        estimate="probs",
        train_params=(SEGMENTS,),
        train=_train_probfuse,
        tuned=True,
    ),
    FusionMethod(
        name="segfuse",
        label="SegFuse",
        family="rank",
        formula="sum_i P_i(k) (s_i(d) + 1), k the segment of r_i(d); segments end at "
        "10 * 2^(k-1) - 5",
        latex=r"\sum_{i:\,d \in R_i} P_i(k)\,\big(s_i(d) + 1\big)",
        sentence=N_(
            "Supervised: segments growing in size (5, 10, 20, ... ranks); the probability of the segment "
            "times the normalised score plus one."
        ),
        ref=N_(
            "Shokouhi 2007, Segmentation of search engine results for effective data-fusion (ECIR)"
        ),
        ranx="segfuse",
        value=_segfuse,
        combine=k.combsum,
        estimate="probs",
        train=_train_segfuse,
    ),
    FusionMethod(
        name="slidefuse",
        label="SlideFuse",
        family="rank",
        formula="sum_i mean of P_i over ranks r_i(d) - w .. r_i(d) + w (inside the list)",
        latex=r"\sum_{i:\,d \in R_i} \frac{1}{b - a + 1} \sum_{p=a}^{b} P_i(p),\ [a, b] = r_i(d) \pm w",
        sentence=N_(
            "Supervised: PosFuse's probabilities averaged over a window of ranks around the document."
        ),
        ref=N_(
            "Lillis, Toolan, Collier and Dunnion 2008, Extending probabilistic data "
            "fusion using sliding windows (ECIR)"
        ),
        ranx="slidefuse",
        value=_slidefuse,
        combine=k.combsum,
        params=(WINDOW,),
        estimate="probs",
        train=_train_positions,
        tuned=True,
    ),
    FusionMethod(
        name="bayesfuse",
        label="BayesFuse",
        family="rank",
        formula="sum over all runs of the log-odds of relevance at r_i(d), "
        "ln(0.001 / 0.999) where run i did not retrieve d",
        latex=r"\sum_i \log \frac{P_i(\mathrm{rel} \mid r_i(d))}{P_i(\mathrm{nonrel} \mid r_i(d))}",
        sentence=N_(
            "Supervised: the log-odds of relevance at the document's rank in each run, summed."
        ),
        ref=_ASLAM_MONTAGUE,
        ranx="bayesfuse",
        value=_bayesfuse,
        combine=_bayes_sum,
        estimate="log_odds",
        train=_train_bayesfuse,
    ),
]

__all__ = ["SUPERVISED"]
