"""argparse types for numeric options: finite, bounded, spelled as numbers.

A bad value ends with argparse's one-line error naming the option (exit status 2).
The bounds of options that size memory come from :data:`metrics_core.validation.LIMITS`.
"""

from __future__ import annotations

import argparse

from metrics_core.errors import InputError
from metrics_core.io.columns import MAPPABLE
from metrics_core.validation import INPUT_FORMATS, LIMITS, check_float, check_int


def finite_float(
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    open_low: bool = False,
    open_high: bool = False,
):
    """A type that accepts a finite number within the bounds (no NaN, no infinity)."""

    def parse(text: str) -> float:
        try:
            return check_float(
                text,
                "the value",
                minimum=minimum,
                maximum=maximum,
                open_low=open_low,
                open_high=open_high,
            )
        except InputError as exc:
            raise argparse.ArgumentTypeError(exc.problem.replace("the value ", "")) from None

    parse.__name__ = "number"
    return parse


def whole(minimum: int | None = None, maximum: int | None = None):
    """A type that accepts a whole number within the bounds."""

    def parse(text: str) -> int:
        try:
            return check_int(text, "the value", minimum=minimum, maximum=maximum)
        except InputError as exc:
            raise argparse.ArgumentTypeError(exc.problem.replace("the value ", "")) from None

    parse.__name__ = "whole number"
    return parse


SEED = whole(0, 2**63 - 1)
RESAMPLES = whole(0, LIMITS["resamples"])
CUTOFF = whole(1, LIMITS["cutoff"])
#: A level strictly between 0 and 1 (``--confidence``, ``--alpha``).
PROBABILITY = finite_float(0, 1, open_low=True, open_high=True)


def add_ranking_inputs(
    p, runs: str = "repeat for several runs", measures: str = "default: a standard set"
) -> None:
    """``--qrels``, ``--run`` (repeatable) and ``-m`` of the subcommands that evaluate rankings."""
    p.add_argument(
        "--qrels", required=True, help="qrels file (TREC, CSV/TSV, Parquet, JSON(L); compressed ok)"
    )
    p.add_argument("--run", required=True, action="append", help=f"run file; {runs}")
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        help=f"measure name, repeatable or comma-separated ({measures})",
    )


def add_format_options(p) -> None:
    """``--qrels-format``, ``--run-format``, ``--columns`` and ``--qrels-columns``."""
    g = p.add_argument_group("input formats (default: recognised from the file)")
    g.add_argument(
        "--qrels-format",
        choices=INPUT_FORMATS,
        default="auto",
        help="format of the qrels file (msmarco: TREC qrels)",
    )
    g.add_argument(
        "--run-format",
        choices=INPUT_FORMATS,
        default="auto",
        help="format of every run file (msmarco: 'qid pid rank' lines, no score)",
    )
    g.add_argument(
        "--columns",
        metavar="ROLE=COLUMN,...",
        help="columns of table inputs, e.g. query_id=qid,doc_id=docno,score=sim "
        "(roles: query_id, doc_id, score, relevance, rank); for runs and qrels",
    )
    g.add_argument(
        "--qrels-columns",
        metavar="ROLE=COLUMN,...",
        help="columns of a qrels table, when they differ from --columns",
    )


def parse_column_mapping(text: str | None) -> dict | None:
    """``"query_id=qid,doc_id=docno"`` (``--columns``, ``--qrels-columns``) as the readers'
    ``columns=`` dict.

    >>> parse_column_mapping("query_id=qid, doc_id=docno")
    {'query_id': 'qid', 'doc_id': 'docno'}
    """
    if text is None or not str(text).strip():
        return None
    out = {}
    for part in str(text).split(","):
        if not part.strip():
            continue
        role, sep, column = part.partition("=")
        role, column = role.strip(), column.strip()
        if not sep or not column:
            raise InputError(
                f"--columns: {part.strip()!r} is not ROLE=COLUMN",
                hint=f"e.g. --columns query_id=qid,doc_id=docno; roles: {', '.join(MAPPABLE)}",
                option="--columns",
            )
        if role not in MAPPABLE:
            raise InputError(
                f"--columns: unknown role {role!r}",
                hint=f"roles: {', '.join(MAPPABLE)}",
                option="--columns",
            )
        out[role] = column
    return out or None
