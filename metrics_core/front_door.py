"""Evaluation of runs against qrels: the library's one front door (``mc.evaluate``).

:func:`evaluate` is the only place that picks the path -- the whole run ranked once
(:func:`metrics_core.ranking.ranked.rank`), blocks of a stream
(:mod:`metrics_core.scale.streaming`) or parts on a Dask cluster
(:mod:`metrics_core.scale.distributed`) -- and that checks the options against each
other (:func:`check_options`); every path returns the same
:class:`~metrics_core.evaluation.Evaluation`. The command line and the app call it
(several runs: :func:`evaluate_many`, which calls it for each). This module imports only downward.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run
from metrics_core.errors import N_, InputError
from metrics_core.evaluation import Evaluation
from metrics_core.io import (
    BATCH_ROWS,
    NotStreamable,
    open_run_stream,
    read_qrels,
    read_run,
    run_stream,
)
from metrics_core.io.coverage import coverage_report, warn_coverage
from metrics_core.io.limits import Limits, using_limits
from metrics_core.ranking.ranked import Ranking, rank, resolve_conventions
from metrics_core.ranking.registry import DEFAULT_MEASURES, parse_measures, rank_cutoffs


def evaluate(
    qrels,
    run,
    measures=DEFAULT_MEASURES,
    conventions: Conventions | None = None,
    *,
    tie_report: bool = False,
    unjudged_report: bool = False,
    block_rows: int | None = None,
    client=None,
    name: str | None = None,
    stream_rows: int | None = None,
    ranker: Callable[[tuple[int, ...]], Ranking] | None = None,
    limits: Limits | None = None,
    **overrides,
) -> Evaluation:
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
    unjudged_report : bool
        Also compute :attr:`Evaluation.unjudged_report`: per query and measure the lowest
        and highest value over every labelling of the unjudged retrieved documents with
        labels 0 .. the qrels' highest (:mod:`metrics_core.ranking.unjudged`). Needs the
        whole run in memory, as the tie report.
    block_rows : int, optional
        Evaluate the run in blocks of about this many rows (whole queries), reading it
        as a stream: memory bounded by the block, not the run; same numbers
        (:mod:`metrics_core.scale.streaming`). ``None`` (default): run files of at
        least ``STREAM_THRESHOLD_BYTES`` (64 MiB) stream in blocks of
        ``DEFAULT_BLOCK_ROWS`` (500 k rows), smaller ones are read whole; ``0``: always
        read whole. Applies to TREC, CSV/TSV and Parquet files (paths, bytes, uploads)
        and to a :class:`Run` in memory (then only when given: the engine's working
        memory is bounded by the block). A streamed evaluation has a ``streaming``
        attribute (blocks, rows, non-contiguous queries, spilled rows) and no
        ``ranking`` (the per-query page ranks one query's rows alone).
    client : dask.distributed.Client, optional
        Evaluate on a Dask cluster: ``run`` is then a folder, a glob or a list of run
        parts (TREC, CSV/TSV or Parquet files that together make one run; a query may
        straddle parts), or one file; the workers read their own units of it (byte
        ranges, row groups) and evaluate them in blocks of ``block_rows`` rows
        (:mod:`metrics_core.scale.distributed`).
    name : str, optional
        The evaluation's run name (default: the run's own: its name, file stem or tag).
    stream_rows : int, optional
        A :class:`Run` in memory of more than this many rows is evaluated in blocks of
        this many rows (the app's bound on working memory); ignored when ``block_rows``
        is given.
    ranker : callable, optional
        ``ranker(cutoffs)`` gives the :class:`~metrics_core.ranking.ranked.Ranking` of
        ``run`` against ``qrels`` under these conventions, built for at least
        ``cutoffs`` (e.g. one the caller keeps and reuses: ranking is the costly step);
        used only when the run is evaluated whole. Default :func:`rank`.
    limits : Limits, optional
        What the readers may decode from ``qrels`` and ``run``
        (:class:`~metrics_core.io.limits.Limits`: the input, line and field limits, JSON's
        depth; default: the limits in force, :func:`~metrics_core.io.limits.current_limits`).
        A run read in blocks is bounded by its blocks, not its size.
    **overrides
        Convention fields to change for this call, e.g. ``missing_queries="zero"``,
        ``ties="expected"`` (each value averaged exactly over the orders of tied documents,
        as scikit-learn's ``ndcg_score``; needs the whole run in memory),
        ``ignore_identical_ids=True`` (BEIR: a document whose id is the query's is dropped
        from the run).

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
    with using_limits(limits):
        return _evaluate(
            qrels,
            run,
            measures,
            conventions,
            (tie_report, unjudged_report),
            block_rows,
            client,
            name,
            stream_rows,
            ranker,
            overrides,
        )


def _evaluate(
    qrels,
    run,
    measures,
    conventions,
    reports,
    block_rows,
    client,
    name,
    stream_rows,
    ranker,
    overrides,
) -> Evaluation:
    """The body of :func:`evaluate`, under its limits (``reports``: the tie report and the
    unjudged report asked)."""
    tie_report, unjudged_report = reports
    conv = resolve_conventions(conventions, overrides)
    specs = parse_measures(measures)
    check_options(
        tie_report=tie_report,
        unjudged_report=unjudged_report,
        block_rows=block_rows,
        distributed=client is not None,
        expected_ties=conv.ties == "expected",
    )
    q = read_judgements(qrels, specs)
    cutoffs = rank_cutoffs(specs)
    if client is not None:
        from metrics_core.scale.distributed import evaluate_parts

        return _named(
            evaluate_parts(q, run, specs, conv, cutoffs, client, block_rows=block_rows), name
        )
    # the reports and expected ties need every query whole in memory
    whole = tie_report or unjudged_report or conv.ties == "expected"
    rows = 0 if whole else _stream_block_rows(run, block_rows, stream_rows)
    if rows:
        from metrics_core.scale.streaming import evaluate_stream

        try:
            if isinstance(run, Run):
                stream = run_stream(run, batch_rows=min(BATCH_ROWS, rows))
            else:
                stream = open_run_stream(run, batch_rows=min(BATCH_ROWS, rows))
            return _named(evaluate_stream(q, stream, specs, conv, cutoffs, rows), name)
        except NotStreamable:
            pass  # read whole below (the whole-file reader names any bad line)
    ranking = ranker(cutoffs) if ranker is not None else rank(q, run, conv, cutoffs=cutoffs)
    ev = ranking.evaluate(specs, tie_report=tie_report, unjudged_report=unjudged_report, name=name)
    # never a silent zero: the ranked lists rule most runs sound at no cost; the others get
    # the whole coverage report (and its warning) now
    if ranking.coverage_is_sound():
        return ev.replace(coverage=lambda: coverage_report(q, ranking.run))
    return ev.replace(coverage=warn_coverage(q, ranking.run, stacklevel=3))


def read_judgements(qrels, specs, **options) -> Qrels:
    """``qrels`` as :class:`Qrels` (as given when it is one): read with their subtopics
    (:class:`~metrics_core.data.SubtopicQrels`, ``qid subtopic docid relevance``) when one of
    ``specs`` (parsed measures) is a diversity measure, which reads them; ``options``: the
    keywords of :func:`~metrics_core.io.read_qrels` (``fmt``, ``columns``)."""
    if isinstance(qrels, Qrels):
        return qrels
    return read_qrels(qrels, subtopics=any(s.definition.subtopics for s in specs), **options)


def check_options(
    *,
    tie_report: bool = False,
    block_rows: int | None = None,
    distributed: bool = False,
    expected_ties: bool = False,
    unjudged_report: bool = False,
) -> None:
    """The one check of evaluation options against each other: the tie report and
    ``ties="expected"`` (``expected_ties``) need the whole run in memory, so neither a Dask
    cluster nor blocks of ``block_rows`` > 0.

    >>> check_options(tie_report=True, block_rows=0)
    >>> check_options(tie_report=True, distributed=True)
    Traceback (most recent call last):
    ...
    metrics_core.errors.InputError: the tie report needs the whole run in memory. Leave out client= and block_rows=, or tie_report=True
    """
    if tie_report and (distributed or (block_rows or 0) > 0):
        raise InputError(
            N_("the tie report needs the whole run in memory"),
            hint=N_("Leave out client= and block_rows=, or tie_report=True"),
            plain_hint=N_("Leave out the scheduler or the block rows, or the tie report"),
            field="tie_report",
        )
    if unjudged_report and (distributed or (block_rows or 0) > 0):
        raise InputError(
            N_("the unjudged report needs the whole run in memory"),
            hint=N_("Leave out client= and block_rows=, or unjudged_report=True"),
            plain_hint=N_("Leave out the scheduler or the block rows, or the unjudged report"),
            field="unjudged_report",
        )
    if expected_ties and (distributed or (block_rows or 0) > 0):
        raise InputError(
            N_('ties="expected" needs the whole run in memory'),
            hint=N_("Leave out client= and block_rows=, or choose another ties="),
            plain_hint=N_("Leave out the scheduler or the block rows, or choose another tie rule"),
            field="ties",
        )


def _named(ev: Evaluation, name: str | None) -> Evaluation:
    """``ev`` under ``name`` when one is given (the streamed and Dask paths name it after
    the source)."""
    return ev if name is None else ev.renamed(name)


def _stream_block_rows(run, block_rows, stream_rows=None) -> int:
    """Rows per block when ``run`` is to be streamed, else 0: the only rule that picks the
    streamed path."""
    if block_rows is not None:
        return max(int(block_rows), 0)
    if isinstance(run, Run):
        return int(stream_rows) if stream_rows and len(run) > stream_rows else 0
    if isinstance(run, (str, os.PathLike)) and os.path.isfile(run):
        from metrics_core.scale.streaming import DEFAULT_BLOCK_ROWS, STREAM_THRESHOLD_BYTES

        if os.path.getsize(run) >= STREAM_THRESHOLD_BYTES:
            return DEFAULT_BLOCK_ROWS
    return 0


def evaluate_many(
    qrels,
    runs,
    measures=DEFAULT_MEASURES,
    conventions: Conventions | None = None,
    *,
    tie_report: bool = False,
    unjudged_report: bool = False,
    block_rows: int | None = None,
    scheduler: str | None = None,
    client=None,
    read_options: Mapping | None = None,
    step: Callable[[object], contextlib.AbstractContextManager] | None = None,
    limits: Limits | None = None,
    **overrides,
) -> list[Evaluation]:
    """Evaluate several runs against one qrels: the library's one multi-run entry point
    (the command line's too). Each run goes through :func:`evaluate`, which picks its path
    by the one rule (whole, streamed in blocks, or Dask): a big run file streams here as
    it does alone; runs are read one at a time.

    Parameters
    ----------
    qrels : any qrels source (read once)
    runs : mapping or iterable
        ``{name: run}`` (each evaluation named so), or runs (paths, folders or globs of
        parts, or any run source), named by themselves; names repeated among them get
        ``-2``, ``-3`` ...
    measures, conventions, tie_report, unjudged_report, block_rows, **overrides
        As :func:`evaluate`.
    scheduler : str, optional
        A Dask scheduler address (``tcp://HOST:PORT``, or ``local:N`` for N local worker
        processes), connected once for every run (the options are checked first).
    client : dask.distributed.Client, optional
        A connected client to use instead of ``scheduler``.
    read_options : mapping, optional
        :func:`~metrics_core.io.read_run` keywords (``fmt``, ``columns``); a run given
        with them is read whole before it is evaluated (not on a Dask cluster).
    step : callable, optional
        ``step(run)``: a context manager around each run's evaluation (the command line's
        progress lines).
    limits : Limits, optional
        What the readers may decode (as :func:`evaluate`'s).

    Examples
    --------
    >>> qrels = {"q1": {"d1": 1}}
    >>> evs = evaluate_many(qrels, {"a": {"q1": {"d1": 2.0}}, "b": {"q1": {"d1": 0.5, "d2": 1.0}}}, ["RR"])
    >>> [(ev.run_name, ev.aggregate["RR"]) for ev in evs]
    [('a', 1.0), ('b', 0.5)]
    """
    distributed = bool(scheduler) or client is not None
    check_options(
        tie_report=tie_report,
        unjudged_report=unjudged_report,
        block_rows=block_rows,
        distributed=distributed,
    )
    with using_limits(limits):
        q = read_judgements(qrels, parse_measures(measures))
    named = runs.items() if isinstance(runs, Mapping) else ((None, r) for r in runs)
    evaluations = []
    with using_limits(limits), _cluster(None if client is not None else scheduler) as connected:
        client = client if client is not None else connected
        for name, r in named:
            source = r
            if read_options and client is None:
                source = read_run(r, name=name, **read_options)
            with step(r) if step is not None else contextlib.nullcontext():
                evaluations.append(
                    evaluate(
                        q,
                        source,
                        measures,
                        conventions,
                        tie_report=tie_report,
                        unjudged_report=unjudged_report,
                        block_rows=block_rows,
                        client=client,
                        name=name,
                        **overrides,
                    )
                )
    names = unique_names([e.run_name for e in evaluations])
    return [_named(ev, unique) for ev, unique in zip(evaluations, names, strict=True)]


#: The former name of :func:`evaluate_many` (the command line's), kept for scripts: the
#: same function.
evaluate_runs = evaluate_many


@contextlib.contextmanager
def _cluster(address: str | None) -> Iterator:
    """A Dask client for ``address`` while the block runs (None without an address)."""
    if not address:
        yield None
        return
    from metrics_core.scale.distributed import connect

    client, cluster = connect(address)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def unique_names(names: list[str]) -> list[str]:
    """``names`` with repeats told apart: the second ``a`` is ``a-2``.

    >>> unique_names(["a", "b", "a", "a"])
    ['a', 'b', 'a-2', 'a-3']
    """
    seen: dict[str, int] = {}
    out = []
    for n in names:
        if n in seen:
            seen[n] += 1
            out.append(f"{n}-{seen[n]}")
        else:
            seen[n] = 1
            out.append(n)
    return out


__all__ = [
    "Evaluation",
    "check_options",
    "evaluate",
    "evaluate_many",
    "evaluate_runs",
    "rank",
    "read_judgements",
    "unique_names",
]
