"""How many queries a comparison needs: topic set size design for the paired t-test.

Two systems compared on n queries by a two-sided paired t-test at level alpha: the test
statistic follows a noncentral t distribution with n - 1 degrees of freedom and
noncentrality ``sqrt(n) * delta / sigma``, where delta is the true mean difference and sigma
the standard deviation of the per-query differences. Its power is

    P(T >= t_{1-alpha/2, n-1}) + P(T <= -t_{1-alpha/2, n-1}),  T ~ t'(n - 1, sqrt(n) delta / sigma)

computed exactly here (scipy's noncentral t). From it:

* :func:`queries_needed`: the smallest n whose power reaches the target (0.8 by default)
  for a difference delta (the observed one, or one chosen), sigma estimated from the
  observed per-query differences (Webber, Moffat & Zobel, CIKM 2008, estimate it from the
  deltas of the systems compared);
* :func:`min_detectable`: the smallest difference the current n detects with that power.

This is the paired-t-test method of T. Sakai, Topic set size design, Information Retrieval
Journal 19(3), 2016 (after Nagata 2003). Sakai's Excel tool (samplesizeTTEST2) and the tables
built with it start from the normal approximation ``n = ((z_{1-alpha/2} + z_{1-beta}) /
Delta)^2 + z_{1-alpha/2}^2 / 2`` and check each candidate n with Nagata's normal
approximation of the noncentral t (``method="nagata"`` reproduces it); the default
``method="exact"`` uses the noncentral t itself. The two agree but for a query or two near
the boundary.

References: T. Sakai, Topic set size design, Information Retrieval Journal 19(3):256-283,
2016. W. Webber, A. Moffat, J. Zobel, Statistical power in retrieval experimentation,
CIKM 2008. Y. Nagata, How to design the sample size (in Japanese), Asakura Shoten, 2003.
"""

from __future__ import annotations

import math

import numpy as np

#: how the power is computed: the noncentral t itself, or Nagata's normal approximation
#: of it (Sakai's samplesizeTTEST2)
METHODS = ("exact", "nagata")
#: the method and its references, in one line (what every output states)
METHOD_TEXT = (
    "two-sided paired t-test, power from the noncentral t distribution, sigma the standard "
    "deviation of the per-query differences (T. Sakai, Topic set size design, Information "
    "Retrieval Journal 19(3), 2016; W. Webber, A. Moffat, J. Zobel, Statistical power in "
    "retrieval experimentation, CIKM 2008)"
)
#: the most queries :func:`queries_needed` looks for
MAX_QUERIES = 10_000_000
#: beyond this count (2**53, where a float stops telling n from n + 1; about 1e-7 standard
#: deviations of difference) :func:`queries_needed` answers ``inf``
MAX_COUNT = 2**53


def power(n, effect, alpha: float = 0.05, method: str = "exact"):
    """Power of the two-sided paired t-test on ``n`` queries for the standardised
    difference ``effect`` = delta / sigma (arrays broadcast; n >= 2).

    >>> round(float(power(34, 0.5)), 4), round(float(power(34, 0.5, method="nagata")), 4)
    (0.8078, 0.8077)
    """
    from scipy import stats

    n = np.asarray(n, dtype=np.float64)
    effect = np.abs(np.asarray(effect, dtype=np.float64))
    df = n - 1.0
    crit = stats.t.ppf(1.0 - alpha / 2.0, df)
    lam = np.sqrt(n) * effect
    if method == "exact":
        # the lower tail as the upper tail of -lambda (scipy's cdf gives NaN far in the tail)
        return stats.nct.sf(crit, df, lam) + stats.nct.sf(crit, df, -lam)
    if method != "nagata":
        raise ValueError(f"method must be one of {METHODS}")
    # Nagata's approximation of the noncentral t (Sakai's tool): P(t' <= x) ~ Phi(u(x))
    scale = np.sqrt(1.0 + crit**2 / (2.0 * df))
    u = lambda x: (x * (1.0 - 1.0 / (4.0 * df)) - lam) / scale  # noqa: E731
    return stats.norm.cdf(u(-crit)) + 1.0 - stats.norm.cdf(u(crit))


def normal_start(effect: float, alpha: float = 0.05, target: float = 0.8) -> float:
    """Sakai's (Nagata's) first estimate: ((z_{1-alpha/2} + z_target) / effect)^2 +
    z_{1-alpha/2}^2 / 2.

    >>> round(normal_start(0.5), 2)
    33.32
    """
    from scipy import stats

    za, zb = stats.norm.ppf(1.0 - alpha / 2.0), stats.norm.ppf(target)
    with np.errstate(over="ignore"):
        return float(((za + zb) / abs(effect)) ** 2 + za**2 / 2.0)


def queries_needed(
    effect: float, alpha: float = 0.05, target: float = 0.8, method: str = "exact"
) -> float:
    """The smallest number of queries (>= 2) whose paired t-test detects the standardised
    difference ``effect`` with power ``target``; NaN for no difference (or not a number).

    Examples
    --------
    Cohen's medium (0.5), large (0.8) and small (0.2) effects at alpha 0.05, power 0.8:

    >>> queries_needed(0.5), queries_needed(0.8), queries_needed(0.2)
    (34.0, 15.0, 199.0)
    """
    effect = abs(float(effect))
    if not math.isfinite(effect) or effect == 0.0:
        return float("nan")

    def enough(n: int) -> bool:
        return bool(power(n, effect, alpha, method) >= target)

    # power grows with n: bracket the answer around Nagata's estimate, then bisect (about 50
    # evaluations whatever the effect; stepping down 64 queries at a time from an estimate
    # that overshot took seconds to minutes for small effects: a Compare page stalled on two
    # runs 0.01 standard deviations apart)
    estimate = normal_start(effect, alpha, target)
    if not estimate <= MAX_COUNT:  # a difference too small for any count a float holds exactly
        return float("inf")
    start = max(2, math.ceil(estimate))
    ceiling = min(max(MAX_QUERIES, 2 * start), MAX_COUNT)
    hi = start
    while not enough(hi):
        if hi >= ceiling:
            return float("inf")
        hi = min(2 * hi, ceiling)
    lo = max(2, start - 4) if hi == start else hi // 2
    while lo > 2 and enough(lo):
        hi, lo = lo, max(2, lo // 2)
    if enough(lo):  # lo == 2
        return 2.0
    while hi - lo > 1:  # not enough(lo), enough(hi)
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return float(hi)


def min_detectable(
    n: int, sigma: float, alpha: float = 0.05, target: float = 0.8, method: str = "exact"
) -> float:
    """The smallest difference (in the measure's units) that ``n`` queries detect with power
    ``target``: sigma times the standardised difference whose power is ``target`` (solved
    to machine precision); NaN below 2 queries or without a spread.

    >>> round(min_detectable(34, 1.0), 4)
    0.495
    """
    from scipy.optimize import brentq

    if n < 2 or not (math.isfinite(sigma) and sigma > 0):
        return float("nan")
    f = lambda e: float(power(n, e, alpha, method)) - target  # noqa: E731
    hi = 1.0
    while f(hi) < 0:
        hi *= 2.0
    return float(brentq(f, 0.0, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)) * float(sigma)


def paired_power(
    base: np.ndarray,
    run: np.ndarray,
    alpha: float = 0.05,
    target: float = 0.8,
    delta: float | None = None,
    method: str = "exact",
) -> dict:
    """The topic set size figures of one paired comparison: ``sd_delta`` (the standard
    deviation of the per-query differences, n - 1 in the denominator), ``queries_needed``
    (for the observed mean difference), ``queries_needed_target`` (for ``delta``, when
    given) and ``min_detectable`` (with the current queries).

    >>> out = paired_power(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.3, 0.5, 0.2, 0.9]))
    >>> out["queries_needed"], round(out["min_detectable"], 4)
    (12.0, 0.532)
    """
    d = np.asarray(run, dtype=np.float64) - np.asarray(base, dtype=np.float64)
    n = len(d)
    nan = float("nan")
    if n < 2:
        return {
            "sd_delta": nan,
            "queries_needed": nan,
            "queries_needed_target": nan,
            "min_detectable": nan,
        }
    sd = float(np.std(d, ddof=1))
    mean = float(d.mean())
    usable = sd > 0 and math.isfinite(sd)
    return {
        "sd_delta": sd,
        "queries_needed": queries_needed(mean / sd, alpha, target, method) if usable else nan,
        "queries_needed_target": queries_needed(delta / sd, alpha, target, method)
        if usable and delta
        else nan,
        "min_detectable": min_detectable(n, sd, alpha, target, method),
    }


def settings(power, alpha: float, power_alpha=None, power_delta=None, method: str = "exact"):
    """The settings of a topic set size design as a comparison's ``settings`` record them
    (``None`` without ``power``): the power, the alpha (``power_alpha``, else the tests'),
    the chosen difference, the method and its description."""
    if power is None:
        return None
    return {
        "power": float(power),
        "alpha": float(alpha if power_alpha is None else power_alpha),
        "delta": None if power_delta is None else float(power_delta),
        "method": method,
        "method_text": METHOD_TEXT,
    }


__all__ = [
    "METHODS",
    "settings",
    "METHOD_TEXT",
    "power",
    "normal_start",
    "queries_needed",
    "min_detectable",
    "paired_power",
]
