"""Subtopic qrels: the judgements of the diversity measures, per subtopic (intent).

ndeval's lines ``qid subtopic docid judgement`` -- a TREC qrels file whose second column
(the "iteration" of an ordinary qrels file) names the subtopic -- and the same judgements
as a table (a ``subtopic`` or ``iteration`` column beside the usual three), a mapping
``{qid: {subtopic: {docid: label}}}`` or records (pyndeval's ``SubtopicQrel``, ir_measures'
``Qrel`` with its ``iteration``, ``(qid, subtopic, docid, label)`` tuples).
:func:`read_subtopic_qrels` gives a :class:`~metrics_core.data.SubtopicQrels`; a bad line
is an :class:`~metrics_core.errors.InputError` naming the file and the line.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from metrics_core.data import Qrels, Run, SubtopicQrels
from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.formats import is_trec
from metrics_core.io.limits import over_field
from metrics_core.io.source import RawData, read_source
from metrics_core.io.text_check import check_text, text_lines
from metrics_core.io.trec import (
    any_empty,
    arrow_csv_options,
    check_fields,
    comment_or_blank,
    data_fields,
    long_field,
    other_separators,
    quoted_line,
    regular_delimiter_of,
)
from metrics_core.validation import INPUT_FORMATS, parse_number

__all__ = [
    "ONE_SUBTOPIC",
    "SUBTOPIC_FORMAT",
    "SUBTOPIC_COLUMNS",
    "looks_like_subtopics",
    "read_subtopic_qrels",
    "warn_one_subtopic",
]

#: a subtopic qrels line
SUBTOPIC_FORMAT = "qid subtopic docid relevance"
#: the names a table gives its subtopic column (compared case-insensitively)
SUBTOPIC_COLUMNS = ("subtopic", "subtopic_id", "iteration", "intent", "aspect", "iter")


#: the warning when judgements without subtopics are read for the diversity measures
ONE_SUBTOPIC = N_(
    "the qrels have no subtopics: every judgement counts for one subtopic, as ndeval reads a "
    "qrels file whose second column is the same everywhere. Read subtopic qrels (qid subtopic "
    "docid relevance) with read_qrels(..., subtopics=True)"
)


def warn_one_subtopic(stacklevel: int = 3) -> None:
    """Warn that judgements without subtopics are read as one subtopic (ir_measures and
    ndeval read them so)."""
    import warnings

    from metrics_core.errors import InputWarning

    warnings.warn(InputWarning(ONE_SUBTOPIC), stacklevel=stacklevel)


def _lines_are() -> Phrase:
    return Phrase(N_("subtopic qrels lines are: {layout}"), {"layout": SUBTOPIC_FORMAT})


def read_subtopic_qrels(
    source,
    fmt: str = "auto",
    columns: dict | None = None,
    name: str | None = None,
    *,
    max_bytes: int | None = None,
) -> SubtopicQrels:
    """Read subtopic (intent) judgements for the diversity measures.

    Parameters
    ----------
    source : path, bytes, file-like, DataFrame, mapping, records, or a SubtopicQrels
        TREC lines ``qid subtopic docid relevance`` (ndeval's qrels: the second column is
        the subtopic); a table (CSV/TSV/Parquet/JSON or a DataFrame) with a subtopic
        column (:data:`SUBTOPIC_COLUMNS`, or ``columns={"subtopic": NAME}``) beside the
        query, document and relevance columns; ``{qid: {subtopic: {docid: label}}}``;
        records ``(qid, subtopic, docid, label)`` or named tuples with a ``subtopic_id``,
        ``subtopic`` or ``iteration`` field.
    fmt, columns, name, max_bytes
        As :func:`metrics_core.io.read_qrels`.

    Returns
    -------
    SubtopicQrels

    Examples
    --------
    >>> q = read_subtopic_qrels(b"1 1 a 1\\n1 2 a 1\\n1 2 b 0\\n")
    >>> q.subtopic_names, q.doc_ids.tolist(), q.relevance.tolist()
    (['1', '2'], ['a', 'b'], [1.0, 0.0])
    >>> read_subtopic_qrels({"q": {"s1": {"a": 1}, "s2": {"a": 1, "b": 1}}}).pair_ptr.tolist()
    [0, 2, 3]
    """
    if isinstance(source, SubtopicQrels):
        return source
    if isinstance(source, (Qrels, Run)):
        raise InputError(
            N_("these qrels have no subtopics"),
            source=source.source,
            hint=N_(
                "Read the subtopic qrels from their file (qid subtopic docid relevance), a "
                "table with a subtopic column, or {{qid: {{subtopic: {{docid: label}}}}}}"
            ),
        )
    if fmt not in INPUT_FORMATS:
        raise InputError(
            N_("unknown format {format}"),
            hint=N_("accepted: {formats}"),
            params={"format": repr(fmt), "formats": ", ".join(INPUT_FORMATS)},
        )
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(source, pandas.DataFrame):
        return _from_frame(source, columns, name or "<DataFrame>", 0)
    if isinstance(source, Mapping):
        return _from_mapping(source, name or "<dict>")
    if not isinstance(source, (str, bytes, bytearray, memoryview, os.PathLike)) and not hasattr(
        source, "read"
    ):
        return _from_records(source, name or f"<{type(source).__name__}>")
    raw = read_source(source, name, max_bytes=max_bytes)
    if fmt in ("trec", "msmarco") or (fmt == "auto" and is_trec(raw, "qrels")):
        return _from_trec(raw)
    import pandas as pd

    from metrics_core.io.tables import json_to_frame, read_table_frame

    frame, first_line = read_table_frame(raw, fmt)
    if not isinstance(frame, pd.DataFrame):
        frame = json_to_frame(frame, "qrels", raw.name)
        first_line = 0
    return _from_frame(frame, columns, raw.name, first_line)


#: The second whitespace-separated field of every line of two fields or more (``bytes.split``'s
#: whitespace), leading whitespace allowed: a superset of the lines :func:`looks_like_subtopics`
#: reads.
_SECOND_FIELD = re.compile(rb"^[ \t\r\x0b\x0c]*[^\s]+[ \t\r\x0b\x0c]+([^\s]+)", re.MULTILINE)


def looks_like_subtopics(source) -> bool:
    """Whether a TREC qrels text (a path, bytes or an upload's bytes) names more than one
    subtopic for a query: two lines judging the same (query, document) with different
    second columns, as ndeval's qrels do and ordinary qrels never do. Reads at most the
    first 4 MiB."""
    try:
        raw = read_source(source)
        if not is_trec(raw, "qrels"):
            return False
        head = raw.head(1 << 22)
    except InputError:
        return False
    if len(set(_SECOND_FIELD.findall(head))) < 2:
        # one second column on every line (ordinary qrels: "0"): no (query, document) can
        # name two; found in C, where the loop below took 0.35 s for 100,000 judgements
        return False
    seen: dict[tuple[bytes, bytes], bytes] = {}
    for line in head.split(b"\n")[:-1] if len(head) == 1 << 22 else head.split(b"\n"):
        parts = line.split()
        if len(parts) != 4 or line.startswith(b"#"):
            continue
        key = (parts[0], parts[2])
        if seen.setdefault(key, parts[1]) != parts[1]:
            return True
    return False


# --- TREC lines -------------------------------------------------------------------------


def _from_trec(raw: RawData) -> SubtopicQrels:
    raw.check_whole()  # read whole, from the disk too: bounded by the input limit
    if not raw.head(1 << 16).strip() and not raw.data.strip():
        raise InputError(N_("the file is empty"), source=raw.name, hint=_lines_are())
    check_text(raw, sample=1 << 16)
    parsed = _fast(raw) or _slow(raw)
    qid, sub, did, rel, lines = parsed
    return SubtopicQrels.from_judgements(qid, sub, did, rel, source=raw.name, line_numbers=lines)


def _fast(raw: RawData):
    """Arrow's CSV reader on a regular file (one delimiter, four fields a line, no comment
    or blank line); None otherwise (the line reader names the problem)."""
    delim = regular_delimiter_of(raw.head(1 << 16), "qrels")
    if delim is None or other_separators(raw, delim):
        return None
    read, parse, convert = arrow_csv_options(
        "qrels", delim, qid_type=pa.string(), block_size=1 << 22
    )
    try:
        table = pacsv.read_csv(
            raw.arrow_source(), read_options=read, parse_options=parse, convert_options=convert
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    qid, did, vals, sub = table.column_names
    if comment_or_blank(table.column(qid)) or any(any_empty(table.column(c)) for c in (did, sub)):
        return None
    check_fields(raw.name, raw.limits, (table.column(qid), table.column(did)))
    try:
        subtopic = table.column(sub).cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    values = table.column(vals).to_numpy()
    if not np.isfinite(values).all():
        return None
    lines = np.arange(1, len(values) + 1, dtype=np.int64)
    return table.column(qid), subtopic, table.column(did), values, lines


def _slow(raw: RawData):
    qids, subs, dids, vals, lines = [], [], [], [], []
    for number, line in text_lines(raw):
        fields = data_fields(line)
        if fields is None:
            continue
        stripped, parts = fields
        if quoted_line(stripped, parts, "qrels"):
            raise InputError(
                N_(
                    'a double quote (") in the line: TREC files are not quoted, and ids '
                    "cannot contain spaces"
                ),
                source=raw.name,
                line=number,
                hint=_lines_are(),
            )
        if len(parts) != 4:
            raise InputError(
                N_("expected {want} columns, found {got}"),
                source=raw.name,
                line=number,
                hint=_lines_are(),
                params={"want": 4, "got": len(parts)},
            )
        long = long_field(parts, "qrels", raw.limits.field_bytes)
        if long is not None:
            what = N_("query id") if len(parts[0].encode()) == long else N_("document id")
            raise over_field(raw.name, Phrase(what), long, raw.limits.field_bytes).replace(
                line=number
            )
        value = parse_number(parts[3])
        if value is None or not np.isfinite(value):
            raise InputError(
                N_("{what} {value} is not a number"),
                source=raw.name,
                line=number,
                hint=_lines_are(),
                params={"what": Phrase(N_("relevance")), "value": repr(parts[3])},
            )
        qids.append(parts[0])
        subs.append(parts[1])
        dids.append(parts[2])
        vals.append(value)
        lines.append(number)
    if not qids:
        raise InputError(
            N_("no data lines: the file is empty (or only comments)"),
            source=raw.name,
            hint=_lines_are(),
        )
    return qids, subs, dids, np.asarray(vals, dtype=np.float64), np.asarray(lines)


# --- tables, mappings, records -------------------------------------------------------------


def _subtopic_column(frame, columns: dict | None, source: str) -> str | None:
    """The subtopic column of a table (None when it has none)."""
    wanted = (columns or {}).get("subtopic")
    if wanted is not None:
        if wanted not in frame.columns:
            raise InputError(
                N_("no column {column!r}"),
                source=source,
                hint=N_("columns: {columns}"),
                params={"column": wanted, "columns": ", ".join(map(str, frame.columns))},
            )
        return wanted
    by_name = {str(c).lower(): c for c in frame.columns}
    return next((by_name[n] for n in SUBTOPIC_COLUMNS if n in by_name), None)


def _from_frame(frame, columns: dict | None, source: str, first_line: int) -> SubtopicQrels:
    from metrics_core.io.tables import frame_to_columns

    sub = _subtopic_column(frame, columns, source)
    rest = {k: v for k, v in (columns or {}).items() if k != "subtopic"} or None
    plain = frame_to_columns(
        frame if sub is None else frame.drop(columns=[sub]),
        "qrels",
        columns=rest,
        source=source,
        first_line=first_line,
    )
    if sub is None:  # no subtopic column: one subtopic, as ir_measures reads such qrels
        warn_one_subtopic(5)
        names = ["0"] * len(plain)
    else:
        values = frame[sub]
        if values.isna().any():
            i = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise InputError(
                N_("missing subtopic in row {row}"),
                source=source,
                hint=N_("Every row needs a subtopic"),
                params={"row": i + 1},
            )
        names = [_text(v) for v in values.tolist()]
    return SubtopicQrels.from_judgements(
        plain.qid,
        names,
        plain.docid,
        plain.relevance,
        source=source,
        line_numbers=plain.line_numbers,
    )


def _text(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _from_mapping(obj: Mapping, source: str) -> SubtopicQrels:
    """``{qid: {subtopic: {docid: label}}}``; ``{qid: {docid: label}}`` (no subtopics) is
    one subtopic, with a warning."""
    qids, subs, dids, vals = [], [], [], []
    flat = False
    for q, by_sub in obj.items():
        if not isinstance(by_sub, Mapping):
            raise InputError(
                N_("query {query}: expected {{subtopic: {{docid: label}}}}"),
                source=source,
                params={"query": repr(q)},
            )
        for s, docs in by_sub.items():
            if not isinstance(docs, Mapping):
                flat = True
                docs, s = {s: docs}, "0"
            for d, v in docs.items():
                qids.append(_text(q))
                subs.append(_text(s))
                dids.append(_text(d))
                vals.append(v)
    if flat:
        if any(isinstance(d, Mapping) for by_sub in obj.values() for d in by_sub.values()):
            raise InputError(
                N_("expected {{qid: {{subtopic: {{docid: label}}}}}} throughout"),
                source=source,
            )
        warn_one_subtopic(5)
    if not qids:
        raise InputError(N_("the table has no rows"), source=source)
    return SubtopicQrels.from_judgements(qids, subs, dids, _numbers(vals, source), source=source)


def _from_records(records, source: str) -> SubtopicQrels:
    qids, subs, dids, vals = [], [], [], []
    for i, r in enumerate(records):
        fields = getattr(r, "_fields", None)
        if fields is not None:
            sub_field = next(
                (f for f in ("subtopic_id", "subtopic", "iteration") if f in fields), None
            )
            if not {"query_id", "doc_id", "relevance"} <= set(fields):
                raise InputError(
                    N_("record {row} is not (qid, subtopic, docid, relevance)"),
                    source=source,
                    hint=N_("Records are (qid, subtopic, docid, relevance)"),
                    params={"row": i + 1},
                )
            s = getattr(r, sub_field) if sub_field is not None else None
            q, d, v = r.query_id, r.doc_id, r.relevance
        elif isinstance(r, (tuple, list)) and len(r) == 4:
            q, s, d, v = r
        elif isinstance(r, (tuple, list)) and len(r) == 3:
            (q, d, v), s = r, None
        else:
            raise InputError(
                N_("record {row} is not (qid, subtopic, docid, relevance)"),
                source=source,
                hint=N_("Records are (qid, subtopic, docid, relevance)"),
                params={"row": i + 1},
            )
        qids.append(_text(q))
        subs.append(s)
        dids.append(_text(d))
        vals.append(v)
    if not qids:
        raise InputError(N_("the table has no rows"), source=source)
    if any(s is None for s in subs):  # records without a subtopic: one, as ir_measures
        warn_one_subtopic(5)
    subs = ["0" if s is None else _text(s) for s in subs]
    return SubtopicQrels.from_judgements(qids, subs, dids, _numbers(vals, source), source=source)


def _numbers(values: list, source: str) -> np.ndarray:
    from metrics_core.validation import to_numbers

    return to_numbers(values, what=Phrase(N_("relevance")), source=source)
