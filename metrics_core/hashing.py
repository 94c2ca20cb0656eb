"""Hash-code retrieval: Hamming ranking measures, exact about ties, in torch.

Codes are ±1 (or 0/1, converted) matrices of shape (items, bits). The Hamming distance
of two ±1 codes of K bits is ``(K - u·v) / 2`` (seed 004), computed by matrix product in
query chunks sized to a memory budget, on the CPU or on CUDA when asked.

Equal distances are common with short codes (16 bits give only 17 distinct values), and
the order among them decides mAP by many points. RankLab names the tie rule:

* ``expected`` (default): the expected value over a uniformly random order within each
  group of equal distances. It needs no sort: only, per query, the number of items
  ``n_d`` and of relevant items ``r_d`` at each distance ``d`` (a histogram), and
  harmonic numbers (closed form below).
* ``optimistic`` / ``pessimistic``: relevant items first / last within each tie group
  (the best and worst the tie order can do); reported with ``expected`` as a band.
* ``stable``: distance, then database index -- what the usual per-query loop computes
  when its sort is stable.

Closed form. Take a tie group of ``n`` items of which ``m`` are relevant, after ``A``
items of which ``B`` relevant. In a random order the relevant items take a random
``m``-subset of the ``n`` positions; the item at group position ``p`` is relevant with
probability ``m/n``, and then the expected number of relevant items up to it is
``1 + (p-1)(m-1)/(n-1)``. So the expected sum of precisions at its relevant items, over
positions ``p <= L`` (``L = n``, or fewer when a cutoff falls inside the group), is::

    sum_{p=1..L} (m/n) (B + 1 + (p-1)(m-1)/(n-1)) / (A + p)
      = c1 (H(A+L) - H(A)) + c2 (L - (A+1)(H(A+L) - H(A))),
    c1 = (m/n)(B+1),  c2 = (m/n)(m-1)/(n-1)  (0 when n = 1),

with ``H`` the harmonic numbers. AP is that sum over groups divided by the normaliser.

References: Buckley & Voorhees on ties in trec_eval; McSherry & Najork, "Computing
information retrieval performance measures efficiently in the presence of tied scores"
(ECIR 2008), for the expected-value view of ties.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch

from metrics_core.errors import InputError

TIE_RULES = ("expected", "optimistic", "pessimistic", "stable")
NORMALISERS = ("retrieved", "min_r_k")
ZERO_RELEVANT = ("zero", "exclude")

#: Bytes of working memory per query chunk (distance matrix and histogram indices).
DEFAULT_MEMORY_BUDGET = 256 << 20


# -- validation -------------------------------------------------------------------------
def validate_codes(codes, name: str = "codes") -> torch.Tensor:
    """A float32 ±1 tensor of shape (items, bits) from ±1 or 0/1 codes.

    Anything else (2, 0.5, NaN, a sign of 0 ...) is an InputError naming the first bad
    position. ``torch.sign`` is never used: sign(0) = 0 would silently make a third value.

    >>> validate_codes([[0, 1], [1, 1]]).tolist()
    [[-1.0, 1.0], [1.0, 1.0]]
    """
    t = torch.as_tensor(np.asarray(codes) if not isinstance(codes, torch.Tensor) else codes)
    if t.ndim == 1:
        t = t.unsqueeze(0)
    if t.ndim != 2:
        raise InputError(f"{name}: expected a 2-D array (items x bits), got {t.ndim} dimensions")
    if t.shape[1] == 0 or t.shape[0] == 0:
        raise InputError(f"{name}: empty code matrix of shape {tuple(t.shape)}")
    t = t.to(torch.float32)
    is_pm = (t == 1) | (t == -1)
    if bool(is_pm.all()):
        return t.contiguous()
    is01 = (t == 0) | (t == 1)
    if bool(is01.all()):
        return (2 * t - 1).contiguous()
    odd = ~(is_pm | is01)
    if bool(odd.any()):
        bad = torch.nonzero(odd)[0].tolist()
        problem = "is not a code bit"
    else:  # only -1, 0 and 1: the two encodings are mixed, and a 0 means nothing
        bad = torch.nonzero(t == 0)[0].tolist()
        problem = "is not a code bit: these codes mix -1/+1 and 0/1"
    raise InputError(f"{name}: value {t[bad[0], bad[1]].item()!r} at row {bad[0]}, bit {bad[1]} "
                     f"{problem}", hint="codes must be all -1/+1 or all 0/1")


def _labels(labels, n: int, name: str) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(labels) if not isinstance(labels, torch.Tensor) else labels)
    if t.shape[0] != n:
        raise InputError(f"{name}: {t.shape[0]} labels for {n} codes", hint="one label (row) per code")
    if t.ndim == 2 and t.shape[1] == 1:
        t = t[:, 0]
    if t.ndim == 2:
        if not bool(((t == 0) | (t == 1)).all()):
            raise InputError(f"{name}: multi-label rows must be 0/1 vectors")
        return t.to(torch.float32)
    if t.ndim != 1:
        raise InputError(f"{name}: labels must be a vector or a 0/1 matrix")
    if t.dtype.is_floating_point and not bool((t == t.round()).all()):
        raise InputError(f"{name}: class labels must be whole numbers")
    return t.to(torch.int64)


def _relevance(ql: torch.Tensor, dl: torch.Tensor) -> torch.Tensor:
    """Relevant pairs: same class (single labels) or at least one shared label (multi)."""
    if ql.ndim == 1 and dl.ndim == 1:
        return ql[:, None] == dl[None, :]
    if ql.ndim == 2 and dl.ndim == 2:
        if ql.shape[1] != dl.shape[1]:
            raise InputError("query and database label vectors have different lengths")
        return (ql @ dl.T) > 0
    raise InputError("query and database labels must both be class ids or both 0/1 vectors")


# -- the seed's functions ------------------------------------------------------------------
def calculate_hamming_dist_matrix(query_codes, db_codes) -> torch.Tensor:
    """Hamming distances D[i, j] = (K - u_i · v_j) / 2 of ±1 codes (seed 004).

    >>> calculate_hamming_dist_matrix([[1, 1, -1]], [[1, 1, -1], [-1, -1, 1]]).tolist()
    [[0.0, 3.0]]
    """
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes").to(q.device)
    if q.shape[1] != d.shape[1]:
        raise InputError(f"query codes have {q.shape[1]} bits, database codes {d.shape[1]}")
    return 0.5 * (q.shape[1] - q @ d.T)


def calculate_mAP(query_codes, db_codes, query_labels, db_labels, topk: int | None = None,
                  ties: str = "expected") -> float:
    """Mean average precision over the Hamming ranking (seed 004); see :func:`evaluate_hashing`."""
    return evaluate_hashing(query_codes, db_codes, query_labels, db_labels, topk=topk,
                            ties=ties, ks=())["map"]


def calculate_precision_at_k(query_codes, db_codes, query_labels, db_labels, k: int,
                             ties: str = "expected") -> float:
    """Mean precision of the top ``k`` of the Hamming ranking (seed 004)."""
    return evaluate_hashing(query_codes, db_codes, query_labels, db_labels, ks=(k,),
                            ties=ties)["precision_at_k"][int(k)]


# -- the histogram -------------------------------------------------------------------------
def distance_histograms(query_codes, db_codes, query_labels, db_labels, *, device=None,
                        memory_budget: int = DEFAULT_MEMORY_BUDGET):
    """Per query and distance d = 0..K: items at d (``n``) and relevant items at d (``r``).

    Returns two int64 numpy arrays of shape (queries, K + 1). No sort: a chunk of queries
    gets its scores ``S = Q D^T`` by one matrix product; ``K - S = 2 d`` is turned in place
    into a bin key ``2 d + relevant`` (plus a row offset) and counted by one bincount.
    With class labels the relevance matrix is never built: the relevant counts come from
    the products of each class's queries with that class's database items.
    """
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes")
    if q.shape[1] != d.shape[1]:
        raise InputError(f"query codes have {q.shape[1]} bits, database codes {d.shape[1]}")
    ql = _labels(query_labels, q.shape[0], "query labels")
    dl = _labels(db_labels, d.shape[0], "database labels")
    dev = torch.device(device) if device is not None else torch.device("cpu")
    q, d, ql, dl = q.to(dev), d.to(dev), ql.to(dev), dl.to(dev)
    bits = q.shape[1]
    nq, ndb = q.shape[0], d.shape[0]
    width = bits + 1
    single = ql.ndim == 1 and dl.ndim == 1
    if not single:
        _relevance(ql[:1], dl[:1])  # checks the label kinds match
    chunk = max(1, min(nq, memory_budget // max(ndb * 12, 1)))
    n_hist = torch.zeros((nq, width), dtype=torch.int64, device=dev)
    r_hist = torch.zeros((nq, width), dtype=torch.int64, device=dev)
    dT = d.T.contiguous()

    def counts(scores: torch.Tensor, rel: torch.Tensor | None) -> torch.Tensor:
        rows = scores.shape[0]
        key = scores.neg_().add_(bits)              # 2 d, exact small integers in float32
        if rel is not None:
            key.add_(rel)                           # 2 d + relevant
        key.add_(torch.arange(rows, device=dev, dtype=key.dtype)[:, None] * (2 * width))
        h = torch.bincount(key.to(torch.int32).view(-1), minlength=rows * 2 * width)
        return h.view(rows, width, 2)

    for lo in range(0, nq, chunk):
        hi = min(nq, lo + chunk)
        rel = None if single else _relevance(ql[lo:hi], dl).to(torch.float32)
        h = counts(q[lo:hi] @ dT, rel)
        n_hist[lo:hi] = h.sum(dim=2)
        if not single:
            r_hist[lo:hi] = h[:, :, 1]
    if single:
        for c in torch.unique(ql).tolist():
            qi = torch.nonzero(ql == c).view(-1)
            dj = torch.nonzero(dl == c).view(-1)
            if len(dj) == 0:
                continue
            sub = dT[:, dj].contiguous()
            step = max(1, min(len(qi), memory_budget // max(len(dj) * 12, 1)))
            for lo in range(0, len(qi), step):
                rows = qi[lo:lo + step]
                r_hist[rows] = counts(q[rows] @ sub, None).sum(dim=2)
    return n_hist.cpu().numpy(), r_hist.cpu().numpy()


def _harmonic(n_max: int) -> np.ndarray:
    """H[i] = 1 + 1/2 + ... + 1/i for i = 0..n_max (H[0] = 0)."""
    return np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, n_max + 1, dtype=np.float64))))


def _ap_sums(n: np.ndarray, r: np.ndarray, ties: str, topk: int | None):
    """Per query: sum of precisions at relevant items (within the top k) and relevant count there."""
    A = np.cumsum(n, axis=1) - n          # items before each group
    B = np.cumsum(r, axis=1) - r          # relevant items before each group
    total = int(n.sum(axis=1).max(initial=0))
    H = _harmonic(total + 1)
    limit = n if topk is None else np.clip(topk - A, 0, n)   # positions of the group inside the cut
    m = r.astype(np.float64)
    nn = n.astype(np.float64)
    if ties == "expected":
        L = limit
        dH = H[A + L] - H[A]
        frac = np.divide(m, nn, out=np.zeros_like(m), where=nn > 0)
        c2 = frac * np.divide(m - 1, nn - 1, out=np.zeros_like(m), where=nn > 1)
        s = frac * (B + 1) * dH + c2 * (L - (A + 1) * dH)
        count = frac * L                 # expected relevant inside the cut
    elif ties == "optimistic":
        k = np.minimum(r, limit)         # relevant take the first positions of the group
        s = k + (B - A) * (H[A + k] - H[A])
        count = k.astype(np.float64)
    elif ties == "pessimistic":
        start = A + n - r                # relevant take the last positions of the group
        k = np.clip(limit - (n - r), 0, r)
        s = k + (B - start) * (H[start + k] - H[start])
        count = k.astype(np.float64)
    else:
        raise ValueError(ties)
    return s.sum(axis=1), count.sum(axis=1)


def _expected_ap_retrieved_norm(n, r, topk):
    """E[AP@k] with the legacy normaliser (relevant retrieved in the top k), ties random.

    The normaliser is random when the cut falls inside a tie group, so the expectation is
    taken over the number c of relevant items the boundary group puts inside the cut
    (hypergeometric), exactly.
    """
    from scipy.stats import hypergeom

    A = np.cumsum(n, axis=1) - n
    B = np.cumsum(r, axis=1) - r
    inside_full = (A + n) <= topk
    boundary = (A < topk) & ~inside_full & (n > 0)
    H = _harmonic(int(n.sum(axis=1).max(initial=0)) + 1)
    # groups wholly inside the cut: exact sums (expected order within them)
    full_n = np.where(inside_full, n, 0)
    full_r = np.where(inside_full, r, 0)
    s_full, _ = _ap_sums(full_n, full_r, "expected", None)
    c_full = full_r.sum(axis=1).astype(np.float64)
    out = np.where(c_full > 0, s_full / np.maximum(c_full, 1), 0.0)
    rows = np.flatnonzero(boundary.any(axis=1))
    for i in rows:  # one boundary group per query: a short loop over its possible c values
        g = int(np.flatnonzero(boundary[i])[0])
        nA, nB, gn, gm = int(A[i, g]), int(B[i, g]), int(n[i, g]), int(r[i, g])
        L = topk - nA
        cs = np.arange(max(0, gm - (gn - L)), min(gm, L) + 1)
        pmf = hypergeom.pmf(cs, gn, gm, L)
        dH = H[nA + L] - H[nA]
        frac = cs / L
        c2 = frac * np.divide(cs - 1, L - 1, out=np.zeros(len(cs)), where=L > 1)
        s_b = frac * (nB + 1) * dH + c2 * (L - (nA + 1) * dH)
        denom = c_full[i] + cs
        vals = np.divide(s_full[i] + s_b, denom, out=np.zeros(len(cs)), where=denom > 0)
        out[i] = float(np.sum(pmf * vals))
    return out


def _stable_stats(query_codes, db_codes, query_labels, db_labels, topk, ks, device, memory_budget):
    """Per-query AP sums and precision counts in the stable order (distance, then index)."""
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes")
    ql = _labels(query_labels, q.shape[0], "query labels")
    dl = _labels(db_labels, d.shape[0], "database labels")
    dev = torch.device(device) if device is not None else torch.device("cpu")
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
        rel = torch.gather(_relevance(ql[lo:hi], dl), 1, order).to(torch.float64)
        cum = torch.cumsum(rel, dim=1)
        sums[lo:hi] = (cum / pos * rel).sum(dim=1).cpu().numpy()
        counts[lo:hi] = rel.sum(dim=1).cpu().numpy()
        for k in ks:
            at_k[k][lo:hi] = cum[:, min(k, ndb) - 1].cpu().numpy() if min(k, ndb) >= 1 else 0
    return sums, counts, at_k


# -- the measures --------------------------------------------------------------------------
def evaluate_hashing(query_codes, db_codes, query_labels, db_labels, *, topk: int | None = None,
                     ks=(1, 5, 10, 100), radius: int = 2, ties: str = "expected",
                     normaliser: str = "retrieved", zero_relevant: str = "zero", device=None,
                     memory_budget: int = DEFAULT_MEMORY_BUDGET) -> dict:
    """mAP (band over tie orders), P@k, precision/recall within a Hamming radius, PR by radius.

    Parameters
    ----------
    query_codes, db_codes : array-like (items, bits) of ±1 or 0/1
    query_labels, db_labels : class ids (vector) or 0/1 label matrices (multi-label:
        relevant when at least one label is shared)
    topk : int, optional
        mAP@topk; None for mAP over the whole ranking.
    ks : iterable of int
        Cutoffs of P@k.
    radius : int
        Precision/recall of the items within this Hamming radius (2 is customary).
    ties : {"expected", "optimistic", "pessimistic", "stable"}
    normaliser : {"retrieved", "min_r_k"}
        AP@k divides by the relevant items retrieved in the top k (DeepHash's CalcTopMap)
        or by min(R, k). Without topk both are R.
    zero_relevant : {"zero", "exclude"}
        Queries with no relevant item count as AP 0, or are left out of the mean.

    Returns
    -------
    dict with "map", "map_band" [pessimistic, optimistic], "ap" (per query), "precision_at_k",
    "precision_radius", "recall_radius", "pr_by_radius", "per_class_map" (single labels),
    "n_queries", "n_db", "bits", "ties", "zero_relevant_queries".

    Examples
    --------
    >>> codes_db = [[1, 1], [1, -1], [-1, -1]]
    >>> out = evaluate_hashing([[1, 1]], codes_db, [0], [0, 1, 0], ks=(1,))
    >>> round(out["map"], 4), [round(v, 4) for v in out["map_band"]]   # (1/1 + 2/3) / 2
    (0.8333, [0.8333, 0.8333])
    """
    if ties not in TIE_RULES:
        raise InputError(f"unknown tie rule {ties!r}", hint="accepted: " + ", ".join(TIE_RULES))
    if normaliser not in NORMALISERS:
        raise InputError(f"unknown normaliser {normaliser!r}", hint="accepted: " + ", ".join(NORMALISERS))
    if zero_relevant not in ZERO_RELEVANT:
        raise InputError(f"unknown zero_relevant rule {zero_relevant!r}",
                         hint="accepted: " + ", ".join(ZERO_RELEVANT))
    if topk is not None and (int(topk) != topk or topk < 1):
        raise InputError(f"topk must be a positive whole number, got {topk!r}")
    ks = tuple(sorted({int(k) for k in ks}))
    if any(k < 1 for k in ks):
        raise InputError("every k of P@k must be a positive whole number")
    n, r = distance_histograms(query_codes, db_codes, query_labels, db_labels, device=device,
                               memory_budget=memory_budget)
    nq, width = n.shape
    bits, ndb = width - 1, int(n[0].sum()) if nq else 0
    R = r.sum(axis=1).astype(np.float64)

    def ap_for(rule):
        if rule == "stable":
            s, c, _ = _stable_stats(query_codes, db_codes, query_labels, db_labels, topk, (), device,
                                    memory_budget)
        else:
            if topk is not None and normaliser == "retrieved" and rule == "expected":
                return _expected_ap_retrieved_norm(n, r, int(topk))
            s, c = _ap_sums(n, r, rule, topk)
        if topk is None:
            norm = R
        elif normaliser == "retrieved":
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

    # P@k
    precision_at_k = {}
    if ks:
        if ties == "stable":
            _, _, at_k = _stable_stats(query_codes, db_codes, query_labels, db_labels, None, ks,
                                       device, memory_budget)
            for k in ks:
                precision_at_k[k] = float(np.mean(at_k[k] / k))
        else:
            A = np.cumsum(n, axis=1) - n
            B = np.cumsum(r, axis=1) - r
            for k in ks:
                L = np.clip(k - A, 0, n)
                if ties == "expected":
                    inside = np.divide(r * L, n, out=np.zeros(n.shape), where=n > 0)
                elif ties == "optimistic":
                    inside = np.minimum(r, L)
                else:
                    inside = np.clip(L - (n - r), 0, r)
                precision_at_k[k] = float(np.mean(inside.sum(axis=1) / k))
                del B
                B = None
    # radius measures (no tie question: everything within the radius is retrieved)
    cum_n = np.cumsum(n, axis=1)
    cum_r = np.cumsum(r, axis=1)
    prec_by_radius = np.divide(cum_r, cum_n, out=np.zeros(n.shape), where=cum_n > 0)
    rec_by_radius = np.divide(cum_r, R[:, None], out=np.zeros(n.shape), where=R[:, None] > 0)
    rad = min(int(radius), bits)
    out = {
        "map": mean(ap),
        "map_band": [mean(lo_band), mean(hi_band)],
        "ap": ap,
        "precision_at_k": precision_at_k,
        "precision_radius": float(np.mean(prec_by_radius[:, rad])) if nq else math.nan,
        "recall_radius": float(np.mean(rec_by_radius[:, rad])) if nq else math.nan,
        "radius": rad,
        "pr_by_radius": {"radius": list(range(width)),
                         "precision": prec_by_radius.mean(axis=0).tolist(),
                         "recall": rec_by_radius.mean(axis=0).tolist()},
        "n_queries": nq, "n_db": ndb, "bits": bits, "ties": ties, "topk": topk,
        "zero_relevant_queries": int((~has_rel).sum()),
    }
    ql = np.asarray(query_labels.cpu() if isinstance(query_labels, torch.Tensor) else query_labels)
    if ql.ndim == 1:
        classes = np.unique(ql)
        out["per_class_map"] = {str(c): float(np.mean(ap[(ql == c) & keep])) if ((ql == c) & keep).any()
                                else math.nan for c in classes}
    else:
        out["per_class_map"] = {str(c): float(np.mean(ap[(ql[:, c] > 0) & keep]))
                                if ((ql[:, c] > 0) & keep).any() else math.nan for c in range(ql.shape[1])}
    return out
