"""Calibration of predicted probabilities: reliability bins, ECE, MCE, Brier score.

Conventions:

* Probabilities must lie in [0, 1]; anything else (logits, NaN) is an
  :class:`InputError` -- nothing is squashed through a sigmoid silently.
* **Equal-width bins** (``strategy="uniform"``): edges are exactly ``i / B`` (each
  computed by one division, not by accumulating a step). Bin i holds
  ``edges[i] <= p < edges[i+1]``; the last bin is closed, so ``p = 1.0`` counts in it.
  Values are compared as their exact binary value: ``np.float32(0.7)`` is
  0.699999988..., below 0.7, so it falls in the bin below 0.7, while ``0.7`` (float64)
  opens the bin [0.7, 0.8).
* **Equal-mass bins** (``strategy="quantile"``): edges at the ``i / B`` quantiles of
  the probabilities (``numpy.quantile``, linear interpolation), repeated edges merged,
  the first and last edge being the smallest and largest probability; same
  half-open rule.
* ECE (expected calibration error, Naeini et al. 2015) is count-weighted: ``sum_m |B_m| / N * |acc(B_m) - conf(B_m)|``
  over non-empty bins; MCE is the largest ``|acc - conf|`` over non-empty bins.
* The **debiased ECE** subtracts each bin's estimated sampling bias (Kumar et al. 2019),
  reported next to the plug-in ECE; bootstrap intervals are BCa (Efron 1987).
"""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.validation import LIMITS, check_binary, check_int

__all__ = [
    "STRATEGIES",
    "CI_STATISTICS",
    "check_probabilities",
    "check_bins",
    "jackknife_statistics",
    "bin_edges",
    "assign_bins",
    "reliability_bins",
    "wilson_interval",
    "expected_calibration_error",
    "debiased_expected_calibration_error",
    "maximum_calibration_error",
    "audit_ece",
    "brier_score",
    "calibration_report",
    "bootstrap_calibration_ci",
]

STRATEGIES = ("uniform", "quantile")


def check_probabilities(y_true, y_prob, source=None):
    """0/1 labels and float64 probabilities in [0, 1]: :func:`metrics_core.validation.check_binary`
    with ``probabilities=True`` (the one validation of every calibration function).

    >>> check_probabilities([True, False], [1, 0.25])[1].tolist()
    [1.0, 0.25]
    """
    return check_binary(y_true, y_prob, what="probability", probabilities=True, source=source)


def check_bins(n_bins, strategy) -> int:
    """The number of bins, checked with the binning ``strategy`` (see :data:`STRATEGIES`).

    >>> check_bins("15", "quantile")
    15
    """
    if strategy not in STRATEGIES:
        raise InputError(
            N_("unknown binning strategy {strategy!r}"),
            hint=N_("Accepted: {choices}"),
            params={"strategy": strategy, "choices": ", ".join(STRATEGIES)},
        )
    try:
        return check_int(n_bins, "number of bins", minimum=1, maximum=LIMITS["bins"])
    except InputError as exc:
        if "at most" in exc.problem:
            raise
        raise InputError(
            N_("number of bins must be a positive integer, got {value!r}"), params={"value": n_bins}
        ) from None


def bin_edges(y_prob, n_bins: int = 10, strategy: str = "uniform") -> np.ndarray:
    """Bin edges, ascending.

    Examples
    --------
    >>> bin_edges([0.2], 5).tolist()
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    >>> bin_edges([0.1, 0.2, 0.3, 0.9], 2, "quantile").tolist()
    [0.1, 0.25, 0.9]
    """
    n_bins = check_bins(n_bins, strategy)
    if strategy == "uniform":
        return np.arange(n_bins + 1, dtype=np.float64) / n_bins
    probs = np.asarray(y_prob, dtype=np.float64)
    edges = np.quantile(probs, np.arange(n_bins + 1, dtype=np.float64) / n_bins)
    return np.unique(edges)


def assign_bins(y_prob, edges) -> np.ndarray:
    """Index of each probability's bin: ``edges[i] <= p < edges[i+1]``, last bin closed.

    Examples
    --------
    >>> assign_bins([0.0, 0.3, 0.7, 0.99, 1.0], bin_edges([0], 10)).tolist()
    [0, 3, 7, 9, 9]
    """
    edges = np.asarray(edges, dtype=np.float64)
    probs = np.asarray(y_prob).astype(np.float64)
    idx = np.searchsorted(edges, probs, side="right") - 1
    n_bins = max(edges.size - 1, 1)
    return np.clip(idx, 0, n_bins - 1)


def wilson_interval(successes, n, confidence: float = 0.95):
    r"""Wilson score interval for a binomial proportion (vectorised).

    .. math:: \frac{\hat p + \frac{z^2}{2n} \pm z\sqrt{\frac{\hat p(1-\hat p)}{n}
              + \frac{z^2}{4n^2}}}{1 + z^2/n}

    NaN where ``n == 0``. Reference: Wilson (1927), JASA 22:209-212.

    Examples
    --------
    >>> lo, hi = wilson_interval(8, 10)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.4902, 0.9433)
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    from scipy.stats import norm  # imported here: scipy.stats costs ~1 s at start-up

    z = norm.ppf(1 - (1 - confidence) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        lo, hi = centre - half, centre + half
    lo = np.where(n > 0, np.clip(lo, 0, 1), np.nan)
    hi = np.where(n > 0, np.clip(hi, 0, 1), np.nan)
    return lo, hi


def _bin_sums(bins, probs, labels, n_bins, weights=None):
    count = np.bincount(bins, weights=weights, minlength=n_bins)
    w = probs if weights is None else probs * weights
    conf_sum = np.bincount(bins, weights=w, minlength=n_bins)
    pos = np.bincount(
        bins, weights=labels if weights is None else labels * weights, minlength=n_bins
    )
    return count, conf_sum, pos


def reliability_bins(
    y_true, y_prob, n_bins: int = 10, strategy: str = "uniform", *, confidence: float = 0.95
) -> dict:
    """Per-bin statistics of a reliability diagram.

    Returns
    -------
    dict of arrays (one entry per bin, empty bins included with count 0 and NaN means):
    ``lower``, ``upper``, ``count``, ``confidence`` (mean probability), ``frequency``
    (fraction of positives), ``positives``, ``freq_low``, ``freq_high`` (Wilson interval).

    Examples
    --------
    >>> r = reliability_bins([0, 1, 1, 1], [0.1, 0.3, 0.7, 1.0], 2)
    >>> r["count"].tolist(), r["confidence"].tolist(), r["frequency"].tolist()
    ([2, 2], [0.2, 0.85], [0.5, 1.0])
    """
    labels, probs = check_probabilities(y_true, y_prob)
    edges = bin_edges(probs, n_bins, strategy)
    nb = edges.size - 1
    if nb == 0:  # quantile bins of a constant: one closed bin [p, p]
        edges = np.array([edges[0], edges[0]])
        nb = 1
    bins = assign_bins(probs, edges)
    count, conf_sum, pos = _bin_sums(bins, probs, labels.astype(np.float64), nb)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.where(count > 0, conf_sum / count, np.nan)
        freq = np.where(count > 0, pos / count, np.nan)
    lo, hi = wilson_interval(pos, count, confidence)
    return {
        "lower": edges[:-1],
        "upper": edges[1:],
        "count": count.astype(np.int64),
        "confidence": conf,
        "frequency": freq,
        "positives": pos.astype(np.int64),
        "freq_low": lo,
        "freq_high": hi,
    }


def _ece_mce(count, conf, freq):
    n = count.sum()
    gap = np.abs(freq - conf)
    nz = count > 0
    ece = float(np.sum(count[nz] * gap[nz]) / n)
    mce = float(np.max(gap[nz]))
    return ece, mce


def _expected_abs_normal(mu, sigma):
    """``E|Z|`` for ``Z ~ N(mu, sigma^2)`` (folded normal mean), ``|mu|`` where sigma is 0."""
    from scipy.stats import norm  # imported here: scipy.stats costs ~1 s at start-up

    mu = np.asarray(mu, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        folded = sigma * np.sqrt(2 / np.pi) * np.exp(-mu * mu / (2 * sigma * sigma)) + mu * (
            1 - 2 * norm.cdf(-mu / sigma)
        )
    return np.where(sigma > 0, folded, np.abs(mu))


def _debiased_terms(count, conf_sum, pos):
    """Per-bin ``n_m * (2|g_m| - E|N(g_m, s_m^2)|)`` (0 for empty bins); see
    :func:`debiased_expected_calibration_error`."""
    count = np.asarray(count, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = pos / count
        gap = acc - conf_sum / count
        sd = np.sqrt(np.clip(acc * (1 - acc), 0, None) / count)
        term = count * (2 * np.abs(gap) - _expected_abs_normal(gap, sd))
    return np.where(count > 0, term, 0.0)


def debiased_expected_calibration_error(
    y_true, y_prob, n_bins: int = 10, strategy: str = "uniform"
) -> float:
    r"""Debiased ECE: the plug-in ECE minus its estimated sampling bias, per bin.

    The plug-in ECE (:func:`expected_calibration_error`) overstates the calibration
    error: even perfectly calibrated scores have :math:`|\mathrm{acc}(B_m) -
    \mathrm{conf}(B_m)| > 0` from sampling noise alone, more so with many small bins.
    Following Kumar, Liang & Ma (2019), the bias of each bin's absolute gap
    :math:`\hat g_m = \mathrm{acc}(B_m) - \mathrm{conf}(B_m)` is estimated from its
    sampling variance :math:`s_m^2 = \mathrm{acc}(B_m)(1 - \mathrm{acc}(B_m)) / |B_m|`
    (a normal approximation of the bin's label mean) and subtracted:

    .. math::

        \mathrm{ECE}_{\mathrm{debiased}} = \sum_m \frac{|B_m|}{N}\Big(|\hat g_m|
            - \big(\mathbb{E}\,|Z_m| - |\hat g_m|\big)\Big)
            = \sum_m \frac{|B_m|}{N}\big(2|\hat g_m| - \mathbb{E}\,|Z_m|\big),
            \qquad Z_m \sim \mathcal{N}(\hat g_m, s_m^2)

    with the folded-normal mean :math:`\mathbb{E}|Z| = s\sqrt{2/\pi}\,e^{-g^2/(2s^2)}
    + g\,(1 - 2\Phi(-g/s))` in closed form (the limit of Kumar et al.'s sampled
    estimate). Empty bins contribute nothing; a bin whose labels are all equal has
    :math:`s_m = 0` and contributes its plug-in gap. It is an estimate of a
    non-negative quantity and may come out slightly below 0 for well-calibrated
    scores (it is not clipped). The correction is first order: for a bin whose true
    gap is 0, the plug-in's expected value is :math:`0.80\,s_m` and the debiased one's
    about :math:`0.47\,s_m` -- smaller, not zero -- so with many small bins it still
    leans upward, less than the plug-in.

    References
    ----------
    Kumar, Liang & Ma (2019), "Verified uncertainty calibration", NeurIPS; Roelofs,
    Cain, Shlens & Mozer (2022), "Mitigating bias in calibration error estimation",
    AISTATS.

    Examples
    --------
    >>> round(debiased_expected_calibration_error([0, 1, 1, 1], [0.1, 0.3, 0.7, 1.0], 2), 6)
    0.186016
    """
    r = reliability_bins(y_true, y_prob, n_bins, strategy)
    conf_sum = np.where(r["count"] > 0, r["confidence"] * r["count"], 0.0)
    return float(np.sum(_debiased_terms(r["count"], conf_sum, r["positives"])) / r["count"].sum())


def expected_calibration_error(
    y_true, y_prob, n_bins: int = 10, strategy: str = "uniform"
) -> float:
    r"""Expected calibration error (plug-in), count-weighted.

    .. math:: \mathrm{ECE} = \sum_m \frac{|B_m|}{N}\,|\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|

    Empty bins contribute nothing. Reference: Naeini et al. (2015), AAAI.

    Examples
    --------
    >>> expected_calibration_error([0, 1, 1, 1], [0.1, 0.3, 0.7, 1.0], 2)
    0.225
    """
    r = reliability_bins(y_true, y_prob, n_bins, strategy)
    return _ece_mce(r["count"], r["confidence"], r["frequency"])[0]


def maximum_calibration_error(y_true, y_prob, n_bins: int = 10, strategy: str = "uniform") -> float:
    """Largest ``|acc(B_m) - conf(B_m)|`` over non-empty bins.

    Examples
    --------
    >>> maximum_calibration_error([0, 1, 1, 1], [0.1, 0.3, 0.7, 1.0], 2)
    0.3
    """
    r = reliability_bins(y_true, y_prob, n_bins, strategy)
    return _ece_mce(r["count"], r["confidence"], r["frequency"])[1]


def audit_ece(y_true, y_prob, n_bins: int = 10) -> float:
    r"""ECE with the audit specification's bins: edges ``numpy.linspace(0, 1, B + 1)``,
    bin m holding ``edges[m] <= p < edges[m+1]`` (so p = 1.0 falls in no bin, but counts
    in N), weights ``|B_m| / N`` over all N items, accumulated bin by bin in order.

    .. math:: \sum_m \frac{|B_m|}{N}\,|\bar y_{B_m} - \bar p_{B_m}|

    Differs from :func:`expected_calibration_error` only for p = 1.0 (which that closes
    into the last bin) and in the summation order. Reference: the audit specification's
    ECE; Naeini, Cooper & Hauskrecht (2015), AAAI.

    >>> audit_ece([0, 1, 1], [0.25, 0.75, 1.0], 2)   # p = 1.0 is left out of the bins
    0.16666666666666666
    """
    labels, probs = check_probabilities(y_true, y_prob)
    n_bins = check_bins(n_bins, "uniform")
    edges = np.linspace(0, 1, n_bins + 1)
    idx = np.searchsorted(edges, probs, side="right") - 1
    order = np.argsort(idx, kind="stable")  # each bin's items stay in input order
    idx, y, p = idx[order], labels[order].astype(np.float64), probs[order]
    bounds = np.searchsorted(idx, np.arange(n_bins + 1))
    ece = 0.0
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):  # B bins, not a loop over items
        if b > a:
            ece += (b - a) / probs.size * abs(y[a:b].mean() - p[a:b].mean())
    return float(ece)


def brier_score(y_true, y_prob) -> float:
    r"""Brier score, :math:`\frac1N\sum_i (p_i - y_i)^2` (= sklearn's brier_score_loss).

    Examples
    --------
    >>> brier_score([0, 1], [0.25, 0.5])
    0.15625
    """
    labels, probs = check_probabilities(y_true, y_prob)
    return float(np.mean((probs - labels) ** 2))


def calibration_report(
    y_true, y_prob, n_bins: int = 10, strategy: str = "uniform", *, confidence: float = 0.95
) -> dict:
    """ECE (plug-in and debiased), MCE, Brier and the bins in one call (one validation,
    one binning). ``ece_debiased`` is :func:`debiased_expected_calibration_error`.

    Examples
    --------
    >>> r = calibration_report([0, 1, 1, 1], [0.1, 0.3, 0.7, 1.0], 2)
    >>> round(r["ece"], 6), r["mce"], r["brier"], len(r["bins"]["count"])
    (0.225, 0.3, 0.1475, 2)
    """
    labels, probs = check_probabilities(y_true, y_prob)
    bins = reliability_bins(labels, probs, n_bins, strategy, confidence=confidence)
    ece, mce = _ece_mce(bins["count"], bins["confidence"], bins["frequency"])
    conf_sum = np.where(bins["count"] > 0, bins["confidence"] * bins["count"], 0.0)
    ece_db = float(
        np.sum(_debiased_terms(bins["count"], conf_sum, bins["positives"])) / labels.size
    )
    return {
        "ece": ece,
        "ece_debiased": ece_db,
        "mce": mce,
        "brier": float(np.mean((probs - labels) ** 2)),
        "n": int(labels.size),
        "n_bins": int(n_bins),
        "strategy": strategy,
        "bins": bins,
    }


CI_STATISTICS = ("ece", "ece_debiased", "mce", "brier")


def jackknife_statistics(bins, probs, y, nb):
    """Leave-one-out values of (ECE, debiased ECE, MCE, Brier), one row per item, from
    the bin sums: removing item i changes only its own bin's sums.

    Parameters
    ----------
    bins : ndarray of int
        Each item's bin (:func:`assign_bins`).
    probs, y : ndarray of float64
        Probabilities and 0/1 labels.
    nb : int
        Number of bins.

    Returns
    -------
    ndarray, shape (4, n): the statistics of :data:`CI_STATISTICS` without item i, in
    column i (the jackknife of the BCa acceleration, Efron 1987).
    """
    n = y.size
    count, conf_sum, pos = _bin_sums(bins, probs, y, nb)
    abs_num = np.abs(pos - conf_sum)  # count * |gap| per bin
    db = _debiased_terms(count, conf_sum, pos)
    c_i, s_i, p_i = count[bins] - 1, conf_sum[bins] - probs, pos[bins] - y
    with np.errstate(invalid="ignore", divide="ignore"):
        ece = (abs_num.sum() - abs_num[bins] + np.abs(p_i - s_i)) / (n - 1)
        ece_db = (db.sum() - db[bins] + _debiased_terms(c_i, s_i, p_i)) / (n - 1)
        gap = np.where(count > 0, abs_num / count, -np.inf)
        gap_i = np.where(c_i > 0, np.abs(p_i - s_i) / c_i, -np.inf)
    order = np.argsort(gap)[::-1]
    top1, top2 = gap[order[0]], (gap[order[1]] if nb > 1 else -np.inf)
    others = np.where(bins == order[0], top2, top1)
    mce = np.maximum(others, gap_i)
    sq = (probs - y) ** 2
    brier = (sq.sum() - sq) / (n - 1)
    return np.vstack([ece, ece_db, mce, brier])


def bootstrap_calibration_ci(
    y_true,
    y_prob,
    n_bins: int = 10,
    strategy: str = "uniform",
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    max_bias_z: float = 1.0,
) -> dict:
    """BCa bootstrap intervals for the plug-in ECE, the debiased ECE, MCE and Brier.

    Items are resampled with replacement; the bin edges are those of the full sample
    (held fixed, also for equal-mass bins), so a replicate is three weighted bincounts.
    The interval is the bias-corrected and accelerated (BCa) one of
    :func:`metrics_core.stats.bootstrap.bca_interval`, its acceleration from the
    jackknife (leave one item out, computed from the bin sums in one pass). The plain
    percentile interval is not used: the plug-in ECE and the MCE are biased upward
    under resampling, so the percentiles of their replicates can lie entirely above the
    estimate (an "interval" that excludes it).

    Returns
    -------
    dict: ``{"ece"|"ece_debiased"|"mce"|"brier": {"value", "low", "high", "n_resamples",
    "method", "z0", "reliable"}}``. The interval is reported only when the bias
    correction is moderate, :math:`|z_0| \\le` ``max_bias_z`` (default 1: the estimate
    lies within the middle 68 % of its replicates), which also guarantees that it
    contains the estimate. Otherwise the replicates sit almost all on one side of the
    estimate -- resampling inflates the statistic more than it spreads it (typical of
    the plug-in ECE and the MCE with many small bins) -- and ``low`` and ``high`` are
    NaN with ``reliable`` False: no interval is better than a misleading one. Fewer
    bins, or the debiased ECE, then give a usable interval.

    Examples
    --------
    >>> r = bootstrap_calibration_ci([0, 1, 1, 0, 1], [.2, .8, .6, .4, .9], 2, n_resamples=100)
    >>> r["brier"]["low"] <= r["brier"]["value"] <= r["brier"]["high"], r["brier"]["method"]
    (True, 'BCa')
    """
    from metrics_core.stats.bootstrap import bca_interval

    labels, probs = check_probabilities(y_true, y_prob)
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1, maximum=LIMITS["resamples"])
    edges = bin_edges(probs, n_bins, strategy)
    if edges.size < 2:
        edges = np.array([edges[0], edges[0]])
    nb = edges.size - 1
    bins = assign_bins(probs, edges)
    y = labels.astype(np.float64)
    sq = (probs - y) ** 2
    n = y.size
    rng = np.random.default_rng(seed)
    reps = np.empty((len(CI_STATISTICS), n_resamples))

    def stats(w):
        count, conf_sum, pos = _bin_sums(bins, probs, y, nb, w)
        nz = count > 0
        gap = np.abs(pos[nz] / count[nz] - conf_sum[nz] / count[nz])
        total = count.sum()
        brier = (sq.sum() if w is None else (sq * w).sum()) / total
        db = _debiased_terms(count, conf_sum, pos).sum() / total
        return np.sum(count[nz] * gap) / total, db, gap.max(), brier

    point = stats(None)
    for b in range(n_resamples):
        w = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
        reps[:, b] = stats(w)
    jack = jackknife_statistics(bins, probs, y, nb) if n > 2 else [None] * len(CI_STATISTICS)
    out = {}
    for j, name in enumerate(CI_STATISTICS):
        iv = bca_interval(reps[j], float(point[j]), confidence, jackknife=jack[j])
        reliable = bool(iv["contains"] and abs(iv["z0"]) <= max_bias_z)
        low, high = (iv["low"], iv["high"]) if reliable else (np.nan, np.nan)
        out[name] = {
            "value": float(point[j]),
            "low": float(low),
            "high": float(high),
            "n_resamples": n_resamples,
            "method": iv["method"],
            "z0": float(iv["z0"]),
            "reliable": reliable,
        }
    return out
