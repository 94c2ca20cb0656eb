"""A TREC run read in batches, for the streamed and Dask evaluations.

:func:`trec_run_batches` reads pieces of whole lines into one reused buffer, checks each
for bytes the fast path cannot split and for lines past the line limit, and parses it with
Arrow's CSV reader with the same options as the whole-file fast path of
:mod:`metrics_core.io.trec`; from where a file stops being regular, a line reader with the
whole-file slow path's rules takes over. Every row equals what the whole-file reader
gives; a line the whole-file reader would refuse raises
:class:`~metrics_core.io.batches.NotStreamable` (the whole-file reader then names it).
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from metrics_core.io.batches import SCHEMA, NotStreamable, lines_table, rebatch
from metrics_core.io.source import RawData
from metrics_core.io.text_check import LineCeiling, check_lines, check_text
from metrics_core.io.trec import (
    any_empty,
    arrow_csv_options,
    check_fields,
    check_line_ceiling,
    columns_of,
    comment_or_blank,
    data_fields,
    long_field,
    quoted_line,
    regular_delimiter_of,
    unexpected_bytes,
)
from metrics_core.validation import parse_number

#: Bytes per block of Arrow's CSV reader in a piece: the blocks of a piece are parsed on
#: Arrow's threads, in parallel.
CSV_BLOCK_BYTES = 1 << 20
#: Bytes of a TREC run read, checked and parsed at a time (a buffer reused from piece to
#: piece). On the 10 M-line benchmark, 4 MiB pieces: 0.87-0.95 s of CPU to hand out every
#: batch, 30,000 page faults, 170 MB resident; 16 MiB pieces the same CPU, 57,000 faults, 265 MB.
PIECE_BYTES = 1 << 22


def trec_run_batches(raw: RawData, batch_rows: int):
    """(tag of the first line, opener of batches of :data:`~metrics_core.io.batches.SCHEMA`)
    of a TREC run, or None for an empty one: Arrow's reading of pieces while the file is
    regular, the line reader from where it stops being regular. A line the whole-file
    reader would refuse raises :class:`~metrics_core.io.batches.NotStreamable` (the
    whole-file reader then names it)."""
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
    fast = _fast_batches(raw, head)

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
        yield from _line_batches(raw, skip=done)

    return tag, rebatch(opener, batch_rows)


def _fast_batches(raw: RawData, head: bytes):
    """The opener of Arrow's reading of a regular TREC run, or None when the first line
    says the file is not regular (a comment, a byte-order mark, mixed separators, a field
    count other than 6). What only the rest of the file can say is checked piece by piece
    (:func:`regular_pieces`, then the parsed columns): the opener raises NotStreamable
    where the file stops being regular, before any row of that piece is handed out."""
    delim = regular_delimiter_of(head, "run")
    if delim is None:
        return None
    options = arrow_csv_options("run", delim, qid_type=pa.string(), block_size=CSV_BLOCK_BYTES)

    def opener():
        line = 1
        for piece in regular_pieces(raw, delim):
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
            check_fields(raw.name, raw.limits, (qid, docid))
            if not all(np.isfinite(c.to_numpy()).all() for c in scores.chunks):
                raise NotStreamable("a score that is not a finite number")
            lines = pa.chunked_array([np.arange(line, line + n, dtype=np.int64)])
            line += n
            yield pa.Table.from_arrays([qid, docid, scores, lines], schema=SCHEMA)

    return opener


def regular_pieces(raw: RawData, delim: str, piece_bytes: int | None = None):
    """The data in pieces of whole lines (the last may lack its newline), about
    ``piece_bytes`` each (default :data:`PIECE_BYTES`), every piece first checked for a
    NUL byte or a separator other than ``delim`` (NotStreamable: the line reader takes
    over from there).

    A file is read into one buffer, reused from piece to piece (a piece is a view of it,
    valid until the next one is asked for): the file is read once, and no fresh memory is
    touched per piece. Data in memory is cut into views, not copied.
    """
    size = piece_bytes or PIECE_BYTES
    lines = LineCeiling(raw.limits.line_bytes)  # measured as the bytes come in
    if raw.path is None:
        data = raw.data
        view = memoryview(data)
        at = 0
        while at < len(data):
            end = min(at + size, len(data))
            if end < len(data):
                end = data.rfind(b"\n", at, end) + 1
                if end <= at:
                    check_line_ceiling(raw, lines.feed(data, at, min(at + size, len(data))), data)
                    raise NotStreamable("a line longer than a piece")
            check_line_ceiling(raw, lines.feed(data, at, end), data)
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
            check_line_ceiling(raw, lines.feed(buf, carry, end))
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


def _line_batches(raw: RawData, skip: int = 0, batch_rows: int = 1 << 16):
    """The whole-file slow path's rules (whitespace-separated, ``#`` comment lines and
    blank lines skipped), line by line in batches. Any bad line raises NotStreamable: the
    whole-file reader then names it. The lines are measured first (a line is read whole
    here), and an id past the field limit is refused."""
    check_lines(raw)
    field_limit = raw.limits.field_bytes
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
                if len(stripped) > field_limit and long_field(parts, "run", field_limit):
                    raise NotStreamable("an id past the field limit")  # the whole reader names it
                q.append(parts[0])
                d.append(parts[2])
                v.append(value)
                ln.append(number)
                if len(q) >= batch_rows:
                    yield lines_table(q, d, v, ln)
                    q, d, v, ln = [], [], [], []
    except UnicodeDecodeError:
        raise NotStreamable("not UTF-8") from None
    if q:
        yield lines_table(q, d, v, ln)
