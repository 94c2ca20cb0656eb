"""The runs' rows in one table: query ids encoded once, each run ranked as ranx ranks it
(equal scores where numba's quicksort of the rows' order puts them), the candidates (query, document) numbered by one sort of packed 64-bit keys of
document fingerprints (:func:`metrics_core.ranking.strings.hash_strings`, every match checked
string by string; exact codes when two documents share a fingerprint's bits). On several
cores (:mod:`metrics_core.threads`) the runs are ranked one a thread and the candidates
numbered in shards of whole queries, one a thread (:func:`prepare_shards`).

Used by :mod:`metrics_core.fusion.core` and :mod:`metrics_core.fusion.training`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from metrics_core import threads
from metrics_core.data import Run
from metrics_core.errors import N_, InputError
from metrics_core.ranking.keys import score_key, tie_order
from metrics_core.ranking.quicksort import SMALL as SMALL_QUICKSORT
from metrics_core.ranking.quicksort import argsort_segments
from metrics_core.ranking.strings import (
    encode_strings,
    hash_strings,
    pair_keys,
    sort_query_chunks,
    stable_argsort_codes,
    string_order,
    strings_equal,
)
from metrics_core.threads import map_in_threads


def _plain_strings(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    return arr


def encode_many(columns: Sequence) -> tuple[list[np.ndarray], pa.Array]:
    """Codes of several string columns in ONE dictionary (each column encoded on its own,
    then the small dictionaries united)."""
    encoded = [encode_strings(col) for col in columns]
    return _unite([c for c, _ in encoded], [v for _, v in encoded])


def _unite(
    codes: list[np.ndarray], vocabs: list, sort: bool = False
) -> tuple[list[np.ndarray], pa.Array]:
    """The codes of :func:`encode_strings` of several columns renumbered into one dictionary;
    ``sort``: numbered in the ids' string order. The renumbering is worked out on the small
    dictionaries, then each column's codes are looked up once."""
    vocabs = [_plain_strings(v) for v in vocabs]
    tables: list[np.ndarray | None]
    if len(vocabs) == 1:
        tables, vocab = [None], vocabs[0]
    else:
        enc = pa.concat_arrays(vocabs).dictionary_encode()
        glob = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        at = np.cumsum([0] + [len(v) for v in vocabs]).tolist()
        tables = [glob[lo:hi] for lo, hi in zip(at[:-1], at[1:], strict=True)]
        vocab = _plain_strings(enc.dictionary)
    if sort:
        order = string_order(vocab)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        tables = [rank if t is None else rank[t] for t in tables]
        vocab = vocab.take(pa.array(order))
    out = [c.astype(np.int64) if t is None else t[c] for c, t in zip(codes, tables, strict=True)]
    return out, vocab


def _strings(col):
    """A string column as plain Arrow strings, chunks kept (no copy when it already is)."""
    if isinstance(col, pa.ChunkedArray):
        if pa.types.is_string(col.type):
            return col
        return pa.chunked_array([_plain_strings(c) for c in col.chunks], type=pa.string())
    return _plain_strings(col)


@dataclass
class Prepared:
    """The runs' rows in one table: codes, ranks, list lengths, candidates.

    Rows are grouped by run, each run's rows by query and ranked (score descending, equal
    scores in ranx's order). A candidate is a (query, document) pair retrieved by at
    least one run; candidates are numbered in query code order."""

    names: list[str]
    qvocab: pa.Array  # query ids, string order (code = position)
    docs: pa.ChunkedArray  # the runs' document ids, run after run, rows as read
    run: np.ndarray  # run index of each row (rows grouped by run)
    q: np.ndarray  # query code of each row
    src: np.ndarray  # the row's position in ``docs``
    raw: np.ndarray  # the run's score
    pos: np.ndarray  # 0-based rank within the run's list for the query
    lengths: np.ndarray  # runs x queries: list lengths L
    sources: list[str]
    row_start: np.ndarray  # runs x queries: the row where the run's list for the query starts
    list_len: np.ndarray  # the length of each list (run, query), in the rows' order
    pid: np.ndarray  # the candidate of each row
    pq: np.ndarray  # the query code of each candidate (non-decreasing)
    head: np.ndarray  # for each candidate, a position in ``docs`` holding its document id
    query_base: int = 0  # a shard's first query code among all the runs' queries
    _doc_codes: tuple[np.ndarray, pa.Array] | None = None

    @property
    def n_runs(self) -> int:
        return len(self.names)

    @property
    def n_queries(self) -> int:
        return len(self.qvocab)

    @property
    def n_candidates(self) -> int:
        return len(self.pq)

    def doc_codes(self) -> tuple[np.ndarray, pa.Array]:
        """Exact document codes of the rows and their dictionary (a hash pass over every
        document id: only the training of supervised methods needs them)."""
        if self._doc_codes is None:
            enc = self.docs.dictionary_encode()
            codes = np.concatenate(
                [c.indices.to_numpy(zero_copy_only=False) for c in enc.chunks]
                or [np.zeros(0, np.int32)]
            ).astype(np.int64)
            vocab = enc.chunks[-1].dictionary if enc.num_chunks else pa.array([], pa.string())
            self._doc_codes = (codes[self.src], _plain_strings(vocab))
        return self._doc_codes

    @property
    def d(self) -> np.ndarray:
        return self.doc_codes()[0]

    @property
    def dvocab(self) -> pa.Array:
        return self.doc_codes()[1]


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
    idx = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
    group = np.cumsum(np.r_[True, ~same])[idx]
    tied = order[idx]
    source = tied if rows_of is None else rows_of[tied]
    order[idx] = tie_order(docs, tied, source, group, descending=True)


def rank_order(q: np.ndarray, scores: np.ndarray, nq: int) -> np.ndarray:
    """Row order grouping each query's rows, ranked as ranx ranks them; see :func:`_rank`."""
    order = _rank(q, scores, nq)
    return np.arange(len(q)) if order is None else order


def _rank(q: np.ndarray, scores: np.ndarray, nq: int, ranked: bool = False) -> np.ndarray | None:
    """Row order grouping each query's rows by score descending, equal scores where ranx
    puts them: ranx's ``Run`` ranks a query's documents with numba's quicksort of the
    negated scores in the order they were given (the rows' order here), which keeps equal
    scores in that order in a list of up to 15 documents and moves them as its partitions
    do in a longer one (:func:`metrics_core.ranking.quicksort.argsort_segments`, run only
    on the lists that hold equal scores). A run whose queries already sit in one stretch
    each, best first (as run files are written), is checked in O(n) and not sorted. None
    when the rows are in that order already. ``ranked``: the rows are a ranking already
    (ranx's sorted ``Run``): equal scores keep the rows' order."""
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
    if order is None:
        order = np.arange(n)
    rows = np.flatnonzero(redo[sq])  # slots of those lists, list by list
    items = np.sort(order[rows])  # their rows in input order (a list's rows keep theirs)
    items = items[stable_argsort_codes(q[items], nq)]
    lengths = size[redo]
    moved = argsort_segments(-scores[items], lengths)
    order[rows] = items[moved]
    return order


def output_order(pq: np.ndarray, fused: np.ndarray, head: np.ndarray, docs, nq: int) -> np.ndarray:
    """The order of candidates (``pq`` non-decreasing) by query, fused score descending,
    document id descending (trec_eval's tie rule).

    One sort of packed 64-bit keys (query code, the high bits of the score's order key,
    the position within the query), done in pieces of whole queries of about
    :data:`PIECE_ROWS` candidates (:func:`_query_pieces`: every key of a query is below
    every key of a later one, so the pieces are the sorted array's, and each piece's keys
    are built, sorted and read back in the processor's cache, with no temporary the size
    of the candidates); neighbours whose packed score bits are equal are then put in exact
    order (full score keys, then document ids compared as strings)."""
    P = len(pq)
    if P < 2:
        return np.arange(P)
    counts = np.bincount(pq, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)))
    q_bits, local_bits = _bits(max(nq, 2)), _bits(max(int(counts.max()), 2))
    score_bits = 64 - q_bits - local_bits
    if score_bits < 16:  # too many queries and candidates to pack: two sorts
        sk = score_key(fused)
        order = np.argsort(sk)
        order = order[stable_argsort_codes(pq[order], nq)]
        same = (pq[order][1:] == pq[order][:-1]) & (sk[order][1:] == sk[order][:-1])
        _fix_ties(order, same, docs, head)
        return order
    order = np.empty(P, dtype=np.int64)
    same = np.zeros(P - 1, dtype=bool)  # False across pieces: they hold different queries
    low = np.uint64((1 << local_bits) - 1)
    for q_lo, q_hi in _query_pieces(starts[1:], P):
        lo, hi = int(starts[q_lo]), int(starts[q_hi])
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
        key |= pq[lo:hi].astype(np.uint64) << np.uint64(64 - q_bits)
        sort_query_chunks(key, size, SORT_CHUNK)
        # a query's keys stay in its stretch: each sorted key's query is the one there
        np.add(base, (key & low).view(np.int64), out=order[lo:hi])
        key >>= np.uint64(local_bits)
        np.equal(key[1:], key[:-1], out=same[lo : hi - 1])
    if same.any():  # equal packed bits: the full keys, then the documents, decide
        idx = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
        group = np.cumsum(np.r_[True, ~same])[idx]
        rows = order[idx]
        s = score_key(fused[rows])
        differ = (group[1:] == group[:-1]) & (s[1:] != s[:-1])
        if differ.any():  # only the groups whose full keys differ are sorted again
            bad = np.zeros(int(group[-1]) + 1, dtype=bool)
            bad[group[1:][differ]] = True
            sub = np.flatnonzero(bad[group])
            rows[sub] = rows[sub][np.lexsort((s[sub], group[sub]))]
            s = score_key(fused[rows])
        tied = (group[1:] == group[:-1]) & (s[1:] == s[:-1])
        _fix_ties(rows, tied, docs, head)
        order[idx] = rows
    return order


def _group_candidates(prep: Prepared, hashes: np.ndarray, exact: bool) -> bool:
    """Number the candidates: rows with one (query, document) share one. False when two
    different documents share a fingerprint's bits (then the caller retries exactly).

    One sort of packed keys (query code, the document's fingerprint or exact code, the
    row's (run, rank) within the query), every match found by the fingerprint checked
    string by string."""
    R, nq = prep.n_runs, prep.n_queries
    lmax = int(prep.lengths.max()) if prep.lengths.size else 1
    pos_bits = _bits(max(lmax, 2))
    local_bits = pos_bits + _bits(max(R, 2))
    q_bits = _bits(max(nq, 2))
    n = len(prep.q)
    if n == 0:
        prep.pid, prep.pq, prep.head = (np.zeros(0, np.int64) for _ in range(3))
        return True
    if exact:
        d_bits = _bits(max(int(hashes.max()) + 1 if n else 1, 2))
    if not exact or q_bits + d_bits + local_bits <= 64:
        if not exact and q_bits + local_bits > 44:  # fewer than 20 bits of fingerprint
            return False
        later, before, dup = _number_pieces(prep, hashes, exact, local_bits, q_bits)
    else:  # exact codes too wide to pack
        local = (prep.run.astype(np.int64) << pos_bits) | prep.pos
        rows = np.lexsort((local, hashes, prep.q))
        run_s = prep.run[rows]
        qs = prep.q[rows]
        ds = hashes[rows]
        new = np.r_[True, (qs[1:] != qs[:-1]) | (ds[1:] != ds[:-1])]
        at = np.flatnonzero(~new)  # rows of the candidate of the row before them
        later, before = rows[at], rows[at - 1]
        dup = later[run_s[at] == run_s[at - 1]]
        prep.pid = np.empty(n, dtype=np.int64)
        prep.pid[rows] = np.cumsum(new, dtype=np.int64) - 1
        first = rows[new]
        prep.pq = qs[new]
        prep.head = prep.src[first]
    if not exact and len(later):
        # each row equal to the one before it: all equal to the first
        if not strings_equal(prep.docs, prep.src[later], prep.docs, prep.src[before]).all():
            return False
    if len(dup):
        row = int(dup[0])
        i = int(prep.run[row])
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
    sorted array's), equal keys one candidate. Returns the rows equal by their keys to the
    row before them in the sorted order, those rows, and the rows of a run's document found
    twice (to check, to report)."""
    n = len(hashes)
    low = np.uint64((1 << local_bits) - 1)
    per_query = prep.lengths.sum(axis=0)
    ends = np.cumsum(per_query)
    prep.pid = np.empty(n, dtype=np.int64)
    pq, head, later, before, dup = [], [], [], [], []
    next_id = 0
    for q_lo, q_hi in _query_pieces(ends, n):
        r_lo = int(ends[q_lo - 1]) if q_lo else 0
        m = int(ends[q_hi - 1]) - r_lo
        if m == 0:
            continue
        # the piece's rows, query-major: the lists (query, run) one after another
        size = prep.lengths[:, q_lo:q_hi].T.ravel()
        first_row = prep.row_start[:, q_lo:q_hi].T.ravel()
        rows = np.repeat(first_row - (np.cumsum(size) - size), size)
        rows += np.arange(m, dtype=np.int64)
        count = per_query[q_lo:q_hi]
        qs = np.repeat(np.arange(q_lo, q_hi, dtype=np.int64), count)  # each row's query
        base = np.repeat(np.cumsum(count) - count, count)  # its query's first slot
        if exact:
            k = hashes[rows] << np.uint64(local_bits)
            k |= qs.astype(np.uint64) << np.uint64(64 - q_bits)
        else:
            k = pair_keys(qs, hashes[rows], prep.n_queries)
            k &= ~low
        place = np.arange(m, dtype=np.int64)
        place -= base  # the row's place in its query: (run, rank) order
        k |= place.view(np.uint64)
        sort_query_chunks(k, count, SORT_CHUNK)
        # a query's keys stay in its stretch: the sorted keys' slots, then their rows
        place = (k & low).view(np.int64)
        place += base
        rows = rows[place]
        k >>= np.uint64(local_bits)
        new = np.empty(m, dtype=bool)
        new[0] = True  # a piece starts a query
        np.not_equal(k[1:], k[:-1], out=new[1:])
        ids = np.cumsum(new, dtype=np.int64)
        ids += next_id - 1
        prep.pid[rows] = ids
        first = np.flatnonzero(new)
        pq.append(qs[first])
        head.append(rows[first])
        next_id += len(first)
        at = np.flatnonzero(~new)
        if len(at):
            later.append(rows[at])
            before.append(rows[at - 1])
            dup.append(later[-1][prep.run[later[-1]] == prep.run[before[-1]]])
    prep.pq = np.concatenate(pq)
    prep.head = prep.src[np.concatenate(head)]
    cat = [np.concatenate(x) if x else np.zeros(0, np.int64) for x in (later, before, dup)]
    return cat[0], cat[1], cat[2]


#: the fewest rows (of all runs) a shard is given: below, fewer shards than cores
SHARD_ROWS = 250_000


def _ranked(run: Run, q: np.ndarray, doc_col, nq: int, at_row: int, ranked: bool = False) -> dict:
    """One run's rows ranked (ranx's order, :func:`_rank`) with their fingerprints, their
    order among the rows as read (None: as read), the first row of the run in the joined
    document column, and its lists (first row, length, query code), list after list."""
    s = np.asarray(run.scores, dtype=np.float64)
    h = hash_strings(doc_col)
    order = _rank(q, s, nq, ranked)
    if order is not None:  # as read (the usual case of a run file): nothing to gather
        q, s, h = q[order], s[order], h[order]
    if len(q):
        first = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
        size = np.diff(np.r_[first, len(q)])
    else:
        first, size = (np.zeros(0, np.int64) for _ in range(2))
    return {
        "q": q,
        "s": s,
        "h": h,
        "order": order,
        "at_row": at_row,
        "first": first,
        "size": size,
        "list_q": q[first],
    }


def _shard_bounds(rows_per_query: np.ndarray, n: int) -> list[tuple[int, int]]:
    """Ranges of query codes ``[a, b)`` holding about equal numbers of rows, at most ``n``,
    each at least :data:`SHARD_ROWS` rows (one range when the rows are fewer)."""
    nq, total = len(rows_per_query), int(rows_per_query.sum())
    n = max(1, min(n, nq, total // max(SHARD_ROWS, 1)))
    if n == 1:
        return [(0, nq)]
    cum = np.cumsum(rows_per_query)
    cuts = np.searchsorted(cum, total * np.arange(1, n) / n, side="left") + 1
    edges = np.unique(np.r_[0, np.minimum(cuts, nq), nq])
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _shard(
    names, sources, qvocab, docs, lengths, ranked: list[dict], bounds: tuple[int, int]
) -> tuple[Prepared, np.ndarray]:
    """The Prepared of the queries ``[a, b)`` (codes from 0, rows grouped by run) and its
    rows' fingerprints. Each run's lists of those queries are found among its lists (a run's
    rows hold each query in one stretch): the query codes, ranks, list starts and sources
    are made from them, only the scores and fingerprints are gathered."""
    a, b = bounds
    whole = a == 0 and b == len(qvocab)
    R = len(ranked)
    parts = []  # per run: its rows of the shard (None: all), list starts in them, lengths
    for r in ranked:
        keep = None if whole else (r["list_q"] >= a) & (r["list_q"] < b)
        first = r["first"] if keep is None else r["first"][keep]
        size = r["size"] if keep is None else r["size"][keep]
        start = np.cumsum(size) - size  # the lists' first rows among the shard's rows of the run
        if whole:
            pick = None
        else:
            pick = np.repeat(first - start, size)
            pick += np.arange(len(pick), dtype=np.int64)
        parts.append((pick, start, size, r["list_q"] if keep is None else r["list_q"][keep]))
    n = sum(int(size.sum()) for _, _, size, _ in parts)

    def cat(key: str, dtype) -> np.ndarray:
        out = np.empty(n, dtype=dtype)
        at = 0
        for r, (k, _, size, _) in zip(ranked, parts, strict=True):
            m = int(size.sum())
            if k is None:
                out[at : at + m] = r[key]
            else:
                np.take(r[key], k, out=out[at : at + m], mode="clip")  # k is valid
            at += m
        return out

    q = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    src = np.empty(n, dtype=np.int64)
    run = np.empty(n, dtype=np.int16)
    row_start = np.zeros((R, b - a), dtype=np.int64)
    at = 0
    for i, (r, (k, start, size, list_q)) in enumerate(zip(ranked, parts, strict=True)):
        m = int(size.sum())
        run[at : at + m] = i
        row_start[i, list_q - a] = start + at
        if m:
            q[at : at + m] = np.repeat(list_q - a, size)
            # 0, 1, ... in each list: ones, each list's first row set back by the list before
            p = pos[at : at + m]
            p[:] = 1
            p[start[1:]] = 1 - size[:-1]
            np.cumsum(p, out=p)
            p -= 1
            s = src[at : at + m]
            order = r["order"]
            if order is None:
                if k is None:
                    s[:] = np.arange(m, dtype=np.int64)
                else:
                    s[:] = k
            else:
                if k is None:
                    s[:] = order
                else:
                    np.take(order, k, out=s, mode="clip")
            s += r["at_row"]
        at += m
    prep = Prepared(
        names=names,
        qvocab=qvocab if whole else qvocab.slice(a, b - a),
        docs=docs,
        run=run,
        q=q,
        src=src,
        raw=cat("s", np.float64),
        pos=pos,
        lengths=np.ascontiguousarray(lengths[:, a:b]),
        sources=sources,
        row_start=row_start,
        list_len=np.concatenate([size for _, _, size, _ in parts]).astype(np.int64, copy=False),
        pid=np.zeros(0, np.int64),
        pq=np.zeros(0, np.int64),
        head=np.zeros(0, np.int64),
        query_base=a,
    )
    return prep, cat("h", np.uint64)


def prepare_shards(
    runs: Sequence[Run], n: int | None = None, *, ranked: bool = False
) -> list[Prepared]:
    """Encode and rank the runs, number the candidates (see the module's description), in
    ``n`` shards of whole queries (default: one per usable core, none smaller than
    :data:`SHARD_ROWS` rows), the work done in threads: the runs' fingerprints and ranks
    one run a thread, then each shard's candidates. A shard is a :class:`Prepared` of the
    query codes ``[query_base, query_base + n_queries)``; the queries are independent, so
    the shards fused one by one and joined in order give the fused run of the whole.
    ``ranked``: each run's rows are its ranking already (ranx's sorted ``Run``, as the ranx
    drop-in hands them over): equal scores keep the rows' order, no quicksort."""
    qcols = [r.qid for r in runs]
    encoded = map_in_threads(encode_strings, qcols)
    qcodes, qvocab = _unite([c for c, _ in encoded], [v for _, v in encoded], sort=True)
    del encoded
    doc_cols = [_strings(r.docid) for r in runs]
    nq, R = len(qvocab), len(runs)
    starts = np.cumsum([0] + [len(r.scores) for r in runs])

    as_given = ranked

    def rank_one(i: int) -> dict:
        return _ranked(runs[i], qcodes[i], doc_cols[i], nq, int(starts[i]), as_given)

    def joined_docs(_: int) -> pa.ChunkedArray:
        chunks = [
            c
            for col in doc_cols
            for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col])
        ]
        # one array when its offsets fit (a take from it is twice as fast as from chunks)
        if chunks and sum(c.nbytes for c in chunks) < 2**31 - 1:
            return pa.chunked_array([pa.concat_arrays(chunks)], type=pa.string())
        return pa.chunked_array(chunks, type=pa.string())

    # the runs ranked, one a thread, beside the join of their document ids
    done = map_in_threads(lambda i: rank_one(i) if i < R else joined_docs(i), range(R + 1))
    ranked_runs = [d for d in done[:R] if isinstance(d, dict)]
    docs = done[R]
    assert isinstance(docs, pa.ChunkedArray)
    del done
    qcodes = []  # the ranked rows hold the codes now
    lengths = np.zeros((R, nq), dtype=np.int64)
    for i, r in enumerate(ranked_runs):
        lengths[i, r["list_q"]] = r["size"]
    bounds = _shard_bounds(lengths.sum(axis=0), threads.usable_cores() if n is None else n)
    names, sources = [r.name for r in runs], [r.source for r in runs]

    def build(b: tuple[int, int]) -> Prepared:
        prep, hashes = _shard(names, sources, qvocab, docs, lengths, ranked_runs, b)
        if not _group_candidates(prep, hashes, exact=False):
            _group_candidates(prep, prep.d.astype(np.uint64), exact=True)
        return prep

    return map_in_threads(build, bounds)


def prepare(runs: Sequence[Run], *, ranked: bool = False) -> Prepared:
    """Encode and rank the runs, number the candidates (see the module's description): all
    queries in one :class:`Prepared` (:func:`prepare_shards` with one shard)."""
    return prepare_shards(runs, 1, ranked=ranked)[0]


def as_runs(runs) -> list[Run]:
    """Runs from what the readers accept (paths, Run objects, mappings); a mapping of
    name -> source names them."""
    from metrics_core.io import read_run

    if isinstance(runs, Mapping):
        items = list(runs.items())
    else:
        items = [(None, r) for r in runs]
    out = []
    for name, source in items:
        run = read_run(source, name=name) if name is not None else read_run(source)
        out.append(run)
    if len(out) < 2:
        raise InputError(
            N_("fusion needs at least two runs, got {count}"),
            field="runs",
            params={"count": len(out)},
        )
    names = [r.name for r in out]
    if len(set(names)) < len(names):
        out = [
            _renamed(r, f"{r.name}#{i + 1}") if names.count(r.name) > 1 else r
            for i, r in enumerate(out)
        ]
    return out


def _renamed(run: Run, name: str) -> Run:
    import copy

    other = copy.copy(run)
    other.name = name
    return other


__all__ = [
    "Prepared",
    "prepare",
    "prepare_shards",
    "as_runs",
    "rank_order",
    "output_order",
    "encode_many",
]
