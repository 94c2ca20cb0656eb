"""Evaluation of runs against qrels: the library's main entry point."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run
from metrics_core.errors import InputError
from metrics_core.io import read_qrels, read_run
from metrics_core.io.coverage import warn_coverage
from metrics_core.ranking.engine import RankedLists, build_ranked_lists
from metrics_core.ranking.measures import compute, summarize
from metrics_core.ranking.registry import DEFAULT_MEASURES, MeasureSpec, parse_measures

if TYPE_CHECKING:
    import pandas as pd


class Evaluation:
    """Per-query values and summaries of one run.

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
    conventions : Conventions
    """

    coverage = None  # coverage_report of a run read whole (metrics_core.io.coverage); else None

    def __init__(self, run_name, specs, per_query, aggregate_values, diagnostics, conventions,
                 ranked=None):
        self.run_name = run_name
        self.specs = list(specs)
        self.measures = [s.name for s in self.specs]
        # a DataFrame, or (query ids, {measure: values}) turned into one on first use:
        # the command line's means never need pandas (0.3 s to import)
        self._per_query = per_query
        self.aggregate = aggregate_values
        self.diagnostics = diagnostics
        self.conventions = conventions
        self.ranked = ranked
        self.tie_report = None  # evaluate(..., tie_report=True): see metrics_core.ranking.ties

    @property
    def per_query(self) -> pd.DataFrame:
        if isinstance(self._per_query, tuple):
            import pandas as pd

            query_ids, columns = self._per_query
            frame = pd.DataFrame(columns, index=pd.Index(query_ids, name="query_id"))
            self._per_query = frame.sort_index(kind="stable")
        return self._per_query

    @per_query.setter
    def per_query(self, frame) -> None:
        self._per_query = frame

    def to_dict(self, per_query: bool = False) -> dict:
        """The JSON ``runs`` entry of the command-line contract."""
        out = {"name": self.run_name, "aggregate": dict(self.aggregate)}
        if per_query:
            out["per_query"] = {
                str(q): {m: row[m] for m in self.measures}
                for q, row in zip(self.per_query.index, self.per_query.to_dict(orient="records"), strict=False)
            }
        out["diagnostics"] = dict(self.diagnostics)
        if self.tie_report is not None:
            out["tie_report"] = self.tie_report
        return out

    def summary(self) -> pd.DataFrame:
        """Mean (the aggregate) and median of each measure."""
        import pandas as pd

        med = self.per_query.median(numeric_only=True) if len(self.per_query) else {}
        return pd.DataFrame({"aggregate": pd.Series(self.aggregate),
                             "median": pd.Series({m: float(med[m]) if m in med else np.nan
                                                  for m in self.measures})})

    def __repr__(self) -> str:
        shown = ", ".join(f"{m}={v:.4f}" for m, v in list(self.aggregate.items())[:4])
        n = len(self._per_query[0]) if isinstance(self._per_query, tuple) else len(self._per_query)
        return f"Evaluation({self.run_name!r}, {n} queries, {shown})"


def _cutoffs(specs) -> tuple[int, ...]:
    return tuple(sorted({int(s.cutoff) for s in specs
                         if s.cutoff is not None and s.definition.cutoff != "fraction"}))


def ranking_cutoffs(measures) -> tuple[int, ...]:
    """The rank cutoffs whose straddling tie groups an evaluation of ``measures`` reports
    (:func:`build_ranked_lists` needs at least these for :func:`evaluate_ranked`)."""
    return _cutoffs(parse_measures(measures))


def evaluate_ranked(ranked: RankedLists, specs: list[MeasureSpec], conv: Conventions,
                    run_name: str) -> Evaluation:
    """Compute measures on already ranked lists (used by the app to re-use one ranking).

    ``ranked`` may have been built for more cutoffs than ``specs`` use (the ranking itself
    does not depend on them): the diagnostics report the ties straddling the cutoffs of
    ``specs`` only, so the result equals :func:`evaluate`'s. A cutoff of ``specs`` the
    ranking was not built with is an error."""
    cutoffs = _cutoffs(specs)
    diag = ranked.diagnostics.as_dict()
    built = diag["ties_straddling"]
    if any(str(k) not in built for k in cutoffs) and ranked.diagnostics.tied_groups:
        raise ValueError(f"ranked lists built without the cutoffs {cutoffs}")
    straddling = {str(k): built.get(str(k), 0) for k in cutoffs} if ranked.diagnostics.tied_groups else {}
    diag["ties_straddling"] = straddling
    diag["ties"] = int(sum(straddling.values()))
    columns = {s.name: compute(ranked, s, conv) for s in specs}
    agg = {s.name: summarize(ranked, s, columns[s.name], conv) for s in specs}
    return Evaluation(run_name, specs, (ranked.query_ids, columns), agg, diag | {
        "num_queries": ranked.n_queries}, conv, ranked)


def evaluate(qrels, run, measures=DEFAULT_MEASURES, conventions: Conventions | None = None,
             *, tie_report: bool = False, block_rows: int | None = None, client=None,
             **overrides) -> Evaluation:
    """Evaluate one run against qrels.

    Parameters
    ----------
    qrels, run : any source the readers accept (path, bytes, file, DataFrame, dict, Qrels/Run)
    measures : list of str or str
        Measure names (``"P@5"``, ``"nDCG@10"`` ...), or a comma-separated string.
    conventions : Conventions, optional
        Defaults are trec_eval's.
    tie_report : bool
        Also compute :attr:`Evaluation.tie_report`: per query and measure the minimum,
        maximum and expected value over all orders of tied documents
        (:mod:`metrics_core.ranking.ties`). Needs the whole run in memory: not with
        ``client``, nor with ``block_rows`` > 0.
    block_rows : int, optional
        Evaluate the run in blocks of about this many rows (whole queries), reading it
        as a stream: memory bounded by the block, not the run; same numbers
        (:mod:`metrics_core.ranking.streaming`). ``None`` (default): run files of at
        least ``STREAM_THRESHOLD_BYTES`` (64 MiB) stream in blocks of
        ``DEFAULT_BLOCK_ROWS`` (500 k rows), smaller ones are read whole; ``0``: always
        read whole. Applies to TREC, CSV/TSV and Parquet files (paths, bytes, uploads)
        and to a :class:`Run` in memory (then only when given: the engine's working
        memory is bounded by the block). A streamed evaluation has a ``streaming``
        attribute (blocks, rows, non-contiguous queries, spilled rows); its ``ranked``
        is None for a file, and for a Run in memory a
        :class:`~metrics_core.ranking.streaming.LazyRanked` (each query ranked again
        when it is looked at).
    client : dask.distributed.Client, optional
        Evaluate on a Dask cluster: ``run`` is then a folder, a glob or a list of run
        parts (TREC, CSV/TSV or Parquet files that together make one run; a query may
        straddle parts), read by the workers (:mod:`metrics_core.ranking.distributed`).
    **overrides
        Convention fields to change for this call, e.g. ``missing_queries="zero"``.

    Returns
    -------
    Evaluation

    Examples
    --------
    >>> ev = evaluate({"q1": {"d1": 1, "d3": 1}}, {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}},
    ...               ["P@2", "AP", "RR"])
    >>> {m: round(v, 4) for m, v in ev.aggregate.items()}
    {'P@2': 0.5, 'AP': 0.8333, 'RR': 1.0}
    """
    conv = (conventions or Conventions())
    if overrides:
        conv = conv.replace(**overrides)
    specs = parse_measures(measures)
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    if tie_report and (client is not None or (block_rows or 0) > 0):
        raise InputError("the tie report needs the whole run in memory",
                         hint="Leave out the scheduler or the block rows, or the tie report")
    if client is not None:
        from metrics_core.ranking.distributed import evaluate_parts

        return evaluate_parts(q, run, specs, conv, _cutoffs(specs), client)
    rows = 0 if tie_report else _stream_block_rows(run, block_rows)
    if rows:
        from metrics_core.io.blocks import BATCH_ROWS, NotStreamable, open_run_stream
        from metrics_core.ranking.streaming import evaluate_stream

        try:
            if isinstance(run, Run):
                from metrics_core.io.blocks import run_stream

                stream = run_stream(run, batch_rows=min(BATCH_ROWS, rows))
            else:
                stream = open_run_stream(run, batch_rows=min(BATCH_ROWS, rows))
            return evaluate_stream(q, stream, specs, conv, _cutoffs(specs), rows)
        except NotStreamable:
            pass  # read whole below (the whole-file reader names any bad line)
    r = run if isinstance(run, Run) else read_run(run)
    ranked = build_ranked_lists(q, r, conv, _cutoffs(specs))
    ev = evaluate_ranked(ranked, specs, conv, r.name)
    ev.coverage = warn_coverage(q, r, stacklevel=2)  # never a silent zero (metrics_core.io.coverage)
    if tie_report:
        from metrics_core.ranking.ties import tie_report as _tie_report

        ev.tie_report = _tie_report(ranked, specs, conv, r, ev._per_query[1])
    return ev


def _stream_block_rows(run, block_rows) -> int:
    """Rows per block when ``run`` is to be streamed, else 0."""
    if block_rows is not None:
        return max(int(block_rows), 0)
    import os

    if isinstance(run, (str, os.PathLike)) and os.path.isfile(run):
        from metrics_core.ranking.streaming import DEFAULT_BLOCK_ROWS, STREAM_THRESHOLD_BYTES

        if os.path.getsize(run) >= STREAM_THRESHOLD_BYTES:
            return DEFAULT_BLOCK_ROWS
    return 0


def evaluate_many(qrels, runs, measures=DEFAULT_MEASURES, conventions: Conventions | None = None,
                  **overrides) -> list[Evaluation]:
    """Evaluate several runs (a mapping name -> run, or a list of runs) against one qrels."""
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    if isinstance(runs, Mapping):
        items = [(name, read_run(r, name=name)) for name, r in runs.items()]
    else:
        items = [(None, read_run(r)) for r in runs]
    return [evaluate(q, r, measures, conventions, **overrides) for _, r in items]
