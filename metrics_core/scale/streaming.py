"""Streaming evaluation: a run of any size in blocks of whole queries, in bounded memory.

The run is read in batches (:func:`metrics_core.io.open_run_stream`) and grouped into blocks of
about ``block_rows`` rows that end at a query boundary: the rows of the query a block
would cut are carried into the next block. Each block is evaluated by the same engine as
the whole run (:func:`~metrics_core.ranking.engine.build_ranked_lists`), against the
judgements of the block's queries (the qrels are read and indexed once), and the
per-query values are concatenated. The aggregates are computed by the same function, over
the same per-query values in the same order (queries in order of first appearance in
the run, then, with ``missing_queries="zero"``, the absent qrels queries by name), so
they are bit-identical to :func:`~metrics_core.front_door.evaluate` on the whole
run.

A run whose queries are not contiguous (a query's rows reappear after other queries) is
still evaluated exactly: the queries that reappear are noted in the first pass; a second
pass over the source collects their rows, spilled to temporary files partitioned by a
hash of the query id (on a disk, mapped back: :mod:`metrics_core.scale.spill`), and each partition (whole queries, rows in source order) is
evaluated by the engine; the first pass's partial values of these queries are dropped
and their diagnostics taken back. The diagnostics then report
``noncontiguous_queries``.

Every diagnostic (missing and extra queries, duplicates, ties, ties straddling a
cutoff) is a sum over queries, so the blocks' diagnostics add up to the whole run's.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels
from metrics_core.io.batches import SCHEMA, NotStreamable, batch_run
from metrics_core.scale.parts import Evaluator, MergedDiagnostics, hash_partition
from metrics_core.scale.read_ahead import ReadAhead, query_blocks
from metrics_core.scale.spill import disk_folder, map_table

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


def evaluate_stream(
    qrels: Qrels, stream, specs, conv: Conventions, cutoffs, block_rows: int = DEFAULT_BLOCK_ROWS
):
    """Evaluate a :class:`~metrics_core.io.batches.RunStream` block by block.

    Returns the :class:`~metrics_core.evaluation.Evaluation`, with a ``streaming``
    attribute: blocks, rows, non-contiguous queries, spilled rows.
    """
    block_rows = max(int(block_rows), 1)
    ev = Evaluator(qrels, specs, conv, cutoffs)

    def prepared_blocks():  # on the read-ahead thread: read, parse, encode, take the judgements
        for table in query_blocks(stream.batches(), block_rows):
            run = batch_run(table, stream.name, stream.source)
            yield run, ev.prepare(run)

    with ReadAhead(prepared_blocks()) as blocks:
        return _evaluate_blocks(ev, stream, blocks, block_rows)


def _evaluate_blocks(ev: Evaluator, stream, blocks, block_rows: int):
    """The body of :func:`evaluate_stream`, over its prepared blocks."""
    qrels_dups = ev.qrels_diagnostics()  # while the first block is read
    merged = MergedDiagnostics(ev.cutoffs)
    ids: list[str] = []
    pos: list[int] = []  # each query's place in the run's order
    cols: dict[str, list[np.ndarray]] = {s.name: [] for s in ev.specs}
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
    info = {
        "blocks": len(block_starts),
        "rows": n_rows,
        "noncontiguous_queries": len(reappear),
        "spilled_rows": 0,
    }
    extra_diag = {}
    redo = sorted(reappear & ev.index.judged)
    if redo:
        # partitions of about block_rows rows (their rows estimated from the first pass)
        n_parts = max(1, min(256, -(-n_rows * len(redo) // max(len(seen), 1) // block_rows)))
        ids, pos, columns, spilled = _redo_noncontiguous(
            ev, stream, redo, ids, pos, columns, block_starts, block_counted, merged, n_parts
        )
        info["spilled_rows"] = spilled
    if reappear:
        extra_diag["noncontiguous_queries"] = len(reappear)
    result = ev.finish(stream.name, ids, pos, columns, merged, seen, qrels_dups, extra_diag)
    return result.replace(streaming=info)


def _redo_noncontiguous(
    ev: Evaluator,
    stream,
    redo,
    ids,
    pos,
    columns,
    block_starts,
    block_counted,
    merged,
    n_parts: int,
):
    """Second pass for the queries whose rows are not contiguous (see the module docstring)."""
    # first pass: drop every partial value of these queries, keep the position of the first
    value_set = pa.array(redo, type=pa.string())
    ids_arr = pa.array(ids, type=pa.string())
    is_redo = pc.is_in(ids_arr, value_set=value_set).to_numpy(zero_copy_only=False)
    pos_arr = np.asarray(pos, dtype=np.int64)
    code = (
        pc.index_in(ids_arr.filter(pa.array(is_redo)), value_set=value_set)
        .to_numpy(zero_copy_only=False)
        .astype(np.int64)
    )
    first_of = np.full(len(redo), np.iinfo(np.int64).max, dtype=np.int64)  # by index in redo
    np.minimum.at(first_of, code, pos_arr[is_redo])
    keep = ~is_redo
    ids_kept = ids_arr.filter(pa.array(keep)).to_pylist()
    pos_kept = pos_arr[keep].tolist()
    cols_kept = {k: v[keep] for k, v in columns.items()}

    starts = np.asarray(block_starts, dtype=np.int64)
    spilled = 0
    # on a disk (a tmpfs would keep the spilled rows in memory), mapped back when evaluated
    with tempfile.TemporaryDirectory(prefix="ranklab-spill-", dir=disk_folder()[0]) as tmp:
        writers = [
            pa.ipc.new_stream(os.path.join(tmp, f"part{i}.arrows"), SCHEMA) for i in range(n_parts)
        ]
        fragments: dict[int, list] = {}

        def take_back(block: int):
            tables = fragments.pop(block)
            run = batch_run(pa.concat_tables(tables), stream.name, stream.source)
            _, _, diag = ev.rows(run)
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
                part_of = hash_partition(sel.column("qid"), n_parts)
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
        new_ids: list[str] = []
        new_pos: list[int] = []
        new_cols: dict[str, list[np.ndarray]] = {k: [] for k in columns}
        for i in range(len(writers)):
            table = map_table(os.path.join(tmp, f"part{i}.arrows"))
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


__all__ = ["DEFAULT_BLOCK_ROWS", "STREAM_THRESHOLD_BYTES", "evaluate_stream"]
