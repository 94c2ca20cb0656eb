"""Readers: TREC run/qrels, CSV/TSV/Parquet/JSON(L) tables, gzip, and Python objects.

:func:`read_run` and :func:`read_qrels` take a path, bytes, a file-like object, a pandas
DataFrame, a ``{qid: {docid: value}}`` mapping, or an existing Run/Qrels, and always give
a :class:`~metrics_core.data.Run` / :class:`~metrics_core.data.Qrels`.
:func:`open_run_stream` reads a run file in batches (the streamed and Dask evaluations),
by the same format dispatch (:func:`~metrics_core.io.formats.input_format`) and parsers.
Every problem is an :class:`~metrics_core.errors.InputError` naming the file, the line
and what to do.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

import numpy as np

from metrics_core.data import Qrels, Run
from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.batches import BATCH_ROWS, NotStreamable, RunStream, run_stream
from metrics_core.io.formats import input_format
from metrics_core.io.limits import Limits, current_limits, using_limits
from metrics_core.io.source import RawData, read_source
from metrics_core.io.trec import parse_msmarco_run, parse_trec_qrels, parse_trec_run
from metrics_core.io.trec_pieces import trec_run_batches
from metrics_core.validation import INPUT_FORMATS

__all__ = [
    "read_run",
    "read_qrels",
    "open_run_stream",
    "run_stream",
    "RunStream",
    "NotStreamable",
    "BATCH_ROWS",
    "Limits",
    "current_limits",
    "using_limits",
    "from_lists",
    "from_relevance_vectors",
    "detect_columns",
    "INPUT_FORMATS",
    "Run",
    "Qrels",
]


def _read(
    source,
    kind: str,
    fmt: str,
    columns,
    name,
    max_bytes: int | None = None,
    limits: Limits | None = None,
):
    if fmt not in INPUT_FORMATS:
        raise InputError(
            N_("unknown format {format}"),
            hint=N_("accepted: {formats}"),
            params={"format": repr(fmt), "formats": ", ".join(INPUT_FORMATS)},
        )
    if isinstance(source, (Run, Qrels)):
        want = Run if kind == "run" else Qrels
        if not isinstance(source, want):
            raise InputError(
                N_("expected {want}, got {got}"),
                params={"want": want.__name__, "got": type(source).__name__},
            )
        if name and isinstance(source, Run):  # kind == "run"
            source.name = str(name)
        return source
    # the table readers (and pandas, 0.3 s to import) load only when a table comes in:
    # a TREC file never needs them. Without pandas imported, nothing is a DataFrame.
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(source, pandas.DataFrame):
        from metrics_core.io.tables import frame_to_columns

        return frame_to_columns(
            source, kind, columns=columns, source=name or "<DataFrame>", name=name
        )
    if not isinstance(source, (str, bytes, bytearray, memoryview, os.PathLike)) and not hasattr(
        source, "read"
    ):
        return _read_object(source, kind, columns, name)
    raw = read_source(source, None if kind == "run" else name, max_bytes=max_bytes, limits=limits)
    return read_whole(raw, kind, input_format(raw, kind, fmt), columns, name)


def read_whole(raw: RawData, kind: str, fmt: str, columns=None, name: str | None = None):
    """A file's Run or Qrels read whole, in the format :func:`input_format` gave."""
    run_name = name if kind == "run" else None
    if fmt == "msmarco":
        return parse_msmarco_run(raw, run_name)
    if fmt == "trec":
        return parse_trec_run(raw, run_name) if kind == "run" else parse_trec_qrels(raw)
    import pandas as pd

    from metrics_core.io.tables import frame_to_columns, json_to_frame, read_table_frame

    frame, first_line = read_table_frame(raw, fmt)
    if not isinstance(frame, pd.DataFrame):
        frame = json_to_frame(frame, kind, raw.name)
        first_line = 0
    return frame_to_columns(
        frame,
        kind,
        columns=columns,
        source=raw.name,
        first_line=first_line,
        name=run_name or raw.stem,
        limits=raw.limits,
    )


def open_run_stream(
    source,
    name: str | None = None,
    fmt: str = "auto",
    columns: dict | None = None,
    batch_rows: int = BATCH_ROWS,
    *,
    row_groups=None,
    first_row: int = 0,
    limits: Limits | None = None,
) -> RunStream:
    """The batch reader: ``source`` (a path, bytes or file-like object) opened for reading
    in batches of :data:`~metrics_core.io.batches.SCHEMA` rows, by the same format
    dispatch (:func:`input_format`) and the same parsers as :func:`read_run`, so every
    value equals what :func:`read_run` gives for the same row. TREC runs are read in
    pieces of whole lines (:func:`~metrics_core.io.trec_pieces.trec_run_batches`), Parquet by
    slices of row groups (``row_groups``: only these; ``first_row``: the file's rows
    before them), CSV/TSV in chunks (:mod:`metrics_core.io.tables`). ``limits`` (default:
    the limits in force): a batch, not the run, is held at once, so the input limit bounds
    what one batch decodes to (and a compressed source's decoded total, which goes to a
    file on a disk); the line and field limits hold as in :func:`read_run`.

    Raises
    ------
    NotStreamable
        When the source is not a file or bytes, or its format is read whole (MS MARCO,
        JSON), or it is empty: the caller reads it with :func:`read_run`.
    InputError
        For an unreadable source (missing file, binary data ...), as :func:`read_run`.
    """
    if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview)) and not hasattr(
        source, "read"
    ):
        raise NotStreamable("not a file")
    raw = read_source(source, None, limits=limits)
    if raw.size() == 0:
        raise NotStreamable("empty")
    fmt = input_format(raw, "run", fmt)
    if fmt == "trec":
        stream = trec_run_batches(raw, batch_rows)
        if stream is None:
            raise NotStreamable("empty")
        tag, opener = stream
        return RunStream(name or raw.stem or tag or "run", raw.name, opener)
    if fmt == "parquet":
        from metrics_core.io.tables import parquet_run_batches

        opener = parquet_run_batches(raw, columns, batch_rows, row_groups, first_row)
        return RunStream(name or raw.stem, raw.name, opener)
    if fmt in ("csv", "tsv"):
        from metrics_core.io.tables import text_table_batches

        opener = text_table_batches(raw, fmt, columns, batch_rows)
        return RunStream(name or raw.stem, raw.name, opener)
    raise NotStreamable(f"{fmt} is read whole")


def _read_object(source, kind: str, columns, name):
    """Mappings, Arrow and polars tables, ranx objects, iterables of records."""
    import pandas as pd

    from metrics_core.io.objects import object_as_table
    from metrics_core.io.tables import frame_to_columns, nested_to_frame

    label = name or (f"<{type(source).__name__}>" if not isinstance(source, Mapping) else "<dict>")
    table = source if isinstance(source, Mapping) else object_as_table(source, kind, label)
    if table is None:
        raise InputError(
            N_("cannot read data from an object of type {type}"),
            source=label,
            hint=N_(
                "Pass a file path, bytes, a file object, a DataFrame, "
                "a dict {{qid: {{docid: value}}}} or a list of records"
            ),
            params={"type": type(source).__name__},
        )
    if isinstance(table, Mapping):
        return frame_to_columns(
            nested_to_frame(table, kind, label),
            kind,
            columns=None,
            source=label,
            name=name or getattr(source, "name", None) or None,
        )
    run_name = name or (
        getattr(source, "name", None) if isinstance(getattr(source, "name", None), str) else None
    )
    if not isinstance(table, pd.DataFrame):
        raise InputError(
            N_("cannot read data from an object of type {type}"),
            source=label,
            params={"type": type(source).__name__},
        )
    return frame_to_columns(table, kind, columns=columns, source=label, name=run_name)


def read_run(
    source,
    name: str | None = None,
    fmt: str = "auto",
    columns: dict | None = None,
    *,
    max_bytes: int | None = None,
    limits: Limits | None = None,
) -> Run:
    """Read a run (a ranking per query).

    Parameters
    ----------
    source : path, bytes, file-like, DataFrame, dict of dicts, Run, or an object in memory
        Files: TREC (``qid Q0 docid rank score tag``), MS MARCO (``qid pid rank``: the
        score is minus the rank, so the file's rank order is kept exactly), CSV/TSV,
        Parquet, JSON(L), compressed or not. Objects: pandas and polars DataFrames,
        pyarrow Tables, ranx ``Run`` (anything with ``to_dataframe()`` or ``to_dict()``),
        lists or iterables (read once) of namedtuples (ir_measures ``ScoredDoc``),
        dicts or ``(query_id, doc_id, score)`` tuples. Columns are found by the names
        the usual tools write (:mod:`metrics_core.io.columns`). An object with no rows
        (``{}``, ``[]``) is an empty run; ``{"q": {}}`` answers q with an empty ranking
        (evaluated, as :func:`from_lists` evaluates an empty list).
    name : str, optional
        The system's name; defaults to the file stem.
    fmt : {"auto", "trec", "msmarco", "csv", "tsv", "parquet", "json", "jsonl"}
    columns : dict, optional
        Explicit column mapping for tables: ``{"query_id": ..., "doc_id": ..., "score": ...}``
        (or ``"rank"``: a rank column, 1 is best).
    limits : Limits, optional
        What the reader may decode (:class:`~metrics_core.io.limits.Limits`: the input,
        line and field limits, JSON's depth; default: the limits in force,
        :func:`~metrics_core.io.limits.current_limits`, 1 GiB of input unless changed).
        Each is checked before the data is decoded -- a compressed file's output as it is
        decompressed, a Parquet file's metadata and dictionaries before its data, lines on
        the bytes -- and a refusal is one :class:`~metrics_core.errors.InputError` naming
        the file, what is too large and the limit.
    max_bytes : int, optional
        The input limit in bytes (an application's memory budget): replaces that of
        ``limits``.

    Examples
    --------
    >>> run = read_run(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n", name="bm25")
    >>> len(run), run.name, run.scores.tolist()
    (2, 'bm25', [2.5, 1.5])
    """
    run = _read(source, "run", fmt, columns, name, max_bytes, limits)
    if name:
        run.name = str(name)
    return run


def read_qrels(
    source,
    fmt: str = "auto",
    columns: dict | None = None,
    name: str | None = None,
    *,
    max_bytes: int | None = None,
    limits: Limits | None = None,
    subtopics: bool = False,
) -> Qrels:
    """Read relevance judgements (see :func:`read_run` for the accepted sources,
    ``limits`` and ``max_bytes``).

    ``subtopics=True`` reads judgements per subtopic, for the diversity measures
    (alpha-nDCG, ERR-IA ...): ndeval's ``qid subtopic docid relevance`` lines, a table
    with a subtopic column, ``{qid: {subtopic: {docid: label}}}`` or records; gives a
    :class:`~metrics_core.data.SubtopicQrels`
    (:func:`metrics_core.io.subtopics.read_subtopic_qrels`).

    TREC qrels (``qid iter docid relevance``) are recognised whatever the file's
    extension when the file has no header (MS MARCO's ``qrels.dev.tsv``). In a table,
    a lone ``score`` column is the relevance (BEIR, MTEB, ranx). Records: ir_datasets
    ``TrecQrel``, ir_measures ``Qrel``, dicts, ``(query_id, doc_id, relevance)`` tuples.

    Examples
    --------
    >>> qrels = read_qrels({"q1": {"d1": 1, "d3": 2}})
    >>> sorted(zip(qrels.doc_ids, qrels.relevance.tolist()))
    [('d1', 1.0), ('d3', 2.0)]
    """
    if subtopics:
        from metrics_core.io.subtopics import read_subtopic_qrels

        with using_limits(limits):
            return read_subtopic_qrels(source, fmt, columns, name, max_bytes=max_bytes)
    return _read(source, "qrels", fmt, columns, name, max_bytes, limits)


def from_lists(
    queries: Mapping[str, tuple[Sequence, Sequence]], name: str = "run"
) -> tuple[Run, Qrels]:
    """Per query a ``retrieved`` list (in rank order) and an ``expected`` list.

    Ranks become scores (first = highest). A query with an empty ``retrieved`` list is
    evaluated (it scores 0 on most measures), not treated as missing from the run.
    Duplicates in ``retrieved`` are kept as given: evaluate with ``duplicates="count"`` to
    count each occurrence;
    ``expected`` is a set (duplicates removed). Ids compare case-sensitively.

    Examples
    --------
    >>> run, qrels = from_lists({"q1": (["A", "B", "C"], ["A", "C", "F"])})
    >>> run.doc_ids.tolist(), run.scores.tolist(), sorted(qrels.doc_ids.tolist())
    (['A', 'B', 'C'], [3.0, 2.0, 1.0], ['A', 'C', 'F'])
    """
    if not isinstance(queries, Mapping):
        raise InputError(
            N_("expected a mapping {{query: (retrieved, expected)}}, got {type}"),
            source="<lists>",
            params={"type": type(queries).__name__},
        )
    rq, rd, rs, qq, qd = [], [], [], [], []
    for qid, pair in queries.items():
        _check_id(qid, Phrase(N_("query id")), "<lists>")
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InputError(
                N_("query {query}: expected a (retrieved, expected) pair, got {kind}"),
                source="<lists>",
                params={"query": repr(qid), "kind": _kind_of(pair)},
            )
        retrieved, expected = pair
        for what, ids in ((Phrase(N_("retrieved")), retrieved), (Phrase(N_("expected")), expected)):
            if isinstance(ids, (str, bytes)) or not isinstance(
                ids, (Sequence, set, frozenset, np.ndarray)
            ):
                raise InputError(
                    N_("query {query}: {what} must be a list of ids, got {kind}"),
                    source="<lists>",
                    params={"query": repr(qid), "what": what, "kind": _kind_of(ids)},
                )
            for d in ids:
                _check_id(
                    d,
                    Phrase(
                        N_("document id in {what} of query {query}"),
                        {"what": what, "query": repr(qid)},
                    ),
                    "<lists>",
                )
        n = len(retrieved)
        rq += [str(qid)] * n
        rd += [str(d) for d in retrieved]
        rs += list(range(n, 0, -1))
        seen = dict.fromkeys(str(d) for d in expected)
        qq += [str(qid)] * len(seen)
        qd += list(seen)
    run = Run(
        rq,
        rd,
        np.asarray(rs, dtype=np.float64),
        name=name,
        source="<lists>",
        extra_query_ids=[str(q) for q, (retrieved, _) in queries.items() if not len(retrieved)],
    )
    qrels = Qrels(
        qq,
        qd,
        np.ones(len(qq)),
        source="<lists>",
        extra_query_ids=[str(q) for q, (_, expected) in queries.items() if not expected],
    )
    return run, qrels


def _kind_of(value) -> str:
    return "None" if value is None else Phrase(N_("a {type}"), {"type": type(value).__name__})


def _check_id(value, what: str, source: str) -> None:
    """An id must be a non-empty text or a number (no None, no containers)."""
    if (
        value is None
        or isinstance(value, (list, tuple, dict, set, bytes, np.ndarray))
        or (isinstance(value, float) and value != value)
    ):
        raise InputError(
            N_("{what} is {kind}, not a text or a number"),
            source=source,
            hint=N_("Every id must be a non-empty text"),
            params={"what": what, "kind": _kind_of(value)},
        )
    if not str(value).strip():
        raise InputError(
            N_("empty {what}"),
            source=source,
            hint=N_("Every id must be a non-empty text"),
            params={"what": what},
        )


def from_relevance_vectors(
    vectors: Mapping[str, Sequence],
    num_relevant: Mapping[str, int] | None = None,
    name: str = "run",
) -> tuple[Run, Qrels]:
    """Per query the relevance labels of the retrieved list, in rank order.

    Each position becomes a document ``"<rank>"`` with that label. ``num_relevant`` adds
    unretrieved relevant documents so recall and AP see the collection's total
    (the collection's number of relevant documents); without it only the retrieved are
    judged.

    Examples
    --------
    >>> run, qrels = from_relevance_vectors({"q": [0, 2, 1]})
    >>> qrels.relevance.tolist()
    [0.0, 2.0, 1.0]
    """
    if not isinstance(vectors, Mapping):
        raise InputError(
            N_("expected a mapping {{query: labels}}, got {type}"),
            source="<vectors>",
            params={"type": type(vectors).__name__},
        )
    from metrics_core.validation import to_numbers

    rq, rd, rs, qq, qd, qr = [], [], [], [], [], []
    for qid, labels in vectors.items():
        _check_id(qid, Phrase(N_("query id")), "<vectors>")
        if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
            raise InputError(
                N_("query {query}: expected a list of relevance labels, got {kind}"),
                source="<vectors>",
                params={"query": repr(qid), "kind": _kind_of(labels)},
            )
        labels = list(labels)
        if labels:

            def locate(i: int, q: object = qid) -> dict:
                return {
                    "problem_prefix": Phrase(
                        N_("query {query}, position {position}: "),
                        {"query": repr(q), "position": i + 1},
                    )
                }

            to_numbers(
                labels, what=Phrase(N_("relevance label")), source="<vectors>", locate=locate
            )
        n = len(labels)
        docs = [f"{i + 1:06d}" for i in range(n)]
        rq += [str(qid)] * n
        rd += docs
        rs += list(range(n, 0, -1))
        qq += [str(qid)] * n
        qd += docs
        qr += [float(x) for x in labels]
        if num_relevant and qid in num_relevant:
            from metrics_core.validation import check_int

            check_int(num_relevant[qid], f"num_relevant of query {qid!r}", minimum=0)
            extra = int(num_relevant[qid]) - sum(1 for x in labels if x > 0)
            if extra < 0:
                raise InputError(
                    N_(
                        "query {query}: num_relevant={count} is less than the relevant documents "
                        "already in the vector"
                    ),
                    params={"query": repr(qid), "count": num_relevant[qid]},
                )
            qq += [str(qid)] * extra
            qd += [f"unretrieved-{j}" for j in range(extra)]
            qr += [1.0] * extra
    run = Run(rq, rd, np.asarray(rs, dtype=np.float64), name=name, source="<vectors>")
    qrels = Qrels(qq, qd, np.asarray(qr, dtype=np.float64), source="<vectors>")
    return run, qrels


def __getattr__(name):
    # detect_columns lives with the table readers, imported on first use
    if name == "detect_columns":
        from metrics_core.io.tables import detect_columns

        return detect_columns
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
