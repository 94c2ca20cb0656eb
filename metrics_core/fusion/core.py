"""Rank fusion on columnar runs: whole batches, no loop over queries.

The query ids are encoded once, the document ids only fingerprinted
(:mod:`metrics_core.fusion.prepare`). Each run is ranked by (query, score descending,
document id descending: trec_eval's tie rule) -- checked in O(n), not sorted, when it is
written best first as run files are -- which gives every row its rank ``r`` and every (run,
query) its list length ``L``; normalisations are segment reductions over that order (a
list's maximum is its first row, its minimum its last, sums by ``np.bincount``). The
candidates (query, document) are numbered by one sort of packed 64-bit keys, every match
checked string by string; the rows of all runs go into a dense ``runs x candidates`` matrix
of contributions and a mask of who retrieved what, and each method is one reduction over the
runs axis. The fused run is ordered by one sort of packed keys (query, score), the documents
of equal scores by their ids. Queries are independent: on several cores the work is done in
shards of whole queries, one a thread, joined in query order (the same run bit for bit).

Numbers are ranx's (Bassani and Romelli 2022) for every method and normalisation where no
tie decides an order (``tests/fusion`` compares them with ranx 0.3 on random runs with
missing documents and queries). Two deliberate differences, both where ranx's own result
depends on the order of a Python set: Condorcet sorts by the majority vote as ranx does, with
a merge sort of all queries at once (the same order whenever the majority relation is a
strict total order; ties and cycles as the merge meets them), and after the Borda
normalisation the rank-based methods use each run's own ranking (candidates a run did not
retrieve have no rank there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import contextmanager

import numpy as np
import pyarrow as pa

from metrics_core.data import Run
from metrics_core.errors import N_, InputError
from metrics_core.fusion.catalog import METHODS, method_name, norm_name
from metrics_core.fusion.prepare import Prepared, as_runs, output_order, prepare_shards
from metrics_core.threads import map_in_threads

#: the denominators' floor of ranx's normalisations
EPS = 1e-9


def _segment_stats(prep: Prepared, scores: np.ndarray):
    """Per (run, query): first (max) and last (min) score, sum, mean, population std."""
    nq = prep.n_queries
    seg = prep.run.astype(np.int64) * nq + prep.q
    size = prep.n_runs * nq
    count = np.bincount(seg, minlength=size).astype(np.float64)
    total = np.bincount(seg, weights=scores, minlength=size)
    first = prep.pos == 0
    mx = np.zeros(size)
    mx[seg[first]] = scores[first]
    last = prep.pos == prep.lengths.reshape(-1)[seg] - 1
    mn = np.zeros(size)
    mn[seg[last]] = scores[last]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    var = np.bincount(seg, weights=(scores - mean[seg]) ** 2, minlength=size) / np.maximum(count, 1)
    return seg, mx, mn, total, count, mean, np.sqrt(var)


def normalise(prep: Prepared, norm: str, candidates: np.ndarray | None = None) -> np.ndarray:
    """Each row's normalised score (ranx's formulas, :data:`~metrics_core.fusion.catalog.NORMS`);
    ``candidates``: the number of candidates of each query (Borda's ``N``). The value Borda
    gives the candidates a run did not retrieve is added by :func:`fuse_prepared`."""
    s = prep.raw
    if norm == "none":
        return s.copy()
    if norm == "borda":
        assert candidates is not None
        return 1.0 - prep.pos / candidates[prep.q]
    if norm == "rank":
        return 1.0 - prep.pos / prep.lengths[prep.run, prep.q]
    if norm in ("min-max", "min-max-inverted", "max"):
        # each list is ranked best first: its maximum is its first row, its minimum its last
        # (the arithmetic of each list's ends done once a list, then repeated over its rows)
        size = prep.list_len
        first = np.cumsum(size) - size
        top, bottom = s[first], s[first + size - 1]
        if norm == "max":
            return s / np.repeat(np.maximum(top, EPS), size)
        out = s - np.repeat(bottom, size) if norm == "min-max" else np.repeat(top, size) - s
        out /= np.repeat(np.maximum(top - bottom, EPS), size)
        return out
    seg, mx, mn, total, count, mean, std = _segment_stats(prep, s)
    if norm == "min-max":
        return (s - mn[seg]) / np.maximum(mx[seg] - mn[seg], EPS)
    if norm == "min-max-inverted":
        return (mx[seg] - s) / np.maximum(mx[seg] - mn[seg], EPS)
    if norm == "max":
        return s / np.maximum(mx[seg], EPS)
    if norm == "sum":
        return (s - mn[seg]) / np.maximum(total[seg] - mn[seg] * count[seg], EPS)
    if norm == "zmuv":
        return (s - mean[seg]) / np.maximum(std[seg], EPS)
    raise AssertionError(norm)


def resolve_params(method: str, params: Mapping | None, weights, n_runs: int) -> dict:
    """The method's parameters from ``params`` and ``weights``, checked against its
    declaration: defaults filled, required ones present, no unknown one, one finite weight
    per run for a weighted method (equal weights by default)."""
    spec = METHODS[method]
    given = dict(params or {})
    if weights is None:
        weights = given.pop("weights", None)
    else:
        given.pop("weights", None)
    out = {}
    estimate = (spec.estimate,) if spec.estimate else ()
    for name, default in [*spec.defaults.items(), *((e, None) for e in estimate)]:
        value = given.pop(name, default)
        if value is None:
            raise InputError(
                N_("the fusion method {method} needs the parameter {param}"),
                hint=N_("give it in params, or train the method on judgements"),
                field="params",
                params={"method": method, "param": name},
            )
        declared = spec.param(name)
        refused = declared.check(value) if declared is not None else None
        if refused is not None:
            text, extra = refused
            raise InputError(text, field="params", params={"param": name, "value": value, **extra})
        out[name] = value
    for p in spec.train_params:
        given.pop(p.name, None)
    if given:
        raise InputError(
            N_("the fusion method {method} has no parameter {param}"),
            hint=N_("accepted: {choices}"),
            field="params",
            params={
                "method": method,
                "param": ", ".join(sorted(given)),
                "choices": ", ".join(
                    ["weights"] * spec.weighted + list(spec.defaults) + list(estimate)
                )
                or "-",
            },
        )
    if spec.weighted:
        w = (
            np.full(n_runs, 1.0 / n_runs)
            if weights is None
            else np.asarray(weights, dtype=np.float64)
        )
        if w.shape != (n_runs,) or not np.all(np.isfinite(w)):
            raise InputError(
                N_("{count} weights for {runs} runs"),
                field="weights",
                hint=N_("give one finite weight per run, in the runs' order"),
                params={"count": int(np.size(w)), "runs": n_runs},
            )
        out["weights"] = w
    elif weights is not None:
        raise InputError(
            N_("the fusion method {method} takes no weights"),
            field="weights",
            hint=N_("weighted methods: {choices}"),
            params={
                "method": method,
                "choices": ", ".join(m for m, s in METHODS.items() if s.weighted),
            },
        )
    if spec.estimate:
        out[spec.estimate] = _per_run(out[spec.estimate], n_runs, spec.estimate)
    return out


def _per_run(values, n_runs: int, name: str) -> list[np.ndarray]:
    if name == "map_scores":
        values = list(np.ravel(values))
    seq = list(values) if not isinstance(values, np.ndarray) or values.ndim > 1 else [values]
    if len(seq) != n_runs:
        raise InputError(
            N_("{param} holds {count} entries for {runs} runs"),
            field="params",
            hint=N_("one entry per run, in the runs' order"),
            params={"param": name, "count": len(seq), "runs": n_runs},
        )
    return [np.asarray(v, dtype=np.float64).reshape(-1) for v in seq]


class RunRows:
    """One run's rows of a shard, what a method's ``value`` reads: ``pos`` (0-based rank in
    the run's list for the query), ``score`` (normalised), ``length`` (the list's length
    ``L``), ``n_cand`` (the query's number of candidates ``N``), ``i`` (the run's index)."""

    def __init__(self, i, pos, score, length, n_cand):
        self.i, self.pos, self.score, self.length, self.n_cand = i, pos, score, length, n_cand

    def estimate(self, p: dict, key: str) -> np.ndarray:
        """This run's trained estimate (``probs``, ``log_odds`` or ``map_scores``)."""
        return p[key][self.i]


class Table:
    """The runs' values over a shard's candidates, what a method's ``combine`` reads:
    ``S`` (candidates x runs: each run's value, 0 where it did not retrieve the candidate),
    ``M`` (who retrieved what), ``count`` (``n(d)``), ``n_cand`` (``N`` of each candidate's
    query), ``lengths`` (candidates x runs: ``L_i``), ``weights``, ``R``, ``P``."""

    def __init__(self, prep: Prepared, S_runs, M_runs, n_cand, weights, count):
        self._prep = prep
        self.S, self.M = S_runs.T, M_runs.T
        self.n_cand, self.weights = n_cand, weights
        self.R, self.P = prep.n_runs, prep.n_candidates
        self._count = count

    @property
    def count(self) -> np.ndarray:
        if self._count is None:
            self._count = np.bincount(self._prep.pid, minlength=self.P).astype(np.float64)
        return self._count

    @property
    def lengths(self) -> np.ndarray:
        return self._prep.lengths[:, self._prep.pq].T

    def condorcet(self, weights: np.ndarray) -> np.ndarray:
        """``N`` minus each candidate's position in its query's majority order."""
        ranks = np.where(self.M, self.S, np.inf)
        return self.n_cand - _condorcet(ranks, self._prep.pq, self._prep.n_queries, weights)


def _condorcet(ranks: np.ndarray, pq: np.ndarray, nq: int, w: np.ndarray) -> np.ndarray:
    """Each candidate's position (0 = first) in its query's Condorcet order: a merge sort
    whose comparison is ranx's weighted majority vote (``x`` before ``y`` when the runs that
    rank ``x`` above ``y`` carry at least half of the weight; ``ranks``: candidates x runs,
    inf where a run did not retrieve the candidate).

    All queries at once, no table of pairs: ``ceil(log2 n)`` merge levels for ``n``
    candidates per query; at each, every candidate finds its place in the other half of
    its block by a binary search (``log2`` of the half's size comparisons, each one vector
    operation over all candidates): ``O(n log^2 n)`` comparisons per query, against the
    ``n^2`` of a table of every pair. Where the majority relation is a strict total order
    (no tie, no cycle), every comparison sort gives that order, ranx's included; elsewhere
    the order is the merge sort's, starting from the candidates' order of ``pq``."""
    P = len(pq)
    counts = np.bincount(pq, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)))
    first = starts[pq]  # each slot's query start (slots of a query: starts[q] .. + n - 1)
    n_of = counts[pq]
    local = np.arange(P) - first
    total = float(w.sum())
    perm = np.arange(P)  # perm[slot]: the candidate at that slot

    def before(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        votes = (ranks[x] < ranks[y]) @ w
        return votes >= total - votes

    width = 1
    n_max = int(counts.max()) if P else 0
    while width < n_max:
        block = local // (2 * width) * (2 * width)  # block start, local
        right = local - block >= width
        half = local - block - width * right  # position within its half
        left_len = np.minimum(width, n_of - block)
        right_len = np.clip(n_of - block - width, 0, width)
        # the other half of each slot: where it starts (a slot) and its length
        other = first + block + np.where(right, 0, width)
        lo = np.zeros(P, dtype=np.int64)
        hi = np.where(right, left_len, right_len)
        me = perm
        active = np.flatnonzero(lo < hi)
        while len(active):
            mid = (lo[active] + hi[active]) // 2
            y = perm[other[active] + mid]
            x = me[active]
            r = right[active]
            # one vote per pair: does the left candidate come before the right one? A left
            # candidate goes after the right ones it does not come before; a right candidate
            # after the left ones that come before it
            left_first = before(np.where(r, y, x), np.where(r, x, y))
            go_after = np.where(r, left_first, ~left_first)
            lo[active] = np.where(go_after, mid + 1, lo[active])
            hi[active] = np.where(go_after, hi[active], mid)
            active = active[lo[active] < hi[active]]
        target = first + block + half + lo
        if np.bincount(target, minlength=P).max(initial=0) > 1:  # a tie or cycle collided
            order = np.lexsort((half, right, target))
            target = np.empty(P, dtype=np.int64)
            target[order] = np.arange(P)
        perm = np.empty_like(me)
        perm[target] = me
        width *= 2
    position = np.empty(P, dtype=np.int64)
    position[perm] = local
    return position


def fuse_prepared(
    prep: Prepared | Sequence[Prepared], method: str, norm: str, p: dict, name: str | None = None
) -> Run:
    """Fuse prepared runs (the work of :func:`metrics_core.fusion.fuse`): one
    :class:`~metrics_core.fusion.prepare.Prepared`, or the shards of
    :func:`~metrics_core.fusion.prepare.prepare_shards` (fused in threads, joined in
    query order: the queries are independent, so the run is the one of a single shard)."""
    shards = [prep] if isinstance(prep, Prepared) else list(prep)
    with _one_blas_thread(len(shards) > 1):
        parts = map_in_threads(lambda shard: _fused_rows(shard, method, norm, p), shards)
    qvocab = (
        shards[0].qvocab
        if len(shards) == 1
        else pa.concat_arrays([shard.qvocab for shard in shards])
    )
    return Run(
        # query ids dictionary-encoded (as the TREC reader gives them): no string copied
        pa.chunked_array(
            [
                pa.DictionaryArray.from_arrays(
                    pa.array(np.concatenate([codes for codes, _, _ in parts])), qvocab
                )
            ]
        ),
        pa.chunked_array([c for _, docs, _ in parts for c in docs.chunks], type=pa.string()),
        np.concatenate([scores for _, _, scores in parts]),
        name=name or method,
        source=f"<{name or method}>",
    )


@contextmanager
def _one_blas_thread(limit: bool):
    """BLAS held to one thread while the shards are fused in threads (``limit``): each
    product is one shard's, and BLAS's own worker threads, woken for a product this thin,
    go on spinning on the cores the shards need. The same numbers (a product's rows are
    computed alike however many threads share them). Without threadpoolctl: unchanged."""
    if not limit:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # no type hints shipped
    except ImportError:  # pragma: no cover - a dependency of the project
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _fused_rows(
    prep: Prepared, method: str, norm: str, p: dict
) -> tuple[np.ndarray, pa.ChunkedArray, np.ndarray]:
    """The fused rows of one shard, in order: query codes (among all queries), document
    ids, fused scores."""
    spec = METHODS[method]
    R, P = prep.n_runs, prep.n_candidates
    pid, pq = prep.pid, prep.pq
    cand_q = np.bincount(pq, minlength=prep.n_queries).astype(np.float64)
    scores = normalise(prep, norm, cand_q)
    pos = prep.pos
    if norm == "min-max-inverted" and spec.family == "rank":
        pos = prep.lengths[prep.run, prep.q] - 1 - pos  # the inverted run is ranked the other way
    # stored run by run (R x P), used as its transpose: sums over the runs add whole rows
    S_runs, M_runs = np.zeros((R, P)), np.zeros((R, P), dtype=bool)
    at = 0
    for i in range(R):  # the rows are grouped by run: one slice each
        n_i = int(prep.lengths[i].sum())
        rows = slice(at, at + n_i)
        q_i = prep.q[rows]
        value = (
            scores[rows]
            if spec.family == "score"
            else spec.value(
                RunRows(i, pos[rows], scores[rows], prep.lengths[i, q_i], cand_q[q_i]), p
            )
        )
        S_runs[i, pid[rows]] = value
        M_runs[i, pid[rows]] = True
        at += n_i
    del scores
    n_cand = cand_q[pq]
    count = None
    if norm == "borda" and spec.family == "score":  # every candidate gets a value in every run
        lengths = prep.lengths[:, pq].T
        S = np.where(M_runs.T, S_runs.T, 0.5 - (lengths - 1) / (2 * n_cand[:, None]))
        del lengths
        M_runs = np.ones_like(M_runs)
        S_runs = S.T
        count = np.full(P, float(R))
    w = np.asarray(p["weights"] if "weights" in p else np.ones(R), dtype=np.float64)
    table = Table(prep, S_runs, M_runs, n_cand, w, count)
    fused = spec.combine(table, p)
    del table, S_runs, M_runs
    order = output_order(pq, fused, prep.head, prep.docs, prep.n_queries)
    codes = pq.astype(np.int32)  # = pq[order]: the order moves candidates within their query
    codes += prep.query_base
    return codes, prep.docs.take(pa.array(prep.head[order])), fused[order]


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
    return fuse_prepared(prepare_shards(run_list), method, norm, p, name=name)


__all__ = ["fuse", "fuse_prepared", "normalise", "resolve_params", "RunRows", "Table"]
