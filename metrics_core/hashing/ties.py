"""Average precision from distance histograms under each tie rule (the closed forms of
the package docstring): no sort, only per-query counts and harmonic numbers.
"""

from __future__ import annotations

import numpy as np

_HARMONIC = np.zeros(1)


def harmonic_numbers(n_max: int) -> np.ndarray:
    """H[i] = 1 + 1/2 + ... + 1/i for i = 0..n_max (H[0] = 0), read-only.

    The longest table made so far is kept and sliced: a cumulative sum is sequential, so a
    prefix of a longer table holds the same values (a database of a million items needs a
    table of a million; an evaluation per training epoch makes it once)."""
    global _HARMONIC
    if len(_HARMONIC) <= n_max:
        table = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, n_max + 1, dtype=np.float64))))
        table.flags.writeable = False
        _HARMONIC = table
    return _HARMONIC[: n_max + 1]


def tie_tables(n: np.ndarray, r: np.ndarray, topk: int | None, H: np.ndarray | None = None) -> dict:
    """What the tie rules' AP sums share, computed once for all of them: items and
    relevant items before each distance group (``A``, ``B``), the harmonic numbers ``H``
    (given, or made for the longest row) and ``H[A]``, and the positions of each group
    inside the cut (``limit``).

    >>> t = tie_tables(np.array([[1, 2]]), np.array([[1, 0]]), None)
    >>> t["A"].tolist(), t["B"].tolist(), t["limit"].tolist()
    ([[0, 1]], [[0, 1]], [[1, 2]])
    """
    A = np.cumsum(n, axis=1) - n  # items before each group
    B = np.cumsum(r, axis=1) - r  # relevant items before each group
    if H is None:
        H = harmonic_numbers(int(n.sum(axis=1).max(initial=0)) + 1)
    limit = n if topk is None else np.clip(topk - A, 0, n)  # positions of the group inside the cut
    return {"A": A, "B": B, "H": H, "HA": H[A], "limit": limit}


def ap_sums(n: np.ndarray, r: np.ndarray, ties: str, topk: int | None, tables: dict | None = None):
    """Per query: sum of precisions at relevant items (within the top k) and relevant count there.

    ``tables`` (from :func:`tie_tables` for the same ``n, r, topk``) saves recomputing
    what the rules share when several are asked.

    >>> s, c = ap_sums(np.array([[1, 2]]), np.array([[1, 1]]), "optimistic", None)
    >>> s.tolist(), c.tolist()   # relevant at ranks 1 and 2: 1/1 + 2/2
    ([2.0], [2.0])
    """
    t = tie_tables(n, r, topk) if tables is None else tables
    A, B, H, HA, limit = t["A"], t["B"], t["H"], t["HA"], t["limit"]
    if ties == "expected":
        m = r.astype(np.float64)
        nn = n.astype(np.float64)
        L = limit
        dH = H[A + L] - HA
        frac = np.divide(m, nn, out=np.zeros_like(m), where=nn > 0)
        c2 = frac * np.divide(m - 1, nn - 1, out=np.zeros_like(m), where=nn > 1)
        s = frac * (B + 1) * dH + c2 * (L - (A + 1) * dH)
        count = frac * L  # expected relevant inside the cut
    elif ties == "optimistic":
        k = np.minimum(r, limit)  # relevant take the first positions of the group
        s = k + (B - A) * (H[A + k] - HA)
        count = k.astype(np.float64)
    elif ties == "pessimistic":
        start = A + n - r  # relevant take the last positions of the group
        k = np.clip(limit - (n - r), 0, r)
        s = k + (B - start) * (H[start + k] - H[start])
        count = k.astype(np.float64)
    else:
        raise ValueError(ties)
    return s.sum(axis=1), count.sum(axis=1)


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
