"""The measures: mAP (with its tie band), P@k and radius measures of a Hamming ranking,
and the reference functions calculate_hamming_dist_matrix / calculate_mAP /
calculate_precision_at_k.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.hashing._torch import torch
from metrics_core.hashing.histograms import distance_histograms
from metrics_core.hashing.ties import ap_sums, expected_ap_retrieved_norm, tie_tables
from metrics_core.hashing.validate import (
    DEFAULT_MEMORY_BUDGET,
    NORMALIZERS,
    TIE_RULES,
    ZERO_RELEVANT,
    as_labels,
    relevance_matrix,
    resolve_device,
    validate_codes,
)
from metrics_core.validation import LIMITS, check_choice, check_int


# -- the seed's functions ------------------------------------------------------------------
def calculate_hamming_dist_matrix(query_codes, db_codes) -> torch.Tensor:
    """Hamming distances D[i, j] = (K - u_i · v_j) / 2 of ±1 codes (the inner-product form of deep-hashing evaluation).

    >>> calculate_hamming_dist_matrix([[1, 1, -1]], [[1, 1, -1], [-1, -1, 1]]).tolist()
    [[0.0, 3.0]]
    """
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes").to(q.device)
    if q.shape[1] != d.shape[1]:
        raise InputError(N_("query codes have {query} bits, database codes {database}"),
                         params={"query": q.shape[1], "database": d.shape[1]})
    return 0.5 * (q.shape[1] - q @ d.T)


def calculate_mAP(query_codes, db_codes, query_labels, db_labels, topk: int | None = None,
                  ties: str = "expected") -> float:
    """Mean average precision over the Hamming ranking; see :func:`evaluate_hashing`."""
    return evaluate_hashing(query_codes, db_codes, query_labels, db_labels, topk=topk,
                            ties=ties, ks=())["map"]


def calculate_precision_at_k(query_codes, db_codes, query_labels, db_labels, k: int,
                             ties: str = "expected") -> float:
    """Mean precision of the top ``k`` of the Hamming ranking."""
    return evaluate_hashing(query_codes, db_codes, query_labels, db_labels, ks=(k,),
                            ties=ties)["precision_at_k"][int(k)]


def _stable_stats(query_codes, db_codes, query_labels, db_labels, topk, ks, device, memory_budget):
    """Per-query AP sums and precision counts in the stable order (distance, then index)."""
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes")
    ql = as_labels(query_labels, q.shape[0], "query labels")
    dl = as_labels(db_labels, d.shape[0], "database labels")
    dev = resolve_device(device)
    q, d, ql, dl = q.to(dev), d.to(dev), ql.to(dev), dl.to(dev)
    nq, ndb, bits = q.shape[0], d.shape[0], q.shape[1]
    chunk = max(1, min(nq, memory_budget // max(ndb * 24, 1)))
    cut = ndb if topk is None else min(topk, ndb)
    sums = np.zeros(nq)
    counts = np.zeros(nq)
    at_k = {k: np.zeros(nq) for k in ks}
    pos = torch.arange(1, cut + 1, device=dev, dtype=torch.float64)
    for lo in range(0, nq, chunk):
        hi = min(nq, lo + chunk)
        dist = torch.round(0.5 * (bits - q[lo:hi] @ d.T))
        order = torch.sort(dist, dim=1, stable=True).indices[:, :cut]
        rel = torch.gather(relevance_matrix(ql[lo:hi], dl), 1, order).to(torch.float64)
        cum = torch.cumsum(rel, dim=1)
        sums[lo:hi] = (cum / pos * rel).sum(dim=1).cpu().numpy()
        counts[lo:hi] = rel.sum(dim=1).cpu().numpy()
        for k in ks:
            at_k[k][lo:hi] = cum[:, min(k, ndb) - 1].cpu().numpy() if min(k, ndb) >= 1 else 0
    return sums, counts, at_k


# -- the measures --------------------------------------------------------------------------
def evaluate_hashing(query_codes, db_codes, query_labels, db_labels, *, topk: int | None = None,
                     ks=(1, 5, 10, 100), radius: int = 2, ties: str = "expected",
                     normalizer: str = "retrieved", zero_relevant: str = "zero", device=None,
                     memory_budget: int = DEFAULT_MEMORY_BUDGET) -> dict:
    """mAP (band over tie orders), P@k, precision/recall within a Hamming radius, PR by radius.

    Parameters
    ----------
    query_codes, db_codes : array-like (items, bits) of ±1 or 0/1
    query_labels, db_labels : class ids (1-D) or 0/1 label matrices (2-D, multi-label:
        relevant when at least one label is shared). A one-column 0/1 matrix is multi-label
        too: items sharing the 1 match, two items tagged 0 do not. A one-column matrix with
        other values is class ids written as a column.
    topk : int, optional
        mAP@topk; None for mAP over the whole ranking.
    ks : iterable of int
        Cutoffs of P@k.
    radius : int
        Precision/recall of the items within this Hamming radius (2 is customary).
    ties : {"expected", "optimistic", "pessimistic", "stable"}
    normalizer : {"retrieved", "min_r_k"}
        AP@k divides by the relevant items retrieved in the top k (DeepHash's CalcTopMap)
        or by min(R, k). Without topk both are R.
    zero_relevant : {"zero", "exclude"}
        Queries with no relevant item count as AP 0, or are left out of the mean.

    Returns
    -------
    dict with "map", "map_band" [pessimistic, optimistic], "ap" (per query), "precision_at_k",
    "precision_radius", "recall_radius", "empty_radius_queries" (queries with no code within
    the radius; their precision there counts 0), "pr_by_radius", "per_class_map" (single labels),
    "n_queries", "n_db", "bits", "ties", "zero_relevant_queries".

    Examples
    --------
    >>> codes_db = [[1, 1], [1, -1], [-1, -1]]
    >>> out = evaluate_hashing([[1, 1]], codes_db, [0], [0, 1, 0], ks=(1,))
    >>> round(out["map"], 4), [round(v, 4) for v in out["map_band"]]   # (1/1 + 2/3) / 2
    (0.8333, [0.8333, 0.8333])
    """
    check_choice(ties, TIE_RULES, "tie rule")
    check_choice(normalizer, NORMALIZERS, "normalizer")
    check_choice(zero_relevant, ZERO_RELEVANT, "zero_relevant rule")
    if topk is not None:
        topk = check_int(topk, "topk", minimum=1, maximum=LIMITS["cutoff"])
    ks = tuple(sorted({check_int(k, "k of P@k", minimum=1, maximum=LIMITS["cutoff"]) for k in ks}))
    radius = check_int(radius, "radius", minimum=0, maximum=LIMITS["radius"])
    resolve_device(device)
    n, r = distance_histograms(query_codes, db_codes, query_labels, db_labels, device=device,
                               memory_budget=memory_budget)
    nq, width = n.shape
    bits, ndb = width - 1, int(n[0].sum()) if nq else 0
    R = r.sum(axis=1).astype(np.float64)
    shared = {}

    def ap_for(rule):
        if rule == "stable":
            s, c, _ = _stable_stats(query_codes, db_codes, query_labels, db_labels, topk, (), device,
                                    memory_budget)
        else:
            if topk is not None and normalizer == "retrieved" and rule == "expected":
                return expected_ap_retrieved_norm(n, r, int(topk))
            if not shared:
                shared.update(tie_tables(n, r, topk))
            s, c = ap_sums(n, r, rule, topk, shared)
        if topk is None:
            norm = R
        elif normalizer == "retrieved":
            norm = c
        else:
            norm = np.minimum(R, topk)
        return np.divide(s, norm, out=np.zeros(nq), where=norm > 0)

    ap = ap_for(ties)
    lo_band, hi_band = ap_for("pessimistic"), ap_for("optimistic")
    has_rel = R > 0
    keep = has_rel if zero_relevant == "exclude" else np.ones(nq, dtype=bool)
    if zero_relevant == "exclude" and not keep.any():
        warnings.warn("no query has a relevant item: mAP is NaN", stacklevel=2)

    def mean(x):
        return float(np.mean(x[keep])) if keep.any() else math.nan

    if ks and ties == "stable":
        _, _, at_k = _stable_stats(query_codes, db_codes, query_labels, db_labels, None, ks,
                                   device, memory_budget)
        precision_at_k = {k: float(np.mean(at_k[k] / k)) for k in ks}
    else:
        precision_at_k = _precision_at_k(n, r, ks, ties)
    prec_by_radius, rec_by_radius = _by_radius(n, r, R)
    rad = min(int(radius), bits)
    out = {
        "map": mean(ap),
        "map_band": [mean(lo_band), mean(hi_band)],
        "ap": ap,
        "precision_at_k": precision_at_k,
        "precision_radius": float(np.mean(prec_by_radius[:, rad])) if nq else math.nan,
        # recall is undefined without relevant items: those queries follow zero_relevant
        "recall_radius": mean(rec_by_radius[:, rad]) if nq else math.nan,
        "radius": rad,
        # queries with no code within the radius: their precision there counts 0 (DeepHash's
        # rule); when every query has none, the radius retrieved nothing and says nothing
        "empty_radius_queries": int((n[:, : rad + 1].sum(axis=1) == 0).sum()) if nq else 0,
        "pr_by_radius": {"radius": list(range(width)),
                         "precision": prec_by_radius.mean(axis=0).tolist(),
                         "recall": rec_by_radius.mean(axis=0).tolist()},
        "n_queries": nq, "n_db": ndb, "bits": bits, "ties": ties, "topk": topk,
        "zero_relevant_queries": int((~has_rel).sum()),
    }
    out["per_class_map"] = _per_class_map(ap, keep, as_labels(query_labels, nq, "query labels").cpu().numpy())
    return out


def _precision_at_k(n: np.ndarray, r: np.ndarray, ks, ties: str) -> dict:
    """P@k of every query from its distance histograms, the tie group the cut falls in
    resolved by the tie rule (expected: in proportion; optimistic: relevant first;
    pessimistic: relevant last); the mean over queries per k."""
    out = {}
    above = np.cumsum(n, axis=1) - n  # items strictly closer than each distance
    for k in ks:
        taken = np.clip(k - above, 0, n)  # items of each distance inside the top k
        if ties == "expected":
            inside = np.divide(r * taken, n, out=np.zeros(n.shape), where=n > 0)
        elif ties == "optimistic":
            inside = np.minimum(r, taken)
        else:
            inside = np.clip(taken - (n - r), 0, r)
        out[k] = float(np.mean(inside.sum(axis=1) / k))
    return out


def _by_radius(n: np.ndarray, r: np.ndarray, R: np.ndarray):
    """Precision and recall of everything within each Hamming radius, per query (no tie
    question: the whole radius is retrieved)."""
    cum_n = np.cumsum(n, axis=1)
    cum_r = np.cumsum(r, axis=1)
    precision = np.divide(cum_r, cum_n, out=np.zeros(n.shape), where=cum_n > 0)
    recall = np.divide(cum_r, R[:, None], out=np.zeros(n.shape), where=R[:, None] > 0)
    return precision, recall


def _per_class_map(ap: np.ndarray, keep: np.ndarray, ql: np.ndarray) -> dict:
    """mAP per class of the queries (class ids, or each column of 0/1 multi-labels), from
    the validated labels."""
    if ql.ndim == 1:
        members = {str(c): ql == c for c in np.unique(ql)}
    else:
        members = {str(c): ql[:, c] > 0 for c in range(ql.shape[1])}
    return {c: float(np.mean(ap[m & keep])) if (m & keep).any() else math.nan for c, m in members.items()}
