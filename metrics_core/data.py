"""Columnar containers for runs and qrels.

A run is three columns (query id, doc id, float64 score); qrels three (query id, doc id,
relevance). Ids are kept as Arrow string arrays (no Python object per row), scores and
labels as numpy float64. ``line_numbers`` remembers where each row came from, so errors
found later (duplicates) can name the lines.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    import pandas as pd

from metrics_core.errors import N_, InputError


def shared_ids(values: list) -> list:
    """``values`` (query ids, as Python objects) with each ``str`` replaced by the one object
    Python keeps for equal strings (``sys.intern``): the ids of the qrels, each run and each
    ranking of a session are then the same objects, not a new ``str`` per id per copy (a
    server holding many visitors' query ids held each of them several times over). Equal
    values, so nothing computed changes; an id nothing refers to any more is freed as before.

    >>> a, b = shared_ids(["q" + str(1)]), shared_ids(["q1"])
    >>> a == b, a[0] is b[0]
    (True, True)
    """
    intern = sys.intern
    return [intern(v) if type(v) is str else v for v in values]


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
    "subtopic": (N_("missing subtopic in row {row}"), N_("Every row needs a subtopic")),
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
                sorted(set(shared_ids(pc.unique(q).to_pylist())) | set(extra)),
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


class SubtopicQrels(Qrels):
    """Relevance judgements per subtopic (intent) of each query: the qrels of the diversity
    measures (ndeval's ``qid subtopic docid judgement`` lines).

    Seen as :class:`Qrels` (by every other measure, the join, the coverage report) it holds
    one row per judged (query, document), labelled with the document's highest label over
    the query's subtopics: relevant to the query when relevant to any of its subtopics (as
    ndeval counts a document for its non-intent-aware MAP). The subtopic judgements behind
    it are kept as columns over those rows:

    Attributes
    ----------
    subtopic_names : list of str
        The subtopic ids, in the order their gains are added (ndeval's: by number when
        every id is a whole number, as ndeval.c reads them; else as first met).
    pair_ptr : int64 array, shape (rows + 1,)
        The subtopic judgements of row ``r`` are ``pair_ptr[r]:pair_ptr[r + 1]``.
    pair_subtopic : int32 array
        Subtopic (index into :attr:`subtopic_names`) of each subtopic judgement, ascending
        within a row.
    pair_label : float64 array
        Its label.
    pair_line : int64 array or None
        Its line in the source (when known).
    subtopic_duplicates : (int, tuple of int or None)
        Number of (query, subtopic, document) judgements given more than once (each kept
        with its highest label), and the lines of the first one given twice (when known).

    Examples
    --------
    >>> q = SubtopicQrels.from_judgements(["1", "1", "1"], ["1", "2", "2"], ["a", "a", "b"], [1, 0, 2])
    >>> q.doc_ids.tolist(), q.relevance.tolist(), q.subtopic_names
    (['a', 'b'], [1.0, 2.0], ['1', '2'])
    >>> q.pair_ptr.tolist(), q.pair_subtopic.tolist(), q.pair_label.tolist()
    ([0, 2, 3], [0, 1, 1], [1.0, 0.0, 2.0])
    """

    def __init__(
        self,
        query_ids,
        doc_ids,
        relevance,
        *,
        subtopic_names,
        pair_ptr,
        pair_subtopic,
        pair_label,
        pair_line=None,
        subtopic_duplicates=(0, None),
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
        self.subtopic_names = list(subtopic_names)
        self.pair_ptr = np.asarray(pair_ptr, dtype=np.int64)
        self.pair_subtopic = np.asarray(pair_subtopic, dtype=np.int32)
        self.pair_label = np.asarray(pair_label, dtype=np.float64)
        self.pair_line = None if pair_line is None else np.asarray(pair_line, dtype=np.int64)
        self.subtopic_duplicates = subtopic_duplicates

    @classmethod
    def from_judgements(
        cls,
        query_ids,
        subtopics,
        doc_ids,
        relevance,
        *,
        source: str = "<qrels>",
        line_numbers=None,
        extra_query_ids=(),
    ) -> SubtopicQrels:
        """Subtopic qrels from one row per (query, subtopic, document) judgement (any
        order; a judgement given twice keeps its highest label and is counted in
        :attr:`subtopic_duplicates`)."""
        qid = as_string_array(query_ids, "query id", source)
        docid = as_string_array(doc_ids, "document id", source)
        sub = as_string_array(subtopics, "subtopic", source)
        label = np.asarray(relevance, dtype=np.float64)
        n = len(label)
        if not (len(qid) == len(docid) == len(sub) == n):
            raise InputError(N_("columns of different lengths"), source=source)
        bad = ~np.isfinite(label)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            problem, hint = NOT_FINITE_TEXTS["relevance"]
            line = None if line_numbers is None else int(np.asarray(line_numbers)[i])
            raise InputError(
                problem, source=source, line=line, hint=hint, params={"value": label[i].item()}
            )
        lines = None if line_numbers is None else np.asarray(line_numbers, dtype=np.int64)
        qcode = _codes(qid)
        dcode = _codes(docid)
        names, scode = _subtopic_codes(sub)
        # one row per (query, document), in the order first met
        key = qcode * (int(dcode.max(initial=0)) + 1) + dcode
        _, first, row_of = np.unique(key, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        row_of = rank[row_of.reshape(-1)]
        first = first[order]
        # the judgements sorted by (row, subtopic); one per (row, subtopic): the highest label
        n_sub = max(len(names), 1)
        pkey = row_of * n_sub + scode
        by = np.lexsort((-label, pkey))
        pkey_sorted = pkey[by]
        head = np.r_[True, pkey_sorted[1:] != pkey_sorted[:-1]] if n else np.zeros(0, bool)
        dup_count = int(n - np.count_nonzero(head))
        dup_lines = None
        if dup_count and lines is not None:
            twice = int(np.flatnonzero(~head)[0])
            same = by[pkey_sorted == pkey_sorted[twice]]
            dup_lines = tuple(sorted(int(lines[i]) for i in same[:2]))
        kept = by[head]
        prow = row_of[kept]
        counts = np.bincount(prow, minlength=len(first))
        ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        best = np.full(len(first), -np.inf)
        np.maximum.at(best, row_of, label)
        take = pa.array(first, type=pa.int64())
        return cls(
            qid.take(take),
            docid.take(take),
            best,
            subtopic_names=names,
            pair_ptr=ptr,
            pair_subtopic=scode[kept],
            pair_label=label[kept],
            pair_line=None if lines is None else lines[kept],
            subtopic_duplicates=(dup_count, dup_lines),
            source=source,
            line_numbers=None if lines is None else lines[first],
            extra_query_ids=extra_query_ids,
        )

    def take_rows(self, rows, qid, docid, *, line_numbers=None, extra_query_ids=()):
        """The subtopic qrels of some of its rows (``rows``, ascending), whose query and
        document ids (``qid``, ``docid``) the caller took already (a block's share)."""
        rows = np.asarray(rows, dtype=np.int64)
        lo, hi = self.pair_ptr[rows], self.pair_ptr[rows + 1]
        count = hi - lo
        at = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
        return SubtopicQrels(
            qid,
            docid,
            self.relevance[rows],
            subtopic_names=self.subtopic_names,
            pair_ptr=np.concatenate(([0], np.cumsum(count))).astype(np.int64),
            pair_subtopic=self.pair_subtopic[at],
            pair_label=self.pair_label[at],
            pair_line=None if self.pair_line is None else self.pair_line[at],
            subtopic_duplicates=self.subtopic_duplicates,
            source=self.source,
            line_numbers=line_numbers,
            extra_query_ids=extra_query_ids,
        )

    def to_frame(self, subtopics: bool = False) -> pd.DataFrame:
        """The judgements: one row per (query, document) (their highest label), or with
        ``subtopics=True`` one row per subtopic judgement (columns ``query_id``,
        ``subtopic``, ``doc_id``, ``relevance``)."""
        if not subtopics:
            return super().to_frame()
        import pandas as pd

        row = np.repeat(np.arange(len(self)), np.diff(self.pair_ptr))
        names = np.asarray(self.subtopic_names, dtype=object)
        return pd.DataFrame(
            {
                "query_id": self.query_ids[row],
                "subtopic": names[self.pair_subtopic] if len(names) else [],
                "doc_id": self.doc_ids[row],
                "relevance": self.pair_label,
            }
        )

    def __repr__(self) -> str:
        return (
            f"SubtopicQrels(rows={len(self)}, subtopic judgements={len(self.pair_label)}, "
            f"source={self.source!r})"
        )


def _codes(arr: pa.Array) -> np.ndarray:
    """Integer code of each string of ``arr`` (equal strings, equal codes)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if not len(arr):
        return np.zeros(0, dtype=np.int64)
    return pc.dictionary_encode(arr).indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _subtopic_codes(sub: pa.Array) -> tuple[list[str], np.ndarray]:
    """(names, code of each row): names by number when all are whole numbers (as ndeval.c
    reads them), else in the order first met."""
    if isinstance(sub, pa.ChunkedArray):
        sub = sub.combine_chunks()
    if pa.types.is_dictionary(sub.type):
        sub = sub.cast(sub.type.value_type)
    if not len(sub):
        return [], np.zeros(0, dtype=np.int32)
    enc = pc.dictionary_encode(sub)
    names = enc.dictionary.to_pylist()
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if all(n.isascii() and n.isdigit() for n in names):
        order = sorted(range(len(names)), key=lambda i: (int(names[i]), names[i]))
        new = np.empty(len(names), dtype=np.int64)
        new[order] = np.arange(len(names))
        names = [names[i] for i in order]
        codes = new[codes]
    return names, codes.astype(np.int32)
