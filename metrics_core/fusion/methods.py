"""Every fusion method, each declared once (:class:`~metrics_core.fusion.declaration.FusionMethod`):
formula, reference, parameters and their grids, normalisation needs, what a row adds, how the
runs combine, and for the supervised methods how a run's estimate is trained.

Names follow ranx (Bassani and Romelli 2022, "ranx.fuse and ranx.optimize_fusion", CIKM),
whose catalogue this is. Symbols of the formulas:

* ``s_i(d)``: the (normalised) score of document ``d`` in run ``i``; ``r_i(d)``: its rank
  there (1 for the first document); ``n(d)``: the number of runs that retrieved ``d``;
  ``w_i``: the weight of run ``i``; ``N``: the number of candidates of the query (the union
  of the runs' documents); ``L_i``: the length of run ``i``'s list for the query.
* Sums run over the runs that retrieved ``d`` unless said otherwise.

To add a method: write its declaration below (``value``: what one run's row adds, from
:class:`~metrics_core.fusion.core.RunRows`; ``combine``: the fused score from the
:class:`~metrics_core.fusion.core.Table` of the runs' values, with the helpers of
:mod:`metrics_core.fusion.kernels`), append it to :data:`DECLARED`, and give its label and
sentence their Spanish in ``metrics_core/locales/es/LC_MESSAGES/messages.po`` (``python
tools/i18n_catalogs.py`` adds the empty entries). The catalogue, the engine, the tuner, the
command line and the app read it from there.
"""

from __future__ import annotations

import math

import numpy as np

from metrics_core.errors import N_
from metrics_core.fusion import kernels as k
from metrics_core.fusion.declaration import FusionMethod, FusionParam, method_table
from metrics_core.fusion.grids import steps

_FOX_SHAW = N_("Fox and Shaw 1994, Combination of multiple searches (TREC-2)")
_WU_CRESTANI = N_("Wu and Crestani 2002, Data fusion with estimated weights (CIKM)")
_MOURAO = N_("Mourao, Martins and Magalhaes 2014 (CMIG)")
_ASLAM_MONTAGUE = N_("Aslam and Montague 2001, Models for metasearch (SIGIR)")
_MONTAGUE_ASLAM = N_("Montague and Aslam 2002, Condorcet fusion for improved retrieval (CIKM)")
_LILLIS_2010 = N_(
    "Lillis, Zhang, Toolan, Collier, Leonard and Dunnion 2010, Estimating probabilities for effective data fusion (SIGIR)"
)


def _unit_steps():
    return steps(0.01, 1.0, 0.01)


# --- parameters ---------------------------------------------------------------------------
K = FusionParam(
    "k",
    N_("RRF's constant added to each rank"),
    default=60,
    low=0,
    grid=lambda: list(range(10, 101, 10)),
    app=(1, 1000, 60, 1),
)
GAMMA = FusionParam(
    "gamma",
    N_("the power of the number of runs that retrieved the document"),
    grid=_unit_steps,
    app=(0.0, 2.0, 0.5, 0.05),
)
SIGMA = FusionParam(
    "sigma",
    N_("added to the number of runs before its logarithm"),
    default=0.01,
    low=0.0,
    high=1.0,
    grid=_unit_steps,
    app=(0.0, 1.0, 0.01, 0.01),
)
PHI = FusionParam(
    "phi",
    N_("persistence: how fast a run's weight decays with the rank"),
    grid=_unit_steps,
    app=(0.01, 0.99, 0.8, 0.01),
)
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
def _rrf(rows, p):
    return 1.0 / ((p["k"] + rows.pos) + 1)  # 1 / (k + i + 1), whole numbers while k is one


def _inverse_square(rows, p):
    return 1.0 / ((rows.pos + 1) ** 2)


def _rbc(rows, p):
    phi = float(p["phi"])
    return (1.0 - phi) * k.int_power(phi, rows.pos)


def _rank(rows, p):
    return rows.pos.astype(np.float64)


def _borda_points(rows, p):
    return rows.n_cand - rows.pos  # N - i: N for the first document


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


# --- combinations of the runs (each sum run after run: ranx's order) -------------------------
def _sum(t, p):
    return k.run_sum(t)


def _mnz(t, p):
    return k.run_sum(t) * t.count


def _anz(t, p):
    return k.run_sum(t) / t.count


def _max(t, p):
    return k.extreme(t, highest=True)


def _min(t, p):
    return k.extreme(t, highest=False)


def _med(t, p):
    return k.median(t)


def _gmnz(t, p):
    gamma = p["gamma"]
    return k.run_sum(t) * k.by_count(t, lambda n: math.pow(n, gamma))


def _wsum(t, p):
    return k.run_sum(t, weighted=True)


def _wmnz(t, p):
    return k.run_sum(t) * k.retrieved_weight(t)


def _mixed(t, p):
    return k.retrieved_weighted_sum(t) * k.by_count(t, math.sqrt)


def _log_isr(t, p):
    return k.run_sum(t) * k.by_count(t, math.log)


def _logn_isr(t, p):
    sigma = float(p["sigma"])
    return k.run_sum(t) * k.by_count(t, lambda n: math.log(n + sigma))


def _borda(t, p):
    return k.run_sum(t, missing=k.borda_missing(t))


def _w_borda(t, p):
    return k.run_sum(t, missing=k.borda_missing(t), weighted=True)


def _condorcet(t, p):
    return t.condorcet(np.ones(t.R))


def _w_condorcet(t, p):
    return t.condorcet(np.asarray(t.weights, dtype=np.float64))


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


def _comb(name, ranx, label_formula, latex, sentence, combine, ref=_FOX_SHAW, **kw):
    return FusionMethod(
        name=name,
        label=kw.pop("label"),
        family="score",
        formula=label_formula,
        latex=latex,
        sentence=sentence,
        ref=ref,
        ranx=ranx,
        value=k.score,
        combine=combine,
        **kw,
    )


DECLARED: list[FusionMethod] = [
    _comb(
        "combsum",
        "sum",
        "sum_i s_i(d)",
        r"\sum_{i:\,d \in R_i} s_i(d)",
        N_("Adds the normalised scores the runs give the document."),
        _sum,
        label="CombSUM",
        aliases=("sum", "comb_sum"),
    ),
    _comb(
        "combmnz",
        "mnz",
        "n(d) * sum_i s_i(d)",
        r"n(d) \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombSUM multiplied by the number of runs that retrieved the document."),
        _mnz,
        label="CombMNZ",
        aliases=("mnz", "comb_mnz"),
    ),
    _comb(
        "combanz",
        "anz",
        "sum_i s_i(d) / n(d)",
        r"\frac{1}{n(d)} \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombSUM divided by the number of runs that retrieved the document."),
        _anz,
        label="CombANZ",
        aliases=("anz", "comb_anz"),
    ),
    _comb(
        "combmax",
        "max",
        "max_i s_i(d)",
        r"\max_{i:\,d \in R_i} s_i(d)",
        N_("The highest normalised score of the document."),
        _max,
        label="CombMAX",
        aliases=("max", "comb_max"),
    ),
    _comb(
        "combmin",
        "min",
        "min_i s_i(d)",
        r"\min_{i:\,d \in R_i} s_i(d)",
        N_("The lowest normalised score of the document."),
        _min,
        label="CombMIN",
        aliases=("min", "comb_min"),
    ),
    _comb(
        "combmed",
        "med",
        "median_i s_i(d)",
        r"\operatorname{median}_{i:\,d \in R_i} s_i(d)",
        N_("The median of the document's normalised scores."),
        _med,
        label="CombMED",
        aliases=("med", "comb_med"),
    ),
    _comb(
        "combgmnz",
        "gmnz",
        "n(d)^gamma * sum_i s_i(d)",
        r"n(d)^{\gamma} \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombMNZ with the number of runs raised to a power gamma."),
        _gmnz,
        ref=N_("Lee 1997, Analyses of multiple evidence combination (SIGIR)"),
        label="CombGMNZ",
        aliases=("gmnz", "comb_gmnz"),
        params=(GAMMA,),
        tuned=True,
    ),
    _comb(
        "wsum",
        "wsum",
        "sum_i w_i s_i(d)",
        r"\sum_{i:\,d \in R_i} w_i\, s_i(d)",
        N_("A weighted sum of the normalised scores."),
        _wsum,
        ref=N_("Bassani and Romelli 2022 (ranx); linear combination"),
        label="WSUM",
        aliases=("weighted_sum",),
        weighted=True,
        tuned=True,
    ),
    _comb(
        "wmnz",
        "wmnz",
        "(sum_i w_i) * sum_i s_i(d), both over the runs that retrieved d",
        r"\Big(\sum_{i:\,d \in R_i} w_i\Big) \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombSUM multiplied by the weights of the runs that retrieved the document."),
        _wmnz,
        ref=_WU_CRESTANI,
        label="WMNZ",
        weighted=True,
        tuned=True,
    ),
    _comb(
        "mixed",
        "mixed",
        "sqrt(n(d)) * sum_i w_i s_i(d)",
        r"\sqrt{n(d)} \sum_{i:\,d \in R_i} w_i\, s_i(d)",
        N_(
            "A weighted sum multiplied by the square root of the number of runs that retrieved the document."
        ),
        _mixed,
        ref=_WU_CRESTANI,
        label="Mixed",
        weighted=True,
        tuned=True,
    ),
    FusionMethod(
        name="rrf",
        label="RRF",
        family="rank",
        formula="sum_i 1 / (k + r_i(d))",
        latex=r"\sum_{i:\,d \in R_i} \frac{1}{k + r_i(d)}",
        sentence=N_(
            "Reciprocal rank fusion: each run adds 1 / (k + rank); k = 60 by default. Scores are not used."
        ),
        ref=N_(
            "Cormack, Clarke and Buettcher 2009, Reciprocal rank fusion outperforms "
            "Condorcet and individual rank learning methods (SIGIR)"
        ),
        ranx="rrf",
        value=_rrf,
        combine=_sum,
        params=(K,),
        tuned=True,
    ),
    FusionMethod(
        name="isr",
        label="ISR",
        family="rank",
        formula="n(d) * sum_i 1 / r_i(d)^2",
        latex=r"n(d) \sum_{i:\,d \in R_i} \frac{1}{r_i(d)^2}",
        sentence=N_(
            "Inverse square rank: each run adds 1 / rank squared, times the number of runs."
        ),
        ref=N_(
            "Mourao, Martins and Magalhaes 2014, Multimodal medical information retrieval "
            "with unsupervised rank fusion (CMIG)"
        ),
        ranx="isr",
        value=_inverse_square,
        combine=_mnz,
    ),
    FusionMethod(
        name="log_isr",
        label="log-ISR",
        family="rank",
        formula="ln(n(d)) * sum_i 1 / r_i(d)^2",
        latex=r"\ln n(d) \sum_{i:\,d \in R_i} \frac{1}{r_i(d)^2}",
        sentence=N_(
            "ISR with the logarithm of the number of runs (0 for a document only one run retrieved)."
        ),
        ref=_MOURAO,
        ranx="log_isr",
        value=_inverse_square,
        combine=_log_isr,
    ),
    FusionMethod(
        name="logn_isr",
        label="logN-ISR",
        family="rank",
        formula="ln(n(d) + sigma) * sum_i 1 / r_i(d)^2",
        latex=r"\ln\big(n(d) + \sigma\big) \sum_{i:\,d \in R_i} \frac{1}{r_i(d)^2}",
        sentence=N_("ISR with the logarithm of the number of runs plus sigma."),
        ref=_MOURAO,
        ranx="logn_isr",
        value=_inverse_square,
        combine=_logn_isr,
        params=(SIGMA,),
        tuned=True,
    ),
    FusionMethod(
        name="rbc",
        label="RBC",
        family="rank",
        formula="sum_i (1 - phi) phi^(r_i(d) - 1)",
        latex=r"\sum_{i:\,d \in R_i} (1 - \phi)\, \phi^{\,r_i(d) - 1}",
        sentence=N_(
            "Rank-biased centroid: each run adds a weight that decays geometrically with the rank (persistence phi)."
        ),
        ref=N_(
            "Bailey, Moffat, Scholer and Thomas 2017, Retrieval consistency in the presence "
            "of query variations (SIGIR)"
        ),
        ranx="rbc",
        value=_rbc,
        combine=_sum,
        params=(PHI,),
        tuned=True,
    ),
    FusionMethod(
        name="bordafuse",
        label="BordaFuse",
        family="rank",
        formula="sum over all runs of N - r_i(d) + 1, or (N - L_i + 1) / 2 where run i "
        "did not retrieve d",
        latex=r"\sum_i \begin{cases} N - r_i(d) + 1 & d \in R_i \\ (N - L_i + 1)/2 & \text{otherwise} \end{cases}",
        sentence=N_(
            "Borda count: each run gives N points to its first document, one less to each next one, "
            "and shares the rest equally among the candidates it did not retrieve."
        ),
        ref=_ASLAM_MONTAGUE,
        ranx="bordafuse",
        value=_borda_points,
        combine=_borda,
        aliases=("borda",),
    ),
    FusionMethod(
        name="w_bordafuse",
        label=N_("Weighted BordaFuse"),
        family="rank",
        formula="sum over all runs of w_i times the Borda points of bordafuse",
        latex=r"\sum_i w_i\, \mathrm{Borda}_i(d)",
        sentence=N_("Borda count with each run's points weighted."),
        ref=_ASLAM_MONTAGUE,
        ranx="w_bordafuse",
        value=_borda_points,
        combine=_w_borda,
        aliases=("weighted_bordafuse",),
        weighted=True,
        tuned=True,
    ),
    FusionMethod(
        name="condorcet",
        label="Condorcet",
        family="rank",
        formula="N - position in the majority order: d before e when at least half "
        "the runs rank d strictly above e (a run with neither votes for e); "
        "the order is a comparison sort by that vote (ranx's; a merge sort of all queries "
        "at once here)",
        latex=r"N - \mathrm{position\ in\ the\ majority\ order}",
        sentence=N_("Condorcet: d comes before e when at least half of the runs rank d above e."),
        ref=_MONTAGUE_ASLAM,
        ranx="condorcet",
        value=_rank,
        combine=_condorcet,
    ),
    FusionMethod(
        name="w_condorcet",
        label=N_("Weighted Condorcet"),
        family="rank",
        formula="condorcet with each run's vote weighted by w_i",
        latex=r"N - \mathrm{position\ in\ the\ weighted\ majority\ order}",
        sentence=N_("Condorcet with each run's vote weighted."),
        ref=_MONTAGUE_ASLAM,
        ranx="w_condorcet",
        value=_rank,
        combine=_w_condorcet,
        aliases=("weighted_condorcet",),
        weighted=True,
        tuned=True,
    ),
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
        combine=_sum,
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
        combine=_sum,
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
        combine=_sum,
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
        combine=_sum,
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
        combine=_sum,
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

#: name -> declaration, in the catalogue's order
METHODS: dict[str, FusionMethod] = method_table(DECLARED)

__all__ = ["METHODS", "DECLARED"]
