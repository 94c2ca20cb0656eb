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
    its place j in that group follows ``P(j) = C(n - j, m - 1) / C(n, m)``;
  - bpref: a relevant document has the judged non-relevant documents of the groups above
    plus X of the a in its own group above it, X uniform on 0..a, so the expectation of
    its term ``1 - min(n_r, R) / min(N, R)`` is a finite sum in closed form.

Covered: P, R, Hits, Success, RR, AP (normalizers num_rel and min_rel_k), Rprec, Bpref,
DCG and nDCG (any gain, discount and ideal). Other measures (F1, infAP, ERR, the set and
trec_eval-experimental measures ...) are listed as not covered: their expected value is
not a sum over ranks, and no closed form is implemented for them.
"""

from __future__ import annotations

import numpy as np

from metrics_core.ranking.kernels import discount_of, gain_of, ideal_dcg, safe_div
from metrics_core.ranking.measures import compute
from metrics_core.ranking.ranked_lists import RankedLists

#: families whose minimum, maximum and expected value over tie orders are computed exactly
COVERED = ("P", "R", "Hits", "Success", "RR", "AP", "Rprec", "Bpref", "DCG", "nDCG")


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
    """Why the tie report does not cover ``spec`` (one line)."""
    if spec.family == "AP":
        return "AP(norm=rel_retrieved) divides by a count that depends on the tie order"
    if spec.family in ("DCG", "nDCG"):
        return "custom gains (gains=...) are not covered"
    return "no exact closed form for its expected value over tie orders is implemented"


class TieGroups:
    """Tie groups of ranked lists: maximal runs of consecutive rows of one query with equal
    scores (a row without an equal neighbour is a group of one).

    Attributes
    ----------
    head, size, start, seg : int64 arrays, one per group
        First row, number of rows, rank of the first row, query.
    """

    def __init__(self, R: RankedLists, scores: np.ndarray):
        n = len(R.seg)
        if n:
            s = np.asarray(scores, dtype=np.float64) + 0.0
            boundary = np.r_[True, (R.seg[1:] != R.seg[:-1]) | (s[1:] != s[:-1])]
            self.head = np.flatnonzero(boundary)
        else:
            self.head = np.zeros(0, dtype=np.int64)
        self.size = np.diff(np.r_[self.head, n]).astype(np.int64)
        self.seg = R.seg[self.head].astype(np.int64)
        self.start = R.pos_of(self.head).astype(np.int64)

    def of(self, rows: np.ndarray) -> np.ndarray:
        """Group of each of ``rows``."""
        return np.searchsorted(self.head, rows, side="right") - 1

    def tied_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows of the groups of two or more, their group), in rank order."""
        big = np.flatnonzero(self.size > 1)
        sizes = self.size[big]
        offset = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        return np.repeat(self.head[big], sizes) + offset, np.repeat(big, sizes)


def ranked_scores(R: RankedLists, run, conv) -> np.ndarray:
    """The score of each ranked row, as the ranking compared them (float32 under
    ``compat=trec_eval9``)."""
    scores = np.asarray(run.scores, dtype=np.float64)[R.run_rows()]
    if conv.compat == "trec_eval9":
        scores = scores.astype(np.float32).astype(np.float64)
    return scores


def reordered(R: RankedLists, groups: TieGroups, best: bool) -> RankedLists:
    """The ranked lists with every tie group sorted best first (labels descending) or
    worst first (labels ascending); only the tied rows move."""
    perm = np.arange(len(R.seg))
    tied, gid = groups.tied_rows()
    if len(tied):
        lab = R.label[tied].astype(np.float64)
        perm[tied] = tied[np.lexsort((-lab if best else lab, gid))]
    out = RankedLists(
        R.query_ids,
        R.starts,
        R.seg,
        R.label[perm],
        R.judged[perm],
        R.qrels_seg,
        R.qrels_label,
        R.diagnostics,
        row_index=R.run_rows()[perm],
        qrels_row=R.qrels_row,
        qrels=R.qrels,
    )
    out.run_docid = R.run_docid
    return out


def _slots_within(g: TieGroups, grp: np.ndarray, limit: np.ndarray | float) -> np.ndarray:
    """Ranks of each group ``grp`` at or above ``limit`` (0 .. size)."""
    return np.clip(limit - g.start[grp] + 1, 0, g.size[grp]).astype(np.int64)


def _prefix(values: np.ndarray) -> np.ndarray:
    """[0, v1, v1 + v2, ...]: sums of ``values`` over ranks 1..p at index p."""
    return np.r_[0.0, np.cumsum(values)]


def _log_comb(n, k):
    from scipy.special import gammaln  # here: only the expected values need it

    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _limit(R: RankedLists, k, seg):
    return np.full(len(seg), np.inf) if k is None else np.full(len(seg), float(k))


def expected(R: RankedLists, g: TieGroups, spec, conv) -> np.ndarray:
    """Expected value over all orders of the tied documents, per query (closed forms over
    the documents that carry weight and their groups; no pass over the whole ranking)."""
    fam = spec.family
    if fam in ("DCG", "nDCG"):
        return _expected_dcg(R, g, spec, conv)
    if fam not in ("P", "R", "Hits", "Rprec", "Bpref", "AP", "RR", "Success"):
        raise ValueError(f"the tie report does not cover {spec.name}")
    thr = float(spec.param("rel", conv))
    rel = _Relevant(R, g, thr)
    if fam in ("P", "R", "Hits", "Rprec"):
        return _expected_counts(R, g, spec, conv, rel)
    if fam == "Bpref":
        return _expected_bpref(R, g, thr, rel)
    if fam == "AP":
        return _expected_ap(R, g, spec, conv, rel)
    return _expected_first(R, g, spec, conv, rel)


class _Relevant:
    """The relevant rows of the ranking, their queries and tie groups, and per query R."""

    def __init__(self, R: RankedLists, g: TieGroups, thr: float):
        self.rows = R.relevant_rows(thr)
        self.seg = R.seg[self.rows]
        self.grp = g.of(self.rows)
        self.num_rel = R.num_rel(thr).astype(np.float64)

    def groups(self, g: TieGroups):
        """The groups holding a relevant document: ids, relevant count m, query, first
        slot and size."""
        groups, m = np.unique(self.grp, return_counts=True)
        return (
            groups,
            m.astype(np.float64),
            g.seg[groups],
            g.start[groups],
            g.size[groups].astype(np.float64),
        )


def _ranks(R: RankedLists) -> np.ndarray:
    longest = int(R.counts.max()) if R.n_queries and len(R.seg) else 0
    return np.arange(1, longest + 1, dtype=np.float64)


def _expected_dcg(R, g, spec, conv):
    """DCG/nDCG: each gain times the mean discount of the slots its group spans."""
    jr = R.judged_rows
    rows = jr[R.label[jr] > 0]
    grp = g.of(rows)
    gain = gain_of(R.label[rows].astype(np.float64), spec.param("gain", conv))
    disc = _prefix(discount_of(_ranks(R), spec.param("discount", conv)))
    s = g.start[grp]
    inside = _slots_within(g, grp, _limit(R, spec.cutoff, rows))
    mean = (disc[s - 1 + inside] - disc[s - 1]) / g.size[grp]
    dcg = np.bincount(R.seg[rows], weights=gain * mean, minlength=R.n_queries)
    return dcg if spec.family == "DCG" else safe_div(dcg, ideal_dcg(R, spec, conv))


def _expected_counts(R, g, spec, conv, rel):
    """P, R, Hits, Rprec: the expected relevant documents within the cut."""
    fam, k, nq = spec.family, spec.cutoff, R.n_queries
    limit = rel.num_rel[rel.seg] if fam == "Rprec" else _limit(R, k, rel.rows)
    hits = np.bincount(
        rel.seg, weights=_slots_within(g, rel.grp, limit) / g.size[rel.grp], minlength=nq
    )
    if fam == "Hits":
        return hits
    if fam in ("R", "Rprec"):
        return safe_div(hits, rel.num_rel)
    if k is None:
        return safe_div(hits, R.counts)
    if spec.param("denom", conv) == "retrieved":
        return safe_div(hits, np.minimum(R.counts, k))
    return hits / float(k)


def _expected_bpref(R, g, thr, rel):
    """bpref: a relevant document's judged non-relevant documents above it are those of
    the groups above (b) plus X of the a in its own group, X uniform on 0..a (its place
    among them); the sum over x of min(b + x, R) in closed form."""
    seg, grp, num_rel = rel.seg, rel.grp, rel.num_rel
    nonrel = R.judged_nonrelevant_rows(thr)
    b = (np.searchsorted(nonrel, g.head[grp]) - np.searchsorted(nonrel, R.starts[seg])).astype(
        np.float64
    )
    a = np.bincount(g.of(nonrel), minlength=len(g.head))[grp].astype(np.float64)
    big_r = num_rel[seg]
    den = np.minimum(R.num_nonrel(thr), R.num_rel(thr)).astype(np.float64)[seg]
    c = np.clip(big_r - b + 1, 0, a + 1)
    capped = c * b + c * (c - 1) / 2 + (a + 1 - c) * big_r
    term = 1.0 - safe_div(capped / (a + 1), den)
    return safe_div(np.bincount(seg, weights=term, minlength=R.n_queries), num_rel)


def _expected_ap(R, g, spec, conv, rel):
    """AP: per group holding m relevant of n documents, the expected precision sum over
    the slots within the cut (relevant documents above the group counted once)."""
    k = spec.cutoff
    groups, m, gseg, s, n = rel.groups(g)
    before = (
        np.searchsorted(rel.rows, g.head[groups]) - np.searchsorted(rel.rows, R.starts[gseg])
    ).astype(np.float64)
    inside = _slots_within(g, groups, _limit(R, k, groups)).astype(np.float64)
    harmonic = _prefix(1.0 / _ranks(R))
    e = (s - 1 + inside).astype(np.int64)
    h = harmonic[e] - harmonic[s - 1]  # sum of 1/p over the slots within the cut
    lin = inside - s * h  # sum of (j - 1)/p over those slots
    share = np.where(n > 1, (m - 1) / np.maximum(n - 1, 1), 0.0)
    total = np.bincount(
        gseg, weights=(m / n) * ((before + 1) * h + share * lin), minlength=R.n_queries
    )
    if spec.param("norm", conv) == "min_rel_k" and k is not None:
        return safe_div(total, np.minimum(rel.num_rel, k))
    return safe_div(total, rel.num_rel)


def _expected_first(R, g, spec, conv, rel):
    """RR and Success: over the first group of each query holding a relevant document,
    the first relevant at place j of the group with P(j) = C(n-j, m-1) / C(n, m)."""
    k, nq = spec.cutoff, R.n_queries
    _, m, gseg, s, n = rel.groups(g)
    firsts = np.r_[True, gseg[1:] != gseg[:-1]] if len(gseg) else np.zeros(0, dtype=bool)
    q, n1, m1, s1 = gseg[firsts], n[firsts], m[firsts], s[firsts]
    out = np.zeros(nq)
    if spec.family == "Success":
        if k is None:
            out[q] = 1.0
            return out
        t = np.clip(k - s1 + 1, 0, n1)  # slots of the group within the top k
        none = np.where(t <= n1 - m1, np.exp(_log_comb(n1 - m1, t) - _log_comb(n1, t)), 0.0)
        out[q] = np.where(t > 0, 1.0 - none, 0.0)
        return out
    span = (n1 - m1 + 1).astype(np.int64)
    owner = np.repeat(np.arange(len(q)), span)
    jj = np.arange(int(span.sum())) - np.repeat(np.cumsum(span) - span, span) + 1
    prob = np.exp(_log_comb(n1[owner] - jj, m1[owner] - 1) - _log_comb(n1[owner], m1[owner]))
    rank = s1[owner] + jj - 1
    ok = np.ones(len(rank), dtype=bool) if k is None else rank <= k
    out[q] = np.bincount(owner, weights=np.where(ok, prob / rank, 0.0), minlength=len(q))
    if k is not None and spec.param("miss", conv) == "k_plus_1":
        beyond = np.bincount(owner, weights=np.where(ok, 0.0, prob), minlength=len(q))
        out[q] += beyond / (k + 1)
        none = np.ones(nq, dtype=bool)
        none[q] = False
        out[none] = 1.0 / (k + 1)
    return out


def tie_bounds(R: RankedLists, specs, conv, run) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per covered measure, the minimum and the maximum of each query's value over every order
    of its tied documents (arrays in ``R.query_ids`` order): the extremes of
    :func:`tie_report`, as arrays, without its expected values and per-query dicts (what the
    leaderboard's tie band needs). Measures not covered are absent."""
    groups = TieGroups(R, ranked_scores(R, run, conv))
    best, worst = reordered(R, groups, True), reordered(R, groups, False)
    return {
        spec.name: (compute(worst, spec, conv), compute(best, spec, conv))
        for spec in specs
        if covered(spec)
    }


def tie_report(R: RankedLists, specs, conv, run, values: dict | None = None) -> dict:
    """Per query and measure: value under the tie rule, minimum, maximum and expected value
    over all orders of the tied documents; aggregate band (mean of minima, of maxima,
    expected mean); the tie-dependent queries of each measure; measures not covered.

    ``values``: {measure name: per-query values under the tie rule} when already computed.
    """
    groups = TieGroups(R, ranked_scores(R, run, conv))
    best, worst = reordered(R, groups, True), reordered(R, groups, False)
    qids = R.query_ids
    per_query: dict[str, dict] = {q: {} for q in qids}
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
            per_query[q][spec.name] = {
                "value": float(chosen[i]),
                "min": float(lo[i]),
                "max": float(hi[i]),
                "expected": float(ex[i]),
            }
        n = len(qids)
        aggregate[spec.name] = {
            "min": float(np.mean(lo)) if n else float("nan"),
            "max": float(np.mean(hi)) if n else float("nan"),
            "expected": float(np.mean(ex)) if n else float("nan"),
        }
        dependent[spec.name] = [q for i, q in enumerate(qids) if lo[i] != hi[i]]
    return {
        "per_query": {q: per_query[q] for q in sorted(per_query)},
        "aggregate": aggregate,
        "tie_dependent": dependent,
        "not_covered": not_covered,
        "tie_groups": int(np.count_nonzero(groups.size > 1)),
    }
