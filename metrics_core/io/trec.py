"""TREC run and qrels files.

Run lines: ``qid Q0 docid rank score tag`` (tabs or spaces; extra trailing columns
tolerated; the rank column is ignored, as trec_eval ignores it). Qrels lines:
``qid iter docid relevance``. Lines starting with ``#`` are comments (a ``#`` elsewhere
is data: document ids may contain it). Blank lines are skipped.

Large, regular files take a fast path through Arrow's multithreaded CSV reader; any
irregularity (comments, mixed whitespace, extra columns, a bad value) falls back to a
line-by-line reader that names the first bad line.

A run is also read in batches by :mod:`metrics_core.io.trec_pieces`, on this module's
layout, options and checks.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from metrics_core.data import Qrels, Run
from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.limits import Limits, over_field, over_line
from metrics_core.io.source import RawData
from metrics_core.io.text_check import (
    LineCeiling,
    check_text,
    line_in_file,
    line_of_offset,
    text_lines,
)
from metrics_core.validation import parse_number

RUN_FORMAT = "qid Q0 docid rank score tag"
QRELS_FORMAT = "qid iter docid relevance"
MSMARCO_RUN_FORMAT = "qid pid rank"

# (number of columns, id columns, value column, value name)
_LAYOUT = {
    "run": (6, (0, 2), 4, Phrase(N_("score")), RUN_FORMAT),
    "qrels": (4, (0, 2), 3, Phrase(N_("relevance")), QRELS_FORMAT),
    "msmarco": (3, (0, 1), 2, Phrase(N_("rank")), MSMARCO_RUN_FORMAT),
}
#: "<kind> lines are: <layout>", the advice of every message about a line's layout.
_LINES_ARE = {
    "run": N_("run lines are: {layout}"),
    "qrels": N_("qrels lines are: {layout}"),
    "msmarco": N_("msmarco lines are: {layout}"),
}


def lines_are(kind: str) -> Phrase:
    """The layout of a ``kind`` line ("run", "qrels", "msmarco") in words, translatable.

    >>> lines_are("qrels")
    'qrels lines are: qid iter docid relevance'
    """
    return Phrase(_LINES_ARE[kind], {"layout": _LAYOUT[kind][4]})


#: the characters that separate fields, as trec_eval's C reader sees them (C's isspace):
#: other characters (a no-break space, U+001C ...) belong to the id
ASCII_SPACE = " \t\n\r\x0b\x0c"
_FIELDS = re.compile(r"[ \t\n\r\x0b\x0c]+")


def split_fields(line: str) -> list[str]:
    """The fields of a line, split on runs of ASCII white space only (as trec_eval)."""
    line = line.strip(ASCII_SPACE)
    return _FIELDS.split(line) if line else []


#: bytes that stop a delimiter-split fast path: a NUL (the line reader names its line) and
#: the separators other than the delimiter (the line reader splits on them)
_UNEXPECTED = {"\t": (b"\x00", b" ", b"\x0b", b"\x0c"), " ": (b"\x00", b"\t", b"\x0b", b"\x0c")}


def unexpected_bytes(data, delim: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``data[start:end]`` (bytes or a bytearray) holds a NUL byte or a separator
    other than ``delim`` (a tab in a space-separated file, a space in a tab-separated one,
    a vertical tab or form feed anywhere): the delimiter-split fast paths would then read
    fields the line reader splits. One ``memchr`` per byte value. (Empty fields, the other
    difference, are found in the parsed columns: :func:`any_empty`.)

    >>> unexpected_bytes(b"q1 Q0 d1 1 2.5 run", " "), unexpected_bytes(b"q1\\tQ0 d1", " ")
    (False, True)
    """
    end = len(data) if end is None else end
    return any(data.find(c, start, end) >= 0 for c in _UNEXPECTED[delim])


def other_separators(raw: RawData, delim: str, chunk: int = 1 << 23) -> bool:
    """:func:`unexpected_bytes` over the whole input, a file read in chunks into one
    reused buffer (mapping the file would count it in the process's resident memory and
    fault its pages in; the read is one pass). The same pass measures the lines: a line
    past the line limit is an :class:`InputError` naming it."""
    lines = LineCeiling(raw.limits.line_bytes)
    if raw.path is None:
        check_line_ceiling(raw, lines.feed(raw.data), raw.data)
        return unexpected_bytes(raw.data, delim)
    buf = bytearray(chunk)
    with open(raw.path, "rb", buffering=0) as fh:
        while True:
            n = fh.readinto(buf)
            if not n:
                return False
            check_line_ceiling(raw, lines.feed(buf, 0, n))
            if unexpected_bytes(buf, delim, 0, n):
                return True


def check_line_ceiling(raw: RawData, long: int | None, data=None) -> None:
    """Refuse ``raw`` when ``long`` (a line's offset, from a LineCeiling) is not None."""
    if long is None:
        return
    line = line_of_offset(data, long) if data is not None else line_in_file(raw._file(), long)
    raise over_line(raw.name, line, raw.limits.line_bytes)


def longest_value(column) -> int:
    """The longest value, in bytes, of a string or binary column (an Array or a
    ChunkedArray; a dictionary-encoded chunk through its dictionary), read off Arrow's
    offsets.

    >>> longest_value(pa.chunked_array([["a", "bcd"], ["ef"]]))
    3
    """
    longest = 0
    for chunk in _chunks(column):
        values = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
        if not len(values):
            continue
        offsets = _offsets(values)
        if offsets is None:
            longest = max(longest, pc.max(pc.binary_length(values)).as_py() or 0)
        else:
            longest = max(longest, int(np.diff(offsets).max()))
    return longest


def check_fields(source: str, limits: Limits, columns) -> None:
    """Refuse ``source`` when one of its id ``columns`` (query ids, then document ids:
    Arrow arrays) holds a value past the field limit of ``limits``."""
    limit = limits.field_bytes
    for column, what in zip(columns, (N_("query id"), N_("document id")), strict=False):
        longest = longest_value(column)
        if longest > limit:
            raise over_field(source, Phrase(what), longest, limit)


def long_field(parts: list[str], kind: str, limit: int) -> int | None:
    """The byte length of a line's longest id past ``limit`` (None when both fit); a text
    of n characters has at least n bytes, and at most 4n."""
    _, (qcol, dcol), _, _, _ = _LAYOUT[kind]
    for i in (qcol, dcol):
        if 4 * len(parts[i]) > limit:
            n = len(parts[i].encode("utf-8"))
            if n > limit:
                return n
    return None


def any_empty(column) -> bool:
    """Whether a string or binary column (an Array or a ChunkedArray) holds an empty
    value: the line reader would have split that line into fewer fields. Read off Arrow's
    offsets (two equal neighbours), not the strings; a dictionary-encoded chunk is checked
    through its dictionary.

    >>> any_empty(pa.array(["a", "b"])), any_empty(pa.chunked_array([["a"], ["", "b"]]))
    (False, True)
    """
    for chunk in _chunks(column):
        if not len(chunk):
            continue
        values = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
        offsets = _offsets(values)
        if offsets is None:
            if pc.min(pc.binary_length(values)).as_py() == 0:
                return True
        elif bool((offsets[1:] == offsets[:-1]).any()):
            return True
    return False


def comment_or_blank(column) -> bool:
    """Whether a query-id column (an Array or a ChunkedArray, of strings or dictionary
    encoded) holds a value that is empty or starts with ``#``: a blank or comment line,
    which the line reader skips. Read off Arrow's offsets and first bytes (a gather, not a
    pass over the strings); a dictionary-encoded column through its chunks' dictionaries,
    each looked at once (a few thousand strings, not the rows).

    >>> comment_or_blank(pa.array(["q1", "q2"])), comment_or_blank(pa.array(["q1", "#x"]))
    (False, True)
    """
    seen = set()
    for chunk in _chunks(column):
        if not len(chunk):
            continue
        if pa.types.is_dictionary(chunk.type):
            d = chunk.dictionary
            key = (d.buffers()[1].address, d.offset, len(d))  # chunks share one dictionary
            if key in seen:
                continue
            seen.add(key)
            chunk = d
            if not len(chunk):
                continue
        offsets = _offsets(chunk)
        if offsets is None:
            if (
                pc.any(pc.starts_with(chunk, "#")).as_py()
                or pc.any(pc.equal(pc.utf8_length(chunk), 0)).as_py()
            ):
                return True
            continue
        if bool((offsets[1:] == offsets[:-1]).any()):
            return True
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)
        if bool((data[offsets[:-1]] == ord("#")).any()):
            return True
    return False


def _chunks(column) -> list:
    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def _offsets(values: pa.Array) -> np.ndarray | None:
    """The 32-bit offsets of a non-empty string or binary array (None otherwise)."""
    n = len(values)
    if not n or not (pa.types.is_string(values.type) or pa.types.is_binary(values.type)):
        return None
    return np.frombuffer(values.buffers()[1], dtype=np.int32, count=n + 1, offset=values.offset * 4)


def regular_delimiter_of(head: bytes, kind: str) -> str | None:
    """The delimiter of a regular ``kind`` file from its first bytes, or None when its
    first line says the file is not regular (a comment, a byte-order mark, mixed
    separators, another field count): the line reader then takes the file."""
    if not head or head.startswith(b"#") or head.startswith(b"\xef\xbb\xbf"):
        return None
    first = _first_line(head).rstrip(b"\r")
    delim = regular_delimiter(first)
    if delim is None or len(first.split(delim.encode())) != _LAYOUT[kind][0]:
        return None
    return delim


def arrow_csv_options(kind: str, delim: str, *, qid_type: pa.DataType, block_size: int) -> tuple:
    """Arrow's CSV options for a regular ``kind`` file (the whole-file and the streamed
    reader): columns ``c0``.. in the order query id, document id, value, then the other
    fields (Q0, rank, tag; iter) as raw bytes, read only to see that none is empty. Blank
    lines stay rows (of empty fields), so every row is a line."""
    ncols, (qcol, dcol), vcol, _, _ = _LAYOUT[kind]
    names = [f"c{i}" for i in range(ncols)]
    others = [names[i] for i in range(ncols) if i not in (qcol, dcol, vcol)]
    return (
        pacsv.ReadOptions(column_names=names, block_size=block_size),
        pacsv.ParseOptions(
            delimiter=delim,
            quote_char=False,
            double_quote=False,
            escape_char=False,
            ignore_empty_lines=False,
        ),
        pacsv.ConvertOptions(
            column_types={
                names[qcol]: qid_type,
                names[dcol]: pa.string(),
                names[vcol]: pa.float64(),
                **dict.fromkeys(others, pa.binary()),
            },
            include_columns=[names[qcol], names[dcol], names[vcol], *others],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
        ),
    )


def data_fields(line: str) -> tuple[str, list[str]] | None:
    """A line's stripped text and fields, or None for a blank or ``#`` comment line (which
    every reader skips).

    >>> data_fields("q1 Q0 d1 1 2.5 r\\n"), data_fields("# a comment"), data_fields("  ")
    (('q1 Q0 d1 1 2.5 r', ['q1', 'Q0', 'd1', '1', '2.5', 'r']), None, None)
    """
    stripped = line.strip(ASCII_SPACE)
    if not stripped or line.startswith("#"):
        return None
    return stripped, split_fields(stripped)


def columns_of(kind: str) -> int:
    """The number of fields of a ``kind`` line."""
    return _LAYOUT[kind][0]


def value_column(kind: str) -> int:
    """The position of the value (score, relevance, rank) in a ``kind`` line."""
    return _LAYOUT[kind][2]


def _first_line(data: bytes) -> bytes:
    end = data.find(b"\n")
    return data if end < 0 else data[:end]


def regular_delimiter(first: bytes) -> str | None:
    """The one delimiter of a regular TREC file, from its first line: tabs only or single
    spaces only; None when mixed (the line-by-line reader handles those)."""
    if b"\t" in first and b" " not in first:
        return "\t"
    if b" " in first and b"\t" not in first:
        return " "
    return None


def _fast_parse(raw: RawData, kind: str):
    """Arrow CSV parse of a regular file; None when the file is not regular."""
    head = raw.head(1 << 16)
    delim = regular_delimiter_of(head, kind)
    if delim is None:
        return None
    # NUL bytes take the slow path, which names their line; so do mixed separators
    if other_separators(raw, delim):
        return None
    read, parse, convert = arrow_csv_options(
        kind, delim, qid_type=pa.dictionary(pa.int32(), pa.string()), block_size=1 << 22
    )
    try:
        table = pacsv.read_csv(
            raw.arrow_source(), read_options=read, parse_options=parse, convert_options=convert
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    qid, did, vals, *others = table.column_names
    # comment lines ("#" at the start of a line) take the slow path: a comment with as
    # many fields as a data line parses, with a query id that starts with "#" -- and
    # only a comment can put "#" there (a data line cannot start with one). Blank lines
    # too: Arrow keeps them as rows of empty fields (the empty score already failed the
    # float conversion above; the empty query id is checked all the same)
    if comment_or_blank(table.column(qid)):
        return None
    # an empty field between two tabs: the line reader splits on runs of whitespace and
    # names the line (an empty document id is never data)
    if any(any_empty(table.column(c)) for c in (did, *others)):
        return None
    check_fields(raw.name, raw.limits, (table.column(qid), table.column(did)))
    # numpy's own copy of the scores: ``ChunkedArray.to_numpy`` takes Arrow's C++ default pool
    # (mimalloc in the wheels) whatever pool pyarrow is told to use, and a long-lived server
    # kept those pages after the runs were freed (40 MB after 25 visitors' 50 runs)
    column = table.column(vals)
    values = np.concatenate(
        [chunk.to_numpy(zero_copy_only=False) for chunk in column.chunks] or [np.empty(0)]
    )
    table = table.drop_columns([vals, *others])
    # hand the parser's freed blocks back to the system before the evaluation needs memory
    pa.default_memory_pool().release_unused()
    if not np.isfinite(values).all():
        return None
    tag = None
    if kind == "run":
        parts = _first_line(head).rstrip(b"\r").split(delim.encode())
        tag = parts[5].decode("utf-8", "replace") if len(parts) > 5 else None
    # query ids arrive dictionary-encoded (few distinct values); doc ids stay chunked:
    # concatenating them would double the peak memory
    return (table.column(qid), table.column(did), values, None, tag)


def _slow_parse(raw: RawData, kind: str):
    """Line-by-line parse that names the first bad line."""
    ncols, (qcol, dcol), vcol, vname, _ = _LAYOUT[kind]
    field_limit = raw.limits.field_bytes
    qids, dids, vals, lines = [], [], [], []
    tag = None
    for number, line in text_lines(raw):
        fields = data_fields(line)
        if fields is None:
            continue
        stripped, parts = fields
        if quoted_line(stripped, parts, kind):
            raise InputError(
                N_(
                    'a double quote (") in the line: TREC files are not quoted, and ids '
                    "cannot contain spaces"
                ),
                source=raw.name,
                line=number,
                hint=N_("Remove the quotes and the spaces inside ids; {lines}"),
                params={"lines": lines_are(kind)},
            )
        if len(parts) < ncols:
            hint: str = lines_are(kind)
            plain: str = hint
            if kind == "run" and len(parts) == 4:
                hint = N_(
                    "{lines} (this line looks like a qrels line: did you swap qrels= and run=?)"
                )
                plain = N_(
                    "{lines} (this line looks like a qrels line: are the qrels and the run swapped?)"
                )
            raise InputError(
                N_("expected {want} columns, found {got}"),
                source=raw.name,
                line=number,
                hint=hint,
                field=kind,
                plain_hint=plain,
                params={"want": ncols, "got": len(parts), "lines": lines_are(kind)},
            )
        if kind == "qrels" and len(parts) >= 6 and (parts[1] == "Q0" or not _is_number(parts[3])):
            raise InputError(
                N_("expected {want} columns, found {got}"),
                source=raw.name,
                line=number,
                hint=N_("{lines} (this line looks like a run line: did you swap qrels= and run=?)"),
                field="qrels",
                plain_hint=N_(
                    "{lines} (this line looks like a run line: are the qrels and the run swapped?)"
                ),
                params={"want": 4, "got": 6, "lines": lines_are("qrels")},
            )
        text_value = parts[vcol]
        value = parse_number(text_value)
        if value is None:
            raise InputError(
                N_("{what} {value} is not a number"),
                source=raw.name,
                line=number,
                hint=lines_are(kind),
                params={"what": vname, "value": repr(text_value)},
            )
        if not np.isfinite(value):
            raise InputError(
                N_("{what} is {value}, not a finite number"),
                source=raw.name,
                line=number,
                hint=N_("Every {what} must be a finite number"),
                params={"what": vname, "value": repr(text_value)},
            )
        if len(stripped) > field_limit:
            long = long_field(parts, kind, field_limit)
            if long is not None:
                what = N_("query id") if len(parts[qcol].encode()) == long else N_("document id")
                raise over_field(raw.name, Phrase(what), long, field_limit).replace(line=number)
        qids.append(parts[qcol])
        dids.append(parts[dcol])
        vals.append(value)
        lines.append(number)
        if tag is None and kind == "run":
            tag = parts[5]
    if not qids:
        raise InputError(
            N_("no data lines: the file is empty (or only comments)"),
            source=raw.name,
            hint=lines_are(kind),
        )
    return (
        pa.array(qids, type=pa.string()),
        pa.array(dids, type=pa.string()),
        np.asarray(vals, dtype=np.float64),
        np.asarray(lines, dtype=np.int64),
        tag,
    )


def quoted_line(stripped: str, parts: list[str], kind: str) -> bool:
    """Whether a line's double quotes make it unreadable as TREC: its field count is off,
    or an id starts with a quote (a quoted CSV line, an id with spaces)."""
    ncols, (qcol, dcol), _, _, _ = _LAYOUT[kind]
    return '"' in stripped and (
        len(parts) != ncols or parts[qcol][0] == '"' or parts[dcol][0] == '"'
    )


def _is_number(text: str) -> bool:
    return parse_number(text) is not None


def _parse(raw: RawData, kind: str):
    raw.check_whole()  # read whole, from the disk too: bounded by the input limit
    if not raw.head(1 << 16).strip() and not raw.data.strip():
        raise InputError(N_("the file is empty"), source=raw.name, hint=lines_are(kind))
    check_text(raw, sample=1 << 16)
    parsed = _fast_parse(raw, kind)
    if parsed is None:
        parsed = _slow_parse(raw, kind)
    return parsed


def parse_trec_run(raw: RawData, name: str | None = None) -> Run:
    """Parse a TREC run file (see the module docstring)."""
    qid, did, scores, lines, tag = _parse(raw, "run")
    return Run(
        qid,
        did,
        scores,
        name=name or raw.stem or tag or "run",
        source=raw.name,
        line_numbers=lines,
        rows_are_lines=True,
        tags=tag,
    )


def parse_trec_qrels(raw: RawData) -> Qrels:
    """Parse a TREC qrels file (see the module docstring)."""
    qid, did, rel, lines, _ = _parse(raw, "qrels")
    return Qrels(qid, did, rel, source=raw.name, line_numbers=lines, rows_are_lines=True)


def parse_msmarco_run(raw: RawData, name: str | None = None) -> Run:
    """Parse an MS MARCO run file: ``qid pid rank`` lines (tabs or spaces), no score.

    The score is minus the rank (rank 1 scores -1, rank 2 -2 ...): sorting by score,
    descending, gives the file's rank order exactly, in float32 too (trec_eval 9's
    precision) for ranks up to 16,777,216. Equal ranks within a query are ties, ordered
    by the tie convention, as equal scores are.
    """
    qid, did, ranks, lines, _ = _parse(raw, "msmarco")
    return Run(
        qid,
        did,
        -ranks,
        name=name or raw.stem or "run",
        source=raw.name,
        line_numbers=lines,
        rows_are_lines=True,
    )
