"""Compare evaluated runs against a baseline: deltas, intervals, tests, corrections.

:func:`compare_runs` takes :class:`~metrics_core.ranking.evaluate.Evaluation` objects
(anything with ``run_name`` and a ``per_query`` DataFrame indexed by query id) and pairs
each run with the baseline on their common query set, measure by measure.

The correction family is every (run, measure) comparison of the call: with R runs
besides the baseline and M measures, each test's p-values are corrected over R x M
hypotheses. The permutation test and the bootstrap draw the same random numbers for every
comparison with the same number of paired queries (one matrix product for all of them),
so a p-value does not depend on what else was compared.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.errors import InputError
from metrics_core.stats import significance as sig

TESTS = ("t", "wilcoxon", "permutation")
#: Marker appended to a delta whose corrected p-value is below alpha, per test.
MARKERS = {"t": "†", "wilcoxon": "‡", "permutation": "*"}


def _find(evaluations, name):
    for ev in evaluations:
        if ev.run_name == name:
            return ev
    raise InputError(f"no run named {name!r} to use as the baseline",
                     hint="runs: " + ", ".join(ev.run_name for ev in evaluations))


def compare_runs(evaluations, baseline: str, measures=None, permutations: int = 10000,
                 seed: int = 0, correction: str = "holm", confidence: float = 0.95,
                 bootstrap: int | None = None, alpha: float = 0.05) -> pd.DataFrame:
    """Every run against ``baseline`` on every measure.

    Parameters
    ----------
    evaluations : list of Evaluation
        Objects with ``run_name`` and ``per_query`` (index query id, one column per measure).
    baseline : str
        The ``run_name`` of the baseline.
    measures : list of str, optional
        Columns to compare; default: the baseline's columns.
    permutations : int
        Sign-flip permutations of the randomization test.
    seed : int
        Seed of the permutation test and the bootstrap.
    correction : {"holm", "bonferroni", "bh", "none"}
        Applied to each test's p-values over all (run, measure) comparisons.
    confidence : float
        Level of the paired bootstrap percentile interval of the mean difference.
    bootstrap : int, optional
        Bootstrap resamples (default: ``permutations``).
    alpha : float
        Level of the significance markers (on corrected p-values).

    Returns
    -------
    pandas.DataFrame
        One row per (run, measure) with columns run, baseline, measure, n_queries,
        mean_baseline, mean_run, mean_delta, ci_lo, ci_hi, p_t, p_wilcoxon,
        p_permutation, p_corrected_t, p_corrected_wilcoxon, p_corrected_permutation, wins,
        ties, losses, effect_size, significant (dict test -> bool), markers (str).
        ``attrs`` holds the parameters; :func:`comparison_records` gives the JSON form.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> idx = pd.Index(["q1", "q2", "q3", "q4"], name="query_id")
    >>> a = NS(run_name="a", per_query=pd.DataFrame({"AP": [0.1, 0.2, 0.3, 0.4]}, index=idx))
    >>> b = NS(run_name="b", per_query=pd.DataFrame({"AP": [0.3, 0.5, 0.2, 0.9]}, index=idx))
    >>> row = compare_runs([a, b], "a", permutations=1000).iloc[0]
    >>> row["run"], int(row["n_queries"]), round(float(row["mean_delta"]), 4)
    ('b', 4, 0.225)
    """
    if correction not in sig.CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}", hint=f"accepted: {', '.join(sig.CORRECTIONS)}")
    if permutations < 1:
        raise InputError(f"--permutations must be at least 1, got {permutations}")
    base_ev = _find(evaluations, baseline)
    measures = list(base_ev.per_query.columns) if measures is None else list(measures)
    others = [ev for ev in evaluations if ev.run_name != baseline]
    for ev in [base_ev, *others]:
        absent = [m for m in measures if m not in ev.per_query.columns]
        if absent:
            raise InputError(f"run {ev.run_name!r} has no values for {', '.join(absent)}",
                             hint="evaluate every run with the same measures")

    rows = []
    groups: dict[int, list[int]] = {}  # comparisons grouped by number of paired queries
    pairs = []
    for ev in others:
        for m in measures:
            b, r, common = sig.paired_values(base_ev.per_query[m], ev.per_query[m])
            pairs.append((b, r))
            groups.setdefault(len(common), []).append(len(rows))
            wins, ties, losses = sig.win_tie_loss(b, r)
            rows.append({
                "run": ev.run_name, "baseline": baseline, "measure": m, "n_queries": len(common),
                "mean_baseline": float(b.mean()) if len(b) else np.nan,
                "mean_run": float(r.mean()) if len(r) else np.nan,
                "mean_delta": float((r - b).mean()) if len(b) else np.nan,
                "ci_lo": np.nan, "ci_hi": np.nan,
                "p_t": sig.paired_t_test(b, r), "p_wilcoxon": sig.wilcoxon_test(b, r),
                "p_permutation": np.nan,
                "wins": wins, "ties": ties, "losses": losses,
                "effect_size": sig.effect_size(b, r),
            })
    n_boot = permutations if bootstrap is None else bootstrap
    for n, members in groups.items():
        if n == 0:
            continue
        base = np.column_stack([pairs[i][0] for i in members])
        other = np.column_stack([pairs[i][1] for i in members])
        pvals = sig.permutation_test(base, other, permutations, seed)
        cis = sig.bootstrap_ci(base, other, confidence, n_boot, seed)
        for j, i in enumerate(members):
            rows[i]["p_permutation"] = float(pvals[j])
            rows[i]["ci_lo"], rows[i]["ci_hi"] = float(cis[j, 0]), float(cis[j, 1])

    columns = ["run", "baseline", "measure", "n_queries", "mean_baseline", "mean_run", "mean_delta",
               "ci_lo", "ci_hi", *(f"p_{t}" for t in TESTS), *(f"p_corrected_{t}" for t in TESTS),
               "wins", "ties", "losses", "effect_size", "significant", "markers"]
    frame = pd.DataFrame(rows, columns=[c for c in columns if c not in ("significant", "markers")
                                        and not c.startswith("p_corrected")])
    for t in TESTS:
        frame[f"p_corrected_{t}"] = sig.correct_pvalues(frame[f"p_{t}"].to_numpy(float), correction) \
            if len(frame) else np.array([], float)
    significant = [{t: bool(r[f"p_corrected_{t}"] < alpha) for t in TESTS} for _, r in frame.iterrows()]
    frame["significant"] = significant
    frame["markers"] = ["".join(MARKERS[t] for t in TESTS if s[t]) for s in significant]
    frame = frame[columns]
    frame.attrs.update({"baseline": baseline, "measures": measures, "permutations": permutations,
                        "bootstrap": n_boot, "seed": seed, "correction": correction,
                        "confidence": confidence, "alpha": alpha})
    return frame


def comparison_records(frame: pd.DataFrame) -> list[dict]:
    """The CLI/JSON form: ``ci95: [lo, hi]``, ``p`` and ``p_corrected`` as dicts per test."""
    out = []
    for r in frame.to_dict(orient="records"):
        out.append({
            "run": r["run"], "baseline": r["baseline"], "measure": r["measure"],
            "n_queries": int(r["n_queries"]), "mean_baseline": r["mean_baseline"],
            "mean_run": r["mean_run"], "mean_delta": r["mean_delta"],
            "ci95": [r["ci_lo"], r["ci_hi"]],
            "p": {t: r[f"p_{t}"] for t in TESTS},
            "p_corrected": {t: r[f"p_corrected_{t}"] for t in TESTS},
            "wins": int(r["wins"]), "ties": int(r["ties"]), "losses": int(r["losses"]),
            "effect_size": r["effect_size"], "significant": r["significant"],
        })
    return out


def paper_table(frame: pd.DataFrame, tests=("permutation",), digits: int = 4) -> pd.DataFrame:
    """A run x measure table of means with markers, for a paper.

    The baseline row shows its means; each other row shows ``mean (+delta)`` followed by
    the markers of ``tests`` whose corrected p-value is below alpha (see :data:`MARKERS`).
    """
    if frame.empty:
        return pd.DataFrame()
    measures = list(dict.fromkeys(frame["measure"]))
    baseline = frame["baseline"].iloc[0]
    table = {baseline: {m: f"{frame.loc[frame['measure'] == m, 'mean_baseline'].iloc[0]:.{digits}f}"
                        for m in measures}}
    for r in frame.itertuples(index=False):
        marks = "".join(MARKERS[t] for t in tests if r.significant[t])
        table.setdefault(r.run, {})[r.measure] = (f"{r.mean_run:.{digits}f} ({r.mean_delta:+.{digits}f})"
                                                  f"{marks}")
    out = pd.DataFrame.from_dict(table, orient="index")[measures]
    out.index.name = "run"
    return out


def markers_legend(frame: pd.DataFrame, tests=("permutation",)) -> str:
    """One sentence explaining the markers of :func:`paper_table`."""
    a = frame.attrs
    names = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
             "permutation": f"paired randomization test ({a.get('permutations')} sign flips, seed {a.get('seed')})"}
    corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "no"}[
        a.get("correction", "none")]
    parts = [f"{MARKERS[t]} p < {a.get('alpha', 0.05)} ({names[t]})" for t in tests]
    return (f"Baseline: {a.get('baseline')}. Delta vs baseline in parentheses; "
            + "; ".join(parts) + f", {corr} correction over {len(frame)} comparisons")


__all__ = ["compare_runs", "comparison_records", "paper_table", "markers_legend", "TESTS", "MARKERS"]
