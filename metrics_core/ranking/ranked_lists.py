"""What the engine produces: :class:`RankedLists` (every query's ranking, flattened in rank
order, with the labels joined) and its :class:`Diagnostics`.

Every measure is a reduction over these arrays (:mod:`metrics_core.ranking.measures`);
:func:`metrics_core.ranking.engine.build_ranked_lists` builds them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from metrics_core.data import Qrels


@dataclass
class Diagnostics:
    """What a ranking found besides the values: missing and extra queries, duplicates,
    tie groups and the tie groups straddling each cutoff, fractional labels."""

    missing_queries: list = field(default_factory=list)
    extra_queries: list = field(default_factory=list)
    duplicates: int = 0
    qrels_duplicates: int = 0
    tied_groups: int = 0
    tied_documents: int = 0
    ties_straddling: dict = field(default_factory=dict)
    fractional_labels: int = 0

    def as_dict(self) -> dict:
        """The JSON ``diagnostics`` of an evaluation."""
        return {
            "missing_queries": list(self.missing_queries),
            "extra_queries": list(self.extra_queries),
            "duplicates": int(self.duplicates),
            "qrels_duplicates": int(self.qrels_duplicates),
            "ties": int(sum(self.ties_straddling.values())),
            "ties_straddling": {str(k): int(v) for k, v in self.ties_straddling.items()},
            "tied_groups": int(self.tied_groups),
            "tied_documents": int(self.tied_documents),
        } | ({"fractional_labels": int(self.fractional_labels)} if self.fractional_labels else {})


class RankedLists:
    """All queries' rankings, flattened in rank order.

    Attributes
    ----------
    query_ids : list of str
        Evaluated queries; segment ``i`` is query ``query_ids[i]``.
    starts : int64 array, shape (n_queries + 1,)
        Segment offsets into the row arrays.
    seg : int64 array
        Segment (query index) of each ranked row.
    label : float64 array
        Relevance label of each ranked row (0 for unjudged).
    judged : bool array
        Whether the row's document is judged for its query.
    qrels_seg, qrels_label : arrays
        The judgements of the evaluated queries (segment and label of each).
    qrels_row : int64 array or None
        The qrels row of each of those judgements.
    qrels : Qrels or None
        The qrels the lists were built from.
    judged_qrels_row : int64 array or None
        With subtopic qrels (:class:`~metrics_core.data.SubtopicQrels`): the qrels row of
        each judged ranked row, aligned with :attr:`judged_rows` (the diversity measures
        find its subtopic judgements there); None otherwise.
    """

    def __init__(
        self,
        query_ids: Iterable[str],
        starts: np.ndarray,
        seg: np.ndarray,
        label: np.ndarray,
        judged: np.ndarray,
        qrels_seg: np.ndarray,
        qrels_label: np.ndarray,
        diagnostics: Diagnostics,
        row_index: np.ndarray | None = None,
        qrels_row: np.ndarray | None = None,
        row_swaps: tuple[np.ndarray, np.ndarray] | None = None,
        qrels: Qrels | None = None,
    ) -> None:
        self.query_ids = list(query_ids)
        self.starts = starts
        self.seg = seg
        self.label = label
        self.judged = judged
        self.qrels_seg = qrels_seg
        self.qrels_label = qrels_label
        self.diagnostics = diagnostics
        # run row of each ranked row: ``_row_index`` (None: the row of the same number),
        # then ``row_swaps`` (positions, rows): the few positions that the tie order
        # changed in a run given in rank order -- no array the size of the run for them
        self._row_index = row_index
        self._row_swaps = row_swaps
        self.qrels_row = qrels_row  # qrels row of each judgement in qrels_seg/qrels_label
        self.qrels = qrels  # the Qrels built from (its source and lines name bad labels)
        self.run_docid = None  # the run's document ids (Arrow), set by the engine
        self.judged_anywhere = None  # every qrels document id when qrels holds a block's share
        self.judged_qrels_row: np.ndarray | None = None  # set by the engine for subtopic qrels
        self._cache: dict = {}

    def stored_columns(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """``(per ranked row, per judgement)``: the arrays these lists are made of that grow
        with the run and the qrels, as a copy on disk keeps them
        (:func:`metrics_core.scale.spill.spill_lists`): the segment, label and judged flag of
        each ranked row, and its run row (swaps applied) when that is not the row of the same
        number; the segment, label and qrels row of each judgement. The query offsets
        (``starts``, one per query) stay as they are."""
        rows = {"seg": self.seg, "label": self.label, "judged": self.judged}
        if self._row_index is not None or self._row_swaps is not None:
            rows["row_index"] = self.run_rows()
        judged = {"qrels_seg": self.qrels_seg, "qrels_label": self.qrels_label}
        if self.qrels_row is not None:
            judged["qrels_row"] = self.qrels_row
        return rows, judged

    def use_columns(self, columns: dict[str, np.ndarray]) -> None:
        """Take the arrays of :meth:`stored_columns` from ``columns`` (e.g. views of a
        mapped file; the same values) and drop what was derived from the old ones."""
        for name in ("seg", "label", "judged", "qrels_seg", "qrels_label", "qrels_row"):
            if name in columns:
                setattr(self, name, columns[name])
        if "row_index" in columns:
            self._row_index, self._row_swaps = columns["row_index"], None
        self.forget_derived()

    def forget_derived(self) -> None:
        """Drop what these lists derived and kept (judged rows, ideal orders, the work that
        several measures share ...): computed again when asked. The values never change."""
        self._cache.clear()
        for name in ("row_index", "judged_rows", "counts"):
            self.__dict__.pop(name, None)

    def memo(self, key, build):
        """The value cached under ``key`` on these ranked lists, computed by ``build()`` the
        first time (work shared by several measures: the ideal ranking, the trec_eval
        query order ...). Keys are tuples whose first item names the computation."""
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def run_rows(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Run row (index into the Run's columns) of ranked rows ``lo:hi``."""
        hi = len(self.seg) if hi is None else hi
        base = self._row_index
        out = (
            np.arange(lo, hi, dtype=np.int64)
            if base is None
            else np.asarray(base[lo:hi], dtype=np.int64)
        )
        if self._row_swaps is not None:
            pos, rows = self._row_swaps
            a, b = np.searchsorted(pos, [lo, hi])
            out[pos[a:b] - lo] = rows[a:b]
        return out

    @cached_property
    def row_index(self) -> np.ndarray:
        """Run row of every ranked row (see :meth:`run_rows` for a slice)."""
        return self.run_rows()

    @property
    def n_queries(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)

    @cached_property
    def counts(self) -> np.ndarray:
        """Ranked rows (documents retrieved) per query."""
        return np.diff(self.starts)

    def pos_of(self, rows: np.ndarray) -> np.ndarray:
        """1-based rank within its query of each of ``rows`` (O(len(rows)))."""
        return rows - self.starts[self.seg[rows]] + 1

    # -- the judged rows ----------------------------------------------------------------
    # Measures touch only judged rows (a few per cent of a deep run): every count below
    # works on sorted row numbers by binary search, never on an array the size of the run.
    @cached_property
    def judged_rows(self) -> np.ndarray:
        """Ranked rows whose document is judged for its query, ascending."""
        return np.flatnonzero(self.judged)

    def relevant_rows(self, threshold: float) -> np.ndarray:
        """Ranked rows judged relevant at ``threshold``, ascending."""
        key = ("relrows", threshold)
        if key not in self._cache:
            jr = self.judged_rows
            lab = self.label[jr]
            # negative labels are "judged, not relevant" whatever the threshold
            self._cache[key] = jr[(lab >= threshold) & (lab >= 0)]
        return self._cache[key]

    def judged_nonrelevant_rows(self, threshold: float) -> np.ndarray:
        """Ranked rows judged, with 0 <= label < threshold, ascending."""
        jr = self.judged_rows
        lab = self.label[jr]
        return jr[(lab >= 0) & (lab < threshold)]

    def num_rel(self, threshold: float) -> np.ndarray:
        """Relevant documents per query in the qrels (labels >= threshold and >= 0)."""
        key = ("numrel", threshold)
        if key not in self._cache:
            ok = (self.qrels_label >= threshold) & (self.qrels_label >= 0)
            self._cache[key] = np.bincount(self.qrels_seg[ok], minlength=self.n_queries)
        return self._cache[key]

    def num_nonrel(self, threshold: float) -> np.ndarray:
        """Judged non-relevant documents per query in the qrels (0 <= label < threshold)."""
        ok = (self.qrels_label < threshold) & (self.qrels_label >= 0)
        return np.bincount(self.qrels_seg[ok], minlength=self.n_queries)

    def count_upto(self, flag_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For each of ``rows``: flagged rows (``flag_rows``, ascending) of the same query
        ranked at or above it."""
        seg_start = self.starts[self.seg[rows]]
        return np.searchsorted(flag_rows, rows, side="right") - np.searchsorted(
            flag_rows, seg_start, side="left"
        )

    def count_top(self, flag_rows: np.ndarray, k: int) -> np.ndarray:
        """Flagged rows (``flag_rows``, ascending) among the top ``k`` of each query."""
        first = self.starts[:-1]
        end = first + np.minimum(self.counts, k)
        return np.searchsorted(flag_rows, end) - np.searchsorted(flag_rows, first)

    def first_relevant_rank(self, threshold: float) -> np.ndarray:
        """Rank of the first relevant document per query; 0 when none."""
        key = ("first", threshold)
        if key not in self._cache:
            rows = self.relevant_rows(threshold)
            out = np.zeros(self.n_queries, dtype=np.int64)
            if len(rows):
                s = self.seg[rows]
                first = np.r_[True, s[1:] != s[:-1]]
                out[s[first]] = self.pos_of(rows[first])
            self._cache[key] = out
        return self._cache[key]
