"""Every fusion method, each declared once (:class:`~metrics_core.fusion.declaration.FusionMethod`):
formula, reference, parameters and their grids, normalisation needs, what a row adds and how
the runs combine. The six supervised methods, with how a run's estimate is trained, are declared
in :mod:`metrics_core.fusion.supervised` and follow the others in :data:`DECLARED`.

Names follow ranx (Bassani and Romelli 2022, "ranx.fuse and ranx.optimize_fusion", CIKM),
whose catalogue this is. Symbols of the formulas:

* ``s_i(d)``: the (normalised) score of document ``d`` in run ``i``; ``r_i(d)``: its rank
  there (1 for the first document); ``n(d)``: the number of runs that retrieved ``d``;
  ``w_i``: the weight of run ``i``; ``N``: the number of candidates of the query (the union
  of the runs' documents); ``L_i``: the length of run ``i``'s list for the query.
* Sums run over the runs that retrieved ``d`` unless said otherwise.

To add a method: write its declaration below (``value``: what one run's row adds, from
:class:`~metrics_core.fusion.table.RunRows`; ``combine``: the fused score from the
:class:`~metrics_core.fusion.table.Table` of the runs' values, with the helpers of
:mod:`metrics_core.fusion.kernels`), append it to :data:`DECLARED` (a supervised method: to
:data:`~metrics_core.fusion.supervised.SUPERVISED`), and give its label and
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
from metrics_core.fusion.supervised import SUPERVISED

_FOX_SHAW = N_("Fox and Shaw 1994, Combination of multiple searches (TREC-2)")
_WU_CRESTANI = N_("Wu and Crestani 2002, Data fusion with estimated weights (CIKM)")
_MOURAO = N_("Mourao, Martins and Magalhaes 2014 (CMIG)")
_ASLAM_MONTAGUE = N_("Aslam and Montague 2001, Models for metasearch (SIGIR)")
_MONTAGUE_ASLAM = N_("Montague and Aslam 2002, Condorcet fusion for improved retrieval (CIKM)")


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


# --- values of a row (ranx's arithmetic, operation for operation) ---------------------------
def _rrf(rows, p):
    # 1 / (k + i + 1): whole numbers while k is one, exact in floats (below 2**53)
    d = np.add(rows.pos, p["k"], dtype=np.float64)
    d += 1
    return np.divide(1.0, d, out=d)


def _inverse_square(rows, p):
    return 1.0 / ((rows.pos + 1) ** 2)


def _rbc(rows, p):
    phi = float(p["phi"])
    return (1.0 - phi) * k.int_power(phi, rows.pos)


def _rank(rows, p):
    return rows.pos.astype(np.float64)


def _borda_points(rows, p):
    return rows.n_cand - rows.pos  # N - i: N for the first document


# --- combinations of the runs (each sum run after run: ranx's order) -------------------------
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
        k.combsum,
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
        combine=k.combsum,
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
        combine=k.combsum,
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
    *SUPERVISED,
]

#: name -> declaration, in the catalogue's order
METHODS: dict[str, FusionMethod] = method_table(DECLARED)

__all__ = ["METHODS", "DECLARED"]
