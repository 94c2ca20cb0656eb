"""What a fusion method reads: one run's rows (:class:`RunRows`, a method's ``value``) and the
runs' values over the candidates (:class:`Table`, a method's ``combine``); see
:class:`metrics_core.fusion.declaration.FusionMethod`.
"""

from __future__ import annotations

import numpy as np

from metrics_core.fusion.condorcet import majority_positions, not_strict
from metrics_core.fusion.prepare import Prepared


class RunRows:
    """One run's rows of a shard, what a method's ``value`` reads: ``pos`` (0-based rank in
    the run's list for the query, ranx's), ``score`` (normalised), ``length`` (the list's
    length ``L``), ``n_cand`` (the query's number of candidates ``N``), ``i`` (the run's
    index). ``score``, ``length`` and ``n_cand`` may be given as functions: each is then
    computed the first time a method reads it (most methods read neither of the last two,
    most rank-based ones not the scores: no array over the rows made for nothing)."""

    def __init__(self, i, pos, score, length, n_cand):
        self.i, self.pos = i, pos
        self._score, self._length, self._n_cand = score, length, n_cand

    @property
    def score(self) -> np.ndarray:
        if callable(self._score):
            self._score = self._score()
        return self._score

    @property
    def length(self) -> np.ndarray:
        if callable(self._length):
            self._length = self._length()
        return self._length

    @property
    def n_cand(self) -> np.ndarray:
        if callable(self._n_cand):
            self._n_cand = self._n_cand()
        return self._n_cand

    def estimate(self, p: dict, key: str) -> np.ndarray:
        """This run's trained estimate (``probs``, ``log_odds`` or ``map_scores``)."""
        return p[key][self.i]


class Table:
    """The runs' values over a shard's candidates, what a method's ``combine`` reads (with
    the helpers of :mod:`metrics_core.fusion.kernels`): run ``i``'s candidates and values
    (:meth:`rows`, :meth:`blocks`, :meth:`dense`), ``count`` (``n(d)``, the runs that
    retrieved each candidate), :attr:`n_cand` (``N`` of each candidate's query),
    :meth:`lengths` (``L_i`` of each candidate's query), ``weights``, ``R`` runs, ``P``
    candidates. After the Borda normalisation a score-based method sees every candidate in
    every run (ranx's).

    A run's values may be given as a function of a range of its rows ``(lo, hi)`` (a
    method's ``value`` is computed row by row): :meth:`blocks` then computes them a block
    at a time (no array of the values of all the rows), :meth:`rows` once for all."""

    def __init__(self, prep: Prepared, pids, values, n_cand, weights, count=None):
        self._prep = prep
        self._pids, self._values = pids, values
        self._n_cand, self.weights = n_cand, weights
        self.R, self.P = prep.n_runs, prep.n_candidates
        self._count = count
        #: local query codes whose answer is an accident of ranx's (filled by a method)
        self.accidents: list[np.ndarray] = []

    def rows(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Run ``i``'s candidates and their values (each candidate once)."""
        if callable(self._values[i]):
            self._values[i] = self._values[i](0, len(self._pids[i]))
        return self._pids[i], self._values[i]

    def candidates(self, i: int) -> np.ndarray:
        """Run ``i``'s candidates (each once), in the order of its values."""
        return self._pids[i]

    def blocks(self, i: int, size: int):
        """Run ``i``'s candidates and values (:meth:`rows`), ``size`` rows at a time."""
        pid, v = self._pids[i], self._values[i]
        for lo in range(0, len(pid), size):
            hi = min(lo + size, len(pid))
            yield pid[lo:hi], v(lo, hi) if callable(v) else v[lo:hi]

    def dense(self, i: int, missing) -> np.ndarray:
        """Run ``i``'s value of every candidate, ``missing`` (a number or one per candidate)
        where it did not retrieve it."""
        out = np.array(np.broadcast_to(np.asarray(missing, dtype=np.float64), (self.P,)))
        pid, v = self.rows(i)
        out[pid] = v
        return out

    @property
    def n_cand(self) -> np.ndarray:
        """``N``: the number of candidates of each candidate's query (made when first read,
        when given as a function)."""
        if callable(self._n_cand):
            self._n_cand = self._n_cand()
        return self._n_cand

    @property
    def count(self) -> np.ndarray:
        if self._count is None:
            self._count = np.bincount(self._prep.pid, minlength=self.P).astype(np.float64)
        return self._count

    def lengths(self, i: int) -> np.ndarray:
        """``L_i``: the length of run ``i``'s list for each candidate's query."""
        return self._prep.lengths[i, self._prep.pq].astype(np.float64)

    def condorcet(self, weights: np.ndarray) -> np.ndarray:
        """``N`` minus each candidate's position in its query's majority order (ranx's vote:
        ``x`` before ``y`` when the weight of the runs ranking ``x`` strictly above ``y``,
        added run by run, is at least that of the others, added likewise; a run that
        retrieved neither counts for ``y``; an unretrieved document's rank is 1,000,000).
        Queries whose relation is not a strict total order go to :attr:`accidents`."""
        ranks = [self.dense(i, 1_000_000.0) for i in range(self.R)]
        w = [float(x) for x in weights]

        def before(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            xv = np.zeros(len(x))
            yv = np.zeros(len(x))
            for r, wi in zip(ranks, w, strict=True):
                above = r[x] < r[y]
                xv += np.where(above, wi, 0.0)
                yv += np.where(above, 0.0, wi)
            return xv >= yv

        pq, nq = self._prep.pq, self._prep.n_queries
        position = majority_positions(before, pq, nq)
        self.accidents.append(not_strict(before, position, pq, nq))
        return self.n_cand - position


__all__ = ["RunRows", "Table"]
