"""Tables (CSV, TSV, Parquet, JSON, JSON Lines) and Python objects as runs and qrels.

Columns are found by name (case-insensitive, a list of usual names per role) or given
explicitly with ``columns={"query_id": ..., "doc_id": ..., "score": ...}`` (``relevance``
for qrels). When a role cannot be found the error lists the columns that were seen and
says how to map them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

from metrics_core.data import Qrels, Run
from metrics_core.errors import N_, InputError, Phrase, prefixed
from metrics_core.io.batches import NotStreamable, table_of
from metrics_core.io.columns import (
    ROLE_NAMES,
    ROLES,
    candidate_columns,
    detect_columns,
    is_rank_column,
)
from metrics_core.io.formats import table_format
from metrics_core.io.limits import Limits, over_field, over_input, resolve
from metrics_core.io.source import PARQUET_MAGIC, RawData
from metrics_core.io.text_check import check_json, check_lines, check_text, line_of_offset
from metrics_core.validation import show, to_numbers

__all__ = [
    "ROLE_NAMES",
    "ROLES",
    "detect_columns",
    "read_table_frame",
    "read_parquet_frame",
    "check_parquet_metadata",
    "arrow_to_pandas",
    "frame_to_columns",
    "json_to_frame",
    "nested_to_frame",
    "parquet_batches",
    "parquet_run_batches",
    "text_table_batches",
]


def read_table_frame(raw: RawData, fmt: str = "auto") -> tuple[pd.DataFrame, int]:
    """Read a table file into a DataFrame; returns (frame, line number of the first row)."""
    if fmt == "auto":
        fmt = table_format(raw)
    if fmt == "parquet":
        data = raw.data
        if not data.startswith(PARQUET_MAGIC):
            raise InputError(
                N_("not a Parquet file (no PAR1 header)"),
                source=raw.name,
                hint=N_("Give a .parquet file, or choose another format"),
            )
        return read_parquet_frame(data, raw.name, limits=raw.limits), 0
    check_text(raw)  # the lines measured before the data is read
    data = raw.data
    if fmt in ("json", "jsonl"):
        check_json(data, raw.name, raw.limits)
    text = data.decode("utf-8").lstrip("\ufeff")
    if not text.strip():
        raise InputError(
            N_("the file is empty"),
            source=raw.name,
            hint=N_("Give a file with a header row and data"),
        )
    if fmt in ("csv", "tsv"):
        sep = "\t" if fmt == "tsv" else ","
        try:
            frame = pd.read_csv(
                io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, skip_blank_lines=True
            )
        except pd.errors.ParserError as exc:
            msg = str(exc)
            line = None
            if "line" in msg:
                try:
                    line = int(msg.split("line")[-1].split(",")[0].strip().rstrip("."))
                except ValueError:
                    line = None
            raise InputError(
                N_("malformed {format} ({error})"),
                source=raw.name,
                line=line,
                hint=N_("Every row needs the same number of fields"),
                params={"format": fmt.upper(), "error": msg.split(".")[0]},
            ) from None
        except pd.errors.EmptyDataError:
            raise InputError(N_("the file is empty"), source=raw.name) from None
        if not isinstance(frame.index, pd.RangeIndex):
            # pandas made the surplus leading fields an index: every row is too long
            raise InputError(
                N_("the rows have more fields than the header ({count})"),
                source=raw.name,
                line=2,
                hint=N_("Every row needs the same number of fields"),
                params={"count": len(frame.columns)},
            )
        return frame, 2
    if fmt == "jsonl":
        rows = []
        for number, text_line in enumerate(text.splitlines(), start=1):
            if not text_line.strip():
                continue
            try:
                obj = json.loads(text_line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    N_("invalid JSON ({error})"),
                    source=raw.name,
                    line=number,
                    params={"error": exc.msg},
                ) from None
            except RecursionError:
                raise _too_deep(raw.name, number) from None
            if not isinstance(obj, dict):
                raise InputError(
                    N_("each JSON line must be an object"), source=raw.name, line=number
                )
            rows.append(obj)
        if not rows:
            raise InputError(N_("no JSON objects in the file"), source=raw.name)
        return pd.DataFrame(rows), 1
    if fmt == "json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                N_("invalid JSON ({error})"),
                source=raw.name,
                line=line_of_offset(data, exc.pos),
                params={"error": exc.msg},
            ) from None
        except RecursionError:
            raise _too_deep(raw.name) from None
        return obj, 0
    raise InputError(
        N_("unknown format {format}"),
        source=raw.name,
        hint=N_("accepted: {formats}"),
        params={"format": repr(fmt), "formats": "auto, trec, csv, tsv, parquet, json, jsonl"},
    )


def _too_deep(source: str, line: int | None = None) -> InputError:
    return InputError(
        N_("JSON nested too deeply"),
        source=source,
        line=line,
        hint=N_("A table is a list of flat row objects, or {qid: {docid: value}}"),
    )


#: Largest number of cells (rows x columns) a Parquet file may declare.
MAX_PARQUET_CELLS = 2_000_000_000
#: Most rows a Parquet row group may declare per byte of its (compressed) column chunks.
#: pyarrow's densest output, a column of one repeated value, holds about 3,000 rows per
#: byte (pages of at most 20,000 rows, each with its header); a table with any column
#: that varies holds far fewer. A file declaring more was not written by a Parquet writer.
MAX_PARQUET_ROWS_PER_BYTE = 10_000
#: Fewest bytes of memory a cell of a Parquet table takes once read (a 64-bit number; a
#: text takes its 4-byte offset and its characters): the floor of the memory estimate.
PARQUET_CELL_BYTES = 8
#: Bytes a text cell takes once read into a DataFrame beside its characters (a Python
#: string's header and the frame's pointer to it), and how many times the characters are
#: held while a table is read whole (Arrow's column, pandas' strings, the run's ids).
PANDAS_TEXT_CELL_BYTES = 64
TEXT_COPIES = 3


def check_parquet_metadata(
    meta, file_size: int, source: str, limits: Limits | None = None, *, whole: bool = True
) -> None:
    """Refuse a Parquet file whose footer declares more than its bytes can hold, or more
    than the input limit, before any data is read (a forged footer makes the reader
    allocate for the rows it declares).

    Checks, all on the footer (``meta``, a ``pyarrow.parquet.FileMetaData``):

    * the file's row count equals the sum of its row groups' row counts;
    * each column chunk holds at least its row group's rows as values (a flat column holds
      exactly one value, or null, per row; a list column at least one level per row);
    * each row group declares at most :data:`MAX_PARQUET_ROWS_PER_BYTE` rows per byte of
      its compressed column chunks, and those chunks lie within the file's ``file_size``;
    * what a row group's pages take once decompressed (their uncompressed sizes, the
      dictionary pages included) is within the input limit of ``limits`` (default: the
      limits in force): a reader of batches holds a row group's pages at once;
    * for a table read whole (``whole``): rows x columns is at most
      :data:`MAX_PARQUET_CELLS`, and rows x columns x :data:`PARQUET_CELL_BYTES` (the
      least memory the table takes once read) as well as the declared uncompressed size of
      the whole file are within the input limit.

    What the dictionaries expand to is measured after them, before any column is decoded
    (:func:`decoded_table`). Each problem is one :class:`InputError` naming ``source``.
    """
    limit = resolve(limits).input_bytes
    hint = N_("Save the table again as Parquet, or as CSV")
    rows, columns = meta.num_rows, max(meta.num_columns, 1)
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    held = sum(g.num_rows for g in groups)
    if rows != held or rows < 0:
        raise InputError(
            N_("the Parquet file declares {rows} rows, but its row groups hold {held}"),
            source=source,
            hint=hint,
            params={"rows": f"{rows:,}", "held": f"{held:,}"},
        )
    unpacked = 0
    for g in groups:
        chunks = [g.column(j) for j in range(g.num_columns)]
        values = min((c.num_values for c in chunks), default=g.num_rows)
        stored = sum(c.total_compressed_size for c in chunks)
        if values < g.num_rows:
            raise InputError(
                N_(
                    "a row group of the Parquet file declares {rows} rows, but its columns "
                    "hold {values} values"
                ),
                source=source,
                hint=hint,
                params={"rows": f"{g.num_rows:,}", "values": f"{values:,}"},
            )
        if stored > file_size or g.num_rows > MAX_PARQUET_ROWS_PER_BYTE * max(stored, 1):
            raise InputError(
                N_(
                    "a row group of the Parquet file declares {rows} rows in {size} bytes: "
                    "more than a Parquet file can hold (a damaged or forged footer)"
                ),
                source=source,
                hint=hint,
                params={"rows": f"{g.num_rows:,}", "size": f"{stored:,}"},
            )
        pages = sum(max(c.total_uncompressed_size, 0) for c in chunks)
        if pages > limit:
            raise over_input(source, _PAGES, pages, limit)
        unpacked += pages
    if not whole:
        return
    if rows * columns > MAX_PARQUET_CELLS:
        raise InputError(
            N_("the Parquet file declares {rows} rows"),
            source=source,
            hint=N_("Split the file"),
            params={"rows": f"{rows:,}"},
        )
    declared = max(
        unpacked,
        sum(g.total_byte_size for g in groups),
        rows * columns * PARQUET_CELL_BYTES,
    )
    if declared > limit:
        raise over_input(source, _DECLARED, declared, limit)


_PAGES = Phrase(N_("a row group of the Parquet file, its pages decompressed,"))
_DECLARED = Phrase(N_("the data the Parquet file declares"))
_DECODED = Phrase(N_("the Parquet table, its texts decoded,"))
_DECODED_BATCH = Phrase(N_("a batch of the Parquet file, its texts decoded,"))


def _is_text(t: pa.DataType) -> bool:
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
    )


def parquet_file(source):
    """A ``pyarrow.parquet.ParquetFile`` of ``source`` (a path or a buffer) whose text
    columns are read as dictionaries: their values are read once and each row holds a
    4-byte index, so what a column expands to can be measured before it is decoded
    (:func:`decoded_table`)."""
    import pyarrow.parquet as pq

    probe = pq.ParquetFile(source)
    names = [f.name for f in probe.schema_arrow if _is_text(f.type)]
    if not names:
        return probe
    if isinstance(source, pa.BufferReader):
        source.seek(0)
    return pq.ParquetFile(source, read_dictionary=names)


def decoded_table(table, source: str, limits: Limits, *, whole: bool = True):
    """``table`` (a Table or RecordBatch read by :func:`parquet_file`) with its dictionary
    columns decoded, after measuring what they decode to: each text's length (the field
    limit) and the total (the input limit). The total counts a table read whole as it will
    be held -- its texts :data:`TEXT_COPIES` times and :data:`PANDAS_TEXT_CELL_BYTES` per
    text cell, :data:`PARQUET_CELL_BYTES` per other cell -- and a batch as Arrow holds it.
    The lengths are read off the dictionary (each distinct text measured once) and taken
    per row: 4 bytes a row, never the texts themselves."""
    import pyarrow.compute as pc

    text = text_cells = other_cells = 0
    for name, column in zip(table.column_names, table.columns, strict=True):
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        for chunk in chunks:
            kind = chunk.type
            if pa.types.is_dictionary(kind) and _is_text(kind.value_type):
                lengths = pc.binary_length(chunk.dictionary)
                per_row = pc.take(lengths, chunk.indices)
            elif _is_text(kind):
                per_row = pc.binary_length(chunk)
            else:
                other_cells += len(chunk)
                continue
            text_cells += len(chunk)
            longest = pc.max(per_row).as_py() or 0
            if longest > limits.field_bytes:
                what = Phrase(N_("text in column {column}"), {"column": repr(name)})
                raise over_field(source, what, longest, limits.field_bytes)
            text += pc.sum(per_row).as_py() or 0
    if whole:
        size = text * TEXT_COPIES + text_cells * PANDAS_TEXT_CELL_BYTES
        size += other_cells * PARQUET_CELL_BYTES
    else:
        size = text + (text_cells + other_cells) * PARQUET_CELL_BYTES
    if size > limits.input_bytes:
        raise over_input(source, _DECODED if whole else _DECODED_BATCH, size, limits.input_bytes)
    return _decoded(table)


def _decoded(table):
    """``table`` with its dictionary columns cast to their values' type."""
    arrays, changed = [], False
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
            changed = True
        arrays.append(column)
    if not changed:
        return table
    fields = [
        pa.field(f.name, a.type, f.nullable, f.metadata)
        for f, a in zip(table.schema, arrays, strict=True)
    ]
    schema = pa.schema(fields, metadata=table.schema.metadata)
    if isinstance(table, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(arrays, schema=schema)
    return pa.Table.from_arrays(arrays, schema=schema)


def read_parquet_frame(
    data: bytes, source: str, max_bytes: int | None = None, *, limits: Limits | None = None
) -> pd.DataFrame:
    """A Parquet file's table, its footer checked (:func:`check_parquet_metadata`) before
    anything is read and its texts measured (:func:`decoded_table`) before they are
    decoded, against ``limits`` (default: the limits in force; ``max_bytes`` replaces the
    input limit)."""
    limits = resolve(limits, max_bytes)
    try:
        pf = parquet_file(pa.BufferReader(data))
        check_parquet_metadata(pf.metadata, len(data), source, limits)
        table = decoded_table(pf.read(), source, limits)
        table.validate(full=True)  # text that is not UTF-8 fails here, not inside pandas
        return arrow_to_pandas(table)
    except InputError:
        raise
    except MemoryError:
        raise InputError(
            N_("the Parquet file is too large to read into memory"), source=source
        ) from None
    except Exception as exc:  # pyarrow raises many kinds for a damaged file
        raise InputError(
            N_("cannot read this Parquet file ({error})"),
            source=source,
            hint=N_("Save the table again as Parquet, or as CSV"),
            params={"error": type(exc).__name__},
        ) from None


def arrow_to_pandas(table) -> pd.DataFrame:
    """An Arrow table or record batch as a DataFrame; damaged pandas metadata in the
    schema (index, dtypes, or column names other than the table's own) is left out and the
    columns are read as they are, as the streamed reader reads them."""
    try:
        frame = table.to_pandas()
    except (ValueError, TypeError, KeyError, pa.ArrowException):  # the metadata's JSON, its keys
        return table.replace_schema_metadata(None).to_pandas()
    names = set(table.column_names)
    if not all(str(c) in names for c in frame.columns):  # the metadata renamed a column
        return table.replace_schema_metadata(None).to_pandas()
    return frame


def frame_to_columns(
    frame: pd.DataFrame,
    kind: str,
    *,
    columns: dict | None,
    source: str,
    first_line: int = 0,
    name: str | None = None,
    first_row: int = 0,
):
    """Build a Run or Qrels from a DataFrame (column detection and value checks).

    A run with no rows (an object in memory, not a file) is an empty Run: every qrels
    query is then missing from it (skipped, or scored 0 with ``missing_queries="zero"``).
    ``first_line``: the file's line number of the frame's first row (text tables); else a
    problem is placed by row, ``first_row`` being the rows of the file before this frame
    (a slice of a Parquet file read in batches).
    """
    if not isinstance(frame, pd.DataFrame):
        raise InputError(N_("expected a table"), source=source)
    if len(frame) == 0 and (first_line or kind == "qrels"):
        raise InputError(N_("the table has no rows"), source=source)
    if len(frame) == 0:
        return Run([], [], np.zeros(0), name=name or "run", source=source)
    roles = detect_columns(frame.columns, kind, columns, source)
    vcol = roles["score" if kind == "run" else "relevance"]

    def locate(i: int) -> dict:
        if first_line:
            return {"line": i + first_line}
        return {"problem_prefix": row_prefix(i + first_row)}

    values = to_numbers(
        frame[vcol],
        what=vcol,
        source=source,
        locate=locate,
        hint=Phrase(N_("Every row needs a numeric {column}"), {"column": vcol}),
    )
    if is_rank_column(roles, columns, kind):
        values = -values  # rank 1 is best: a higher score must mean better
    lines = (np.arange(len(frame)) + first_line) if first_line else None
    qid = _id_column(frame[roles["query_id"]], Phrase(N_("query id")), source, locate)
    did = _id_column(frame[roles["doc_id"]], Phrase(N_("document id")), source, locate)
    out: Run | Qrels
    if kind == "run":
        out = Run(qid, did, values, name=name or "run", source=source, line_numbers=lines)
    else:
        out = Qrels(qid, did, values, source=source, line_numbers=lines)
    out.columns_used = dict(roles)
    out.column_candidates = {
        role: [c for c in candidate_columns(frame.columns, role) if c != col]
        for role, col in roles.items()
        if role in ("query_id", "doc_id")
    }
    return out


def row_prefix(i: int) -> Phrase:
    """The prefix "row i+1: ", the place of a problem in a table without line numbers."""
    return Phrase(N_("row {row}: "), {"row": i + 1})


def _id_column(
    series: pd.Series, what: str = "id", source: str = "<table>", locate=None
) -> pa.Array:
    """Ids as an Arrow string array: scalars only (no lists or structs), none empty."""

    def fail(mask, problem):
        i = int(np.flatnonzero(mask)[0])
        where = (locate or (lambda j: {"problem_prefix": row_prefix(j)}))(i)
        prefix = where.pop("problem_prefix", "")
        raise InputError(
            prefixed(prefix, problem(i)) if prefix else problem(i),
            source=source,
            hint=Phrase(N_("Every row needs a {what} (a text or a whole number)"), {"what": what}),
            **where,
        )

    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        arr = series.to_numpy()
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            fail(
                ~np.isfinite(arr),
                lambda i: Phrase(
                    N_("empty or non-finite {what} ({value})"),
                    {"what": what, "value": show(arr[i])},
                ),
            )
        return pa.array(arr)
    obj = series.astype(object).to_numpy()
    compound = np.fromiter(
        (isinstance(v, (list, tuple, dict, set, np.ndarray, bytes, bytearray)) for v in obj),
        dtype=bool,
        count=len(obj),
    )
    if compound.any():
        fail(
            compound,
            lambda i: Phrase(
                N_("the {what} is a {type}, not a single value"),
                {"what": what, "type": type(obj[i]).__name__},
            ),
        )
    missing = pd.isna(series).to_numpy(dtype=bool)
    text = [
        None if m else (v if isinstance(v, str) else str(v))
        for v, m in zip(obj, missing, strict=True)
    ]
    empty = missing | np.fromiter(
        (t is not None and not t.strip() for t in text), dtype=bool, count=len(text)
    )
    if empty.any():
        fail(empty, lambda i: Phrase(N_("empty {what}"), {"what": what}))
    return pa.array(text, type=pa.string())


def json_to_frame(obj, kind: str, source: str) -> pd.DataFrame:
    """JSON shapes: a list of row objects, {"rows": [...]}, or {qid: {docid: value}}."""
    if isinstance(obj, list):
        if not obj:
            raise InputError(N_("the JSON list is empty"), source=source)
        if not all(isinstance(r, dict) for r in obj):
            raise InputError(N_("a JSON list must hold row objects"), source=source)
        return pd.DataFrame(obj)
    if isinstance(obj, dict):
        for key in ("rows", "data", "records", "run", "qrels"):
            if isinstance(obj.get(key), list):
                return json_to_frame(obj[key], kind, source)
        if obj and all(isinstance(v, dict) for v in obj.values()):
            return nested_to_frame(obj, kind, source)
    raise InputError(
        N_("unrecognised JSON shape"),
        source=source,
        hint=N_(
            'use a list of rows [{"query_id":..., "doc_id":..., "score":...}] '
            'or {"qid": {"docid": value}}'
        ),
    )


def nested_to_frame(obj: Mapping, kind: str, source: str) -> pd.DataFrame:
    """{qid: {docid: value}} (pytrec_eval / ranx shape) to a long DataFrame.

    As in trec_eval (and pytrec_eval, whose input this is), a query whose mapping is empty
    (``{"q": {}}``) has no ranking: it is absent from the run, skipped or scored 0 as
    ``missing_queries`` says, and listed among the missing queries. A run mapping with no
    pairs at all is an empty run (every qrels query missing); qrels need a pair.
    """
    vname = "score" if kind == "run" else "relevance"  # a column name, as in the table
    q, d, v = [], [], []
    for qid, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise InputError(
                N_("query {query}: expected a {{doc_id: {column}}} mapping"),
                source=source,
                params={"query": repr(qid), "column": vname},
            )
        for did, val in docs.items():
            q.append(str(qid))
            d.append(str(did))
            v.append(val)
    if not q and kind == "qrels":
        raise InputError(N_("no (query, document) pairs in the mapping"), source=source)
    return pd.DataFrame(
        {
            "query_id": pd.Series(q, dtype=object),
            "doc_id": pd.Series(d, dtype=object),
            vname: pd.Series(v, dtype=object),
        }
    )


# -- a run in batches -------------------------------------------------------------------


def parquet_batches(
    open_batches, source: str, columns=None, first_row: int = 0, limits: Limits | None = None
):
    """The record batches of a Parquet run as tables of
    :data:`~metrics_core.io.batches.SCHEMA`, each converted as the whole-file reader
    converts the table (same column detection and checks).

    ``open_batches``: a callable without arguments that opens the file and returns its
    batches (``ParquetFile.iter_batches``); Arrow's errors, there or later, become one
    :class:`InputError` naming ``source``. ``first_row``: the file's rows before the first
    batch; a problem is named by its row in the file, and the ``line`` column holds those
    row numbers. Each batch's texts are measured (:func:`decoded_table`, against ``limits``)
    before they are decoded."""
    limits = resolve(limits)
    at = first_row
    try:
        for batch in open_batches():
            batch = decoded_table(batch, source, limits, whole=False)
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


def parquet_run_batches(
    raw: RawData, columns, batch_rows: int, row_groups=None, first_row: int = 0
):
    """The opener of a Parquet run's batches (all its row groups, or ``row_groups``; the
    footer checked first: a forged one is refused before any data is read)."""
    if raw.head(4) != PARQUET_MAGIC:
        raise InputError(
            N_("not a Parquet file (no PAR1 header)"),
            source=raw.name,
            hint=N_("Give a .parquet file, or choose another format"),
        )

    def batches():
        pf = parquet_file(raw.path if raw.path is not None else pa.BufferReader(raw.data))
        check_parquet_metadata(pf.metadata, raw.size(), raw.name, raw.limits, whole=False)
        groups = None if row_groups is None else list(row_groups)
        return pf.iter_batches(batch_size=batch_rows, row_groups=groups)

    def opener():
        return parquet_batches(batches, raw.name, columns, first_row, raw.limits)

    return opener


def text_table_batches(raw: RawData, fmt: str, columns, batch_rows: int):
    """The opener of a CSV/TSV run's batches: pandas' chunked reader with the whole-file
    table reader's options, each chunk converted by :func:`frame_to_columns`; where the
    chunked reader cannot follow the whole reader (a malformed row, text that is not
    UTF-8), :class:`~metrics_core.io.batches.NotStreamable`."""

    def opener():
        check_text(raw, sample=1 << 16)
        check_lines(raw)  # pandas would hold a line of any length whole
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
