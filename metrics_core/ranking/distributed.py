"""Evaluation on a Dask cluster (``dask.distributed``): a run in parts, read by the workers.

A run given as parts (a folder, a glob or a list of TREC, CSV/TSV or Parquet files that
together make one run, in the order of their sorted names; a query may straddle parts)
is evaluated in three steps of Dask tasks:

1. each part is read by a worker and its rows split into ``P`` partitions by a hash of
   the query id (every row keeps its part and row number);
2. partition ``j`` gathers its pieces from every part (Dask moves them between workers:
   the shuffle), in part order, so its rows are in the run's order and hold whole
   queries; it is evaluated by the engine against the qrels (sent to every worker once);
3. the per-query values and diagnostics come back to the client and are put together
   by the code of the streaming path (:class:`metrics_core.ranking.streaming.Evaluator`):
   queries in order of first appearance in the run, the aggregates by the same function
   over the same values in the same order -- the same numbers as one process.

The workers must be able to import ``metrics_core`` and read the part files (a shared
file system, or one machine).
"""

from __future__ import annotations

import glob
import operator
import os

import numpy as np
import pyarrow as pa

from metrics_core.conventions import Conventions
from metrics_core.errors import N_, InputError
from metrics_core.io import read_run
from metrics_core.io.blocks import SCHEMA, NotStreamable, batch_run, open_run_stream
from metrics_core.ranking.parts import (
    Evaluator,
    MergedDiagnostics,
    QrelsIndex,
    hash_partition,
    plain_strings,
)
from metrics_core.ranking.ranked_lists import Diagnostics
from metrics_core.ranking.registry import parse_measures, rank_cutoffs

#: Bits of the row number in a row's position key (part << ROW_BITS | row).
ROW_BITS = 40


def list_parts(spec) -> list[str]:
    """The files of a run given in parts: a folder (its files, sorted by name, hidden ones
    left out), a glob pattern (matches sorted), a list of paths, or one file."""
    if isinstance(spec, (list, tuple)):
        parts = [os.fspath(p) for p in spec]
    else:
        spec = os.fspath(spec)
        if os.path.isdir(spec):
            parts = sorted(os.path.join(spec, f) for f in os.listdir(spec)
                           if not f.startswith(".") and os.path.isfile(os.path.join(spec, f)))
        elif any(c in spec for c in "*?["):
            parts = sorted(p for p in glob.glob(spec) if os.path.isfile(p))
        else:
            parts = [spec]
    if not parts:
        raise InputError(N_("no run parts found"), source=str(spec),
                         hint=N_("Give a folder of run files, a glob such as 'parts/*.run', or files"))
    for p in parts:
        if not os.path.isfile(p):
            raise InputError(N_("file not found"), source=p, hint=N_("Check the path"))
    return parts


def run_name(spec, parts) -> str:
    """A folder's name, else the first part's stem."""
    if not isinstance(spec, (list, tuple)) and os.path.isdir(os.fspath(spec)):
        return os.path.basename(os.path.normpath(os.fspath(spec))) or "run"
    from metrics_core.io.source import RawData

    return RawData(None, parts[0]).stem or "run"


def _part_table(path: str) -> pa.Table:
    """All rows of one part (columns of :data:`metrics_core.io.blocks.SCHEMA`)."""
    try:
        tables = list(open_run_stream(path).batches())
        if tables:
            return pa.concat_tables(tables)
    except NotStreamable:
        pass
    run = read_run(path)  # read whole: the reader names any bad line
    qid = plain_strings(run.qid)
    if isinstance(qid, pa.ChunkedArray):
        qid = qid.combine_chunks()
    docid = run.docid.combine_chunks() if isinstance(run.docid, pa.ChunkedArray) else run.docid
    lines = (run.line_numbers if run.line_numbers is not None
             else np.arange(1, len(run) + 1, dtype=np.int64))
    return pa.Table.from_arrays([qid, docid, pa.array(run.scores), pa.array(lines)], schema=SCHEMA)


def read_split(path: str, part: int, n_parts: int) -> list[pa.Table]:
    """Task: read one part, split its rows into ``n_parts`` partitions by query hash."""
    table = _part_table(path)
    n = table.num_rows
    key = (np.int64(part) << np.int64(ROW_BITS)) + np.arange(n, dtype=np.int64)
    table = table.append_column("pos", pa.array(key))
    if not n:
        return [table] * n_parts
    where = hash_partition(table.column("qid"), n_parts)
    # one stable sort by partition and one take, then slices (not a filter per partition)
    order = np.argsort(where, kind="stable")
    table = table.take(pa.array(order))
    bounds = np.searchsorted(where[order], np.arange(n_parts + 1))
    return [table.slice(int(bounds[j]), int(bounds[j + 1] - bounds[j])) for j in range(n_parts)]


def evaluate_partition(index, measure_names, conv: Conventions, cutoffs, name: str,
                       source: str, *pieces):
    """Task: evaluate one partition (its pieces from every part, in part order).

    Returns (query ids, first position of each, {measure: values}, diagnostics, names
    of every query of the partition).
    """
    import pyarrow.compute as pc

    pieces = [p for p in pieces if p.num_rows]
    if not pieces:
        return [], np.zeros(0, dtype=np.int64), {}, Diagnostics(), []
    table = pa.concat_tables(pieces)
    order = pc.sort_indices(table.column("pos"))  # parts arrive in order; kept safe
    table = table.take(order)
    ev = Evaluator(index, parse_measures(measure_names), conv, cutoffs)
    run = batch_run(table, name, source)
    prepared = ev.prepare(run)
    _, (codes, vocab) = prepared
    first = np.unique(codes, return_index=True)[1]  # codes are in order of first appearance
    first_pos = table.column("pos").to_numpy()[first]
    qids, columns, diag = ev.rows(run, prepared=prepared)
    # the evaluated queries are some of the partition's, in the same order
    at = pc.index_in(pa.array(qids, type=pa.string()), value_set=vocab).to_numpy(zero_copy_only=False)
    return qids, first_pos[at].astype(np.int64), columns, diag, vocab.to_pylist()


def evaluate_parts(qrels, run, specs, conv: Conventions, cutoffs, client, n_partitions=None):
    """Evaluate a run given in parts on the Dask cluster of ``client`` (see the module
    docstring). Returns an :class:`~metrics_core.ranking.evaluate.Evaluation`."""
    parts = [os.path.abspath(p) for p in list_parts(run)]
    name = run_name(run, parts)
    source = os.fspath(run) if not isinstance(run, (list, tuple)) else parts[0]
    index = QrelsIndex(qrels)
    ev = Evaluator(index, specs, conv, cutoffs)
    qrels_dups = ev.qrels_diagnostics()
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    n_parts = int(n_partitions or max(len(parts), n_workers))
    index_f = client.scatter(index, broadcast=True)
    splits = [client.submit(read_split, p, i, n_parts, pure=False) for i, p in enumerate(parts)]
    names = [s.name for s in specs]
    results = []
    for j in range(n_parts):
        pieces = [client.submit(operator.getitem, s, j, pure=False) for s in splits]
        results.append(client.submit(evaluate_partition, index_f, names, conv, tuple(cutoffs),
                                     name, source, *pieces, pure=False))
    del splits, pieces  # held by the tasks that need them only: freed as they finish
    gathered = client.gather(results)
    merged = MergedDiagnostics(tuple(cutoffs))
    ids, pos, cols, run_queries = [], [], {s.name: [] for s in specs}, set()
    for qids, qpos, columns, diag, qnames in gathered:
        merged.add(diag)
        run_queries.update(qnames)
        ids += qids
        pos.append(qpos)
        for k, v in columns.items():
            cols[k].append(v)
    if not run_queries:
        raise InputError(N_("the run parts hold no rows"), source=source)
    position = np.concatenate(pos) if pos else np.zeros(0, dtype=np.int64)
    columns = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}
    out = ev.finish(name, ids, position, columns, merged, run_queries, qrels_dups)
    out.distributed = {"parts": len(parts), "partitions": n_parts, "workers": n_workers}
    return out


def connect(address: str):
    """A Client for ``tcp://HOST:PORT`` (an existing scheduler) or ``local:N`` (a
    LocalCluster of N worker processes on 127.0.0.1). Returns (client, cluster or None)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError(N_("--scheduler needs Dask"), hint=N_("pip install 'ranklab[dask]' "
                                                              "(or: pip install 'dask[distributed]')")) from None
    if address.startswith("local:"):
        try:
            n = int(address.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(N_("bad scheduler address {address!r}"),
                             hint=N_("local:N needs a whole number of workers N >= 1, e.g. local:2"),
                             params={"address": address})
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=":0")
        return Client(cluster), cluster
    if "://" not in address:
        raise InputError(N_("bad scheduler address {address!r}"),
                         hint=N_("give tcp://HOST:PORT (a running dask scheduler) or local:N"),
                         params={"address": address})
    try:
        return Client(address, timeout="20s"), None
    except (OSError, TimeoutError) as exc:
        raise InputError(N_("cannot reach the Dask scheduler at {address} ({reason})"),
                         hint=N_("start one with: dask scheduler; then dask worker ADDRESS"),
                         params={"address": address, "reason": exc}) from None


def evaluate_on_scheduler(qrels, runs, specs, conv: Conventions, address: str) -> list:
    """Evaluate each run (a folder, glob or file of parts) on the cluster at ``address``."""
    client, cluster = connect(address)
    try:
        return [evaluate_parts(qrels, r, specs, conv, rank_cutoffs(specs), client) for r in runs]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


__all__ = ["list_parts", "evaluate_parts", "evaluate_on_scheduler", "connect"]
