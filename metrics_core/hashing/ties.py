"""Average precision from distance histograms under each tie rule (the closed forms of
the package docstring): no sort, only per-query counts and harmonic numbers.

Written in device-agnostic torch and run where the histograms are (the CPU, or the GPU
that counted them). Two things make every device give the same numbers bit for bit:

* the per-(query, distance) terms use only operations that IEEE 754 rounds the same way
  everywhere (integer arithmetic, conversions, and float64 ``+ - * /`` of two tensors: no
  division by a scalar, which a GPU may do by its reciprocal; no fused multiply-add);
* every sum is :func:`fixed_sum`: each term as an integer multiple of 2**-52 (truncated),
  summed as integers, so the order a device adds them in changes nothing.
"""

from __future__ import annotations

import threading

import numpy as np

from metrics_core.hashing._torch import torch

_HARMONIC = np.zeros(1)
_ON_DEVICE: dict = {}  # device -> the harmonic table there (the longest made)
_LOCK = threading.Lock()
#: Fractional bits of :func:`fixed_sum`'s integers, and where they are split in two.
FRACTION_BITS = 53
HALF_BITS = 27


def harmonic_numbers(n_max: int) -> np.ndarray:
    """H[i] = 1 + 1/2 + ... + 1/i for i = 0..n_max (H[0] = 0), read-only.

    The longest table made so far is kept and sliced: a cumulative sum is sequential, so a
    prefix of a longer table holds the same values (a database of a million items needs a
    table of a million; an evaluation per training epoch makes it once). Made on the host
    by numpy, the same on every machine; :func:`harmonic_on` copies it to a device."""
    global _HARMONIC
    with _LOCK:
        if len(_HARMONIC) <= n_max:
            table = np.concatenate(
                ([0.0], np.cumsum(1.0 / np.arange(1, n_max + 1, dtype=np.float64)))
            )
            table.flags.writeable = False
            _HARMONIC = table
        return _HARMONIC[: n_max + 1]


def harmonic_on(device, n_max: int):
    """:func:`harmonic_numbers` up to ``n_max`` as a float64 tensor on ``device``, the copy
    kept per device (one copy per longer table, not one per call)."""
    dev = torch.device(device)
    with _LOCK:
        kept = _ON_DEVICE.get(dev)
    if kept is None or len(kept) <= n_max:
        host = harmonic_numbers(max(n_max, 0 if kept is None else len(kept) - 1))
        kept = torch.from_numpy(host.copy()).to(dev)
        with _LOCK:
            _ON_DEVICE[dev] = kept
    return kept[: n_max + 1]


def fixed_sum(x, dim: int):
    """Sums of float64 ``x`` along ``dim``, the same bits on every device and in any order.

    Each slice is scaled by a power of two (exact) that brings its largest magnitude into
    [1/2, 1); each scaled term is then rounded to the nearest multiple of 2**-53 (the
    largest terms exactly) and that integer split in two halves (the high one floored,
    carrying the sign; the low one the 27 bits below); the halves are summed as int64 (exact,
    so the order of addition cannot matter), joined by float64 operations in a fixed order
    and scaled back. Every term moves by at most 2**-54
    of the slice's largest: a sum of ``c`` non-negative terms is within ``c`` units of 2**-54
    of its exact value, relative, as a float64 sum is.

    >>> fixed_sum(torch.tensor([[0.5, 0.25, 2.0], [1 / 3, 1 / 3, 1 / 3]], dtype=torch.float64), 1).tolist()
    [2.75, 1.0]
    >>> a = torch.rand(1000, dtype=torch.float64)
    >>> bool(fixed_sum(a, 0) == fixed_sum(a.flip(0), 0))   # any order: the same bits
    True
    """
    _, exponent = torch.frexp(torch.amax(torch.abs(x), dim=dim, keepdim=True))
    exponent = exponent.to(torch.int64)
    # 2**-e and 2**e built from their bits: exact on every device (no pow)
    down = ((1023 - exponent) << 52).view(torch.float64)
    up = ((1023 + exponent) << 52).view(torch.float64).squeeze(dim)
    # |x * down| < 1: an integer of at most 53 bits, in halves (hi: the sign, floored)
    fixed = torch.round((x * down) * float(2**FRACTION_BITS)).to(torch.int64)
    hi = (fixed >> HALF_BITS).sum(dim=dim).to(torch.float64)
    lo = (fixed & ((1 << HALF_BITS) - 1)).sum(dim=dim).to(torch.float64)
    return (hi * float(2.0 ** (HALF_BITS - FRACTION_BITS)) + lo * float(2.0**-FRACTION_BITS)) * up


def unit_sum_parts(x, dim: int):
    """The exact integer parts of sums along ``dim`` of terms in [0, 1] (precisions,
    recalls): each term rounded to the nearest multiple of 2**-53 (a term moves by at most
    2**-54, absolutely) and that integer split in a high part and the 27 bits below, each
    summed as int64. Parts of blocks of terms add up exactly (integers), so a sum taken in
    pieces is the same as in one; :func:`join_unit_sum_parts` makes the float. Exact in
    float64 too, up to 2**26 terms."""
    fixed = torch.round(x * float(2**FRACTION_BITS)).to(torch.int64)
    return (fixed >> HALF_BITS).sum(dim=dim), (fixed & ((1 << HALF_BITS) - 1)).sum(dim=dim)


def join_unit_sum_parts(hi, lo) -> np.ndarray:
    """The float64 sums from :func:`unit_sum_parts`' parts (numpy, on the host: the same
    operations for every device).

    >>> hi, lo = unit_sum_parts(torch.tensor([[0.5, 0.25, 1.0]], dtype=torch.float64), 1)
    >>> join_unit_sum_parts(hi.numpy(), lo.numpy()).tolist()
    [1.75]
    """
    hi, lo = np.asarray(hi, dtype=np.int64), np.asarray(lo, dtype=np.int64)
    return hi * 2.0 ** (HALF_BITS - FRACTION_BITS) + lo * 2.0**-FRACTION_BITS


def as_counts(x):
    """Histograms (or any counts) as a tensor: a tensor stays where it is, an array is
    wrapped without a copy."""
    return x if isinstance(x, torch.Tensor) else torch.from_numpy(np.asarray(x))


def tie_tables(n, r, topk: int | None, H=None) -> dict:
    """What the tie rules' AP sums share, computed once for all of them: items up to and
    including each distance group (``C``), items and relevant items before it (``A``,
    ``B``), the harmonic numbers ``H`` (a tensor on the histograms' device; made for the
    longest row when not given) and ``H[A]``, the positions of each group inside the
    cut (``limit``), and ``n, r, A, B, limit`` as float64 (``float``: exact, for the
    arithmetic). ``n``, ``r``: integer tensors (or arrays) of the same device.

    >>> t = tie_tables(torch.tensor([[1, 2]]), torch.tensor([[1, 0]]), None)
    >>> t["A"].tolist(), t["B"].tolist(), t["limit"].tolist(), t["C"].tolist()
    ([[0, 1]], [[0, 1]], [[1, 2]], [[1, 3]])
    """
    n, r = as_counts(n).to(torch.int64), as_counts(r).to(torch.int64)
    C = torch.cumsum(n, dim=1)  # items up to and including each group
    A = C - n  # items before each group
    B = torch.cumsum(r, dim=1) - r  # relevant items before each group
    if H is None:
        longest = int(n.sum(dim=1).max()) if n.numel() else 0
        H = harmonic_on(n.device, longest + 1)
    # positions of each group inside the cut
    limit = n if topk is None else torch.clamp(torch.clamp(topk - A, min=0), max=n)
    # the same counts as float64 (exact: integers below 2**53), converted once for the rules
    f = torch.stack([n, r, A, B, limit]).to(torch.float64)
    return {
        "A": A,
        "B": B,
        "C": C,
        "H": H,
        "HA": H[A],
        "limit": limit,
        "topk": topk,
        "float": {"n": f[0], "r": f[1], "A": f[2], "B": f[3], "limit": f[4]},
    }


def rule_terms(n, r, rules, topk: int | None, tables: dict | None = None, counts: bool = True):
    """Per query, distance group and tie rule: the group's sum of precisions at its
    relevant items inside the cut (the top ``topk``, or the whole ranking) and, with
    ``counts``, its relevant items there (else None): ``{rule: (terms, counts)}``, float64
    tensors of the histograms' shape, for each rule of ``rules`` (expected, optimistic,
    pessimistic), the closed forms of the package docstring. :func:`rule_sums` adds them.

    ``n`` and ``r`` are distance histograms (int64, queries x distances, ``0 <= r <= n``).
    The rules share ``tables`` (:func:`tie_tables`): every rule's value is computed by the
    same floating-point operations whichever others are asked, so each number is the same
    bit for bit."""
    n, r = as_counts(n).to(torch.int64), as_counts(r).to(torch.int64)
    t = tie_tables(n, r, topk) if tables is None else tables
    A, C, H, HA, limit = t["A"], t["C"], t["H"], t["HA"], t["limit"]
    whole = t["topk"] is None  # every item is inside the cut: limit is n
    f64 = torch.float64
    out = {}
    # H at the end of each group (whole ranking), shared by expected and pessimistic
    H_end = H[C] if whole and {"expected", "pessimistic"} & set(rules) else None
    F = t["float"]
    for rule in rules:
        if rule == "expected":
            # frac = m / n (0 where n = 0), c2 = frac (m - 1) / (n - 1) (0 where n <= 1),
            # s = frac (B + 1) dH + c2 (L - (A + 1) dH), dH = H[A + L] - H[A].
            # r <= n: m / max(n, 1) is 0 where n = 0; (m - 1) / max(n - 1, 1) is 0 or
            # negative where n <= 1, and there frac or c2's second factor is 0 and the sum
            # adds a zero to the first term's +0: the values masked divisions give
            m, nn = F["r"], F["n"]
            dH = (H_end if whole else H[A + limit]) - HA
            frac = m / torch.clamp(nn, min=1.0)
            c2 = frac * ((m - 1.0) / torch.clamp(nn - 1.0, min=1.0))
            s = frac * (F["B"] + 1.0) * dH
            s = s + c2 * (F["limit"] - (F["A"] + 1.0) * dH)
            count = frac * F["limit"] if counts else None
        elif rule == "optimistic":
            # k = min(r, L) relevant take the group's first positions:
            # s = k + (B - A) (H[A + k] - H[A])
            k = r if whole else torch.minimum(r, limit)
            kf = F["r"] if whole else torch.minimum(F["r"], F["limit"])
            s = kf + (F["B"] - F["A"]) * (H[A + k] - HA)
            count = kf if counts else None
        elif rule == "pessimistic":
            # the group's last positions, from start = A + n - r: k = clip(L - (n - r), 0, r),
            # s = k + (B - start) (H[start + k] - H[start])
            start = C - r
            if whole:
                kf = F["r"]  # start + k is the end of the group
                dH = H_end - H[start]
            else:
                k = torch.clamp(torch.clamp(limit - (n - r), min=0), max=r)
                kf = k.to(f64)
                dH = H[start + k] - H[start]
            s = kf + (F["B"] - (F["A"] + F["n"] - F["r"])) * dH
            count = kf if counts else None
        else:
            raise ValueError(rule)
        out[rule] = (s, count)
    return out


def rule_sums(n, r, rules, topk: int | None, tables: dict | None = None, counts: bool = True):
    """Per query and tie rule: the sum of precisions at the relevant items inside the cut
    and, with ``counts``, the relevant items there (else None): ``{rule: (sums, counts)}``,
    the :func:`rule_terms` of each distance group added by :func:`fixed_sum`.

    >>> out = rule_sums(torch.tensor([[1, 2]]), torch.tensor([[1, 1]]), ("optimistic", "pessimistic"), None)
    >>> out["optimistic"][0].tolist(), out["pessimistic"][0].tolist()   # 1/1 + 2/2; 1/1 + 2/3
    ([2.0], [1.6666666666666667])
    """
    terms = rule_terms(n, r, rules, topk, tables, counts)
    return {
        rule: (fixed_sum(s, 1), None if c is None else fixed_sum(c, 1))
        for rule, (s, c) in terms.items()
    }


def ap_sums(n, r, ties: str, topk: int | None, tables: dict | None = None):
    """Per query: sum of precisions at relevant items (within the top k) and relevant count
    there, under one tie rule (:func:`rule_sums`), as numpy arrays.

    >>> s, c = ap_sums(np.array([[1, 2]]), np.array([[1, 1]]), "optimistic", None)
    >>> s.tolist(), c.tolist()   # relevant at ranks 1 and 2: 1/1 + 2/2
    ([2.0], [2.0])
    """
    s, c = rule_sums(n, r, (ties,), topk, tables)[ties]
    return s.cpu().numpy(), c.cpu().numpy()


def expected_ap_retrieved_norm(n, r, topk):
    """E[AP@k] with the legacy normalizer (relevant retrieved in the top k), ties random.

    Only the group the cut falls inside makes the normalizer random: the number ``c`` of
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
    s_full, _ = ap_sums(full_n, full_r, "expected", None)
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

    logp = (
        lchoose(mb[:, None], cv)
        + lchoose((nb - mb)[:, None], L[:, None] - cv)
        - lchoose(nb[:, None], L[:, None])
    )
    p = np.where(valid, np.exp(logp), 0.0)
    total = int(n.sum(axis=1).max(initial=0))
    H = harmonic_numbers(total + 1)
    Lc = L[:, None]
    Ai = ab.astype(np.int64)[:, None]
    dH = H[np.minimum(Ai + Lc.astype(np.int64), total + 1)] - H[Ai]
    frac = np.divide(cv, Lc, out=np.zeros_like(cv), where=Lc > 0)
    c2 = frac * np.divide(cv - 1, Lc - 1, out=np.zeros_like(cv), where=Lc > 1)
    s_cut = frac * (bb[:, None] + 1) * dH + c2 * (Lc - (ab[:, None] + 1) * dH)
    denom = c_full[:, None] + cv
    ratio = np.divide(s_full[:, None] + s_cut, denom, out=np.zeros_like(cv), where=denom > 0)
    return np.where(has_cut, (p * ratio).sum(axis=1), plain)
