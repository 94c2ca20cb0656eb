"""The order numba's ``np.argsort`` gives equal keys, reproduced for many lists at once.

ranx (Bassani and Romelli 2022) ranks a run's documents with numba's ``np.argsort`` of
the negated scores, in the order the documents were given (``Run`` built from a dict, a
file, a DataFrame). numba's default sort is a quicksort (``numba/misc/quicksort.py``:
median-of-three pivot, Hoare partition, insertion sort below 16 items), so the order of
equal scores is not the input order once a list holds 16 documents or more: it is
whatever the partitions leave, deterministic for a given input. :func:`argsort_segments`
runs that algorithm on every list at once, step by step as numpy operations over all the
lists' pending partitions (no loop over lists or items in Python), and gives the same
permutation, tested against numba itself.

The partition, written for many ranges at once: with the pivot stashed at ``high``, the
left scan stops at the items not less than the pivot (``I``, left to right, ``high``
included) and the right scan at the items not greater (``J``, right to left); the ``k``-th
swap exchanges ``I[k]`` and ``J[k]`` while ``I[k] < J[k]`` (the items between the two scans
are untouched when each is reached), and the pivot goes to ``I[m]`` (``m`` swaps), or to
``J[m - 1]`` when that is nearer (the scan meets an item it swapped there). Ranges of
fewer than 16 items are insertion-sorted, which is a stable sort.
"""

from __future__ import annotations

import numpy as np

#: numba's SMALL_QUICKSORT: ranges of ``high - low < 15`` are insertion-sorted
SMALL = 15


def _codes(keys: np.ndarray) -> np.ndarray:
    """Integer codes in the keys' order (NaN after every number, all NaNs equal; -0.0 equal
    to 0.0), so that the comparisons are numba's ``lt_floats``."""
    keys = np.asarray(keys, dtype=np.float64)
    nan = np.isnan(keys)
    if not nan.any():
        return keys + 0.0  # -0.0 becomes 0.0; every other comparison is the floats' own
    filled = np.where(nan, np.inf, keys)
    _, codes = np.unique(filled, return_inverse=True)
    codes = codes.astype(np.int64).reshape(-1)
    if nan.any():
        codes[nan] = codes.max(initial=0) + 1
    return codes


def argsort_segments(keys: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """numba's ``np.argsort(keys[a:b])`` (kind ``quicksort``) of every segment at once.

    ``keys`` holds the segments one after the other (``lengths`` items each); the result
    holds, segment by segment, the positions (into ``keys``) of the segment's items in
    sorted order (ascending keys, equal keys where numba's quicksort leaves them)."""
    keys = np.asarray(keys)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(keys)
    R = np.arange(n, dtype=np.int64)
    if n < 2:
        return R
    K = _codes(keys)
    starts = np.cumsum(lengths) - lengths
    keep = lengths >= 2
    lo, hi = starts[keep], (starts + lengths - 1)[keep]
    small_lo, small_hi = [], []
    while len(lo):
        big = hi - lo >= SMALL
        small_lo.append(lo[~big])
        small_hi.append(hi[~big])
        lo, hi = lo[big], hi[big]
        if not len(lo):
            break
        lo, hi = _partition(K, R, lo, hi)
    if small_lo:
        _insertion_sort(K, R, np.concatenate(small_lo), np.concatenate(small_hi))
    return R


def segment_order(keys: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """:func:`argsort_segments`, with the quicksort run only where it matters: a segment
    without equal keys, or of fewer than 16 items, is sorted stably (numba's order there);
    only the others go through the partitions."""
    keys = np.asarray(keys, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(keys)
    seg = np.repeat(np.arange(len(lengths)), lengths)
    K = _codes(keys)
    order = np.lexsort((K, seg))  # stable: equal keys keep their input order
    if n < 2:
        return order
    sk, sseg = K[order], seg[order]
    tied = (sseg[1:] == sseg[:-1]) & (sk[1:] == sk[:-1])
    redo = np.zeros(len(lengths), dtype=bool)
    redo[sseg[1:][tied]] = True
    redo &= lengths > SMALL
    if not redo.any():
        return order
    starts = np.cumsum(lengths) - lengths
    slots = np.flatnonzero(redo[seg])  # the items of those segments, in input order
    sub = argsort_segments(keys[slots], lengths[redo])
    order[slots] = slots[sub]  # their slots in ``order`` are their own (segments stay put)
    del starts
    return order


def positions(order: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each item's 0-based place in its segment, from a segment order (as
    :func:`segment_order` returns)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.arange(len(order), dtype=np.int64) - starts
    return out


def _swap(R: np.ndarray, a: np.ndarray, b: np.ndarray, where: np.ndarray) -> None:
    a, b = a[where], b[where]
    ra = R[a]
    R[a] = R[b]
    R[b] = ra


def _partition(K, R, lo, hi):
    """One partition of every range ``[lo, hi]`` (inclusive, at least 16 items); returns
    the ranges left to sort (both sides of each pivot, two items or more)."""
    T = len(lo)
    mid = (lo + hi) >> 1
    # median of three {low, middle, high}
    _swap(R, lo, mid, K[R[mid]] < K[R[lo]])
    _swap(R, hi, mid, K[R[hi]] < K[R[mid]])
    _swap(R, lo, mid, K[R[mid]] < K[R[lo]])
    pivot = K[R[mid]]
    _swap(R, hi, mid, np.ones(T, dtype=bool))  # the pivot stashed at the end
    size = hi - lo + 1
    task = np.repeat(np.arange(T), size)
    p = np.arange(int(size.sum()), dtype=np.int64) - np.repeat(np.cumsum(size) - size, size)
    p += lo[task]
    v, pv = K[R[p]], pivot[task]
    left = v >= pv  # where the left scan stops (the stashed pivot at ``hi`` among them)
    right = (v <= pv) & (p < hi[task])  # where the right scan stops
    Ip, It = p[left], task[left]  # increasing positions, by task
    nI = np.bincount(It, minlength=T)
    kI = np.arange(len(Ip)) - np.repeat(np.cumsum(nI) - nI, nI)
    Jt = task[right]  # by task, increasing positions: reversed within each task below
    nJ = np.bincount(Jt, minlength=T)
    first_J = np.cumsum(nJ) - nJ
    local = np.arange(len(Jt)) - first_J[Jt]
    Jp = np.empty(len(Jt), dtype=np.int64)
    Jp[first_J[Jt] + (nJ - 1)[Jt] - local] = p[right]  # decreasing positions, task by task
    kJ = local  # Jt is grouped by task already: the k-th of each task sits at first + k
    pairs = np.minimum(nI, nJ)
    a_sel = kI < pairs[It]
    b_sel = kJ < pairs[Jt]
    A, B, At = Ip[a_sel], Jp[b_sel], It[a_sel]  # aligned: the k-th of each side, task by task
    swap = A < B  # true for the first m pairs of a task, then false
    m = np.bincount(At[swap], minlength=T)
    _swap(R, A, B, swap)
    # the pivot's place: I[m], or J[m - 1] when the left scan meets it first
    first_I = np.cumsum(nI) - nI
    i_m = Ip[first_I + m]
    if len(Jp):
        j_prev = Jp[np.minimum(first_J + np.maximum(m - 1, 0), len(Jp) - 1)]
        final = np.where(m > 0, np.minimum(i_m, j_prev), i_m)
    else:
        final = i_m
    _swap(R, final, hi, np.ones(T, dtype=bool))
    new_lo = np.concatenate((lo, final + 1))
    new_hi = np.concatenate((final - 1, hi))
    keep = new_hi > new_lo
    return new_lo[keep], new_hi[keep]


def _insertion_sort(K, R, lo, hi) -> None:
    """Insertion sort of every range ``[lo, hi]`` (fewer than 16 items): a stable sort by
    key of the items the partitions left there."""
    keep = hi > lo
    lo, hi = lo[keep], hi[keep]
    if not len(lo):
        return
    size = hi - lo + 1
    task = np.repeat(np.arange(len(lo)), size)
    p = np.arange(int(size.sum()), dtype=np.int64) - np.repeat(np.cumsum(size) - size, size)
    p += lo[task]
    items = R[p]
    order = np.lexsort((K[items], task))  # a stable sort: equal keys keep their places
    R[p] = items[order]


__all__ = ["argsort_segments", "segment_order", "positions", "SMALL"]
