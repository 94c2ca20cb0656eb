"""Evaluation of runs against qrels: the library's main entry point.

A front door: :func:`evaluate` picks the path -- the whole run ranked once
(:func:`metrics_core.ranking.ranked.rank`), blocks of a stream
(:mod:`metrics_core.ranking.streaming`) or parts on a Dask cluster
(:mod:`metrics_core.ranking.distributed`) -- and every path returns the same
:class:`~metrics_core.evaluation.Evaluation`. This module imports only downward.
"""

from __future__ import annotations

from collections.abc import Mapping

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run
from metrics_core.errors import N_, InputError
from metrics_core.evaluation import Evaluation
from metrics_core.io import read_qrels, read_run
from metrics_core.io.coverage import coverage_report, warn_coverage
from metrics_core.ranking.ranked import evaluate_lists, rank, resolve_conventions
from metrics_core.ranking.ranked_lists import RankedLists
from metrics_core.ranking.registry import (
    DEFAULT_MEASURES,
    MeasureSpec,
    parse_measures,
    rank_cutoffs,
)


def ranking_cutoffs(measures) -> tuple[int, ...]:
    """The rank cutoffs whose straddling tie groups an evaluation of ``measures`` reports
    (:func:`~metrics_core.ranking.registry.rank_cutoffs`; kept under this name for old code).

    >>> ranking_cutoffs(["P@10", "AP", "nDCG@5"])
    (5, 10)
    """
    return rank_cutoffs(measures)


def evaluate_ranked(ranked: RankedLists, specs: list[MeasureSpec], conv: Conventions,
                    run_name: str) -> Evaluation:
    """Compute measures on already ranked lists (deprecated: :meth:`Ranking.evaluate`).

    See :func:`~metrics_core.ranking.ranked.evaluate_lists`: ``ranked`` may have been
    built for more cutoffs than ``specs`` use; a cutoff it lacks is an error."""
    return evaluate_lists(ranked, specs, conv, run_name)


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
        straddle parts), or one file; the workers read their own units of it (byte
        ranges, row groups) and evaluate them in blocks of ``block_rows`` rows
        (:mod:`metrics_core.ranking.distributed`).
    **overrides
        Convention fields to change for this call, e.g. ``missing_queries="zero"``,
        ``ties="expected"`` (each value averaged exactly over the orders of tied documents,
        as scikit-learn's ``ndcg_score``), ``ignore_identical_ids=True`` (BEIR: a document
        whose id is the query's is dropped from the run).

    Returns
    -------
    Evaluation
        Read whole, its ``ranking`` is the :class:`~metrics_core.ranking.ranked.Ranking`
        the values were computed on (``rank(qrels, run, ...).evaluate(measures)``); None
        when evaluated in blocks or on a cluster.

    Examples
    --------
    >>> ev = evaluate({"q1": {"d1": 1, "d3": 1}}, {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}},
    ...               ["P@2", "AP", "RR"])
    >>> {m: round(v, 4) for m, v in ev.aggregate.items()}
    {'P@2': 0.5, 'AP': 0.8333, 'RR': 1.0}
    """
    conv = resolve_conventions(conventions, overrides)
    specs = parse_measures(measures)
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    whole = tie_report or conv.ties == "expected"  # both need every tie group in memory
    if whole and (client is not None or (block_rows or 0) > 0):
        raise InputError(N_("the tie report needs the whole run in memory"),
                         hint=N_("Leave out the scheduler or the block rows, or the tie report"))
    if client is not None:
        from metrics_core.ranking.distributed import evaluate_parts

        return evaluate_parts(q, run, specs, conv, rank_cutoffs(specs), client, block_rows=block_rows)
    rows = 0 if whole else _stream_block_rows(run, block_rows)
    if rows:
        from metrics_core.io.blocks import BATCH_ROWS, NotStreamable, open_run_stream
        from metrics_core.ranking.streaming import evaluate_stream

        try:
            if isinstance(run, Run):
                from metrics_core.io.blocks import run_stream

                stream = run_stream(run, batch_rows=min(BATCH_ROWS, rows))
            else:
                stream = open_run_stream(run, batch_rows=min(BATCH_ROWS, rows))
            return evaluate_stream(q, stream, specs, conv, rank_cutoffs(specs), rows)
        except NotStreamable:
            pass  # read whole below (the whole-file reader names any bad line)
    ranking = rank(q, run, conv, cutoffs=rank_cutoffs(specs))
    ev = ranking.evaluate(specs, tie_report=tie_report)
    # never a silent zero: the ranked lists rule most runs sound at no cost; the others get
    # the whole coverage report (and its warning) now
    if ranking.coverage_is_sound():
        ev.defer_coverage(lambda: coverage_report(q, ranking.run))
    else:
        ev.coverage = warn_coverage(q, ranking.run, stacklevel=2)
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


__all__ = ["Evaluation", "evaluate", "evaluate_many", "evaluate_ranked", "ranking_cutoffs", "rank"]
