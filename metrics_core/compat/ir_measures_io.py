"""ir_measures' records and TREC readers, for :mod:`metrics_core.compat.ir_measures`.

The records are the named tuples ir_measures yields (:class:`Qrel`, :class:`ScoredDoc`,
:class:`Metric`, :class:`CalcResults`); the readers take a path (``.gz`` read through
gzip), the text itself (a string holding a newline) or an open file, and name the line of
a bad record.
"""

from __future__ import annotations

import gzip as _gzip
import io as _io
import os as _os
from collections.abc import Iterator as _Iterator
from typing import Any as _Any
from typing import NamedTuple as _NamedTuple

from metrics_core.errors import InputError as _InputError

__all__ = ["Qrel", "ScoredDoc", "Metric", "CalcResults", "read_trec_qrels", "read_trec_run"]


class Qrel(_NamedTuple):
    """One judgement, as ir_measures yields it."""

    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


class ScoredDoc(_NamedTuple):
    """One retrieved document and its score."""

    query_id: str
    doc_id: str
    score: float


class Metric(_NamedTuple):
    """One query's value of one measure (``query_id`` is ``"all"`` for a summary line)."""

    query_id: str
    measure: _Any
    value: float


class CalcResults(_NamedTuple):
    """:func:`calc`'s result: the aggregates and every per-query :class:`Metric`."""

    aggregated: _Any
    per_query: list


def _lines(file):
    """The lines of a path (``.gz`` read through gzip), of a text holding a newline, or of
    an open file."""
    if hasattr(file, "read"):
        yield from file
        return
    if isinstance(file, str) and "\n" in file:
        yield from _io.StringIO(file)
        return
    path = _os.fspath(file)
    opener = _gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as handle:
        yield from handle


def _fields(file, count: int, layout: str):
    for number, line in enumerate(_lines(file), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != count:
            raise _InputError(
                f"expected {count} fields ({layout}), found {len(parts)}", line=number
            )
        yield number, parts


def read_trec_qrels(file) -> _Iterator[Qrel]:
    """:class:`Qrel` records of TREC qrels lines ``qid iteration docid relevance``.

    ``file``: a path (``.gz`` decompressed), the text itself (a string holding a newline)
    or an open text file. A line with another number of fields, or a relevance that is not
    a whole number, is an :class:`~metrics_core.errors.InputError` naming the line.

    >>> list(read_trec_qrels("q1 0 d1 2\\nq1 0 d2 0\\n"))
    [Qrel(query_id='q1', doc_id='d1', relevance=2, iteration='0'), Qrel(query_id='q1', doc_id='d2', relevance=0, iteration='0')]
    """
    for number, (qid, iteration, doc, rel) in _fields(file, 4, "qid iteration docid relevance"):
        try:
            value = int(rel)
        except ValueError:
            raise _InputError(f"relevance {rel!r} is not a whole number", line=number) from None
        yield Qrel(qid, doc, value, iteration)


def read_trec_run(file) -> _Iterator[ScoredDoc]:
    """:class:`ScoredDoc` records of TREC run lines ``qid Q0 docid rank score tag``
    (the same argument forms as :func:`read_trec_qrels`).

    >>> list(read_trec_run("q1 Q0 d1 1 2.5 bm25\\n"))
    [ScoredDoc(query_id='q1', doc_id='d1', score=2.5)]
    """
    for number, (qid, _q0, doc, _rank, score, _tag) in _fields(
        file, 6, "qid Q0 docid rank score tag"
    ):
        try:
            value = float(score)
        except ValueError:
            raise _InputError(f"score {score!r} is not a number", line=number) from None
        yield ScoredDoc(qid, doc, value)
