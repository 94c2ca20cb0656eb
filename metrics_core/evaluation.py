"""The result of evaluating one run: :class:`Evaluation`; a run's values without their
ranking, read back or grouped (:class:`RunValues`); and the values in the peers' shapes
(:func:`long_frame`, :func:`nested_dict`, :func:`nested_from_columns`).

This module imports nothing of the ranking engine: the whole-run path
(:meth:`metrics_core.ranking.ranked.Ranking.evaluate`), the streaming path
(:mod:`metrics_core.scale.streaming`) and the Dask path
(:mod:`metrics_core.scale.distributed`) all build the same object. It is immutable once
built: :meth:`Evaluation.replace` and :meth:`Evaluation.renamed` give a changed copy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class Evaluation:
    """Per-query values and summaries of one run.

    Parameters
    ----------
    run_name : str
    specs : list of MeasureSpec
        The parsed measures, in request order.
    per_query : pandas.DataFrame or (list of str, dict)
        The per-query values: a frame indexed by query id, or the evaluated query ids in
        evaluation order with ``{measure: float64 array}`` aligned with them (turned into
        a frame on first use of :attr:`per_query`: the command line's means never need
        pandas).
    aggregate_values : dict
        Measure -> summary over the evaluated queries.
    diagnostics : dict
    conventions : Conventions
    ranking : Ranking, optional
        The :class:`~metrics_core.ranking.ranked.Ranking` the evaluation came from; None
        when the run was evaluated in blocks or on a Dask cluster.
    tie_report : dict, optional
    unjudged_report : dict, optional
    coverage : dict or callable, optional
        The coverage report, or a function of no argument that makes it on first use.
    streaming, distributed : dict, optional
        How the run was read in blocks, or on a Dask cluster (see :attr:`streaming`,
        :attr:`distributed`); absent otherwise.

    Attributes
    ----------
    run_name : str
    measures : list of str
        Canonical measure names, in request order.
    per_query : pandas.DataFrame
        Index ``query_id`` (sorted as trec_eval sorts: by string), one column per measure.
    aggregate : dict
        Measure -> summary over the evaluated queries (mean; sums for counts; geometric
        mean for GMAP).
    diagnostics : dict
        Missing and extra queries, duplicates, ties straddling a cutoff.
    tie_report : dict or None
        With ``evaluate(..., tie_report=True)``: ``{"per_query": {qid: {measure: {"value",
        "min", "max", "expected"}}}, "aggregate": {measure: {"min", "max", "expected"}},
        "tie_dependent": {measure: [qid, ...]}, "not_covered": {measure: reason}}``.
    unjudged_report : dict or None
        With ``evaluate(..., unjudged_report=True)``: ``{"per_query": {qid: {measure:
        {"value", "min", "max"}}}, "aggregate": {measure: {"min", "max"}},
        "unjudged_dependent": {measure: [qid, ...]}, "covered": [measure, ...],
        "not_covered": {measure: reason}, "unjudged_documents", "queries_with_unjudged",
        "top_label"}``: the lowest and highest value over every labelling of the unjudged
        retrieved documents with labels 0 .. the qrels' highest
        (:mod:`metrics_core.ranking.unjudged`).
    conventions : Conventions
    ranking : Ranking or None
    streaming : dict
        Only when the run was read in blocks: ``{"blocks", "rows",
        "noncontiguous_queries", "spilled_rows"}`` (``hasattr(ev, "streaming")`` tells).
    distributed : dict
        Only when the run was evaluated on a Dask cluster: ``{"parts", "units", ...}``.

    Nothing of it is assigned after it is built (an assignment is an ``AttributeError``):
    :meth:`replace` and :meth:`renamed` give a changed copy.

    Examples
    --------
    >>> ev = Evaluation("run", [], (["q2", "q1"], {}), {}, {}, None)
    >>> ev.evaluated_ids, ev.values
    (['q2', 'q1'], {})
    >>> ev.renamed("bm25").run_name, ev.run_name
    ('bm25', 'run')
    """

    #: the fields :meth:`replace` changes
    REPLACEABLE = (
        "run_name",
        "tie_report",
        "unjudged_report",
        "coverage",
        "streaming",
        "distributed",
    )

    run_name: str
    specs: list
    measures: list[str]
    aggregate: dict
    diagnostics: dict
    conventions: Any
    ranking: Any
    tie_report: dict | None
    unjudged_report: dict | None
    streaming: dict
    distributed: dict
    _per_query: Any
    _columns: tuple | None
    _coverage: dict | None
    _coverage_compute: Callable[[], dict] | None

    def __init__(
        self,
        run_name,
        specs,
        per_query,
        aggregate_values,
        diagnostics,
        conventions,
        ranking=None,
        *,
        tie_report=None,
        unjudged_report=None,
        coverage=None,
        streaming=None,
        distributed=None,
    ):
        put = self._put
        put("run_name", run_name)
        put("specs", list(specs))
        put("measures", [s.name for s in self.specs])
        put("_per_query", per_query)
        put("_columns", per_query if isinstance(per_query, tuple) else None)
        put("aggregate", aggregate_values)
        put("diagnostics", diagnostics)
        put("conventions", conventions)
        put("ranking", ranking)
        put(
            "tie_report", tie_report
        )  # evaluate(..., tie_report=True): see metrics_core.ranking.ties
        put("unjudged_report", unjudged_report)  # see metrics_core.ranking.unjudged
        self._put_coverage(coverage)
        for name, info in (("streaming", streaming), ("distributed", distributed)):
            if info is not None:  # present only on the path that made it
                put(name, info)

    def _put(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def _put_coverage(self, coverage) -> None:
        later = callable(coverage)
        self._put("_coverage", None if later else coverage)
        self._put("_coverage_compute", coverage if later else None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"an Evaluation is immutable: ev.replace({name}=...) gives a changed copy"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError("an Evaluation is immutable")

    def replace(self, **changes) -> Evaluation:
        """A copy with ``changes`` (fields of :data:`REPLACEABLE`); the per-query values,
        aggregates and diagnostics are shared, not copied.

        >>> ev = Evaluation("run", [], (["q1"], {}), {}, {}, None)
        >>> later = ev.replace(coverage=lambda: {"problem": None})  # made on first use
        >>> later.coverage, ev.coverage
        ({'problem': None}, None)
        """
        unknown = set(changes) - set(self.REPLACEABLE)
        if unknown:
            raise TypeError(f"Evaluation.replace: unknown field(s) {', '.join(sorted(unknown))}")
        new = copy.copy(self)
        for name, value in changes.items():
            if name == "coverage":
                new._put_coverage(value)
            else:
                new._put(name, value)
        return new

    def renamed(self, run_name: str) -> Evaluation:
        """The same evaluation under another run name (``replace(run_name=...)``)."""
        return self.replace(run_name=run_name)

    @property
    def coverage(self) -> dict | None:
        """``metrics_core.io.coverage.coverage_report`` of a run evaluated whole by
        :func:`metrics_core.evaluate` (how many of its queries and documents the qrels
        judge); None when streamed or evaluated on a cluster. Given as a function, it is
        made on first use (the whole report costs about as much again as the evaluation,
        and most callers never read it)."""
        if self._coverage is None and self._coverage_compute is not None:
            self._put("_coverage", self._coverage_compute())
            self._put("_coverage_compute", None)
        return self._coverage

    @property
    def evaluated_ids(self) -> list:
        """The evaluated query ids in evaluation order (the run's order of first
        appearance; :attr:`per_query` sorts them as trec_eval does)."""
        if self._columns is not None:
            return list(self._columns[0])
        return [str(q) for q in self.per_query.index]

    @property
    def values(self) -> dict:
        """``{measure: float64 array}`` aligned with :attr:`evaluated_ids`."""
        if self._columns is not None:
            return dict(self._columns[1])
        frame = self.per_query
        return {m: frame[m].to_numpy(dtype=np.float64) for m in self.measures if m in frame}

    @property
    def per_query(self) -> pd.DataFrame:
        """Per-query values, one column per measure, index ``query_id`` sorted by string."""
        if isinstance(self._per_query, tuple):
            import pandas as pd

            query_ids, columns = self._per_query
            # the ids' own str objects (dtype object): an index of pandas' Arrow-backed str
            # dtype makes a Python str of every id again for its hash table (the sort below,
            # each lookup), a copy per evaluation that a visitor's session holds
            frame = pd.DataFrame(columns, index=pd.Index(query_ids, name="query_id", dtype=object))
            self._put("_per_query", frame.sort_index(kind="stable"))  # a cache, not a change
        return self._per_query

    def to_frame(self, long: bool = False) -> pd.DataFrame:
        """Per-query values: wide (:attr:`per_query`), or with ``long=True`` one row per
        query and measure, columns ``query_id``, ``measure``, ``value`` (ir_measures' and
        ranx's long shape).

        Examples
        --------
        >>> import metrics_core as mc
        >>> ev = mc.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["P@1", "RR"])
        >>> ev.to_frame(long=True).to_dict(orient="records")
        [{'query_id': 'q1', 'measure': 'P@1', 'value': 1.0}, {'query_id': 'q1', 'measure': 'RR', 'value': 1.0}]
        """
        if not long:
            return self.per_query
        return long_frame(self)

    def to_dict(self, per_query: bool = False, *, nested: bool = False) -> dict:
        """The JSON ``runs`` entry of the command-line contract, or pytrec_eval's shape.

        Parameters
        ----------
        per_query : bool
            Also give every query's values.
        nested : bool
            Instead, ``{query_id: {measure: value}}``: the nested dict pytrec_eval's
            ``RelevanceEvaluator.evaluate`` returns (keys are RankLab's measure names).

        Returns
        -------
        dict
            ``{"name", "aggregate", ["per_query"], "diagnostics", ["tie_report"],
            ["unjudged_report"]}``, or the
            nested per-query dict.

        Examples
        --------
        >>> import metrics_core as mc
        >>> mc.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["P@1"]).to_dict(nested=True)
        {'q1': {'P@1': 1.0}}
        """
        if nested:
            return nested_dict(self)
        return run_entry(self, per_query)

    def summary(self) -> pd.DataFrame:
        """Mean (the aggregate) and median of each measure.

        Returns
        -------
        pandas.DataFrame
            Index the measures, columns ``aggregate`` and ``median``.
        """
        import pandas as pd

        med = self.per_query.median(numeric_only=True) if len(self.per_query) else {}
        return pd.DataFrame(
            {
                "aggregate": pd.Series(self.aggregate),
                "median": pd.Series(
                    {m: float(med[m]) if m in med else np.nan for m in self.measures}
                ),
            }
        )

    def __repr__(self) -> str:
        shown = ", ".join(f"{m}={v:.4f}" for m, v in list(self.aggregate.items())[:4])
        n = len(self._per_query[0]) if isinstance(self._per_query, tuple) else len(self._per_query)
        return f"Evaluation({self.run_name!r}, {n} queries, {shown})"


@dataclass
class RunValues:
    """A run's per-query values, without the ranking they came from.

    What a comparison needs of an evaluation (``run_name``, ``per_query``) and what its
    JSON reports (``aggregate``, ``diagnostics``), for values read back from a saved
    evaluation or held by an application.

    Parameters
    ----------
    run_name : str
    per_query : pandas.DataFrame
        Index: query ids; one float column per measure.
    aggregate : dict, optional
        Measure -> the run's value (default: the mean of each column over the queries
        that have a value; the evaluation's own aggregate, e.g. a sum for NumRet or
        GMAP's geometric mean, when it is known: pass it).
    diagnostics : dict, optional
        The evaluation's diagnostics (missing and extra queries, ties, duplicates).
    tie_report : dict, optional
        The evaluation's tie report, when it has one.
    unjudged_report : dict, optional
        The evaluation's unjudged report, when it has one.

    Examples
    --------
    >>> import pandas as pd
    >>> rv = RunValues("a", pd.DataFrame({"RR": [1.0, np.nan]}, index=["q1", "q2"]))
    >>> rv.measures, rv.aggregate, rv.to_dict()
    (['RR'], {'RR': 1.0}, {'name': 'a', 'aggregate': {'RR': 1.0}, 'diagnostics': {}})
    """

    run_name: str
    per_query: pd.DataFrame
    aggregate: dict = field(default_factory=dict)
    diagnostics: dict = field(default_factory=dict)
    tie_report: dict | None = None
    unjudged_report: dict | None = None

    @classmethod
    def from_evaluation(cls, evaluation) -> RunValues:
        """The values of an :class:`~metrics_core.evaluation.Evaluation` (its per-query
        table, aggregate, diagnostics and tie report), without its ranking: small, picklable,
        and with the same :meth:`to_dict`.

        >>> import metrics_core as mc
        >>> ev = mc.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["RR"])
        >>> RunValues.from_evaluation(ev).to_dict() == ev.to_dict()
        True
        """
        return cls(
            evaluation.run_name,
            evaluation.per_query,
            dict(evaluation.aggregate),
            dict(evaluation.diagnostics),
            getattr(evaluation, "tie_report", None),
            getattr(evaluation, "unjudged_report", None),
        )

    def __post_init__(self):
        if not self.aggregate:
            values = self.per_query.to_numpy(dtype=np.float64)
            with np.errstate(invalid="ignore"):
                counted = (~np.isnan(values)).sum(axis=0)
                sums = np.nansum(values, axis=0)
            self.aggregate = {
                str(m): float(s / c) if c else float("nan")
                for m, s, c in zip(self.per_query.columns, sums, counted, strict=True)
            }

    @property
    def measures(self) -> list[str]:
        """The measures (columns of ``per_query``), in order."""
        return [str(m) for m in self.per_query.columns]

    def to_dict(self, per_query: bool = False) -> dict:
        """The JSON ``runs`` entry, as :meth:`Evaluation.to_dict` writes it."""
        return run_entry(self, per_query)


# -- the peers' shapes ------------------------------------------------------------------
# Built from an evaluation's columns in one pass: the evaluation itself has no per-query
# Python step, building a dictionary of dictionaries is the output's cost.


def run_entry(ev, per_query: bool = False) -> dict:
    """The JSON ``runs`` entry of an :class:`Evaluation` or :class:`RunValues`: its name,
    aggregate, (with ``per_query``) every query's values by measure, diagnostics, and the tie
    and unjudged reports where they were asked."""
    out = {"name": ev.run_name, "aggregate": dict(ev.aggregate)}
    if per_query:
        rows = ev.per_query.to_dict(orient="records")
        out["per_query"] = {
            str(q): {m: row[m] for m in ev.measures}
            for q, row in zip(ev.per_query.index, rows, strict=True)
        }
    out["diagnostics"] = dict(ev.diagnostics)
    if ev.tie_report is not None:
        out["tie_report"] = ev.tie_report
    if ev.unjudged_report is not None:
        out["unjudged_report"] = ev.unjudged_report
    return out


def nested_from_columns(
    query_ids: Sequence, keys: Sequence[str], columns: Sequence[np.ndarray]
) -> dict:
    """``{query: {key: value}}`` from per-query columns (Python floats, query order kept).

    >>> nested_from_columns(["q1", "q2"], ["AP", "P@5"], [np.array([0.5, 1.0]), np.array([0.2, 0.0])])
    {'q1': {'AP': 0.5, 'P@5': 0.2}, 'q2': {'AP': 1.0, 'P@5': 0.0}}
    """
    if not len(keys):
        return {str(q): {} for q in query_ids}
    rows = np.column_stack([np.asarray(c, dtype=np.float64) for c in columns]).tolist()
    keys = list(keys)
    return {
        str(q): dict(zip(keys, row, strict=True)) for q, row in zip(query_ids, rows, strict=True)
    }


def nested_dict(ev: Evaluation) -> dict[str, dict[str, float]]:
    """An evaluation's per-query values as ``{query_id: {measure: value}}`` (pytrec_eval's
    shape, RankLab's measure names), queries in ``ev.per_query``'s order
    (:meth:`Evaluation.to_dict` with ``nested=True``).

    >>> import metrics_core as mc
    >>> ev = mc.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}}, ["P@2", "RR"])
    >>> nested_dict(ev)
    {'q1': {'P@2': 0.5, 'RR': 1.0}}
    """
    frame = ev.per_query
    return nested_from_columns(frame.index, ev.measures, [frame[m].to_numpy() for m in ev.measures])


def long_frame(ev: Evaluation) -> pd.DataFrame:
    """An evaluation's per-query values as a long table (ir_measures' ``iter_calc`` and
    ranx's shape; :meth:`Evaluation.to_frame` with ``long=True``): columns ``query_id``,
    ``measure``, ``value``; queries in ``ev.per_query``'s order, measures in request order
    within each.

    >>> import metrics_core as mc
    >>> ev = mc.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}}, ["P@2", "RR"])
    >>> long_frame(ev).to_dict("records")
    [{'query_id': 'q1', 'measure': 'P@2', 'value': 0.5}, {'query_id': 'q1', 'measure': 'RR', 'value': 1.0}]
    """
    import pandas as pd

    frame = ev.per_query
    measures = list(ev.measures)
    n, k = len(frame), len(measures)
    values = frame[measures].to_numpy(dtype=np.float64).reshape(-1) if k else np.zeros(0)
    return pd.DataFrame(
        {
            "query_id": np.repeat(np.asarray(frame.index, dtype=object), k),
            "measure": np.tile(np.asarray(measures, dtype=object), n),
            "value": values,
        }
    )


__all__ = ["Evaluation", "RunValues", "long_frame", "nested_dict", "nested_from_columns"]
