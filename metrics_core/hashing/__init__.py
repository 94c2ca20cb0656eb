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
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from metrics_core.errors import InputError
from metrics_core.validation import LIMITS, check_int

class _LazyTorch:
    """``torch``, imported on first use: importing this package for its constants
    (TIE_RULES, NORMALISERS) or the command line's option checks loads no torch."""

    def __getattr__(self, name):
        import torch as _torch

        globals()["torch"] = _torch
        return getattr(_torch, name)


torch = _LazyTorch()

TIE_RULES = ("expected", "optimistic", "pessimistic", "stable")
NORMALISERS = ("retrieved", "min_r_k")
ZERO_RELEVANT = ("zero", "exclude")

#: Bytes of working memory per query chunk (distance matrix and histogram indices).
DEFAULT_MEMORY_BUDGET = 256 << 20
#: Queries per CPU chunk: small enough that a chunk's passes stay in cache (measured:
#: 16 rows of 54,000 items beat both 4 and 64 rows).
_CPU_CHUNK_QUERIES = 16
#: Largest joint histogram per row (bins) for which columns are counted in pairs.
_PAIR_BINS_MAX = 8192  # (<= 65536: the joint key is built in uint16)


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
def _pack_bits(pm1: torch.Tensor) -> np.ndarray:
    """±1 codes -> (items, words) uint64, bit set where the code is +1, zero padded."""
    bits01 = pm1.cpu().numpy() > 0
    n, k = bits01.shape
    words = -(-k // 64)
    padded = np.zeros((n, words * 64), dtype=bool)
    padded[:, :k] = bits01
    return np.packbits(padded, axis=1).view(np.uint64)


def _packed_distances(qp: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """Hamming distances by XOR + popcount on packed words (exact small integers).

    uint8 while the codes have fewer than 256 bits (one byte per pair keeps the passes
    that follow memory-light), uint16 beyond.
    """
    dtype = np.uint8 if qp.shape[1] * 64 < 256 else np.uint16
    out = np.bitwise_count(qp[:, None, 0] ^ dp[None, :, 0]).astype(dtype, copy=False)
    for w in range(1, qp.shape[1]):
        out += np.bitwise_count(qp[:, None, w] ^ dp[None, :, w])
    return out


def _row_histograms(dist: np.ndarray, width: int) -> np.ndarray:
    """Per row of small integer distances, the count of each value 0..width-1.

    One bincount over keys ``value + width * row``. When the squared width is small the
    columns are counted in pairs instead: key ``width * d[:, j] + d[:, j + h]`` counts the
    joint values of two columns at once (half the keys, the costly part of a bincount),
    and the marginals of that 2-D histogram give the counts.
    """
    rows, cols = dist.shape
    if rows == 0 or cols == 0:
        return np.zeros((rows, width), dtype=np.int64)
    half = cols // 2
    if width * width <= _PAIR_BINS_MAX and half > 0:
        # the joint value is built in 2 bytes (width**2 <= _PAIR_BINS_MAX), then widened
        key = np.multiply(dist[:, :half], width, dtype=np.uint16, casting="unsafe")
        np.add(key, dist[:, half:2 * half], out=key, casting="unsafe")
        key = key.astype(np.intp)
        key += (np.arange(rows, dtype=np.intp) * (width * width))[:, None]
        joint = np.bincount(key.ravel(), minlength=rows * width * width).reshape(rows, width, width)
        out = joint.sum(axis=2) + joint.sum(axis=1)
        if cols % 2:
            out[np.arange(rows), dist[:, -1]] += 1
        return out
    key = dist.astype(np.intp)
    key += (np.arange(rows, dtype=np.intp) * width)[:, None]
    return np.bincount(key.ravel(), minlength=rows * width).reshape(rows, width)


def _worker_count() -> int:
    """Threads for the CPU histogram: the cores this process may use (numpy's XOR,
    popcount and bincount release the GIL, so query chunks run in parallel)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, torch.get_num_threads()))


def resolve_device(device=None) -> torch.device:
    """The torch device named by ``device`` (None: CUDA when available, else the CPU),
    refused with an :class:`InputError` when it is not a device or not available here."""
    if device is None:
        return default_device()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise InputError(f"unknown device {str(device)!r}", hint="Use cpu, cuda or cuda:N") from None
    if dev.type not in ("cpu", "cuda"):
        raise InputError(f"device {str(device)!r} is not supported", hint="Use cpu, cuda or cuda:N")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(f"device {str(device)!r} is not available: this torch build has no CUDA "
                             "or no GPU is visible", hint="Use --device cpu")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise InputError(f"device {str(device)!r} does not exist ({torch.cuda.device_count()} GPUs)",
                             hint="Use cuda:0 or cpu")
    return dev


def default_device() -> torch.device:
    """CUDA when available, else the CPU."""
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def _cpu_histograms(q: torch.Tensor, d: torch.Tensor, ql: torch.Tensor, dl: torch.Tensor,
                    width: int, memory_budget: int):
    """CPU route of :func:`distance_histograms`: bit-packed codes, small query chunks in
    a thread pool. With class labels the database is sorted by class, so the relevant
    items of a query are one contiguous slice of its distance row; queries are taken
    class by class."""
    nq, ndb = q.shape[0], d.shape[0]
    qp, dp = _pack_bits(q), _pack_bits(d)
    n_hist = np.zeros((nq, width), dtype=np.int64)
    r_hist = np.zeros((nq, width), dtype=np.int64)
    single = ql.ndim == 1 and dl.ndim == 1
    # Chunks of a few queries keep each pass in cache; the budget still caps them.
    per_query = max(ndb * 10, 1)
    chunk = max(1, min(_CPU_CHUNK_QUERIES, memory_budget // per_query))
    tasks = []
    if single:
        qln, dln = ql.numpy(), dl.numpy()
        db_order = np.argsort(dln, kind="stable")
        dp = dp[db_order]
        dls = dln[db_order]
        q_order = np.argsort(qln, kind="stable")
        qls = qln[q_order]
        bounds = np.flatnonzero(np.diff(qls)) + 1
        for group in np.split(q_order, bounds):
            if len(group) == 0:
                continue
            c = qln[group[0]]
            lo_c, hi_c = np.searchsorted(dls, c, "left"), np.searchsorted(dls, c, "right")
            for lo in range(0, len(group), chunk):
                tasks.append((group[lo:lo + chunk], lo_c, hi_c))

        def work(task):
            rows, lo_c, hi_c = task
            # the class's slice first: relevant columns [0, m), the others after, so each
            # item is counted once (r from the first part, n from both)
            dist = _packed_distances(qp[rows], np.concatenate((dp[lo_c:], dp[:lo_c])))
            m = hi_c - lo_c
            r_hist[rows] = _row_histograms(dist[:, :m], width)
            n_hist[rows] = r_hist[rows] + _row_histograms(dist[:, m:], width)
    else:
        for lo in range(0, nq, chunk):
            tasks.append(np.arange(lo, min(nq, lo + chunk)))

        def work(rows):
            dist = _packed_distances(qp[rows], dp).astype(np.intp)
            rel = _relevance(ql[rows], dl).numpy()
            both = _row_histograms(dist * 2 + rel, 2 * width).reshape(len(rows), width, 2)
            n_hist[rows] = both.sum(axis=2)
            r_hist[rows] = both[:, :, 1]

    workers = min(_worker_count(), len(tasks))
    if workers <= 1:
        for task in tasks:
            work(task)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(work, tasks))  # list(): re-raises a worker's exception here
    return n_hist, r_hist


def distance_histograms(query_codes, db_codes, query_labels, db_labels, *, device=None,
                        memory_budget: int = DEFAULT_MEMORY_BUDGET):
    """Per query and distance d = 0..K: items at d (``n``) and relevant items at d (``r``).

    Returns two int64 numpy arrays of shape (queries, K + 1). No sort. On the CPU the
    distances of a few queries at a time come from XOR + popcount on bit-packed codes (64
    bits per word: 1/32 of the memory a float product touches; measured faster, see
    BENCHMARKS.md), counted per row by bincount (:func:`_row_histograms`), chunks spread
    over the cores. On CUDA the distances come from one matrix product
    ``(K - Q D^T) / 2`` and each becomes a bin key ``2 d + relevant`` (plus a row offset)
    counted by one bincount. With class labels the relevance matrix is never built:
    relevant items are the query's class's slice of the class-sorted database.
    """
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes")
    if q.shape[1] != d.shape[1]:
        raise InputError(f"query codes have {q.shape[1]} bits, database codes {d.shape[1]}")
    ql = _labels(query_labels, q.shape[0], "query labels")
    dl = _labels(db_labels, d.shape[0], "database labels")
    dev = resolve_device(device)
    bits = q.shape[1]
    nq, ndb = q.shape[0], d.shape[0]
    width = bits + 1
    single = ql.ndim == 1 and dl.ndim == 1
    if not single:
        _relevance(ql[:1], dl[:1])  # checks the label kinds match
    if dev.type == "cpu":
        return _cpu_histograms(q, d, ql, dl, width, memory_budget)
    n_hist = np.zeros((nq, width), dtype=np.int64)
    r_hist = np.zeros((nq, width), dtype=np.int64)
    qg, dTg = q.to(dev), d.to(dev).T.contiguous()

    def distances(rows: np.ndarray, cols: np.ndarray | None):
        dT = dTg if cols is None else dTg[:, torch.as_tensor(cols, device=dev)]
        dist = ((bits - qg[torch.as_tensor(rows, device=dev)] @ dT) * 0.5).round().to(torch.int32)
        return dist.cpu().numpy()

    def counts(dist: np.ndarray, rel: np.ndarray | None) -> np.ndarray:
        rows = dist.shape[0]
        key = dist * 2
        if rel is not None:
            key += rel
        key += (np.arange(rows, dtype=np.int32) * (2 * width))[:, None]
        return np.bincount(key.ravel(), minlength=rows * 2 * width).reshape(rows, width, 2)

    chunk = max(1, min(nq, memory_budget // max(ndb * 12, 1)))
    for lo in range(0, nq, chunk):
        rows = np.arange(lo, min(nq, lo + chunk))
        rel = None if single else _relevance(ql[rows], dl).numpy().astype(np.int32)
        h = counts(distances(rows, None), rel)
        n_hist[rows] = h.sum(axis=2)
        if not single:
            r_hist[rows] = h[:, :, 1]
    if single:
        qln, dln = ql.numpy(), dl.numpy()
        for c in np.unique(qln):
            qi = np.flatnonzero(qln == c)
            dj = np.flatnonzero(dln == c)
            if len(dj) == 0:
                continue
            step = max(1, min(len(qi), memory_budget // max(len(dj) * 12, 1)))
            for lo in range(0, len(qi), step):
                rows = qi[lo:lo + step]
                r_hist[rows] = counts(distances(rows, dj), None).sum(axis=2)
    return n_hist, r_hist


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

    Only the group the cut falls inside makes the normaliser random: the number ``c`` of
    its relevant items inside the cut is hypergeometric; given ``c`` their places among
    the group's cut positions are uniform, so the closed form applies with ``n, m -> L, c``.
    All queries at once: a (queries x possible c) table of probabilities and ratios.
    """
    from scipy.special import gammaln

    A = np.cumsum(n, axis=1) - n
    B = np.cumsum(r, axis=1) - r
    inside_full = ((A + n) <= topk) & (n > 0)
    boundary = (A < topk) & ~inside_full & (n > 0)
    full_n = np.where(inside_full, n, 0)
    full_r = np.where(inside_full, r, 0)
    s_full, _ = _ap_sums(full_n, full_r, "expected", None)
    c_full = full_r.sum(axis=1).astype(np.float64)
    plain = np.divide(s_full, c_full, out=np.zeros(len(c_full)), where=c_full > 0)
    has_cut = boundary.any(axis=1)
    if not has_cut.any():
        return plain
    g = np.argmax(boundary, axis=1)
    take = np.arange(len(g))
    nb, mb = n[take, g].astype(np.float64), r[take, g].astype(np.float64)
    ab, bb = A[take, g].astype(np.float64), B[take, g].astype(np.float64)
    L = np.where(has_cut, topk - ab, 0.0)
    c = np.arange(int(np.minimum(mb, L).max()) + 1, dtype=np.float64)[None, :]
    lo = np.maximum(0.0, L - (nb - mb))[:, None]
    hi = np.minimum(mb, L)[:, None]
    valid = (c >= lo) & (c <= hi) & has_cut[:, None]
    cv = np.where(valid, c, lo)

    def lchoose(x, y):
        return gammaln(x + 1) - gammaln(y + 1) - gammaln(np.maximum(x - y, 0) + 1)

    logp = lchoose(mb[:, None], cv) + lchoose((nb - mb)[:, None], L[:, None] - cv) - lchoose(nb[:, None], L[:, None])
    p = np.where(valid, np.exp(logp), 0.0)
    total = int(n.sum(axis=1).max(initial=0))
    H = _harmonic(total + 1)
    Lc = L[:, None]
    Ai = ab.astype(np.int64)[:, None]
    dH = H[np.minimum(Ai + Lc.astype(np.int64), total + 1)] - H[Ai]
    frac = np.divide(cv, Lc, out=np.zeros_like(cv), where=Lc > 0)
    c2 = frac * np.divide(cv - 1, Lc - 1, out=np.zeros_like(cv), where=Lc > 1)
    s_cut = frac * (bb[:, None] + 1) * dH + c2 * (Lc - (ab[:, None] + 1) * dH)
    denom = c_full[:, None] + cv
    ratio = np.divide(s_full[:, None] + s_cut, denom, out=np.zeros_like(cv), where=denom > 0)
    return np.where(has_cut, (p * ratio).sum(axis=1), plain)


def _stable_stats(query_codes, db_codes, query_labels, db_labels, topk, ks, device, memory_budget):
    """Per-query AP sums and precision counts in the stable order (distance, then index)."""
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes")
    ql = _labels(query_labels, q.shape[0], "query labels")
    dl = _labels(db_labels, d.shape[0], "database labels")
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
        # recall is undefined without relevant items: those queries follow zero_relevant
        "recall_radius": mean(rec_by_radius[:, rad]) if nq else math.nan,
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
