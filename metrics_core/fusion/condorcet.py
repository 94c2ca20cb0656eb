"""The Condorcet methods' majority order, all queries at once (Montague and Aslam 2002).

``before(x, y)`` answers, for arrays of candidates, whether ``x`` comes before ``y`` in the
(weighted) majority vote; :func:`majority_positions` sorts every query's candidates by it
(a merge sort, as ranx's comparison sort) and :func:`not_strict` names the queries where the
vote is not a strict total order (a tie or a cycle: ranx's answer is then an accident of a
Python set's order, :mod:`metrics_core.fusion.accidents`).
"""

from __future__ import annotations

import numpy as np


def not_strict(before, position: np.ndarray, pq: np.ndarray, nq: int) -> np.ndarray:
    """The queries whose majority relation is not a strict total order: two candidates
    that both come first, or both after, or a cycle. Given the candidates in the sorted
    order, every earlier one must come strictly before every later one; neighbours are
    checked first (a tie shows there), then every pair of the queries that pass, distance
    by distance, all queries at once."""
    P = len(pq)
    if P < 2:
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(pq, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)))
    order = np.empty(P, dtype=np.int64)
    order[starts[pq] + position] = np.arange(P)  # candidates in sorted order, query by query
    same = pq[order][1:] == pq[order][:-1]
    x, y = order[:-1][same], order[1:][same]
    bad = np.zeros(nq, dtype=bool)
    bad[pq[x][~(before(x, y) & ~before(y, x))]] = True
    # every pair at distance d in the sorted order, d = 2, 3, ...: all queries at once
    for d in range(2, int(counts.max())):
        live = np.flatnonzero(~bad & (counts > d))
        if not len(live):
            break
        cnt = counts[live] - d
        q = np.repeat(live, cnt)
        i = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt) + starts[q]
        a, b = order[i], order[i + d]
        wrong = ~(before(a, b) & ~before(b, a))
        bad[q[wrong]] = True
    return np.flatnonzero(bad)


def majority_positions(before, pq: np.ndarray, nq: int) -> np.ndarray:
    """Each candidate's position (0 = first) in its query's Condorcet order: a merge sort
    whose comparison is ``before(x, y)`` (arrays of candidates: does ``x`` come before
    ``y``), ranx's weighted majority vote.

    All queries at once, no table of pairs: ``ceil(log2 n)`` merge levels for ``n``
    candidates per query; at each, every candidate finds its place in the other half of
    its block by a binary search (``log2`` of the half's size comparisons, each one vector
    operation over all candidates): ``O(n log^2 n)`` comparisons per query, against the
    ``n^2`` of a table of every pair. Where the majority relation is a strict total order
    (no tie, no cycle), every comparison sort gives that order, ranx's included; elsewhere
    the order is the merge sort's, starting from the candidates' order of ``pq``."""
    P = len(pq)
    counts = np.bincount(pq, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)))
    first = starts[pq]  # each slot's query start (slots of a query: starts[q] .. + n - 1)
    n_of = counts[pq]
    local = np.arange(P) - first
    perm = np.arange(P)  # perm[slot]: the candidate at that slot

    width = 1
    n_max = int(counts.max()) if P else 0
    while width < n_max:
        block = local // (2 * width) * (2 * width)  # block start, local
        right = local - block >= width
        half = local - block - width * right  # position within its half
        left_len = np.minimum(width, n_of - block)
        right_len = np.clip(n_of - block - width, 0, width)
        # the other half of each slot: where it starts (a slot) and its length
        other = first + block + np.where(right, 0, width)
        lo = np.zeros(P, dtype=np.int64)
        hi = np.where(right, left_len, right_len)
        me = perm
        active = np.flatnonzero(lo < hi)
        while len(active):
            mid = (lo[active] + hi[active]) // 2
            y = perm[other[active] + mid]
            x = me[active]
            r = right[active]
            # one vote per pair: does the left candidate come before the right one? A left
            # candidate goes after the right ones it does not come before; a right candidate
            # after the left ones that come before it
            left_first = before(np.where(r, y, x), np.where(r, x, y))
            go_after = np.where(r, left_first, ~left_first)
            lo[active] = np.where(go_after, mid + 1, lo[active])
            hi[active] = np.where(go_after, hi[active], mid)
            active = active[lo[active] < hi[active]]
        target = first + block + half + lo
        if np.bincount(target, minlength=P).max(initial=0) > 1:  # a tie or cycle collided
            order = np.lexsort((half, right, target))
            target = np.empty(P, dtype=np.int64)
            target[order] = np.arange(P)
        perm = np.empty_like(me)
        perm[target] = me
        width *= 2
    position = np.empty(P, dtype=np.int64)
    position[perm] = local
    return position


__all__ = ["majority_positions", "not_strict"]
