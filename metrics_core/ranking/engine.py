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

import numpy as np
import pyarrow as pa

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run, shared_ids
from metrics_core.ranking.keys import (
    FingerprintCollision,
    dedupe_keep,
    duplicate_error,
    duplicate_groups_sorted,
    exact_doc_keys,
    join_candidates,
    score_key,
    sorted_with_rows,
    tie_order,
    verified_duplicates,
)
from metrics_core.ranking.ranked_lists import Diagnostics, RankedLists
from metrics_core.ranking.strings import (
    encode_strings,
    hash_strings,
    pair_keys,
    stable_argsort_codes,
    strings_equal,
)


class Prepared:
    """The work of a build that depends only on the strings of ``qrels`` and ``run``: the
    query-id codes (first-appearance order) and the 64-bit document fingerprints.

    :func:`build_ranked_lists` does it itself when not given one; the streaming evaluator
    prepares the next block on its read-ahead thread while the engine ranks this one.
    A Prepared is used by one build (the run's fingerprints are overwritten in place).
    """

    __slots__ = ("run_qid", "qrels_qid", "run_dh", "qrels_dh")
    run_qid: tuple[np.ndarray, pa.Array]  # (code of every row, the distinct ids)
    qrels_qid: tuple[np.ndarray, pa.Array]
    run_dh: np.ndarray | None  # None once a build has used it
    qrels_dh: np.ndarray

    def __init__(self, qrels: Qrels, run: Run, run_qid: tuple[np.ndarray, pa.Array] | None = None):
        self.run_qid = encode_strings(run.qid) if run_qid is None else run_qid
        self.qrels_qid = encode_strings(qrels.qid)
        self.run_dh = hash_strings(run.docid)
        self.qrels_dh = hash_strings(qrels.docid)


def build_ranked_lists(
    qrels: Qrels,
    run: Run,
    conv: Conventions,
    cutoffs: tuple[int, ...] = (),
    prepared: Prepared | None = None,
) -> RankedLists:
    """Sort ``run`` per query, join the labels of ``qrels``, and report diagnostics.

    ``prepared``: a :class:`Prepared` of these ``qrels`` and ``run`` (made here when None).
    """
    if getattr(conv, "ignore_identical_ids", False):
        kept = drop_identical_ids(run)
        if kept is not run:
            run, prepared = kept, None
    prepared = Prepared(qrels, run) if prepared is None else prepared
    try:
        ranked = _build(qrels, run, conv, cutoffs, None, prepared)
    except FingerprintCollision:
        ranked = _build(qrels, run, conv, cutoffs, exact_doc_keys(run.docid, qrels.docid), prepared)
    ranked.run_docid = (
        run.docid
    )  # the document ids of run rows (Hole@k asks the whole qrels about them)
    if conv.judged_only:
        ranked = judged_only(ranked)
        ranked.run_docid = run.docid
    return ranked


def drop_identical_ids(run: Run) -> Run:
    """``run`` without the rows whose document id equals the query id (BEIR's
    ``ignore_identical_ids``), or ``run`` itself when it has none. A query that loses every
    row stays answered with an empty ranking (``extra_query_ids``), as BEIR passes it on.

    >>> r = drop_identical_ids(Run(["q1", "q1", "q2"], ["q1", "d2", "q2"], [3.0, 2.0, 1.0]))
    >>> list(r.doc_ids), r.extra_query_ids
    (['d2'], ('q2',))
    """
    import pyarrow.compute as pc

    qid = run.qid
    if pa.types.is_dictionary(qid.type):
        qid = qid.cast(qid.type.value_type)
    docid = run.docid
    if pa.types.is_dictionary(docid.type):
        docid = docid.cast(docid.type.value_type)
    same = pc.equal(qid.cast(pa.large_string()), docid.cast(pa.large_string()))
    if not pc.any(same).as_py():
        return run
    keep = pc.invert(same)
    rows = np.flatnonzero(keep.to_numpy(zero_copy_only=False))
    kept_qid = pc.filter(qid, keep)
    emptied = set(pc.unique(pc.filter(qid, same)).to_pylist()) - set(
        pc.unique(kept_qid).to_pylist()
    )
    lines = None
    if run.line_numbers is not None:
        lines = run.line_numbers[rows]
    elif run.rows_are_lines:
        lines = rows + 1
    return Run(
        kept_qid,
        pc.filter(docid, keep),
        run.scores[rows],
        name=run.name,
        source=run.source,
        line_numbers=lines,
        tags=run.tags,
        extra_query_ids=tuple(run.extra_query_ids) + tuple(sorted(emptied)),
    )


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
    out = RankedLists(
        R.query_ids,
        starts,
        seg,
        R.label[rows],
        R.judged[rows],
        R.qrels_seg,
        R.qrels_label,
        R.diagnostics,
        row_index=R.run_rows()[rows],
        qrels_row=R.qrels_row,
        qrels=R.qrels,
    )
    if R.judged_qrels_row is not None:  # the judged rows kept are those with a label >= 0
        out.judged_qrels_row = R.judged_qrels_row[keep[R.judged_rows]]
    return out


# (run document keys, qrels document keys): exact codes after a fingerprint collision
DocKeys = tuple[np.ndarray, np.ndarray]


@dataclass(slots=True, eq=False, repr=False)
class _Work:
    """The working state of one build, passed from phase to phase. The inputs are given at
    construction; each phase sets the fields it produces (none before, hence no default)
    and deletes the arrays it no longer needs (``del w.x``), so the peak memory is that of
    one phase. Row numbers are run rows unless said otherwise."""

    qrels: Qrels
    run: Run
    conv: Conventions
    exact_keys: DocKeys | None  # None: 64-bit fingerprints (the usual case)
    prepared: Prepared
    diag: Diagnostics = field(default_factory=Diagnostics)
    # _phase_queries
    eval_ids: list[str] = field(init=False)  # evaluated queries, in output order
    nq: int = field(init=False)  # len(eval_ids)
    qrels_qc: np.ndarray = field(init=False)  # qrels query code of every qrels row
    qrels_qmap: np.ndarray = field(init=False)  # qrels query code -> evaluated query (-1: none)
    rq: np.ndarray = field(init=False)  # evaluated query of every (kept) run row, -1: none
    # _phase_fingerprints
    run_dh: np.ndarray = field(init=False)  # document key of every run row (uint64)
    qrels_dh: np.ndarray = field(init=False)  # document key of every qrels row (uint64)
    # _phase_judgements: the kept judgements of evaluated queries
    qrels_seg: np.ndarray = field(init=False)  # their evaluated query
    qrels_label: np.ndarray = field(init=False)  # their label
    qrels_row: np.ndarray = field(init=False)  # their qrels row
    # _phase_run_duplicates
    scores: np.ndarray = field(init=False)  # score of every kept run row
    rows: np.ndarray | None = field(init=False)  # kept run rows (None: all, in order)
    low_bits: int = field(init=False)  # bits of the row number in the sorted keys
    sorted_rows: np.ndarray = field(init=False)  # (pair key | row) of the kept rows, sorted
    # _phase_join: the matched pairs
    found_rows: np.ndarray = field(init=False)  # their kept run row
    jrow: np.ndarray = field(init=False)  # their judgement (index into qrels_seg ...)
    # _phase_rank, _phase_ties, _phase_depth
    order: np.ndarray | None = field(init=False)  # ranked position -> kept row (None: same)
    sq: np.ndarray = field(init=False)  # evaluated query of every ranked position
    starts: np.ndarray = field(init=False)  # segment starts of the queries (nq + 1)
    swaps: tuple[np.ndarray, np.ndarray] | None = field(init=False)  # (positions, rows) fixed


def _build(
    qrels: Qrels,
    run: Run,
    conv: Conventions,
    cutoffs: tuple[int, ...],
    exact_keys: DocKeys | None,
    prepared: Prepared,
) -> RankedLists:
    """The phases, in order: queries, judgements (qrels duplicates), run duplicates, the
    join, the rank sort, the tie order, the depth cut, the labels at ranked positions."""
    w = _Work(qrels, run, conv, exact_keys, prepared)
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
    run_qnames = shared_ids(run_qvocab.to_pylist())  # the evaluation's query ids
    qrels_qnames = shared_ids(qrels_qvocab.to_pylist())
    judged_set = set(qrels_qnames) | set(qrels.extra_query_ids)
    # a query answered with an empty ranking is evaluated (it has no rows), not missing
    run_set = set(run_qnames)
    answered_empty = [q for q in dict.fromkeys(run.extra_query_ids) if q not in run_set]
    run_set.update(answered_empty)
    diag.missing_queries = sorted(judged_set - run_set)
    diag.extra_queries = sorted(run_set - judged_set)
    eval_ids = [q for q in run_qnames if q in judged_set] + [
        q for q in answered_empty if q in judged_set
    ]
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
    qrels_dups = verified_duplicates(
        duplicate_groups_sorted(
            sorted_with_rows(
                pair_keys(qrels_qc, qrels_dh, n_qrels_queries, exact=exact), q_bits, qrels_qc
            ),
            q_bits,
            lambda cand: pair_keys(qrels_qc[cand], qrels_dh[cand], n_qrels_queries, exact=exact),
        ),
        qrels_qc,
        qrels.docid,
    )
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
            duplicate_error(qrels, qrels_dups, "judgement", "keep first, last or max")
        rule = conv.duplicates if conv.duplicates in ("first", "last") else "max"
        keep = dedupe_keep(n_judged, qrels_dups[0], qrels_dups[1], qlabel, rule)
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
    rkeys = pair_keys(
        w.rq, w.run_dh, w.nq, out=w.run_dh, exact=exact
    )  # in place: doc fingerprints not needed after
    del w.run_dh
    # row numbers fit in the low bits of the sorted keys; the qrels' too (the join uses
    # the same split for both)
    low_bits = max(int(len(rkeys)).bit_length(), int(len(w.qrels_seg)).bit_length(), 1)
    w.low_bits = low_bits
    w.sorted_rows = sorted_with_rows(rkeys, low_bits, w.rq)  # rkeys is sorted_rows from here
    del rkeys
    rows, rq, exact_keys = w.rows, w.rq, w.exact_keys

    def full_keys(cand):  # the pair keys of a few rows, again
        src = cand if rows is None else rows[cand]
        doc = (
            hash_strings(run.docid.take(pa.array(src)))
            if exact_keys is None
            else exact_keys[0][src]
        )
        return pair_keys(rq[cand], doc, w.nq, exact=exact)

    run_dups = verified_duplicates(
        duplicate_groups_sorted(w.sorted_rows, low_bits, full_keys), rq, run.docid, rows
    )
    if run_dups is None:
        return
    diag.duplicates = len(run_dups[0]) - len(np.unique(run_dups[1]))
    if conv.duplicates == "error":
        duplicate_error(run, run_dups, "document in the run", "count, first, last or max")
    if conv.duplicates != "count":
        keep = dedupe_keep(len(rq), run_dups[0], run_dups[1], w.scores, conv.duplicates)
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
        found_rows, jrow = join_candidates(w.sorted_rows, w.low_bits, jkeys)
        del w.sorted_rows
        run_rows = found_rows if rows is None else rows[found_rows]
        ok = (w.qrels_seg[jrow] == rq[found_rows]) & strings_equal(
            w.run.docid, run_rows, w.qrels.docid, w.qrels_row[jrow]
        )
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
            np.all((rq[1:] != rq[:-1]) | (scores[1:] <= scores[:-1]))
        )
    else:
        already = True
    order = None if already else np.argsort(score_key(scores)).astype(np.int32)
    if order is not None:
        order = order[stable_argsort_codes(rq[order], nq)]
    w.order = order
    w.sq = rq if order is None else rq[order]
    w.starts = np.searchsorted(w.sq, np.arange(nq + 1, dtype=w.sq.dtype)).astype(np.int64)
    w.swaps = None


def _phase_ties(w: _Work, cutoffs: tuple[int, ...]) -> None:
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
            fixed = tie_order(w.run.docid, tied, source_rows, group, conv.ties == "trec")
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
    found = np.zeros(0, dtype=np.int64)
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
            kept = found >= 0  # a depth cut drops rows
            found, jrow = found[kept], jrow[kept]
        judged[found] = True
        label[found] = qrels_label[jrow]
    if getattr(w.qrels, "pair_ptr", None) is not None:  # subtopic qrels: keep each judged
        # ranked row's qrels row (the diversity measures read its subtopics); a few ints
        judged_qrow = w.qrels_row[jrow[np.argsort(found, kind="stable")]] if len(found) else found
    else:
        judged_qrow = None
    if order is None:
        row_index = rows  # None: ranked row i is run row i
        if swaps is not None:  # swaps in run-row numbers
            swaps = (swaps[0], swaps[1] if rows is None else rows[swaps[1]])
    else:
        row_index = order if rows is None else rows[order]
    lists = RankedLists(
        w.eval_ids,
        w.starts,
        sq.astype(np.int32, copy=False),
        label,
        judged,
        w.qrels_seg,
        qrels_label,
        w.diag,
        row_index=row_index,
        qrels_row=w.qrels_row,
        row_swaps=swaps,
        qrels=w.qrels,
    )
    lists.judged_qrels_row = judged_qrow
    return lists


__all__ = [
    "Diagnostics",
    "Prepared",
    "RankedLists",
    "build_ranked_lists",
    "drop_identical_ids",
    "judged_only",
]
