"""Batches of rows: the shape in which every reader hands out a run piece by piece.

A batch is an Arrow table of :data:`SCHEMA`: ``qid`` (string), ``docid`` (string),
``score`` (float64) and ``line`` (int64, the 1-based source line of the row, or its
1-based row number where a format has no lines). The run's readers make them
(:func:`metrics_core.io.open_run_stream`: TREC on :mod:`metrics_core.io.trec`, Parquet and
CSV/TSV on :mod:`metrics_core.io.tables`); the streamed and the Dask evaluations
(:mod:`metrics_core.scale`) consume them. A source that cannot be read in batches raises
:class:`NotStreamable`, and the caller reads it whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from metrics_core.data import Run, as_string_array

#: Rows per batch handed out by the readers (the evaluator groups batches into blocks).
BATCH_ROWS = 1 << 18

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


def rebatch(opener, batch_rows: int):
    """An opener of batches of about ``batch_rows`` rows, from an opener of tables of any
    size."""

    def reopen():
        for table in opener():
            for lo in range(0, table.num_rows, batch_rows):
                yield table.slice(lo, batch_rows)

    return reopen


def lines_table(q: list, d: list, v: list, ln: list) -> pa.Table:
    """A batch from Python lists of query ids, document ids, scores and line numbers."""
    return pa.Table.from_arrays(
        [
            pa.array(q, pa.string()),
            pa.array(d, pa.string()),
            pa.array(v, pa.float64()),
            pa.array(ln, pa.int64()),
        ],
        schema=SCHEMA,
    )


def table_of(run: Run, lines: np.ndarray) -> pa.Table:
    """A Run's rows as a table of :data:`SCHEMA` (query ids decoded from a dictionary)."""
    qid = run.qid
    if pa.types.is_dictionary(qid.type):
        qid = qid.cast(qid.type.value_type)
    return pa.Table.from_arrays(
        [qid, run.docid, pa.array(run.scores), pa.array(lines)], schema=SCHEMA
    )


def run_stream(run: Run, batch_rows: int = BATCH_ROWS) -> RunStream:
    """A :class:`Run` already in memory as a stream of batches (slices, no copies of the
    ids): the engine's working memory is then bounded by a block, not by the run."""

    def opener():
        qid = run.qid
        # dictionary-encoded query ids are decoded a batch at a time (the whole column's text
        # at once would cost 8 bytes a row of the run, the memory the stream is to bound)
        decode = pa.types.is_dictionary(qid.type)
        n = len(run)
        for lo in range(0, n, batch_rows):
            hi = min(n, lo + batch_rows)
            if run.line_numbers is not None:
                lines = run.line_numbers[lo:hi]
            else:
                lines = np.arange(lo + 1, hi + 1, dtype=np.int64)
            ids = qid.slice(lo, hi - lo)
            yield pa.Table.from_arrays(
                [
                    ids.cast(qid.type.value_type) if decode else ids,
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
    "SCHEMA",
    "NotStreamable",
    "RunStream",
    "batch_run",
    "lines_table",
    "rebatch",
    "run_stream",
    "table_of",
]
