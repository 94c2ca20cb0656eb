"""Where ranx's fused run is an accident of its implementation, and ranx's order of a fused run.

ranx's answer depends, in a few places, on the order of a Python set of document ids (which
changes with every process: string hashing) or on memory past the end of an array. RankLab
gives a reproducible answer there and says so once per reason with a
:class:`FusionOrderWarning` naming the method and the queries (:func:`warn_accidents`).
:func:`ranx_order` orders a fused run's candidates as ranx's ``Run`` holds them (the ranx
drop-in) and finds the ties that fall in set order.
"""

from __future__ import annotations

import warnings

import numpy as np

from metrics_core.errors import InputWarning
from metrics_core.fusion.prepare import Prepared
from metrics_core.ranking.quicksort import SMALL as SMALL_QUICKSORT
from metrics_core.ranking.quicksort import segment_order


class FusionOrderWarning(InputWarning):
    """ranx's result depends on an accident of its implementation (the order of a Python
    set, memory past an array); RankLab gives a reproducible result instead. ``method``,
    ``reason`` and ``queries`` (every query id concerned) say where."""

    def __init__(self, message: str, method: str = "", reason: str = "", queries=()):
        super().__init__(message)
        self.method, self.reason, self.queries = method, reason, list(queries)


#: why ranx's answer is an accident, by reason (the warning's words)
ACCIDENTS = {
    "condorcet": "ranx sorts the candidates by the majority vote starting from the order of a "
    "Python set of their ids, which changes with every process, and the vote is not a strict "
    "total order there (a tie or a cycle); RankLab's merge sort starts from the ids' order",
    "borda": "ranx ranks the Borda-normalised candidates in the order of a Python set of their "
    "ids, which changes with every process; RankLab uses each run's own ranking",
    "order": "ranx orders documents of equal fused scores by the order of a Python set of "
    "their ids, which changes with every process; RankLab by their first appearance",
    "bayes_table": "ranx reads past the end of its log-odds table there (ranks beyond it); "
    "RankLab gives those documents the log-odds of a document not retrieved",
}


def ranx_order(prep: Prepared, spec, norm: str, pos, fused, accidents: dict) -> np.ndarray:
    """The candidates in the order of ranx's fused ``Run``: each query's documents as its
    combination first meets them (run after run, each run's documents in its order), then
    numba's quicksort of the negated fused scores from that order (``Run.sort``). Where
    ranx meets them in a Python set's order (BordaFuse's documents the first run did not
    retrieve; every document after the Borda normalisation) RankLab takes their first
    appearance instead, and a tie among such documents is an accident (``order``)."""
    P, pq = prep.n_candidates, prep.pq
    width = int(pos.max(initial=0)) + 1
    key = np.full(P, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(key, prep.pid, prep.run.astype(np.int64) * width + pos)
    order = np.lexsort((key, pq))
    counts = np.bincount(pq, minlength=prep.n_queries)
    order = order[segment_order(-fused[order], counts)]
    if norm == "borda":
        from_set = np.ones(P, dtype=bool)
    elif spec.name in ("bordafuse", "w_bordafuse"):
        from_set = key >= width  # not retrieved by the first run
    else:
        return order
    # an accident: two documents in set order with equal scores (a short list keeps their
    # insertion order), or, in a list of 16 or more with equal scores, two documents in set
    # order anywhere (numba's partitions move equal scores by where every document stands)
    f, qq, fs = fused[order], pq[order], from_set[order]
    same = (qq[1:] == qq[:-1]) & (f[1:] == f[:-1])
    tied = np.zeros(prep.n_queries, dtype=bool)
    tied[qq[1:][same]] = True
    both = np.zeros(prep.n_queries, dtype=bool)
    both[qq[1:][same & fs[1:] & fs[:-1]]] = True
    in_set = np.bincount(pq[from_set], minlength=prep.n_queries)
    hit = np.flatnonzero(both | (tied & (counts > SMALL_QUICKSORT) & (in_set >= 2)))
    if len(hit):
        accidents["order"] = hit
    return order


def warn_accidents(method: str, notes: list, stacklevel: int = 3) -> None:
    """One :class:`FusionOrderWarning` per reason, naming the method and the queries."""
    for reason, ids in notes:
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        text = (
            f"{method}: in {len(ids)} quer{'y' if len(ids) == 1 else 'ies'} ({shown}) "
            f"{ACCIDENTS[reason]}"
        )
        warnings.warn(FusionOrderWarning(text, method, reason, ids), stacklevel=stacklevel)


__all__ = ["FusionOrderWarning", "ACCIDENTS", "ranx_order", "warn_accidents"]
