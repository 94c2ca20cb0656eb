"""Evaluation on a Dask cluster (``dask.distributed``): a run in files, read by the workers.

A run given as files (a folder, a glob or a list of TREC, CSV/TSV or Parquet files that
together make one run, in the order of their sorted names, or one file; a query may
straddle files) is cut into units (:mod:`metrics_core.scale.units`: byte ranges of TREC
files cut where the query changes, runs of Parquet row groups, whole files). The client
sends each unit's description, never its rows, and the qrels once to every worker:

1. each unit is read and evaluated by a worker, block by block as the streaming path
   evaluates a file (:func:`~metrics_core.scale.unit_tasks.evaluate_unit`), so a
   worker's memory is bounded by its blocks whatever the run's size;
2. a query found in more than one unit is put together: when it is only at the units'
   edges (the last query of one unit going on as the first of the next: the usual case
   of a run grouped by query, cut into files anywhere) from the edge rows the units
   returned, evaluated here; otherwise (a run not grouped by query) the units holding
   it are read again and its rows shuffled by a hash of the query id -- Dask moves the
   pieces between workers -- to tasks that evaluate whole queries
   (:func:`~metrics_core.scale.unit_tasks.split_unit`,
   :func:`~metrics_core.scale.unit_tasks.evaluate_group`). The first values and the
   diagnostics of such a query are dropped and taken back;
3. the per-query values and diagnostics are put together by the code of the streaming
   path (:class:`metrics_core.scale.parts.Evaluator`): queries in order of first
   appearance in the run, the aggregates by the same function over the same values in
   the same order -- the same numbers as one process.

Every diagnostic is a sum over queries, so the units' add up to the run's. The workers
must be able to import ``metrics_core`` and read the files (a shared file system, or one
machine).
"""

from __future__ import annotations

import glob
import operator
import os
import uuid
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.errors import N_, InputError
from metrics_core.scale.parts import Evaluator, MergedDiagnostics, QrelsIndex
from metrics_core.scale.streaming import DEFAULT_BLOCK_ROWS
from metrics_core.scale.unit_tasks import (
    Reported,
    Setup,
    by_hash,
    evaluate_group,
    evaluate_unit,
    raise_failed,
    split_unit,
)
from metrics_core.scale.units import DEFAULT_UNIT_BYTES, plan_units

#: Units per worker at least (when the files are big enough): work to balance.
UNITS_PER_WORKER = 2
#: Smallest byte range worth a task of its own.
MIN_UNIT_BYTES = 8 << 20


def list_parts(spec) -> list[str]:
    """The files of a run given in parts: a folder (its files, sorted by name, hidden ones
    left out), a glob pattern (matches sorted), a list of paths, or one file."""
    if isinstance(spec, (list, tuple)):
        parts = [os.fspath(p) for p in spec]
    else:
        spec = os.fspath(spec)
        if os.path.isdir(spec):
            parts = sorted(
                os.path.join(spec, f)
                for f in os.listdir(spec)
                if not f.startswith(".") and os.path.isfile(os.path.join(spec, f))
            )
        elif any(c in spec for c in "*?["):
            parts = sorted(p for p in glob.glob(spec) if os.path.isfile(p))
        else:
            parts = [spec]
    if not parts:
        raise InputError(
            N_("no run parts found"),
            source=str(spec),
            hint=N_("Give a folder of run files, a glob such as 'parts/*.run', or files"),
        )
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


def unit_size(paths, n_workers: int) -> int:
    """Bytes per unit: at most :data:`~metrics_core.scale.units.DEFAULT_UNIT_BYTES`, and small
    enough for :data:`UNITS_PER_WORKER` units per worker (not below 8 MiB)."""
    total = sum(os.path.getsize(p) for p in paths)
    share = total // max(UNITS_PER_WORKER * n_workers, 1)
    return int(min(DEFAULT_UNIT_BYTES, max(MIN_UNIT_BYTES, share)))


def evaluate_parts(
    qrels,
    run,
    specs,
    conv: Conventions,
    cutoffs,
    client,
    n_partitions=None,
    block_rows=None,
    unit_bytes=None,
):
    """Evaluate a run given in files on the Dask cluster of ``client`` (see the module
    docstring).

    Parameters
    ----------
    qrels : Qrels
    run : path, glob, folder or list of paths
        The run's files, in the run's order (a folder's or a glob's sorted by name).
    specs, conv, cutoffs
        Measures (parsed), conventions and the cutoffs whose straddling ties are counted.
    client : distributed.Client
    n_partitions : int, optional
        Partitions of the shuffle (default from the rows to shuffle).
    block_rows : int, optional
        Rows per block inside a unit (default the streaming path's).
    unit_bytes : int, optional
        Bytes per TREC unit at most (default :func:`unit_size`).

    Returns
    -------
    Evaluation
        The same per-query values, aggregates and diagnostics as one process, with a
        ``distributed`` attribute: files (``parts``), units, workers, queries put
        together from the units' edges, queries shuffled, partitions of the shuffle.
    """
    paths = [os.path.abspath(p) for p in list_parts(run)]
    name = run_name(run, paths)
    source = os.fspath(run) if not isinstance(run, (list, tuple)) else paths[0]
    index = QrelsIndex(qrels)
    ev = Evaluator(index, specs, conv, cutoffs)
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    units = plan_units(paths, int(unit_bytes or unit_size(paths, n_workers)))
    setup = Setup(
        tuple(s.name for s in specs),
        conv,
        tuple(cutoffs),
        name,
        int(block_rows or DEFAULT_BLOCK_ROWS),
    )
    index_f = client.scatter(
        index, broadcast=True, hash=False
    )  # a key of its own: never one being released
    token = uuid.uuid4().hex
    task = Reported(evaluate_unit)
    futures = [
        client.submit(task, u, index_f, setup, key=f"evaluate_unit-{u.index}-{token}")
        for u in units
    ]
    qrels_dups = ev.qrels_diagnostics()  # while the workers read
    results = client.gather(futures)
    del futures
    raise_failed(results)  # the first error in the run's order
    offsets = line_offsets(units, results)
    run_queries = set()
    count: Counter = Counter()
    for r in results:
        run_queries.update(r.names)
        count.update(r.names)
    if not run_queries:
        raise InputError(N_("the run parts hold no rows"), source=source)
    again = {q for q, c in count.items() if c > 1}
    for r in results:
        again |= r.reappear
    again &= index.judged  # the others have no values and count in no diagnostic
    merged = MergedDiagnostics(tuple(cutoffs))
    ids: list[str] = []
    pos: list[np.ndarray] = []
    cols: dict[str, list[np.ndarray]] = {s.name: [] for s in specs}
    for r in results:
        merged.add(r.diag)
        keep = _keep(r.ids, again)
        ids += [q for q, k in zip(r.ids, keep, strict=True) if k] if again else r.ids
        pos.append(r.pos[keep])
        for k, v in r.columns.items():
            cols[k].append(v[keep])
    info = {
        "files": len(paths),
        "units": len(units),
        "workers": n_workers,
        "edge_queries": 0,
        "shuffled_queries": 0,
        "partitions": 0,
    }
    if again:
        groups = _put_together(
            client,
            index,
            index_f,
            setup,
            units,
            results,
            offsets,
            again,
            merged,
            n_partitions,
            n_workers,
            info,
        )
        for qids, qpos, columns, diag in groups:
            merged.add(diag)
            ids += qids
            pos.append(qpos)
            for k, v in columns.items():
                cols[k].append(v)
    position = np.concatenate(pos) if pos else np.zeros(0, dtype=np.int64)
    columns = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}
    out = ev.finish(name, ids, position, columns, merged, run_queries, qrels_dups)
    return out.replace(distributed={"parts": len(paths), **info})


def _keep(ids, again) -> np.ndarray:
    if not again or not ids:
        return np.ones(len(ids), dtype=bool)
    value_set = pa.array(sorted(again), type=pa.string())
    return ~pc.is_in(pa.array(ids, type=pa.string()), value_set=value_set).to_numpy(
        zero_copy_only=False
    )


def line_offsets(units, results) -> list[int]:
    """Lines of each unit's file before the unit: known, or the sum of the lines of the
    file's byte ranges before it."""
    out, running = [], 0
    for u, r in zip(units, results, strict=True):
        if u.line_offset is not None:
            running = u.line_offset
        out.append(running)
        running += r.lines or 0
    return out


def _shifted_lines(table: pa.Table, offset: int) -> pa.Table:
    if not offset:
        return table
    return table.set_column(3, "line", pa.array(table.column("line").to_numpy() + offset))


def _put_together(
    client,
    index,
    index_f,
    setup,
    units,
    results,
    offsets,
    again,
    merged,
    n_partitions,
    n_workers,
    info,
):
    """Values and diagnostics of the queries in ``again`` (found in several units, or in
    two blocks of one), their first share taken back from ``merged``."""
    paths = [u.path for u in units]
    edges, redo = [], []
    for u, r in zip(units, results, strict=True):
        mine = again.intersection(r.names)
        if not mine:
            continue
        at_edges = set(r.edges) - r.reappear
        if mine <= at_edges:
            for q in mine:
                table, diag = r.edges[q]
                merged.add(diag, sign=-1)
                edges.append(
                    _shifted_lines(table, offsets[u.index] if u.line_offset is None else 0)
                )
        else:
            redo.append((u, r, mine))
    if not redo:
        info["edge_queries"] = len(again)
        return [evaluate_group(index, setup, paths, *edges)]
    rows = sum(r.rows * len(mine) // max(len(r.names), 1) for _, r, mine in redo)
    n_parts = int(
        n_partitions or max(n_workers, min(256, len(again), -(-rows // setup.block_rows)))
    )
    info.update(shuffled_queries=len(again), partitions=n_parts)
    splits = [
        client.submit(
            split_unit,
            u,
            index_f,
            setup,
            offsets[u.index],
            sorted(mine),
            r.counted,
            n_parts,
            pure=False,
        )
        for u, r, mine in redo
    ]
    shares = [client.submit(operator.getitem, s, 0, pure=False) for s in splits]
    edge_pieces = by_hash(pa.concat_tables(edges), n_parts) if edges else [None] * n_parts
    groups = []
    for j in range(n_parts):
        pieces = [client.submit(operator.getitem, s, 1 + j, pure=False) for s in splits]
        groups.append(
            client.submit(
                Reported(evaluate_group), index_f, setup, paths, edge_pieces[j], *pieces, pure=False
            )
        )
    del splits, pieces
    for diag in client.gather(shares):
        merged.add(diag, sign=-1)
    groups = client.gather(groups)
    raise_failed(groups)
    return groups


def connect(address: str):
    """A Client for ``tcp://HOST:PORT`` (an existing scheduler) or ``local:N`` (a
    LocalCluster of N worker processes on 127.0.0.1). Returns (client, cluster or None)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError(
            N_("scheduler= needs Dask"),
            hint=N_("pip install 'ranklab[dask]' (or: pip install 'dask[distributed]')"),
        ) from None
    if address.startswith("local:"):
        try:
            n = int(address.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(
                N_("bad scheduler address {address!r}"),
                hint=N_("local:N needs a whole number of workers N >= 1, e.g. local:2"),
                params={"address": address},
            )
        import dask

        # glibc's own malloc thresholds in the workers (see unit_tasks.tune_malloc)
        environ = {
            k: v
            for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()
            if k != "MALLOC_TRIM_THRESHOLD_"
        }
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=":0",
            )
        return Client(cluster), cluster
    if "://" not in address:
        raise InputError(
            N_("bad scheduler address {address!r}"),
            hint=N_("give tcp://HOST:PORT (a running dask scheduler) or local:N"),
            params={"address": address},
        )
    try:
        return Client(address, timeout="20s"), None
    except (OSError, TimeoutError) as exc:
        raise InputError(
            N_("cannot reach the Dask scheduler at {address} ({reason})"),
            hint=N_("start one with: dask scheduler; then dask worker ADDRESS"),
            params={"address": address, "reason": exc},
        ) from None


__all__ = ["list_parts", "evaluate_parts", "connect"]
