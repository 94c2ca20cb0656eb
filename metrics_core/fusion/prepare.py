"""The runs' rows in one table: query ids encoded once, each run ranked by trec_eval's tie
rule, the candidates (query, document) numbered by one sort of packed 64-bit keys of
document fingerprints (:func:`metrics_core.ranking.strings.hash_strings`, every match checked
string by string; exact codes when two documents share a fingerprint's bits).

Used by :mod:`metrics_core.fusion.core` and :mod:`metrics_core.fusion.training`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from metrics_core.data import Run
from metrics_core.errors import N_, InputError
from metrics_core.ranking.keys import score_key, tie_order
from metrics_core.ranking.strings import (
    encode_strings,
    hash_strings,
    pair_keys,
    stable_argsort_codes,
    string_order,
    strings_equal,
)


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
    codes, vocabs = [], []
    for col in columns:
        c, v = encode_strings(col)
        codes.append(c)
        vocabs.append(_plain_strings(v))
    if len(vocabs) == 1:
        return [codes[0].astype(np.int64)], vocabs[0]
    enc = pa.concat_arrays(vocabs).dictionary_encode()
    glob = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    out, at = [], 0
    for c, v in zip(codes, vocabs, strict=True):
        out.append(glob[at : at + len(v)][c])
        at += len(v)
    return out, _plain_strings(enc.dictionary)


def _sorted_vocab(codes: list[np.ndarray], vocab: pa.Array) -> tuple[list[np.ndarray], pa.Array]:
    """Renumber codes so that their order is the ids' string order."""
    order = string_order(vocab)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return [rank[c] for c in codes], vocab.take(pa.array(order))


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

    Rows are grouped by run, each run's rows by query and ranked (score descending,
    document id descending). A candidate is a (query, document) pair retrieved by at
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


def rank_order(q: np.ndarray, scores: np.ndarray, docs, nq: int) -> np.ndarray:
    """Row order grouping each query's rows, by score descending, then document id
    descending (trec_eval's tie rule); see :func:`_rank`."""
    order = _rank(q, scores, docs, nq)
    return np.arange(len(q)) if order is None else order


def _rank(q: np.ndarray, scores: np.ndarray, docs, nq: int) -> np.ndarray | None:
    """Row order grouping each query's rows, by score descending, then document id
    descending (trec_eval's tie rule). A run whose queries already sit in one stretch each,
    best first (as run files are written), is checked in O(n) and not sorted; only the
    documents in groups of equal scores have their ids compared (as strings, no dictionary).
    None when the rows are in that order already."""
    n = len(q)
    if n < 2:
        return None
    new = q[1:] != q[:-1]
    heads = q[np.flatnonzero(np.r_[True, new])]
    if bool(np.all(new | (scores[1:] <= scores[:-1]))) and (
        np.bincount(heads, minlength=nq).max() <= 1
    ):
        tied = ~new & (scores[1:] == scores[:-1])
        if not tied.any():
            return None  # already in order: None, so that no array is copied
        order = np.arange(n)
        _fix_ties(order, tied, docs)
        return order
    order = np.argsort(score_key(scores))  # equal scores are put in the tie rule's order below
    order = order[stable_argsort_codes(q[order], nq)]
    sq, ss = q[order], scores[order]
    _fix_ties(order, (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1]), docs)
    return order


def output_order(pq: np.ndarray, fused: np.ndarray, head: np.ndarray, docs, nq: int) -> np.ndarray:
    """The order of candidates (``pq`` non-decreasing) by query, fused score descending,
    document id descending (trec_eval's tie rule).

    One sort of packed 64-bit keys (query code, the high bits of the score's order key,
    the position within the query); neighbours whose packed score bits are equal are then
    put in exact order (full score keys, then document ids compared as strings)."""
    P = len(pq)
    if P < 2:
        return np.arange(P)
    counts = np.bincount(pq, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)))
    sk = score_key(fused)
    q_bits, local_bits = _bits(max(nq, 2)), _bits(max(int(counts.max()), 2))
    score_bits = 64 - q_bits - local_bits
    if score_bits < 16:  # too many queries and candidates to pack: two sorts
        order = np.argsort(sk)
        order = order[stable_argsort_codes(pq[order], nq)]
        same = (pq[order][1:] == pq[order][:-1]) & (sk[order][1:] == sk[order][:-1])
        _fix_ties(order, same, docs, head)
        return order
    key = sk.view(np.uint64) ^ np.uint64(1 << 63)  # ascending: score descending
    key >>= np.uint64(64 - score_bits)
    key <<= np.uint64(local_bits)
    key |= (np.arange(P, dtype=np.int64) - starts[pq]).astype(np.uint64)
    key |= pq.astype(np.uint64) << np.uint64(64 - q_bits)
    key.sort()
    low = np.uint64((1 << local_bits) - 1)
    order = starts[(key >> np.uint64(64 - q_bits)).astype(np.int64)] + (key & low).astype(np.int64)
    key >>= np.uint64(local_bits)
    same = key[1:] == key[:-1]
    del key
    if same.any():  # equal packed bits: the full keys, then the documents, decide
        idx = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
        group = np.cumsum(np.r_[True, ~same])[idx]
        rows = order[idx]
        s = sk[rows]
        differ = (group[1:] == group[:-1]) & (s[1:] != s[:-1])
        if differ.any():  # only the groups whose full keys differ are sorted again
            bad = np.zeros(int(group[-1]) + 1, dtype=bool)
            bad[group[1:][differ]] = True
            sub = np.flatnonzero(bad[group])
            rows[sub] = rows[sub][np.lexsort((s[sub], group[sub]))]
            s = sk[rows]
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
    local = (prep.run.astype(np.int64) << pos_bits) | prep.pos
    if exact:
        d_bits = _bits(max(int(hashes.max()) + 1 if n else 1, 2))
    if not exact or q_bits + d_bits + local_bits <= 64:
        if exact:
            key = hashes.astype(np.uint64) << np.uint64(local_bits)
            key |= prep.q.astype(np.uint64) << np.uint64(64 - q_bits)
        else:
            if q_bits + local_bits > 44:  # fewer than 20 bits of fingerprint: exact codes
                return False
            key = pair_keys(prep.q, hashes, nq, out=hashes)
            key &= ~np.uint64((1 << local_bits) - 1)
        key |= local.astype(np.uint64)
        del local
        key.sort()
        low = np.uint64((1 << local_bits) - 1)
        lo = (key & low).astype(np.int64)
        run_s = lo >> pos_bits
        qs = (key >> np.uint64(64 - q_bits)).astype(np.int64)  # the query
        rows = run_s * nq
        rows += qs
        rows = prep.row_start.ravel()[rows]
        rows += lo & ((1 << pos_bits) - 1)
        del lo
        key >>= np.uint64(local_bits)
        new = np.r_[True, key[1:] != key[:-1]]
        del key
    else:  # exact codes too wide to pack
        rows = np.lexsort((local, hashes, prep.q))
        run_s = prep.run[rows]
        qs = prep.q[rows]
        ds = hashes[rows]
        new = np.r_[True, (qs[1:] != qs[:-1]) | (ds[1:] != ds[:-1])]
    if not exact and n > 1:
        later = np.flatnonzero(~new)
        if len(later):
            # each row equal to the one before it: all equal to the first
            ok = strings_equal(
                prep.docs, prep.src[rows[later]], prep.docs, prep.src[rows[later - 1]]
            )
            if not ok.all():
                return False
    dup = np.flatnonzero(~new[1:] & (run_s[1:] == run_s[:-1]))
    if len(dup):
        row = int(rows[dup[0] + 1])
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
    pid_sorted = np.cumsum(new) - 1
    prep.pid = np.empty(n, dtype=np.int64)
    prep.pid[rows] = pid_sorted
    prep.pq = qs[new]
    prep.head = prep.src[rows[new]]
    return True


def prepare(runs: Sequence[Run]) -> Prepared:
    """Encode and rank the runs, number the candidates (see the module's description)."""
    qcodes, qvocab = encode_many([r.qid for r in runs])
    qcodes, qvocab = _sorted_vocab(qcodes, qvocab)
    doc_cols = [_strings(r.docid) for r in runs]
    chunks = [
        c for col in doc_cols for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col])
    ]
    # one array when its offsets fit (a take from it is twice as fast as from chunks)
    docs = (
        pa.chunked_array([pa.concat_arrays(chunks)], type=pa.string())
        if chunks and sum(c.nbytes for c in chunks) < 2**31 - 1
        else pa.chunked_array(chunks, type=pa.string())
    )
    del chunks
    nq, R = len(qvocab), len(runs)
    lengths = np.zeros((R, nq), dtype=np.int64)
    row_start = np.zeros((R, nq), dtype=np.int64)
    parts: dict[str, list] = {k: [] for k in ("q", "s", "p", "r", "src", "h", "L")}
    at_row = 0
    for i, run in enumerate(runs):
        q, s = qcodes[i], np.asarray(run.scores, dtype=np.float64)
        h = hash_strings(doc_cols[i])
        order = _rank(q, s, doc_cols[i], nq)
        if order is None:  # as read (the usual case of a run file): nothing to gather
            src = np.arange(at_row, at_row + len(q), dtype=np.int64)
        else:
            q, s, h, src = q[order], s[order], h[order], order + at_row
        if len(q):
            first = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
            size = np.diff(np.r_[first, len(q)])
            lengths[i, q[first]] = size
            row_start[i, q[first]] = first + at_row
            pos = np.arange(len(q), dtype=np.int64) - np.repeat(first, size)
        else:
            size, pos = np.zeros(0, np.int64), np.zeros(0, np.int64)
        parts["q"].append(q)
        parts["s"].append(s)
        parts["p"].append(pos)
        parts["r"].append(np.full(len(q), i, dtype=np.int16))
        parts["src"].append(src)
        parts["h"].append(h)
        parts["L"].append(size)
        at_row += len(q)

    def cat(k, dtype):
        got = parts.pop(k)
        return np.concatenate(got).astype(dtype, copy=False) if got else np.zeros(0, dtype)

    prep = Prepared(
        names=[r.name for r in runs],
        qvocab=qvocab,
        docs=docs,
        run=cat("r", np.int16),
        q=cat("q", np.int64),
        src=cat("src", np.int64),
        raw=cat("s", np.float64),
        pos=cat("p", np.int64),
        lengths=lengths,
        sources=[r.source for r in runs],
        row_start=row_start,
        list_len=cat("L", np.int64),
        pid=np.zeros(0, np.int64),
        pq=np.zeros(0, np.int64),
        head=np.zeros(0, np.int64),
    )
    hashes = cat("h", np.uint64)
    if not _group_candidates(prep, hashes, exact=False):
        _group_candidates(prep, prep.d.astype(np.uint64), exact=True)
    return prep


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


__all__ = ["Prepared", "prepare", "as_runs", "rank_order", "output_order", "encode_many"]
