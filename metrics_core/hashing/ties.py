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
    """What the tie rules' AP sums share, computed once for all of them: items up to and
    including each distance group (``C``), items and relevant items before it (``A``,
    ``B``), the harmonic numbers ``H`` (given, or made for the longest row) and ``H[A]``,
    and the positions of each group inside the cut (``limit``).

    >>> t = tie_tables(np.array([[1, 2]]), np.array([[1, 0]]), None)
    >>> t["A"].tolist(), t["B"].tolist(), t["limit"].tolist(), t["C"].tolist()
    ([[0, 1]], [[0, 1]], [[1, 2]], [[1, 3]])
    """
    C = np.cumsum(n, axis=1)  # items up to and including each group
    A = C - n  # items before each group
    B = np.cumsum(r, axis=1)
    B -= r  # relevant items before each group
    if H is None:
        H = harmonic_numbers(int(n.sum(axis=1).max(initial=0)) + 1)
    limit = n if topk is None else np.clip(topk - A, 0, n)  # positions of the group inside the cut
    return {"A": A, "B": B, "C": C, "H": H, "HA": np.take(H, A), "limit": limit, "topk": topk}


def rule_sums(
    n: np.ndarray,
    r: np.ndarray,
    rules,
    topk: int | None,
    tables: dict | None = None,
    counts: bool = True,
) -> dict:
    """Per query and tie rule: the sum of precisions at the relevant items inside the cut
    (the top ``topk``, or the whole ranking) and, with ``counts``, the relevant items there
    (else None): ``{rule: (sums, counts)}`` for each rule of ``rules`` (expected,
    optimistic, pessimistic), the closed forms of the package docstring.

    ``n`` and ``r`` are distance histograms (int64, queries x distances, ``0 <= r <= n``).
    The rules share ``tables`` (:func:`tie_tables`), and with the whole ranking (no
    ``topk``) their harmonic-number look-ups too: every rule's value is computed by the
    same floating-point operations whichever others are asked, so each number is the same
    bit for bit.

    >>> out = rule_sums(np.array([[1, 2]]), np.array([[1, 1]]), ("optimistic", "pessimistic"), None)
    >>> out["optimistic"][0].tolist(), out["pessimistic"][0].tolist()   # 1/1 + 2/2; 1/1 + 2/3
    ([2.0], [1.6666666666666667])
    """
    t = tie_tables(n, r, topk) if tables is None else tables
    A, B, C, H, HA, limit = t["A"], t["B"], t["C"], t["H"], t["HA"], t["limit"]
    whole = t["topk"] is None  # every item is inside the cut: limit is n
    f64 = np.float64
    out = {}
    # H at the end of each group (whole ranking), shared by expected and pessimistic
    H_end = np.take(H, C) if whole and {"expected", "pessimistic"} & set(rules) else HA[:0]
    # In place, in the operations' own order: each value below is the one the plain
    # expressions in the comments give, bit for bit (integers convert to float64 exactly).
    for rule in rules:
        if rule == "expected":
            # frac = m / n (0 where n = 0), c2 = frac (m - 1) / (n - 1) (0 where n <= 1),
            # s = frac (B + 1) dH + c2 (L - (A + 1) dH), dH = H[A + L] - H[A]
            m = r.astype(f64)
            nn = n.astype(f64)
            if whole:
                dH = np.subtract(H_end, HA)
            else:
                dH = np.take(H, A + limit)
                dH -= HA
            # r <= n: m / max(n, 1) is 0 where n = 0; (m - 1) / max(n - 1, 1) is 0 or
            # negative where n <= 1, and there frac or c2's second factor is 0 and the sum
            # adds a zero to the first term's +0: the values the masked divisions gave
            frac = np.maximum(nn, 1.0)
            np.divide(m, frac, out=frac)
            np.subtract(nn, 1.0, out=nn)
            np.maximum(nn, 1.0, out=nn)
            np.subtract(m, 1.0, out=m)
            np.divide(m, nn, out=m)
            c2 = np.multiply(frac, m, out=m)
            s = np.add(B, 1.0)
            np.multiply(frac, s, out=s)
            s *= dH
            second = np.add(A, 1.0, out=nn)
            second *= dH
            np.subtract(limit, second, out=second)
            second *= c2
            s += second
            count = (frac * limit).sum(axis=1) if counts else None
        elif rule == "optimistic":
            # k = min(r, L) relevant take the group's first positions:
            # s = k + (B - A) (H[A + k] - H[A])
            k = r if whole else np.minimum(r, limit)
            s = np.take(H, A + k)
            s -= HA
            np.multiply(B - A, s, out=s)
            np.add(k, s, out=s)
            count = k.sum(axis=1).astype(f64) if counts else None
        elif rule == "pessimistic":
            # the group's last positions, from start = A + n - r: k = clip(L - (n - r), 0, r),
            # s = k + (B - start) (H[start + k] - H[start])
            start = C - r
            if whole:
                k = r  # start + k is the end of the group
                s = np.subtract(H_end, np.take(H, start))
            else:
                k = np.clip(limit - (n - r), 0, r)
                s = np.take(H, start + k)
                s -= np.take(H, start)
            np.multiply(B - start, s, out=s)
            np.add(k, s, out=s)
            count = k.sum(axis=1).astype(f64) if counts else None
        else:
            raise ValueError(rule)
        out[rule] = (s.sum(axis=1), count)
    return out


def ap_sums(n: np.ndarray, r: np.ndarray, ties: str, topk: int | None, tables: dict | None = None):
    """Per query: sum of precisions at relevant items (within the top k) and relevant count
    there, under one tie rule (:func:`rule_sums`).

    >>> s, c = ap_sums(np.array([[1, 2]]), np.array([[1, 1]]), "optimistic", None)
    >>> s.tolist(), c.tolist()   # relevant at ranks 1 and 2: 1/1 + 2/2
    ([2.0], [2.0])
    """
    return rule_sums(n, r, (ties,), topk, tables)[ties]


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
