"""Rank fusion on columnar runs: whole batches, no loop over queries; ranx's numbers.

The query ids are encoded once, the document ids only fingerprinted
(:mod:`metrics_core.fusion.prepare`). Each run is ranked as ranx ranks it (score
descending, equal scores where numba's quicksort of the input order puts them:
:mod:`metrics_core.ranking.quicksort`) -- checked in O(n), not sorted, when it is written
best first without ties -- which gives every row its rank ``r`` and every (run, query) its
list length ``L``; normalisations are segment reductions over that order (a list's maximum
is its first row, its minimum its last, sums by ``np.bincount`` in the rows' order, as
ranx adds them). The candidates (query, document) are numbered by one sort of packed 64-bit
keys, every match checked string by string. Each method's declaration
(:mod:`metrics_core.fusion.methods`) says what a row adds and how the runs combine; every
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
:class:`FusionOrderWarning` naming the method and the queries, and gives a reproducible
answer instead:

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

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from metrics_core.data import Run
from metrics_core.errors import N_, InputError, InputWarning
from metrics_core.fusion.catalog import METHODS, method_name, norm_name
from metrics_core.fusion.prepare import Prepared, as_runs, output_order, prepare_shards
from metrics_core.ranking.quicksort import SMALL as SMALL_QUICKSORT
from metrics_core.ranking.quicksort import positions, segment_order
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


class FusionOrderWarning(InputWarning):
    """ranx's result depends on an accident of its implementation (the order of a Python
    set, memory past an array); RankLab gives a reproducible result instead. ``method``,
    ``reason`` and ``queries`` (every query id concerned) say where."""

    def __init__(self, message: str, method: str = "", reason: str = "", queries=()):
        super().__init__(message)
        self.method, self.reason, self.queries = method, reason, list(queries)


class RunRows:
    """One run's rows of a shard, what a method's ``value`` reads: ``pos`` (0-based rank in
    the run's list for the query, ranx's), ``score`` (normalised), ``length`` (the list's
    length ``L``), ``n_cand`` (the query's number of candidates ``N``), ``i`` (the run's
    index)."""

    def __init__(self, i, pos, score, length, n_cand):
        self.i, self.pos, self.score, self.length, self.n_cand = i, pos, score, length, n_cand

    def estimate(self, p: dict, key: str) -> np.ndarray:
        """This run's trained estimate (``probs``, ``log_odds`` or ``map_scores``)."""
        return p[key][self.i]


class Table:
    """The runs' values over a shard's candidates, what a method's ``combine`` reads (with
    the helpers of :mod:`metrics_core.fusion.kernels`): run ``i``'s candidates and values
    (:meth:`rows`, :meth:`dense`), ``count`` (``n(d)``, the runs that retrieved each
    candidate), ``n_cand`` (``N`` of each candidate's query), :meth:`lengths` (``L_i`` of
    each candidate's query), ``weights``, ``R`` runs, ``P`` candidates. After the Borda
    normalisation a score-based method sees every candidate in every run (ranx's)."""

    def __init__(self, prep: Prepared, pids, values, n_cand, weights, count=None):
        self._prep = prep
        self._pids, self._values = pids, values
        self.n_cand, self.weights = n_cand, weights
        self.R, self.P = prep.n_runs, prep.n_candidates
        self._count = count
        #: local query codes whose answer is an accident of ranx's (filled by a method)
        self.accidents: list[np.ndarray] = []

    def rows(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Run ``i``'s candidates and their values (each candidate once)."""
        return self._pids[i], self._values[i]

    def dense(self, i: int, missing) -> np.ndarray:
        """Run ``i``'s value of every candidate, ``missing`` (a number or one per candidate)
        where it did not retrieve it."""
        out = np.array(np.broadcast_to(np.asarray(missing, dtype=np.float64), (self.P,)))
        pid, v = self.rows(i)
        out[pid] = v
        return out

    @property
    def count(self) -> np.ndarray:
        if self._count is None:
            self._count = np.bincount(self._prep.pid, minlength=self.P).astype(np.float64)
        return self._count

    def lengths(self, i: int) -> np.ndarray:
        """``L_i``: the length of run ``i``'s list for each candidate's query."""
        return self._prep.lengths[i, self._prep.pq].astype(np.float64)

    def condorcet(self, weights: np.ndarray) -> np.ndarray:
        """``N`` minus each candidate's position in its query's majority order (ranx's vote:
        ``x`` before ``y`` when the weight of the runs ranking ``x`` strictly above ``y``,
        added run by run, is at least that of the others, added likewise; a run that
        retrieved neither counts for ``y``; an unretrieved document's rank is 1,000,000).
        Queries whose relation is not a strict total order go to :attr:`accidents`."""
        ranks = [self.dense(i, 1_000_000.0) for i in range(self.R)]
        w = [float(x) for x in weights]

        def before(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            xv = np.zeros(len(x))
            yv = np.zeros(len(x))
            for r, wi in zip(ranks, w, strict=True):
                above = r[x] < r[y]
                xv += np.where(above, wi, 0.0)
                yv += np.where(above, 0.0, wi)
            return xv >= yv

        pq, nq = self._prep.pq, self._prep.n_queries
        position = _condorcet(before, pq, nq)
        self.accidents.append(_not_strict(before, position, pq, nq))
        return self.n_cand - position


def _not_strict(before, position: np.ndarray, pq: np.ndarray, nq: int) -> np.ndarray:
    """The queries whose majority relation is not a strict total order: two candidates
    that both come first, or both after, or a cycle. Given the candidates in the sorted
    order, every earlier one must come strictly before every later one; neighbours are
    checked first (a tie shows there), then every pair of the queries that pass, distance
    by distance, all queries at once."""
    P = len(pq)
    if P < 2:
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(pq, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)))
    order = np.empty(P, dtype=np.int64)
    order[starts[pq] + position] = np.arange(P)  # candidates in sorted order, query by query
    same = pq[order][1:] == pq[order][:-1]
    x, y = order[:-1][same], order[1:][same]
    bad = np.zeros(nq, dtype=bool)
    bad[pq[x][~(before(x, y) & ~before(y, x))]] = True
    # every pair at distance d in the sorted order, d = 2, 3, ...: all queries at once
    for d in range(2, int(counts.max())):
        live = np.flatnonzero(~bad & (counts > d))
        if not len(live):
            break
        cnt = counts[live] - d
        q = np.repeat(live, cnt)
        i = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt) + starts[q]
        a, b = order[i], order[i + d]
        wrong = ~(before(a, b) & ~before(b, a))
        bad[q[wrong]] = True
    return np.flatnonzero(bad)


def _condorcet(before, pq: np.ndarray, nq: int) -> np.ndarray:
    """Each candidate's position (0 = first) in its query's Condorcet order: a merge sort
    whose comparison is ``before(x, y)`` (arrays of candidates: does ``x`` come before
    ``y``), ranx's weighted majority vote.

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
    perm = np.arange(P)  # perm[slot]: the candidate at that slot

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
    parts = map_in_threads(
        lambda shard: _fused_rows(shard, method, norm, p, output, sorted_again), shards
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
        pa.chunked_array(
            [
                pa.DictionaryArray.from_arrays(
                    pa.array(np.concatenate([part[0] for part in parts])), qvocab
                )
            ]
        ),
        pa.chunked_array([c for part in parts for c in part[1].chunks], type=pa.string()),
        np.concatenate([part[2] for part in parts]),
        name=name or method,
        source=f"<{name or method}>",
    )


#: why ranx's answer is an accident, by reason (the warning's words)
ACCIDENTS = {
    "condorcet": "ranx sorts the candidates by the majority vote starting from the order of a "
    "Python set of their ids, which changes with every process, and the vote is not a strict "
    "total order there (a tie or a cycle); RankLab's merge sort starts from the ids' order",
    "borda": "ranx ranks the Borda-normalised candidates in the order of a Python set of their "
    "ids, which changes with every process; RankLab uses each run's own ranking",
    "order": "ranx orders documents of equal fused scores by the order of a Python set of "
    "their ids, which changes with every process; RankLab by their first appearance",
    "bayes_table": "ranx reads past the end of its log-odds table there (ranks beyond it); "
    "RankLab gives those documents the log-odds of a document not retrieved",
}


def ranx_positions(
    prep: Prepared, norm: str, scores: np.ndarray, *, sorted_again: bool = False
) -> np.ndarray:
    """Each row's 0-based rank as ranx's rank-based methods see it: the run's order, or,
    after ``min-max-inverted`` (whose ``Run.sort`` ranks the inverted scores again, numba's
    quicksort from the run's order), that new order. ``sorted_again``: the order ranx's
    training sees, which sorts every normalised run again (``Run.to_typed_list`` sorts a run
    built by a normalisation: numba's quicksort once more, from the run's order, which moves
    equal scores in lists of 16 or more)."""
    if norm == "none" or (norm != "min-max-inverted" and not sorted_again):
        return prep.pos
    return positions(segment_order(-scores, prep.list_len), prep.list_len)


def _fused_rows(
    prep: Prepared,
    method: str,
    norm: str,
    p: dict,
    output: str = "trec_eval",
    sorted_again: bool = False,
):
    """The fused rows of one shard, in order: query codes (among all queries), document
    ids, fused scores; and ``{reason: local query codes}`` where ranx's answer is an
    accident."""
    spec = METHODS[method]
    R, P = prep.n_runs, prep.n_candidates
    pid, pq = prep.pid, prep.pq
    cand_q = np.bincount(pq, minlength=prep.n_queries).astype(np.float64)
    scores = normalise(prep, norm, cand_q)
    if spec.family == "rank" or output == "ranx":
        pos = ranx_positions(prep, norm, scores, sorted_again=sorted_again)
    else:
        pos = prep.pos
    accidents: dict[str, np.ndarray] = {}
    if norm == "borda" and spec.family == "rank":
        accidents["borda"] = np.flatnonzero(cand_q > 1)
    pids, values = [], []
    at = 0
    for i in range(R):  # the rows are grouped by run: one slice each
        n_i = int(prep.lengths[i].sum())
        rows = slice(at, at + n_i)
        q_i = prep.q[rows]
        if spec.family == "score":
            value = scores[rows]
        else:
            value = spec.value(
                RunRows(i, pos[rows], scores[rows], prep.lengths[i, q_i], cand_q[q_i]), p
            )
        pids.append(pid[rows])
        values.append(np.asarray(value, dtype=np.float64))
        at += n_i
    del scores
    n_cand = cand_q[pq]
    count = None
    if norm == "borda" and spec.family == "score":
        # ranx's Borda normalisation gives every candidate a value in every run
        every = np.arange(P)
        for i in range(R):
            fill = 0.5 - (prep.lengths[i, pq] - 1) / (2 * n_cand)
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
    table = Table(prep, pids, values, n_cand, w, count)
    fused = spec.combine(table, p)
    if table.accidents:
        accidents["condorcet"] = np.unique(np.concatenate(table.accidents))
    del table, pids, values
    if output == "ranx":
        order = _ranx_order(prep, spec, norm, pos, fused, accidents)
    else:
        order = output_order(pq, fused, prep.head, prep.docs, prep.n_queries)
    codes = pq.astype(np.int32)  # = pq[order]: the order moves candidates within their query
    codes += prep.query_base
    return codes, prep.docs.take(pa.array(prep.head[order])), fused[order], accidents


def _ranx_order(prep: Prepared, spec, norm: str, pos, fused, accidents: dict) -> np.ndarray:
    """The candidates in the order of ranx's fused ``Run``: each query's documents as its
    combination first meets them (run after run, each run's documents in its order), then
    numba's quicksort of the negated fused scores from that order (``Run.sort``). Where
    ranx meets them in a Python set's order (BordaFuse's documents the first run did not
    retrieve; every document after the Borda normalisation) RankLab takes their first
    appearance instead, and a tie among such documents is an accident (``order``)."""
    P, pq = prep.n_candidates, prep.pq
    width = int(pos.max(initial=0)) + 1
    key = np.full(P, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(key, prep.pid, prep.run.astype(np.int64) * width + pos)
    order = np.lexsort((key, pq))
    counts = np.bincount(pq, minlength=prep.n_queries)
    order = order[segment_order(-fused[order], counts)]
    if norm == "borda":
        from_set = np.ones(P, dtype=bool)
    elif spec.name in ("bordafuse", "w_bordafuse"):
        from_set = key >= width  # not retrieved by the first run
    else:
        return order
    # an accident: two documents in set order with equal scores (a short list keeps their
    # insertion order), or, in a list of 16 or more with equal scores, two documents in set
    # order anywhere (numba's partitions move equal scores by where every document stands)
    f, qq, fs = fused[order], pq[order], from_set[order]
    same = (qq[1:] == qq[:-1]) & (f[1:] == f[:-1])
    tied = np.zeros(prep.n_queries, dtype=bool)
    tied[qq[1:][same]] = True
    both = np.zeros(prep.n_queries, dtype=bool)
    both[qq[1:][same & fs[1:] & fs[:-1]]] = True
    in_set = np.bincount(pq[from_set], minlength=prep.n_queries)
    hit = np.flatnonzero(both | (tied & (counts > SMALL_QUICKSORT) & (in_set >= 2)))
    if len(hit):
        accidents["order"] = hit
    return order


def warn_accidents(method: str, notes: list, stacklevel: int = 3) -> None:
    """One :class:`FusionOrderWarning` per reason, naming the method and the queries."""
    for reason, ids in notes:
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        text = (
            f"{method}: in {len(ids)} quer{'y' if len(ids) == 1 else 'ies'} ({shown}) "
            f"{ACCIDENTS[reason]}"
        )
        warnings.warn(FusionOrderWarning(text, method, reason, ids), stacklevel=stacklevel)


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


__all__ = [
    "fuse",
    "fuse_prepared",
    "normalise",
    "resolve_params",
    "ranx_positions",
    "warn_accidents",
    "RunRows",
    "Table",
    "FusionOrderWarning",
    "ACCIDENTS",
]
