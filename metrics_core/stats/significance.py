"""Paired significance tests, confidence intervals and multiple-comparison corrections.

Every function works on *paired* per-query values: two systems measured on the same
queries. :func:`paired_values` builds the common query set (the intersection of the two
indexes, in sorted order) and reports it; every other function takes plain arrays that are
already aligned.

Conventions (chosen once, used everywhere):

* differences are ``d = run - baseline``; a positive mean favours the run;
* tests are two-sided;
* a test on fewer than two paired queries returns NaN (nothing can be said);
* when every difference is zero (within :data:`TIE_TOLERANCE`) the two systems are
  indistinguishable on these queries and every test returns ``p = 1.0`` (scipy's
  t-test would return NaN, its Wilcoxon would warn or fail);
* the permutation test and the bootstrap are seeded: the same seed and the same number of
  paired queries give the same random draws, whichever other comparisons are computed in
  the same call, so p-values and intervals are reproducible across calls.

References
----------
Smucker, Allan and Carterette (2007), "A comparison of statistical significance tests for
information retrieval evaluation", CIKM. Holm (1979), Scand. J. Statistics 6:65-70.
Benjamini and Hochberg (1995), JRSS B 57:289-300. Efron and Tibshirani (1993),
"An Introduction to the Bootstrap" (percentile intervals).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.stats.bootstrap import resampled_means

#: Two per-query values closer than this are a tie (win/tie/loss counts, all-zero check).
#: Measures are ratios of small integers computed in float64; genuine differences are
#: far larger than 1e-9, rounding noise far smaller.
TIE_TOLERANCE = 1e-9

#: Relative slack when comparing a permuted |mean| with the observed one: sign flips that
#: reproduce the observed sum in another order of additions count as "as extreme".
PERMUTATION_RTOL = 1e-9

CORRECTIONS = ("holm", "bonferroni", "bh", "none")

# Elements of one block of random draws (sign matrix or bootstrap indices): bounds memory
# at a few tens of MB whatever the number of queries.
_BLOCK_ELEMENTS = 1 << 23
#: Sign bits unpacked at a time into the block's buffer.
_UNPACK_ELEMENTS = 1 << 18


def paired_values(baseline: pd.Series, run: pd.Series) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Align two per-query series on their common query ids.

    Parameters
    ----------
    baseline, run : pandas.Series
        Per-query values indexed by query id. NaN values are dropped first.

    Returns
    -------
    base, other : ndarray of float64
        Values on the common query set, in sorted query-id order.
    common : pandas.Index
        The common query ids (report ``len(common)`` as the number of paired queries).

    Examples
    --------
    >>> b = pd.Series([0.5, 1.0, 0.0], index=["q1", "q2", "q3"])
    >>> r = pd.Series([1.0, 0.0], index=["q3", "q2"])
    >>> base, run, common = paired_values(b, r)
    >>> list(common), base.tolist(), run.tolist()
    (['q2', 'q3'], [1.0, 0.0], [0.0, 1.0])
    """
    b = baseline.dropna()
    r = run.dropna()
    common = b.index.intersection(r.index).sort_values()
    return (
        b.loc[common].to_numpy(dtype=np.float64),
        r.loc[common].to_numpy(dtype=np.float64),
        common,
    )


def _differences(baseline, run) -> np.ndarray:
    base = np.asarray(baseline, dtype=np.float64)
    other = np.asarray(run, dtype=np.float64)
    if base.shape != other.shape or base.ndim != 1:
        raise InputError(
            N_(
                "paired values must be two 1-D arrays of equal length, got shapes "
                "{shape} and {other}"
            ),
            hint=N_("align them with paired_values"),
            params={"shape": base.shape, "other": other.shape},
        )
    return other - base


def _all_zero(d: np.ndarray) -> bool:
    return bool(np.all(np.abs(d) <= TIE_TOLERANCE))


def paired_t_test(baseline, run) -> float:
    """Two-sided paired t-test p-value (scipy.stats.ttest_rel).

    ``t = mean(d) / (sd(d) / sqrt(n))`` with ``d = run - baseline``, ``sd`` with ``ddof=1``,
    ``n - 1`` degrees of freedom.

    Returns NaN for fewer than two pairs and 1.0 when every difference is zero.

    Examples
    --------
    >>> round(paired_t_test([0.1, 0.2, 0.3, 0.4], [0.2, 0.4, 0.3, 0.6]), 4)
    0.0796
    >>> paired_t_test([0.5, 0.5], [0.5, 0.5])
    1.0
    """
    d = _differences(baseline, run)
    if d.size < 2:
        return float("nan")
    if _all_zero(d):
        return 1.0
    from scipy import stats  # here, not at import: scipy.stats costs ~0.6 s to import

    return float(stats.ttest_rel(np.asarray(run, float), np.asarray(baseline, float)).pvalue)


def wilcoxon_test(baseline, run, zero_method: str = "wilcox") -> float:
    """Two-sided Wilcoxon signed-rank p-value, as ``scipy.stats.wilcoxon(d)`` computes it.

    ``zero_method="wilcox"`` (scipy's default, Wilcoxon's original rule) ranks only the
    non-zero differences: a query on which the systems agree is no evidence either way.
    The method follows scipy's ``method="auto"`` rule on the ``n`` differences: more than
    50 -> normal approximation (tie-corrected, continuity-corrected); no ties and no zeros ->
    exact distribution; ties or zeros with ``n <= 13`` -> exact sign-flip distribution of
    the rank sum over all ``2**n`` sign vectors (computed here in one vectorised pass,
    where scipy runs a generic permutation test that takes seconds); otherwise the normal
    approximation. The p-value equals scipy's in every case (tests check it).

    Returns NaN for fewer than two pairs and 1.0 when every difference is zero.

    Examples
    --------
    >>> round(wilcoxon_test([0.1, 0.2, 0.3, 0.4, 0.5], [0.3, 0.5, 0.2, 0.9, 0.8]), 4)
    0.125
    """
    d = _differences(baseline, run)
    if d.size < 2:
        return float("nan")
    if _all_zero(d):
        return 1.0
    nonzero = d[d != 0]
    has_ties = np.unique(np.abs(nonzero)).size < nonzero.size
    if d.size <= 13 and (has_ties or nonzero.size < d.size) and zero_method == "wilcox":
        return _signed_rank_sign_flip_p(d)
    method = "asymptotic" if d.size > 50 or has_ties or nonzero.size < d.size else "exact"
    from scipy import stats

    return float(stats.wilcoxon(d, zero_method=zero_method, method=method).pvalue)


def _signed_rank_sign_flip_p(d: np.ndarray) -> float:
    """Exact two-sided p of the rank sum R+ over all 2**n sign flips (zeros unranked)."""
    from scipy import stats

    nonzero = d != 0
    ranks = np.zeros(d.size)
    ranks[nonzero] = stats.rankdata(np.abs(d[nonzero]))
    observed = ranks[d > 0].sum()
    n = d.size
    # Row j of `positive` marks which differences are positive under sign vector j; the
    # identity vector is among the 2**n rows. Zero differences stay zero whatever the sign.
    flips = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
    positive = np.where(flips, d < 0, d > 0)
    null = positive.astype(np.float64) @ ranks
    # Rank sums are multiples of 0.5: exact in float64, no tolerance needed.
    p = 2.0 * min(np.mean(null <= observed), np.mean(null >= observed))
    return float(min(1.0, p))


def _rng(seed, stream: int) -> np.random.Generator:
    # Independent streams for the permutation test and the bootstrap from one user seed.
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(entropy=seed, spawn_key=(stream,)))
    )


def permutation_test(
    baseline, run, n_permutations: int = 10000, seed: int = 0
) -> np.ndarray | float:
    """Two-sided paired randomization (sign-flip) test.

    Under the null hypothesis the label of each pair is exchangeable, so each difference
    ``d_i`` is equally likely to have either sign. ``n_permutations`` random sign vectors
    ``s`` (uniform in {-1, +1}^n) give permuted means ``mean(s * d)``;
    ``b`` counts those with ``|mean(s * d)| >= |mean(d)| * (1 - 1e-9) - 1e-15`` (the
    slack absorbs rounding, see :data:`PERMUTATION_RTOL`) and

        p = (b + 1) / (n_permutations + 1),

    the unbiased Monte Carlo p-value (Phipson and Smyth, 2010), never 0.

    Parameters
    ----------
    baseline, run : array-like, shape (n,) or (n, k)
        Aligned paired values; with 2-D input each column is one comparison and all
        columns share the same sign vectors (one matrix product per block).
    n_permutations : int
    seed : int
        Same seed and same ``n`` give the same sign vectors, hence the same p. Sign ``i``
        goes to row ``i``: align the rows the same way each time (:func:`paired_values`
        sorts query ids) for the p-value to be reproducible.

    Returns
    -------
    float or ndarray of shape (k,)
        NaN for fewer than two pairs, 1.0 when every difference of a column is zero.

    Examples
    --------
    >>> p1 = permutation_test([0.1, 0.2, 0.3, 0.4], [0.3, 0.5, 0.2, 0.9], 2000, seed=7)
    >>> p2 = permutation_test([0.1, 0.2, 0.3, 0.4], [0.3, 0.5, 0.2, 0.9], 2000, seed=7)
    >>> p1 == p2
    True
    """
    base = np.asarray(baseline, dtype=np.float64)
    other = np.asarray(run, dtype=np.float64)
    single = base.ndim == 1
    d: np.ndarray | None = (
        _differences(base.ravel(), other.ravel()).reshape(base.shape)
        if base.shape == other.shape
        else None
    )
    if d is None:
        raise InputError(
            N_("paired values must have equal shapes, got {shape} and {other}"),
            params={"shape": base.shape, "other": other.shape},
        )
    if single:
        d = d[:, None]
    n, k = d.shape
    if n_permutations < 1:
        raise InputError(
            N_("the number of permutations must be at least 1, got {n}"),
            params={"n": n_permutations},
        )
    if n < 2:
        out = np.full(k, np.nan)
        return float(out[0]) if single else out
    total = d.sum(axis=0)
    observed = np.abs(total)
    threshold = observed * (1.0 - PERMUTATION_RTOL) - 1e-15
    counts = np.zeros(k, dtype=np.int64)
    rng = _rng(seed, 0)
    nbytes = (n + 7) // 8
    block = max(1, min(n_permutations, _BLOCK_ELEMENTS // max(n, 1)))
    sub = max(1, min(block, _UNPACK_ELEMENTS // max(n, 1)))
    bits = np.empty((block, n))  # one buffer for every block (a fresh one is page-faulted again)
    done = 0
    while done < n_permutations:
        rows = min(block, n_permutations - done)
        # One random bit per (permutation, query): bit 1 flips the sign. With bits b,
        # sum(s * d) = sum(d) - 2 * (b @ d), a single BLAS product per block.
        packed = rng.integers(0, 256, size=(rows, nbytes), dtype=np.uint8)
        for first in range(0, rows, sub):
            bits[first : first + sub][: rows - first] = np.unpackbits(
                packed[first : first + sub], axis=1, count=n
            )
        flipped = total - 2.0 * (bits[:rows] @ d)
        counts += (np.abs(flipped) >= threshold).sum(axis=0)
        done += rows
    p = (counts + 1.0) / (n_permutations + 1.0)
    p[np.all(np.abs(d) <= TIE_TOLERANCE, axis=0)] = 1.0
    return float(p[0]) if single else p


def bootstrap_ci(
    baseline, run, confidence: float = 0.95, n_resamples: int = 10000, seed: int = 0
) -> np.ndarray:
    """Paired bootstrap percentile interval of the mean difference ``mean(run - baseline)``.

    Queries are resampled with replacement ``n_resamples`` times (the same resampled query
    sets for every column of 2-D input); the interval is the ``(1-c)/2`` and ``(1+c)/2``
    quantiles of the resampled means (numpy's linear interpolation).

    Returns
    -------
    ndarray, shape (2,) or (k, 2)
        ``[lo, hi]``; NaN for fewer than two pairs.

    Examples
    --------
    >>> lo, hi = bootstrap_ci([0.1, 0.2, 0.3, 0.4], [0.3, 0.5, 0.2, 0.9], seed=1)
    >>> bool(lo <= 0.225 <= hi)
    True
    """
    base = np.asarray(baseline, dtype=np.float64)
    other = np.asarray(run, dtype=np.float64)
    if base.shape != other.shape:
        raise InputError(
            N_("paired values must have equal shapes, got {shape} and {other}"),
            params={"shape": base.shape, "other": other.shape},
        )
    if not 0 < confidence < 1:
        raise InputError(
            N_("confidence must be between 0 and 1, got {value}"), params={"value": confidence}
        )
    single = base.ndim == 1
    d = (other - base)[:, None] if single else other - base
    n, k = d.shape
    if n < 2:
        out = np.full((k, 2), np.nan)
        return out[0] if single else out
    means = resampled_means(d, None, int(n_resamples), _rng(seed, 1))
    alpha = (1.0 - confidence) / 2.0
    out = np.quantile(means, [alpha, 1.0 - alpha], axis=0).T
    return out[0] if single else out


def effect_size(baseline, run) -> float:
    """Cohen's d for paired samples (often written d_z): ``mean(d) / sd(d)``, ``sd`` with
    ``ddof=1``, ``d = run - baseline``.

    0.0 when every difference is zero; NaN for fewer than two pairs or when the differences
    are all equal but not zero (the spread is zero, the ratio undefined).

    Examples
    --------
    >>> round(effect_size([0.1, 0.2, 0.3], [0.2, 0.4, 0.3]), 4)
    1.0
    """
    d = _differences(baseline, run)
    if d.size < 2:
        return float("nan")
    if _all_zero(d):
        return 0.0
    sd = d.std(ddof=1)
    # A spread within rounding noise is no spread: the ratio would be noise / noise.
    return float(d.mean() / sd) if sd > TIE_TOLERANCE else float("nan")


def win_tie_loss(baseline, run, tolerance: float = TIE_TOLERANCE) -> tuple[int, int, int]:
    """Counts of queries where ``run`` beats, ties (``|d| <= tolerance``) and loses to ``baseline``.

    >>> win_tie_loss([0.1, 0.5, 0.3], [0.2, 0.5, 0.0])
    (1, 1, 1)
    """
    d = _differences(baseline, run)
    wins = int(np.sum(d > tolerance))
    losses = int(np.sum(d < -tolerance))
    return wins, int(d.size - wins - losses), losses


def correct_pvalues(pvalues, method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons.

    * ``bonferroni``: ``min(1, m p_i)``;
    * ``holm`` (step-down): with ``p_(1) <= ... <= p_(m)``, adjusted
      ``p~_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))``;
    * ``bh`` (Benjamini-Hochberg step-up, false discovery rate):
      ``p~_(i) = min(1, min_{j >= i} m p_(j) / j)``;
    * ``none``: unchanged.

    ``m`` counts the non-NaN p-values; NaN stays NaN.

    Examples
    --------
    >>> correct_pvalues([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> correct_pvalues([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if method not in CORRECTIONS:
        raise InputError(
            N_("unknown correction {correction!r}"),
            hint=N_("accepted: {choices}"),
            params={"correction": method, "choices": ", ".join(CORRECTIONS)},
        )
    out = p.copy()
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if method == "none" or m == 0:
        return out
    q = p[ok]
    if method == "bonferroni":
        out[ok] = np.minimum(1.0, q * m)
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    i = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate((m - i + 1) * ranked)
    else:  # bh
        adj = np.minimum.accumulate((m * ranked / i)[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, adj)
    out[ok] = adjusted
    return out


__all__ = [
    "TIE_TOLERANCE",
    "CORRECTIONS",
    "paired_values",
    "paired_t_test",
    "wilcoxon_test",
    "permutation_test",
    "bootstrap_ci",
    "effect_size",
    "win_tie_loss",
    "correct_pvalues",
]
