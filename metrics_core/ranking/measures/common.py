"""What the measure families share: the worked example, references, the relevance threshold and
row selections used by several families."""

from __future__ import annotations

import numpy as np

from metrics_core.conventions import Conventions
from metrics_core.errors import N_
from metrics_core.ranking.definition import TREC_EVAL, Example, MeasureSpec  # noqa: F401  (the families cite it from here)
from metrics_core.ranking.ranked_lists import RankedLists

MIN_GEO_MEAN = 1e-5  # trec_eval's floor for geometric means


# The worked example most families share: one query, three documents retrieved (d1, d2,
# d3 in that order), d1, d3 and d4 relevant (d4 not retrieved), d2 judged non-relevant.
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
SHARED = N_("Ranking d1, d2, d3; relevant: d1, d3 and d4 (not retrieved); d2 judged non-relevant.")
IIR = (
    "C. D. Manning, P. Raghavan, H. Schutze, Introduction to Information Retrieval, "
    "Cambridge University Press, 2008, ch. 8."
)


def shared_example(name: str, value: float, step: str = "") -> Example:
    """The worked example on :data:`QRELS` and :data:`RUN` for measure ``name``: its
    explanation is :data:`SHARED`, then ``step`` (the arithmetic), each a text marked for
    translation (:meth:`~metrics_core.ranking.definition.Example.explained`).

    >>> ex = shared_example("RR", 1.0, "The first document is relevant: 1/1.")
    >>> ex.explanation == SHARED + " The first document is relevant: 1/1."
    True
    """
    parts = (SHARED, step) if step else (SHARED,)
    return Example(QRELS, RUN, name, value, " ".join(parts), parts)


def threshold_of(spec: MeasureSpec, conv: Conventions) -> float:
    """The relevance threshold of ``spec`` (its ``rel``, else the conventions')."""
    return float(spec.param("rel", conv))


def hits_top(R: RankedLists, thr: float, k: int | None) -> np.ndarray:
    """Relevant documents among the top k (all retrieved when k is None)."""
    rows = R.relevant_rows(thr)
    if k is None:
        return np.bincount(R.seg[rows], minlength=R.n_queries).astype(np.int64)
    return R.count_top(rows, k)


def pooled_unjudged_rows(R: RankedLists) -> np.ndarray:
    """Retrieved rows judged with a negative label: trec_eval's "pooled but unjudged"."""
    jr = R.judged_rows
    return jr[R.label[jr] < 0]


def judged_nonneg_rows(R: RankedLists) -> np.ndarray:
    """Retrieved rows judged with a label >= 0 (trec_eval's judged documents)."""
    jr = R.judged_rows
    return jr[R.label[jr] >= 0]


def unjudged_mask_rows(R: RankedLists) -> np.ndarray:
    """Retrieved rows that trec_eval counts as unjudged: not in the qrels, or judged with
    a negative label; ascending."""
    keep = np.ones(len(R.seg), dtype=bool)
    keep[judged_nonneg_rows(R)] = False
    return np.flatnonzero(keep)


class Derived:
    """A spec with another cutoff (for measures built from another measure)."""

    def __init__(self, spec, cutoff):
        self._spec, self.cutoff = spec, cutoff

    def param(self, key, conv):
        """The parameter of the spec this one derives from."""
        return self._spec.param(key, conv)
