"""Compare evaluated runs against a baseline: deltas, intervals, tests, corrections.

:func:`compare_runs` takes :class:`~metrics_core.evaluation.Evaluation` objects
(anything with ``run_name`` and a ``per_query`` DataFrame indexed by query id) and pairs
each run with the baseline, measure by measure, on ONE query set per measure, the same for
every comparison of that measure (``query_set``):

* ``"common"`` (default): the queries every run (baseline included) has a value for. With
  runs evaluated under ``missing_queries="skip"`` these are the queries every run answered.
* ``"qrels"``: the union of the runs' queries, a value that is absent scoring 0. With runs
  evaluated under ``missing_queries="zero"`` (trec_eval ``-c``) every run already has a
  value for every qrels query, so this is the qrels query set.
* ``"pairwise"``: each pair on its own common set (the behaviour before one set per table;
  a run table built from it mixes query sets, so :func:`paper_table` refuses it).

So ``mean_baseline`` and ``n_queries`` are equal across the rows of a measure, and
``mean_baseline + mean_delta == mean_run`` on those ``n_queries`` queries.

The correction family holds the tests of effectiveness only: a measure the registry declares
neither higher- nor lower-is-better (NumQ, NumRet, NumRel, NumRelRet, Judged@k, Unjudged@k,
Hole@k ...) describes a run rather than judges it, so its p-values are shown uncorrected and
never marked. Its scope (``family``, one default, :data:`DEFAULT_FAMILY`, for every page
and export) is ``"all"``: every (run, measure) comparison of the call, R runs besides the
baseline times M effectiveness measures; or ``"per_measure"``: each measure's R
comparisons on their own, as PyTerrier's ``Experiment`` corrects. The permutation test and the bootstrap draw the same random numbers for every
comparison with the same number of paired queries (one matrix product for all of them),
so a p-value does not depend on what else was compared.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.stats import significance as sig
from metrics_core.stats.bootstrap import shared_mean_intervals
from metrics_core.stats.columns import (  # noqa: F401 (the comparison's columns, read here)
    COLUMN_NAMES,
    COLUMNS,
    MARKERS,
    POWER_COLUMNS,
    POWER_TABLE,
    TESTS,
    Column,
)
from metrics_core.stats.direction import measure_direction
from metrics_core.stats.families import (
    DEFAULT_FAMILY,
    FAMILY_SCOPES,
    corrected_in_families,
    correction_family,
    effectiveness_measures,
)
from metrics_core.stats.power import paired_power
from metrics_core.stats.power import settings as power_settings

QUERY_SETS = ("common", "qrels", "pairwise")


def _find(evaluations, name):
    for ev in evaluations:
        if ev.run_name == name:
            return ev
    raise InputError(
        N_("no run named {name!r} to use as the baseline"),
        hint=N_("runs: {names}"),
        params={"name": name, "names": ", ".join(ev.run_name for ev in evaluations)},
    )


def aligned_values(evaluations, measure: str, query_set: str = "common") -> pd.DataFrame:
    """Per-query values of ``measure`` for every run on one query set.

    Parameters
    ----------
    evaluations : list of Evaluation
        Objects with ``run_name`` and ``per_query``.
    measure : str
        A column of every ``per_query``.
    query_set : {"common", "qrels"}
        ``"common"``: the query ids where every run has a (non-NaN) value; ``"qrels"``: the
        union of the runs' query ids, absent or NaN values scoring 0.

    Returns
    -------
    pandas.DataFrame
        Index: query ids (sorted), one column per run (in the order given), no NaN.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> a = NS(run_name="a", per_query=pd.DataFrame({"AP": [0.5, 1.0]}, index=["q1", "q2"]))
    >>> b = NS(run_name="b", per_query=pd.DataFrame({"AP": [0.25]}, index=["q2"]))
    >>> aligned_values([a, b], "AP").to_dict()
    {'a': {'q2': 1.0}, 'b': {'q2': 0.25}}
    >>> aligned_values([a, b], "AP", "qrels")["b"].tolist()
    [0.0, 0.25]
    """
    if query_set not in ("common", "qrels"):
        raise InputError(
            N_("unknown query set {query_set!r}"),
            hint=N_("accepted: {choices}"),
            params={"query_set": query_set, "choices": "common, qrels"},
        )
    columns = {ev.run_name: ev.per_query[measure] for ev in evaluations}
    table = pd.concat(columns, axis=1, join="outer") if columns else pd.DataFrame()
    table = table.sort_index()
    if query_set == "common":
        return table.dropna(how="any").astype(np.float64)
    return table.fillna(0.0).astype(np.float64)


def compare_runs(
    evaluations,
    baseline: str,
    measures=None,
    n_permutations: int = 10000,
    seed: int = 0,
    correction: str = "holm",
    confidence: float = 0.95,
    n_resamples: int | None = None,
    alpha: float = 0.05,
    query_set: str = "common",
    tests=TESTS,
    interval: bool = True,
    family: str = DEFAULT_FAMILY,
    power: float | None = None,
    power_alpha: float | None = None,
    power_delta: float | None = None,
    power_method: str = "exact",
) -> pd.DataFrame:
    """Every run against ``baseline`` on every measure.

    Parameters
    ----------
    evaluations : list of Evaluation
        Objects with ``run_name`` and ``per_query`` (index query id, one column per measure).
    baseline : str
        The ``run_name`` of the baseline.
    measures : list of str, optional
        Columns to compare; default: the baseline's columns.
    n_permutations : int
        Sign-flip permutations of the randomization test.
    seed : int
        Seed of the permutation test and the bootstrap.
    correction : {"holm", "bonferroni", "bh", "none"}
        Applied to each test's p-values over the family (``family``); measures that are
        not effectiveness measures stay outside it (corrected p-value NaN).
    family : {"all", "per_measure"}
        The correction's scope: every (run, effectiveness measure) comparison together
        (default), or each measure's comparisons apart (PyTerrier).
    confidence : float
        Level of the paired bootstrap percentile interval of the mean difference.
    n_resamples : int, optional
        Bootstrap resamples of the interval (default: ``n_permutations``).
    alpha : float
        Level of the significance markers (on corrected p-values).
    query_set : {"common", "qrels", "pairwise"}
        The queries of every comparison of a measure (see the module docstring).
    tests : iterable of {"t", "wilcoxon", "permutation"}
        The tests to compute (default: all three). A test left out has NaN p-values and is
        never significant; the others are unchanged (each test is corrected on its own).
    interval : bool
        Compute the paired bootstrap interval of the mean difference (default); False
        leaves ``ci_lo``/``ci_hi`` NaN (a caller that does not show it saves the resamples).
    power : float, optional
        The power of the topic set size design (e.g. 0.8): fills ``sd_delta``,
        ``queries_needed`` (queries for the paired t-test to detect the observed mean
        difference), ``queries_needed_target`` (for ``power_delta``) and
        ``min_detectable`` (the smallest difference the current queries detect)
        (:mod:`metrics_core.stats.power`); None (default) leaves them NaN.
    power_alpha : float, optional
        The level of that t-test (default: ``alpha``).
    power_delta : float, optional
        A chosen difference (in the measure's units) to size the query set for.
    power_method : {"exact", "nagata"}
        The noncentral t (default) or Nagata's approximation of it (Sakai's Excel tool).

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
    >>> row = compare_runs([a, b], "a", n_permutations=1000).iloc[0]
    >>> row["run"], int(row["n_queries"]), round(float(row["mean_delta"]), 4)
    ('b', 4, 0.225)
    """
    if correction not in sig.CORRECTIONS:
        raise InputError(
            N_("unknown correction {correction!r}"),
            hint=N_("accepted: {choices}"),
            params={"correction": correction, "choices": ", ".join(sig.CORRECTIONS)},
        )
    if n_permutations < 1:
        raise InputError(
            N_("the number of permutations must be at least 1, got {n}"),
            params={"n": n_permutations},
        )
    if query_set not in QUERY_SETS:
        raise InputError(
            N_("unknown query set {query_set!r}"),
            hint=N_("accepted: {choices}"),
            params={"query_set": query_set, "choices": ", ".join(QUERY_SETS)},
        )
    if family not in FAMILY_SCOPES:
        raise InputError(
            N_("unknown correction family {family!r}"),
            hint=N_("accepted: {choices}"),
            params={"family": family, "choices": ", ".join(FAMILY_SCOPES)},
        )
    if power is not None and not 0.0 < float(power) < 1.0:
        raise InputError(
            N_("the power must be between 0 and 1, got {value}"),
            field="power",
            params={"value": power},
        )
    tests = tuple(tests)
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        raise InputError(
            N_("unknown test {test!r}"),
            hint=N_("accepted: {choices}"),
            params={"test": unknown[0], "choices": ", ".join(TESTS)},
        )
    base_ev = _find(evaluations, baseline)
    measures = list(base_ev.per_query.columns) if measures is None else list(measures)
    others = [ev for ev in evaluations if ev.run_name != baseline]
    for ev in [base_ev, *others]:
        absent = [m for m in measures if m not in ev.per_query.columns]
        if absent:
            raise InputError(
                N_("run {name!r} has no values for {measures}"),
                hint=N_("evaluate every run with the same measures"),
                params={"name": ev.run_name, "measures": ", ".join(absent)},
            )

    rows: list[dict[str, object]] = []
    groups: dict[int, list[int]] = {}  # comparisons grouped by number of paired queries
    pairs = []
    tables = (
        {}
        if query_set == "pairwise"
        else {m: aligned_values([base_ev, *others], m, query_set) for m in measures}
    )
    for ev in others:
        for m in measures:
            if query_set == "pairwise":
                b, r, common = sig.paired_values(base_ev.per_query[m], ev.per_query[m])
            else:
                t = tables[m]
                b, r, common = t[baseline].to_numpy(), t[ev.run_name].to_numpy(), t.index
            pairs.append((b, r))
            groups.setdefault(len(common), []).append(len(rows))
            wins, ties, losses = sig.win_tie_loss(b, r)
            rows.append(
                {
                    "run": ev.run_name,
                    "baseline": baseline,
                    "measure": m,
                    "n_queries": len(common),
                    "mean_baseline": float(b.mean()) if len(b) else np.nan,
                    "mean_run": float(r.mean()) if len(r) else np.nan,
                    "mean_delta": float((r - b).mean()) if len(b) else np.nan,
                    "ci_lo": np.nan,
                    "ci_hi": np.nan,
                    "p_t": sig.paired_t_test(b, r) if "t" in tests else np.nan,
                    "p_wilcoxon": sig.wilcoxon_test(b, r) if "wilcoxon" in tests else np.nan,
                    "p_permutation": np.nan,
                    "wins": wins,
                    "ties": ties,
                    "losses": losses,
                    "effect_size": sig.effect_size(b, r),
                    **(
                        paired_power(
                            b,
                            r,
                            alpha if power_alpha is None else power_alpha,
                            float(power),
                            power_delta,
                            power_method,
                        )
                        if power is not None
                        else dict.fromkeys(POWER_COLUMNS, np.nan)
                    ),
                }
            )
    n_resamples_ci = n_permutations if n_resamples is None else n_resamples
    for n, members in groups.items():
        if n == 0:
            continue
        base = np.column_stack([pairs[i][0] for i in members])
        other = np.column_stack([pairs[i][1] for i in members])
        if "permutation" in tests:
            # 2-D values: an array of p-values (asarray states it for the checker; no copy)
            pvals = np.asarray(sig.permutation_test(base, other, n_permutations, seed))
            for j, i in enumerate(members):
                rows[i]["p_permutation"] = float(pvals[j])
        if interval:
            cis = sig.bootstrap_ci(base, other, confidence, n_resamples_ci, seed)
            for j, i in enumerate(members):
                rows[i]["ci_lo"], rows[i]["ci_hi"] = float(cis[j, 0]), float(cis[j, 1])

    # every declared column (:data:`COLUMNS`); the corrected p-values, the flags and the
    # markers are filled below, over the whole table
    frame = pd.DataFrame(rows, columns=list(COLUMN_NAMES))
    for t in TESTS:
        frame[f"p_corrected_{t}"] = corrected_in_families(
            frame, frame[f"p_{t}"].to_numpy(float), correction, family
        )
    significant = [
        {t: bool(r[f"p_corrected_{t}"] < alpha) for t in TESTS} for _, r in frame.iterrows()
    ]
    frame["significant"] = significant
    frame["markers"] = ["".join(MARKERS[t] for t in TESTS if s[t]) for s in significant]
    frame.attrs.update(
        {
            "baseline": baseline,
            "measures": measures,
            "permutations": n_permutations,
            "bootstrap": n_resamples_ci,
            "seed": seed,
            "correction": correction,
            "confidence": confidence,
            "alpha": alpha,
            "query_set": query_set,
            "tests": tests,
            "interval": interval,
            "family": family,
            "power": power_settings(power, alpha, power_alpha, power_delta, power_method),
        }
    )
    return frame


def comparison_records(frame: pd.DataFrame) -> list[dict]:
    """The CLI/JSON form: ``ci95: [lo, hi]``, ``p`` and ``p_corrected`` as dicts per test;
    a corrected p-value outside the family (a count, a test not run) is None."""
    out = []
    for r in frame.to_dict(orient="records"):
        out.append(
            {
                "run": r["run"],
                "baseline": r["baseline"],
                "measure": r["measure"],
                "n_queries": int(r["n_queries"]),
                "mean_baseline": r["mean_baseline"],
                "mean_run": r["mean_run"],
                "mean_delta": r["mean_delta"],
                "ci95": [r["ci_lo"], r["ci_hi"]],
                "p": {t: r[f"p_{t}"] for t in TESTS},
                "p_corrected": {
                    t: None if pd.isna(r[f"p_corrected_{t}"]) else r[f"p_corrected_{t}"]
                    for t in TESTS
                },
                "wins": int(r["wins"]),
                "ties": int(r["ties"]),
                "losses": int(r["losses"]),
                "effect_size": r["effect_size"],
                "significant": r["significant"],
                **({"power": {c: r[c] for c in POWER_COLUMNS}} if frame.attrs.get("power") else {}),
            }
        )
        if pd.notna(r.get("seeds_run", np.nan)):  # systems of several runs
            out[-1]["systems"] = {
                "runs": int(r["seeds_run"]),
                "runs_baseline": int(r["seeds_baseline"]),
                "seed_sd": r["seed_sd_run"],
                "seed_sd_baseline": r["seed_sd_baseline"],
                "ci_seeds": [r["ci_seeds_lo"], r["ci_seeds_hi"]],
                "p_seeds": r["p_seeds"],
                "p_corrected_seeds": r["p_corrected_seeds"],
            }
    return out


def leaderboard(
    evaluations,
    baseline: str,
    measures=None,
    query_set: str = "common",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    n_permutations: int = 10000,
    correction: str = "holm",
    alpha: float = 0.05,
    test: str = "permutation",
    comparison: pd.DataFrame | None = None,
    family: str = DEFAULT_FAMILY,
) -> pd.DataFrame:
    """Runs x measures on one query set per measure: mean, bootstrap CI, best, significance.

    Parameters
    ----------
    evaluations : list of Evaluation
    baseline : str
        The run the others are tested against (its own markers are empty).
    measures : list of str, optional
    query_set : {"common", "qrels"}
        See :func:`aligned_values`.
    n_resamples, confidence, seed :
        Percentile bootstrap of each run's mean over the queries (Efron and Tibshirani 1993).
    n_permutations, correction, alpha, family :
        Passed to :func:`compare_runs`.
    test : {"t", "wilcoxon", "permutation"}
        The test whose corrected p-value gives the marker.
    comparison : DataFrame, optional
        An existing :func:`compare_runs` result with the same settings (avoids recomputing).

    Returns
    -------
    pandas.DataFrame
        One row per (run, measure): run, measure, n_queries, mean, median, ci_lo, ci_hi,
        best (bool: the best mean of the measure; none for counts such as NumRet),
        delta (vs baseline), p (the test's uncorrected p-value: the same for the pair in
        every table), p_corrected (over :func:`correction_family`), marker (``MARKERS[test]`` when p_corrected <
        alpha). ``attrs`` holds the parameters and the comparison frame.
    """
    if query_set not in ("common", "qrels"):
        raise InputError(
            N_("unknown query set {query_set!r}"),
            hint=N_("accepted: {choices}"),
            params={"query_set": query_set, "choices": "common, qrels"},
        )
    if test not in TESTS:
        raise InputError(
            N_("unknown test {test!r}"),
            hint=N_("accepted: {choices}"),
            params={"test": test, "choices": ", ".join(TESTS)},
        )
    base_ev = _find(evaluations, baseline)
    measures = list(base_ev.per_query.columns) if measures is None else list(measures)
    if comparison is None:  # only what the board shows: the chosen test, no interval of the delta
        comparison = compare_runs(
            evaluations,
            baseline,
            measures,
            n_permutations=n_permutations,
            seed=seed,
            correction=correction,
            alpha=alpha,
            query_set=query_set,
            tests=(test,),
            interval=False,
            family=family,
        )
    by_pair = {(r.run, r.measure): r for r in comparison.itertuples(index=False)}
    names = [ev.run_name for ev in evaluations]
    tables = {m: aligned_values(evaluations, m, query_set) for m in measures}
    intervals = shared_mean_intervals(tables, names, n_resamples, confidence, seed)
    rows = []
    for m in measures:
        table = tables[m]
        mean, lo, hi, median = intervals[m]
        direction = measure_direction(m)
        finite = np.isfinite(mean)
        best = np.zeros(len(names), bool)
        if direction and finite.any() and len(names) > 1:  # one run: nothing to be best among
            target = np.nanmax(mean * direction)
            best = finite & np.isclose(mean * direction, target, rtol=0, atol=1e-12)
        for j, name in enumerate(names):
            c = by_pair.get((name, m))
            p = float(getattr(c, f"p_corrected_{test}")) if c is not None else np.nan
            rows.append(
                {
                    "run": name,
                    "measure": m,
                    "n_queries": int(len(table)),
                    "mean": float(mean[j]),
                    "median": float(median[j]),
                    "ci_lo": float(lo[j]),
                    "ci_hi": float(hi[j]),
                    "best": bool(best[j]),
                    "delta": float(c.mean_delta) if c is not None else np.nan,
                    "p": float(getattr(c, f"p_{test}")) if c is not None else np.nan,
                    "p_corrected": p,
                    "marker": MARKERS[test] if c is not None and p < alpha else "",
                }
            )
    out = pd.DataFrame(rows)
    out.attrs.update(
        {
            "baseline": baseline,
            "measures": measures,
            "query_set": query_set,
            "n_resamples": n_resamples,
            "confidence": confidence,
            "seed": seed,
            "permutations": n_permutations,
            "correction": correction,
            "alpha": alpha,
            "test": test,
            "family": comparison.attrs.get("family", family),
        }
    )
    return out


__all__ = [
    "Column",
    "COLUMNS",
    "COLUMN_NAMES",
    "POWER_COLUMNS",
    "POWER_TABLE",
    "compare_runs",
    "comparison_records",
    "leaderboard",
    "correction_family",
    "effectiveness_measures",
    "corrected_in_families",
    "FAMILY_SCOPES",
    "DEFAULT_FAMILY",
    "aligned_values",
    "TESTS",
    "MARKERS",
    "QUERY_SETS",
]
