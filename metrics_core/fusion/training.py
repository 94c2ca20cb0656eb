"""The supervised fusion methods' estimates from training judgements (ranx's ``*_train``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from metrics_core.data import Qrels, Run
from metrics_core.errors import N_, InputError
from metrics_core.fusion.catalog import METHODS, method_name, norm_name
from metrics_core.fusion.normalise import normalise, ranx_positions
from metrics_core.fusion.prepare import Prepared, as_runs, encode_many, prepare


def hit_table(prep: Prepared, qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """The training queries and each row's hit. The training queries are the judged ones in
    ranx's order (their ids sorted by code point), as codes into ``prep.qvocab`` (-1 for a
    judged query no run answered); a row's hit is 1 when the qrels judge its document
    relevant (relevance >= 1)."""
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
    judged_q = np.unique(qq)
    ids = qv.take(pa.array(judged_q)).to_pylist()
    order = sorted(range(len(ids)), key=ids.__getitem__)
    train_q = q_index[judged_q[order]]
    return train_q, hits


def relevant_counts(qrels: Qrels, train_q: np.ndarray, prep: Prepared) -> np.ndarray:
    """The number of relevant documents (relevance >= 1) the qrels hold for each training
    query (in the order of ``train_q``)."""
    (qq,), qv = encode_many([qrels.qid])
    rel = np.asarray(qrels.relevance) >= 1
    per_code = np.bincount(qq[rel], minlength=len(qv))
    judged_q = np.unique(qq)
    ids = qv.take(pa.array(judged_q)).to_pylist()
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return per_code[judged_q[order]].astype(np.float64)


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
    ranked: bool = False,
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

    ``ranked``: each run's rows are its ranking already (ranx's sorted ``Run``): equal
    scores keep their order (the ranx drop-in).

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
    learn = spec.train
    assert learn is not None, method  # every supervised method declares its training
    p = {t.name: t.default for t in spec.train_params}
    p.update({"n_segments": n_segments} if spec.param("n_segments") else {})
    prep = prepare(run_list, ranked=ranked)
    cand_q = np.bincount(prep.pq, minlength=prep.n_queries).astype(np.float64)
    # ranx trains on normalised runs, which its hit lists sort again
    pos = ranx_positions(
        prep, norm, normalise(prep, norm, cand_q), sorted_again=norm not in ("borda", "none")
    )
    train_q, hits = hit_table(prep, qrels)
    n_queries = len(train_q)
    where = np.full(prep.n_queries + 1, -1, dtype=np.int64)  # query code -> training index
    where[train_q[train_q >= 0]] = np.flatnonzero(train_q >= 0)
    n_rel = relevant_counts(qrels, train_q, prep) if method == "mapfuse" else None
    out = []
    for i in range(prep.n_runs):
        rows = (prep.run == i) & (where[prep.q] >= 0)
        data = _RunData(
            pos=pos[rows],
            hits=hits[rows],
            query=where[prep.q[rows]],
            lengths=np.where(train_q >= 0, prep.lengths[i, np.maximum(train_q, 0)], 0),
            row_lengths=prep.lengths[i, prep.q[rows]],
            n_queries=n_queries,
            n_rel=n_rel,
        )
        out.append(learn(data, p))
    return {spec.estimate: out}


class _RunData:
    """One run's rows on the training queries, what a method's ``train`` reads: ``pos``
    (0-based ranks, ranx's), ``hits`` (1.0 for a relevant document), ``query`` (the row's
    training query, 0 .. ``n_queries`` - 1 in ranx's order: ids sorted), ``lengths`` (the
    run's list length of each training query, 0 where it did not answer), ``row_lengths``
    (the list length of each row's query), ``n_queries``; for MAPFuse ``n_rel`` (relevant
    documents of each training query)."""

    def __init__(self, *, pos, hits, query, lengths, row_lengths, n_queries, n_rel=None):
        self.pos, self.hits, self.query, self.lengths = pos, hits, query, lengths
        self.row_lengths, self.n_queries, self.n_rel = row_lengths, n_queries, n_rel

    def average_precisions(self) -> np.ndarray:
        """Each training query's average precision as ranx computes it: the precision at
        each relevant rank (relevant so far / rank), added rank by rank, divided by the
        query's relevant documents (0 when it has none)."""
        from metrics_core.fusion.kernels import segment_sums

        order = np.lexsort((self.pos, self.query))
        q, pos, h = self.query[order], self.pos[order], self.hits[order]
        cum = np.cumsum(h)
        first = np.r_[True, q[1:] != q[:-1]]
        base = np.maximum.accumulate(np.where(first, cum - h, 0.0))
        precision = np.where(h > 0, (cum - base) / (pos + 1), 0.0)
        sums = segment_sums(precision, q, pos, self.n_queries)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n_rel > 0, sums / np.where(self.n_rel > 0, self.n_rel, 1), 0.0)

    def mean_average_precision(self) -> float:
        """MAP as ranx's ``evaluate(qrels, run, "map")``: numpy's mean of the queries' AP."""
        return float(np.mean(self.average_precisions())) if self.n_queries else 0.0


__all__ = ["train", "hit_table"]
