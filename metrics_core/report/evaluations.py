"""Evaluations as the command line's JSON and tables, and back from that JSON.

:func:`evaluations_json` is the object ``ranklab evaluate --format json`` prints (and the
first keys of ``ranklab compare --format json``); :func:`runs_from_json` reads such an
object back (a saved or uploaded file) into :class:`RunValues`, which
:func:`metrics_core.report.comparison.compare` accepts like evaluations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metrics_core._version import __version__
from metrics_core.errors import N_, InputError


def evaluations_json(evaluations: Sequence, conventions, per_query: bool = False) -> dict:
    """The command line's JSON object of evaluated runs (ARCHITECTURE.md's contract).

    Parameters
    ----------
    evaluations : sequence of Evaluation or RunValues
        Each with ``to_dict(per_query=...)`` (the ``runs`` entry); an evaluation whose
        ``coverage`` names a problem (no shared query, nothing judged) adds it to its
        ``diagnostics`` as ``coverage``.
    conventions : Conventions or mapping
        The conventions the runs were evaluated with (``as_dict()`` or a plain dict).
    per_query : bool
        Include each run's per-query values.

    Returns
    -------
    dict
        ``{"version", "conventions", "runs"}``; numbers as computed (NaN stays NaN: pass
        the result through :func:`metrics_core.report.json_safe` before ``json.dumps``).

    Examples
    --------
    >>> run = RunValues("bm25", pd.DataFrame({"AP": [0.5, 1.0]}, index=["q1", "q2"]))
    >>> out = evaluations_json([run], {"ties": "trec_eval"})
    >>> out["conventions"], out["runs"][0]["aggregate"]
    ({'ties': 'trec_eval'}, {'AP': 0.75})
    """
    conv = conventions.as_dict() if hasattr(conventions, "as_dict") else dict(conventions or {})
    runs = [ev.to_dict(per_query=per_query) for ev in evaluations]
    for entry, ev in zip(runs, evaluations, strict=True):
        coverage = getattr(ev, "coverage", None)
        if coverage and coverage.get("problem"):  # additive: the contract's keys stay as they are
            entry["diagnostics"]["coverage"] = coverage
    return {"version": __version__, "conventions": conv, "runs": runs}


def evaluations_frame(evaluations: Sequence, per_query: bool = False) -> pd.DataFrame:
    """The command line's table of evaluated runs.

    Parameters
    ----------
    evaluations : sequence of Evaluation or RunValues
    per_query : bool
        One row per (run, query) with the per-query values; otherwise one row per run
        with its aggregate values.

    Returns
    -------
    pandas.DataFrame
        Columns ``run``, (``query_id``,) then one per measure.

    Examples
    --------
    >>> run = RunValues("bm25", pd.DataFrame({"AP": [0.5, 1.0]}, index=["q1", "q2"]))
    >>> evaluations_frame([run]).to_dict(orient="records")
    [{'run': 'bm25', 'AP': 0.75}]
    """
    if per_query:
        frames = []
        for ev in evaluations:
            f = ev.per_query.reset_index()
            f.insert(0, "run", ev.run_name)
            frames.append(f)
        return pd.concat(frames, ignore_index=True)
    return pd.DataFrame([{"run": ev.run_name, **ev.aggregate} for ev in evaluations])


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
        out = {"name": self.run_name, "aggregate": dict(self.aggregate)}
        if per_query:
            out["per_query"] = {
                str(q): {m: row[m] for m in self.measures}
                for q, row in zip(
                    self.per_query.index, self.per_query.to_dict(orient="records"), strict=True
                )
            }
        out["diagnostics"] = dict(self.diagnostics)
        if self.tie_report is not None:
            out["tie_report"] = self.tie_report
        if self.unjudged_report is not None:
            out["unjudged_report"] = self.unjudged_report
        return out


def runs_from_json(
    payload: Mapping, source: str = "the evaluations JSON"
) -> tuple[list[RunValues], dict]:
    """The runs of an evaluations JSON object (``ranklab evaluate --per-query --format json``).

    Parameters
    ----------
    payload : mapping
        The parsed JSON: ``{"conventions": {...}, "runs": [{"name", "aggregate",
        "per_query", "diagnostics"}, ...]}``. Every run needs ``per_query``.
    source : str
        The file name, for messages.

    Returns
    -------
    (list of RunValues, dict)
        The runs (per-query values as float64, None read as NaN, queries in the file's
        order) and the conventions they were evaluated with.

    Raises
    ------
    InputError
        When ``runs`` is missing or empty, a run has no name or no per-query values.

    Examples
    --------
    >>> runs, conv = runs_from_json({"conventions": {}, "runs": [
    ...     {"name": "a", "aggregate": {"AP": 0.5}, "per_query": {"q1": {"AP": 0.5}}}]})
    >>> runs[0].run_name, float(runs[0].per_query.loc["q1", "AP"]), runs[0].aggregate
    ('a', 0.5, {'AP': 0.5})
    """
    runs = payload.get("runs") if isinstance(payload, Mapping) else None
    if not isinstance(runs, list) or not runs:
        raise InputError(
            N_("no runs in the file"),
            source=source,
            hint=N_('expected {"runs": [...]} as evaluations_json(per_query=True) writes'),
            plain_hint=N_('expected {"runs": [...]}, an evaluation saved with per-query values'),
        )
    out = []
    for i, entry in enumerate(runs, 1):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        values = entry.get("per_query") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not isinstance(values, Mapping):
            raise InputError(
                N_("run {number} has no name or no per-query values"),
                source=source,
                hint=N_("evaluate with per_query=True to save per-query values"),
                plain_hint=N_("save the evaluation with its per-query values"),
                params={"number": i},
            )
        frame = pd.DataFrame.from_dict(dict(values), orient="index").astype(np.float64)
        frame.index = frame.index.astype(str)
        frame.index.name = "query_id"
        aggregate = {
            str(k): (np.nan if v is None else float(v))
            for k, v in (entry.get("aggregate") or {}).items()
        }
        out.append(
            RunValues(
                name,
                frame,
                aggregate,
                dict(entry.get("diagnostics") or {}),
                entry.get("tie_report"),
                entry.get("unjudged_report"),
            )
        )
    conventions = payload.get("conventions") or {}
    return out, dict(conventions)


__all__ = ["evaluations_json", "evaluations_frame", "RunValues", "runs_from_json", "as_runs"]


def as_runs(evaluations) -> list:
    """Evaluations as given, or RunValues of a mapping run name -> per-query DataFrame."""
    if isinstance(evaluations, Mapping):
        return [RunValues(str(name), frame) for name, frame in evaluations.items()]
    return list(evaluations)
