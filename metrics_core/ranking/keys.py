"""The engine's key arithmetic: 64-bit (query, document) pair keys sorted with their row
numbers, the duplicate groups found in them, the join of judged pairs against them, the
tie order within groups of equal scores, and the duplicate rules.

Every candidate found by fingerprint is checked string by string
(:func:`metrics_core.ranking.strings.strings_equal`); two different pairs with one
fingerprint raise :class:`FingerprintCollision`, and the engine starts again with exact
codes (:func:`exact_doc_keys`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from metrics_core.errors import N_, InputError
from metrics_core.ranking.strings import (
    order_within_groups,
    sort_by_query,
    strings_compare,
    strings_equal,
)


def score_key(scores: np.ndarray) -> np.ndarray:
    """int64 keys whose ascending order is the scores' descending order (exact, no ties lost)."""
    neg = -(scores + 0.0)  # + 0.0 turns -0.0 into 0.0: they are equal scores
    bits = neg.view(np.int64)
    return bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


def sorted_with_rows(keys: np.ndarray, low_bits: int, query_codes: np.ndarray) -> np.ndarray:
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
        part = keys[lo : lo + block]
        part |= np.arange(lo, lo + len(part), dtype=np.uint64)
    return sort_by_query(keys, query_codes)


def duplicate_groups_sorted(sorted_rows: np.ndarray, low_bits: int, full_keys):
    """Positions of the rows whose key occurs more than once, with a group id per key
    (None when no key repeats), from the output of :func:`sorted_with_rows`.

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
        part = sorted_rows[lo : min(n, lo + block + 1)]
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


def verified_duplicates(found, qcodes: np.ndarray, docid: pa.Array, rows=None):
    """Duplicate (query, doc) groups, checked string by string; None when there are none.

    ``found``: the candidate groups (positions, group ids) of
    :func:`duplicate_groups_sorted`, or None. Returns (positions, group ids, example pair
    of source rows). ``rows`` maps positions to rows of ``docid`` when a subset is
    checked. Raises FingerprintCollision if two different pairs share a fingerprint.
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
        raise FingerprintCollision
    # the first duplicate in input order, for the message
    second = np.flatnonzero(~first)
    k = second[np.argmin(src[second])]
    example = np.array([[int(src_head[k]), int(src[k])]])
    return pos, group, example


def join_candidates(sorted_rows: np.ndarray, low_bits: int, judged_keys: np.ndarray):
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


def tie_order(
    docid,
    tied: np.ndarray,
    source_rows: np.ndarray,
    group: np.ndarray,
    descending: bool,
    block: int = 1 << 18,
) -> np.ndarray:
    """``tied`` reordered by document id within each tie group (``group`` non-decreasing).

    Where groups of two hold half of the rows or more (most ties of a fused run: two
    documents at the same ranks of different runs), each pair is put in order by one
    comparison of its two ids (:func:`strings_compare`, in byte order as the sort's). The
    other groups are sorted in blocks of about 260,000 rows, cut at group boundaries: on a
    run where nearly every row is tied, the working arrays of the string sort stay the
    size of a block, not of the run. Equal ids keep their positions' order.
    """
    n = len(tied)
    if n > 2:
        head = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        size = np.diff(np.r_[head, n])
        first = head[size == 2]
        if 4 * len(first) >= n:
            cmp = strings_compare(docid, source_rows[first], docid, source_rows[first + 1])
            at = first[cmp < 0] if descending else first[cmp > 0]
            fixed = tied.copy()
            fixed[at], fixed[at + 1] = tied[at + 1], tied[at]
            if 2 * len(first) < n:  # and the larger groups
                rest = np.flatnonzero(np.repeat(size != 2, size))
                fixed[rest] = _tie_order_sorted(
                    docid, tied[rest], source_rows[rest], group[rest], descending, block
                )
            return fixed
    return _tie_order_sorted(docid, tied, source_rows, group, descending, block)


def _tie_order_sorted(docid, tied, source_rows, group, descending: bool, block: int):
    """:func:`tie_order` by the string sort of :func:`order_within_groups`, in blocks."""
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


def dedupe_keep(
    n: int, pos: np.ndarray, group: np.ndarray, values: np.ndarray, rule: str
) -> np.ndarray:
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


class FingerprintCollision(Exception):
    """Two different strings with the same 64-bit fingerprint (never seen; handled exactly)."""


#: (what, where the rows are: "lines" or "rows") -> the problem of :func:`duplicate_error`
DUPLICATE_TEXTS = {
    ("judgement", "lines"): N_(
        "duplicate judgement for query {query!r}, document {doc!r} (lines {first} and "
        "{second}; {n} duplicate row(s) in all)"
    ),
    ("judgement", "rows"): N_(
        "duplicate judgement for query {query!r}, document {doc!r} (rows {first} and "
        "{second}; {n} duplicate row(s) in all)"
    ),
    ("document in the run", "lines"): N_(
        "duplicate document in the run for query {query!r}, document {doc!r} "
        "(lines {first} and {second}; {n} duplicate row(s) in all)"
    ),
    ("document in the run", "rows"): N_(
        "duplicate document in the run for query {query!r}, document {doc!r} "
        "(rows {first} and {second}; {n} duplicate row(s) in all)"
    ),
}
#: the duplicates conventions a hint of :func:`duplicate_error` lists -> that hint
DUPLICATE_HINTS = {
    "keep first, last or max": N_(
        "Remove the duplicates, or choose a duplicates convention (keep first, last or max)"
    ),
    "count, first, last or max": N_(
        "Remove the duplicates, or choose a duplicates convention (count, first, last or max)"
    ),
}


def duplicate_error(data, found, what: str, kinds: str):
    """Raise the InputError for the first duplicate of ``found`` (file, lines, count).

    ``what`` names the row ("judgement", "document in the run") and ``kinds`` the
    conventions that accept duplicates; the texts of :data:`DUPLICATE_TEXTS` and
    :data:`DUPLICATE_HINTS` are translatable."""
    pos, group, example = found
    a, b = (int(x) for x in example[0])
    qid = data.qid[a].as_py()
    did = data.docid[a].as_py()
    la, lb = data.line_of(a), data.line_of(b)
    where, first, second = ("lines", la, lb) if la is not None else ("rows", a + 1, b + 1)
    n_extra = len(pos) - (
        int(group.max()) + 1 if len(np.unique(group)) == group.max() + 1 else len(np.unique(group))
    )
    problem = DUPLICATE_TEXTS.get((what, where)) or (
        N_(
            "duplicate {what} for query {query!r}, document {doc!r} (lines {first} and {second}; "
            "{n} duplicate row(s) in all)"
        )
        if where == "lines"
        else N_(
            "duplicate {what} for query {query!r}, document {doc!r} (rows {first} and {second}; "
            "{n} duplicate row(s) in all)"
        )
    )
    hint = DUPLICATE_HINTS.get(kinds) or N_(
        "Remove the duplicates, or choose a duplicates convention ({kinds})"
    )
    raise InputError(
        problem,
        source=data.source,
        hint=hint,
        params={
            "what": what,
            "query": qid,
            "doc": did,
            "first": first,
            "second": second,
            "n": n_extra,
            "kinds": kinds,
        },
    )


def exact_doc_keys(run_docid: pa.Array, qrels_docid: pa.Array):
    """Exact document codes shared by run and qrels (the slow path after a collision)."""
    both = pa.concat_arrays([run_docid, qrels_docid]).dictionary_encode()
    codes = both.indices.to_numpy(zero_copy_only=False).astype(np.uint64)
    return codes[: len(run_docid)], codes[len(run_docid) :]
