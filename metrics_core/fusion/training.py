"""The supervised fusion methods' estimates from training judgements (ranx's ``*_train``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from metrics_core.data import Qrels, Run
from metrics_core.errors import N_, InputError
from metrics_core.fusion.catalog import METHODS, method_name, norm_name
from metrics_core.fusion.prepare import Prepared, as_runs, encode_many, prepare


def hit_table(prep: Prepared, qrels: Qrels, queries=None) -> tuple[np.ndarray, np.ndarray]:
    """Training queries (codes into ``prep.qvocab``; -1 for a judged query no run answered) and
    each row's hit (1 when the qrels judge its document relevant, relevance >= 1)."""
    qr_q, qr_d = qrels.qid, qrels.docid
    (qq,), qv = encode_many([qr_q])
    (dd,), dv = encode_many([qr_d])
    # map the qrels' ids onto the runs' dictionaries
    q_index = _index_into(prep.qvocab, qv)
    d_index = _index_into(prep.dvocab, dv)
    rel = np.asarray(qrels.relevance) >= 1
    jq, jd = q_index[qq], d_index[dd]
    ok = rel & (jq >= 0) & (jd >= 0)
    nd = max(len(prep.dvocab), 1)
    judged = np.unique(jq[ok] * np.int64(nd) + jd[ok])
    keys = prep.q * np.int64(nd) + prep.d
    hits = np.isin(keys, judged).astype(np.float64)
    train_q = np.unique(q_index[np.unique(qq)]) if queries is None else queries
    if queries is None:
        n_unanswered = int(np.sum(q_index[np.unique(qq)] < 0))
        train_q = np.concatenate((train_q[train_q >= 0], np.full(n_unanswered, -1)))
    return train_q, hits


def _index_into(vocab: pa.Array, ids: pa.Array) -> np.ndarray:
    import pyarrow.compute as pc

    idx = pc.index_in(ids, value_set=vocab).fill_null(-1)
    return np.asarray(idx.to_numpy(zero_copy_only=False), dtype=np.int64)


def train(
    qrels,
    runs,
    method: str,
    norm: str | None = "min-max",
    *,
    n_segments: int = 10,
    queries: Sequence[str] | None = None,
) -> dict:
    """The supervised methods' estimates from training judgements (ranx's ``*_train``).

    For each run, over the training queries (the judged queries, or ``queries``; a query
    the run did not answer counts as an empty list), with hit ``h_q(p) = 1`` when the
    document at rank ``p`` is judged relevant (relevance >= 1):

    * ``posfuse`` / ``slidefuse``: ``probs[p]`` = mean of ``h_q(p)`` over the queries whose
      list reaches rank ``p``;
    * ``probfuse``: the list of each query cut in ``n_segments`` segments of
      ``ceil(L / n_segments)`` ranks; ``probs[k]`` = sum over queries of the share of hits in
      segment ``k`` (empty segments add nothing), divided by the number of queries;
    * ``segfuse``: segments ending at ``10 * 2^(k-1) - 5``; ``probs[k]`` = mean over queries of
      hits in the segment divided by its nominal size;
    * ``bayesfuse``: segments cut at 5, 10, 15, 20, 30, 100, 200, 500, 1000; per segment the
      mean precision ``p`` (0 raised to 0.001, 1 lowered by 0.001) gives ``ln(p / (1 - p))``;
    * ``mapfuse``: the run's mean average precision over the training queries (``AP``,
      a query the run did not answer scoring 0).

    Returns the ``params`` for :func:`fuse`: ``{"probs": [...]}``, ``{"log_odds": [...]}``
    or ``{"map_scores": [...]}``.
    """
    method = method_name(method)
    norm = norm_name(norm)
    if not METHODS[method].supervised:
        raise InputError(
            N_("the fusion method {method} learns nothing from judgements"),
            field="method",
            params={"method": method},
        )
    from metrics_core.io import read_qrels

    qrels = read_qrels(qrels)
    run_list = (
        as_runs(runs)
        if not (isinstance(runs, Sequence) and runs and isinstance(runs[0], Run))
        else list(runs)
    )
    if queries is not None:
        keep = set(map(str, queries))
        mask = np.isin(qrels.query_ids, list(keep))
        qrels = Qrels(
            qrels.query_ids[mask], qrels.doc_ids[mask], qrels.relevance[mask], source=qrels.source
        )
    spec = METHODS[method]
    p = {t.name: t.default for t in spec.train_params}
    p.update({"n_segments": n_segments} if spec.param("n_segments") else {})
    if method == "mapfuse":
        out = [spec.train(_MapData(qrels, run), p) for run in run_list]  # type: ignore[misc]
        return {spec.estimate: out}
    prep = prepare(run_list)
    if norm == "min-max-inverted":
        prep.pos = prep.lengths[prep.run, prep.q] - 1 - prep.pos
    train_q, hits = hit_table(prep, qrels)
    n_queries = len(train_q)
    in_train = np.zeros(prep.n_queries + 1, dtype=bool)
    in_train[train_q[train_q >= 0]] = True
    out = []
    for i in range(prep.n_runs):
        rows = (prep.run == i) & in_train[prep.q]
        data = _RunData(
            pos=prep.pos[rows],
            hits=hits[rows],
            lengths=np.where(train_q >= 0, prep.lengths[i, np.maximum(train_q, 0)], 0),
            row_lengths=prep.lengths[i, prep.q[rows]],
            n_queries=n_queries,
        )
        out.append(spec.train(data, p))  # type: ignore[misc]
    return {spec.estimate: out}


class _RunData:
    """One run's rows on the training queries, what a method's ``train`` reads: ``pos``
    (0-based ranks), ``hits`` (1.0 for a relevant document), ``lengths`` (the run's list
    length of each training query, 0 where it did not answer), ``row_lengths`` (the list
    length of each row's query), ``n_queries`` (the training queries)."""

    def __init__(self, *, pos, hits, lengths, row_lengths, n_queries):
        self.pos, self.hits, self.lengths = pos, hits, lengths
        self.row_lengths, self.n_queries = row_lengths, n_queries


class _MapData:
    """A run and the training judgements, for MAPFuse."""

    def __init__(self, qrels, run):
        self.qrels, self.run = qrels, run

    def mean_average_precision(self) -> float:
        """The run's AP averaged over the judged queries (0 for a query it did not answer)."""
        from metrics_core.front_door import evaluate

        ev = evaluate(self.qrels, self.run, ["AP"], missing_queries="zero")
        return float(ev.aggregate["AP"])


__all__ = ["train", "hit_table"]
