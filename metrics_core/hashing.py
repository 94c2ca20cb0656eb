"""Hash-code retrieval evaluation: Hamming ranking, tie-aware mAP, P@k, radius measures.

Binary codes of K bits rank a database for each query by Hamming distance, an integer in
``0..K``. With 12-64 bits most distances are tied, so the order *within* a tie group
decides mAP; the legacy loop (DeepHash-pytorch ``CalcTopMap``) lets an unstable sort
choose it. RankLab names the choice (``ties=``):

``expected`` (default)
    The expected value over a uniformly random order inside every tie group, computed
    exactly from per-query counts of items and relevant items at each distance (a
    histogram over ``0..K``): no sort at all.
``optimistic`` / ``pessimistic``
    Relevant items first / last inside every tie group (the band around ``expected``).
``stable``
    Order by distance, then database index: what the legacy loop gives with a stable
    argsort.

Closed form of the expected value (McSherry and Najork, 2008, derived here anew). A tie
group follows ``a`` earlier items of which ``r`` are relevant, and holds ``n`` items of
which ``m`` are relevant. In a uniformly random order, position ``p`` (1-based inside the
group) holds a relevant item with probability ``m/n``; given that, each of the ``p-1``
items before it inside the group is relevant with probability ``c = (m-1)/(n-1)``
(``c = 0`` when ``n = 1``). So the expected sum of precisions at the relevant items among
the first ``t`` positions of the group is::

    E = sum_{p=1..t} (m/n) (r + 1 + c (p-1)) / (a + p)
      = (m/n) [ (r + 1 - c (a+1)) (H(a+t) - H(a)) + c t ],

with ``H(k) = 1 + 1/2 + ... + 1/k``, ``H(0) = 0``. ``t = n`` for a group fully ranked,
``0 < t < n`` for the group cut by a top-K boundary. Relevant-first gives
``h + (r - a)(H(a+h) - H(a))`` with ``h = min(m, t)``; relevant-last gives
``h + (r - a - n + m)(H(a+n-m+h) - H(a+n-m))`` with ``h = max(0, t - (n - m))``.

AP@K normalisers (``normalizer=``): ``"retrieved"`` divides by the relevant items in the
top K (the legacy DeepHash code); ``"min_r_k"`` by ``min(R, K)``. Under ``expected`` with
``"retrieved"`` the denominator is random when the top-K boundary cuts a tie group; the
expectation of the ratio is taken exactly over the hypergeometric number ``h`` of
relevant items of that group that land inside the top K (given ``h``, their order among
the ``t`` cut positions is uniform, so the formula above applies with ``n, m -> t, h``).

Zero-relevant queries (``zero_relevant=``): ``"zero"`` (default) scores their AP and
recall 0; ``"exclude"`` leaves them out of the means.

References
----------
F. McSherry and M. Najork. Computing information retrieval performance measures
efficiently in the presence of tied scores. ECIR 2008.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from metrics_core.errors import InputError

TIES = ("expected", "optimistic", "pessimistic", "stable")
NORMALIZERS = ("retrieved", "min_r_k")
ZERO_RELEVANT = ("zero", "exclude")
DEFAULT_MEMORY_BUDGET = 256 * 2**20  # bytes of working memory per query chunk


# --------------------------------------------------------------------------- validation

def _as_tensor(x, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach()
    try:
        arr = np.asarray(x)
    except Exception as exc:  # noqa: BLE001 - any conversion failure is a user error
        raise InputError(f"{name}: cannot read as an array ({exc})") from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise InputError(f"{name}: values must be numbers, found {arr.dtype}",
                         hint="give codes as -1/+1 or 0/1 numbers")
    return torch.as_tensor(arr)


def validate_codes(codes, name: str = "codes") -> torch.Tensor:
    """Check binary codes and return them as a float32 ±1 tensor of shape (n, K).

    Codes in ``{-1, +1}`` are kept; codes in ``{0, 1}`` are mapped by ``2x - 1``.
    ``torch.sign`` is never used, since ``sign(0) = 0`` would silently make a third value.

    Parameters
    ----------
    codes : array-like or torch.Tensor of shape (n, K)
    name : str
        Names the input in error messages.

    Returns
    -------
    torch.Tensor of float32 values in {-1, +1}

    Raises
    ------
    InputError
        Not 2-D, empty, or a value outside the set; the message gives the position
        (row, bit) and the value of the first bad entry.

    Examples
    --------
    >>> validate_codes([[0, 1, 1]]).tolist()
    [[-1.0, 1.0, 1.0]]
    >>> validate_codes([[1, -1, 0.5]])
    Traceback (most recent call last):
    ...
    metrics_core.errors.InputError: codes: value 0.5 at row 0, bit 2 is not -1 or +1. Binary codes must be all -1/+1 or all 0/1
    """
    t = _as_tensor(codes, name)
    if t.ndim == 1:
        t = t.reshape(1, -1)
    if t.ndim != 2:
        raise InputError(f"{name}: expected a 2-D array (items x bits), got {t.ndim} dimensions")
    if t.shape[0] == 0 or t.shape[1] == 0:
        raise InputError(f"{name}: no codes (shape {tuple(t.shape)})")
    if t.dtype == torch.bool:
        t = t.to(torch.int8)
    tf = t.to(torch.float64) if not t.is_floating_point() else t
    has_neg = bool((tf == -1).any())
    allowed = (-1.0, 1.0) if has_neg else (0.0, 1.0)
    bad = ~((tf == allowed[0]) | (tf == allowed[1]))
    if bool(bad.any()):
        flat = int(torch.nonzero(bad.reshape(-1))[0, 0])
        row, bit = divmod(flat, t.shape[1])
        value = tf.reshape(-1)[flat].item()
        value_text = f"{value:g}"
        expected = "-1 or +1" if has_neg else "0 or 1"
        raise InputError(f"{name}: value {value_text} at row {row}, bit {bit} is not {expected}",
                         hint="Binary codes must be all -1/+1 or all 0/1")
    out = tf.to(torch.float32)
    if not has_neg:
        out = out * 2 - 1
    return out


def validate_labels(labels, n: int, name: str = "labels") -> torch.Tensor:
    """Labels as a 1-D int64 tensor (one class each) or a 2-D 0/1 int8 tensor (multi-label).

    Examples
    --------
    >>> validate_labels([3, 1], 2).tolist()
    [3, 1]
    >>> validate_labels([[1, 0], [1, 1]], 2).dtype
    torch.int8
    """
    t = _as_tensor(labels, name)
    if t.ndim == 2 and t.shape[1] == 1:
        t = t[:, 0]
    if t.ndim not in (1, 2):
        raise InputError(f"{name}: expected one label per item or a 0/1 matrix, got {t.ndim} dimensions")
    if t.shape[0] != n:
        raise InputError(f"{name}: {t.shape[0]} rows for {n} codes",
                         hint="give one label row per code, in the same order")
    if t.is_floating_point():
        if not bool(torch.isfinite(t).all()) or not bool((t == t.round()).all()):
            flat = int(torch.nonzero(~(torch.isfinite(t) & (t == t.round())).reshape(-1))[0, 0])
            raise InputError(f"{name}: value {t.reshape(-1)[flat].item():g} at position {flat} is not an integer")
    if t.ndim == 1:
        return t.to(torch.int64)
    bad = ~((t == 0) | (t == 1))
    if bool(bad.any()):
        flat = int(torch.nonzero(bad.reshape(-1))[0, 0])
        row, col = divmod(flat, t.shape[1])
        raise InputError(f"{name}: value {t.reshape(-1)[flat].item():g} at row {row}, column {col} is not 0 or 1",
                         hint="multi-label rows are 0/1 indicator vectors")
    return t.to(torch.int8)


def _check_pair(query_codes, db_codes, query_labels, db_labels):
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes")
    if q.shape[1] != d.shape[1]:
        raise InputError(f"query codes have {q.shape[1]} bits, database codes {d.shape[1]}",
                         hint="both sides must come from the same hash function")
    ql = validate_labels(query_labels, q.shape[0], "query labels")
    dl = validate_labels(db_labels, d.shape[0], "database labels")
    if ql.ndim != dl.ndim or (ql.ndim == 2 and ql.shape[1] != dl.shape[1]):
        raise InputError("query and database labels differ in form "
                         f"({tuple(ql.shape)} vs {tuple(dl.shape)})",
                         hint="use single class ids on both sides, or 0/1 vectors of the same width")
    return q, d, ql, dl


def _device(device) -> torch.device:
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


# --------------------------------------------------------------------------- distances

def calculate_hamming_dist_matrix(query_codes, db_codes) -> torch.Tensor:
    """Hamming distances ``D = (K - Q Dᵀ) / 2`` for ±1 (or 0/1) codes, by one matrix product.

    Parameters
    ----------
    query_codes : tensor (n_q, K);  db_codes : tensor (n_db, K)

    Returns
    -------
    torch.Tensor (n_q, n_db), float32 holding integers 0..K, on the inputs' device.

    Examples
    --------
    >>> q = torch.tensor([[1, 1, -1]])
    >>> db = torch.tensor([[1, 1, -1], [-1, -1, 1], [1, -1, -1]])
    >>> calculate_hamming_dist_matrix(q, db).tolist()
    [[0.0, 3.0, 1.0]]
    """
    dev = query_codes.device if isinstance(query_codes, torch.Tensor) else torch.device("cpu")
    q = validate_codes(query_codes, "query codes").to(dev)
    d = validate_codes(db_codes, "database codes").to(dev)
    if q.shape[1] != d.shape[1]:
        raise InputError(f"query codes have {q.shape[1]} bits, database codes {d.shape[1]}")
    bits = q.shape[1]
    return (bits - torch.matmul(q, d.T)) * 0.5


def _pack_bits(pm1: torch.Tensor) -> np.ndarray:
    """±1 codes -> (n, W) uint64 words (bit set where the code is +1), zero padded."""
    bits01 = (pm1.cpu().numpy() > 0)
    n, k = bits01.shape
    words = -(-k // 64)
    padded = np.zeros((n, words * 64), dtype=bool)
    padded[:, :k] = bits01
    return np.packbits(padded, axis=1).view(np.uint64)


def _chunk_rows(n_db: int, bytes_per_pair: int, budget: int) -> int:
    return max(1, int(budget // max(1, n_db * bytes_per_pair)))


class _DistanceBackend:
    """Distance chunks: XOR + popcount on packed words on CPU, matrix product on CUDA.

    On CPU, XOR + ``numpy.bitwise_count`` on 64-bit words reads 1/32 of the memory of a
    float32 product and measured faster (BENCHMARKS.md, Hashing); on CUDA the product is
    one cuBLAS call.
    """

    def __init__(self, q: torch.Tensor, d: torch.Tensor, device: torch.device):
        self.device = device
        self.bits = q.shape[1]
        if device.type == "cpu":
            self.qp, self.dp = _pack_bits(q), _pack_bits(d)
        else:
            self.qf, self.df = q.to(device), d.to(device)

    def chunk(self, start: int, stop: int):
        """Distances of queries start..stop-1: uint8 numpy on CPU, int64 tensor on CUDA."""
        if self.device.type == "cpu":
            qp = self.qp[start:stop]
            out = np.bitwise_count(qp[:, None, 0] ^ self.dp[None, :, 0])
            for w in range(1, qp.shape[1]):
                out += np.bitwise_count(qp[:, None, w] ^ self.dp[None, :, w])
            return out
        s = torch.matmul(self.qf[start:stop], self.df.T)
        return ((self.bits - s) * 0.5).round().to(torch.int64)


def _relevance_chunk(ql, dl, start, stop, device):
    if device.type == "cpu":
        a, b = ql[start:stop].numpy(), dl.numpy()
        if a.ndim == 1:
            return a[:, None] == b[None, :]
        return (a.astype(np.float32) @ b.astype(np.float32).T) > 0
    a, b = ql[start:stop].to(device), dl.to(device)
    if a.ndim == 1:
        return a[:, None] == b[None, :]
    return (a.float() @ b.float().T) > 0


def relevance_matrix(query_labels, db_labels) -> torch.Tensor:
    """Boolean (n_q, n_db): same class (single labels) or at least one shared label (0/1 rows).

    Examples
    --------
    >>> relevance_matrix([0, 1], [1, 1, 0]).tolist()
    [[False, False, True], [True, True, False]]
    >>> relevance_matrix([[1, 0]], [[1, 1], [0, 1]]).tolist()
    [[True, False]]
    """
    ql = _as_tensor(query_labels, "query labels")
    dl = _as_tensor(db_labels, "database labels")
    ql = validate_labels(ql, ql.shape[0], "query labels")
    dl = validate_labels(dl, dl.shape[0], "database labels")
    return torch.as_tensor(_relevance_chunk(ql, dl, 0, ql.shape[0], torch.device("cpu")))


# --------------------------------------------------------------------------- histograms

def _histograms(backend, ql, dl, n_q, n_db, bits, budget, stable_ks=None, stable_topk=None,
                stable_norm="retrieved"):
    """Per-query counts ``n[q, d]`` (items) and ``m[q, d]`` (relevant items) at distance d.

    With ``stable_ks`` set, also the stable-order per-query AP@all, AP@topk and
    relevant-in-top-k counts, from a stable sort of each chunk.
    """
    nb = bits + 1
    n_hist = torch.zeros((n_q, nb), dtype=torch.int64)
    m_hist = torch.zeros((n_q, nb), dtype=torch.int64)
    stable = None
    if stable_ks is not None:
        stable = {"ap_all": torch.zeros(n_q, dtype=torch.float64),
                  "ap_topk": torch.zeros(n_q, dtype=torch.float64),
                  "rel_at": {k: torch.zeros(n_q, dtype=torch.float64) for k in stable_ks}}
    words = -(-bits // 64)
    rows = _chunk_rows(n_db, 8 * words + 8 + (16 if stable_ks is not None else 0), budget)
    rows = min(rows, max(1, 65535 // (2 * nb)))  # keeps bin keys in uint16
    dev = backend.device
    for start in range(0, n_q, rows):
        stop = min(n_q, start + rows)
        dist = backend.chunk(start, stop)
        rel = _relevance_chunk(ql, dl, start, stop, dev)
        c = stop - start
        if dev.type == "cpu":
            key = dist.astype(np.uint16)
            key += rel.astype(np.uint16) * nb  # relevant items in the upper half of a row
            key += (np.arange(c, dtype=np.uint16) * (2 * nb))[:, None]
            counts = np.bincount(key.ravel(), minlength=c * 2 * nb).reshape(c, 2, nb)
            counts = torch.from_numpy(counts.astype(np.int64))
        else:
            key = dist + rel.to(torch.int64) * nb + (torch.arange(c, device=dev) * (2 * nb))[:, None]
            counts = torch.bincount(key.reshape(-1), minlength=c * 2 * nb).reshape(c, 2, nb).cpu()
        m_hist[start:stop] = counts[:, 1]
        n_hist[start:stop] = counts[:, 0] + counts[:, 1]
        if stable is not None:
            _stable_chunk(dist, rel, start, stop, stable, stable_ks, stable_topk, stable_norm, dev)
    return n_hist, m_hist, stable


def _stable_chunk(dist, rel, start, stop, out, ks, topk, norm, dev):
    """Stable ranking of one chunk: order by distance, then database index."""
    if dev.type == "cpu":
        order = np.argsort(dist, axis=1, kind="stable")  # radix sort on uint8
        ranked = torch.from_numpy(np.take_along_axis(rel, order, axis=1))
    else:
        order = torch.sort(dist, dim=1, stable=True).indices
        ranked = torch.gather(rel, 1, order).cpu()
    ranked = ranked.to(torch.float64)
    n_db = ranked.shape[1]
    cum = torch.cumsum(ranked, dim=1)
    pos = torch.arange(1, n_db + 1, dtype=torch.float64)
    prec_sum = torch.cumsum(ranked * cum / pos, dim=1)
    total = cum[:, -1]
    out["ap_all"][start:stop] = torch.where(total > 0, prec_sum[:, -1] / total.clamp(min=1), 0.0)
    kk = min(topk, n_db)
    rel_k = cum[:, kk - 1]
    denom = rel_k if norm == "retrieved" else torch.minimum(total, torch.tensor(float(topk)))
    out["ap_topk"][start:stop] = torch.where(denom > 0, prec_sum[:, kk - 1] / denom.clamp(min=1), 0.0)
    for k in ks:
        out["rel_at"][k][start:stop] = cum[:, min(k, n_db) - 1]


def _harmonic(n: int) -> torch.Tensor:
    """H[k] = 1 + 1/2 + ... + 1/k for k = 0..n, float64."""
    h = torch.zeros(n + 1, dtype=torch.float64)
    h[1:] = torch.cumsum(1.0 / torch.arange(1, n + 1, dtype=torch.float64), 0)
    return h


# --------------------------------------------------------------------------- AP from counts

def _group_sums(n, m, a, r, t, ties, H):
    """Sum of precisions at relevant items in the first ``t`` positions of each tie group,
    and the number of relevant items there (float64 tensors of the groups' shape)."""
    n, m, a, r, t = (x.to(torch.float64) for x in (n, m, a, r, t))
    if ties == "expected":
        c = torch.where(n > 1, (m - 1) / (n - 1).clamp(min=1), torch.zeros_like(n))
        harm = H[(a + t).long()] - H[a.long()]
        s = torch.where(n > 0, m / n.clamp(min=1) * ((r + 1 - c * (a + 1)) * harm + c * t),
                        torch.zeros_like(n))
        h = torch.where(n > 0, m * t / n.clamp(min=1), torch.zeros_like(n))
        return s, h
    if ties == "optimistic":
        h = torch.minimum(m, t)
        return h + (r - a) * (H[(a + h).long()] - H[a.long()]), h
    if ties == "pessimistic":
        h = (t - (n - m)).clamp(min=0)
        base = a + n - m
        return h + (r - a - n + m) * (H[(base + h).long()] - H[base.long()]), h
    raise InputError(f"unknown ties option {ties!r}", hint=f"choose one of {', '.join(TIES)}")


def _ap_from_hist(n_hist, m_hist, ties, topk, normalizer, H):
    """Per-query AP (topk=None: all) for a histogram-based tie rule."""
    a = torch.cumsum(n_hist, 1) - n_hist
    r = torch.cumsum(m_hist, 1) - m_hist
    total_rel = m_hist.sum(1).to(torch.float64)
    n_db = int(n_hist[0].sum())
    if topk is None or topk >= n_db:
        s, _ = _group_sums(n_hist, m_hist, a, r, n_hist, ties, H)
        return torch.where(total_rel > 0, s.sum(1) / total_rel.clamp(min=1), 0.0)
    t = (topk - a).clamp(min=0)
    t = torch.minimum(t, n_hist)
    s, h = _group_sums(n_hist, m_hist, a, r, t, ties, H)
    s_sum = s.sum(1)
    if normalizer == "min_r_k":
        denom = torch.minimum(total_rel, torch.tensor(float(topk)))
        return torch.where(denom > 0, s_sum / denom.clamp(min=1), 0.0)
    if ties != "expected":
        rel_k = h.sum(1)
        return torch.where(rel_k > 0, s_sum / rel_k.clamp(min=1), 0.0)
    return _expected_ratio(n_hist, m_hist, a, r, t, H)


def _expected_ratio(n_hist, m_hist, a, r, t, H):
    """E[S / rho] for AP@K normalised by the relevant items retrieved, ties random.

    Only the group cut by the boundary (0 < t < n) makes rho random: its relevant count
    inside the top K is hypergeometric h ~ HG(n, m, t); the full groups before it add a
    fixed count and an expected precision sum independent of h.
    """
    full = (t == n_hist) & (n_hist > 0)
    s_full, _ = _group_sums(n_hist, m_hist, a, r, torch.where(full, t, 0), "expected", H)
    s_full = (s_full * full).sum(1)
    rel_full = (m_hist * full).sum(1).to(torch.float64)
    cut = (t > 0) & (t < n_hist)
    has_cut = cut.any(1)
    idx = cut.to(torch.int64).argmax(1, keepdim=True)
    nb, mb, ab, rb, tb = (x.gather(1, idx)[:, 0].to(torch.float64) for x in (n_hist, m_hist, a, r, t))
    nb, mb, ab, rb, tb = (torch.where(has_cut, x, 0.0) for x in (nb, mb, ab, rb, tb))
    h_max = int(torch.minimum(mb, tb).max().item()) if len(mb) else 0
    h = torch.arange(h_max + 1, dtype=torch.float64)[None, :]
    lo = (tb - (nb - mb)).clamp(min=0)[:, None]
    hi = torch.minimum(mb, tb)[:, None]
    valid = (h >= lo) & (h <= hi)

    def lchoose(x, y):
        return torch.lgamma(x + 1) - torch.lgamma(y + 1) - torch.lgamma((x - y).clamp(min=0) + 1)

    hv = torch.where(valid, h, lo)
    logp = (lchoose(mb[:, None], hv) + lchoose((nb - mb)[:, None], tb[:, None] - hv)
            - lchoose(nb[:, None], tb[:, None]))
    p = torch.where(valid, torch.exp(logp), 0.0)
    # Given h, the expected precision sum over the t cut positions (formula with n,m -> t,h).
    tt = tb[:, None].expand_as(hv)
    s_cut, _ = _group_sums(tt, hv, ab[:, None].expand_as(hv), rb[:, None].expand_as(hv), tt, "expected", H)
    rho = rel_full[:, None] + h
    ratio = torch.where(rho > 0, (s_full[:, None] + s_cut) / rho.clamp(min=1), 0.0)
    with_cut = (p * ratio).sum(1)
    without = torch.where(rel_full > 0, s_full / rel_full.clamp(min=1), 0.0)
    return torch.where(has_cut, with_cut, without)


def _relevant_in_top(n_hist, m_hist, k, ties):
    """Per-query (expected / bound) number of relevant items among the first k."""
    a = torch.cumsum(n_hist, 1) - n_hist
    t = torch.minimum((k - a).clamp(min=0), n_hist).to(torch.float64)
    n, m = n_hist.to(torch.float64), m_hist.to(torch.float64)
    if ties == "expected":
        h = torch.where(n > 0, m * t / n.clamp(min=1), 0.0)
    elif ties == "optimistic":
        h = torch.minimum(m, t)
    else:
        h = (t - (n - m)).clamp(min=0)
    return h.sum(1)


# --------------------------------------------------------------------------- the evaluation

@dataclass
class HashEvaluation:
    """Counts of one evaluation (query × distance histograms) and the measures on them.

    Build it with :func:`evaluate_hash_codes`; every measure is then computed from the
    histograms without touching the codes again (``stable`` values come from the pass).
    """

    n_hist: torch.Tensor
    m_hist: torch.Tensor
    query_labels: torch.Tensor
    bits: int
    n_db: int
    ties: str
    topk: int | None
    normalizer: str
    zero_relevant: str
    ks: tuple
    device: str
    stable: dict | None = field(default=None, repr=False)

    @property
    def n_queries(self) -> int:
        return int(self.n_hist.shape[0])

    @property
    def n_relevant(self) -> torch.Tensor:
        return self.m_hist.sum(1)

    def _mean(self, values: torch.Tensor, zero_relevant: str | None = None) -> float:
        rule = zero_relevant or self.zero_relevant
        if rule == "exclude":
            keep = self.n_relevant > 0
            return float(values[keep].mean()) if bool(keep.any()) else float("nan")
        return float(values.mean())

    def average_precision(self, ties: str | None = None, topk: int | None = -1) -> torch.Tensor:
        """Per-query AP (``topk=None``: over the whole database; -1: this evaluation's)."""
        ties = ties or self.ties
        topk = self.topk if topk == -1 else topk
        if ties == "stable":
            if self.stable is None:
                raise ValueError("stable values were not computed; evaluate with ties='stable'")
            return self.stable["ap_all"] if topk is None or topk >= self.n_db else self.stable["ap_topk"]
        H = _harmonic(self.n_db)
        return _ap_from_hist(self.n_hist, self.m_hist, ties, topk, self.normalizer, H)

    def mean_average_precision(self, ties: str | None = None, topk: int | None = -1) -> float:
        return self._mean(self.average_precision(ties, topk))

    def map_band(self, topk: int | None = -1) -> tuple[float, float]:
        """(pessimistic, optimistic) mAP: relevant last / first inside every tie group."""
        return (self.mean_average_precision("pessimistic", topk),
                self.mean_average_precision("optimistic", topk))

    def precision_at_k(self, k: int, ties: str | None = None) -> float:
        """Mean over queries of (relevant among the first k) / k (divide by k, even past the end)."""
        ties = ties or self.ties
        if ties == "stable":
            if self.stable is None or k not in self.stable["rel_at"]:
                raise ValueError(f"stable P@{k} was not computed; pass ks including {k}")
            rel = self.stable["rel_at"][k]
        else:
            rel = _relevant_in_top(self.n_hist, self.m_hist, k, ties)
        return float((rel / k).mean())

    def radius_precision_recall(self, radius: int = 2, empty: str = "zero") -> tuple[float, float]:
        """Mean precision and recall of the items within Hamming distance <= radius.

        A query with nothing inside the radius has precision 0 (``empty="zero"``, the
        usual convention of hashing papers) or is left out of the precision mean
        (``empty="exclude"``). Recall of zero-relevant queries follows ``zero_relevant``.
        """
        curve = self._radius_counts(radius)
        return self._radius_means(*curve, empty)

    def _radius_counts(self, radius):
        r = max(0, min(int(radius), self.bits))
        inside = self.n_hist[:, : r + 1].sum(1).to(torch.float64)
        rel_inside = self.m_hist[:, : r + 1].sum(1).to(torch.float64)
        return inside, rel_inside

    def _radius_means(self, inside, rel_inside, empty):
        prec = torch.where(inside > 0, rel_inside / inside.clamp(min=1), 0.0)
        if empty == "exclude":
            p = float(prec[inside > 0].mean()) if bool((inside > 0).any()) else float("nan")
        else:
            p = float(prec.mean())
        total = self.n_relevant.to(torch.float64)
        rec = torch.where(total > 0, rel_inside / total.clamp(min=1), 0.0)
        return p, self._mean(rec)

    def pr_curve_by_radius(self, empty: str = "zero") -> pd.DataFrame:
        """Precision and recall within radius r for r = 0..K (one row per radius)."""
        rows = [(r, *self._radius_means(*self._radius_counts(r), empty)) for r in range(self.bits + 1)]
        return pd.DataFrame(rows, columns=["radius", "precision", "recall"])

    def per_class_map(self, ties: str | None = None, topk: int | None = -1) -> pd.DataFrame:
        """mAP over the queries of each class (multi-label: the queries carrying the label)."""
        ap = self.average_precision(ties, topk)
        ql = self.query_labels
        if ql.ndim == 1:
            classes, inverse = torch.unique(ql, return_inverse=True)
            member = torch.zeros((len(ql), len(classes)), dtype=torch.bool)
            member[torch.arange(len(ql)), inverse] = True
            names = classes.tolist()
        else:
            member = ql.bool()
            names = list(range(ql.shape[1]))
        if self.zero_relevant == "exclude":
            member = member & (self.n_relevant > 0)[:, None]
        counts = member.sum(0)
        sums = (member.to(torch.float64) * ap[:, None]).sum(0)
        maps = torch.where(counts > 0, sums / counts.clamp(min=1), float("nan"))
        return pd.DataFrame({"class": names, "n_queries": counts.tolist(), "mAP": maps.tolist()})


def evaluate_hash_codes(query_codes, db_codes, query_labels, db_labels, *, topk: int | None = None,
                        ties: str = "expected", normalizer: str = "retrieved",
                        zero_relevant: str = "zero", ks=(1, 5, 10, 100, 1000), device=None,
                        memory_budget: int = DEFAULT_MEMORY_BUDGET) -> HashEvaluation:
    """Validate, compute the per-query distance histograms once, and return the evaluation.

    Parameters
    ----------
    query_codes, db_codes : array-like (n, K) of ±1 or 0/1
    query_labels, db_labels : class ids (n,) or 0/1 label matrices (n, C)
    topk : int or None
        K of mAP@K; None for mAP over the whole database.
    ties : {"expected", "optimistic", "pessimistic", "stable"}
    normalizer : {"retrieved", "min_r_k"}
        AP@K denominator: relevant items in the top K (legacy) or min(R, K).
    zero_relevant : {"zero", "exclude"}
    ks : iterable of int
        The cut-offs of P@k that ``stable`` mode records in its pass.
    device : str or torch.device, optional
        Default: CUDA when ``torch.cuda.is_available()``, else CPU.
    memory_budget : int
        Bytes of working memory per chunk of queries.

    Examples
    --------
    >>> ev = evaluate_hash_codes([[1, 1]], [[1, 1], [1, -1], [-1, 1]], [0], [0, 1, 0], device="cpu")
    >>> ev.n_hist.tolist(), ev.m_hist.tolist()
    ([[1, 2, 0]], [[1, 1, 0]])
    >>> round(ev.mean_average_precision(), 6)   # (1 + 0.5 * 2/2 + 0.5 * 2/3) / 2
    0.916667
    """
    for value, allowed, what in ((ties, TIES, "ties"), (normalizer, NORMALIZERS, "normalizer"),
                                 (zero_relevant, ZERO_RELEVANT, "zero_relevant")):
        if value not in allowed:
            raise InputError(f"unknown {what} option {value!r}", hint=f"choose one of {', '.join(allowed)}")
    if topk is not None and (int(topk) != topk or topk < 1):
        raise InputError(f"topk must be a positive integer, got {topk!r}")
    q, d, ql, dl = _check_pair(query_codes, db_codes, query_labels, db_labels)
    dev = _device(device)
    backend = _DistanceBackend(q, d, dev)
    ks = tuple(sorted({int(k) for k in ks}))
    if any(k < 1 for k in ks):
        raise InputError("cut-offs k must be positive")
    n_db = d.shape[0]
    stable_kw = {}
    if ties == "stable":
        stable_kw = dict(stable_ks=ks, stable_topk=topk or n_db, stable_norm=normalizer)
    n_hist, m_hist, stable = _histograms(backend, ql, dl, q.shape[0], n_db, q.shape[1],
                                         memory_budget, **stable_kw)
    return HashEvaluation(n_hist, m_hist, ql, q.shape[1], n_db, ties, topk, normalizer,
                          zero_relevant, ks, dev.type, stable)


# --------------------------------------------------------------------------- the seed's API

def calculate_mAP(query_codes, db_codes, query_labels, db_labels, topk: int | None = None,
                  ties: str = "expected", **kwargs) -> float:
    """mAP of the Hamming ranking (mAP@topk when topk is given).

    ``AP = (1/R) sum_{i relevant} P@rank(i)`` per query, averaged over queries; see the
    module docstring for ties, normalisers and zero-relevant queries.

    Examples
    --------
    >>> q = torch.tensor([[1, 1, -1]]); db = torch.tensor([[1, 1, -1], [-1, -1, 1], [1, -1, -1]])
    >>> calculate_mAP(q, db, torch.tensor([0]), torch.tensor([0, 0, 1]))   # ranks 1, 3: (1 + 2/3)/2
    0.8333333333333333
    """
    ev = evaluate_hash_codes(query_codes, db_codes, query_labels, db_labels, topk=topk,
                             ties=ties, **kwargs)
    return ev.mean_average_precision()


def calculate_precision_at_k(query_codes, db_codes, query_labels, db_labels, k: int,
                             ties: str = "expected", **kwargs) -> float:
    """Mean over queries of the fraction of relevant items among the k nearest codes.

    Examples
    --------
    >>> q = torch.tensor([[1, 1, -1]]); db = torch.tensor([[1, 1, -1], [-1, -1, 1], [1, -1, -1]])
    >>> calculate_precision_at_k(q, db, torch.tensor([0]), torch.tensor([0, 0, 1]), k=2)
    0.5
    """
    ev = evaluate_hash_codes(query_codes, db_codes, query_labels, db_labels, ties=ties,
                             ks=(k,), **kwargs)
    return ev.precision_at_k(k)

