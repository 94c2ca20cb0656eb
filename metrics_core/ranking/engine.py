"""The ranked-list engine: one sort, one join, then segment reductions.

:func:`build_ranked_lists` turns a run and qrels into flat arrays in rank order (all
queries back to back, each query a segment): the relevance label of every ranked row,
whether it was judged, its rank. Every measure is then a reduction over the judged rows
of those arrays (``np.bincount``, binary searches in sorted row numbers), for all
queries at once.

Ordering follows trec_eval: score descending, equal scores by document id descending
(byte order, as ``strcmp``); the other tie rules are named conventions. The rank column
of a TREC file is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run
from metrics_core.errors import InputError
from metrics_core.ranking.strings import (
    hash_strings,
    order_within_groups,
    pair_keys,
    sort_by_query,
    stable_argsort_codes,
    strings_equal,
)


def _encode(arr) -> tuple[np.ndarray, pa.Array]:
    """Integer codes (first-appearance order) and the dictionary of an Arrow string column."""
    if isinstance(arr, pa.ChunkedArray) and pa.types.is_dictionary(arr.type):
        # already encoded by the reader, with one dictionary for all chunks; renumber in
        # order of first appearance -- a first appearance is always where the value changes
        dictionary = arr.chunk(0).dictionary if arr.num_chunks else pa.array([], pa.string())
        heads, head_pos, at = [], [], 0
        for c in arr.chunks:
            ind = c.indices.to_numpy(zero_copy_only=False)
            if len(ind):
                ch = np.flatnonzero(np.r_[True, ind[1:] != ind[:-1]])
                heads.append(ind[ch])
                head_pos.append(ch + at)
            at += len(ind)
        heads = np.concatenate(heads) if heads else np.zeros(0, dtype=np.int32)
        head_pos = np.concatenate(head_pos) if head_pos else np.zeros(0, dtype=np.int64)
        used, first = np.unique(heads, return_index=True)
        by_first = used[np.argsort(head_pos[first])]
        vocab = dictionary.take(pa.array(by_first, type=pa.int64()))
        remap = np.full(len(dictionary), -1, dtype=np.int32)
        remap[by_first] = np.arange(len(by_first), dtype=np.int32)
        out = np.empty(len(arr), dtype=np.int32)
        at = 0
        for c in arr.chunks:
            out[at:at + len(c)] = remap[c.indices.to_numpy(zero_copy_only=False)]
            at += len(c)
        return out, vocab
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    enc = arr.dictionary_encode()
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return codes, enc.dictionary


def _score_key(scores: np.ndarray) -> np.ndarray:
    """int64 keys whose ascending order is the scores' descending order (exact, no ties lost)."""
    neg = -(scores + 0.0)  # + 0.0 turns -0.0 into 0.0: they are equal scores
    bits = neg.view(np.int64)
    return bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


@dataclass
class Diagnostics:
    missing_queries: list = field(default_factory=list)
    extra_queries: list = field(default_factory=list)
    duplicates: int = 0
    qrels_duplicates: int = 0
    tied_groups: int = 0
    tied_documents: int = 0
    ties_straddling: dict = field(default_factory=dict)
    fractional_labels: int = 0

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
        } | ({"fractional_labels": int(self.fractional_labels)} if self.fractional_labels else {})


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
                 diagnostics, row_index=None, qrels_row=None, row_swaps=None):
        self.query_ids = list(query_ids)
        self.starts = starts
        self.seg = seg
        self.label = label
        self.judged = judged
        self.qrels_seg = qrels_seg
        self.qrels_label = qrels_label
        self.diagnostics = diagnostics
        # run row of each ranked row: ``_row_index`` (None: the row of the same number),
        # then ``row_swaps`` (positions, rows): the few positions that the tie order
        # changed in a run given in rank order -- no array the size of the run for them
        self._row_index = row_index
        self._row_swaps = row_swaps
        self.qrels_row = qrels_row    # qrels row of each judgement in qrels_seg/qrels_label
        self._cache: dict = {}

    def memo(self, key, build):
        """The value cached under ``key`` on these ranked lists, computed by ``build()`` the
        first time (work shared by several measures: the ideal ranking, the trec_eval
        query order ...). Keys are tuples whose first item names the computation."""
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def run_rows(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Run row (index into the Run's columns) of ranked rows ``lo:hi``."""
        hi = len(self.seg) if hi is None else hi
        base = self._row_index
        out = np.arange(lo, hi, dtype=np.int64) if base is None else np.asarray(base[lo:hi], dtype=np.int64)
        if self._row_swaps is not None:
            pos, rows = self._row_swaps
            a, b = np.searchsorted(pos, [lo, hi])
            out[pos[a:b] - lo] = rows[a:b]
        return out

    @cached_property
    def row_index(self) -> np.ndarray:
        """Run row of every ranked row (see :meth:`run_rows` for a slice)."""
        return self.run_rows()

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def counts(self) -> np.ndarray:
        return np.diff(self.starts)

    def pos_of(self, rows: np.ndarray) -> np.ndarray:
        """1-based rank within its query of each of ``rows`` (O(len(rows)))."""
        return rows - self.starts[self.seg[rows]] + 1

    # -- the judged rows ----------------------------------------------------------------
    # Measures touch only judged rows (a few per cent of a deep run): every count below
    # works on sorted row numbers by binary search, never on an array the size of the run.
    @cached_property
    def judged_rows(self) -> np.ndarray:
        """Ranked rows whose document is judged for its query, ascending."""
        return np.flatnonzero(self.judged)

    def relevant_rows(self, threshold: float) -> np.ndarray:
        """Ranked rows judged relevant at ``threshold``, ascending."""
        key = ("relrows", threshold)
        if key not in self._cache:
            jr = self.judged_rows
            lab = self.label[jr]
            # negative labels are "judged, not relevant" whatever the threshold
            self._cache[key] = jr[(lab >= threshold) & (lab >= 0)]
        return self._cache[key]

    def judged_nonrelevant_rows(self, threshold: float) -> np.ndarray:
        """Ranked rows judged, with 0 <= label < threshold, ascending."""
        jr = self.judged_rows
        lab = self.label[jr]
        return jr[(lab >= 0) & (lab < threshold)]

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

    def count_upto(self, flag_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For each of ``rows``: flagged rows (``flag_rows``, ascending) of the same query
        ranked at or above it."""
        seg_start = self.starts[self.seg[rows]]
        return (np.searchsorted(flag_rows, rows, side="right")
                - np.searchsorted(flag_rows, seg_start, side="left"))

    def count_top(self, flag_rows: np.ndarray, k: int) -> np.ndarray:
        """Flagged rows (``flag_rows``, ascending) among the top ``k`` of each query."""
        first = self.starts[:-1]
        end = first + np.minimum(self.counts, k)
        return np.searchsorted(flag_rows, end) - np.searchsorted(flag_rows, first)

    def first_relevant_rank(self, threshold: float) -> np.ndarray:
        """Rank of the first relevant document per query; 0 when none."""
        key = ("first", threshold)
        if key not in self._cache:
            rows = self.relevant_rows(threshold)
            out = np.zeros(self.n_queries, dtype=np.int64)
            if len(rows):
                s = self.seg[rows]
                first = np.r_[True, s[1:] != s[:-1]]
                out[s[first]] = self.pos_of(rows[first])
            self._cache[key] = out
        return self._cache[key]


def _sorted_with_rows(keys: np.ndarray, low_bits: int, query_codes: np.ndarray) -> np.ndarray:
    """``keys`` (of :func:`pair_keys`, of rows with these ``query_codes``), in place, with
    their low ``low_bits`` bits replaced by the row number, then sorted; returns ``keys``.

    One sort gives both what the run's duplicate check needs (equal keys end up side by
    side) and what the join needs (a sorted array to search the judged pairs in), with
    the row of every entry at hand -- an argsort would cost three times as much. In
    place and in blocks: no second array the size of the run (allocating one costs page
    faults as well as memory).
    """
    keys &= ~np.uint64((1 << low_bits) - 1)
    block = 1 << 20
    for lo in range(0, len(keys), block):
        part = keys[lo:lo + block]
        part |= np.arange(lo, lo + len(part), dtype=np.uint64)
    return sort_by_query(keys, query_codes)


def _duplicate_groups_sorted(sorted_rows: np.ndarray, low_bits: int, full_keys):
    """Positions of the rows whose key occurs more than once, with a group id per key
    (None when no key repeats), from the output of :func:`_sorted_with_rows`.

    Rows whose high bits equal a neighbour's are the only candidates (equal keys, and the
    rare distinct keys that share their high bits); they are grouped by their full keys,
    ``full_keys(rows)`` (recomputed for these few rows).
    """
    n = len(sorted_rows)
    if n < 2:
        return None
    # neighbours i, i+1 with equal high bits: their XOR is below 2**low_bits. In blocks,
    # so the temporaries are small and reused (no run-sized array, no page faults)
    limit = np.uint64(1 << low_bits)
    starts, block = [], 1 << 20
    for lo in range(0, n - 1, block):
        part = sorted_rows[lo:min(n, lo + block + 1)]
        starts.append(np.flatnonzero((part[1:] ^ part[:-1]) < limit) + lo)
    first = np.concatenate(starts)
    if not len(first):
        return None
    near = np.unique(np.concatenate((first, first + 1)))
    cand = (sorted_rows[near] & (limit - np.uint64(1))).astype(np.int64)
    _, group, counts = np.unique(full_keys(cand), return_inverse=True, return_counts=True)
    repeated = counts[group] > 1
    if not repeated.any():
        return None
    pos, group = cand[repeated], group[repeated]
    # renumber the groups 0..g-1 (the callers count groups with max + 1)
    group = np.unique(group, return_inverse=True)[1]
    return pos, group


def _verified_duplicates(found, qcodes: np.ndarray, docid: pa.Array, rows=None):
    """Duplicate (query, doc) groups, checked string by string; None when there are none.

    ``found``: the candidate groups (positions, group ids) of
    :func:`_duplicate_groups_sorted`, or None. Returns (positions, group ids, example pair
    of source rows). ``rows`` maps positions to rows of ``docid`` when a subset is
    checked. Raises _Collision if two different pairs share a fingerprint.
    """
    if found is None:
        return None
    pos, group = found
    order = np.lexsort((pos, group))
    pos, group = pos[order], group[order]
    first = np.r_[True, group[1:] != group[:-1]]
    head = pos[np.repeat(np.flatnonzero(first), np.diff(np.r_[np.flatnonzero(first), len(pos)]))]
    src = pos if rows is None else rows[pos]
    src_head = head if rows is None else rows[head]
    same = (qcodes[pos] == qcodes[head]) & strings_equal(docid, src, docid, src_head)
    if not same.all():
        raise _Collision
    # the first duplicate in input order, for the message
    second = np.flatnonzero(~first)
    k = second[np.argmin(src[second])]
    example = np.array([[int(src_head[k]), int(src[k])]])
    return pos, group, example


def _join_candidates(sorted_rows: np.ndarray, low_bits: int, judged_keys: np.ndarray):
    """Pairs (run row, judged index) whose keys agree on their high bits.

    Each judged key's high bits are looked up in ``sorted_rows`` (binary search, the
    needles sorted so the search walks forward); every row in the range of equal high
    bits is a candidate. Every true match is among them (equal pairs have equal keys);
    the caller keeps the candidates whose query and document string are equal, which
    also drops the rare pairs that only share high bits.
    """
    low = np.uint64((1 << low_bits) - 1)
    sj = np.sort((judged_keys & ~low) | np.arange(len(judged_keys), dtype=np.uint64))
    jh = sj & ~low
    n = len(sorted_rows)
    lo = np.searchsorted(sorted_rows, jh, side="left")
    has = np.flatnonzero(lo < n)
    has = has[(sorted_rows[lo[has]] & ~low) == jh[has]]
    lo, jidx = lo[has], (sj[has] & low).astype(np.int64)
    # a second row with the same high bits right after (duplicates kept, or a near
    # collision) is rare: only then is the range measured with a second search
    nxt = lo + 1
    more = (nxt < n) & ((sorted_rows[np.minimum(nxt, n - 1)] & ~low) == jh[has])
    if not more.any():
        return (sorted_rows[lo] & low).astype(np.int64), jidx
    hi = lo + 1
    hi[more] = np.searchsorted(sorted_rows, jh[has][more] | low, side="right")
    count = hi - lo
    at = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    return (sorted_rows[at] & low).astype(np.int64), np.repeat(jidx, count)


def _tie_order(docid, tied: np.ndarray, source_rows: np.ndarray, group: np.ndarray,
               descending: bool, block: int = 1 << 18) -> np.ndarray:
    """``tied`` reordered by document id within each tie group (``group`` non-decreasing).

    In blocks of about 260,000 rows, cut at group boundaries: on a run where nearly
    every row is tied, the working arrays of the string sort stay the size of a block,
    not of the run.
    """
    fixed = np.empty_like(tied)
    lo, n = 0, len(tied)
    while lo < n:
        hi = min(n, lo + block)
        if hi < n:  # end the block with the group it cuts
            hi = int(np.searchsorted(group, group[hi - 1], side="right"))
        perm = order_within_groups(docid, group[lo:hi], descending, rows=source_rows[lo:hi])
        fixed[lo:hi] = tied[lo:hi][perm]
        lo = hi
    return fixed


def _dedupe_keep(n: int, pos: np.ndarray, group: np.ndarray, values: np.ndarray, rule: str) -> np.ndarray:
    """Rows to keep when duplicates collapse to one: the first, the last or the max value."""
    keep = np.ones(n, dtype=bool)
    keep[pos] = False
    if rule == "first":
        o = np.lexsort((pos, group))
    elif rule == "last":
        o = np.lexsort((-pos, group))
    else:  # max value, the first of equal maxima
        o = np.lexsort((pos, -values[pos], group))
    g = group[o]
    chosen = pos[o][np.r_[True, g[1:] != g[:-1]]]
    keep[chosen] = True
    return np.flatnonzero(keep)


class _Collision(Exception):
    """Two different strings with the same 64-bit fingerprint (never seen; handled exactly)."""


def _duplicate_error(data, found, what: str, kinds: str):
    pos, group, example = found
    a, b = (int(x) for x in example[0])
    qid = data.qid[a].as_py()
    did = data.docid[a].as_py()
    la, lb = data.line_of(a), data.line_of(b)
    where = f"lines {la} and {lb}" if la is not None else f"rows {a + 1} and {b + 1}"
    n_extra = len(pos) - (int(group.max()) + 1 if len(np.unique(group)) == group.max() + 1 else len(np.unique(group)))
    raise InputError(
        f"duplicate {what} for query {qid!r}, document {did!r} ({where}; "
        f"{n_extra} duplicate row(s) in all)",
        source=data.source,
        hint=f"Remove the duplicates, or choose a duplicates convention ({kinds})")


def _exact_doc_keys(run_docid: pa.Array, qrels_docid: pa.Array):
    """Exact document codes shared by run and qrels (the slow path after a collision)."""
    both = pa.concat_arrays([run_docid, qrels_docid]).dictionary_encode()
    codes = both.indices.to_numpy(zero_copy_only=False).astype(np.uint64)
    return codes[: len(run_docid)], codes[len(run_docid):]


class Prepared:
    """The work of a build that depends only on the strings of ``qrels`` and ``run``: the
    query-id codes (first-appearance order) and the 64-bit document fingerprints.

    :func:`build_ranked_lists` does it itself when not given one; the streaming evaluator
    prepares the next block on its read-ahead thread while the engine ranks this one.
    A Prepared is used by one build (the run's fingerprints are overwritten in place).
    """

    __slots__ = ("run_qid", "qrels_qid", "run_dh", "qrels_dh")

    def __init__(self, qrels: Qrels, run: Run, run_qid=None):
        self.run_qid = _encode(run.qid) if run_qid is None else run_qid
        self.qrels_qid = _encode(qrels.qid)
        self.run_dh = hash_strings(run.docid)
        self.qrels_dh = hash_strings(qrels.docid)


def build_ranked_lists(qrels: Qrels, run: Run, conv: Conventions,
                       cutoffs: tuple[int, ...] = (), prepared: Prepared | None = None) -> RankedLists:
    """Sort ``run`` per query, join the labels of ``qrels``, and report diagnostics.

    ``prepared``: a :class:`Prepared` of these ``qrels`` and ``run`` (made here when None).
    """
    prepared = Prepared(qrels, run) if prepared is None else prepared
    try:
        ranked = _build(qrels, run, conv, cutoffs, None, prepared)
    except _Collision:
        ranked = _build(qrels, run, conv, cutoffs, _exact_doc_keys(run.docid, qrels.docid), prepared)
    if getattr(conv, "judged_only", False):
        ranked = judged_only(ranked)
    return ranked


def judged_only(R: RankedLists) -> RankedLists:
    """The rankings with every document that is not judged (absent from the qrels, or
    judged with a negative label) removed, the others moving up (trec_eval ``-J``; the
    order of the remaining documents, ties included, is unchanged)."""
    keep = R.judged.copy()
    keep[R.judged] = R.label[R.judged] >= 0
    if keep.all():
        return R
    rows = np.flatnonzero(keep)
    seg = R.seg[rows]
    counts = np.bincount(seg, minlength=R.n_queries)
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return RankedLists(R.query_ids, starts, seg, R.label[rows], R.judged[rows], R.qrels_seg,
                       R.qrels_label, R.diagnostics, row_index=R.run_rows()[rows],
                       qrels_row=R.qrels_row)


class _Work:
    """The working state of one build, passed from phase to phase. Each phase deletes the
    arrays it no longer needs (``del w.x``), so the peak memory is that of one phase."""


def _build(qrels: Qrels, run: Run, conv: Conventions, cutoffs, exact_keys, prepared: Prepared) -> RankedLists:
    """The phases, in order: queries, judgements (qrels duplicates), run duplicates, the
    join, the rank sort, the tie order, the depth cut, the labels at ranked positions."""
    w = _Work()
    w.qrels, w.run, w.conv, w.exact_keys, w.diag = qrels, run, conv, exact_keys, Diagnostics()
    w.prepared = prepared
    _phase_queries(w)
    _phase_fingerprints(w)
    _phase_judgements(w)
    _phase_run_duplicates(w)
    _phase_join(w)
    _phase_rank(w)
    _phase_ties(w, cutoffs)
    _phase_depth(w)
    return _phase_labels(w)


def _phase_queries(w: _Work) -> None:
    """Evaluated queries (run order of first appearance, so a run grouped by query needs
    no sort), the evaluated-query index of every run row (-1: not judged) and of every
    qrels query; missing and extra queries."""
    run, qrels, diag = w.run, w.qrels, w.diag
    run_qc, run_qvocab = w.prepared.run_qid
    w.qrels_qc, qrels_qvocab = w.prepared.qrels_qid
    run_qnames = run_qvocab.to_pylist()
    qrels_qnames = qrels_qvocab.to_pylist()
    judged_set = set(qrels_qnames) | set(qrels.extra_query_ids)
    # a query answered with an empty ranking is evaluated (it has no rows), not missing
    run_set = set(run_qnames)
    answered_empty = [q for q in dict.fromkeys(run.extra_query_ids) if q not in run_set]
    run_set.update(answered_empty)
    diag.missing_queries = sorted(judged_set - run_set)
    diag.extra_queries = sorted(run_set - judged_set)
    eval_ids = [q for q in run_qnames if q in judged_set] + [q for q in answered_empty if q in judged_set]
    if w.conv.missing_queries == "zero":
        eval_ids += diag.missing_queries
    index = {q: i for i, q in enumerate(eval_ids)}
    w.eval_ids, w.nq = eval_ids, len(eval_ids)
    w.qrels_qmap = np.array([index.get(q, -1) for q in qrels_qnames], dtype=np.int32)
    w.rq = np.array([index.get(q, -1) for q in run_qnames], dtype=np.int32)[run_qc]


def _phase_fingerprints(w: _Work) -> None:
    """64-bit document fingerprints of run and qrels rows (exact codes after a collision)."""
    if w.exact_keys is None:
        p = w.prepared
        if p.run_dh is None:
            raise ValueError("this Prepared was used by another build")
        # the run's fingerprints become the pair keys in place: a Prepared serves one build
        w.run_dh, w.qrels_dh, p.run_dh = p.run_dh, p.qrels_dh, None
    else:
        w.run_dh, w.qrels_dh = w.exact_keys[0].copy(), w.exact_keys[1]  # run_dh is overwritten


def _phase_judgements(w: _Work) -> None:
    """Qrels duplicates per convention (checked over every query, as trec_eval does; found
    as the run's are: one sort of (pair key, row)), then the judgements of evaluated
    queries: ``qrels_seg``, ``qrels_label``, ``qrels_row``."""
    qrels, conv, diag, qrels_qc, qrels_dh = w.qrels, w.conv, w.diag, w.qrels_qc, w.qrels_dh
    n_judged = len(qrels_qc)
    n_qrels_queries = len(w.qrels_qmap)  # qrels query codes: 0 .. n - 1
    exact = w.exact_keys is not None
    q_bits = max(n_judged.bit_length(), 1)
    qrels_dups = _verified_duplicates(
        _duplicate_groups_sorted(_sorted_with_rows(pair_keys(qrels_qc, qrels_dh, n_qrels_queries, exact=exact), q_bits,
                                                   qrels_qc), q_bits,
                                 lambda cand: pair_keys(qrels_qc[cand], qrels_dh[cand], n_qrels_queries, exact=exact)),
        qrels_qc, qrels.docid)
    qq = w.qrels_qmap[qrels_qc]
    del w.qrels_qc, w.qrels_qmap
    qlabel = qrels.relevance
    fractional = np.count_nonzero(qlabel != np.trunc(qlabel)) if len(qlabel) else 0
    if fractional:
        diag.fractional_labels = int(fractional)
        if conv.labels == "truncate":  # as trec_eval reads a label: a whole number, 1.7 -> 1
            qlabel = np.trunc(qlabel)
    qrow = np.arange(len(qrels), dtype=np.int64)
    if qrels_dups is not None:
        diag.qrels_duplicates = len(qrels_dups[0]) - len(np.unique(qrels_dups[1]))
        if conv.duplicates == "error":
            _duplicate_error(qrels, qrels_dups, "judgement", "keep first, last or max")
        rule = conv.duplicates if conv.duplicates in ("first", "last") else "max"
        keep = _dedupe_keep(n_judged, qrels_dups[0], qrels_dups[1], qlabel, rule)
        qq, qlabel, qrow = qq[keep], qlabel[keep], qrow[keep]
    in_eval = qq >= 0
    if in_eval.all():
        w.qrels_seg, w.qrels_label, w.qrels_row = qq, qlabel, qrow
    else:
        w.qrels_seg, w.qrels_label, w.qrels_row = qq[in_eval], qlabel[in_eval], qrow[in_eval]


def _phase_run_duplicates(w: _Work) -> None:
    """Run rows of evaluated queries (``rows``: their run row numbers, None when all),
    their (query, doc) keys sorted with their row numbers in the low bits, and the run's
    duplicates per convention."""
    run, conv, diag = w.run, w.conv, w.diag
    w.scores = run.scores
    if conv.compat == "trec_eval9":
        # trec_eval 9.0.8 keeps scores as C floats: scores equal in float32 tie
        w.scores = w.scores.astype(np.float32).astype(np.float64)
    w.rows = None
    if (w.rq < 0).any():
        w.rows = np.flatnonzero(w.rq >= 0)
        w.rq, w.scores, w.run_dh = w.rq[w.rows], w.scores[w.rows], w.run_dh[w.rows]
    exact = w.exact_keys is not None
    rkeys = pair_keys(w.rq, w.run_dh, w.nq, out=w.run_dh, exact=exact)  # in place: doc fingerprints not needed after
    del w.run_dh
    # row numbers fit in the low bits of the sorted keys; the qrels' too (the join uses
    # the same split for both)
    low_bits = max(int(len(rkeys)).bit_length(), int(len(w.qrels_seg)).bit_length(), 1)
    w.low_bits = low_bits
    w.sorted_rows = _sorted_with_rows(rkeys, low_bits, w.rq)  # rkeys is sorted_rows from here
    del rkeys
    rows, rq, exact_keys = w.rows, w.rq, w.exact_keys

    def full_keys(cand):  # the pair keys of a few rows, again
        src = cand if rows is None else rows[cand]
        doc = (hash_strings(run.docid.take(pa.array(src))) if exact_keys is None
               else exact_keys[0][src])
        return pair_keys(rq[cand], doc, w.nq, exact=exact)

    run_dups = _verified_duplicates(_duplicate_groups_sorted(w.sorted_rows, low_bits, full_keys),
                                    rq, run.docid, rows)
    if run_dups is None:
        return
    diag.duplicates = len(run_dups[0]) - len(np.unique(run_dups[1]))
    if conv.duplicates == "error":
        _duplicate_error(run, run_dups, "document in the run", "count, first, last or max")
    if conv.duplicates != "count":
        keep = _dedupe_keep(len(rq), run_dups[0], run_dups[1], w.scores, conv.duplicates)
        w.rows = keep if rows is None else rows[keep]
        w.rq, w.scores = rq[keep], w.scores[keep]
        # renumber the rows of the sorted keys, dropping the removed ones
        low = np.uint64((1 << low_bits) - 1)
        new_row = np.full(len(w.sorted_rows), -1, dtype=np.int64)
        new_row[keep] = np.arange(len(keep))
        nr = new_row[(w.sorted_rows & low).astype(np.int64)]
        w.sorted_rows = (w.sorted_rows[nr >= 0] & ~low) | nr[nr >= 0].astype(np.uint64)


def _phase_join(w: _Work) -> None:
    """The join, in run rows: labels of (query, doc) pairs from the qrels, found in the
    sorted run keys and verified string by string (``found_rows`` -> ``jrow``). Done
    before the sort, so the sorted keys are freed before the tie order needs memory."""
    rows, rq = w.rows, w.rq
    jkeys = pair_keys(w.qrels_seg, w.qrels_dh[w.qrels_row], w.nq, exact=w.exact_keys is not None)
    if len(jkeys) and len(rq):
        found_rows, jrow = _join_candidates(w.sorted_rows, w.low_bits, jkeys)
        del w.sorted_rows
        run_rows = found_rows if rows is None else rows[found_rows]
        ok = (w.qrels_seg[jrow] == rq[found_rows]) & strings_equal(
            w.run.docid, run_rows, w.qrels.docid, w.qrels_row[jrow])
        if not ok.all():  # candidates that only shared high bits
            found_rows, jrow = found_rows[ok], jrow[ok]
        del run_rows, ok
    else:
        del w.sorted_rows
        found_rows = jrow = np.zeros(0, dtype=np.int64)
    del jkeys, w.qrels_dh
    w.found_rows, w.jrow = found_rows, jrow


def _phase_rank(w: _Work) -> None:
    """The sort: query, then score descending (ties in run order for now). A run written
    in rank order (the usual case) is checked in O(n) and not sorted at all (``order``
    None). Rows end grouped by query in ascending order: segment ``starts`` by binary
    search (needles of ``sq``'s own dtype: mixed dtypes would copy it to int64)."""
    rq, scores, nq = w.rq, w.scores, w.nq
    n = len(rq)
    if n > 1:
        already = bool(np.all(rq[1:] >= rq[:-1])) and bool(
            np.all((rq[1:] != rq[:-1]) | (scores[1:] <= scores[:-1])))
    else:
        already = True
    order = None if already else np.argsort(_score_key(scores)).astype(np.int32)
    if order is not None:
        order = order[stable_argsort_codes(rq[order], nq)]
    w.order = order
    w.sq = rq if order is None else rq[order]
    w.starts = np.searchsorted(w.sq, np.arange(nq + 1, dtype=w.sq.dtype)).astype(np.int64)
    w.swaps = None


def _phase_ties(w: _Work, cutoffs) -> None:
    """Equal scores ordered by the tie rule, inside each query (so ``sq`` and ``starts``
    do not change). A run already in rank order keeps its fixes as sparse ``swaps``
    (ranked position -> run row), not as an array the size of the run. Counts the tie
    groups and the groups that straddle each cutoff."""
    n, sq, order, rows, conv, diag = len(w.rq), w.sq, w.order, w.rows, w.conv, w.diag
    if n <= 1:
        return
    ss = w.scores if order is None else w.scores[order]
    eq = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])  # -0.0 == 0.0, as in trec_eval
    del ss
    if not eq.any():
        return
    in_tie = np.zeros(n, dtype=bool)
    in_tie[1:] |= eq
    in_tie[:-1] |= eq
    # int32: on a run with many ties these cover most of the run
    idx = np.flatnonzero(in_tie).astype(np.int32)
    del in_tie
    group = np.cumsum(~np.r_[False, eq][idx], dtype=np.int32)
    del eq
    diag.tied_groups = int(group[-1])
    diag.tied_documents = int(len(idx))
    tied = idx if order is None else order[idx]
    source_rows = tied if rows is None else rows[tied]
    if conv.ties != "input" or order is not None:
        if conv.ties == "input":
            fixed = tied[np.lexsort((source_rows, group))]
        else:
            fixed = _tie_order(w.run.docid, tied, source_rows, group, conv.ties == "trec")
        if not np.array_equal(fixed, tied):
            if order is None:
                # ranked position idx[i] holds run row fixed[i], the others keep their row
                w.swaps = (idx, fixed)
            else:
                order[idx] = fixed
        del fixed
    # Ties that straddle a cutoff: the group crosses from rank k to k+1.
    if cutoffs:
        pos = idx - w.starts[sq[idx]] + 1
        gfirst = np.r_[True, group[1:] != group[:-1]]
        glast = np.r_[group[1:] != group[:-1], True]
        lo, hi = pos[gfirst], pos[glast]
        for k in sorted(set(cutoffs)):
            diag.ties_straddling[k] = int(np.count_nonzero((lo <= k) & (hi > k)))


def _phase_depth(w: _Work) -> None:
    """The depth cut (trec_eval -M): keep the top ``depth`` of each query."""
    n = len(w.rq)
    if w.conv.depth is None or not n:
        return
    pos = np.arange(n) - w.starts[w.sq] + 1
    keep_rows = pos <= w.conv.depth
    if keep_rows.all():
        return
    if w.swaps is not None:  # a cut needs the full order
        w.order = np.arange(n, dtype=np.int32)
        w.order[w.swaps[0]] = w.swaps[1]
        w.swaps = None
    kept = np.flatnonzero(keep_rows)
    w.order = kept if w.order is None else w.order[kept]
    w.sq = w.sq[kept]
    counts = np.bincount(w.sq, minlength=w.nq)
    w.starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def _phase_labels(w: _Work) -> RankedLists:
    """The labels of the joined rows at their ranked positions, and the ranked lists."""
    sq, order, swaps, rows, found_rows, jrow = w.sq, w.order, w.swaps, w.rows, w.found_rows, w.jrow
    qrels_label, n = w.qrels_label, len(w.rq)
    m = len(sq)
    judged = np.zeros(m, dtype=bool)
    # labels that float32 holds exactly (whole numbers, halves ...) are stored in half the memory
    exact32 = bool(np.all(qrels_label.astype(np.float32) == qrels_label))
    label = np.zeros(m, dtype=np.float32 if exact32 else np.float64)
    if len(found_rows) and m:
        # run rows (after the subsets above) -> ranked positions
        if order is None:
            found = found_rows
            if swaps is not None:
                position_of = np.full(n, -1, dtype=np.int32)
                position_of[swaps[1]] = swaps[0]
                moved = position_of[found_rows]
                found = np.where(moved >= 0, moved, found_rows)
        else:
            rank_of = np.full(n, -1, dtype=np.int64)
            rank_of[order] = np.arange(len(order))
            found = rank_of[found_rows]
            kept = found >= 0                      # a depth cut drops rows
            found, jrow = found[kept], jrow[kept]
        judged[found] = True
        label[found] = qrels_label[jrow]
    if order is None:
        row_index = rows  # None: ranked row i is run row i
        if swaps is not None:  # swaps in run-row numbers
            swaps = (swaps[0], swaps[1] if rows is None else rows[swaps[1]])
    else:
        row_index = order if rows is None else rows[order]
    return RankedLists(w.eval_ids, w.starts, sq.astype(np.int32, copy=False), label, judged,
                       w.qrels_seg, qrels_label, w.diag, row_index=row_index,
                       qrels_row=w.qrels_row, row_swaps=swaps)
