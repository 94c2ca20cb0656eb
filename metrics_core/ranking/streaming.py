"""Streaming evaluation: a run of any size in blocks of whole queries, in bounded memory.

The run is read in batches (:mod:`metrics_core.io.blocks`) and grouped into blocks of
about ``block_rows`` rows that end at a query boundary: the rows of the query a block
would cut are carried into the next block. Each block is evaluated by the same engine as
the whole run (:func:`~metrics_core.ranking.engine.build_ranked_lists`), against the
judgements of the block's queries (the qrels are read and indexed once), and the
per-query values are concatenated. The aggregates are computed by the same function, over
the same per-query values in the same order (queries in order of first appearance in
the run, then, with ``missing_queries="zero"``, the absent qrels queries by name), so
they are bit-identical to :func:`~metrics_core.ranking.evaluate.evaluate` on the whole
run.

A run whose queries are not contiguous (a query's rows reappear after other queries) is
still evaluated exactly: the queries that reappear are noted in the first pass; a second
pass over the source collects their rows, spilled to temporary files partitioned by a
hash of the query id, and each partition (whole queries, rows in source order) is
evaluated by the engine; the first pass's partial values of these queries are dropped
and their diagnostics taken back. The diagnostics then report
``noncontiguous_queries``.

Every diagnostic (missing and extra queries, duplicates, ties, ties straddling a
cutoff) is a sum over queries, so the blocks' diagnostics add up to the whole run's.
"""

from __future__ import annotations

import os
import queue
import tempfile
import threading
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run
from metrics_core.ranking.engine import Diagnostics, Prepared, _encode, build_ranked_lists
from metrics_core.ranking.measures import compute, summary
from metrics_core.ranking.strings import string_order

#: Rows per block by default. With the read-ahead thread three blocks are in memory at
#: once (one evaluated, one queued, one being read): on the 10 M-line benchmark (ids of
#: about ten bytes, 1.25 M qrels lines) the whole process peaked at 400-420 MB with
#: 500 k-row blocks and 530-570 MB with 1 M, at the same CPU time; 770 MB at 50 M lines
#: (BENCHMARKS.md, "Streaming and Dask").
DEFAULT_BLOCK_ROWS = 500_000

#: Run files at least this big are evaluated in blocks by :func:`metrics_core.evaluate`
#: when ``block_rows`` is not given (smaller ones are read whole). From about 2 M lines
#: (75 MB) streaming is as fast as reading whole, and faster above: 10 M lines 2.0 s
#: against 3-4 s, 100 k queries x 100 docs 3.8 s against 10 s (the read-ahead thread
#: overlaps the parse with the engine, and there are fewer fresh pages).
STREAM_THRESHOLD_BYTES = 64 << 20


class QrelsIndex:
    """Qrels indexed by query, so the judgements of a few queries are taken in O(their rows).

    Parameters
    ----------
    qrels : Qrels
    """

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        codes, vocab = _encode(qrels.qid)
        names = vocab.to_pylist()
        self.vocab = vocab
        self.order = np.argsort(codes, kind="stable")
        counts = np.bincount(codes, minlength=len(names))
        self.starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.extra = set(qrels.extra_query_ids)
        self._extra_values = pa.array(sorted(self.extra), type=pa.string())
        self.judged = set(names) | self.extra

    def subset(self, query_ids) -> Qrels:
        """The judgements of ``query_ids`` (rows in their qrels order, lines kept)."""
        q = self.qrels
        ids = query_ids if isinstance(query_ids, pa.Array) else pa.array(list(query_ids), type=pa.string())
        codes = pc.drop_null(pc.index_in(ids, value_set=self.vocab)).to_numpy(zero_copy_only=False)
        codes = codes.astype(np.int64)
        lo, hi = self.starts[codes], self.starts[codes + 1]
        count = hi - lo
        at = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
        rows = np.sort(self.order[at])
        if q.line_numbers is not None:
            lines = q.line_numbers[rows]
        elif q.rows_are_lines:
            lines = rows + 1
        else:
            lines = None
        extra = ids.filter(pc.is_in(ids, value_set=self._extra_values)).to_pylist() if self.extra else []
        if len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows):
            # one stretch of the qrels (qrels and run written in the same query order):
            # slices, no copies of the ids
            lo, n = int(rows[0]), len(rows)
            qid, docid = q.qid.slice(lo, n), q.docid.slice(lo, n)
        else:
            take = pa.array(rows, type=pa.int64())
            qid, docid = q.qid.take(take), q.docid.take(take)
        return Qrels(qid, docid, q.relevance[rows], source=q.source, line_numbers=lines,
                     extra_query_ids=extra)


@dataclass
class _Merged:
    """Diagnostics summed over blocks (each is a sum over queries)."""

    cutoffs: tuple
    duplicates: int = 0
    tied_groups: int = 0
    tied_documents: int = 0
    straddling: dict = field(default_factory=dict)

    def add(self, d: Diagnostics, sign: int = 1) -> None:
        self.duplicates += sign * d.duplicates
        self.tied_groups += sign * d.tied_groups
        self.tied_documents += sign * d.tied_documents
        for k, v in d.ties_straddling.items():
            self.straddling[k] = self.straddling.get(k, 0) + sign * v

    def diagnostics(self, missing, extra, qrels_duplicates) -> Diagnostics:
        d = Diagnostics(missing_queries=list(missing), extra_queries=list(extra),
                        duplicates=self.duplicates, qrels_duplicates=qrels_duplicates,
                        tied_groups=self.tied_groups, tied_documents=self.tied_documents)
        # the engine reports every cutoff when the run has a tie, none otherwise
        if self.tied_groups:
            d.ties_straddling = {k: self.straddling.get(k, 0) for k in sorted(set(self.cutoffs))}
        return d


class Evaluator:
    """The engine applied to parts of one run, with the results put together.

    Holds the qrels (indexed once), the measures and the conventions; :meth:`rows`
    evaluates a Run made of whole queries, :meth:`finish` assembles the
    :class:`~metrics_core.ranking.evaluate.Evaluation` exactly as the whole-run path
    would.
    """

    def __init__(self, qrels: Qrels, specs, conv: Conventions, cutoffs, track_counts: bool = False):
        self.index = qrels if isinstance(qrels, QrelsIndex) else QrelsIndex(qrels)
        # ranked rows per query (for LazyRanked), when asked for
        self.counts = {} if track_counts else None
        self.specs = list(specs)
        self.conv = conv
        self.cutoffs = tuple(cutoffs)
        # per block the absent queries are not added: they are added once, at the end
        self.block_conv = conv.replace(missing_queries="skip")

    def qrels_diagnostics(self) -> int:
        """Duplicate judgements over the whole qrels (raises under ``duplicates="error"``)."""
        empty = Run(pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), source="<run>")
        ranked = build_ranked_lists(self.index.qrels, empty, self.block_conv, self.cutoffs)
        return ranked.diagnostics.qrels_duplicates

    def prepare(self, run: Run):
        """(the judgements of ``run``'s queries, the codes and names of its query ids):
        the part of :meth:`rows` that can be done on the read-ahead thread. (The
        fingerprints are left to :meth:`rows`: on the 10 M-line benchmark this splits the
        work about evenly between the two threads.)"""
        codes, vocab = _encode(run.qid)
        return self.index.subset(vocab), (codes, vocab)

    def rows(self, run: Run, record: bool = True, prepared=None):
        """Evaluate ``run`` (whole queries). Returns (query ids, {measure: values}, diagnostics).

        ``prepared``: what :meth:`prepare` gave for this run (made here when None).
        """
        sub, run_qid = self.prepare(run) if prepared is None else prepared
        ranked = build_ranked_lists(sub, run, self.block_conv, self.cutoffs, Prepared(sub, run, run_qid))
        columns = {s.name: compute(ranked, s, self.conv) for s in self.specs}
        if self.counts is not None and record:
            self.counts.update(zip(ranked.query_ids, np.diff(ranked.starts).tolist(), strict=True))
        return ranked.query_ids, columns, ranked.diagnostics

    def missing_rows(self, missing):
        """Values of the qrels queries absent from the run (``missing_queries="zero"``)."""
        empty = Run(pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), source="<run>")
        ranked = build_ranked_lists(self.index.subset(missing), empty, self.conv, self.cutoffs)
        return ranked.query_ids, {s.name: compute(ranked, s, self.conv) for s in self.specs}

    def finish(self, run_name, query_ids, position, columns, merged: _Merged, run_queries,
               qrels_duplicates, extra_diagnostics=None):
        """The Evaluation of the whole run from per-query values in any order.

        ``position`` orders the queries as the whole run would (first appearance).
        """
        from metrics_core.ranking.evaluate import Evaluation

        judged = self.index.judged
        missing = sorted(judged - run_queries)
        extra = sorted(run_queries - judged)
        order = np.argsort(np.asarray(position, dtype=np.int64), kind="stable")
        ids = [query_ids[i] for i in order]
        cols = {s.name: np.asarray(columns[s.name], dtype=np.float64)[order] if len(order)
                else np.zeros(0) for s in self.specs}
        if self.conv.missing_queries == "zero" and missing:
            mids, mcols = self.missing_rows(missing)
            ids += mids
            cols = {k: np.concatenate((v, mcols[k])) for k, v in cols.items()}
        diag = merged.diagnostics(missing, extra, qrels_duplicates)
        miss = np.zeros(len(ids), dtype=bool)
        miss[len(ids) - (len(missing) if self.conv.missing_queries == "zero" else 0):] = True
        # as the whole-run path: trec_eval's query order once for every measure, and the
        # count of positive judgements (trec_eval 9's summed num_rel under -c)
        trec_sorted = string_order(ids)
        labels = self.index.qrels.relevance
        if getattr(self.conv, "labels", "truncate") == "truncate":
            labels = np.trunc(labels)
        positive = int(np.count_nonzero(labels > 0))
        agg = {s.name: summary(cols[s.name], s, ids, self.conv, missing=miss, positive_labels=positive,
                               order=trec_sorted) for s in self.specs}
        out = diag.as_dict() | (extra_diagnostics or {}) | {"num_queries": len(ids)}
        return Evaluation(run_name, self.specs, (ids, cols), agg, out, self.conv, None)


def _plain(arr):
    if pa.types.is_dictionary(arr.type):
        return arr.cast(arr.type.value_type)
    return arr


def _hash_partition(qid, n_parts: int) -> np.ndarray:
    """Partition (0 .. n_parts - 1) of every row by a hash of its query id."""
    from metrics_core.ranking.strings import hash_strings

    h = hash_strings(_plain(qid))
    with np.errstate(over="ignore"):
        h = (h * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(33)
    return (h % np.uint64(n_parts)).astype(np.int64)


def _blocks(batches, block_rows: int):
    """Tables of whole queries (about ``block_rows`` rows) from a stream of batches.

    The rows of the last query of what has been read so far are carried into the next
    block (they may continue in the next batch).
    """
    pending, n = [], 0
    tail_q, tail_same = None, 0  # trailing pending batches known to hold only query tail_q
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        n += batch.num_rows
        last = batch.column("qid")[-1]
        if tail_q is None or not last.equals(tail_q):
            tail_q, tail_same = last, 0
        if n < block_rows:
            continue
        cut = None
        i = len(pending) - 1
        while i >= 0:
            ne = pc.not_equal(pending[i].column("qid"), last).to_numpy(zero_copy_only=False)
            where = np.flatnonzero(ne)
            if len(where):
                cut = (i, int(where[-1]) + 1)
                break
            i = i - 1 - tail_same if i == len(pending) - 1 else i - 1
        if cut is None:  # one query so far: read on
            tail_same = len(pending)
            continue
        i, at = cut
        head = pending[:i] + [pending[i].slice(0, at)]
        tail = [t for t in [pending[i].slice(at)] + pending[i + 1:] if t.num_rows]
        yield pa.concat_tables(head)
        pending = tail
        n = sum(t.num_rows for t in pending)
        tail_same = len(pending)
    if pending:
        yield pa.concat_tables(pending)


class _ReadAhead:
    """The items of ``items``, produced on a background thread up to ``depth`` ahead,
    starting at once (so the next block is read while the caller still works).

    Arrow's CSV parser, its compute functions and numpy's sorts release the GIL, so the
    next block is parsed on the second core while the engine evaluates this one. An
    exception in the producer is raised here, where the item it failed on would have
    come. :meth:`close` (also on leaving a ``with`` block) stops the producer.
    """

    _DONE = object()

    def __init__(self, items, depth: int = 1):
        self._q: queue.Queue = queue.Queue(maxsize=max(int(depth), 1))
        self._stop = threading.Event()
        self._finished = False
        self._thread = threading.Thread(target=self._produce, args=(items,), name="ranklab-read-ahead",
                                        daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self, items):
        try:
            for item in items:
                if not self._put((True, item)):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            self._put((False, exc))
            return
        self._put((True, self._DONE))

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        ok, item = self._q.get()
        if not ok or item is self._DONE:
            self.close()
            if not ok:
                raise item
            raise StopIteration
        return item

    def close(self) -> None:
        self._finished = True
        self._stop.set()
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def evaluate_stream(qrels: Qrels, stream, specs, conv: Conventions, cutoffs,
                    block_rows: int = DEFAULT_BLOCK_ROWS):
    """Evaluate a :class:`~metrics_core.io.blocks.RunStream` block by block.

    Returns the :class:`~metrics_core.ranking.evaluate.Evaluation`, with a ``streaming``
    attribute: blocks, rows, non-contiguous queries, spilled rows.
    """
    from metrics_core.io.blocks import batch_run

    block_rows = max(int(block_rows), 1)
    ev = Evaluator(qrels, specs, conv, cutoffs, track_counts=stream.run is not None)

    def prepared_blocks():  # on the read-ahead thread: read, parse, encode, take the judgements
        for table in _blocks(stream.batches(), block_rows):
            run = batch_run(table, stream.name, stream.source)
            yield run, ev.prepare(run)

    with _ReadAhead(prepared_blocks()) as blocks:
        return _evaluate_blocks(ev, stream, blocks, block_rows)


def _evaluate_blocks(ev: Evaluator, stream, blocks, block_rows: int):
    """The body of :func:`evaluate_stream`, over its prepared blocks."""
    from metrics_core.io.blocks import NotStreamable

    qrels_dups = ev.qrels_diagnostics()  # while the first block is read
    merged = _Merged(ev.cutoffs)
    ids, pos, cols = [], [], {s.name: [] for s in ev.specs}
    seen: set = set()
    reappear: set = set()
    block_starts = []
    block_counted = []  # whether a block's diagnostics counted anything (ties, duplicates)
    n_rows = 0
    for run, prepared in blocks:
        block_starts.append(n_rows)
        n_rows += len(run)
        _, (_, vocab) = prepared  # the judgements; the query codes and names
        names = vocab.to_pylist()
        again = seen.intersection(names)
        if again:
            reappear |= again
        seen.update(names)
        qids, columns, diag = ev.rows(run, prepared=prepared)
        merged.add(diag)
        block_counted.append(bool(diag.tied_groups or diag.duplicates))
        base = len(ids)
        ids += qids
        pos += range(base, base + len(qids))
        for k, v in columns.items():
            cols[k].append(v)
    if n_rows == 0:
        raise NotStreamable("no rows")
    columns = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}
    info = {"blocks": len(block_starts), "rows": n_rows, "noncontiguous_queries": len(reappear),
            "spilled_rows": 0}
    extra_diag = {}
    redo = sorted(reappear & ev.index.judged)
    if redo:
        # partitions of about block_rows rows (their rows estimated from the first pass)
        n_parts = max(1, min(256, -(-n_rows * len(redo) // max(len(seen), 1) // block_rows)))
        ids, pos, columns, spilled = _redo_noncontiguous(
            ev, stream, redo, ids, pos, columns, block_starts, block_counted, merged, n_parts)
        info["spilled_rows"] = spilled
    if reappear:
        extra_diag["noncontiguous_queries"] = len(reappear)
    result = ev.finish(stream.name, ids, pos, columns, merged, seen, qrels_dups, extra_diag)
    result.streaming = info
    if stream.run is not None:  # a Run in memory: its rankings can be shown, query by query
        order = result._per_query[0]
        result.ranked = LazyRanked(ev, stream.run, order, [ev.counts.get(q, 0) for q in order])
    return result


class LazyRanked:
    """The ranked lists of an evaluation made in blocks, built one query at a time.

    Offers what a page needs to show one query's ranking -- ``query_ids``, ``starts``,
    ``run_rows(lo, hi)``, ``judged[lo:hi]`` and ``label[lo:hi]`` for the rows of one
    query -- without the ranked lists of the whole run: each query is ranked again alone
    by the engine (ties, duplicates and depth are per query, so the ranking is the same).
    """

    def __init__(self, ev: Evaluator, run: Run, query_ids, counts):
        self._ev, self._run = ev, run
        self.query_ids = list(query_ids)
        self.starts = np.concatenate(([0], np.cumsum(np.asarray(counts, dtype=np.int64))))
        self.diagnostics = None
        self._last = None
        self.judged = _QuerySlicer(self, "judged")
        self.label = _QuerySlicer(self, "label")

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def _query(self, lo: int):
        """(offset of the query holding ranked row ``lo``, its RankedLists, its run rows)."""
        i = int(np.searchsorted(self.starts, lo, side="right") - 1)
        if self._last is None or self._last[0] != i:
            q = self.query_ids[i]
            rows = _rows_of(self._run.qid, q)
            take = pa.array(rows, type=pa.int64())
            sub = Run(pa.array([q] * len(rows), pa.string()), self._run.docid.take(take),
                      self._run.scores[rows], name=self._run.name, source=self._run.source)
            ranked = build_ranked_lists(self._ev.index.subset([q]), sub, self._ev.block_conv,
                                        self._ev.cutoffs)
            self._last = (i, ranked, rows)
        i, ranked, rows = self._last
        return int(self.starts[i]), ranked, rows

    def run_rows(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Run rows of ranked rows ``lo:hi`` (within one query)."""
        hi = int(self.starts[-1]) if hi is None else hi
        if hi <= lo:
            return np.zeros(0, dtype=np.int64)
        off, ranked, rows = self._query(lo)
        return rows[ranked.run_rows(lo - off, hi - off)]


class _QuerySlicer:
    def __init__(self, owner: LazyRanked, attr: str):
        self._owner, self._attr = owner, attr

    def __getitem__(self, item):
        if not isinstance(item, slice) or item.step not in (None, 1):
            raise TypeError("only slices of one query's rows are supported")
        lo = 0 if item.start is None else item.start
        hi = int(self._owner.starts[-1]) if item.stop is None else item.stop
        if hi <= lo:
            return np.zeros(0, dtype=bool if self._attr == "judged" else np.float64)
        off, ranked, _ = self._owner._query(lo)
        return getattr(ranked, self._attr)[lo - off:hi - off]


def _rows_of(qid, q: str) -> np.ndarray:
    """Rows of a query-id column (plain or dictionary-encoded, chunked or not) equal to ``q``."""
    chunks = qid.chunks if isinstance(qid, pa.ChunkedArray) else [qid]
    out, at = [], 0
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            codes = np.flatnonzero(chunk.dictionary.to_numpy(zero_copy_only=False) == q)
            hit = np.isin(chunk.indices.to_numpy(zero_copy_only=False), codes)
        else:
            hit = pc.equal(chunk, q).to_numpy(zero_copy_only=False)
        out.append(np.flatnonzero(hit) + at)
        at += len(chunk)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _redo_noncontiguous(ev: Evaluator, stream, redo, ids, pos, columns, block_starts, block_counted,
                        merged, n_parts: int):
    """Second pass for the queries whose rows are not contiguous (see the module docstring)."""
    from metrics_core.io.blocks import SCHEMA, batch_run

    # first pass: drop every partial value of these queries, keep the position of the first
    value_set = pa.array(redo, type=pa.string())
    ids_arr = pa.array(ids, type=pa.string())
    is_redo = pc.is_in(ids_arr, value_set=value_set).to_numpy(zero_copy_only=False)
    pos_arr = np.asarray(pos, dtype=np.int64)
    code = pc.index_in(ids_arr.filter(pa.array(is_redo)), value_set=value_set).to_numpy(
        zero_copy_only=False).astype(np.int64)
    first_of = np.full(len(redo), np.iinfo(np.int64).max, dtype=np.int64)  # by index in redo
    np.minimum.at(first_of, code, pos_arr[is_redo])
    keep = ~is_redo
    ids_kept = ids_arr.filter(pa.array(keep)).to_pylist()
    pos_kept = pos_arr[keep].tolist()
    cols_kept = {k: v[keep] for k, v in columns.items()}

    starts = np.asarray(block_starts, dtype=np.int64)
    spilled = 0
    with tempfile.TemporaryDirectory(prefix="ranklab-spill-") as tmp:
        writers = [pa.ipc.new_stream(os.path.join(tmp, f"part{i}.arrows"), SCHEMA)
                   for i in range(n_parts)]
        fragments: dict[int, list] = {}

        def take_back(block: int):
            tables = fragments.pop(block)
            run = batch_run(pa.concat_tables(tables), stream.name, stream.source)
            _, _, diag = ev.rows(run, record=False)
            merged.add(diag, sign=-1)

        at = 0
        for batch in stream.batches():
            n = batch.num_rows
            mask = pc.is_in(batch.column("qid"), value_set=value_set)
            sel = batch.filter(mask)
            if sel.num_rows:
                rows = at + np.flatnonzero(mask.to_numpy(zero_copy_only=False))
                blk = np.searchsorted(starts, rows, side="right") - 1
                # the first pass's fragments of these queries, block by block (only where
                # the block counted ties or duplicates: elsewhere every query's share is 0)
                for b in np.unique(blk):
                    if not block_counted[b]:
                        continue
                    part = sel.filter(pa.array(blk == b))
                    fragments.setdefault(int(b), []).append(part)
                part_of = _hash_partition(sel.column("qid"), n_parts)
                for p in np.unique(part_of):
                    writers[p].write_table(sel.filter(pa.array(part_of == p)))
                spilled += sel.num_rows
            at += n
            # fragments of blocks that ended before this batch are complete
            done_below = np.searchsorted(starts, at, side="right") - 1
            for b in sorted(k for k in fragments if k < done_below):
                take_back(b)
        for b in sorted(fragments):
            take_back(b)
        for w in writers:
            w.close()
        new_ids, new_pos, new_cols = [], [], {k: [] for k in columns}
        for i in range(len(writers)):
            with pa.OSFile(os.path.join(tmp, f"part{i}.arrows")) as fh:
                table = pa.ipc.open_stream(fh).read_all()
            if not table.num_rows:
                continue
            run = batch_run(table, stream.name, stream.source)
            qids, cols, diag = ev.rows(run)
            merged.add(diag)
            new_ids += qids
            at = pc.index_in(pa.array(qids, type=pa.string()), value_set=value_set)
            new_pos += first_of[at.to_numpy(zero_copy_only=False)].tolist()
            for k, v in cols.items():
                new_cols[k].append(v)
    ids_out = ids_kept + new_ids
    pos_out = pos_kept + new_pos
    cols_out = {k: np.concatenate([cols_kept[k]] + new_cols[k]) for k in columns}
    return ids_out, pos_out, cols_out, spilled


__all__ = ["DEFAULT_BLOCK_ROWS", "STREAM_THRESHOLD_BYTES", "QrelsIndex", "Evaluator", "LazyRanked",
           "evaluate_stream"]
