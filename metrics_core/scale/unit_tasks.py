"""The tasks Dask workers run for :mod:`metrics_core.scale.distributed`.

* :func:`evaluate_unit` reads one unit of the run (:mod:`metrics_core.scale.units`: a byte
  range, row groups or a file) and evaluates it block by block, as the streaming path
  evaluates a file (blocks of whole queries, the next block read on a second thread), so
  a worker holds a few blocks, not its share of the run. It returns the per-query values
  with the position of each query's first row, the summed diagnostics, the names of the
  unit's queries, the queries found in two blocks, and the rows of the unit's first and
  last query (its *edges*: a query may go on in the next unit).
* :func:`split_unit` (only for queries found in several units, other than at their
  edges: a run not grouped by query) reads a unit again, keeps the rows of those
  queries, takes their share back from the diagnostics, and splits the rows by a hash of
  the query id; Dask moves the pieces to :func:`evaluate_group`.
* :func:`evaluate_group` evaluates whole queries gathered from several units (rows put
  back in the run's order by their position).

Every row carries a position ``unit << ROW_BITS | row in unit``: the run's order.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.errors import N_, InputError
from metrics_core.io.batches import NotStreamable, batch_run
from metrics_core.ranking.keys import DUPLICATE_HINTS
from metrics_core.ranking.ranked_lists import Diagnostics
from metrics_core.ranking.registry import parse_measures
from metrics_core.scale.parts import Evaluator, MergedDiagnostics, hash_partition
from metrics_core.scale.read_ahead import ReadAhead, query_blocks
from metrics_core.scale.units import Unit, unit_stream, unit_whole

#: Bits of the row number in a row's position.
ROW_BITS = 40


@dataclass(frozen=True)
class Setup:
    """What every task needs besides the qrels: measures (names), conventions, cutoffs,
    the run's name and the rows per block."""

    measures: tuple
    conv: Conventions
    cutoffs: tuple
    name: str
    block_rows: int

    def evaluator(self, index) -> Evaluator:
        """The engine over the qrels ``index`` (a QrelsIndex)."""
        return Evaluator(index, parse_measures(list(self.measures)), self.conv, self.cutoffs)


@dataclass
class UnitResult:
    """What :func:`evaluate_unit` returns (see the module docstring)."""

    unit: int
    ids: list
    pos: np.ndarray
    columns: dict
    diag: Diagnostics
    names: list
    reappear: set
    edges: dict = field(default_factory=dict)  # name -> (its rows, its diagnostics alone)
    counted: list = field(default_factory=list)  # per block: counted ties or duplicates
    rows: int = 0
    lines: int | None = None  # newlines in a byte range


_MALLOC_TUNED: list[bool] = []  # this process's answer, once it was worked out


def tune_malloc() -> bool:
    """Undo, once per worker process, the small ``MALLOC_TRIM_THRESHOLD_`` that a Dask
    nanny gives its workers (65,536 bytes by default): with it glibc maps and unmaps every
    array of more than 128 KiB and hands the memory back at once, so each block's arrays
    come as fresh pages from the kernel -- measured, twice the CPU time of the same
    evaluation (3.7 s instead of 1.9 s per 10 M lines). The thresholds are raised to
    glibc's own upper values (mmap above 32 MiB, trim above 64 MiB; never lowered).
    Returns whether they were changed. Nothing is done elsewhere than on Linux with
    glibc, nor where the variable is not set or already large.
    """
    if _MALLOC_TUNED:
        return _MALLOC_TUNED[0]
    changed = False
    try:
        value = int(os.environ.get("MALLOC_TRIM_THRESHOLD_", ""))
    except ValueError:
        value = None
    if value is not None and value < (32 << 20) and sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL("libc.so.6")
            m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
            changed = bool(libc.mallopt(m_mmap_threshold, 32 << 20)) and bool(
                libc.mallopt(m_trim_threshold, 64 << 20)
            )
        except (OSError, AttributeError):
            changed = False
    _MALLOC_TUNED.append(changed)
    return changed


class Failed:
    """An InputError raised in a task, returned as a value (so workers log nothing and
    the client raises the first one in the run's order with its file and line)."""

    def __init__(self, exc: InputError):
        self.problem = exc.templates["problem"] or exc.problem  # an InputError has a problem
        self.source, self.line, self.option, self.field = (
            exc.source,
            exc.line,
            exc.option,
            exc.field,
        )
        self.hint, self.plain_hint = exc.templates["hint"], exc.templates["plain_hint"]
        self.params = exc.params or None

    def error(self) -> InputError:
        """The InputError again."""
        return InputError(
            self.problem,
            source=self.source,
            line=self.line,
            hint=self.hint,
            option=self.option,
            field=self.field,
            plain_hint=self.plain_hint,
            params=self.params,
        )


class Reported:
    """A task that returns a :class:`Failed` in place of raising an InputError (pickled
    by reference to the task's function)."""

    def __init__(self, task):
        self.task = task

    def __call__(self, *args, **kwargs):
        tune_malloc()
        try:
            return self.task(*args, **kwargs)
        except InputError as exc:
            return Failed(exc)


def raise_failed(results) -> None:
    """Raise the first :class:`Failed` of ``results`` as its InputError."""
    for r in results:
        if isinstance(r, Failed):
            raise r.error()


def as_diagnostics(merged: MergedDiagnostics) -> Diagnostics:
    """The sums of ``merged`` as a Diagnostics (to add to another MergedDiagnostics)."""
    return Diagnostics(
        duplicates=merged.duplicates,
        tied_groups=merged.tied_groups,
        tied_documents=merged.tied_documents,
        ties_straddling=dict(merged.straddling),
    )


def first_rows(codes: np.ndarray) -> np.ndarray:
    """Row of the first appearance of each code, for codes numbered in order of first
    appearance (0, 1, 2 ...).

    >>> first_rows(np.array([0, 0, 1, 0, 2, 1]))
    array([0, 2, 4])
    """
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    top = np.maximum.accumulate(codes)
    return np.flatnonzero(np.r_[True, top[1:] > top[:-1]])


def over_unit(unit: Unit, setup: Setup, offset: int, body):
    """``body(stream)`` over the unit read in batches; where the streaming readers give up,
    again over the unit read whole."""
    try:
        return body(unit_stream(unit, setup.name, offset))
    except NotStreamable:
        return body(unit_whole(unit, setup.name, offset))


def evaluate_unit(unit: Unit, index, setup: Setup) -> UnitResult:
    """Task: evaluate one unit (see the module docstring).

    Parameters
    ----------
    unit : Unit
        What to read (a byte range, row groups or a file).
    index : QrelsIndex
        The judgements (scattered once to every worker).
    setup : Setup
        Measures, conventions, cutoffs, run name, rows per block.

    Returns
    -------
    UnitResult

    Raises
    ------
    InputError
        Bad data, naming the file and the line in the file: an error in a byte range
        whose place in the file is not known yet is raised again after counting the
        file's lines before the range.
    """
    ev = setup.evaluator(index)
    offset = unit.line_offset or 0
    try:
        return over_unit(unit, setup, offset, lambda stream: _unit_pass(ev, unit, setup, stream))
    except InputError:
        if unit.line_offset is not None:
            raise
        offset = unit.lines_before()
    return over_unit(unit, setup, offset, lambda stream: _unit_pass(ev, unit, setup, stream))


def _unit_pass(ev: Evaluator, unit: Unit, setup: Setup, stream) -> UnitResult:
    base = np.int64(unit.index) << np.int64(ROW_BITS)

    def prepared_blocks():  # on the read-ahead thread
        for table in query_blocks(stream.batches(), setup.block_rows):
            run = batch_run(table, setup.name, unit.path)
            yield table, run, ev.prepare(run)

    merged = MergedDiagnostics(ev.cutoffs)
    out = UnitResult(unit.index, [], np.zeros(0, dtype=np.int64), {}, Diagnostics(), [], set())
    pos: list[np.ndarray] = []  # per block: the first row of each of its queries
    cols: dict[str, list[np.ndarray]] = {s.name: [] for s in ev.specs}
    seen: set = set()
    at = 0
    last = None
    with ReadAhead(prepared_blocks()) as blocks:
        for table, run, prepared in blocks:
            _, (codes, vocab) = prepared
            names = vocab.to_pylist()
            again = seen.intersection(names)
            if again:
                out.reappear |= again
            seen.update(names)
            out.names += [q for q in names if q not in again]
            qids, columns, diag = ev.rows(run, prepared=prepared)
            merged.add(diag)
            out.counted.append(bool(diag.tied_groups or diag.duplicates))
            if qids:
                where = pc.index_in(pa.array(qids, type=pa.string()), value_set=vocab).to_numpy(
                    zero_copy_only=False
                )
                pos.append(base + at + first_rows(codes)[where])
            out.ids += qids
            for k, v in columns.items():
                cols[k].append(v)
            if at == 0:
                _add_edge(out, ev, setup, table, codes, 0, names[0], base, at)
            last = (table, codes, names, at, len(out.counted) - 1)
            at += table.num_rows
    if last is not None:
        table, codes, names, start, block = last
        tail = names[int(codes[-1])]
        if tail not in out.edges:
            _add_edge(out, ev, setup, table, codes, int(codes[-1]), tail, base, start, block)
    if pos:
        out.pos = np.concatenate(pos)
    out.columns = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}
    out.diag = as_diagnostics(merged)
    out.rows = at
    out.lines = stream.lines
    return out


def _add_edge(
    out: UnitResult,
    ev: Evaluator,
    setup: Setup,
    table,
    codes,
    code: int,
    name: str,
    base,
    start: int,
    block: int = 0,
) -> None:
    """Keep the rows of query ``name`` in this block (and their diagnostics alone)."""
    rows = np.flatnonzero(codes == code)
    sel = with_pos(table.take(pa.array(rows)), base + start + rows)
    diag = Diagnostics()
    if out.counted[block]:
        diag = ev.rows(batch_run(sel, setup.name, ""))[2]
    out.edges[name] = (sel, diag)


def with_pos(table: pa.Table, pos: np.ndarray) -> pa.Table:
    """``table`` with its rows' positions as a column ``pos``."""
    return table.append_column("pos", pa.array(np.asarray(pos, dtype=np.int64)))


def split_unit(unit: Unit, index, setup: Setup, offset: int, names, counted, n_parts: int):
    """Task: the rows of queries ``names`` in ``unit`` in ``n_parts`` pieces by query hash.

    The unit is read as :func:`evaluate_unit` read it (the same blocks); the share of
    these queries in each block's diagnostics is computed again (where the block counted
    any) to be taken back. Returns (that share, piece 0, piece 1, ...).
    """
    tune_malloc()
    ev = setup.evaluator(index)
    value_set = pa.array(sorted(names), type=pa.string())
    base = np.int64(unit.index) << np.int64(ROW_BITS)

    def body(stream) -> tuple:
        share = MergedDiagnostics(ev.cutoffs)
        pieces: list[list] = [[] for _ in range(n_parts)]
        at = 0
        for b, table in enumerate(query_blocks(stream.batches(), setup.block_rows)):
            rows = np.flatnonzero(
                pc.is_in(table.column("qid"), value_set=value_set).to_numpy(zero_copy_only=False)
            )
            if len(rows):
                sel = with_pos(table.take(pa.array(rows)), base + at + rows)
                if b < len(counted) and counted[b]:
                    share.add(ev.rows(batch_run(sel, setup.name, unit.path))[2])
                for j, piece in enumerate(by_hash(sel, n_parts)):
                    if piece.num_rows:
                        pieces[j].append(piece)
            at += table.num_rows
        return (as_diagnostics(share), *(pa.concat_tables(p) if p else None for p in pieces))

    return over_unit(unit, setup, offset, body)


def by_hash(table: pa.Table, n_parts: int) -> list[pa.Table]:
    """``table``'s rows in ``n_parts`` pieces by a hash of the query id (order kept)."""
    if n_parts == 1 or not table.num_rows:
        return [table] + [table.slice(0, 0)] * (n_parts - 1)
    where = hash_partition(table.column("qid"), n_parts)
    order = np.argsort(where, kind="stable")
    table = table.take(pa.array(order))
    bounds = np.searchsorted(where[order], np.arange(n_parts + 1))
    return [table.slice(int(bounds[j]), int(bounds[j + 1] - bounds[j])) for j in range(n_parts)]


def evaluate_group(index, setup: Setup, paths, *pieces):
    """Task: evaluate whole queries whose rows come in ``pieces`` (from any units).

    ``paths``: the file of each unit (to name them in an error). Returns (query ids,
    position of each one's first row, {measure: values}, diagnostics).
    """
    tables = [p for p in pieces if p is not None and p.num_rows]
    if not tables:
        return [], np.zeros(0, dtype=np.int64), {}, Diagnostics()
    table = pa.concat_tables(tables)
    table = table.take(pc.sort_indices(table.column("pos")))
    pos = table.column("pos").to_numpy()
    files = sorted({paths[int(u)] for u in np.unique(pos >> ROW_BITS)})
    ev = setup.evaluator(index)
    run = batch_run(table, setup.name, files[0] if len(files) == 1 else ", ".join(files))
    try:
        prepared = ev.prepare(run)
        qids, columns, diag = ev.rows(run, prepared=prepared)
    except InputError:
        if len(files) > 1 and setup.conv.duplicates == "error":
            duplicate_across_files(table, paths)
        raise
    _, (codes, vocab) = prepared
    where = pc.index_in(pa.array(qids, type=pa.string()), value_set=vocab).to_numpy(
        zero_copy_only=False
    )
    return qids, pos[first_rows(codes)[where]].astype(np.int64), columns, diag


def duplicate_across_files(table: pa.Table, paths) -> None:
    """Raise the InputError for the first duplicate (query, document) of ``table`` (rows
    in the run's order, from several files), naming each row's file and line."""
    q = pc.dictionary_encode(table.column("qid")).combine_chunks()
    d = pc.dictionary_encode(table.column("docid")).combine_chunks()
    key = q.indices.to_numpy(zero_copy_only=False).astype(np.int64) * len(
        d.dictionary
    ) + d.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    if not len(same):
        return
    firsts = order[same]  # the earlier row of each duplicate pair, by the later row
    later = order[same + 1]
    i = int(np.argmin(later))
    a, b = int(firsts[i]), int(later[i])
    pos = table.column("pos").to_numpy()
    lines = table.column("line").to_numpy()
    where = [(paths[int(pos[r] >> ROW_BITS)], int(lines[r])) for r in (a, b)]
    raise InputError(
        N_(
            "duplicate document in the run for query {query!r}, document {doc!r} ({first_file}, line "
            "{first} and {second_file}, line {second}; {n} duplicate row(s) in all)"
        ),
        hint=DUPLICATE_HINTS["count, first, last or max"],
        params={
            "query": table.column("qid")[a].as_py(),
            "doc": table.column("docid")[a].as_py(),
            "first_file": where[0][0],
            "first": where[0][1],
            "second_file": where[1][0],
            "second": where[1][1],
            "n": len(same),
        },
    )


__all__ = [
    "ROW_BITS",
    "Setup",
    "tune_malloc",
    "Failed",
    "Reported",
    "raise_failed",
    "UnitResult",
    "evaluate_unit",
    "split_unit",
    "evaluate_group",
    "by_hash",
    "first_rows",
    "with_pos",
    "as_diagnostics",
    "duplicate_across_files",
]
