"""The fused run's order and the candidates' numbers: packed 64-bit keys sorted in pieces of
whole queries (:data:`PIECE_ROWS` rows, each piece in cache), the ties among equal keys put in
the order ranx gives them. Split from :mod:`metrics_core.fusion.prepare`, which calls
:func:`rank_rows` and :func:`group_candidates`; :mod:`metrics_core.fusion.core` calls
:func:`output_order`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.ranking.keys import score_key, tie_order
from metrics_core.ranking.quicksort import SMALL as SMALL_QUICKSORT
from metrics_core.ranking.quicksort import argsort_segments
from metrics_core.ranking.strings import (
    pair_keys,
    sort_query_chunks,
    stable_argsort_codes,
    strings_equal,
)

if TYPE_CHECKING:
    from metrics_core.fusion.prepare import Prepared


#: the keys of the pieces of whole queries sorted one by one (:func:`sort_query_chunks`):
#: a query of a thousand documents or two is sorted alone, a quarter faster than in pieces
#: of 4,096 keys (fewer comparisons per key); the sorted keys are the same
SORT_CHUNK = 1 << 10


def _bits(n: int) -> int:
    return max(int(n - 1).bit_length(), 1)


def _fix_ties(order: np.ndarray, same: np.ndarray, docs, rows_of=None) -> None:
    """Reorder, in place, the stretches of ``order`` whose neighbours are equal (``same[i]``:
    positions i and i + 1 are tied) by document id descending, trec_eval's tie rule.
    ``rows_of`` maps an entry of ``order`` to its row of ``docs`` (identity when None)."""
    if not same.any():
        return
    idx, group = _tie_groups(same)
    tied = order[idx]
    source = tied if rows_of is None else rows_of[tied]
    order[idx] = tie_order(docs, tied, source, group, descending=True)


def _tie_groups(same: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions in stretches of equal neighbours (``same[i]``: positions i and i + 1
    are equal) and the number of each one's stretch (0, 1, ...: non-decreasing)."""
    idx = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
    # a stretch starts where its position does not continue the one before
    starts = np.flatnonzero(~np.r_[False, same][idx])
    size = np.diff(np.r_[starts, len(idx)])
    return idx, np.repeat(np.arange(len(starts), dtype=np.int64), size)


def rank_order(q: np.ndarray, scores: np.ndarray, nq: int) -> np.ndarray:
    """Row order grouping each query's rows, ranked as ranx ranks them; see :func:`rank_rows`."""
    order = rank_rows(q, scores, nq)
    return np.arange(len(q)) if order is None else order


def rank_rows(
    q: np.ndarray, scores: np.ndarray, nq: int, ranked: bool = False
) -> np.ndarray | None:
    """Row order grouping each query's rows by score descending, equal scores where ranx
    puts them: ranx's ``Run`` ranks a query's documents with numba's quicksort of the
    negated scores in the order they were given (the rows' order here), which keeps equal
    scores in that order in a list of up to 15 documents and moves them as its partitions
    do in a longer one (:func:`metrics_core.ranking.quicksort.argsort_segments`, run only
    on the lists that hold equal scores). A run whose queries already sit in one stretch
    each, best first (as run files are written), is checked in O(n) and not sorted. None
    when the rows are in that order already. ``q``: the rows' query codes, below ``nq``
    (any numbering: sorted rows group the queries in code order, rows as read keep the
    file's order of queries). ``ranked``: the rows are a ranking already (ranx's sorted
    ``Run``): equal scores keep the rows' order."""
    n = len(q)
    if n < 2:
        return None
    new = q[1:] != q[:-1]
    heads = q[np.flatnonzero(np.r_[True, new])]
    if bool(np.all(new | (scores[1:] <= scores[:-1]))) and (
        np.bincount(heads, minlength=nq).max() <= 1
    ):
        order = None  # each query's rows are one stretch, best first, ties in input order
    else:
        order = np.argsort(score_key(scores), kind="stable")  # ties keep the input order
        order = order[stable_argsort_codes(q[order], nq)]
    if ranked:
        return order
    sq = q if order is None else q[order]
    ss = scores if order is None else scores[order]
    tied = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])
    if not tied.any():
        return order
    # the lists of 16 documents or more that hold equal scores: numba's partitions decide
    size = np.bincount(sq, minlength=nq)
    has_tie = np.zeros(nq, dtype=bool)
    has_tie[sq[1:][tied]] = True
    redo = has_tie & (size > SMALL_QUICKSORT)
    if not redo.any():
        return order
    rows = np.flatnonzero(redo[sq])  # slots of those lists, list by list
    if order is None:  # each list one stretch of rows in input order, in the file's order
        order = np.arange(n)
        items = rows.copy()
    else:  # the lists in query code order: their rows in input order, list by list
        items = np.sort(order[rows])
        items = items[stable_argsort_codes(q[items], nq)]
    # the lists' lengths in the slots' order (the queries of a file need not be in code order)
    at = np.flatnonzero(np.r_[True, sq[rows[1:]] != sq[rows[:-1]]])
    lengths = np.diff(np.r_[at, len(rows)])
    moved = argsort_segments(-scores[items], lengths)
    order[rows] = items[moved]
    return order


def output_order(counts: np.ndarray, fused: np.ndarray, head: np.ndarray, docs) -> np.ndarray:
    """The order of candidates (grouped by query, ``counts[q]`` of query ``q``) by query,
    fused score descending, document id descending (trec_eval's tie rule): the stretches
    of :func:`output_stretches` put together."""
    order = np.empty(len(fused), dtype=np.int64)
    for lo, hi, part in output_stretches(counts, fused, head, docs):
        order[lo:hi] = part
    return order


def output_stretches(counts: np.ndarray, fused: np.ndarray, head: np.ndarray, docs):
    """The order of candidates (grouped by query, ``counts[q]`` of query ``q``) by query,
    fused score descending, document id descending (trec_eval's tie rule), a stretch of
    whole queries at a time:
    yields ``(lo, hi, order)``, the order of the candidates ``lo .. hi - 1`` (a
    permutation of them), stretches in query order. Once a stretch is yielded, the fused
    scores of its candidates are not read again (the caller may write over them).

    One sort of packed 64-bit keys (query code, the high bits of the score's order key,
    the position within the query), done in pieces of whole queries of about
    :data:`PIECE_ROWS` candidates (:func:`_query_pieces`: every key of a query is below
    every key of a later one, so the pieces are the sorted array's, and each piece's keys
    are built, sorted and read back in the processor's cache, with no temporary the size
    of the candidates); neighbours whose packed score bits are equal are then put in exact
    order (full score keys, then document ids compared as strings: :func:`_settle`), in
    stretches of pieces of about :data:`SETTLE_ROWS` candidates."""
    P, nq = len(fused), len(counts)
    if P < 2:
        yield 0, P, np.arange(P)
        return
    starts = np.concatenate(([0], np.cumsum(counts)))
    q_bits, local_bits = _bits(max(nq, 2)), _bits(max(int(counts.max()), 2))
    score_bits = 64 - q_bits - local_bits
    if score_bits < 16:  # too many queries and candidates to pack: two sorts
        pq = np.repeat(np.arange(nq, dtype=np.int64), counts)
        sk = score_key(fused)
        order = np.argsort(sk)
        order = order[stable_argsort_codes(pq[order], nq)]
        same = (pq[order][1:] == pq[order][:-1]) & (sk[order][1:] == sk[order][:-1])
        _fix_ties(order, same, docs, head)
        yield 0, P, order
        return
    low = np.uint64((1 << local_bits) - 1)
    # the stretch not yet settled: its pieces' orders and, for each piece, whether each
    # candidate's packed key equals the next one's (False at a piece's end: the next
    # piece holds other queries)
    parts: list[np.ndarray] = []
    sames: list[np.ndarray] = []
    settled = 0  # the candidates before it are yielded
    for q_lo, q_hi in _query_pieces(starts[1:], P):
        lo, hi = int(starts[q_lo]), int(starts[q_hi])
        if hi - settled >= SETTLE_ROWS and lo > settled:  # a stretch at a time
            yield settled, lo, _settled_stretch(parts, sames, fused, docs, head)
            parts, sames, settled = [], [], lo
        if hi == lo:
            continue
        size = counts[q_lo:q_hi]
        base = np.repeat(starts[q_lo:q_hi], size)  # each candidate's query's first
        key = score_key(fused[lo:hi]).view(np.uint64)
        key ^= np.uint64(1 << 63)  # ascending: score descending
        key >>= np.uint64(64 - score_bits)
        key <<= np.uint64(local_bits)
        within = np.arange(lo, hi, dtype=np.int64)
        within -= base  # the position within the query
        key |= within.view(np.uint64)
        qs = np.repeat(np.arange(q_lo, q_hi, dtype=np.uint64), size)
        key |= qs << np.uint64(64 - q_bits)
        sort_query_chunks(key, size, SORT_CHUNK)
        # a query's keys stay in its stretch: each sorted key's query is the one there
        part = base  # each candidate's query's first, no longer read: the order in its place
        part += (key & low).view(np.int64)
        key >>= np.uint64(local_bits)
        same = np.empty(hi - lo, dtype=bool)
        np.equal(key[1:], key[:-1], out=same[:-1])
        same[-1] = False
        parts.append(part)
        sames.append(same)
    if parts:
        yield settled, P, _settled_stretch(parts, sames, fused, docs, head)


def _settled_stretch(parts: list, sames: list, fused: np.ndarray, docs, head) -> np.ndarray:
    """The order of a stretch of pieces (:func:`output_stretches`), equal packed keys put
    in exact order (:func:`_settle`)."""
    order = parts[0] if len(parts) == 1 else np.concatenate(parts)
    same = sames[0] if len(sames) == 1 else np.concatenate(sames)
    _settle(order, same[:-1], fused, docs, head)
    return order


def _settle(order: np.ndarray, same: np.ndarray, fused: np.ndarray, docs, head) -> None:
    """Put in exact order, in place, the stretches of ``order`` (candidates of whole
    queries) whose neighbours' packed keys are equal (``same``): by the full score keys,
    then equal scores by document id descending (:func:`_fix_ties`)."""
    if not same.any():
        return
    idx, group = _tie_groups(same)
    rows = order[idx]
    s = score_key(fused[rows])
    differ = (group[1:] == group[:-1]) & (s[1:] != s[:-1])
    if not differ.any():  # every stretch holds equal scores: by document id
        order[idx] = tie_order(docs, rows, head[rows], group, descending=True)
        return
    # only the groups whose full keys differ are sorted again
    bad = np.zeros(int(group[-1]) + 1, dtype=bool)
    bad[group[1:][differ]] = True
    sub = np.flatnonzero(bad[group])
    rows[sub] = rows[sub][np.lexsort((s[sub], group[sub]))]
    s = score_key(fused[rows])
    tied = (group[1:] == group[:-1]) & (s[1:] == s[:-1])
    _fix_ties(rows, tied, docs, head)
    order[idx] = rows


def group_candidates(prep: Prepared, hashes: np.ndarray, exact: bool) -> bool:
    """Number the candidates: rows with one (query, document) share one. False when two
    different documents share a fingerprint's bits (then the caller retries exactly).
    ``hashes``: the fingerprints (``exact``: the exact codes) of the document ids of
    ``prep.docs``, position by position (a row's is at its ``src``).

    One sort of packed keys (query code, the document's fingerprint or exact code, the
    row's (run, rank) within the query), every match found by the fingerprint checked
    string by string."""
    R, nq = prep.n_runs, prep.n_queries
    lmax = int(prep.lengths.max()) if prep.lengths.size else 1
    pos_bits = _bits(max(lmax, 2))
    local_bits = pos_bits + _bits(max(R, 2))
    q_bits = _bits(max(nq, 2))
    n = prep.n_rows
    if n == 0:
        prep.pid, prep.pq, prep.head = (np.zeros(0, np.int64) for _ in range(3))
        return True
    if exact:
        d_bits = _bits(max(int(hashes.max()) + 1 if n else 1, 2))
    if not exact or q_bits + d_bits + local_bits <= 64:
        if not exact and q_bits + local_bits > 44:  # fewer than 20 bits of fingerprint
            return False
        dup = _number_pieces(prep, hashes, exact, local_bits, q_bits)
        if dup is None:
            return False
    else:  # exact codes too wide to pack
        local = (prep.run.astype(np.int64) << pos_bits) | prep.pos
        hashes = hashes[prep.src]
        rows = np.lexsort((local, hashes, prep.q))
        run_s = prep.run[rows]
        qs = prep.q[rows]
        ds = hashes[rows]
        new = np.r_[True, (qs[1:] != qs[:-1]) | (ds[1:] != ds[:-1])]
        at = np.flatnonzero(~new)  # rows of the candidate of the row before them
        dup = rows[at][run_s[at] == run_s[at - 1]]
        prep.pid = np.empty(n, dtype=np.int64)
        prep.pid[rows] = np.cumsum(new, dtype=np.int64) - 1
        first = rows[new]
        prep.pq = qs[new]
        prep.head = prep.src[first]
    if len(dup):
        row = int(dup[0])
        i = int(prep.run_of(np.array([row]))[0])
        raise InputError(
            N_("document {doc} appears twice for query {query} in the run {run}"),
            source=prep.sources[i],
            field="runs",
            hint=N_("keep one line per (query, document) before fusing"),
            params={
                "doc": str(prep.docs[int(prep.src[row])]),
                "query": str(prep.qvocab[int(prep.q[row])]),
                "run": prep.names[i],
            },
        )
    return True


#: the rows of the pieces of whole queries :func:`_number_pieces` and :func:`output_order`
#: work on (in cache)
PIECE_ROWS = 1 << 16
#: the candidates whose equal packed keys :func:`output_stretches` settles at a time
#: (pieces of whole queries: the work on each stretch's ties, done once for several
#: pieces, costs less interpreter time; its arrays stay about a megabyte, below the size
#: the C library maps fresh pages for: a fused run of ten million candidates, about half
#: of them tied, took a tenth of the page faults and about 5% less time than with
#: stretches four times as long)
SETTLE_ROWS = 1 << 18


def _query_pieces(ends: np.ndarray, n: int) -> list[tuple[int, int]]:
    """Ranges of query codes ``[a, b)`` cutting ``n`` rows (``ends``: the cumulative rows of
    the queries) into pieces of whole queries of about :data:`PIECE_ROWS` rows."""
    nq = len(ends)
    cuts = np.searchsorted(ends, np.arange(PIECE_ROWS, n, PIECE_ROWS)) + 1
    bounds = np.unique(np.r_[0, np.minimum(cuts, nq), nq]).tolist()
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _number_pieces(prep: Prepared, hashes: np.ndarray, exact: bool, local_bits: int, q_bits: int):
    """Number the candidates (``prep.pid``, ``prep.pq``, ``prep.head``) in pieces of whole
    queries of about :data:`PIECE_ROWS` rows (:func:`_query_pieces`), each piece's work in
    the processor's cache: its rows gathered query after query (within a query run after
    run, each run's list in rank order), their packed keys (query code; the high bits of the
    mixed fingerprint, :func:`~metrics_core.ranking.strings.pair_keys`, or the exact code;
    the row's place in the query, whose order is the (run, rank) order) sorted query by
    query (every key of a query is below every key of a later one, so the pieces are the
    sorted array's), equal keys one candidate; each row of a candidate after its first
    checked against the row before it, string by string (in the piece, in cache), when the
    keys are fingerprints. Returns the rows of a run's document found twice (to report), or
    None when two different documents share a key (then the caller retries exactly)."""
    n = prep.n_rows
    low = np.uint64((1 << local_bits) - 1)
    per_query = prep.lengths.sum(axis=0)
    ends = np.cumsum(per_query)
    prep.pid = np.empty(n, dtype=np.int64)
    # each candidate's query and head row, written piece by piece (at most one a row: the
    # pages past the candidates are never touched)
    head = np.empty(n, dtype=np.int64)
    cand_counts = np.zeros(prep.n_queries, dtype=np.int64)
    dup = []
    next_id = 0
    for q_lo, q_hi in _query_pieces(ends, n):
        r_lo = int(ends[q_lo - 1]) if q_lo else 0
        m = int(ends[q_hi - 1]) - r_lo
        if m == 0:
            continue
        # the piece's rows, query-major: the lists (query, run) one after another
        size = prep.lengths[:, q_lo:q_hi].T.ravel()
        first_row = prep.row_start[:, q_lo:q_hi].T.ravel()
        slot = np.cumsum(size) - size  # each list's first slot in the piece
        rows = np.repeat(first_row - slot, size)
        rows += np.arange(m, dtype=np.int64)
        if prep.src_start is None:
            src = prep.src[rows]  # the rows' positions in ``prep.docs``
        else:  # each list one stretch of ``prep.docs``: made as the rows are
            src = np.repeat(prep.src_start[:, q_lo:q_hi].T.ravel() - slot, size)
            src += np.arange(m, dtype=np.int64)
        count = per_query[q_lo:q_hi]
        qs = np.repeat(np.arange(q_lo, q_hi, dtype=np.int64), count)  # each row's query
        base = np.repeat(np.cumsum(count) - count, count)  # its query's first slot
        if exact:
            k = hashes[src] << np.uint64(local_bits)
            k |= qs.astype(np.uint64) << np.uint64(64 - q_bits)
        else:
            k = pair_keys(qs, hashes[src], prep.n_queries)
            k &= ~low
        place = np.arange(m, dtype=np.int64)
        place -= base  # the row's place in its query: (run, rank) order
        k |= place.view(np.uint64)
        sort_query_chunks(k, count, SORT_CHUNK)
        # a query's keys stay in its stretch: the sorted keys' slots, then their rows
        place = (k & low).view(np.int64)
        place += base
        rows, src = rows[place], src[place]
        k >>= np.uint64(local_bits)
        new = np.empty(m, dtype=bool)
        new[0] = True  # a piece starts a query
        np.not_equal(k[1:], k[:-1], out=new[1:])
        first = np.flatnonzero(new)
        # each row's candidate: the number of its stretch of equal keys
        ids = np.repeat(np.arange(next_id, next_id + len(first)), np.diff(np.r_[first, m]))
        prep.pid[rows] = ids
        cand_counts[q_lo:q_hi] = np.bincount(qs[first] - q_lo, minlength=q_hi - q_lo)
        # mode="clip" (the rows are valid): no temporary copied into ``out``
        np.take(src, first, out=head[next_id : next_id + len(first)], mode="clip")
        next_id += len(first)
        at = np.flatnonzero(~new)
        if len(at):
            later, before = rows[at], rows[at - 1]
            # each row equal to the one before it: all equal to the first
            if not exact and not strings_equal(prep.docs, src[at], prep.docs, src[at - 1]).all():
                return None
            dup.append(later[prep.run_of(later) == prep.run_of(before)])
    prep.cand_counts, prep.head = cand_counts, head[:next_id]
    return np.concatenate(dup) if dup else np.zeros(0, np.int64)
