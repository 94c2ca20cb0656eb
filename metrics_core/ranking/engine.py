"""The ranked-list engine: one sort, one join, then segment reductions.

:func:`build_ranked_lists` turns a run and qrels into flat arrays in rank order (all
queries back to back, each query a segment): the relevance label of every ranked row,
whether it was judged, its rank. Every measure is then a reduction over those arrays
(``np.bincount`` / ``cumsum`` gathers), for all queries at once.

Ordering follows trec_eval: score descending, equal scores by document id descending
(byte order, as ``strcmp``); the other tie rules are named conventions. The rank column
of a TREC file is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.errors import InputError
from metrics_core.ranking.data import Qrels, Run


def _encode(arr: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Integer codes (first-appearance order) and the dictionary of an Arrow string array."""
    enc = arr.dictionary_encode()
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False), enc.dictionary


def _score_key(scores: np.ndarray) -> np.ndarray:
    """int64 keys whose ascending order is the scores' descending order (exact, no ties lost)."""
    neg = -(scores + 0.0)  # + 0.0 turns -0.0 into 0.0: they are equal scores
    bits = neg.view(np.int64)
    return bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


def _stable_argsort_codes(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Stable argsort of small non-negative integer codes (radix passes on 16-bit digits)."""
    if n_codes <= 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    high = (codes[order] >> 16).astype(np.uint16 if n_codes <= 1 << 32 else np.int64)
    return order[np.argsort(high, kind="stable")]


def _string_ranks(values: pa.Array) -> np.ndarray:
    """Rank of each string in byte order (equal strings share a rank)."""
    order = pc.sort_indices(values).to_numpy()
    sorted_vals = values.take(pa.array(order))
    # equal neighbours get the same rank
    same = np.zeros(len(order), dtype=bool)
    if len(order) > 1:
        same[1:] = pc.equal(sorted_vals.slice(1), sorted_vals.slice(0, len(order) - 1)).to_numpy(
            zero_copy_only=False)
    dense = np.cumsum(~same) - 1
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = dense
    return ranks


@dataclass
class Diagnostics:
    missing_queries: list = field(default_factory=list)
    extra_queries: list = field(default_factory=list)
    duplicates: int = 0
    qrels_duplicates: int = 0
    tied_groups: int = 0
    tied_documents: int = 0
    ties_straddling: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "missing_queries": list(self.missing_queries),
            "extra_queries": list(self.extra_queries),
            "duplicates": int(self.duplicates),
            "qrels_duplicates": int(self.qrels_duplicates),
            "ties": int(sum(self.ties_straddling.values())),
            "ties_straddling": {str(k): int(v) for k, v in self.ties_straddling.items()},
            "tied_groups": int(self.tied_groups),
            "tied_documents": int(self.tied_documents),
        }


class RankedLists:
    """All queries' rankings, flattened in rank order.

    Attributes
    ----------
    query_ids : list of str
        Evaluated queries; segment ``i`` is query ``query_ids[i]``.
    starts : int64 array, shape (n_queries + 1,)
        Segment offsets into the row arrays.
    seg : int64 array
        Segment (query index) of each ranked row.
    label : float64 array
        Relevance label of each ranked row (0 for unjudged).
    judged : bool array
        Whether the row's document is judged for its query.
    qrels_seg, qrels_label : arrays
        The judgements of the evaluated queries (segment and label of each).
    """

    def __init__(self, query_ids, starts, seg, label, judged, qrels_seg, qrels_label,
                 diagnostics, tie_flags=None, doc_codes=None, doc_vocab=None, judged_docs=None):
        self.query_ids = list(query_ids)
        self.starts = starts
        self.seg = seg
        self.label = label
        self.judged = judged
        self.qrels_seg = qrels_seg
        self.qrels_label = qrels_label
        self.diagnostics = diagnostics
        self.tie_flags = tie_flags
        self.doc_codes = doc_codes
        self.doc_vocab = doc_vocab
        self._cache: dict = {}

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def counts(self) -> np.ndarray:
        return np.diff(self.starts)

    @cached_property
    def pos(self) -> np.ndarray:
        """1-based rank of every row within its query."""
        return np.arange(len(self.seg), dtype=np.int64) - self.starts[self.seg] + 1

    # -- relevance at a threshold ---------------------------------------------------
    def is_relevant(self, threshold: float) -> np.ndarray:
        key = ("isrel", threshold)
        if key not in self._cache:
            # negative labels are "judged, not relevant" whatever the threshold
            self._cache[key] = self.judged & (self.label >= threshold) & (self.label >= 0)
        return self._cache[key]

    def relevant_rows(self, threshold: float) -> np.ndarray:
        key = ("relrows", threshold)
        if key not in self._cache:
            self._cache[key] = np.flatnonzero(self.is_relevant(threshold))
        return self._cache[key]

    def num_rel(self, threshold: float) -> np.ndarray:
        """Relevant documents per query in the qrels (labels >= threshold and >= 0)."""
        key = ("numrel", threshold)
        if key not in self._cache:
            ok = (self.qrels_label >= threshold) & (self.qrels_label >= 0)
            self._cache[key] = np.bincount(self.qrels_seg[ok], minlength=self.n_queries)
        return self._cache[key]

    def num_nonrel(self, threshold: float) -> np.ndarray:
        """Judged non-relevant documents per query in the qrels (0 <= label < threshold)."""
        ok = (self.qrels_label < threshold) & (self.qrels_label >= 0)
        return np.bincount(self.qrels_seg[ok], minlength=self.n_queries)

    def cum_count(self, flags: np.ndarray) -> np.ndarray:
        """Inclusive running count of ``flags`` within each query, for every row."""
        c = np.cumsum(flags, dtype=np.int64)
        before = np.concatenate(([0], c))[self.starts[:-1]]
        return c - before[self.seg]

    def count_top(self, flags_cum_key, flags: np.ndarray, k: int) -> np.ndarray:
        """Number of flagged rows among the top ``k`` of each query (O(n) once, O(q) per k)."""
        key = ("cum", flags_cum_key)
        if key not in self._cache:
            self._cache[key] = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
        c = self._cache[key]
        end = self.starts[:-1] + np.minimum(self.counts, k)
        return c[end] - c[self.starts[:-1]]

    def first_relevant_rank(self, threshold: float) -> np.ndarray:
        """Rank of the first relevant document per query; 0 when none."""
        key = ("first", threshold)
        if key not in self._cache:
            rows = self.relevant_rows(threshold)
            out = np.zeros(self.n_queries, dtype=np.int64)
            if len(rows):
                s = self.seg[rows]
                first = np.r_[True, s[1:] != s[:-1]]
                out[s[first]] = self.pos[rows[first]]
            self._cache[key] = out
        return self._cache[key]


def _dedupe(keys: np.ndarray, values: np.ndarray, rule: str) -> np.ndarray:
    """Indices of the rows to keep among duplicate keys: first, last or max value."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    start = np.r_[True, k[1:] != k[:-1]]
    if rule == "first":
        return np.sort(order[start])
    if rule == "last":
        end = np.r_[k[1:] != k[:-1], True]
        return np.sort(order[end])
    # max value, the first of equal maxima
    grp = np.cumsum(start) - 1
    o2 = np.lexsort((np.arange(len(order)), -values[order], grp))
    g2 = grp[o2]
    first = np.r_[True, g2[1:] != g2[:-1]]
    return np.sort(order[o2[first]])


def _duplicate_error(data, keys: np.ndarray, what: str, kinds: str):
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    dup = np.flatnonzero(k[1:] == k[:-1])[0]
    a, b = int(order[dup]), int(order[dup + 1])
    qid = data.qid[a].as_py()
    did = data.docid[a].as_py()
    la, lb = data.line_of(a), data.line_of(b)
    where = f"lines {la} and {lb}" if la is not None else f"rows {a + 1} and {b + 1}"
    n = int(np.count_nonzero(k[1:] == k[:-1]))
    raise InputError(
        f"duplicate {what} for query {qid!r}, document {did!r} ({where}; {n} duplicate pair(s) in all)",
        source=data.source,
        hint=f"Remove the duplicates, or choose a duplicates convention ({kinds})")


def build_ranked_lists(qrels: Qrels, run: Run, conv: Conventions,
                       cutoffs: tuple[int, ...] = ()) -> RankedLists:
    """Sort ``run`` per query, join the labels of ``qrels``, and report diagnostics."""
    diag = Diagnostics()

    # Queries: run order of first appearance, so a run grouped by query needs no sort.
    run_qc, run_qvocab = _encode(run.qid)
    qrels_qc, qrels_qvocab = _encode(qrels.qid)
    run_qnames = run_qvocab.to_pylist()
    qrels_qnames = qrels_qvocab.to_pylist()
    judged_set = set(qrels_qnames)
    run_set = set(run_qnames)
    diag.missing_queries = sorted(judged_set - run_set)
    diag.extra_queries = sorted(run_set - judged_set)
    eval_ids = [q for q in run_qnames if q in judged_set]
    if conv.missing_queries == "zero":
        eval_ids += diag.missing_queries
    index = {q: i for i, q in enumerate(eval_ids)}
    nq = len(eval_ids)
    run_qmap = np.array([index.get(q, -1) for q in run_qnames], dtype=np.int64)
    qrels_qmap = np.array([index.get(q, -1) for q in qrels_qnames], dtype=np.int64)

    # Documents: one dictionary for the run; qrels documents looked up in it.
    run_dc, run_dvocab = _encode(run.docid)
    n_docs = max(len(run_dvocab), 1)

    # Qrels: evaluated queries only; duplicates per convention.
    qq = qrels_qmap[qrels_qc]
    qrels_dc_own, _ = _encode(qrels.docid)
    qkeys_own = qrels_qc * (int(qrels_dc_own.max(initial=0)) + 1) + qrels_dc_own
    qlabel = qrels.relevance
    if len(qkeys_own) and len(np.unique(qkeys_own)) != len(qkeys_own):
        n_dup = len(qkeys_own) - len(np.unique(qkeys_own))
        diag.qrels_duplicates = n_dup
        if conv.duplicates == "error":
            _duplicate_error(qrels, qkeys_own, "judgement", "keep first, last or max")
        rule = conv.duplicates if conv.duplicates in ("first", "last") else "max"
        keep = _dedupe(qkeys_own, qlabel, rule)
    else:
        keep = None
    qd = pc.fill_null(pc.index_in(qrels.docid, value_set=run_dvocab), -1).to_numpy().astype(np.int64)
    if keep is not None:
        qq, qd, qlabel = qq[keep], qd[keep], qlabel[keep]
    in_eval = qq >= 0
    qrels_seg, qrels_label, qrels_doc = qq[in_eval], qlabel[in_eval], qd[in_eval]

    # Run rows of evaluated queries.
    rq = run_qmap[run_qc]
    scores = run.scores
    rows = None
    if (rq < 0).any():
        rows = np.flatnonzero(rq >= 0)
        rq, run_dc_rows, scores = rq[rows], run_dc[rows], scores[rows]
    else:
        run_dc_rows = run_dc

    # Duplicates (query, doc) in the run.
    rkeys = rq * n_docs + run_dc_rows
    if len(rkeys):
        sk = np.sort(rkeys)
        n_dup = int(np.count_nonzero(sk[1:] == sk[:-1]))
    else:
        n_dup = 0
    diag.duplicates = n_dup
    if n_dup:
        if conv.duplicates == "error":
            src = run if rows is None else _Subset(run, rows)
            _duplicate_error(src, rkeys, "document in the run", "count, first, last or max")
        if conv.duplicates != "count":
            keep = _dedupe(rkeys, scores, conv.duplicates)
            rows = keep if rows is None else rows[keep]
            rq, run_dc_rows, scores, rkeys = rq[keep], run_dc_rows[keep], scores[keep], rkeys[keep]

    # The sort: (query, score descending), then ties by the tie rule.
    n = len(rq)
    if n > 1:
        same_q = rq[1:] == rq[:-1]
        already = bool(np.all(rq[1:] >= rq[:-1])) and bool(np.all(~same_q | (scores[1:] <= scores[:-1])))
    else:
        already = True
    if already:
        order = np.arange(n)
    else:
        order = np.argsort(_score_key(scores))
        order = order[_stable_argsort_codes(rq[order], nq)]
    sq = rq[order]
    ss = scores[order] + 0.0
    tie_flags = None
    if n > 1:
        eq = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])
        if eq.any():
            in_tie = np.zeros(n, dtype=bool)
            in_tie[1:] |= eq
            in_tie[:-1] |= eq
            idx = np.flatnonzero(in_tie)
            group = np.cumsum(~np.r_[False, eq][idx])
            diag.tied_groups = int(group[-1])
            diag.tied_documents = int(len(idx))
            tied_rows = order[idx]
            if conv.ties == "input":
                tie_key = tied_rows if rows is None else rows[tied_rows]
                tie_key = np.asarray(tie_key)
                if not already:
                    order[idx] = tied_rows[np.lexsort((tie_key, group))]
            else:
                codes = run_dc_rows[tied_rows]
                uniq, inv = np.unique(codes, return_inverse=True)
                ranks = _string_ranks(run_dvocab.take(pa.array(uniq)))[inv]
                tie_key = -ranks if conv.ties == "trec" else ranks
                order[idx] = tied_rows[np.lexsort((tie_key, group))]
            tie_flags = (idx, group)
    sq = rq[order]

    counts = np.bincount(sq, minlength=nq) if n else np.zeros(nq, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    doc_sorted = run_dc_rows[order]

    # Ties that straddle a cutoff: the group crosses the boundary between rank k and k+1.
    if tie_flags is not None and cutoffs:
        idx, group = tie_flags
        pos = idx - starts[sq[idx]] + 1
        gfirst = np.r_[True, group[1:] != group[:-1]]
        glast = np.r_[group[1:] != group[:-1], True]
        lo, hi = pos[gfirst], pos[glast]
        for k in sorted(set(cutoffs)):
            diag.ties_straddling[k] = int(np.count_nonzero((lo <= k) & (hi > k)))

    # Depth cut (trec_eval -M): keep the top `depth` of each query.
    if conv.depth is not None and n:
        pos = np.arange(n) - starts[sq] + 1
        keep_rows = pos <= conv.depth
        if not keep_rows.all():
            order, sq, doc_sorted = order[keep_rows], sq[keep_rows], doc_sorted[keep_rows]
            counts = np.bincount(sq, minlength=nq)
            starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    # The join: labels of (query, doc) pairs from the qrels.
    ok = qrels_doc >= 0
    jkeys = qrels_seg[ok] * n_docs + qrels_doc[ok]
    jlabel = qrels_label[ok]
    if len(jkeys):
        jorder = np.argsort(jkeys)
        jkeys, jlabel = jkeys[jorder], jlabel[jorder]
        look = sq * n_docs + doc_sorted
        at = np.searchsorted(jkeys, look)
        at_c = np.minimum(at, len(jkeys) - 1)
        judged = jkeys[at_c] == look
        label = np.where(judged, jlabel[at_c], 0.0)
    else:
        judged = np.zeros(len(sq), dtype=bool)
        label = np.zeros(len(sq), dtype=np.float64)

    return RankedLists(eval_ids, starts, sq.astype(np.int64, copy=False), label, judged,
                       qrels_seg, qrels_label, diag, tie_flags=tie_flags,
                       doc_codes=doc_sorted, doc_vocab=run_dvocab)


class _Subset:
    """A row subset of a Run, for error messages that name original lines."""

    def __init__(self, data, rows):
        self._data, self._rows = data, rows
        self.source = data.source
        self.qid = data.qid.take(pa.array(rows))
        self.docid = data.docid.take(pa.array(rows))

    def line_of(self, i):
        line = self._data.line_of(int(self._rows[i]))
        return line if line is not None else None
