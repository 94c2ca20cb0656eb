"""Columnar containers for runs and qrels.

A run is three columns (query id, doc id, float64 score); qrels three (query id, doc id,
relevance). Ids are kept as Arrow string arrays (no Python object per row), scores and
labels as numpy float64. ``line_numbers`` remembers where each row came from, so errors
found later (duplicates) can name the lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    import pandas as pd

from metrics_core.errors import N_, InputError


def as_string_array(values, what: str, source: str) -> pa.Array:
    """Arrow string array of ids; numbers become their text, nulls are refused."""
    if (
        isinstance(values, pa.ChunkedArray)
        and pa.types.is_dictionary(values.type)
        and pa.types.is_string(values.type.value_type)
        and values.null_count == 0
    ):
        return values.unify_dictionaries()  # query ids from the TREC reader: kept encoded
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            values = values.chunk(0)
        elif pa.types.is_string(values.type) and values.null_count == 0:
            return values  # a big column read in blocks: kept as it is
        else:
            values = values.combine_chunks()
    if isinstance(values, pa.Array):
        arr = values
    else:
        arr = pa.array(
            np.asarray(values, dtype=object) if not isinstance(values, (list, tuple)) else values
        )
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if not pa.types.is_string(arr.type):
        if pa.types.is_floating(arr.type):
            # 1.0 -> "1": ids read as floats by a table reader are whole numbers (those a
            # float64 holds exactly; larger ones keep their float spelling, never wrapped)
            as_np = arr.to_numpy(zero_copy_only=False)
            finite = np.isfinite(as_np)
            if (
                finite.all()
                and np.all(as_np == np.round(as_np))
                and np.all(np.abs(as_np) <= 2.0**53)
            ):
                arr = pa.array(as_np.astype(np.int64)).cast(pa.string())
            else:
                arr = arr.cast(pa.string())
        else:
            try:
                arr = arr.cast(pa.string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                arr = pa.array(
                    [None if v is None else str(v) for v in arr.to_pylist()], type=pa.string()
                )
    if arr.null_count:
        first = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        problem, hint = MISSING_TEXTS.get(what) or (
            N_("missing {what} in row {row}"),
            N_("Every row needs a {what}"),
        )
        raise InputError(problem, source=source, hint=hint, params={"what": what, "row": first + 1})
    return arr


#: what :func:`as_string_array` reads -> (problem, hint) when a row misses it
MISSING_TEXTS = {
    "query id": (N_("missing query id in row {row}"), N_("Every row needs a query id")),
    "document id": (N_("missing document id in row {row}"), N_("Every row needs a document id")),
}
#: the name of a table's values -> (problem, hint) when one is not a finite number
NOT_FINITE_TEXTS = {
    "value": (
        N_("value is {value!r}, not a finite number"),
        N_("Every value must be a finite number"),
    ),
    "score": (
        N_("score is {value!r}, not a finite number"),
        N_("Every score must be a finite number"),
    ),
    "relevance": (
        N_("relevance is {value!r}, not a finite number"),
        N_("Every relevance must be a finite number"),
    ),
}


class _Columns:
    _value_name = "value"
    #: for tables: role -> the column read for it (None for files without a header)
    columns_used: dict | None = None
    #: for tables: role -> the other columns whose names are usual names of that role
    column_candidates: dict | None = None

    def __init__(
        self,
        query_ids,
        doc_ids,
        values,
        *,
        source: str = "<data>",
        line_numbers=None,
        rows_are_lines: bool = False,
        extra_query_ids=(),
    ):
        self.source = str(source)
        # queries given without any row: a run's query answered with an empty ranking, a
        # qrels query judged to have no relevant document at all (the list inputs' empty
        # ``retrieved`` / ``expected``); they are evaluated like any other
        self.extra_query_ids = tuple(str(q) for q in extra_query_ids)
        # When a file had no comments or blank lines, row i is line i + 1.
        self.rows_are_lines = bool(rows_are_lines) and line_numbers is None
        self.qid = as_string_array(query_ids, "query id", self.source)
        self.docid = as_string_array(doc_ids, "document id", self.source)
        vals = np.asarray(values, dtype=np.float64)
        if not (len(self.qid) == len(self.docid) == len(vals)):
            raise InputError(N_("columns of different lengths"), source=self.source)
        self.values = vals
        self.line_numbers = (
            None if line_numbers is None else np.asarray(line_numbers, dtype=np.int64)
        )
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            problem, hint = NOT_FINITE_TEXTS.get(self._value_name) or (
                N_("{what} is {value!r}, not a finite number"),
                N_("Every {what} must be a finite number"),
            )
            raise InputError(
                problem,
                source=self.source,
                line=self.line_of(i),
                hint=hint,
                params={"what": self._value_name, "value": vals[i].item()},
            )

    def line_of(self, row: int) -> int | None:
        """Line number of a row (1-based) when known."""
        if self.line_numbers is not None:
            return int(self.line_numbers[row])
        if self.rows_are_lines:
            return int(row) + 1
        return None

    def __len__(self) -> int:
        return len(self.values)

    @property
    def query_ids(self) -> np.ndarray:
        q = self.qid
        if pa.types.is_dictionary(q.type):
            q = q.cast(q.type.value_type)
        return q.to_numpy(zero_copy_only=False)

    @property
    def doc_ids(self) -> np.ndarray:
        return self.docid.to_numpy(zero_copy_only=False)

    def unique_query_ids(self) -> list[str]:
        """The sorted query ids (with queries given without rows). Kept on the object for its
        ids as they are (12 ms for 300,000 judgements, asked for several times per page by
        the app); a new list each call."""
        extra = tuple(self.extra_query_ids)
        held = getattr(self, "_unique_ids", None)
        if held is None or held[0] is not self.qid or held[1] != extra:
            q = self.qid
            if pa.types.is_dictionary(q.type):
                q = q.cast(q.type.value_type)
            held = self._unique_ids = (
                self.qid,
                extra,
                sorted(set(pc.unique(q).to_pylist()) | set(extra)),
            )
        return list(held[2])


class Run(_Columns):
    """A ranking of documents for each query: query id, doc id, score (higher is better).

    Parameters
    ----------
    query_ids, doc_ids : array-like of str (or Arrow string arrays)
    scores : array-like of float
        Finite numbers; NaN or infinity is an :class:`~metrics_core.errors.InputError`.
    name : str
        The system's name (file stem or run tag).
    source : str
        Where the data came from, for messages.
    line_numbers : array-like of int, optional
        Source line of each row.
    extra_query_ids : sequence of str, optional
        Queries answered with an empty ranking: evaluated (scoring 0 on most measures),
        not reported as missing.
    """

    _value_name = "score"

    def __init__(
        self,
        query_ids,
        doc_ids,
        scores,
        *,
        name: str = "run",
        source: str = "<run>",
        line_numbers=None,
        rows_are_lines: bool = False,
        tags=None,
        extra_query_ids=(),
    ):
        super().__init__(
            query_ids,
            doc_ids,
            scores,
            source=source,
            line_numbers=line_numbers,
            rows_are_lines=rows_are_lines,
            extra_query_ids=extra_query_ids,
        )
        self.name = str(name)
        self.tags = tags

    @property
    def scores(self) -> np.ndarray:
        return self.values

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            {"query_id": self.query_ids, "doc_id": self.doc_ids, "score": self.scores}
        )

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, rows={len(self)}, source={self.source!r})"


class Qrels(_Columns):
    """Relevance judgements: query id, doc id, relevance label.

    Labels are numbers (graded labels welcome). Negative labels mean "judged, not
    relevant" for gains and are left out of the number of relevant documents
    (trec_eval's rule).
    """

    _value_name = "relevance"

    def __init__(
        self,
        query_ids,
        doc_ids,
        relevance,
        *,
        source: str = "<qrels>",
        line_numbers=None,
        rows_are_lines: bool = False,
        extra_query_ids=(),
    ):
        super().__init__(
            query_ids,
            doc_ids,
            relevance,
            source=source,
            line_numbers=line_numbers,
            rows_are_lines=rows_are_lines,
            extra_query_ids=extra_query_ids,
        )

    @property
    def relevance(self) -> np.ndarray:
        return self.values

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            {"query_id": self.query_ids, "doc_id": self.doc_ids, "relevance": self.relevance}
        )

    def __repr__(self) -> str:
        return f"Qrels(rows={len(self)}, source={self.source!r})"
