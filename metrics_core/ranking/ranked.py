"""A run ranked and joined with its qrels, once, as a reusable object: :func:`rank` and
:class:`Ranking`.

Ranking a run (one sort per query, ties ordered by the conventions' rule, one join of
the judgements) is the expensive part of an evaluation; every measure is then a
reduction over the ranked rows. A :class:`Ranking` keeps that work and serves any
number of evaluations, tie reports and per-query views of the same run:

>>> import metrics_core as mc
>>> r = mc.rank({"q1": {"d1": 1, "d3": 1}}, {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
>>> r.evaluate(["P@2", "RR"]).aggregate
{'P@2': 0.5, 'RR': 1.0}
>>> r.ranking("q1")["doc_id"].tolist()
['d1', 'd2', 'd3']

:func:`metrics_core.evaluate` on a run read whole is ``rank(...).evaluate(...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run
from metrics_core.evaluation import Evaluation
from metrics_core.io import read_qrels, read_run
from metrics_core.io.coverage import MIN_SHARE
from metrics_core.ranking.engine import build_ranked_lists
from metrics_core.ranking.measures import compute, summarize
from metrics_core.ranking.ranked_lists import RankedLists
from metrics_core.ranking.registry import (
    DEFAULT_MEASURES,
    MeasureSpec,
    parse_measures,
    rank_cutoffs,
)
from metrics_core.ranking.ties import TieGroups, ranked_scores, tie_bounds, tie_report

if TYPE_CHECKING:
    import pandas as pd

RANKING_COLUMNS = ("rank", "doc_id", "score", "relevance", "judged")


def resolve_conventions(conventions: Conventions | None, overrides: dict) -> Conventions:
    """``conventions`` (trec_eval's defaults when None) with the fields of ``overrides``
    changed.

    >>> resolve_conventions(None, {"missing_queries": "zero"}).missing_queries
    'zero'
    """
    conv = conventions or Conventions()
    return conv.replace(**overrides) if overrides else conv


def evaluate_lists(
    lists: RankedLists,
    specs: list[MeasureSpec],
    conv: Conventions,
    run_name: str,
    ranking: Ranking | None = None,
) -> Evaluation:
    """Compute ``specs`` on ranked lists: the :class:`~metrics_core.evaluation.Evaluation`
    that :func:`metrics_core.evaluate` gives.

    ``lists`` may have been built for more cutoffs than ``specs`` use (the ranking itself
    does not depend on them): the diagnostics report the ties straddling the cutoffs of
    ``specs`` only. A cutoff of ``specs`` the lists were not built with, on a run with
    ties, is a ``ValueError`` (:meth:`Ranking.evaluate` ranks again instead).
    """
    cutoffs = rank_cutoffs(specs)
    diag = lists.diagnostics.as_dict()
    built = diag["ties_straddling"]
    if any(str(k) not in built for k in cutoffs) and lists.diagnostics.tied_groups:
        raise ValueError(f"ranked lists built without the cutoffs {cutoffs}")
    straddling = (
        {str(k): built.get(str(k), 0) for k in cutoffs} if lists.diagnostics.tied_groups else {}
    )
    diag["ties_straddling"] = straddling
    diag["ties"] = int(sum(straddling.values()))
    if conv.ties == "expected":
        columns = expected_columns(lists, specs, conv, ranking)
    else:
        columns = {s.name: compute(lists, s, conv) for s in specs}
    agg = {s.name: summarize(lists, s, columns[s.name], conv) for s in specs}
    return Evaluation(
        run_name,
        specs,
        (lists.query_ids, columns),
        agg,
        diag | {"num_queries": lists.n_queries},
        conv,
        ranking,
    )


#: families that no order of tied documents changes (``ties="expected"`` computes them as usual)
TIE_FREE = ("NumQ", "NumRet", "NumRel", "NumRelRet")


def expected_columns(
    lists: RankedLists, specs: list[MeasureSpec], conv: Conventions, ranking: Ranking | None
) -> dict:
    """``ties="expected"``: each query's value averaged exactly over every order of its
    tied documents (the tie report's expected value,
    :func:`metrics_core.ranking.ties.expected`); counts as they are. A measure the tie
    report does not cover is an :class:`~metrics_core.errors.InputError`."""
    from metrics_core.errors import N_, InputError
    from metrics_core.ranking.ties import (
        COVERED,
        TieGroups,
        covered,
        expected,
        ranked_scores,
        why_not,
    )

    bad = [s for s in specs if s.family not in TIE_FREE and not covered(s)]
    if bad:
        raise InputError(
            N_('ties="expected" cannot compute {measure}: {reason}'),
            hint=N_(
                "It covers {families} and the counts; evaluate the others with another tie rule"
            ),
            params={
                "measure": bad[0].name,
                "reason": why_not(bad[0]),
                "families": ", ".join(COVERED),
            },
        )
    if ranking is None:
        raise InputError(
            N_("the tie report needs the whole run in memory"),
            hint=N_("Leave out the scheduler or the block rows, or the tie report"),
        )
    groups = TieGroups(lists, ranked_scores(lists, ranking.run, conv))
    return {
        s.name: compute(lists, s, conv)
        if s.family in TIE_FREE
        else expected(lists, groups, s, conv)
        for s in specs
    }


def rank(qrels, run, conventions: Conventions | None = None, *, cutoffs=(), **overrides) -> Ranking:
    """Rank ``run`` and join the labels of ``qrels``, once, for any number of evaluations.

    Parameters
    ----------
    qrels, run : any source the readers accept
        A path, bytes, a file, a DataFrame, nested dicts, or a :class:`~metrics_core.Qrels`
        / :class:`~metrics_core.Run` (used as given).
    conventions : Conventions, optional
        Tie rule, duplicates, depth, missing queries ...; trec_eval's by default.
    cutoffs : iterable of int
        Rank cutoffs whose straddling tie groups the diagnostics count (the ranking itself
        does not depend on them). An evaluation that needs another cutoff ranks again.
    **overrides
        Convention fields to change, e.g. ``ties="input"``.

    Returns
    -------
    Ranking

    Examples
    --------
    >>> r = rank({"q1": {"d1": 1}, "q2": {"x": 2}}, {"q1": {"d1": 1.0, "d2": 1.0}},
    ...          cutoffs=(1,), missing_queries="zero")
    >>> r.query_ids, r.cutoffs, r.diagnostics["ties_straddling"]
    (['q1', 'q2'], (1,), {'1': 1})
    """
    conv = resolve_conventions(conventions, overrides)
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    r = run if isinstance(run, Run) else read_run(run)
    if conv.ignore_identical_ids:  # the Ranking keeps the run it ranked (BEIR's rule applied)
        from metrics_core.ranking.engine import drop_identical_ids

        r = drop_identical_ids(r)
    wanted = tuple(sorted({int(k) for k in cutoffs}))
    return Ranking(q, r, conv, wanted, build_ranked_lists(q, r, conv, wanted))


class Ranking:
    """One run ranked per query and joined with the qrels (see :func:`rank`).

    Parameters
    ----------
    qrels : Qrels
    run : Run
    conventions : Conventions
    cutoffs : tuple of int
        The cutoffs ``lists`` was built with.
    lists : RankedLists
        The engine's ranked lists of ``run`` (:func:`~metrics_core.ranking.engine.build_ranked_lists`).

    Attributes
    ----------
    qrels, run, conventions, cutoffs
        As given.
    lists : RankedLists
        Every query's ranking flattened in rank order (labels, judged flags, segment
        offsets ``lists.starts``, run rows ``lists.run_rows(lo, hi)``).

    Examples
    --------
    >>> r = rank({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 2.0, "b": 2.0, "c": 1.0}})
    >>> r
    Ranking('run', 1 queries, 3 ranked rows, cutoffs ())
    >>> r.tie_sizes().tolist()
    [2, 2, 1]
    """

    def __init__(
        self, qrels: Qrels, run: Run, conventions: Conventions, cutoffs: tuple, lists: RankedLists
    ):
        self.qrels = qrels
        self.run = run
        self.conventions = conventions
        self.cutoffs = tuple(cutoffs)
        self.lists = lists
        self._index: dict | None = None
        self._groups: TieGroups | None = None

    @property
    def run_name(self) -> str:
        """The run's name (:attr:`Run.name`)."""
        return self.run.name

    @property
    def query_ids(self) -> list:
        """The evaluated queries, in the run's order of first appearance (then, with
        ``missing_queries="zero"``, the judged queries the run lacks)."""
        return self.lists.query_ids

    @property
    def n_queries(self) -> int:
        """Number of evaluated queries."""
        return self.lists.n_queries

    @property
    def diagnostics(self) -> dict:
        """Missing and extra queries, duplicates, tie groups and the ties straddling each of
        :attr:`cutoffs` (the ``diagnostics`` of an evaluation, for these cutoffs)."""
        return self.lists.diagnostics.as_dict() | {"num_queries": self.n_queries}

    def lists_for(self, cutoffs) -> RankedLists:
        """The ranked lists, built again (and kept) when they lack one of ``cutoffs`` and
        the run has ties (the straddling counts need them; the ranking is the same)."""
        missing = set(cutoffs) - set(self.cutoffs)
        if missing and self.lists.diagnostics.tied_groups:
            self.cutoffs = tuple(sorted(set(self.cutoffs) | missing))
            self.lists = build_ranked_lists(self.qrels, self.run, self.conventions, self.cutoffs)
            self._groups = None
        return self.lists

    def evaluate(
        self,
        measures=DEFAULT_MEASURES,
        *,
        name: str | None = None,
        tie_report: bool = False,
        unjudged_report: bool = False,
    ) -> Evaluation:
        """Compute ``measures`` on this ranking.

        Parameters
        ----------
        measures : str or list of str or MeasureSpec
            Measure names (``"P@5"``, ``"nDCG@10"`` ...) or a comma-separated string.
        name : str, optional
            The evaluation's run name (the run's own by default).
        tie_report : bool
            Also compute :attr:`Evaluation.tie_report` (see :meth:`tie_report`).
        unjudged_report : bool
            Also compute :attr:`Evaluation.unjudged_report` (see :meth:`unjudged_report`).

        Returns
        -------
        Evaluation
            The numbers and diagnostics of :func:`metrics_core.evaluate`, bit for bit;
            its ``ranking`` is this object.

        Examples
        --------
        >>> r = rank({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 1.0}}, cutoffs=(1, 5))
        >>> ev = r.evaluate(["P@1", "RR"], name="mine")
        >>> ev.run_name, ev.aggregate, ev.diagnostics["ties_straddling"]
        ('mine', {'P@1': 0.0, 'RR': 0.5}, {'1': 1})
        """
        specs = parse_measures(measures)
        lists = self.lists_for(rank_cutoffs(specs))
        ev = evaluate_lists(
            lists, specs, self.conventions, self.run_name if name is None else name, self
        )
        if tie_report:
            ev = ev.replace(tie_report=self.tie_report(specs, values=ev.values))
        if unjudged_report:
            ev = ev.replace(unjudged_report=self.unjudged_report(specs, values=ev.values))
        return ev

    def tie_report(self, measures, values: dict | None = None) -> dict:
        """How much of each value is an artifact of tie-breaking
        (:func:`metrics_core.ranking.ties.tie_report`).

        Parameters
        ----------
        measures : str or list
        values : dict, optional
            ``{measure: per-query values}`` in :attr:`query_ids` order when already computed.

        Returns
        -------
        dict
            ``{"per_query": {qid: {measure: {"value", "min", "max", "expected"}}},
            "aggregate": {measure: {"min", "max", "expected"}}, "tie_dependent":
            {measure: [qid ...]}, "not_covered": {measure: reason}, "tie_groups": int}``.

        Examples
        --------
        >>> r = rank({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 1.0}})
        >>> r.tie_report(["RR"])["per_query"]["q1"]["RR"]
        {'value': 0.5, 'min': 0.5, 'max': 1.0, 'expected': 0.75}
        """
        return tie_report(self.lists, parse_measures(measures), self.conventions, self.run, values)

    def unjudged_report(self, measures, values: dict | None = None) -> dict:
        """How much each value depends on the retrieved documents the qrels do not judge
        (:func:`metrics_core.ranking.unjudged.unjudged_report`): per query and measure the
        value and its lowest and highest over every labelling of those documents with labels
        0 .. the qrels' highest.

        Examples
        --------
        >>> r = rank({"q1": {"a": 1}}, {"q1": {"x": 2.0, "a": 1.0}})
        >>> r.unjudged_report(["P@1", "RR"])["per_query"]["q1"]
        {'P@1': {'value': 0.0, 'min': 0.0, 'max': 1.0}, 'RR': {'value': 0.5, 'min': 0.5, 'max': 1.0}}
        """
        from metrics_core.ranking.unjudged import unjudged_report

        return unjudged_report(self.lists, parse_measures(measures), self.conventions, values)

    def unjudged_bounds(self, measures) -> dict:
        """Per covered measure, ``(lowest, highest)`` of each query's value over every
        labelling of its unjudged retrieved documents, arrays aligned with :attr:`query_ids`.

        >>> r = rank({"q1": {"a": 1}}, {"q1": {"x": 2.0, "a": 1.0}})
        >>> [v.tolist() for v in r.unjudged_bounds(["AP"])["AP"]]
        [[0.5], [1.0]]
        """
        from metrics_core.ranking.unjudged import unjudged_bounds

        return unjudged_bounds(self.lists, parse_measures(measures), self.conventions)

    def tie_bounds(self, measures) -> dict:
        """Per covered measure, ``(minimum, maximum)`` of each query's value over every
        order of its tied documents, arrays aligned with :attr:`query_ids`.

        Examples
        --------
        >>> r = rank({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 1.0}})
        >>> lo, hi = r.tie_bounds(["P@1"])["P@1"]
        >>> lo.tolist(), hi.tolist()
        ([0.0], [1.0])
        """
        return tie_bounds(self.lists, parse_measures(measures), self.conventions, self.run)

    def _query_index(self, query_id) -> int | None:
        if self._index is None:
            self._index = {q: i for i, q in enumerate(self.query_ids)}
        return self._index.get(str(query_id))

    def ranking(self, query_id) -> pd.DataFrame:
        """One query's ranked documents in engine order (ties and depth per the conventions).

        Returns
        -------
        pandas.DataFrame
            Columns ``rank`` (1-based), ``doc_id``, ``score``, ``relevance`` (NaN when
            unjudged) and ``judged``; no rows for a query that is not evaluated.

        Examples
        --------
        >>> r = rank({"q1": {"b": 2}}, {"q1": {"a": 1.0, "b": 1.0, "c": 3.0}})
        >>> r.ranking("q1")
           rank doc_id  score  relevance  judged
        0     1      c    3.0        NaN   False
        1     2      b    1.0        2.0    True
        2     3      a    1.0        NaN   False
        """
        import pandas as pd

        i = self._query_index(query_id)
        if i is None:
            return pd.DataFrame(columns=list(RANKING_COLUMNS))
        lists = self.lists
        lo, hi = int(lists.starts[i]), int(lists.starts[i + 1])
        rows = lists.run_rows(lo, hi)
        judged = lists.judged[lo:hi]
        label = np.where(judged, lists.label[lo:hi], np.nan)
        docs = (
            self.run.docid.take(rows).to_numpy(zero_copy_only=False)
            if len(rows)
            else np.array([], dtype=object)
        )
        return pd.DataFrame(
            {
                "rank": np.arange(1, hi - lo + 1),
                "doc_id": docs,
                "score": self.run.scores[rows],
                "relevance": label,
                "judged": judged,
            }
        )

    def tie_sizes(self, query_id=None) -> np.ndarray:
        """For each ranked row, the size of its tie group (1: not tied), as the engine
        compared the scores (float32 under ``compat="trec_eval9"``).

        Parameters
        ----------
        query_id : str, optional
            One query's rows (rank order; empty for a query not evaluated); all rows of
            every query, in :attr:`query_ids` order, by default.

        Examples
        --------
        >>> r = rank({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 1.0, "c": 0.5}, "q2": {"x": 0.5}})
        >>> r.tie_sizes("q1").tolist(), r.tie_sizes("nope").tolist()
        ([2, 2, 1], [])
        """
        if self._groups is None:
            self._groups = TieGroups(
                self.lists, ranked_scores(self.lists, self.run, self.conventions)
            )
        sizes = np.repeat(self._groups.size, self._groups.size)
        if query_id is None:
            return sizes
        i = self._query_index(query_id)
        if i is None:
            return np.zeros(0, dtype=np.int64)
        return sizes[int(self.lists.starts[i]) : int(self.lists.starts[i + 1])]

    def forget_derived(self) -> None:
        """Drop what this ranking derived and kept since it was built (the query index, the
        tie groups, its lists' shared work: :meth:`RankedLists.forget_derived`): computed
        again when asked, the same values. A process that keeps many rankings (the app) calls
        it once an evaluation is done, so that only the ranked lists stay."""
        self._index = None
        self._groups = None
        self.lists.forget_derived()

    def coverage_is_sound(self, min_share: float = MIN_SHARE) -> bool:
        """Whether the ranked lists show, at no cost, that the run has none of the problems
        of :func:`metrics_core.io.coverage.coverage_report`: a judged document ranked in at
        least ``min_share`` of the ranked queries. The ranked rows are a subset of the run's
        rows of the shared queries, so True is never wrong; False (an empty run, queries
        given without rows, ``judged_only``, which drops unjudged rows and so queries, or a
        real shortfall) asks for the whole report.

        >>> rank({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}}).coverage_is_sound()
        True
        >>> rank({"q1": {"d1": 1}}, {"q1": {"x": 1.0}}).coverage_is_sound()
        False
        """
        run, lists = self.run, self.lists
        if not len(run) or run.extra_query_ids or self.conventions.judged_only:
            return False
        starts = np.asarray(lists.starts, dtype=np.int64)
        judged = np.concatenate(([0], np.cumsum(np.asarray(lists.judged, dtype=np.int64))))
        with_judged = int(np.count_nonzero(judged[starts[1:]] - judged[starts[:-1]]))
        shared = int(np.count_nonzero(np.diff(starts)))
        return shared > 0 and with_judged > 0 and with_judged >= min_share * shared

    def __repr__(self) -> str:
        return (
            f"Ranking({self.run_name!r}, {self.n_queries} queries, {len(self.lists.seg)} ranked rows, "
            f"cutoffs {self.cutoffs})"
        )


__all__ = ["Ranking", "rank", "evaluate_lists", "resolve_conventions", "RANKING_COLUMNS"]
