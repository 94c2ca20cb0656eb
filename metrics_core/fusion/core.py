"""Rank fusion on columnar runs: whole batches, no loop over queries; ranx's numbers.

The query ids are encoded once, the document ids only fingerprinted
(:mod:`metrics_core.fusion.prepare`). Each run is ranked as ranx ranks it (score
descending, equal scores where numba's quicksort of the input order puts them:
:mod:`metrics_core.ranking.quicksort`) -- checked in O(n), not sorted, when it is written
best first without ties -- which gives every row its rank ``r`` and every (run, query) its
list length ``L``; normalisations are segment reductions over that order
(:mod:`metrics_core.fusion.normalise`). The candidates (query, document) are numbered by one sort of packed 64-bit
keys, every match checked string by string. Each method's declaration
(:mod:`metrics_core.fusion.methods`) says what a row adds and how the runs combine
(:mod:`metrics_core.fusion.table`); every
fused score is computed in one fixed order, ranx's: run after run, each run's value added
to the running total of the candidate (no matrix product, no pairwise or blocked sum), so
the fused run is the same bit for bit on any processor, any number of cores and shards.
The fused run is ordered by one sort of packed keys (query, score), the documents of equal
scores by their ids (trec_eval's tie rule). Queries are independent: on several cores the
work is done in shards of whole queries, one a thread, joined in query order.

Numbers are ranx 0.3's (Bassani and Romelli 2022) for every method and normalisation, ties
included (``tests/fusion/test_ranx_matrix.py`` compares the fused scores, pair by pair and
bit for bit, with ranx's on tied and untied runs with missing documents and queries). Where
ranx's own result is an accident of its implementation, RankLab says so with one
:class:`~metrics_core.fusion.accidents.FusionOrderWarning` naming the method and the queries,
and gives a reproducible answer instead (:mod:`metrics_core.fusion.accidents`):

* Condorcet and weighted Condorcet, where the majority relation of a query is not a strict
  total order (a tie or a cycle): ranx sorts the candidates in the order of a Python set of
  their ids, which changes with every process (string hashing); RankLab's merge sort of the
  same vote starts from the candidates' id order.
* A rank-based method after the Borda normalisation: ranx ranks every candidate of every run
  in that set order; RankLab uses each run's own ranking.
* BayesFuse at a rank past the log-odds table (ranx reads past the end of its array): the
  log-odds of a document not retrieved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from metrics_core.data import Run
from metrics_core.fusion.accidents import ranx_order, warn_accidents
from metrics_core.fusion.catalog import METHODS, method_name, norm_name, resolve_params
from metrics_core.fusion.normalise import normalise, own_ranks, ranx_positions
from metrics_core.fusion.order import output_stretches
from metrics_core.fusion.prepare import Prepared, as_runs, prepare_shards
from metrics_core.fusion.table import RunRows, Table
from metrics_core.threads import map_in_threads


def fuse_prepared(
    prep: Prepared | Sequence[Prepared],
    method: str,
    norm: str,
    p: dict,
    name: str | None = None,
    notes: list | None = None,
    *,
    output: str = "trec_eval",
    sorted_again: bool = False,
) -> Run:
    """Fuse prepared runs (the work of :func:`metrics_core.fusion.fuse`): one
    :class:`~metrics_core.fusion.prepare.Prepared`, or the shards of
    :func:`~metrics_core.fusion.prepare.prepare_shards` (fused in threads, joined in
    query order: the queries are independent and every score is computed in one fixed
    order, so the run is the one of a single shard, bit for bit). ``notes``: a list that
    receives ``(reason, query ids)`` where ranx's answer is an accident of its
    implementation (see the module's description). ``output="ranx"``: each query's
    documents in the order ranx's fused ``Run`` holds them (first appearance, run after
    run, then numba's quicksort of the fused scores) instead of trec_eval's tie rule;
    ``sorted_again``: the runs' ranks as ranx sees them once its training has sorted the
    normalised runs again (``optimize_fusion``)."""
    shards = [prep] if isinstance(prep, Prepared) else list(prep)
    # each shard writes its rows' query codes and fused scores into its stretch of the
    # fused run's arrays (no join of copies)
    at = np.cumsum([0] + [shard.n_candidates for shard in shards]).tolist()
    codes = np.empty(at[-1], dtype=np.int32)
    scores = np.empty(at[-1], dtype=np.float64)
    parts = map_in_threads(
        lambda j: _fused_rows(
            shards[j],
            method,
            norm,
            p,
            output,
            sorted_again,
            out=(codes[at[j] : at[j + 1]], scores[at[j] : at[j + 1]]),
        ),
        range(len(shards)),
    )
    qvocab = (
        shards[0].qvocab
        if len(shards) == 1
        else pa.concat_arrays([shard.qvocab for shard in shards])
    )
    if notes is not None:
        for reason in dict.fromkeys(r for part in parts for r in part[3]):
            ids = [
                str(shard.qvocab[int(q)])
                for shard, part in zip(shards, parts, strict=True)
                for q in part[3].get(reason, ())
            ]
            if ids:
                notes.append((reason, ids))
    return Run(
        # query ids dictionary-encoded (as the TREC reader gives them): no string copied
        pa.chunked_array([pa.DictionaryArray.from_arrays(pa.array(codes), qvocab)]),
        pa.chunked_array([c for part in parts for c in part[1].chunks], type=pa.string()),
        scores,
        name=name or method,
        source=f"<{name or method}>",
    )


def _fused_rows(
    prep: Prepared,
    method: str,
    norm: str,
    p: dict,
    output: str = "trec_eval",
    sorted_again: bool = False,
    out: tuple[np.ndarray, np.ndarray] | None = None,
):
    """The fused rows of one shard, in order: query codes (among all queries), document
    ids, fused scores; and ``{reason: local query codes}`` where ranx's answer is an
    accident. ``out``: the arrays (one row per candidate) that receive the query codes and
    the fused scores."""
    spec = METHODS[method]
    R, P = prep.n_runs, prep.n_candidates
    pid = prep.pid
    cand_q = prep.cand_counts.astype(np.float64)
    normalised: list[np.ndarray] = []

    def scores() -> np.ndarray:
        """The rows' normalised scores, made when first read (most rank-based methods
        read none)."""
        if not normalised:
            normalised.append(normalise(prep, norm, cand_q))
        return normalised[0]

    if output != "ranx" and own_ranks(norm, sorted_again):
        # the runs' own ranks, made a block of rows at a time (:meth:`Prepared.positions`)
        pos = None
    elif spec.family == "rank" or output == "ranx":
        pos = ranx_positions(prep, norm, scores, sorted_again=sorted_again)
    else:
        pos = None  # a score-based method reads no rank
    accidents: dict[str, np.ndarray] = {}
    if norm == "borda" and spec.family == "rank":
        accidents["borda"] = np.flatnonzero(cand_q > 1)

    def run_values(i: int, at: int):
        """The values of run ``i``'s rows ``[lo, hi)`` (its rows start at row ``at``): a
        method's ``value`` is computed row by row, so the table may ask for them a block at
        a time (no array of the values of all the rows made for a sum)."""

        def of(lo: int, hi: int) -> np.ndarray:
            r = slice(at + lo, at + hi)
            rows = RunRows(
                i,
                prep.positions(at + lo, at + hi) if pos is None else pos[r],
                lambda: scores()[r],
                lambda: prep.lengths[i, prep.q[r]],
                lambda: cand_q[prep.q[r]],
            )
            return np.asarray(spec.value(rows, p), dtype=np.float64)

        return of

    pids: list[np.ndarray] = []
    values: list = []
    at = 0
    for i in range(R):  # the rows are grouped by run: one slice each
        n_i = int(prep.lengths[i].sum())
        pids.append(pid[at : at + n_i])
        if spec.family == "score":
            values.append(np.asarray(scores()[at : at + n_i], dtype=np.float64))
        else:
            values.append(run_values(i, at))
        at += n_i
    n_cand: np.ndarray | None = None  # N of each candidate: made when a method reads it
    count = None
    if norm == "borda" and spec.family == "score":
        # ranx's Borda normalisation gives every candidate a value in every run
        n_cand = cand_q[prep.pq]
        every = np.arange(P)
        for i in range(R):
            fill = 0.5 - (prep.lengths[i, prep.pq] - 1) / (2 * n_cand)
            fill[pids[i]] = values[i]
            pids[i], values[i] = every, fill
        count = np.full(P, float(R))
    if method == "bayesfuse":
        past = [
            prep.q[prep.run == i][prep.pos[prep.run == i] >= len(p["log_odds"][i])]
            for i in range(R)
        ]
        if any(len(x) for x in past):
            accidents["bayes_table"] = np.unique(np.concatenate(past))
    w = np.asarray(p["weights"] if "weights" in p else np.ones(R), dtype=np.float64)
    n_cand_of = (lambda: cand_q[prep.pq]) if n_cand is None else n_cand
    table = Table(prep, pids, values, n_cand_of, w, count)
    fused = spec.combine(table, p)
    normalised.clear()  # the fused scores hold what they need
    if table.accidents:
        accidents["condorcet"] = np.unique(np.concatenate(table.accidents))
    del table, pids, values
    if output == "ranx":
        stretches = iter([(0, P, ranx_order(prep, spec, norm, pos, fused, accidents))])
    else:  # in stretches of whole queries: no order of all the candidates at once
        stretches = output_stretches(prep.cand_counts, fused, prep.head, prep.docs)
    codes, in_order = out if out is not None else (np.empty(P, np.int32), np.empty(P))
    # each candidate's query code (the order moves candidates within their query): ones
    # where a query's candidates start, summed
    codes[:] = 0
    starts = np.cumsum(prep.cand_counts)[:-1]
    np.add.at(codes, starts[starts < P], 1)
    np.cumsum(codes, dtype=codes.dtype, out=codes)
    codes += prep.query_base
    # the fused scores of a stretch, once gathered in order, are not read again: their
    # array receives the rows of the documents, in order
    reuse = fused.dtype == np.float64 and fused.flags.c_contiguous and fused.flags.writeable
    heads = fused.view(np.int64) if reuse else np.empty(P, dtype=np.int64)
    for lo, hi, order in stretches:
        # mode="clip" (the order is valid): with an ``out``, numpy's default mode gathers
        # into a temporary first, then copies it
        np.take(fused, order, out=in_order[lo:hi], mode="clip")
        np.take(prep.head, order, out=heads[lo:hi], mode="clip")
    return codes, prep.docs.take(pa.array(heads)), in_order, accidents


def fuse(
    runs,
    method: str = "rrf",
    norm: str | None = "min-max",
    weights=None,
    params: Mapping | None = None,
    *,
    qrels=None,
    name: str | None = None,
) -> Run:
    """Fuse runs into one run (rank fusion), with ranx's catalogue and numbers.

    Parameters
    ----------
    runs : sequence or mapping
        Two or more runs: :class:`~metrics_core.data.Run` objects or anything
        :func:`metrics_core.read_run` reads (paths, DataFrames, ``{qid: {docid: score}}``); a
        mapping ``name -> run`` names them. Their union of queries is fused; a run that did
        not answer a query contributes nothing to it (as an empty list).
    method : str
        A name of :data:`~metrics_core.fusion.catalog.METHODS` (``rrf``, ``combsum``,
        ``combmnz``, ``combanz``, ``combmax``, ``combmin``, ``combmed``, ``combgmnz``,
        ``wsum``, ``wmnz``, ``mixed``, ``isr``, ``log_isr``, ``logn_isr``, ``rbc``,
        ``bordafuse``, ``w_bordafuse``, ``condorcet``, ``w_condorcet``, ``mapfuse``,
        ``posfuse``, ``probfuse``, ``segfuse``, ``slidefuse``, ``bayesfuse``) or a ranx alias
        (``sum``, ``mnz``, ...). Each entry's formula and reference is in the catalogue.
    norm : str or None
        Score normalisation per run and query before fusing (ranx's default ``min-max``):
        ``none``, ``min-max``, ``min-max-inverted``, ``max``, ``sum``, ``zmuv``, ``rank``,
        ``borda`` (:data:`~metrics_core.fusion.catalog.NORMS`). Rank-based methods use
        ranks, which normalisations keep (``min-max-inverted`` reverses them).
    weights : sequence of float, optional
        One weight per run for the weighted methods (``wsum``, ``wmnz``, ``mixed``,
        ``w_bordafuse``, ``w_condorcet``); default: equal weights ``1 / len(runs)``.
    params : mapping, optional
        The method's parameters, ranx's names: ``k`` (RRF, default 60), ``gamma``
        (CombGMNZ), ``sigma`` (logN-ISR, default 0.01), ``phi`` (RBC), ``w`` (SlideFuse);
        the supervised methods' estimates ``map_scores``, ``probs`` or ``log_odds`` (one
        per run, as :func:`train` returns them), or ``n_segments`` (ProbFuse's training).
    qrels : optional
        Training judgements for a supervised method (MAPFuse, PosFuse, ProbFuse, SegFuse,
        SlideFuse, BayesFuse) whose estimates are not in ``params``: :func:`train` on them.
        Evaluate the result on OTHER queries (:func:`metrics_core.fusion.tune` does).
    name : str, optional
        The fused run's name (default: the method's name).

    Returns
    -------
    Run
        Sorted by query, fused score descending, document id descending (trec_eval's tie
        rule); evaluate, compare and export it like any run
        (:func:`metrics_core.fusion.write_run`).

    Raises
    ------
    InputError
        Fewer than two runs, an unknown method, normalisation or parameter, a missing
        parameter, weights that do not match the runs, a (query, document) twice in a run.

    Examples
    --------
    >>> import metrics_core as mc
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d3": 0.9, "d1": 0.8}}
    >>> fused = mc.fuse({"a": a, "b": b}, method="rrf")
    >>> [(d, round(float(s), 5)) for d, s in zip(fused.doc_ids, fused.scores)]
    [('d1', 0.03252), ('d3', 0.03227), ('d2', 0.01613)]
    """
    method = method_name(method)
    norm = norm_name(norm)
    run_list = as_runs(runs)
    given = dict(params or {})
    if (
        METHODS[method].supervised
        and qrels is not None
        and not (set(given) & {"probs", "log_odds", "map_scores"})
    ):
        from metrics_core.fusion.training import train

        given.update(
            train(
                qrels,
                run_list,
                method,
                norm,
                **{
                    p.name: given.pop(p.name)
                    for p in METHODS[method].train_params
                    if p.name in given
                },
            )
        )
    p = resolve_params(method, given, weights, len(run_list))
    notes: list = []
    fused = fuse_prepared(prepare_shards(run_list), method, norm, p, name=name, notes=notes)
    warn_accidents(method, notes)
    return fused


__all__ = ["fuse", "fuse_prepared"]
