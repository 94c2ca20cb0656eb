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
from metrics_core.fusion.order import group_candidates, output_order, rank_order, rank_rows
from metrics_core.ranking.strings import (
    encode_strings,
    hash_strings,
    string_order,
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
    dictionaries (:func:`_unite_tables`), then each column's codes are looked up once."""
    tables, vocab = _unite_tables(vocabs, sort)
    out = [c.astype(np.int64) if t is None else t[c] for c, t in zip(codes, tables, strict=True)]
    return out, vocab


def _unite_tables(vocabs: list, sort: bool = False) -> tuple[list[np.ndarray | None], pa.Array]:
    """One dictionary for the dictionaries of several columns (``sort``: in the ids' string
    order) and, for each column, the table of its codes' new numbers (None: unchanged)."""
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
    return tables, vocab


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
    lengths: np.ndarray  # runs x queries: list lengths L
    sources: list[str]
    row_start: np.ndarray  # runs x queries: the row where the run's list for the query starts
    list_len: np.ndarray  # the length of each list (run, query), in the rows' order
    list_q: np.ndarray  # the query code of each list, in the rows' order
    list_run: np.ndarray  # the run of each list, in the rows' order (non-decreasing)
    pid: np.ndarray  # the candidate of each row
    cand_counts: np.ndarray  # the number of candidates of each query (:attr:`pq`)
    head: np.ndarray  # for each candidate, a position in ``docs`` holding its document id
    query_base: int = 0  # a shard's first query code among all the runs' queries
    #: runs x queries: the position in ``docs`` of each list's first row where every run's
    #: rows are ranked as read (a list is then one stretch of ``docs``), else None
    src_start: np.ndarray | None = None
    #: per run, what :attr:`src` and :attr:`raw` are made from (see :func:`_from_runs`)
    _runs: list | None = None
    _doc_codes: tuple[np.ndarray, pa.Array] | None = None
    _rows: dict | None = None  # the per-row columns made so far (:meth:`_per_row`)
    _pq: np.ndarray | None = None
    _list_first: np.ndarray | None = None

    @property
    def pq(self) -> np.ndarray:
        """The query code of each candidate (non-decreasing), from :attr:`cand_counts`."""
        if self._pq is None:
            self._pq = np.repeat(np.arange(self.n_queries, dtype=np.int64), self.cand_counts)
        return self._pq

    @pq.setter
    def pq(self, value: np.ndarray) -> None:
        self._pq = value
        self.cand_counts = np.bincount(value, minlength=self.n_queries)

    def positions(self, lo: int, hi: int) -> np.ndarray:
        """:attr:`pos` of the rows ``lo .. hi - 1`` (made from the lists' first rows)."""
        if self._rows is not None and "pos" in self._rows:
            return self._rows["pos"][lo:hi]
        if self._list_first is None:
            self._list_first = np.cumsum(self.list_len) - self.list_len
        first = self._list_first
        # the lists the rows fall in: k0 .. k1 - 1; ones, each list's first row set back
        # to 0, summed
        k0 = int(np.searchsorted(first, lo, side="right")) - 1
        k1 = int(np.searchsorted(first, hi, side="left"))
        out = np.ones(hi - lo, dtype=np.int64)
        if hi > lo:
            out[0] = lo - first[k0]
            out[first[k0 + 1 : k1] - lo] = 1 - self.list_len[k0 : k1 - 1]
            np.cumsum(out, out=out)
        return out

    def _per_row(self, name: str) -> np.ndarray:
        """A per-row column made from the lists the first time it is read (most methods
        read none of them: no array the size of the rows written for nothing)."""
        if self._rows is None:
            self._rows = {}
        if name not in self._rows:
            size = self.list_len
            if name in ("src", "raw"):
                value = _from_runs(self._runs or [], self.n_rows, name)
            elif name == "q":
                value = np.repeat(self.list_q, size)
            elif name == "run":
                value = np.repeat(self.list_run.astype(np.int16), size)
            else:  # 0, 1, ... in each list: ones, each list's first row set back
                value = np.ones(int(size.sum()), dtype=np.int64)
                if len(size):
                    value[np.cumsum(size[:-1])] = 1 - size[:-1]
                    np.cumsum(value, out=value)
                    value -= 1
            self._rows[name] = value
        return self._rows[name]

    @property
    def src(self) -> np.ndarray:
        """The position in :attr:`docs` of each row (the numbering reads :attr:`src_start`)."""
        return self._per_row("src")

    @property
    def raw(self) -> np.ndarray:
        """The run's score of each row (read by the normalisations only)."""
        return self._per_row("raw")

    @property
    def q(self) -> np.ndarray:
        """The query code of each row."""
        return self._per_row("q")

    @property
    def run(self) -> np.ndarray:
        """The run index of each row (rows grouped by run)."""
        return self._per_row("run")

    @property
    def pos(self) -> np.ndarray:
        """The 0-based rank of each row within its run's list for the query."""
        return self._per_row("pos")

    def run_of(self, rows: np.ndarray) -> np.ndarray:
        """The run of the rows ``rows`` (rows grouped by run), without :attr:`run`."""
        ends = np.cumsum(self.lengths.sum(axis=1))
        return np.searchsorted(ends, rows, side="right")

    @property
    def n_rows(self) -> int:
        """The number of rows (of all runs)."""
        return int(self.list_len.sum())

    @property
    def n_runs(self) -> int:
        return len(self.names)

    @property
    def n_queries(self) -> int:
        return len(self.qvocab)

    @property
    def n_candidates(self) -> int:
        return int(self.cand_counts.sum())

    def doc_codes(self) -> tuple[np.ndarray, pa.Array]:
        """Exact codes of the document ids of :attr:`docs` (position by position) and their
        dictionary (a hash pass over every document id: only the training of supervised
        methods, and the numbering of candidates when two fingerprints meet, need them)."""
        if self._doc_codes is None:
            enc = self.docs.dictionary_encode()
            codes = np.concatenate(
                [c.indices.to_numpy(zero_copy_only=False) for c in enc.chunks]
                or [np.zeros(0, np.int32)]
            ).astype(np.int64)
            vocab = enc.chunks[-1].dictionary if enc.num_chunks else pa.array([], pa.string())
            self._doc_codes = (codes, _plain_strings(vocab))
        return self._doc_codes

    @property
    def d(self) -> np.ndarray:
        """The exact document code of each row."""
        return self.doc_codes()[0][self.src]

    @property
    def dvocab(self) -> pa.Array:
        return self.doc_codes()[1]


#: the fewest rows (of all runs) a shard is given: below, fewer shards than cores
SHARD_ROWS = 250_000


def _ranked(
    run: Run, codes: np.ndarray, table, doc_col, at_row: int, hashes, ranked: bool = False
) -> dict:
    """One run's rows ranked (ranx's order, :func:`rank_rows`): their order among the rows
    as read (None: as read), the first row of the run in the joined document column, and its
    lists (first row, length, query code), list after list; the fingerprints of its
    document ids, rows as read, written into ``hashes``.
    ``codes``: the rows' query codes in the run's own dictionary, ``table`` their numbers
    among all the runs' queries (None: the same): the rows are ranked on the run's codes
    (a list's place among the run's lists does not matter) and only the lists' codes are
    looked up."""
    s = np.asarray(run.scores, dtype=np.float64)
    hash_strings(doc_col, hashes)
    n_codes = len(table) if table is not None else int(codes.max(initial=-1)) + 1
    order = rank_rows(codes, s, n_codes, ranked)
    if order is not None:  # as read (the usual case of a run file): nothing to gather
        codes, s = codes[order], s[order]
    if len(codes):
        first = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        size = np.diff(np.r_[first, len(codes)])
    else:
        first, size = (np.zeros(0, np.int64) for _ in range(2))
    list_q = codes[first].astype(np.int64)
    return {
        "s": s,
        "order": order,
        "at_row": at_row,
        "first": first,
        "size": size,
        "list_q": list_q if table is None else table[list_q],
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


def _list_rows(out: np.ndarray, first: np.ndarray, size: np.ndarray) -> None:
    """Fill ``out`` with the rows of lists (``first``, ``size``: each list's first row and
    length), list after list: ``first, first + 1, ...``, in place (ones, each list's first
    set back to its own start, summed), with no temporary the size of ``out``."""
    out[:] = 1
    out[0] = first[0]
    ends = np.cumsum(size)[:-1]  # where the lists after the first start
    out[ends] = first[1:] - (first[:-1] + size[:-1] - 1)
    np.cumsum(out, out=out)


def _shard(
    names, sources, qvocab, docs, lengths, ranked: list[dict], bounds: tuple[int, int]
) -> Prepared:
    """The Prepared of the queries ``[a, b)`` (codes from 0, rows grouped by run). Each
    run's lists of those queries are found among its lists (a run's rows hold each query in
    one stretch): the list starts are made from them; the rows' positions in ``docs`` and
    scores are made when first read (:attr:`Prepared.src`, :attr:`Prepared.raw`)."""
    a, b = bounds
    whole = a == 0 and b == len(qvocab)
    R = len(ranked)
    parts = []  # per run: its lists of the shard: first rows in the run, lengths, queries
    for r in ranked:
        keep = None if whole else (r["list_q"] >= a) & (r["list_q"] < b)
        first = r["first"] if keep is None else r["first"][keep]
        size = r["size"] if keep is None else r["size"][keep]
        parts.append((first, size, r["list_q"] if keep is None else r["list_q"][keep]))
    row_start = np.zeros((R, b - a), dtype=np.int64)
    as_read = all(r["order"] is None for r in ranked)
    src_start = np.zeros((R, b - a), dtype=np.int64) if as_read else None
    runs = []
    at = 0
    for i, (r, (first, size, list_q)) in enumerate(zip(ranked, parts, strict=True)):
        start = np.cumsum(size) - size  # the lists' first rows among the shard's rows of the run
        row_start[i, list_q - a] = start + at
        if src_start is not None:
            src_start[i, list_q - a] = first + r["at_row"]
        runs.append((at, first, size, r["s"], r["order"], r["at_row"]))
        at += int(size.sum())
    prep = Prepared(
        names=names,
        qvocab=qvocab if whole else qvocab.slice(a, b - a),
        docs=docs,
        lengths=np.ascontiguousarray(lengths[:, a:b]),
        sources=sources,
        row_start=row_start,
        list_len=np.concatenate([size for _, size, _ in parts]).astype(np.int64, copy=False),
        list_q=np.concatenate([list_q - a for _, _, list_q in parts]).astype(np.int64),
        list_run=np.repeat(np.arange(R), [len(size) for _, size, _ in parts]),
        pid=np.zeros(0, np.int64),
        cand_counts=np.zeros(b - a, np.int64),
        head=np.zeros(0, np.int64),
        query_base=a,
        src_start=src_start,
        _runs=runs,
    )
    return prep


def _from_runs(runs: list, n: int, name: str) -> np.ndarray:
    """:attr:`Prepared.src` (``name="src"``) or :attr:`Prepared.raw` of the ``n`` rows, from
    each run's (first row among the rows, its lists' first rows in its ranked order and
    lengths, its ranked scores, the order of its ranked rows among its rows as read or
    None, its first row in ``docs``), in blocks of whole lists of :data:`GATHER_ROWS`."""
    out = np.empty(n, dtype=np.int64 if name == "src" else np.float64)
    for at, first, size, scores, order, at_row in runs:
        m = int(size.sum())
        if not m:
            continue
        if name == "raw" and len(scores) == m:  # every list of the run: its ranked scores
            out[at : at + m] = scores
            continue
        ends = np.cumsum(size)
        cuts = np.searchsorted(ends, np.arange(GATHER_ROWS, m, GATHER_ROWS), side="right")
        bounds = np.unique(np.r_[0, cuts, len(size)]).tolist()
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            row_lo = int(ends[lo - 1]) if lo else 0
            rows = np.empty(int(ends[hi - 1]) - row_lo, dtype=np.int64)
            # the run's rows of these lists, in its ranked order
            _list_rows(rows, first[lo:hi], size[lo:hi])
            part = out[at + row_lo : at + int(ends[hi - 1])]
            if name == "raw":
                np.take(scores, rows, out=part, mode="clip")  # the rows are valid
            else:
                if order is not None:  # their rows as read
                    rows = order[rows]
                np.add(rows, at_row, out=part)
    return out


#: the rows gathered at a time by :func:`_from_runs`
GATHER_ROWS = 1 << 16


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
    tables, qvocab = _unite_tables([v for _, v in encoded], sort=True)
    qcodes = [c for c, _ in encoded]
    del encoded
    doc_cols = [_strings(r.docid) for r in runs]
    nq, R = len(qvocab), len(runs)
    starts = np.cumsum([0] + [len(r.scores) for r in runs])
    # the fingerprints of the joined document column, each run's written by its thread
    hashes = np.empty(int(starts[-1]), dtype=np.uint64)

    as_given = ranked

    def rank_one(i: int) -> dict:
        a, b = int(starts[i]), int(starts[i + 1])
        return _ranked(runs[i], qcodes[i], tables[i], doc_cols[i], a, hashes[a:b], as_given)

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
        prep = _shard(names, sources, qvocab, docs, lengths, ranked_runs, b)
        if not group_candidates(prep, hashes, exact=False):
            group_candidates(prep, prep.doc_codes()[0].astype(np.uint64), exact=True)
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
