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
from metrics_core.io.limits import Limits, resolve
from metrics_core.io.parquet import check_parquet_metadata, decoded_table, parquet_file
from metrics_core.io.source import PARQUET_MAGIC, RawData
from metrics_core.io.text_check import check_json, check_lines, check_text, line_of_offset
from metrics_core.io.trec import check_fields
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
    check_text(raw, lines=fmt != "json")  # lines measured before the data is read (a JSON
    data = raw.data  # document may be one line: its size and depth are measured instead)
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
    limits: Limits | None = None,
):
    """Build a Run or Qrels from a DataFrame (column detection and value checks).

    A run with no rows (an object in memory, not a file) is an empty Run: every qrels
    query is then missing from it (skipped, or scored 0 with ``missing_queries="zero"``).
    ``first_line``: the file's line number of the frame's first row (text tables); else a
    problem is placed by row, ``first_row`` being the rows of the file before this frame
    (a slice of a Parquet file read in batches). ``limits``: the frame was read from a
    file, whose ids must be within the field limit (None: an object in memory, not
    checked).
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
    if limits is not None:
        check_fields(source, limits, (qid, did))
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
                    frame,
                    "run",
                    columns=columns,
                    source=raw.name,
                    first_line=2 + at,
                    limits=raw.limits,
                )
                lines = np.arange(2 + at, 2 + at + len(frame), dtype=np.int64)
                at += len(frame)
                yield table_of(run, lines)
        except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
            raise NotStreamable(str(exc)) from None

    return opener
