"""Objects researchers already hold, as tables: read by their shape, never by importing
their package.

* pyarrow ``Table`` / ``RecordBatch``;
* polars ``DataFrame`` (through Arrow: ``to_arrow()``), or any object whose module is
  polars' and that offers ``to_arrow``;
* objects with ``to_dataframe()`` (ranx ``Qrels`` / ``Run``: columns ``q_id``, ``doc_id``,
  ``score``) or ``to_dict()`` giving ``{qid: {docid: value}}``;
* lists, tuples and any other iterable (a generator is read once) of records:
  namedtuples (ir_datasets ``TrecQrel`` / ``ScoredDoc``, ir_measures ``Qrel`` /
  ``ScoredDoc``) or dicts with the usual field names (:mod:`metrics_core.io.columns`),
  or plain ``(query_id, doc_id, value)`` tuples.

>>> from collections import namedtuple
>>> Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")
>>> records_to_frame([Qrel("q1", "d1", 1, "0")], "qrels", "<list>").columns.tolist()
['query_id', 'doc_id', 'relevance', 'iteration']
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping

import pandas as pd

from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.tables import arrow_to_pandas

#: Records read from one iterable at most (a generator that never ends is refused).
MAX_RECORDS = 200_000_000


def _module_of(obj) -> str:
    return type(obj).__module__.split(".", 1)[0]


def arrow_to_frame(obj, source: str) -> pd.DataFrame:
    """A pyarrow Table / RecordBatch (or an object giving one with ``to_arrow``) as a frame."""
    import pyarrow as pa

    try:
        table = obj if isinstance(obj, (pa.Table, pa.RecordBatch)) else obj.to_arrow()
        if not isinstance(table, (pa.Table, pa.RecordBatch)):
            raise TypeError(type(table).__name__)
        return arrow_to_pandas(table)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise InputError(
            N_("cannot read this {type} as a table ({error})"),
            source=source,
            hint=N_("Give a table with query id, document id and value columns"),
            params={"type": type(obj).__name__, "error": type(exc).__name__},
        ) from None


def object_as_table(obj, kind: str, source: str):
    """``obj`` as a DataFrame or a ``{qid: {docid: value}}`` mapping; None when ``obj``
    is not an object of this module's kinds (a path, bytes, a file ...)."""
    import sys

    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(obj, (pa.Table, pa.RecordBatch)):
        return arrow_to_frame(obj, source)
    if _module_of(obj) == "polars" and hasattr(obj, "to_arrow"):
        return arrow_to_frame(obj, source)
    if (
        isinstance(obj, (str, bytes, bytearray, memoryview))
        or hasattr(obj, "read")
        or hasattr(obj, "__fspath__")
    ):
        return None
    to_frame = getattr(obj, "to_dataframe", None)
    if callable(to_frame):
        frame = _call(to_frame, obj, source)
        if isinstance(frame, pd.DataFrame):
            return frame
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        value = _call(to_dict, obj, source)
        if isinstance(value, Mapping):
            return value
    if isinstance(obj, Iterable) and not isinstance(obj, Mapping):
        return records_to_frame(obj, kind, source)
    return None


def _call(method, obj, source: str):
    try:
        return method()
    except Exception as exc:  # a third-party object: whatever it raises is its own
        raise InputError(
            N_("{call}() failed ({error})"),
            source=source,
            hint=N_("Give the data as a DataFrame or {{qid: {{docid: value}}}}"),
            params={"call": f"{type(obj).__name__}.{method.__name__}", "error": type(exc).__name__},
        ) from None


def records_to_frame(records: Iterable, kind: str, source: str) -> pd.DataFrame:
    """An iterable of namedtuples, dicts or ``(query_id, doc_id, value)`` tuples as a frame.

    All records must have the same shape as the first one. An empty iterable gives an
    empty frame (an empty run, or the "no rows" error for qrels).
    """
    vname = "score" if kind == "run" else "relevance"
    it = iter(records)
    rows = list(itertools.islice(it, MAX_RECORDS))
    if next(it, None) is not None:
        raise InputError(
            N_("more than {count} records"),
            source=source,
            hint=N_("Split the data"),
            params={"count": f"{MAX_RECORDS:,}"},
        )
    if not rows:
        return pd.DataFrame({"query_id": [], "doc_id": [], vname: []})
    first = rows[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        fields = tuple(first._fields)
        _same_shape(
            rows,
            lambda r: isinstance(r, tuple) and getattr(r, "_fields", None) == fields,
            Phrase(N_("a {type}"), {"type": type(first).__name__}),
            source,
        )
        cols = list(zip(*rows, strict=True))
        return pd.DataFrame({f: list(col) for f, col in zip(fields, cols, strict=True)})
    if isinstance(first, Mapping):
        _same_shape(rows, lambda r: isinstance(r, Mapping), Phrase(N_("a dict")), source)
        return pd.DataFrame.from_records([dict(r) for r in rows])
    if isinstance(first, (tuple, list)) and len(first) == 3:
        _same_shape(
            rows,
            lambda r: isinstance(r, (tuple, list)) and len(r) == 3,
            Phrase(N_("a (query_id, doc_id, value) tuple")),
            source,
        )
        q, d, v = (list(col) for col in zip(*rows, strict=True))
        return pd.DataFrame({"query_id": q, "doc_id": d, vname: v})
    raise InputError(
        N_(
            "record 1 is {kind}: expected a namedtuple, a dict or a (query_id, doc_id, {column}) tuple"
        ),
        source=source,
        hint=N_(
            "e.g. ir_measures.Qrel / ScoredDoc, ir_datasets TrecQrel, or "
            "{{'query_id': ..., 'doc_id': ..., '{column}': ...}}"
        ),
        params={"kind": _describe(first), "column": vname},
    )


def _describe(value) -> str:
    if isinstance(value, (tuple, list)):
        return Phrase(
            N_("a {type} of {count} values"), {"type": type(value).__name__, "count": len(value)}
        )
    return "None" if value is None else Phrase(N_("a {type}"), {"type": type(value).__name__})


def _same_shape(rows: list, ok, what: str, source: str) -> None:
    bad = next((i for i, r in enumerate(rows) if not ok(r)), None)
    if bad is not None:
        raise InputError(
            N_("record {number} is {kind}, record 1 {what}"),
            source=source,
            hint=N_("Give every record in the same form"),
            params={"number": bad + 1, "kind": _describe(rows[bad]), "what": what},
        )
