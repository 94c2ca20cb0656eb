"""Bootstrap confidence intervals of the mean of per-query values.

The percentile bootstrap: draw ``B`` samples of the queries with replacement, take the
mean of each, and report the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
quantiles of those ``B`` means. All resamples are one matrix of query indices, drawn
once and shared by every measure, so the intervals of different measures come from the
same resampled query sets (as a paired comparison needs).

Reference: Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13
(percentile intervals); Sakai (2006), "Evaluating evaluation metrics based on the
bootstrap", SIGIR.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError

#: Resamples per block: bounds the memory of the (B, n) index matrix.
_BLOCK_CELLS = 4_000_000
#: Draws counted at a time within a block (a buffer of a few MB, reused: a fresh 32 MB array
#: per block costs its page faults again on every call).
_COUNT_CELLS = 1 << 18


def resampled_means(
    values: np.ndarray, weights: np.ndarray | None, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples of the rows of ``values`` (n, m).

    Each block of resamples draws row indices, counts how often each row was drawn (a
    (b, n) count matrix, filled a few resamples at a time into one buffer) and gets every
    resample's sum for every column by one matrix product per block -- far faster than
    gathering the (b, n, m) drawn values. ``weights`` (0/1 per cell, or None: every cell
    counts) marks the cells that count: a resample's mean is over its counted draws (NaN
    cells left out). Shared by the per-query CIs here and the paired difference CIs of
    :mod:`metrics_core.stats.significance`.
    """
    n, m = values.shape
    means = np.empty((n_resamples, m))
    block = max(1, min(n_resamples, _BLOCK_CELLS // max(n, 1)))
    if block * n >= 2**31:
        raise InputError(N_("too many queries for the bootstrap: {n}"), params={"n": n})
    sub = max(1, min(block, _COUNT_CELLS // max(n, 1)))
    offsets = (np.arange(sub, dtype=np.int32) * np.int32(n))[:, None]
    flat = np.empty((sub, n), dtype=np.int32)
    counts = np.empty((block, n))
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        picks = rng.integers(0, n, size=(rows, n), dtype=np.int32)
        for first in range(0, rows, sub):
            r = min(sub, rows - first)
            np.add(picks[first : first + r], offsets[:r], out=flat[:r])
            counts[first : first + r] = np.bincount(flat[:r].ravel(), minlength=r * n).reshape(r, n)
        sums = counts[:rows] @ values
        drawn = counts[:rows] @ weights if weights is not None else float(n)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[start : start + rows] = sums / drawn
    return means


def bootstrap_mean_ci(
    values, n_resamples: int = 2000, confidence: float = 0.95, seed: int | None = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[float, float, float]:
    """Mean and percentile-bootstrap confidence interval of each column of ``values``.

    .. math::

        \\bar x = \\frac{1}{n}\\sum_{i=1}^{n} x_i, \\qquad
        \\bar x^{*b} = \\frac{1}{n}\\sum_{i=1}^{n} x_{I_{b,i}},\\; I_{b,i} \\sim U\\{1..n\\}

        CI = [\\,q_{\\alpha/2}(\\bar x^{*}),\\; q_{1-\\alpha/2}(\\bar x^{*})\\,], \\quad
        \\alpha = 1 - \\text{confidence}

    Parameters
    ----------
    values : array-like, shape (n_queries,) or (n_queries, n_measures)
        Per-query values (rows are queries). NaN values are left out of their column:
        a resample's mean is over its non-NaN draws (a column that is all NaN gives NaN).
    n_resamples : int
        Number of bootstrap samples ``B`` (>= 1).
    confidence : float
        Coverage of the interval, in (0, 1).
    seed : int or None
        Seed of numpy's ``default_rng``; the same seed gives the same intervals.

    Returns
    -------
    mean, low, high : ndarrays of shape (n_measures,), or floats for 1-D input

    Notes
    -----
    Edge cases: no queries gives NaN everywhere; one query gives ``low == high ==``
    its value (every resample is that query). Quantiles use numpy's default linear
    interpolation.

    Examples
    --------
    >>> mean, low, high = bootstrap_mean_ci([0.0, 1.0, 1.0, 0.0], n_resamples=1000, seed=1)
    >>> float(mean), bool(0.0 <= low <= mean <= high <= 1.0)
    (0.5, True)
    >>> [float(v) for v in bootstrap_mean_ci([0.25], seed=0)]
    [0.25, 0.25, 0.25]
    """
    x = np.asarray(values, dtype=np.float64)
    one_d = x.ndim == 1
    if one_d:
        x = x[:, None]
    if x.ndim != 2:
        raise InputError(
            N_("expected a 1-D or 2-D array of per-query values, got {n} dimensions"),
            params={"n": x.ndim},
        )
    if not 0.0 < float(confidence) < 1.0:
        raise InputError(
            N_("confidence must be between 0 and 1, got {value!r}"), params={"value": confidence}
        )
    if int(n_resamples) < 1:
        raise InputError(
            N_("n_resamples must be at least 1, got {value!r}"), params={"value": n_resamples}
        )
    n, m = x.shape
    nan = np.full(m, np.nan)
    if n == 0:
        if one_d:
            return float("nan"), float("nan"), float("nan")
        return nan, nan.copy(), nan.copy()
    finite = ~np.isnan(x)
    filled = np.where(finite, x, 0.0)
    finite_f = finite.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / finite.sum(axis=0)
    # without NaN every draw counts: the divisor is n (what the 0/1 weights would sum to)
    weights = None if finite.all() else finite_f
    means = resampled_means(filled, weights, int(n_resamples), np.random.default_rng(seed))
    alpha = 1.0 - float(confidence)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN
        low = np.nanquantile(means, alpha / 2, axis=0)
        high = np.nanquantile(means, 1 - alpha / 2, axis=0)
    if one_d:
        return float(mean[0]), float(low[0]), float(high[0])
    return mean, low, high


def bootstrap_table(
    per_query: pd.DataFrame, n_resamples: int = 2000, confidence: float = 0.95, seed: int | None = 0
) -> pd.DataFrame:
    """Mean, median and bootstrap CI of every numeric column of a per-query table.

    Returns a DataFrame indexed by measure with columns ``mean``, ``median``,
    ``ci_low``, ``ci_high`` and ``queries`` (non-NaN values per measure).

    Examples
    --------
    >>> pq = pd.DataFrame({"RR": [1.0, 0.5, 0.0]}, index=["a", "b", "c"])
    >>> t = bootstrap_table(pq, n_resamples=500, seed=0)
    >>> list(t.columns), float(t.loc["RR", "mean"]), float(t.loc["RR", "median"])
    (['mean', 'median', 'ci_low', 'ci_high', 'queries'], 0.5, 0.5)
    """
    numeric = per_query.select_dtypes(include=[np.number])
    mean, low, high = bootstrap_mean_ci(
        numeric.to_numpy(dtype=np.float64), n_resamples, confidence, seed
    )
    return pd.DataFrame(
        {
            "mean": mean,
            "median": numeric.median(skipna=True).to_numpy(),
            "ci_low": low,
            "ci_high": high,
            "queries": numeric.notna().sum().to_numpy(),
        },
        index=pd.Index(numeric.columns, name="measure"),
    )


def shared_mean_intervals(
    tables: dict, names: list, n_resamples: int, confidence: float, seed: int
) -> dict:
    """Mean, percentile-bootstrap CI and median of every run on every measure's table.

    Measures whose tables hold the same queries (in the common case, all of them) are
    bootstrapped together: one call of :func:`~metrics_core.stats.bootstrap.bootstrap_mean_ci`
    on the (queries x runs*measures) matrix, so the resampled query sets are drawn once and
    shared. They are the very sets a separate call per measure draws (same seed, same
    number of queries), so the intervals are those of the per-measure definition; only the
    order of floating-point additions in the one matrix product may differ (~1e-16).

    Parameters
    ----------
    tables : dict
        Measure -> DataFrame of per-query values (index query ids, one column per run, no NaN).
    names : list of str
        The run columns, in the order of the output arrays.
    n_resamples, confidence, seed :
        As :func:`bootstrap_mean_ci`.

    Returns
    -------
    dict
        Measure -> ``(mean, ci_lo, ci_hi, median)``, four arrays aligned with ``names``
        (NaN for a measure without queries).

    Examples
    --------
    >>> t = pd.DataFrame({"a": [0.0, 1.0], "b": [1.0, 1.0]}, index=["q1", "q2"])
    >>> mean, lo, hi, median = shared_mean_intervals({"AP": t}, ["a", "b"], 200, 0.95, 0)["AP"]
    >>> mean.tolist(), hi.tolist(), median.tolist()
    ([0.5, 1.0], [1.0, 1.0], [0.5, 1.0])
    """
    groups: list[tuple[pd.Index, list[str]]] = []
    for m, table in tables.items():
        for index, members in groups:
            if table.index.equals(index):
                members.append(m)
                break
        else:
            groups.append((table.index, [m]))
    k = len(names)
    out = {}
    for index, members in groups:
        if not len(index):
            empty = np.full(k, np.nan)
            out.update({m: (empty, empty, empty, empty) for m in members})
            continue
        values = np.column_stack([tables[m][names].to_numpy(dtype=np.float64) for m in members])
        # 2-D values: three arrays (asarray states it for the checker; no copy)
        mean, lo, hi = map(np.asarray, bootstrap_mean_ci(values, n_resamples, confidence, seed))
        median = np.median(values, axis=0)
        for j, m in enumerate(members):
            part = slice(j * k, (j + 1) * k)
            out[m] = (mean[part], lo[part], hi[part], median[part])
    return out


def bca_interval(replicates, estimate: float, confidence: float = 0.95, jackknife=None) -> dict:
    r"""Bias-corrected (BC) or bias-corrected and accelerated (BCa) bootstrap interval.

    With bootstrap replicates :math:`\hat\theta^{*1..B}` of an estimate :math:`\hat\theta`:

    .. math::

        z_0 = \Phi^{-1}\!\Big(\frac{\#\{\hat\theta^{*b} < \hat\theta\}
              + \tfrac12\#\{\hat\theta^{*b} = \hat\theta\}}{B}\Big), \qquad
        \alpha_{1,2} = \Phi\!\Big(z_0 + \frac{z_0 + z_{\alpha/2,\,1-\alpha/2}}
              {1 - a\,(z_0 + z_{\alpha/2,\,1-\alpha/2})}\Big)

    and the interval is the :math:`\alpha_1` and :math:`\alpha_2` quantiles of the
    replicates. The acceleration :math:`a` comes from the jackknife values
    :math:`\hat\theta_{(i)}` (leave one item out) when given,
    :math:`a = \sum_i (\bar\theta_{(\cdot)} - \hat\theta_{(i)})^3 / (6\,[\sum_i
    (\bar\theta_{(\cdot)} - \hat\theta_{(i)})^2]^{3/2})` -- the BCa interval; without
    them :math:`a = 0` -- the bias-corrected percentile (BC) interval. The proportion
    inside :math:`\Phi^{-1}` is kept within :math:`[1/(2B), 1 - 1/(2B)]` so that
    :math:`z_0` stays finite.

    Unlike the plain percentile interval, the correction :math:`z_0` moves the interval
    towards the estimate when the replicates sit on one side of it (a statistic biased
    under resampling). When :math:`|z_0|` exceeds :math:`z_{1-\alpha/2}` even the
    corrected interval may exclude the estimate; ``contains`` says whether it holds it,
    and a caller should then not show the interval as one for that estimate.

    Returns
    -------
    dict: ``low``, ``high``, ``method`` ("BCa" or "BC"), ``z0``, ``acceleration``,
    ``contains`` (``low <= estimate <= high``).

    References
    ----------
    Efron (1987), "Better bootstrap confidence intervals", JASA 82:171-185; Efron &
    Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 14.

    Examples
    --------
    >>> r = bca_interval(np.linspace(0.0, 1.0, 101), 0.5)
    >>> round(r["low"], 3), round(r["high"], 3), r["method"], r["contains"]
    (0.025, 0.975, 'BC', True)
    """
    from scipy.stats import norm

    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[~np.isnan(reps)]
    b = reps.size
    alpha = 1.0 - float(confidence)
    if b == 0 or not np.isfinite(estimate):
        return {
            "low": np.nan,
            "high": np.nan,
            "method": "BC",
            "z0": np.nan,
            "acceleration": 0.0,
            "contains": False,
        }
    below = (np.count_nonzero(reps < estimate) + 0.5 * np.count_nonzero(reps == estimate)) / b
    z0 = float(norm.ppf(np.clip(below, 0.5 / b, 1 - 0.5 / b)))
    a = 0.0
    method = "BC"
    if jackknife is not None:
        jk = np.asarray(jackknife, dtype=np.float64)
        d = jk.mean() - jk
        denom = 6.0 * np.sum(d * d) ** 1.5
        a = float(np.sum(d**3) / denom) if denom > 0 else 0.0
        method = "BCa"
    z = norm.ppf([alpha / 2, 1 - alpha / 2])
    levels = norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    low, high = (float(v) for v in np.quantile(reps, levels))
    return {
        "low": low,
        "high": high,
        "method": method,
        "z0": z0,
        "acceleration": a,
        "contains": bool(low <= estimate <= high),
    }
