"""Units of a run given in files: the pieces that Dask workers read on their own.

A run given as files (a folder, a glob, a list, or one file) is cut into *units*, each
read and evaluated by one task (:mod:`metrics_core.scale.distributed`); the client
sends a unit's description (a path, a byte range, row-group numbers), never its rows:

* a plain TREC run file larger than ``unit_bytes`` is cut into byte ranges. Each cut is
  moved to the next line whose query id differs from the line before it
  (:func:`query_boundary`), so a run grouped by query (the usual case) never has a
  query in two ranges of one file; when no change is found within a few MiB, the cut
  is a plain line start and the query straddles two units (the evaluation puts its
  rows back together);
* a Parquet file with several row groups is cut into runs of whole row groups of about
  ``unit_bytes / 40`` rows;
* any other file (CSV/TSV, MS MARCO, JSON, compressed, or small) is one unit, read by
  the batch reader :func:`metrics_core.io.open_run_stream` (CSV in chunks).

Which of these a file is, is :func:`metrics_core.io.formats.input_format`'s answer, the
readers' one dispatch. :func:`unit_stream` reads a unit in batches of
:data:`metrics_core.io.batches.SCHEMA` rows with the batch reader, and so the same
values and the same checks as the file read whole; :func:`unit_whole` reads it whole (the fallback where the streaming readers
give up: the whole-file reader names the bad line). A byte range is read by the readers
as text of its own, so its lines count from 1; ``line_offset`` (the lines of the file
before the range) makes them the file's line numbers, and an error is re-raised naming
the file and the line in the file. The first range of a file, a Parquet unit and a
whole file know their offset in advance; a later range's is the sum of the lines of the
ranges before it (:attr:`UnitStream.lines`), known once they are read, or counted
(:meth:`Unit.lines_before`, only when an error must name its line).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pyarrow as pa

from metrics_core.errors import InputError
from metrics_core.io import BATCH_ROWS, open_run_stream, read_run, run_stream
from metrics_core.io.formats import input_format
from metrics_core.io.source import RawData, compression_of

#: Bytes of a TREC file per unit at most (about 0.8 M lines of a typical run): a worker
#: holds the range's bytes and three blocks of rows while it evaluates it. Below glibc's
#: largest mmap threshold (32 MiB), so one unit's bytes reuse the heap memory of the one
#: before instead of fresh pages: on the 10 M-line file 1.36 s of CPU in 30 MiB units
#: against 1.5-1.7 s in 64 MiB units (one process streaming the file: 1.22 s).
DEFAULT_UNIT_BYTES = 30 << 20
#: Bytes of a TREC line, roughly, to size Parquet units in rows.
BYTES_PER_ROW = 40
#: How far past a cut :func:`query_boundary` looks for a change of query.
BOUNDARY_LIMIT = 4 << 20


@dataclass(frozen=True)
class Unit:
    """One piece of a run for one task.

    Attributes
    ----------
    index : int
        The unit's place in the run (units are in the run's order).
    path : str
        The file.
    kind : {"trec", "parquet", "file"}
        A byte range ``[start, end)`` of a TREC file, row groups of a Parquet file, or
        the whole file.
    line_offset : int or None
        Lines (rows for Parquet) of the file before the unit; None for a byte range
        after the first (not known before the ranges before it are read).
    """

    index: int
    path: str
    kind: str
    start: int = 0
    end: int = 0
    row_groups: tuple = ()
    line_offset: int | None = 0

    def lines_before(self, chunk: int = 1 << 23) -> int:
        """Lines of the file before the unit (newlines counted in ``[0, start)``)."""
        if self.line_offset is not None:
            return self.line_offset
        count, left = 0, self.start
        buf = bytearray(chunk)
        with open(self.path, "rb", buffering=0) as fh:
            while left > 0:
                n = fh.readinto(memoryview(buf)[: min(chunk, left)])
                if not n:
                    break
                count += buf.count(b"\n", 0, n)
                left -= n
        return count


def query_boundary(
    path: str, target: int, size: int | None = None, limit: int = BOUNDARY_LIMIT
) -> int:
    """The start of the first line after byte ``target`` whose query id (first field)
    differs from the line before it; a plain line start when none is found within
    ``limit`` bytes; the file's size when no line starts after ``target``.

    Blank and ``#`` comment lines are skipped over (never a change), and a line that
    starts with a UTF-8 byte-order mark is never a range's first line.
    """
    size = os.path.getsize(path) if size is None else size
    if target <= 0:
        return 0
    window = 1 << 16
    while True:
        with open(path, "rb") as fh:
            fh.seek(target - 1)
            buf = fh.read(min(window, size - target + 1))
        at_end = target - 1 + len(buf) >= size
        nl = buf.find(b"\n")
        if nl < 0:
            if at_end or window >= limit:
                return size
            window *= 4
            continue
        first = nl + 1
        prev = None
        at = first
        while at < len(buf):
            end = buf.find(b"\n", at)
            if end < 0 and not at_end:
                break  # an incomplete line: read more
            line = buf[at:] if end < 0 else buf[at:end]
            fields = line.split(None, 1)
            if fields and not line.startswith(b"#"):
                # (never at a byte-order mark: a range's reader would drop it, the file's keeps it)
                if prev is not None and fields[0] != prev and not line.startswith(b"\xef\xbb\xbf"):
                    return target - 1 + at
                prev = fields[0]
            if end < 0:
                break
            at = end + 1
        if at_end:
            return size
        if window >= limit:
            return min(target - 1 + first, size)
        window *= 4


def _split_trec(path: str, index: int, size: int, unit_bytes: int) -> list[Unit]:
    k = -(-size // unit_bytes)
    cuts = [0]
    for i in range(1, k):
        cut = query_boundary(path, size * i // k, size)
        if cuts[-1] < cut < size:
            cuts.append(cut)
    cuts.append(size)
    return [
        Unit(index + j, path, "trec", cuts[j], cuts[j + 1], line_offset=0 if j == 0 else None)
        for j in range(len(cuts) - 1)
    ]


def _split_parquet(path: str, index: int, unit_rows: int) -> list[Unit]:
    import pyarrow.parquet as pq

    from metrics_core.io.parquet import check_parquet_metadata

    try:
        meta = pq.ParquetFile(path).metadata
    except (pa.ArrowException, OSError):
        return [Unit(index, path, "file")]  # the reader names the problem
    check_parquet_metadata(
        meta, os.path.getsize(path), path, whole=False
    )  # a forged footer: refused here
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    units: list[Unit] = []
    members: list[int] = []
    rows = before = 0
    for g, n in enumerate(groups):
        members.append(g)
        rows += n
        if rows >= unit_rows or g == len(groups) - 1:
            units.append(
                Unit(
                    index + len(units),
                    path,
                    "parquet",
                    row_groups=tuple(members),
                    line_offset=before,
                )
            )
            before += rows
            members, rows = [], 0
    return units if len(units) > 1 else [Unit(index, path, "file")]


def plan_units(paths, unit_bytes: int = DEFAULT_UNIT_BYTES) -> list[Unit]:
    """The units of a run given as ``paths`` (in the run's order), in the run's order.

    Parameters
    ----------
    paths : list of str
        The run's files, in the run's order.
    unit_bytes : int
        Bytes per unit of a TREC file at most (a Parquet unit holds about
        ``unit_bytes / 40`` rows of whole row groups).

    Returns
    -------
    list of Unit
        Byte ranges of plain TREC files larger than ``unit_bytes`` (cut by
        :func:`query_boundary`), runs of row groups of Parquet files, and whole files
        (CSV/TSV, MS MARCO, JSON, compressed or small files). Only the files' first bytes
        and a few windows around each cut are read.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "r.run")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("".join(f"q{i // 3} Q0 d{i} {i % 3 + 1} {9 - i % 3} t\\n" for i in range(12)))
    >>> [(u.start, u.end) for u in plan_units([path], unit_bytes=50)]  # cuts where a query starts
    [(0, 90), (90, 135), (135, 182)]
    """
    units: list[Unit] = []
    for path in paths:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            magic = fh.read(16)
        fmt = None  # a compressed file is one unit: its format is the reader's to find
        if compression_of(magic) is None:
            fmt = input_format(RawData(None, path, path=path), "run")
        if fmt == "parquet":
            units += _split_parquet(path, len(units), max(unit_bytes // BYTES_PER_ROW, 1))
        elif fmt == "trec" and size > unit_bytes:
            units += _split_trec(path, len(units), size, unit_bytes)
        else:
            units.append(Unit(len(units), path, "file"))
    return units


class UnitStream:
    """A unit opened for reading: :meth:`batches` (the rows in order, lines of the file)
    and, for a byte range, :attr:`lines` (the newlines in it)."""

    def __init__(self, batches, lines: int | None = None):
        self._batches = batches
        self.lines = lines

    def batches(self):
        """Tables of :data:`~metrics_core.io.batches.SCHEMA` rows, in order."""
        return self._batches()


def relocated(exc: InputError, unit: Unit, offset: int) -> InputError:
    """``exc`` raised by a reader on a byte range, naming the file and its line in the file."""
    if exc.source not in (None, "<bytes>"):
        return exc
    return exc.replace(source=unit.path, line=exc.line + offset if exc.line is not None else None)


def _range_bytes(unit: Unit) -> bytes:
    with open(unit.path, "rb") as fh:
        fh.seek(unit.start)
        return fh.read(unit.end - unit.start)


def _shifted(batches, offset: int, unit: Unit):
    """Batches with ``offset`` added to their lines; reader errors relocated."""
    try:
        for table in batches:
            if offset:
                lines = pa.array(table.column("line").to_numpy() + offset)
                table = table.set_column(3, "line", lines)
            yield table
    except InputError as exc:
        raise relocated(exc, unit, offset) from None


def unit_stream(
    unit: Unit, name: str, line_offset: int = 0, batch_rows: int = BATCH_ROWS
) -> UnitStream:
    """Open ``unit`` for reading in batches with the streaming readers.

    Parameters
    ----------
    unit : Unit
    name : str
        The run's name.
    line_offset : int
        Lines of the file before a byte range (added to its lines; errors relocated).
    batch_rows : int
        Rows per batch.

    Raises
    ------
    NotStreamable
        Here or from the batches, where the streaming readers give up: read the unit
        with :func:`unit_whole` then.
    InputError
        For bad data, naming the file and the line in the file.
    """
    if unit.kind == "parquet":
        stream = open_run_stream(
            unit.path,
            name=name,
            fmt="parquet",
            batch_rows=batch_rows,
            row_groups=unit.row_groups,
            first_row=unit.line_offset or 0,
        )
        return UnitStream(stream.batches)
    if unit.kind == "file":
        stream = open_run_stream(unit.path, name=name, batch_rows=batch_rows)
        return UnitStream(stream.batches)
    data = _range_bytes(unit)
    try:
        stream = open_run_stream(data, name=name, fmt="trec", batch_rows=batch_rows)
    except InputError as exc:
        raise relocated(exc, unit, line_offset) from None
    return UnitStream(lambda: _shifted(stream.batches(), line_offset, unit), data.count(b"\n"))


def unit_whole(
    unit: Unit, name: str, line_offset: int = 0, batch_rows: int = BATCH_ROWS
) -> UnitStream:
    """Read ``unit`` whole with the whole-file reader (which names any bad line), then
    hand it out in batches."""
    if unit.kind == "parquet":
        return unit_stream(unit, name, line_offset, batch_rows)
    if unit.kind == "file":
        run = read_run(unit.path, name=name)
        return UnitStream(run_stream(run, batch_rows).batches)
    data = _range_bytes(unit)
    try:
        run = read_run(data, name=name, fmt="trec")
    except InputError as exc:
        raise relocated(exc, unit, line_offset) from None
    lines = data.count(b"\n")
    del data
    return UnitStream(
        lambda: _shifted(run_stream(run, batch_rows).batches(), line_offset, unit), lines
    )


__all__ = [
    "DEFAULT_UNIT_BYTES",
    "Unit",
    "UnitStream",
    "plan_units",
    "query_boundary",
    "unit_stream",
    "unit_whole",
    "relocated",
]
