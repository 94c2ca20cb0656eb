"""How much a score depends on the documents nobody judged: the unjudged band.

A run retrieves documents the qrels do not judge; they count as non-relevant. For every
query and measure the band gives the lowest and the highest value the measure can take over
every labelling of those documents with labels 0 .. L (L: the qrels' highest label, whole
numbers). A labelled document is judged: labelled relevant it is counted in R, the ideal
ranking and the denominators, labelled non-relevant in bpref's N -- so the extremes are
not always "all relevant" or "all non-relevant". Each extreme is found exactly, per
measure, and the value reported is the measure computed by the engine on that labelling
(so every bound is attained):

* P, Hits, Success, RR, DCG: monotone in each label -- all at L, or all at 0.
* R@k: the highest with the unjudged documents within the top k relevant and the others
  not; the lowest the other way round (a relevant document below k only adds to R).
* Rprec, AP (norm num_rel, min_rel_k), bpref: for a count s of relevant unjudged
  documents, exchanging a relevant one with an earlier non-relevant one never lowers the
  value (the relevant ranks improve one by one, R and N unchanged), so the highest value
  puts them first, the lowest last; for AP@k relevant ones below k only add to R (none for
  the highest, all for the lowest). Every s is tried: AP's sums by running totals, Rprec's by
  counts, bpref's term by term.
* nDCG, NCG: the value depends on the multiset of new labels (the ideal) and on where they
  sit (the run's gain); for a multiset the best places the higher labels first, the worst
  last (and the worst labels every unjudged document below k at L: it raises only the
  ideal). Writing t_l for the number of new labels >= l (t_1 >= t_2 >= ... >= t_L), both the
  gain and the ideal are sums over l of a term in t_l alone, so the extreme ratio is found
  by Dinkelbach's method (W. Dinkelbach, On nonlinear fractional programming, Management
  Science 13(7), 1967) with a dynamic programme over the chain t_1 >= ... >= t_L at each step
  -- exact, every query at once.

Covered: :data:`COVERED` (AP with norm num_rel or min_rel_k; DCG and nDCG without custom
gains). The measures are compared as the run ranks them under the tie rule (labels do not
move documents). The whole run must be in memory (as for the tie report).
"""

from __future__ import annotations

import numpy as np

from metrics_core.ranking.kernels import discount_of, gain_of, seg_accumulate
from metrics_core.ranking.measures import aggregate, compute, trec_order
from metrics_core.ranking.ranked_lists import RankedLists

#: families whose band over unjudged labellings is computed exactly
COVERED = ("P", "R", "Hits", "Success", "RR", "AP", "Rprec", "Bpref", "DCG", "nDCG", "NCG")
#: the most (candidate, document) pairs bpref's search holds at once: about 15 MB of
#: temporaries (at 1 << 22, 166 MB for a run of 100,000 lines and 559 MB for 1,000,000, past
#: what the app's gate reserves for it; the results are the same, a candidate's terms never
#: being split between chunks, and the search as fast or faster)
_CHUNK = 1 << 16


def covered(spec) -> bool:
    """Whether the unjudged band covers ``spec`` exactly."""
    if spec.family not in COVERED:
        return False
    if spec.family == "AP" and dict(spec.params).get("norm") == "rel_retrieved":
        return False
    return not (spec.family in ("DCG", "nDCG") and dict(spec.params).get("gains"))


def why_not(spec) -> str:
    """Why the unjudged band does not cover ``spec`` (one line)."""
    if spec.family == "AP":
        return "AP(norm=rel_retrieved): not covered"
    if spec.family in ("DCG", "nDCG"):
        return "custom gains (gains=...) are not covered"
    return "no exact extremes over labellings of unjudged documents are implemented for it"


class _Unjudged:
    """The unjudged retrieved rows of ranked lists (ascending), their query, rank, index
    within the query's unjudged rows, and per query their count."""

    def __init__(self, R: RankedLists, top: float):
        self.R = R
        self.rows = np.flatnonzero(~np.asarray(R.judged, dtype=bool))
        self.seg = R.seg[self.rows].astype(np.int64)
        self.pos = R.pos_of(self.rows).astype(np.int64)
        self.count = np.bincount(self.seg, minlength=R.n_queries)
        head = np.concatenate(([0], np.cumsum(self.count)))[:-1]
        self.index = np.arange(len(self.rows)) - head[self.seg]  # 0-based within its query
        self.head = head
        self.top = top  # the highest label any of them may take

    def within(self, k) -> np.ndarray:
        """Per row: ranked within the top k (all when k is None)."""
        return np.ones(len(self.rows), dtype=bool) if k is None else self.pos <= k

    def upto(self, q: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Unjudged rows of queries q ranked at or above m."""
        return _count_within(self.R, self.rows, q, m)


def _count_within(R: RankedLists, flag_rows: np.ndarray, q: np.ndarray, m) -> np.ndarray:
    """Flagged rows (ascending) of queries ``q`` ranked at or above ``m`` (per entry)."""
    first = R.starts[q]
    end = first + np.minimum(np.maximum(m, 0), R.counts[q])
    return np.searchsorted(flag_rows, end) - np.searchsorted(flag_rows, first)


def labelled(R: RankedLists, U: _Unjudged, labels: np.ndarray) -> RankedLists:
    """The ranked lists with the unjudged rows judged with ``labels`` (their qrels too)."""
    label = np.asarray(R.label, dtype=np.float64).copy()
    label[U.rows] = labels
    judged = np.asarray(R.judged, dtype=bool).copy()
    judged[U.rows] = True
    out = RankedLists(
        R.query_ids,
        R.starts,
        R.seg,
        label,
        judged,
        np.concatenate((R.qrels_seg, U.seg)).astype(np.int64),
        np.concatenate((np.asarray(R.qrels_label, dtype=np.float64), labels)),
        R.diagnostics,
        row_index=R.run_rows(),
        qrels=R.qrels,
    )
    out.run_docid = R.run_docid
    return out


def top_label(R: RankedLists, conv) -> float:
    """L: the highest label of the qrels (whole numbers; 0 when none is positive)."""
    labels = np.asarray(getattr(R.qrels, "relevance", R.qrels_label), dtype=np.float64)
    if not len(labels):
        return 0.0
    return float(max(np.floor(labels.max()), 0.0))


def bounds(R: RankedLists, spec, conv, U: _Unjudged | None = None):
    """(lowest, highest) per query of ``spec`` over every labelling of the unjudged
    retrieved documents with labels 0 .. L (arrays in ``R.query_ids`` order)."""
    U = U or _Unjudged(R, top_label(R, conv))
    lo, hi = _labellings(R, spec, conv, U)
    return compute(labelled(R, U, lo), spec, conv), compute(labelled(R, U, hi), spec, conv)


def _labellings(R, spec, conv, U):
    """The two labellings (lowest, highest) of the unjudged rows for ``spec``."""
    fam = spec.family
    n = len(U.rows)
    zero, top = np.zeros(n), np.full(n, U.top)
    if fam in ("DCG", "nDCG", "NCG"):
        if fam == "DCG":
            return zero, np.where(U.within(spec.cutoff), U.top, 0.0)
        return _graded(R, spec, conv, U)
    thr = float(spec.param("rel", conv))
    can_rel, can_non = U.top >= thr and U.top >= 0, thr > 0
    rel_label = U.top if can_rel else 0.0
    if not can_rel or not can_non:  # one labelling only
        same = np.full(n, rel_label if not can_non else 0.0)
        return same, same
    if fam in ("P", "Hits", "Success", "RR"):
        return zero, top
    inside = U.within(spec.cutoff)
    if fam == "R":
        return np.where(inside, 0.0, top), np.where(inside, top, 0.0)
    count = np.where(inside, 1, 0)
    s_lo, s_hi = _best_counts(R, spec, conv, U, thr)
    m = np.bincount(U.seg, weights=count, minlength=R.n_queries).astype(np.int64)  # in the cut
    # the highest: the first s_hi unjudged rows (within the cut) relevant, none below it
    hi = np.where(inside & (U.index < s_hi[U.seg]), rel_label, 0.0)
    # the lowest: the last s_lo within the cut relevant, and (AP@k) every one below the cut
    lo = np.where(inside & (U.index >= m[U.seg] - s_lo[U.seg]), rel_label, 0.0)
    if fam == "AP":
        lo = np.where(inside, lo, rel_label)
    return lo, hi


# --- Rprec, AP, bpref: the count of relevant unjudged documents -------------------------------


def _candidates(U: _Unjudged, m: np.ndarray):
    """Per query the counts s = 0 .. m[q]: (query of each candidate, s)."""
    span = m + 1
    q = np.repeat(np.arange(len(m)), span)
    s = np.arange(int(span.sum())) - np.repeat(np.cumsum(span) - span, span)
    return q, s


def _pick(q: np.ndarray, value: np.ndarray, n: int, highest: bool) -> np.ndarray:
    """Per query the index (within its candidates) of the best value (the first on ties)."""
    key = value if highest else -value
    order = np.lexsort((np.arange(len(q)), -key, q))
    first = np.r_[True, q[order][1:] != q[order][:-1]] if len(q) else np.zeros(0, dtype=bool)
    best = order[first]
    head = np.searchsorted(q, np.arange(n))
    out = np.zeros(n, dtype=np.int64)
    out[q[best]] = best - head[q[best]]
    return out


def _best_counts(R, spec, conv, U, thr):
    """(s for the lowest, s for the highest): how many unjudged documents within the cut
    are relevant in each extreme labelling."""
    fam, n = spec.family, R.n_queries
    inside = U.within(spec.cutoff)
    m = np.bincount(U.seg[inside], minlength=n).astype(np.int64)
    u_out = U.count - m
    rel_rows = R.relevant_rows(thr)
    r0 = R.num_rel(thr).astype(np.int64)
    q, s = _candidates(U, m)
    if fam == "Rprec":
        hi, lo = _rprec(R, U, rel_rows, r0, q, s, m)
    elif fam == "AP":
        hi, lo = _ap(R, U, spec, conv, rel_rows, r0, q, s, m, u_out, inside)
    else:
        hi, lo = _bpref(R, U, thr, rel_rows, r0, q, s, m)
    return _pick(q, lo, n, False), _pick(q, hi, n, True)


def _rprec(R, U, rel_rows, r0, q, s, m):
    big_r = r0[q] + s
    jrel = _count_within(R, rel_rows, q, big_r)
    ucount = U.upto(q, big_r)
    hi = np.where(big_r > 0, (jrel + np.minimum(s, ucount)) / np.maximum(big_r, 1), 0.0)
    lo = np.where(
        big_r > 0, (jrel + np.maximum(0, ucount - (m[q] - s))) / np.maximum(big_r, 1), 0.0
    )
    return hi, lo


def _ap(R, U, spec, conv, rel_rows, r0, q, s, m, u_out, inside):
    """AP's numerator for every count s by running totals over the unjudged rows within the
    cut: the new document's precision and 1/rank more for each relevant one below it."""
    k = spec.cutoff
    nq = R.n_queries
    rseg = R.seg[rel_rows].astype(np.int64)
    rpos = R.pos_of(rel_rows)
    cum = R.count_upto(rel_rows, rel_rows)
    keep = np.ones(len(rel_rows), dtype=bool) if k is None else rpos <= k
    t0 = np.bincount(rseg[keep], weights=(cum / rpos)[keep], minlength=nq)
    # H(p): sum of 1/rank over judged relevant rows within the cut ranked below p
    inv = np.where(keep, 1.0 / rpos, 0.0)
    suffix = np.concatenate((np.cumsum(inv[::-1])[::-1], [0.0]))
    rows, seg, pos = U.rows[inside], U.seg[inside], U.pos[inside]
    below = np.searchsorted(rel_rows, rows, side="right")
    end = np.searchsorted(rel_rows, R.starts[seg + 1])
    h = suffix[below] - suffix[end]
    jrel = R.count_upto(rel_rows, rows)
    j = np.arange(len(rows)) - np.repeat(np.cumsum(m) - m, m)  # 0-based within the cut
    # the highest: the first s relevant, the j-th adds (jrel + j + 1)/pos + h
    gain_first = (jrel + j + 1) / pos + h
    # the lowest: the last s relevant, added from the end: (jrel + 1)/pos + h + sum of 1/pos
    # of those added before (they lie below)
    rev = np.lexsort((-pos, seg))
    inv_pos_rev = 1.0 / pos[rev]
    seg_rev = seg[rev]
    run_rev = _seg_cumsum(seg_rev, inv_pos_rev) - inv_pos_rev
    gain_last = np.empty(len(rows))
    gain_last[rev] = ((jrel + 1) / pos + h)[rev] + run_rev
    hi_t = _prefix_by_count(seg, gain_first, m, q, s, order=None)
    lo_t = _prefix_by_count(seg, gain_last, m, q, s, order=rev)
    rule = spec.param("norm", conv)
    den_hi = (r0[q] + s).astype(np.float64)
    den_lo = (r0[q] + u_out[q] + s).astype(np.float64)
    if rule == "min_rel_k" and k is not None:
        den_hi, den_lo = np.minimum(den_hi, k), np.minimum(den_lo, k)
    hi = np.where(den_hi > 0, (t0[q] + hi_t) / np.maximum(den_hi, 1), 0.0)
    lo = np.where(den_lo > 0, (t0[q] + lo_t) / np.maximum(den_lo, 1), 0.0)
    return hi, lo


def _seg_cumsum(seg, values):
    out = np.cumsum(values)
    if not len(out):
        return out
    head = np.r_[True, seg[1:] != seg[:-1]]
    start = np.flatnonzero(head)
    offset = np.repeat(np.r_[0.0, out[start[1:] - 1]], np.diff(np.r_[start, len(seg)]))
    return out - offset


def _prefix_by_count(seg, gains, m, q, s, order):
    """For each candidate (q, s): the sum of the first s ``gains`` of query q (in ``order``
    within the query: rank order when None)."""
    g = gains if order is None else gains[order]
    sg = seg if order is None else seg[order]
    run = _seg_cumsum(sg, g)
    head = np.concatenate(([0], np.cumsum(m)))[:-1]
    at = head[q] + s - 1
    return np.where(s > 0, run[np.maximum(at, 0)] if len(run) else 0.0, 0.0)


def _bpref(R, U, thr, rel_rows, r0, q, s, m):
    """bpref of every candidate, term by term over its relevant documents (chunked)."""
    n0 = R.num_nonrel(thr).astype(np.int64)
    nonrel_rows = R.judged_nonrelevant_rows(thr)
    rseg = R.seg[rel_rows].astype(np.int64)
    jn = R.count_upto(nonrel_rows, rel_rows)  # judged non-relevant above
    ua = R.count_upto(U.rows, rel_rows)  # unjudged above
    ujn = R.count_upto(nonrel_rows, U.rows)  # judged non-relevant above each unjudged row
    u = U.count
    big_r = (r0[q] + s).astype(np.float64)
    big_n = (n0[q] + u[q] - s).astype(np.float64)
    den = np.minimum(big_n, big_r)
    total_hi = np.zeros(len(q))
    total_lo = np.zeros(len(q))
    # judged relevant rows x candidates of their query
    by_q = np.argsort(rseg, kind="stable")
    rstart = np.searchsorted(rseg[by_q], np.arange(R.n_queries))
    rcount = np.bincount(rseg, minlength=R.n_queries)
    for c_lo, c_hi in _chunks(rcount[q]):
        cq = q[c_lo:c_hi]
        per = rcount[cq]
        cand = np.repeat(np.arange(c_lo, c_hi), per)
        item = by_q[
            np.repeat(rstart[cq], per)
            + np.arange(int(per.sum()))
            - np.repeat(np.cumsum(per) - per, per)
        ]
        ss, uq = s[cand], u[q[cand]]
        n_hi = jn[item] + np.maximum(0, ua[item] - ss)
        n_lo = jn[item] + np.minimum(ua[item], uq - ss)
        total_hi[c_lo:c_hi] += np.bincount(
            cand - c_lo, weights=_term(n_hi, big_r[cand], den[cand]), minlength=c_hi - c_lo
        )
        total_lo[c_lo:c_hi] += np.bincount(
            cand - c_lo, weights=_term(n_lo, big_r[cand], den[cand]), minlength=c_hi - c_lo
        )
    # the new relevant documents: for the highest the first s (n = judged non-relevant above
    # it); for the lowest the last s (n = that + the u - s non-relevant unjudged above)
    for c_lo, c_hi in _chunks(s):
        cs = s[c_lo:c_hi]
        cand = np.repeat(np.arange(c_lo, c_hi), cs)
        j = np.arange(int(cs.sum())) - np.repeat(np.cumsum(cs) - cs, cs)
        cq = q[cand]
        first = U.head[cq] + j
        last = U.head[cq] + u[cq] - 1 - j
        n_hi = ujn[first]
        n_lo = ujn[last] + (u[cq] - s[cand])
        total_hi[c_lo:c_hi] += np.bincount(
            cand - c_lo, weights=_term(n_hi, big_r[cand], den[cand]), minlength=c_hi - c_lo
        )
        total_lo[c_lo:c_hi] += np.bincount(
            cand - c_lo, weights=_term(n_lo, big_r[cand], den[cand]), minlength=c_hi - c_lo
        )
    hi = np.where(big_r > 0, total_hi / np.maximum(big_r, 1), 0.0)
    lo = np.where(big_r > 0, total_lo / np.maximum(big_r, 1), 0.0)
    return hi, lo


def _term(n, big_r, den):
    """bpref's term of a relevant document with n judged non-relevant documents above."""
    frac = np.where(den > 0, np.minimum(n, big_r) / np.where(den > 0, den, 1.0), 0.0)
    return np.where(n > 0, 1.0 - frac, 1.0)


def _chunks(sizes: np.ndarray):
    """Consecutive ranges of candidates whose ``sizes`` add up to about :data:`_CHUNK`."""
    total = np.cumsum(sizes)
    lo = 0
    while lo < len(sizes):
        base = total[lo - 1] if lo else 0
        hi = int(np.searchsorted(total, base + _CHUNK, side="right"))
        hi = max(hi, lo + 1)
        yield lo, hi
        lo = hi


# --- nDCG, NCG: the labels of the unjudged documents, by Dinkelbach's method ----------------


class NotCovered(Exception):
    """The band cannot be computed exactly for these data (the reason in words)."""


def _graded(R, spec, conv, U):
    """(lowest, highest) labellings for nDCG and NCG (see the module docstring)."""
    levels = int(U.top)
    n_rows = len(U.rows)
    if levels < 1 or not n_rows:
        return np.zeros(n_rows), np.zeros(n_rows)
    labels = np.asarray(R.qrels_label, dtype=np.float64)
    if np.any(labels != np.floor(labels)):
        raise NotCovered("fractional labels (labels=keep): the band takes whole labels")
    k = spec.cutoff
    ncg = spec.family == "NCG"
    kind = "linear" if ncg else spec.param("discount", conv)
    gains = gain_of(np.arange(levels + 1, dtype=np.float64), spec.param("gain", conv))
    w = np.diff(gains)  # w[l - 1]: what reaching label l adds
    nq = R.n_queries
    inside = U.within(k)
    m = np.bincount(U.seg[inside], minlength=nq).astype(np.int64)
    u_out = U.count - m
    ideal_retrieved = (not ncg) and spec.param("ideal", conv) == "retrieved"
    jr = R.judged_rows
    jlab = np.asarray(R.label[jr], dtype=np.float64)
    jseg = R.seg[jr].astype(np.int64)
    jpos = R.pos_of(jr)
    jin = np.ones(len(jr), dtype=bool) if k is None else jpos <= k
    jdisc = np.ones(len(jr)) if ncg else discount_of(jpos, kind)
    pool_seg, pool_lab = (jseg, jlab) if ideal_retrieved else (R.qrels_seg, labels)
    a = np.stack(
        [np.bincount(pool_seg[pool_lab >= lv], minlength=nq) for lv in range(1, levels + 1)]
    )
    d0 = np.stack(
        [
            np.bincount(jseg[jin & (jlab >= lv)], weights=jdisc[jin & (jlab >= lv)], minlength=nq)
            for lv in range(1, levels + 1)
        ]
    )
    most = int((a[0] + U.count).max(initial=0)) + 1
    ranks = np.arange(1, most + 1)
    step = np.ones(most) if ncg else discount_of(ranks, kind)
    if k is not None:
        step = np.where(ranks <= k, step, 0.0)
    dcum = np.concatenate(([0.0], np.cumsum(step)))  # dcum[x]: the ideal's first x ranks
    q, t = _candidates(U, m)
    e = np.ones(int(inside.sum())) if ncg else discount_of(U.pos[inside], kind)
    seg_in = U.seg[inside]
    first = _prefix_by_count(seg_in, e, m, q, t, order=None)
    rev = np.lexsort((-U.pos[inside], seg_in))
    last = _prefix_by_count(seg_in, e, m, q, t, order=rev)
    head = np.concatenate(([0], np.cumsum(m + 1)))[:-1]
    hi_t = _dinkelbach(q, t, head, m, w, d0, dcum[a[:, q] + t], first, True)
    lo_t = _dinkelbach(q, t, head, m, w, d0, dcum[a[:, q] + u_out[q] + t], last, False)
    # the rows within the cut are each query's first m unjudged rows: U.index counts them;
    # the highest gives the j-th the number of levels l with t_l > j, the lowest from the end
    j = U.index
    hi = np.where(inside, (hi_t[:, U.seg] > j).sum(axis=0).astype(np.float64), 0.0)
    from_end = m[U.seg] - 1 - j
    lo = np.where(inside, (lo_t[:, U.seg] > from_end).sum(axis=0).astype(np.float64), levels)
    return lo, hi


def _dinkelbach(q, t, head, m, w, d0, ideal, run, highest: bool, rounds: int = 200):
    """The counts t_1 >= ... >= t_L (per query, shape (L, queries)) of the extreme ratio
    sum_l w_l (d0_l + run(t_l)) / sum_l w_l ideal_l(t_l); ``ideal`` has shape (L, candidates),
    ``run`` one value per candidate (q, t)."""
    levels, nq = len(w), len(m)
    num = d0[:, q] + run[None, :]  # (L, candidates)
    best = np.zeros((levels, nq), dtype=np.int64)  # start: no new label
    ratio = _ratio(best, head, w, num, ideal)
    active = np.ones(nq, dtype=bool)
    for _ in range(rounds):
        lam = ratio[q]
        phi = w[:, None] * (num - lam * ideal if highest else lam * ideal - num)
        cand = _chain_argmax(phi, q, t, head, m)
        new = _ratio(cand, head, w, num, ideal)
        better = (new > ratio * (1 + 1e-12) + 1e-300) if highest else (new < ratio * (1 - 1e-12))
        better &= active
        if not better.any():
            break
        best[:, better] = cand[:, better]
        ratio = np.where(better, new, ratio)
        active = better
    return best


def _ratio(counts, head, w, num, ideal):
    at = head[None, :] + counts
    top = (w[:, None] * np.take_along_axis(num, at, axis=1)).sum(axis=0)
    bottom = (w[:, None] * np.take_along_axis(ideal, at, axis=1)).sum(axis=0)
    return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), 0.0)


def _chain_argmax(phi, q, t, head, m):
    """argmax over t_1 >= t_2 >= ... >= t_L of sum_l phi[l, t_l], per query: a dynamic
    programme over the levels (suffix maxima within each query's candidates)."""
    levels = phi.shape[0]
    value = [phi[0]]
    for level in range(1, levels):
        value.append(phi[level] + _suffix_max(value[-1], q))
    nq = len(m)
    out = np.zeros((levels, nq), dtype=np.int64)
    floor = np.zeros(nq, dtype=np.int64)  # t_l >= t_{l+1}: chosen from the last level up
    for level in range(levels - 1, -1, -1):
        v = np.where(t >= floor[q], value[level], -np.inf)
        out[level] = _segment_argmax(v, q, nq)
        floor = out[level]
    return out


def _suffix_max(v, q):
    """Per candidate, the largest value of its query's candidates with t at least its own."""
    return seg_accumulate(q[::-1], v[::-1], np.maximum, -np.inf)[::-1]


def _segment_argmax(v, q, nq):
    """Per query, the t (index within its candidates) of the largest value (the first)."""
    order = np.lexsort((np.arange(len(v)), -v, q))
    first = np.r_[True, q[order][1:] != q[order][:-1]] if len(q) else np.zeros(0, dtype=bool)
    win = order[first]
    head = np.searchsorted(q, np.arange(nq))
    out = np.zeros(nq, dtype=np.int64)
    out[q[win]] = win - head[q[win]]
    return out


def unjudged_report(R: RankedLists, specs, conv, values: dict | None = None) -> dict:
    """Per query and covered measure the value as evaluated and its lowest and highest over
    every labelling of the unjudged retrieved documents; the band of the aggregate (each
    query's extreme taken alone: the labellings of different queries are independent); the
    queries whose value depends on the labels; the measures covered and those not.

    ``values``: {measure name: per-query values as evaluated} when already computed.
    """
    U = _Unjudged(R, top_label(R, conv))
    qids = R.query_ids
    order = trec_order(R)
    per_query: dict[str, dict] = {q: {} for q in qids}
    agg, dependent, not_covered, done = {}, {}, {}, []
    for spec in specs:
        if not covered(spec):
            not_covered[spec.name] = why_not(spec)
            continue
        try:
            lo, hi = bounds(R, spec, conv, U)
        except NotCovered as exc:
            not_covered[spec.name] = str(exc)
            continue
        chosen = values[spec.name] if values and spec.name in values else compute(R, spec, conv)
        for i, q in enumerate(qids):
            per_query[q][spec.name] = {
                "value": float(chosen[i]),
                "min": float(lo[i]),
                "max": float(hi[i]),
            }
        agg[spec.name] = {
            "min": aggregate(lo, spec, order),
            "max": aggregate(hi, spec, order),
        }
        dependent[spec.name] = [q for i, q in enumerate(qids) if lo[i] != hi[i]]
        done.append(spec.name)
    return {
        "per_query": {q: per_query[q] for q in sorted(per_query)},
        "aggregate": agg,
        "unjudged_dependent": dependent,
        "covered": done,
        "not_covered": not_covered,
        "unjudged_documents": int(len(U.rows)),
        "queries_with_unjudged": int(np.count_nonzero(U.count)),
        "top_label": U.top,
    }


def unjudged_bounds(R: RankedLists, specs, conv) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per covered measure, the (lowest, highest) arrays of :func:`unjudged_report` (what the
    leaderboard's band needs); measures not covered are absent."""
    U = _Unjudged(R, top_label(R, conv))
    out = {}
    for spec in specs:
        if covered(spec):
            try:
                out[spec.name] = bounds(R, spec, conv, U)
            except NotCovered:
                continue
    return out
