"""How much of a score is an artifact of tie-breaking: the tie report.

Documents with equal scores (a tie group) may be ranked in any order; the tie rule
(trec_eval's: document id descending) picks one. For every query and measure the report
gives, besides the value under the chosen rule, the minimum, the maximum and the expected
value over all orders of the tied documents (each order equally likely), computed exactly:

* minimum and maximum: the value with each tie group ordered worst first (lowest labels
  first) and best first (highest labels first). Exchanging two adjacent documents so the
  higher label comes first never lowers any measure covered here (their discount or
  cut-off weight does not increase with the rank), so these two orders are the extremes.
* expected value, in closed form (T. McSherry, M. Najork, Computing information retrieval
  performance measures efficiently in the presence of tied scores, ECIR 2008):
  - sums over ranks (P@k, R@k, Hits@k, Rprec, DCG@k, nDCG@k): each document of a group of
    size n sits at each of the group's ranks with probability 1/n, so by linearity
    ``E = sum over groups (sum of the group's weights) * mean over its ranks of w(rank)``;
  - AP: at rank p of a group with m relevant documents of n, and r relevant ranked above
    the group, a relevant document is there with probability m/n and then has
    ``r + 1 + (j - 1)(m - 1)/(n - 1)`` relevant at or above it on average (j its place in
    the group; hypergeometric), so ``E[AP] = (1/R) sum_p (m/n) E[C_p] / p``;
  - RR and Success@k: the first relevant document lies in the first group holding one;
    its place j in that group follows ``P(j) = C(n - j, m - 1) / C(n, m)``.

Covered: P, R, Hits, Success, RR, AP (normalisers num_rel and min_rel_k), Rprec, DCG and
nDCG (any gain, discount and ideal). Other measures (F1, Bpref, infAP, ERR, the set and
trec_eval-experimental measures ...) are listed as not covered: their expected value is
not a sum over ranks, and no closed form is implemented for them.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from metrics_core.ranking.engine import RankedLists
from metrics_core.ranking.measures import _discount, _gain, _ideal_dcg, _safe_div, compute

#: families whose minimum, maximum and expected value over tie orders are computed exactly
COVERED = ("P", "R", "Hits", "Success", "RR", "AP", "Rprec", "DCG", "nDCG")


def covered(spec) -> bool:
    """Whether the tie report computes ``spec`` exactly."""
    if spec.family not in COVERED:
        return False
    if spec.family == "AP" and spec.params and dict(spec.params).get("norm") == "rel_retrieved":
        return False
    if spec.family in ("DCG", "nDCG") and dict(spec.params).get("gains"):
        return False
    return True


def why_not(spec) -> str:
    if spec.family == "AP":
        return "AP(norm=rel_retrieved) divides by a count that depends on the tie order"
    if spec.family in ("DCG", "nDCG"):
        return "custom gains (gains=...) are not covered"
    return "no exact closed form for its expected value over tie orders is implemented"


class TieGroups:
    """Tie groups of ranked lists: consecutive rows of one query with equal scores.

    Attributes
    ----------
    gid : int64 array, one per ranked row
        Group of each row (groups numbered in rank order).
    head : int64 array, one per group
        First row of each group.
    size : int64 array, one per group
    """

    def __init__(self, R: RankedLists, scores: np.ndarray):
        n = len(R.seg)
        if n:
            s = np.asarray(scores, dtype=np.float64) + 0.0
            boundary = np.r_[True, (R.seg[1:] != R.seg[:-1]) | (s[1:] != s[:-1])]
        else:
            boundary = np.zeros(0, dtype=bool)
        self.gid = np.cumsum(boundary) - 1
        self.head = np.flatnonzero(boundary)
        self.size = np.diff(np.r_[self.head, n]).astype(np.int64)
        self.seg = R.seg[self.head].astype(np.int64) if n else np.zeros(0, dtype=np.int64)
        self.start = (R.pos_of(self.head) if n else np.zeros(0, dtype=np.int64)).astype(np.int64)


def ranked_scores(R: RankedLists, run, conv) -> np.ndarray:
    """The score of each ranked row, as the ranking compared them (float32 under
    ``compat=trec_eval9``)."""
    scores = np.asarray(run.scores, dtype=np.float64)[R.run_rows()]
    if getattr(conv, "compat", "trec_eval10") == "trec_eval9":
        scores = scores.astype(np.float32).astype(np.float64)
    return scores


def reordered(R: RankedLists, groups: TieGroups, best: bool) -> RankedLists:
    """The ranked lists with every tie group sorted best first (labels descending) or
    worst first (labels ascending)."""
    lab = R.label.astype(np.float64)
    key = -lab if best else lab
    perm = np.lexsort((key, groups.gid))
    return RankedLists(R.query_ids, R.starts, R.seg, R.label[perm], R.judged[perm], R.qrels_seg,
                       R.qrels_label, R.diagnostics, row_index=R.run_rows()[perm], qrels_row=R.qrels_row)


def _relevant_flags(R: RankedLists, thr: float) -> np.ndarray:
    flags = np.zeros(len(R.seg), dtype=bool)
    flags[R.relevant_rows(thr)] = True
    return flags


def _linear_expectation(R: RankedLists, g: TieGroups, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """E[sum over rows of x(document) * w(rank)] per query, documents of a group placed
    uniformly over its ranks: sum over groups of (sum of x) * (mean of w over the ranks)."""
    if not len(R.seg):
        return np.zeros(R.n_queries)
    sum_x = np.bincount(g.gid, weights=x, minlength=len(g.head))
    mean_w = np.bincount(g.gid, weights=w, minlength=len(g.head)) / g.size
    return np.bincount(g.seg, weights=sum_x * mean_w, minlength=R.n_queries)


def _first_relevant_group(R, g, rel):
    """Per query: the first group holding a relevant document (-1 when none), and the
    number of relevant documents in each group."""
    m = np.bincount(g.gid, weights=rel.astype(np.float64), minlength=len(g.head)).astype(np.int64)
    first = np.full(R.n_queries, -1, dtype=np.int64)
    has = np.flatnonzero(m > 0)
    if len(has):
        qs = g.seg[has]
        keep = np.r_[True, qs[1:] != qs[:-1]]
        first[qs[keep]] = has[keep]
    return first, m


def _log_comb(n, k):
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def expected(R: RankedLists, g: TieGroups, spec, conv) -> np.ndarray:
    """Expected value over all orders of the tied documents, per query (closed forms)."""
    fam = spec.family
    nq = R.n_queries
    pos = (R.pos_of(np.arange(len(R.seg))) if len(R.seg) else np.zeros(0, dtype=np.int64)).astype(np.float64)
    k = spec.cutoff
    within = np.ones(len(pos), dtype=bool) if k is None else pos <= k
    if fam in ("DCG", "nDCG"):
        lab = R.label.astype(np.float64)
        x = np.where(R.judged & (lab > 0), _gain(lab, spec.param("gain", conv)), 0.0)
        w = np.where(within, _discount(pos, spec.param("discount", conv)), 0.0)
        dcg = _linear_expectation(R, g, x, w)
        return dcg if fam == "DCG" else _safe_div(dcg, _ideal_dcg(R, spec, conv))
    thr = float(spec.param("rel", conv))
    rel = _relevant_flags(R, thr)
    num_rel = R.num_rel(thr).astype(np.float64)
    if fam in ("P", "R", "Hits", "Rprec"):
        if fam == "Rprec":
            within = pos <= num_rel[R.seg]
        hits = _linear_expectation(R, g, rel.astype(np.float64), within.astype(np.float64))
        if fam == "Hits":
            return hits
        if fam in ("R",):
            return _safe_div(hits, num_rel)
        if fam == "Rprec":
            return _safe_div(hits, num_rel)
        if k is None:
            return _safe_div(hits, R.counts)
        if spec.param("denom", conv) == "retrieved":
            return _safe_div(hits, np.minimum(R.counts, k))
        return hits / float(k)
    if fam == "AP":
        if not len(R.seg):
            return np.zeros(nq)
        m = np.bincount(g.gid, weights=rel.astype(np.float64), minlength=len(g.head))
        c0 = np.r_[0, np.cumsum(rel)]
        r_before = (c0[g.head] - c0[R.starts[g.seg]]).astype(np.float64)
        n = g.size.astype(np.float64)
        gid = g.gid
        j = pos - g.start[gid] + 1
        share = np.where(n[gid] > 1, (j - 1) * (m[gid] - 1) / np.maximum(n[gid] - 1, 1), 0.0)
        slot = (m[gid] / n[gid]) * (r_before[gid] + 1 + share) / pos
        total = np.bincount(R.seg, weights=np.where(within, slot, 0.0), minlength=nq)
        if spec.param("norm", conv) == "min_rel_k" and k is not None:
            return _safe_div(total, np.minimum(num_rel, k))
        return _safe_div(total, num_rel)
    if fam in ("RR", "Success"):
        first, m = _first_relevant_group(R, g, rel)
        out = np.zeros(nq)
        q = np.flatnonzero(first >= 0)
        grp = first[q]
        n, mm, s = g.size[grp], m[grp], g.start[grp]
        if fam == "Success":
            if k is None:
                out[q] = 1.0
                return out
            t = np.clip(k - s + 1, 0, n)  # slots of the group within the top k
            none = np.where(t <= n - mm, np.exp(_log_comb(n - mm, t) - _log_comb(n, t)), 0.0)
            out[q] = np.where(t > 0, 1.0 - none, 0.0)
            return out
        # RR: the first relevant at place j of its group, P(j) = C(n-j, m-1) / C(n, m)
        span = n - mm + 1
        owner = np.repeat(np.arange(len(q)), span)
        jj = np.arange(int(span.sum())) - np.repeat(np.cumsum(span) - span, span) + 1
        prob = np.exp(_log_comb(n[owner] - jj, mm[owner] - 1) - _log_comb(n[owner], mm[owner]))
        rank = s[owner] + jj - 1
        ok = np.ones(len(rank), dtype=bool) if k is None else rank <= k
        out[q] = np.bincount(owner, weights=np.where(ok, prob / rank, 0.0), minlength=len(q))
        if k is not None and spec.param("miss", conv) == "k_plus_1":
            beyond = np.bincount(owner, weights=np.where(ok, 0.0, prob), minlength=len(q))
            out[q] += beyond / (k + 1)
            out[first < 0] = 1.0 / (k + 1)
        return out
    raise ValueError(f"the tie report does not cover {spec.name}")


def tie_report(R: RankedLists, specs, conv, run, values: dict | None = None) -> dict:
    """Per query and measure: value under the tie rule, minimum, maximum and expected value
    over all orders of the tied documents; aggregate band (mean of minima, of maxima,
    expected mean); the tie-dependent queries of each measure; measures not covered.

    ``values``: {measure name: per-query values under the tie rule} when already computed.
    """
    groups = TieGroups(R, ranked_scores(R, run, conv))
    best, worst = reordered(R, groups, True), reordered(R, groups, False)
    qids = R.query_ids
    per_query = {q: {} for q in qids}
    aggregate, dependent, not_covered = {}, {}, {}
    for spec in specs:
        if not covered(spec):
            not_covered[spec.name] = why_not(spec)
            continue
        lo = compute(worst, spec, conv)
        hi = compute(best, spec, conv)
        ex = expected(R, groups, spec, conv)
        chosen = values[spec.name] if values and spec.name in values else compute(R, spec, conv)
        for i, q in enumerate(qids):
            per_query[q][spec.name] = {"value": float(chosen[i]), "min": float(lo[i]),
                                       "max": float(hi[i]), "expected": float(ex[i])}
        n = len(qids)
        aggregate[spec.name] = {"min": float(np.mean(lo)) if n else float("nan"),
                                "max": float(np.mean(hi)) if n else float("nan"),
                                "expected": float(np.mean(ex)) if n else float("nan")}
        dependent[spec.name] = [q for i, q in enumerate(qids) if lo[i] != hi[i]]
    return {"per_query": {q: per_query[q] for q in sorted(per_query)}, "aggregate": aggregate,
            "tie_dependent": dependent, "not_covered": not_covered,
            "tie_groups": int(np.count_nonzero(groups.size > 1))}
