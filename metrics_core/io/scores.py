"""Readers for score + label tables (detection, calibration) and candidate tables
(dynamic K): CSV/TSV, Parquet, JSON / JSON Lines.

Every problem is an :class:`InputError` naming the file, the line (CSV: the physical
line, header = line 1; Parquet/JSON: "row N") and what to do.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError, Phrase, argument, prefixed
from metrics_core.io.formats import sniff_format
from metrics_core.io.source import read_source
from metrics_core.io.text_check import check_json, check_text
from metrics_core.validation import binary_labels, show, to_numbers

SCORE_NAMES = (
    "score",
    "scores",
    "prob",
    "probability",
    "y_score",
    "y_prob",
    "y_pred_proba",
    "p",
    "pred",
    "prediction",
    "confidence",
)
LABEL_NAMES = (
    "label",
    "labels",
    "y_true",
    "target",
    "has_evidence",
    "y",
    "gold",
    "is_gold",
    "truth",
    "is_pos",
    "is_positive",
    "positive",
    "relevant",
    "is_relevant",
    "y_test",
    "ground_truth",
    "is_evidence",
    "actual",
    "class",
)
QUERY_NAMES = ("query", "query_id", "qid", "q")
CANDIDATE_NAMES = ("candidate", "candidate_id", "doc", "doc_id", "docid", "sentence_id", "item")
CRITERION_NAMES = ("criterion", "criteria", "criterion_id")


def read_table(source, *, name: str | None = None) -> tuple[pd.DataFrame, str, str]:
    """Read a table from a path, bytes or a file object; returns (frame, display name, kind).

    ``name`` gives the display name and extension when ``source`` is bytes. Compression
    is recognised by its magic bytes (see :mod:`metrics_core.io.source`).

    >>> df, name, kind = read_table(b"score,label\\n0.5,1\\n", name="x.csv")
    >>> df.shape, kind
    ((1, 2), 'csv')
    """
    if isinstance(source, (bytes, bytearray, memoryview)) and name is None:
        name = "<upload>"
    raw = read_source(source, name)
    display = raw.name
    kind = sniff_format(raw)
    if kind not in ("npy", "pt", "parquet"):
        check_text(raw, lines=kind != "json")  # lines measured before the data is read
    data = raw.data
    if kind in ("npy", "pt"):
        raise InputError(
            N_("this is a {format} array file, not a table"),
            source=display,
            hint=N_("Give a CSV/TSV/JSON/Parquet table with a score and a label column"),
            params={"format": kind},
        )
    if kind == "parquet" and raw.extension in (
        ".csv",
        ".tsv",
        ".tab",
        ".json",
        ".jsonl",
        ".ndjson",
        ".txt",
    ):
        raise InputError(
            N_("this is a Parquet file with a text-file name"),
            source=display,
            hint=N_("Rename it to .parquet"),
        )
    if not data.strip():
        raise InputError(
            N_("the file is empty"),
            source=display,
            hint=N_("Give a table with a score and a label column"),
        )
    if kind == "parquet":
        from metrics_core.io.tables import read_parquet_frame

        if data[:4] != b"PAR1":
            raise InputError(
                N_("not a readable Parquet file (no PAR1 header)"),
                source=display,
                hint=N_("Save the table as Parquet, or as CSV with a .csv name"),
            )
        return read_parquet_frame(data, display, limits=raw.limits), display, kind
    check_text(raw, lines=False)  # measured above
    text = data.decode("utf-8-sig")
    if kind in ("json", "jsonl"):
        check_json(data, display, raw.limits)
        try:
            if kind == "jsonl" or (kind == "json" and not text.lstrip().startswith(("[", "{"))):
                frame = pd.read_json(io.StringIO(text), lines=True)
            else:
                obj = json.loads(text)
                frame = pd.DataFrame(obj)
        except RecursionError:
            raise InputError(
                N_("JSON nested too deeply"),
                source=display,
                hint=N_("Give a list of records or an object of columns"),
            ) from None
        except (ValueError, TypeError) as exc:
            line = getattr(exc, "lineno", None)
            raise InputError(
                N_("not a JSON table ({error})"),
                source=display,
                line=line,
                hint=N_("Give a list of records or an object of columns"),
                params={"error": str(exc).splitlines()[0][:120]},
            ) from None
        return frame, display, kind
    sep = "\t" if kind == "tsv" else None
    first = text.split("\n", 1)[0]
    if sep is None:
        sep = "\t" if first.count("\t") > first.count(",") else ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, skip_blank_lines=False)
    except pd.errors.ParserError as exc:
        msg = str(exc)
        line = None
        if "line" in msg:
            try:
                line = int(msg.split("line")[1].split(",")[0].strip())
            except ValueError:
                line = None
        raise InputError(
            N_("malformed table ({error})"),
            source=display,
            line=line,
            hint=N_("Check the delimiter and the quoting"),
            params={"error": msg.splitlines()[0][:120]},
        ) from None
    except pd.errors.EmptyDataError:
        raise InputError(N_("the file has no columns"), source=display) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    # blank lines are kept so that row i stays line i + 2; trailing ones are dropped
    empty = frame.isna().all(axis=1).to_numpy()
    if empty.any() and empty[-1]:
        keep = len(empty) - int(np.argmin(empty[::-1])) if not empty.all() else 0
        frame = frame.iloc[:keep]
    return frame, display, kind


_show = show


def _where(kind, row):
    return {"line": row + 2} if kind in ("csv", "tsv") else {}


def _problem(kind, row, text):
    return (
        text
        if kind in ("csv", "tsv")
        else prefixed(Phrase(N_("row {row}: "), {"row": row + 1}), text)
    )


@overload
def pick_column(
    frame: pd.DataFrame,
    explicit: str | None,
    names,
    what: str,
    display: str,
    option: str,
    required: Literal[True] = ...,
) -> str: ...
@overload
def pick_column(
    frame: pd.DataFrame,
    explicit: str | None,
    names,
    what: str,
    display: str,
    option: str,
    required: bool,
) -> str | None: ...
def pick_column(
    frame: pd.DataFrame,
    explicit: str | None,
    names,
    what: str,
    display: str,
    option: str,
    required: bool = True,
) -> str | None:
    """The column the user named, or the one whose name is obviously ``what``.

    ``option`` is the reader's argument that names the column (``"label_col"``): an error
    names it (``label_col=``; the command line shows its flag) and has it as its ``field``,
    so an application names its own box for it.
    """
    cols = list(frame.columns)
    if explicit is not None:
        if explicit not in cols:
            raise InputError(
                N_("no column {column} (columns: {columns})"),
                source=display,
                hint=N_("Name the {what} column with {option}"),
                field=option,
                params={
                    "column": repr(explicit),
                    "columns": ", ".join(cols),
                    "what": what,
                    "option": argument(option),
                },
            )
        return explicit
    lower = {c.lower(): c for c in cols}
    for n in names:
        if n in lower:
            return lower[n]
    if not required:
        return None
    raise InputError(
        N_("cannot tell which column holds the {what} (columns: {columns})"),
        source=display,
        hint=N_("Name it with {option}"),
        field=option,
        params={"what": what, "columns": ", ".join(cols), "option": argument(option)},
    )


def _locator(kind):
    def locate(row: int) -> dict:
        if kind in ("csv", "tsv"):
            return {"line": row + 2}
        return {"problem_prefix": Phrase(N_("row {row}: "), {"row": row + 1})}

    return locate


def _numbers(frame, col, kind, display) -> np.ndarray:
    return to_numbers(
        frame[col],
        what=Phrase(N_("{column} value"), {"column": col}),
        source=display,
        locate=_locator(kind),
        hint=N_("Every row needs a numeric score; remove or fix this row"),
    )


def _binary(frame, col, kind, display) -> np.ndarray:
    return binary_labels(
        frame[col],
        what=Phrase(N_("{column} value"), {"column": col}),
        source=display,
        locate=_locator(kind),
    )


@dataclass
class ScoresTable:
    """Validated scores and labels with the columns they came from."""

    y_true: np.ndarray
    y_score: np.ndarray
    score_col: str
    label_col: str
    source: str
    frame: pd.DataFrame
    criterion: np.ndarray | None = None


def read_scores(
    source,
    *,
    score_col: str | None = None,
    label_col: str | None = None,
    criterion_col: str | None = None,
    name: str | None = None,
) -> ScoresTable:
    """Read a table with a score column and a binary label column.

    Columns are auto-detected by name (score/prob/probability/y_score/y_prob...,
    label/y_true/target/has_evidence...) unless given. A ``criterion`` column is picked
    up when present.

    >>> t = read_scores(b"prob,has_evidence\\n0.9,1\\n0.2,0\\n", name="s.csv")
    >>> t.score_col, t.label_col, t.y_true.tolist()
    ('prob', 'has_evidence', [1, 0])
    """
    frame, display, kind = read_table(source, name=name)
    if len(frame) == 0:
        raise InputError(N_("the table has a header but no rows"), source=display)
    s = pick_column(frame, score_col, SCORE_NAMES, Phrase(N_("scores")), display, "score_col")
    y = pick_column(frame, label_col, LABEL_NAMES, Phrase(N_("labels")), display, "label_col")
    if s == y:
        raise InputError(
            N_("score and label are the same column {column}"),
            source=display,
            params={"column": repr(s)},
        )
    crit_col = pick_column(
        frame,
        criterion_col,
        CRITERION_NAMES,
        Phrase(N_("criterion")),
        display,
        "criterion_col",
        required=False,
    )
    crit = frame[crit_col].astype(str).to_numpy() if crit_col else None
    return ScoresTable(
        _binary(frame, y, kind, display),
        _numbers(frame, s, kind, display),
        s,
        y,
        display,
        frame,
        crit,
    )


@dataclass
class CandidatesTable:
    """Validated candidate rows for dynamic K."""

    query: np.ndarray
    candidate: np.ndarray
    probability: np.ndarray
    is_gold: np.ndarray
    criterion: np.ndarray | None
    source: str


def read_candidates(
    source,
    *,
    query_col=None,
    candidate_col=None,
    prob_col=None,
    gold_col=None,
    criterion_col=None,
    name=None,
) -> CandidatesTable:
    """Read (query, candidate, probability, is_gold[, criterion]) rows.

    >>> t = read_candidates(b"query,candidate,probability,is_gold\\nq1,a,0.9,1\\n", name="c.csv")
    >>> t.query.tolist(), t.is_gold.tolist()
    (['q1'], [1])
    """
    frame, display, kind = read_table(source, name=name)
    if len(frame) == 0:
        raise InputError(N_("the table has a header but no rows"), source=display)
    q = pick_column(frame, query_col, QUERY_NAMES, Phrase(N_("query ids")), display, "query_col")
    c = pick_column(
        frame,
        candidate_col,
        CANDIDATE_NAMES,
        Phrase(N_("candidate ids")),
        display,
        "candidate_col",
        required=False,
    )
    p = pick_column(frame, prob_col, SCORE_NAMES, Phrase(N_("probabilities")), display, "prob_col")
    g = pick_column(frame, gold_col, LABEL_NAMES, Phrase(N_("gold flags")), display, "gold_col")
    crit_col = pick_column(
        frame,
        criterion_col,
        CRITERION_NAMES,
        Phrase(N_("criterion")),
        display,
        "criterion_col",
        required=False,
    )
    prob = _numbers(frame, p, kind, display)
    bad = (prob < 0) | (prob > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            _problem(
                kind,
                i,
                Phrase(
                    N_("{column} value {value} is outside [0, 1]"),
                    {"column": p, "value": _show(prob[i])},
                ),
            ),
            source=display,
            **_where(kind, i),
            hint=N_("Dynamic K thresholds probabilities; convert scores first"),
        )
    qv = frame[q]
    empty = (qv.isna() | qv.astype(str).str.strip().eq("")).to_numpy(dtype=bool)
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise InputError(
            _problem(kind, i, Phrase(N_("empty query id"))),
            source=display,
            **_where(kind, i),
            hint=N_("Every row needs a query id"),
        )
    return CandidatesTable(
        qv.astype(str).to_numpy(),
        frame[c].astype(str).to_numpy() if c else np.arange(len(frame)).astype(str),
        prob,
        _binary(frame, g, kind, display),
        frame[crit_col].astype(str).to_numpy() if crit_col else None,
        display,
    )
