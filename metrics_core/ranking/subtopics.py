"""The arithmetic of the diversity measures, as ndeval computes them (TREC Web track's
``ndeval.c``, version 4.5), for all queries at once.

A query has subtopics (intents); a document is relevant to some of them (its label for the
subtopic at or above the relevance threshold). ``M`` is the number of the query's subtopics
with at least one relevant document in the qrels (ndeval's "actual subtopics"; the others
are ignored). The document at rank ``i`` gains, for each subtopic ``s`` it is relevant to,
``(1 - alpha)^c`` where ``c`` is the number of documents above it relevant to ``s``:

    gain_i = sum over s of rel_{i,s} (1 - alpha)^{c_{i,s}}

added in subtopic order, the powers by repeated multiplication (ndeval's loop), so every
value equals ndeval's to the last bit. The ideal ranking of the normalised measures is
ndeval's greedy one over the judged documents of the query: at each rank the document with
the largest gain given the ranks above, equal gains to the larger document id (byte order).

Everything here works on the relevant (document, subtopic) pairs of the ranked rows and of
the qrels; the greedy ideal steps rank by rank, all queries together, over the queries that
still have a relevant document to place (never a loop over queries).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from metrics_core.data import SubtopicQrels
from metrics_core.errors import N_, InputError
from metrics_core.io.subtopics import warn_one_subtopic
from metrics_core.ranking.kernels import segment_layout
from metrics_core.ranking.ranked_lists import RankedLists
from metrics_core.ranking.strings import string_order

__all__ = ["Intents", "intents", "discounts", "powers", "ideal_ideal", "upto"]


@lru_cache(maxsize=32)
def _discounts(n: int) -> np.ndarray:
    return np.array([1.0] + [math.log(2.0) / math.log(i + 1.0) for i in range(2, n + 1)])


def discounts(n: int) -> np.ndarray:
    """ndeval's discount of ranks 1..n at index 0..n-1: ``log(2) / log(i + 1)`` with the C
    library's ``log`` (1 at rank 1)."""
    return _discounts(max(int(n), 1))


def powers(x: float, n: int) -> np.ndarray:
    """1, x, x*x, ... (``n`` values) by repeated multiplication, as ndeval's loops."""
    steps = np.full(max(int(n), 1), float(x))
    steps[0] = 1.0
    return np.cumprod(steps)


def ideal_ideal(m: np.ndarray, k: int, alpha: float, kind: str) -> np.ndarray:
    """ndeval's "ideal ideal" normaliser at rank k of queries with ``m`` subtopics: the sum
    over ranks i <= k of ``m (1 - alpha)^(i-1)`` times the discount (``kind="dcg"``) or
    divided by i (``kind="err"``); one value per entry of ``m`` (0 where m is 0)."""
    m = np.asarray(m, dtype=np.float64)
    values, inverse = np.unique(m, return_inverse=True)
    steps = np.full((len(values), k), 1.0 - alpha)
    steps[:, 0] = values
    gain = np.cumprod(steps, axis=1)  # m, then times (1 - alpha) at each rank
    ranks = np.arange(1, k + 1, dtype=np.float64)
    terms = gain * discounts(k) if kind == "dcg" else gain / ranks
    total = np.cumsum(terms, axis=1)[:, k - 1]
    return total[inverse.reshape(-1)]


def upto(seg: np.ndarray, pos: np.ndarray, terms: np.ndarray, k, n: int) -> np.ndarray:
    """Per query the sum of ``terms`` (entries in rank order) at ranks <= k (all when k is
    None), added one after the other as ndeval's running sums add."""
    if k is not None:
        keep = pos <= k
        seg, terms = seg[keep], terms[keep]
    return np.bincount(seg, weights=terms, minlength=n)


class Intents:
    """The relevant (document, subtopic) pairs of ranked lists and of their qrels, at one
    relevance threshold.

    Attributes
    ----------
    n : int
        Queries (segments of the ranked lists).
    m : int64 array
        Subtopics with a relevant document in the qrels, per query (ndeval's M).
    keys : int64 array
        The (query, subtopic) keys ``query * n_sub + subtopic`` of those subtopics, sorted.
    nrel : int64 array
        Relevant documents of each key in the qrels.
    row, seg, pos, key : arrays
        The ranked rows' relevant pairs, by row then subtopic: ranked row, query, rank, key.
    seen : int64 array
        For each of them, the relevant pairs of the same key ranked above (``c``).
    doc_seg, doc_rank, pair_doc, pair_key : arrays
        The qrels' relevant documents (by query) with their document id's byte rank, and
        their pairs (document, index into :attr:`keys`), by document then subtopic: what
        the greedy ideal ranking reads.
    """

    def __init__(self, n, n_sub, qseg, qsub, qdoc, doc_ids, rrow, rsub, R: RankedLists):
        self.n = n
        qkey = qseg.astype(np.int64) * n_sub + qsub
        self.keys, self.nrel = np.unique(qkey, return_counts=True)
        self.m = np.bincount(self.keys // n_sub, minlength=n).astype(np.int64)
        # the ranked rows' pairs (by row, then subtopic) and the pairs above each of one key
        self.row = rrow
        self.seg = R.seg[rrow].astype(np.int64)
        self.pos = R.pos_of(rrow).astype(np.int64)
        self.key = self.seg * n_sub + rsub
        by_key = np.lexsort((rrow, self.key))
        _, within, _ = segment_layout(self.key[by_key])
        self.seen = np.empty(len(rrow), dtype=np.int64)
        self.seen[by_key] = within
        # the qrels' relevant documents for the greedy ideal: by query, document, subtopic
        order = np.lexsort((qsub, qdoc, qseg))
        qseg, qdoc, qkey = qseg[order], qdoc[order], qkey[order]
        first = np.r_[True, qdoc[1:] != qdoc[:-1]] if len(qdoc) else np.zeros(0, dtype=bool)
        self.pair_doc = np.cumsum(first) - 1
        self.pair_key = np.searchsorted(self.keys, qkey)
        docs = qdoc[first]
        self.doc_seg = qseg[first].astype(np.int64)
        rank = np.empty(len(doc_ids), dtype=np.int64)
        rank[string_order(doc_ids)] = np.arange(len(doc_ids))
        self.doc_rank = rank[docs]
        self._cache: dict = {}

    def gains(self, alpha: float):
        """The ranked rows with a relevant pair: (query, rank, gain), in rank order; the
        gain adds ``(1 - alpha)^seen`` over the row's subtopics in subtopic order."""
        key = ("gains", alpha)
        if key not in self._cache:
            term = powers(1.0 - alpha, int(self.seen.max(initial=0)) + 1)[self.seen]
            first = (
                np.r_[True, self.row[1:] != self.row[:-1]]
                if len(self.row)
                else np.zeros(0, dtype=bool)
            )
            at = np.cumsum(first) - 1
            gain = np.bincount(at, weights=term, minlength=int(first.sum()))
            self._cache[key] = (self.seg[first], self.pos[first], gain)
        return self._cache[key]

    def ideal(self, alpha: float, depth: int):
        """ndeval's greedy ideal ranking to ``depth`` ranks: (query, rank, gain) of its
        ranks with a positive gain, sorted by query then rank (later ranks gain 0)."""
        done = self._cache.get(("ideal", alpha))
        if done is None or done[0] < depth:
            done = (depth, _greedy(self, alpha, depth))
            self._cache[("ideal", alpha)] = done
        seg, t, g = done[1]
        if done[0] > depth:
            keep = t <= depth
            seg, t, g = seg[keep], t[keep], g[keep]
        return seg, t, g

    def most_documents(self) -> int:
        """The most relevant documents of one query in the qrels."""
        return int(np.bincount(self.doc_seg).max(initial=0)) if len(self.doc_seg) else 0


def _greedy(it: Intents, alpha: float, depth: int):
    """The greedy ideal: rank by rank, for every query still placing documents, the one of
    largest gain (gains summed fresh in subtopic order, as ndeval sums them), equal gains to
    the larger document id; a query stops when its best gain is 0."""
    gain = np.ones(len(it.keys))
    decay = 1.0 - alpha
    d_seg, d_rank = it.doc_seg, it.doc_rank
    p_doc, p_key = it.pair_doc, it.pair_key
    out_seg, out_t, out_g = [], [], []
    t = 0
    while len(d_seg) and t < depth:
        t += 1
        score = np.bincount(p_doc, weights=gain[p_key], minlength=len(d_seg))
        heads = np.flatnonzero(np.r_[True, d_seg[1:] != d_seg[:-1]])
        group = np.repeat(np.arange(len(heads)), np.diff(np.r_[heads, len(d_seg)]))
        best = np.maximum.reduceat(score, heads)
        tied = score == best[group]
        top = np.maximum.reduceat(np.where(tied, d_rank, -1), heads)
        positive = best > 0
        out_seg.append(d_seg[heads[positive]])
        out_t.append(np.full(int(positive.sum()), t, dtype=np.int64))
        out_g.append(best[positive])
        chosen = tied & (d_rank == top[group]) & positive[group]
        covered = p_key[chosen[p_doc]]  # each key once: one document per query
        gain[covered] = gain[covered] * decay
        alive = ~chosen & positive[group]
        renumber = np.cumsum(alive) - 1
        keep = alive[p_doc]
        p_doc, p_key = renumber[p_doc[keep]], p_key[keep]
        d_seg, d_rank = d_seg[alive], d_rank[alive]
    if not out_seg:
        z = np.zeros(0, dtype=np.int64)
        return z, z, np.zeros(0)
    seg, t_, g = np.concatenate(out_seg), np.concatenate(out_t), np.concatenate(out_g)
    order = np.lexsort((t_, seg))
    return seg[order], t_[order], g[order]


def intents(R: RankedLists, threshold: float, conv) -> Intents:
    """The :class:`Intents` of ranked lists at a relevance threshold (cached on them).

    Subtopic qrels (:class:`~metrics_core.data.SubtopicQrels`) give each judged document its
    subtopics; ordinary qrels are read as ndeval reads a qrels file whose second column is
    the same everywhere -- one subtopic -- with an :class:`InputWarning`.
    """
    return R.memo(("intents", threshold), lambda: _build(R, float(threshold), conv))


def _build(R: RankedLists, thr: float, conv) -> Intents:
    q = R.qrels
    jr = R.judged_rows
    if isinstance(q, SubtopicQrels) and R.judged_qrels_row is not None:
        dup, lines = q.subtopic_duplicates
        if dup and conv.duplicates == "error":
            raise InputError(
                N_(
                    "a (query, subtopic, document) judgement is given twice (lines {first} and {second})"
                )
                if lines
                else N_("a (query, subtopic, document) judgement is given twice"),
                source=q.source,
                hint=N_("Remove the repeated line, or choose duplicates=max"),
                params={"first": lines[0], "second": lines[1]} if lines else {},
            )
        n_sub = max(len(q.subtopic_names), 1)
        rows = R.qrels_row if R.qrels_row is not None else np.arange(len(R.qrels_seg))
        owner, qsub, qlab = _pairs(q, rows)
        qseg = R.qrels_seg[owner]
        ro, rsub, rlab = _pairs(q, R.judged_qrels_row)
        rrow = jr[ro]
        if conv.labels == "truncate":
            qlab, rlab = np.trunc(qlab), np.trunc(rlab)
        qdoc = owner
    else:
        warn_one_subtopic(7)
        n_sub = 1
        qseg, qlab = R.qrels_seg, R.qrels_label.astype(np.float64)
        qsub = np.zeros(len(qseg), dtype=np.int64)
        qdoc = np.arange(len(qseg))
        rrow, rlab = jr, R.label[jr].astype(np.float64)
        rsub = np.zeros(len(rrow), dtype=np.int64)
    ok = (qlab >= thr) & (qlab >= 0)
    rok = (rlab >= thr) & (rlab >= 0)
    doc_ids = _doc_ids(R)
    return Intents(
        R.n_queries,
        n_sub,
        qseg[ok].astype(np.int64),
        qsub[ok].astype(np.int64),
        qdoc[ok],
        doc_ids,
        rrow[rok],
        rsub[rok].astype(np.int64),
        R,
    )


def _pairs(q, rows: np.ndarray):
    """(owner: index into ``rows``, subtopic, label) of the subtopic judgements of qrels
    ``rows``, by owner then subtopic."""
    rows = np.asarray(rows, dtype=np.int64)
    lo, hi = q.pair_ptr[rows], q.pair_ptr[rows + 1]
    count = hi - lo
    at = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    owner = np.repeat(np.arange(len(rows)), count)
    return owner, q.pair_subtopic[at].astype(np.int64), q.pair_label[at]


def _doc_ids(R: RankedLists):
    """The document id of each judgement of the evaluated queries (``R.qrels_row``)."""
    import pyarrow as pa

    rows = np.asarray(R.qrels_row if R.qrels_row is not None else np.arange(len(R.qrels_seg)))
    if R.qrels is None:
        return pa.array([str(i) for i in rows], type=pa.string())
    return R.qrels.docid.take(pa.array(rows, type=pa.int64()))
