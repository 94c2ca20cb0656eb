"""Runs read in batches of rows, for evaluation in bounded memory.

:func:`iter_run_batches` yields a run file as consecutive batches of rows, each an Arrow
table with the columns ``qid`` (string), ``docid`` (string), ``score`` (float64) and
``line`` (int64, the 1-based source line of the row, or its 1-based row number where a
format has no lines). The batches come from

* TREC files: pieces of whole lines read into one reused buffer, each checked for bytes
  the fast path cannot split (NUL, other separators) and parsed by Arrow's CSV reader (the
  same options as the whole-file fast path of :mod:`metrics_core.io.trec`), whose blocks
  Arrow's threads parse in parallel;
* Parquet files: one batch per slice of a row group (``ParquetFile.iter_batches``);
* CSV/TSV tables: pandas' chunked reader, each chunk converted by the same code as the
  whole-file table reader (same column detection, same id and value rules).

Every value equals what :func:`metrics_core.io.read_run` gives for the same row. A source
that cannot be read in batches -- a JSON file, a DataFrame, a mapping, a Run, or a TREC
file that is not regular (comment or blank lines, mixed separators, a bad value: the
whole-file reader names the line) -- raises :class:`NotStreamable`, and the caller reads
it whole.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from metrics_core.data import Run, as_string_array
from metrics_core.errors import N_, InputError
from metrics_core.io.formats import is_msmarco_run, is_trec, table_format
from metrics_core.io.source import PARQUET_MAGIC, RawData, check_text, read_source
from metrics_core.io.trec import (
    any_empty,
    arrow_csv_options,
    columns_of,
    comment_or_blank,
    data_fields,
    quoted_line,
    regular_delimiter_of,
    unexpected_bytes,
)
from metrics_core.validation import parse_number

#: Rows per batch handed out by the readers (the evaluator groups batches into blocks).
BATCH_ROWS = 1 << 18
#: Bytes per block of Arrow's CSV reader: the blocks of a piece are parsed on Arrow's
#: threads, in parallel.
CSV_BLOCK_BYTES = 1 << 20
#: Bytes of a TREC run read, checked and parsed at a time (a buffer reused from piece to
#: piece). On the 10 M-line benchmark, 4 MiB pieces: 0.87-0.95 s of CPU to hand out every
#: batch, 30,000 page faults, 170 MB resident; 16 MiB pieces the same CPU, 57,000 faults, 265 MB.
PIECE_BYTES = 1 << 22

SCHEMA = pa.schema(
    [("qid", pa.string()), ("docid", pa.string()), ("score", pa.float64()), ("line", pa.int64())]
)


class NotStreamable(Exception):
    """The source cannot be read in batches; read it whole (the message says why)."""


@dataclass
class RunStream:
    """A run source opened for reading in batches.

    Attributes
    ----------
    name : str
        The run's name (what :func:`~metrics_core.io.read_run` would give it).
    source : str
        The source's name, for messages.
    """

    name: str
    source: str
    _open: Callable[[], Iterator[pa.Table]]
    run: object = None  # the Run, when the stream reads one already in memory

    def batches(self) -> Iterator[pa.Table]:
        """The rows in source order (each call reads the source again from the start)."""
        return self._open()


def open_run_stream(
    source,
    name: str | None = None,
    fmt: str = "auto",
    columns: dict | None = None,
    batch_rows: int = BATCH_ROWS,
) -> RunStream:
    """Open ``source`` (a path, bytes or file-like object) for reading in batches.

    Raises
    ------
    NotStreamable
        When the source is not a file or bytes, or its format cannot be read in batches.
    InputError
        For an unreadable source (missing file, binary data ...), as :func:`read_run`.
    """
    if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview)) and not hasattr(
        source, "read"
    ):
        raise NotStreamable("not a file")
    raw = read_source(source, None)
    if raw.size() == 0:
        raise NotStreamable("empty")
    if fmt == "msmarco" or (fmt == "auto" and is_msmarco_run(raw)):
        raise NotStreamable("an MS MARCO run is read whole")
    if fmt == "trec" or (fmt == "auto" and is_trec(raw, "run")):
        stream = _trec_stream(raw, batch_rows)
        if stream is None:
            raise NotStreamable("empty")
        tag_name, opener = stream
        return RunStream(name or raw.stem or tag_name or "run", raw.name, opener)
    table_fmt = table_format(raw) if fmt == "auto" else fmt
    if table_fmt == "parquet":
        return RunStream(name or raw.stem, raw.name, _parquet_opener(raw, columns, batch_rows))
    if table_fmt in ("csv", "tsv"):
        return RunStream(
            name or raw.stem, raw.name, _table_opener(raw, table_fmt, columns, batch_rows)
        )
    raise NotStreamable(f"{table_fmt} is read whole")


# -- TREC -------------------------------------------------------------------------------


def _trec_stream(raw: RawData, batch_rows: int):
    """(tag of the first line, opener): Arrow's streaming reader for regular files, a
    line-by-line reader (the whole-file slow path's rules) from where a file stops being
    regular."""
    head = raw.head(1 << 16)
    if not head:
        return None
    check_text(raw, sample=1 << 16)
    tag = None
    for line in head.splitlines():
        parts = line.split()
        if parts and not line.startswith(b"#") and len(parts) >= 6:
            tag = parts[5].decode("utf-8", "replace")
            break
    fast = _trec_fast(raw, head)

    def opener():
        done = 0
        if fast is not None:
            try:
                for table in fast():
                    done += table.num_rows
                    yield table
                return
            except NotStreamable:
                pass  # irregular from here: the rows so far were regular lines 1..done
        yield from _trec_lines(raw, skip=done)

    return tag, _rebatch(opener, batch_rows)


def _trec_fast(raw: RawData, head: bytes):
    """The opener of Arrow's reading of a regular TREC run, or None when the first line
    says the file is not regular (a comment, a byte-order mark, mixed separators, a field
    count other than 6). What only the rest of the file can say is checked piece by piece
    (:func:`_regular_pieces`, then the parsed columns): the opener raises NotStreamable
    where the file stops being regular, before any row of that piece is handed out."""
    delim = regular_delimiter_of(head, "run")
    if delim is None:
        return None
    options = arrow_csv_options("run", delim, qid_type=pa.string(), block_size=CSV_BLOCK_BYTES)

    def opener():
        line = 1
        for piece in _regular_pieces(raw, delim):
            try:
                table = pacsv.read_csv(pa.py_buffer(piece), *options)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
                raise NotStreamable(str(exc)) from None
            n = table.num_rows
            if not n:
                continue
            qid, docid, scores = table.column(0), table.column(1), table.column(2)
            # comment and blank lines, empty fields, non-finite scores: the line reader takes over
            if comment_or_blank(qid) or any(any_empty(table.column(i)) for i in (1, 3, 4, 5)):
                raise NotStreamable("a comment, blank line or empty field")
            if not all(np.isfinite(c.to_numpy()).all() for c in scores.chunks):
                raise NotStreamable("a score that is not a finite number")
            lines = pa.chunked_array([np.arange(line, line + n, dtype=np.int64)])
            line += n
            yield pa.Table.from_arrays([qid, docid, scores, lines], schema=SCHEMA)

    return opener


def _regular_pieces(raw: RawData, delim: str, piece_bytes: int | None = None):
    """The data in pieces of whole lines (the last may lack its newline), about
    ``piece_bytes`` each, every piece first checked for a NUL byte or a separator other
    than ``delim`` (NotStreamable: the line reader takes over from there).

    A file is read into one buffer, reused from piece to piece (a piece is a view of it,
    valid until the next one is asked for): the file is read once, and no fresh memory is
    touched per piece. Data in memory is cut into views, not copied.
    """
    size = piece_bytes or PIECE_BYTES
    if raw.path is None:
        data = raw.data
        view = memoryview(data)
        at = 0
        while at < len(data):
            end = min(at + size, len(data))
            if end < len(data):
                end = data.rfind(b"\n", at, end) + 1
                if end <= at:
                    raise NotStreamable("a line longer than a piece")
            if unexpected_bytes(data, delim, at, end):
                raise NotStreamable("a NUL byte or another separator")
            yield view[at:end]
            at = end
        return
    buf = bytearray(size)
    view = memoryview(buf)
    carry = 0
    with open(raw.path, "rb", buffering=0) as fh:
        while True:
            got = fh.readinto(view[carry:])
            end = carry + got
            if unexpected_bytes(buf, delim, carry, end):
                raise NotStreamable("a NUL byte or another separator")
            if not got:  # the end of the file: the last line, without its newline
                if carry:
                    yield view[:carry]
                return
            cut = buf.rfind(b"\n", 0, end) + 1
            if not cut:
                if end < size:
                    carry = end  # a short read: read on
                    continue
                raise NotStreamable("a line longer than a piece")
            yield view[:cut]
            carry = end - cut
            buf[:carry] = buf[cut:end]


def _trec_lines(raw: RawData, skip: int = 0, batch_rows: int = 1 << 16):
    """The whole-file slow path's rules (whitespace-separated, ``#`` comment lines and
    blank lines skipped), line by line in batches. Any bad line raises NotStreamable: the
    whole-file reader then names it."""
    if raw.path is not None:
        handle = open(raw.path, encoding="utf-8", errors="strict", newline=None)
    else:
        handle = io.TextIOWrapper(
            io.BytesIO(raw.data), encoding="utf-8", errors="strict", newline=None
        )
    q, d, v, ln = [], [], [], []
    rows = 0
    try:
        with handle:
            for number, line in enumerate(handle, start=1):
                if number == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                fields = data_fields(line)
                if fields is None:
                    continue
                if "\x00" in line:
                    raise NotStreamable("binary data")
                rows += 1
                if rows <= skip:
                    continue
                stripped, parts = fields
                if len(parts) < columns_of("run"):
                    raise NotStreamable("a short line")
                if quoted_line(stripped, parts, "run"):
                    raise NotStreamable("a double quote")
                value = parse_number(parts[4])
                if value is None:
                    raise NotStreamable("a bad score")
                if not np.isfinite(value):
                    raise NotStreamable("a score that is not a finite number")
                q.append(parts[0])
                d.append(parts[2])
                v.append(value)
                ln.append(number)
                if len(q) >= batch_rows:
                    yield _lines_table(q, d, v, ln)
                    q, d, v, ln = [], [], [], []
    except UnicodeDecodeError:
        raise NotStreamable("not UTF-8") from None
    if q:
        yield _lines_table(q, d, v, ln)


def _lines_table(q, d, v, ln) -> pa.Table:
    return pa.Table.from_arrays(
        [
            pa.array(q, pa.string()),
            pa.array(d, pa.string()),
            pa.array(v, pa.float64()),
            pa.array(ln, pa.int64()),
        ],
        schema=SCHEMA,
    )


def _rebatch(opener, batch_rows: int):
    """Batches of about ``batch_rows`` rows from an opener of tables of any size."""

    def reopen():
        for table in opener():
            for lo in range(0, table.num_rows, batch_rows):
                yield table.slice(lo, batch_rows)

    return reopen


# -- tables -----------------------------------------------------------------------------


def table_of(run: Run, lines: np.ndarray) -> pa.Table:
    """A Run's rows as a table of :data:`SCHEMA` (query ids decoded from a dictionary)."""
    qid = run.qid
    if pa.types.is_dictionary(qid.type):
        qid = qid.cast(qid.type.value_type)
    return pa.Table.from_arrays(
        [qid, run.docid, pa.array(run.scores), pa.array(lines)], schema=SCHEMA
    )


def parquet_batches(open_batches, source: str, columns=None, first_row: int = 0):
    """The record batches of a Parquet run as tables of :data:`SCHEMA`, each converted as
    the whole-file reader converts the table (same column detection and checks).

    ``open_batches``: a callable without arguments that opens the file and returns its
    batches (``ParquetFile.iter_batches``); Arrow's errors, there or later, become one
    :class:`InputError` naming ``source``. ``first_row``: the file's rows before the first
    batch; a problem is named by its row in the file, and the ``line`` column holds those
    row numbers."""
    from metrics_core.io.tables import arrow_to_pandas, frame_to_columns

    at = first_row
    try:
        for batch in open_batches():
            batch.validate(full=True)  # text that is not UTF-8 fails here, not inside pandas
            frame = arrow_to_pandas(batch)
            if not len(frame):
                continue
            run = frame_to_columns(frame, "run", columns=columns, source=source, first_row=at)
            lines = np.arange(at + 1, at + len(frame) + 1, dtype=np.int64)
            at += len(frame)
            yield table_of(run, lines)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(
            N_("cannot read this Parquet file ({error})"), source=source, params={"error": str(exc)}
        ) from None
    except UnicodeDecodeError:  # a column name or metadata that is not UTF-8
        raise InputError(
            N_("cannot read this Parquet file (text that is not UTF-8 in its schema)"),
            source=source,
            hint=N_("Save the table again as Parquet, or as CSV"),
        ) from None


def _parquet_opener(raw: RawData, columns, batch_rows: int):
    import pyarrow.parquet as pq

    if raw.head(4) != PARQUET_MAGIC:
        raise InputError(
            N_("not a Parquet file (no PAR1 header)"),
            source=raw.name,
            hint=N_("Give a .parquet file, or choose another format"),
        )

    def batches():
        from metrics_core.io.tables import check_parquet_metadata

        pf = pq.ParquetFile(raw.path if raw.path is not None else pa.BufferReader(raw.data))
        check_parquet_metadata(pf.metadata, raw.size(), raw.name, whole=False)  # a forged footer
        return pf.iter_batches(batch_size=batch_rows)

    def opener():
        return parquet_batches(batches, raw.name, columns)

    return opener


def _table_opener(raw: RawData, fmt: str, columns, batch_rows: int):
    import pandas as pd

    from metrics_core.io.tables import frame_to_columns

    def opener():
        # the same reader options as the whole-file table reader, in chunks
        check_text(raw, sample=1 << 16)
        handle = raw.path if raw.path is not None else io.BytesIO(raw.data)
        try:
            chunks = pd.read_csv(
                handle,
                sep="\t" if fmt == "tsv" else ",",
                dtype=str,
                keep_default_na=False,
                skip_blank_lines=True,
                chunksize=batch_rows,
                encoding="utf-8-sig",
            )
            at = 0
            for frame in chunks:
                if not len(frame):
                    continue
                if not isinstance(frame.index, pd.RangeIndex):
                    raise NotStreamable("rows longer than the header")  # the whole reader names it
                # the line numbers of the whole-file reader: the first data row is line 2
                run = frame_to_columns(
                    frame, "run", columns=columns, source=raw.name, first_line=2 + at
                )
                lines = np.arange(2 + at, 2 + at + len(frame), dtype=np.int64)
                at += len(frame)
                yield table_of(run, lines)
        except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
            raise NotStreamable(str(exc)) from None

    return opener


def run_stream(run: Run, batch_rows: int = BATCH_ROWS) -> RunStream:
    """A :class:`Run` already in memory as a stream of batches (slices, no copies of the
    ids): the engine's working memory is then bounded by a block, not by the run."""

    def opener():
        qid = run.qid
        if pa.types.is_dictionary(qid.type):
            qid = qid.cast(qid.type.value_type)
        n = len(run)
        for lo in range(0, n, batch_rows):
            hi = min(n, lo + batch_rows)
            if run.line_numbers is not None:
                lines = run.line_numbers[lo:hi]
            else:
                lines = np.arange(lo + 1, hi + 1, dtype=np.int64)
            yield pa.Table.from_arrays(
                [
                    qid.slice(lo, hi - lo),
                    run.docid.slice(lo, hi - lo),
                    pa.array(run.scores[lo:hi]),
                    pa.array(lines),
                ],
                schema=SCHEMA,
            )

    return RunStream(run.name, run.source, opener, run)


def batch_run(table: pa.Table, name: str, source: str) -> Run:
    """A :class:`Run` of one batch (or a block of batches), its rows' lines kept."""
    qid = table.column("qid")
    docid = table.column("docid")
    return Run(
        as_string_array(qid, "query id", source),
        as_string_array(docid, "document id", source),
        table.column("score").to_numpy(),
        name=name,
        source=source,
        line_numbers=table.column("line").to_numpy(),
    )


__all__ = [
    "BATCH_ROWS",
    "NotStreamable",
    "RunStream",
    "open_run_stream",
    "run_stream",
    "batch_run",
    "table_of",
    "parquet_batches",
    "SCHEMA",
]
