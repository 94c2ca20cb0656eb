"""Evaluations as the command line's JSON and tables, and back from that JSON.

:func:`evaluations_json` is the object ``ranklab evaluate --format json`` prints (and the
first keys of ``ranklab compare --format json``); :func:`runs_from_json` reads such an
object back (a saved or uploaded file) into :class:`RunValues`, which
:func:`metrics_core.report.comparison.compare` accepts like evaluations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core._version import __version__
from metrics_core.errors import N_, InputError
from metrics_core.evaluation import RunValues  # the values of a run, beside Evaluation


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
