"""ranx's score normalisations on prepared runs, and the ranks ranx's rank-based methods see.

Each run is ranked best first (:mod:`metrics_core.fusion.prepare`), so a list's maximum is its
first row and its minimum its last; sums are ``np.bincount`` in the rows' order, as ranx adds
them. Formulas: :data:`metrics_core.fusion.catalog.NORMS` (Bassani and Romelli 2022, ranx 0.3).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from metrics_core.fusion.prepare import Prepared
from metrics_core.ranking.quicksort import positions, segment_order

#: the denominators' floor of ranx's normalisations
EPS = 1e-9


def _segment_stats(prep: Prepared, scores: np.ndarray):
    """Per (run, query): first (max) and last (min) score, sum, mean, population std."""
    nq = prep.n_queries
    seg = prep.run.astype(np.int64) * nq + prep.q
    size = prep.n_runs * nq
    count = np.bincount(seg, minlength=size).astype(np.float64)
    total = np.bincount(seg, weights=scores, minlength=size)
    first = prep.pos == 0
    mx = np.zeros(size)
    mx[seg[first]] = scores[first]
    last = prep.pos == prep.lengths.reshape(-1)[seg] - 1
    mn = np.zeros(size)
    mn[seg[last]] = scores[last]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    var = np.bincount(seg, weights=(scores - mean[seg]) ** 2, minlength=size) / np.maximum(count, 1)
    return seg, mx, mn, total, count, mean, np.sqrt(var)


#: the rows of the blocks of whole lists the min-max and max normalisations work on
BLOCK = 1 << 16


def _blocks(first: np.ndarray, n: int) -> list[tuple[int, int]]:
    """Ranges ``[a, b)`` of lists (``first``: each list's first row, ``n`` rows in all) of
    about :data:`BLOCK` rows each."""
    cuts = np.searchsorted(first, np.arange(BLOCK, n, BLOCK))
    bounds = np.unique(np.r_[0, cuts, len(first)]).tolist()
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def normalise(prep: Prepared, norm: str, candidates: np.ndarray | None = None) -> np.ndarray:
    """Each row's normalised score (ranx's formulas, :data:`~metrics_core.fusion.catalog.NORMS`);
    ``candidates``: the number of candidates of each query (Borda's ``N``). The value Borda
    gives the candidates a run did not retrieve is added by :func:`fuse_prepared`."""
    s = prep.raw
    if norm == "none":
        return s.copy()
    if norm == "borda":
        assert candidates is not None
        return 1.0 - prep.pos / candidates[prep.q]
    if norm == "rank":
        return 1.0 - prep.pos / prep.lengths[prep.run, prep.q]
    if norm in ("min-max", "min-max-inverted", "max"):
        # each list is ranked best first: its maximum is its first row, its minimum its last
        # (the arithmetic of each list's ends done once a list, then repeated over its rows)
        # in blocks of whole lists of about BLOCK rows: the repeated ends stay in cache
        size = prep.list_len
        first = np.cumsum(size) - size
        top, bottom = s[first], s[first + size - 1]
        scale = np.maximum(top, EPS) if norm == "max" else np.maximum(top - bottom, EPS)
        out = np.empty(len(s))
        for a, b in _blocks(first, len(s)):
            lo, hi = int(first[a]), int(first[b]) if b < len(first) else len(s)
            part, n = out[lo:hi], size[a:b]
            if norm == "max":
                np.divide(s[lo:hi], np.repeat(scale[a:b], n), out=part)
                continue
            if norm == "min-max":
                np.subtract(s[lo:hi], np.repeat(bottom[a:b], n), out=part)
            else:
                np.subtract(np.repeat(top[a:b], n), s[lo:hi], out=part)
            part /= np.repeat(scale[a:b], n)
        return out
    seg, mx, mn, total, count, mean, std = _segment_stats(prep, s)
    if norm == "min-max":
        return (s - mn[seg]) / np.maximum(mx[seg] - mn[seg], EPS)
    if norm == "min-max-inverted":
        return (mx[seg] - s) / np.maximum(mx[seg] - mn[seg], EPS)
    if norm == "max":
        return s / np.maximum(mx[seg], EPS)
    if norm == "sum":
        return (s - mn[seg]) / np.maximum(total[seg] - mn[seg] * count[seg], EPS)
    if norm == "zmuv":
        return (s - mean[seg]) / np.maximum(std[seg], EPS)
    raise AssertionError(norm)


def own_ranks(norm: str, sorted_again: bool = False) -> bool:
    """Whether the ranks ranx's rank-based methods see after ``norm`` are each run's own
    (:attr:`Prepared.pos <metrics_core.fusion.prepare.Prepared.pos>`; see
    :func:`ranx_positions`)."""
    return norm == "none" or (norm != "min-max-inverted" and not sorted_again)


def ranx_positions(
    prep: Prepared,
    norm: str,
    scores: np.ndarray | Callable[[], np.ndarray],
    *,
    sorted_again: bool = False,
) -> np.ndarray:
    """Each row's 0-based rank as ranx's rank-based methods see it: the run's order, or,
    after ``min-max-inverted`` (whose ``Run.sort`` ranks the inverted scores again, numba's
    quicksort from the run's order), that new order. ``sorted_again``: the order ranx's
    training sees, which sorts every normalised run again (``Run.to_typed_list`` sorts a run
    built by a normalisation: numba's quicksort once more, from the run's order, which moves
    equal scores in lists of 16 or more). ``scores``: the rows' normalised scores, or a
    function giving them (called only when the ranks are the scores' own)."""
    if own_ranks(norm, sorted_again):
        return prep.pos
    s = scores() if callable(scores) else scores
    return positions(segment_order(-s, prep.list_len), prep.list_len)


__all__ = ["EPS", "normalise", "own_ranks", "ranx_positions"]
