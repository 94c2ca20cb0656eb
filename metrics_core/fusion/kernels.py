"""The fusion methods' shared arithmetic: what the declarations of
:mod:`metrics_core.fusion.methods` are written with.

A method's ``value`` turns one run's rows (:class:`~metrics_core.fusion.table.RunRows`) into
what each row adds; its ``combine`` turns the runs' values over the candidates
(:class:`~metrics_core.fusion.table.Table`) into the fused scores.

Every sum here is computed in one fixed order, ranx's: run after run, each run's value
added to the candidate's running total (or, over ranks and queries, position after position
and query after query), never by a matrix product (BLAS blocks its sums by the processor's
kernel and the rows in a block) nor by numpy's pairwise summation. A fused score is thus the
same bit for bit on every machine, and the same as ranx's numba loops, which add in that
order too. Logarithms, powers and roots of the small whole numbers the methods use (the
number of runs) come from one table computed with the C library (:func:`by_count`), as
numba's are.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

#: BayesFuse's log-odds of a document a run did not retrieve (ranx's ``min_odd``)
MIN_LOG_ODDS = math.log(0.001 / 0.999)
#: SegFuse's segment boundaries (ranks 1-5, 6-15, 16-35, ... 2556-5115)
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
#: BayesFuse's segment boundaries
BAYES_CUTOFFS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)
#: the value CombMAX and CombMIN give a run that did not retrieve the document (ranx's)
FAR = 1e9


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


def int_power(base: float, exponent: np.ndarray) -> np.ndarray:
    """``base ** exponent`` for whole exponents >= 0, by repeated squaring as numba computes
    ``float ** int`` (not the C library's ``pow``, which rounds differently)."""
    exponent = np.asarray(exponent, dtype=np.int64)
    out = np.ones(len(exponent))
    square = float(base)
    e = exponent.copy()
    while e.any():
        odd = (e & 1).astype(bool)
        out[odd] *= square
        e >>= 1
        square *= square
    return out


def window_means(table: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sum(table[a:b + 1]) / (b - a + 1)`` for each window (the slice cut at the table's
    end), each sum taken left to right from 0 as numba's ``sum`` does; one pass per offset
    over the distinct windows."""
    key = a.astype(np.int64) * (int(b.max(initial=0)) + 2) + b
    uniq, inverse = np.unique(key, return_inverse=True)
    ua = uniq // (int(b.max(initial=0)) + 2)
    ub = uniq - ua * (int(b.max(initial=0)) + 2)
    acc = np.zeros(len(uniq))
    width = int((ub - ua).max(initial=-1)) + 1
    for t in range(width):
        at = ua + t
        ok = (at <= ub) & (at < len(table))
        acc[ok] += table[at[ok]]
    return (acc / (ub - ua + 1))[inverse.reshape(-1)]


def segment_sums(values: np.ndarray, segment: np.ndarray, place: np.ndarray, n: int) -> np.ndarray:
    """Each segment's sum of ``values``, added in the order of ``place`` (0, 1, 2 ... within
    the segment) from 0: one pass per place over every segment at once."""
    acc = np.zeros(n)
    if not len(values):
        return acc
    order = np.argsort(place, kind="stable")
    values, segment, place = values[order], segment[order], place[order]
    bounds = np.searchsorted(place, np.arange(int(place.max()) + 2))
    for k in range(len(bounds) - 1):
        s = slice(bounds[k], bounds[k + 1])
        acc[segment[s]] += values[s]  # one value per segment at each place
    return acc


def sequential_columns(matrix: np.ndarray) -> np.ndarray:
    """The sums of a matrix's columns, rows added top to bottom from 0."""
    if not len(matrix):
        return np.zeros(matrix.shape[1] if matrix.ndim == 2 else 0)
    return np.cumsum(matrix, axis=0)[-1]


# --- how the runs combine -------------------------------------------------------------------
#: the rows of a run added at a time by :func:`run_sum` (their temporaries in cache)
SUM_BLOCK = 1 << 16


def run_sum(t, missing: float | Callable[[int], np.ndarray] = 0.0, weighted: bool = False):
    """Each candidate's ``sum over the runs of [w_i *] value_i``, ``missing`` where run ``i``
    did not retrieve it (a number, or a function of the run giving one per candidate),
    added run after run from 0 (a run's rows :data:`SUM_BLOCK` at a time, their values
    made a block at a time where the table gives them so: each candidate is retrieved
    once by a run, so the blocks change no sum's order)."""
    acc = np.zeros(t.P)
    for i in range(t.R):
        w = float(t.weights[i]) if weighted else None
        if not callable(missing) and missing == 0.0:
            for p, x in t.blocks(i, SUM_BLOCK):
                if w is not None:
                    x = w * x
                if i == 0:  # 0 + x, bit for bit (x + 0.0 turns -0.0 into 0.0): no gather
                    acc[p] = x + 0.0
                else:
                    acc[p] += x
        else:
            d = t.dense(i, missing(i) if callable(missing) else missing)
            acc += d if w is None else w * d
    return acc


def combsum(t, p=None) -> np.ndarray:
    """CombSUM's combination, as a method's ``combine``: :func:`run_sum` of the values."""
    return run_sum(t)


def retrieved_weight(t) -> np.ndarray:
    """Each candidate's sum of the weights of the runs that retrieved it, run after run."""
    acc = np.zeros(t.P)
    for i in range(t.R):
        acc[t.candidates(i)] += float(t.weights[i])
    return acc


def retrieved_weighted_sum(t) -> np.ndarray:
    """Each candidate's sum of ``value_i * w_i`` over the runs that retrieved it."""
    acc = np.zeros(t.P)
    for i in range(t.R):
        pid, v = t.rows(i)
        acc[pid] += v * float(t.weights[i])
    return acc


def extreme(t, highest: bool) -> np.ndarray:
    """Each candidate's highest (lowest) value over the runs, a run that did not retrieve
    it counting ``-1e9`` (``1e9``) as ranx's ``max``/``min`` of ``res.get(d, -1e9)``; the
    first of equal values kept."""
    missing = -FAR if highest else FAR
    acc = t.dense(0, missing)
    for i in range(1, t.R):
        d = t.dense(i, missing)
        acc = np.where(d > acc, d, acc) if highest else np.where(d < acc, d, acc)
    return acc


def median(t) -> np.ndarray:
    """Each candidate's median over the runs that retrieved it (the mean of the two middle
    values of an even count)."""
    x = np.sort(np.stack([t.dense(i, np.inf) for i in range(t.R)], axis=1), axis=1)
    c = t.count.astype(np.int64)
    lo = np.take_along_axis(x, ((c - 1) // 2)[:, None], axis=1)[:, 0]
    hi = np.take_along_axis(x, (c // 2)[:, None], axis=1)[:, 0]
    return (lo + hi) / 2


def by_count(t, fn: Callable[[int], float]) -> np.ndarray:
    """``fn(n(d))`` for each candidate: ``fn`` (a C-library function of a whole number:
    ``math.log``, ``math.sqrt``, a power) computed once per count from 1 to the number of
    runs, then looked up."""
    table = np.array([math.nan] + [fn(n) for n in range(1, t.R + 1)])
    return table[t.count.astype(np.int64)]


def borda_missing(t) -> Callable[[int], np.ndarray]:
    """The Borda points run ``i`` gives the candidates it did not retrieve: ``(N - L_i + 1) / 2``."""
    return lambda i: (t.n_cand - t.lengths(i) + 1) / 2


__all__ = [
    "MIN_LOG_ODDS",
    "SEGFUSE_BOUNDS",
    "BAYES_CUTOFFS",
    "FAR",
    "SUM_BLOCK",
    "score",
    "lookup",
    "int_power",
    "window_means",
    "segment_sums",
    "sequential_columns",
    "run_sum",
    "retrieved_weight",
    "retrieved_weighted_sum",
    "extreme",
    "median",
    "by_count",
    "borda_missing",
]
