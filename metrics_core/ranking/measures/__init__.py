"""Every ranking measure, for all queries at once, each defined once.

Each function takes the :class:`~metrics_core.ranking.engine.RankedLists`, the parsed
:class:`~metrics_core.ranking.definition.MeasureSpec` and the
:class:`~metrics_core.conventions.Conventions`, and returns one float64 value per
evaluated query. No loop over queries: reductions are ``np.bincount`` over the rows that
matter (usually only the relevant ones) or O(queries) gathers from one ``cumsum``.

The :func:`~metrics_core.ranking.definition.measure` decorator above each function is the
family's whole definition (names, parameters, formula, edge cases, reference, worked
example); the registry, the parser, the app's picker and the Learn page read it. Adding a
measure is one decorated function in the module of its family.

Definitions follow trec_eval 10.0 (Buckley; NIST) under the default conventions, and the
named alternatives under other conventions. Notation: for a query, ``rel_i`` is 1 when
the document at rank ``i`` is relevant (judged label >= threshold), ``R`` the number of
relevant documents in the qrels, ``N`` the judged non-relevant ones.

The families, by module: :mod:`.precision_recall` (P, R, F1, Hits), :mod:`.rr` (RR,
FirstRel, Success), :mod:`.ap` (AP, GMAP), :mod:`.dcg` (DCG, nDCG, NCG), :mod:`.rprec_bpref`
(Rprec, Bpref, GMBpref), :mod:`.iprec` (IPrec), :mod:`.counts` (Judged, NumQ, NumRet,
NumRel, NumRelRet), :mod:`.infap_rbp` (infAP, RBP, RBPResid), :mod:`.trec_more`
(Unjudged, RprecMult, Utility, IPrecAvg), :mod:`.cumulative_gain` (BinG, G, nDCGRel,
RnDCG), :mod:`.sets` (RelP, SetRelP, SetAP, SetF, NumNonRelJudgedRet), :mod:`.err` (ERR),
:mod:`.diversity` (alpha-nDCG, alpha-DCG, ERR-IA, nERR-IA, NRBP, nNRBP, P-IA, MAP-IA, strec:
ndeval's diversity measures, from subtopic qrels).
Shared arithmetic is in :mod:`metrics_core.ranking.kernels`; compute and aggregate in
:mod:`.summaries`. The modules are imported below in the order the families are listed
everywhere (the registry keeps definition order).
"""

from __future__ import annotations

# the family modules, in definition order (importing one registers its families)
# isort: off
from metrics_core.ranking.measures import (  # noqa: F401
    precision_recall,
    rr,
    ap,
    dcg,
    rprec_bpref,
    iprec,
    counts,
    infap_rbp,
    trec_more,
    cumulative_gain,
    sets,
    err,
    diversity,
)

# isort: on
from metrics_core.ranking.measures.common import IIR, MIN_GEO_MEAN, QRELS, RUN, TREC_EVAL
from metrics_core.ranking.measures.summaries import (
    aggregate,
    compute,
    missing_mask,
    summarize,
    summary,
    trec_order,
)

__all__ = [
    "IIR",
    "MIN_GEO_MEAN",
    "QRELS",
    "RUN",
    "TREC_EVAL",
    "aggregate",
    "compute",
    "missing_mask",
    "summarize",
    "summary",
    "trec_order",
]
