"""The fusion methods' shared arithmetic: what the declarations of
:mod:`metrics_core.fusion.methods` are written with.

A method's ``value`` turns one run's rows (:class:`~metrics_core.fusion.core.RunRows`) into
what each row adds; its ``combine`` turns the table of every run's values over the
candidates (:class:`~metrics_core.fusion.core.Table`) into the fused scores.
"""

from __future__ import annotations

import numpy as np

#: BayesFuse's log-odds of a document a run did not retrieve (ranx's ``min_odd``)
MIN_LOG_ODDS = float(np.log(0.001 / 0.999))
#: SegFuse's segment boundaries (ranks 1-5, 6-15, 16-35, ... 2556-5115)
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
#: BayesFuse's segment boundaries
BAYES_CUTOFFS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)


# --- what a row adds ---------------------------------------------------------------------
def score(rows, p) -> np.ndarray:
    """The row's normalised score."""
    return rows.score


def lookup(table: np.ndarray, index: np.ndarray, fill: float) -> np.ndarray:
    """``table[index]``, ``fill`` where the index is past the table."""
    out = np.full(len(index), fill)
    ok = index < len(table)
    out[ok] = table[index[ok]]
    return out


# --- how the runs combine -------------------------------------------------------------------
def total(t) -> np.ndarray:
    """Each candidate's sum of the runs' values (0 where a run did not retrieve it)."""
    return t.S.sum(axis=1)


def weighted_total(t) -> np.ndarray:
    """Each candidate's sum of the runs' values times their weights."""
    return t.S @ t.weights


def retrieved_weight(t) -> np.ndarray:
    """Each candidate's sum of the weights of the runs that retrieved it."""
    return t.M @ t.weights


def borda_points(t) -> None:
    """Replace the runs' values (0-based ranks) by Borda points: ``N - r`` for a retrieved
    candidate, ``(N - L_i + 1) / 2`` for the others (every run gives every candidate points)."""
    n = t.n_cand[:, None]
    t.S = np.where(t.M, n - t.S, (n - t.lengths + 1) / 2)
    t.M = np.ones_like(t.M)


__all__ = [
    "MIN_LOG_ODDS",
    "SEGFUSE_BOUNDS",
    "BAYES_CUTOFFS",
    "score",
    "lookup",
    "total",
    "weighted_total",
    "retrieved_weight",
    "borda_points",
]
