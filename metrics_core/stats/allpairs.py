"""Every run against every other (or against several baselines): numbers only.

For each measure, on ONE query set (``aligned_values``: ``common`` or ``qrels``), each pair
of runs ``(a, b)`` gets the means, ``delta = mean_b - mean_a``, and a two-sided p-value of:

* ``t``, ``wilcoxon``, ``permutation``: the paired tests of
  :mod:`metrics_core.stats.significance` (the randomization test draws the same random signs
  for every pair with the same number of queries), corrected over the family of every pair
  and measure of the call (``holm`` by default, as the Compare page; ``bonferroni``, ``bh``,
  ``none``);
* ``tukey``: Tukey's honestly significant difference test over all runs of a measure at once
  (``scipy.stats.tukey_hsd`` on the per-query values, as ranx's ``stat_test="tukey"``); it
  controls the family-wise error over the pairs itself, so no further correction is applied.

A pair is ``significant`` when its corrected p-value is below ``alpha``; the run with the
higher mean then *beats* the other (:func:`beats`), which the report shows as letters, one
per run, as ranx's report does.
"""

from __future__ import annotations

import string
from itertools import combinations

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.stats import significance as sig
from metrics_core.stats.comparison import POWER_COLUMNS, aligned_values
from metrics_core.stats.power import paired_power
from metrics_core.stats.power import settings as power_settings

PAIR_TESTS = ("permutation", "t", "wilcoxon", "tukey")
COLUMNS = (
    "measure",
    "run_a",
    "run_b",
    "n_queries",
    "mean_a",
    "mean_b",
    "delta",
    "p",
    "p_corrected",
    "significant",
    "better",
)


def letters(names) -> dict[str, str]:
    """One letter per run, in order (a, b, ..., z, then aa, ab, ...)."""
    out = {}
    for i, name in enumerate(names):
        s, n = "", i
        while True:
            s = string.ascii_lowercase[n % 26] + s
            n = n // 26 - 1
            if n < 0:
                break
        out[name] = s
    return out


def all_pairs(
    evaluations,
    measures=None,
    *,
    test: str = "permutation",
    correction: str = "holm",
    alpha: float = 0.05,
    n_permutations: int = 10000,
    seed: int = 0,
    query_set: str = "common",
    baselines=None,
    power: float | None = None,
    power_alpha: float | None = None,
    power_delta: float | None = None,
    power_method: str = "exact",
) -> pd.DataFrame:
    """The pairs table (one row per measure and pair, :data:`COLUMNS`).

    ``power`` (with ``power_alpha``, ``power_delta``, ``power_method``): each pair's topic
    set size figures too, as :func:`metrics_core.stats.comparison.compare_runs` gives them
    (``sd_delta``, ``queries_needed``, ``queries_needed_target``, ``min_detectable``; b - a).

    ``baselines``: run names; only the pairs with a baseline are tested (a baseline against
    each other run, and the baselines among themselves), in the family of the correction.
    The frame's ``attrs`` hold the settings (test, correction, alpha, query_set, runs,
    measures, baselines, n_permutations, seed).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> idx = [f"q{i}" for i in range(8)]
    >>> evs = [NS(run_name=n, per_query=pd.DataFrame({"AP": v}, index=idx)) for n, v in
    ...        [("a", [0.1, 0.2] * 4), ("b", [0.9, 0.7] * 4), ("c", [0.0, 0.4] * 4)]]
    >>> t = all_pairs(evs, test="t")
    >>> t[["run_a", "run_b", "better"]].values.tolist()
    [['a', 'b', 'b'], ['a', 'c', None], ['b', 'c', 'b']]
    """
    if test not in PAIR_TESTS:
        raise InputError(
            N_("unknown test {test!r}"),
            hint=N_("accepted: {choices}"),
            field="test",
            params={"test": test, "choices": ", ".join(PAIR_TESTS)},
        )
    evs = list(evaluations)
    names = [ev.run_name for ev in evs]
    if len(evs) < 2:
        raise InputError(
            N_("all pairs need at least two runs, got {count}"),
            field="runs",
            params={"count": len(evs)},
        )
    if len(set(names)) < len(names):
        raise InputError(
            N_("two runs are named {name!r}"),
            hint=N_("give each run its own name"),
            field="runs",
            params={"name": next(n for n in names if names.count(n) > 1)},
        )
    if measures is None:
        measures = [
            c for c in evs[0].per_query.columns if all(c in ev.per_query.columns for ev in evs)
        ]
    base = (
        None
        if baselines is None
        else [str(b) for b in ([baselines] if isinstance(baselines, str) else baselines)]
    )
    for b in base or ():
        if b not in names:
            raise InputError(
                N_("no run named {name!r} to use as the baseline"),
                hint=N_("runs: {names}"),
                field="baseline",
                params={"name": b, "names": ", ".join(names)},
            )
    pairs = [(a, b) for a, b in combinations(names, 2) if base is None or a in base or b in base]
    rows = []
    for m in measures:
        table = aligned_values(evs, m, query_set)
        n = len(table)
        tukey = None
        if test == "tukey" and n > 1:
            from scipy.stats import tukey_hsd

            tukey = tukey_hsd(*[table[c].to_numpy() for c in names]).pvalue
        perm = {}
        if test == "permutation":
            diffs = (
                np.column_stack([table[b].to_numpy() - table[a].to_numpy() for a, b in pairs])
                if pairs
                else np.zeros((n, 0))
            )
            pv = (
                sig.permutation_test(
                    np.zeros_like(diffs), diffs, n_permutations=n_permutations, seed=seed
                )
                if n
                else np.full(len(pairs), np.nan)
            )
            perm = dict(zip(pairs, np.atleast_1d(pv), strict=True))
        for a, b in pairs:
            va, vb = table[a].to_numpy(), table[b].to_numpy()
            if n == 0:
                p = float("nan")
            elif test == "t":
                p = sig.paired_t_test(va, vb)
            elif test == "wilcoxon":
                p = sig.wilcoxon_test(va, vb)
            elif test == "permutation":
                p = float(perm[(a, b)])
            else:
                p = (
                    float(tukey[names.index(a), names.index(b)])
                    if tukey is not None
                    else float("nan")
                )
            rows.append(
                {
                    "measure": m,
                    "run_a": a,
                    "run_b": b,
                    "n_queries": n,
                    "mean_a": float(va.mean()) if n else np.nan,
                    "mean_b": float(vb.mean()) if n else np.nan,
                    "p": float(p),
                    **(
                        paired_power(
                            va,
                            vb,
                            alpha if power_alpha is None else power_alpha,
                            float(power),
                            power_delta,
                            power_method,
                        )
                        if power is not None
                        else {}
                    ),
                }
            )
    extra = list(POWER_COLUMNS) if power is not None else []
    frame = pd.DataFrame(
        rows,
        columns=[c for c in COLUMNS if c not in ("p_corrected", "significant", "better", "delta")]
        + extra,
    )
    frame.insert(5, "delta", frame["mean_b"] - frame["mean_a"])
    applied = "none" if test == "tukey" else correction
    frame["p_corrected"] = sig.correct_pvalues(frame["p"].to_numpy(), applied) if len(frame) else []
    frame["significant"] = frame["p_corrected"] < alpha
    better = np.where(frame["delta"] > 0, frame["run_b"], frame["run_a"])
    frame["better"] = pd.Series(
        [
            w if s and d != 0 else None
            for w, s, d in zip(better, frame["significant"], frame["delta"], strict=True)
        ],
        index=frame.index,
        dtype=object,
    )
    frame.attrs = {
        "test": test,
        "correction": applied,
        "alpha": alpha,
        "query_set": query_set,
        "runs": names,
        "measures": list(measures),
        "baselines": base,
        "n_permutations": n_permutations if test == "permutation" else None,
        "seed": seed if test == "permutation" else None,
        "power": power_settings(power, alpha, power_alpha, power_delta, power_method),
    }
    return frame


def beats(pairs: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """(run, measure) -> the runs it significantly beats (higher mean, corrected p < alpha),
    in the runs' order."""
    names = pairs.attrs.get("runs") or list(dict.fromkeys([*pairs["run_a"], *pairs["run_b"]]))
    out: dict[tuple[str, str], list[str]] = {
        (r, m): [] for r in names for m in pairs.attrs.get("measures", [])
    }
    for row in pairs.itertuples(index=False):
        if not isinstance(row.better, str):
            continue
        loser = row.run_a if row.better == row.run_b else row.run_b
        out.setdefault((row.better, row.measure), []).append(loser)
    order = {n: i for i, n in enumerate(names)}
    return {k: sorted(v, key=order.__getitem__) for k, v in out.items()}


def means_table(evaluations, pairs: pd.DataFrame) -> pd.DataFrame:
    """Runs x measures: the mean of each run on the measure's query set of ``pairs``."""
    names = pairs.attrs["runs"]
    out = pd.DataFrame(
        index=pd.Index(names, name="run"), columns=pairs.attrs["measures"], dtype=float
    )
    for m in pairs.attrs["measures"]:
        table = aligned_values(list(evaluations), m, pairs.attrs["query_set"])
        for n in names:
            out.loc[n, m] = float(table[n].mean()) if len(table) else np.nan
    return out


__all__ = ["PAIR_TESTS", "COLUMNS", "all_pairs", "beats", "letters", "means_table"]
