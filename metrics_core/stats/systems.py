"""Systems with several runs (seeds, folds, random restarts): a system's value for a query
is the mean over its runs, and its comparison accounts for the spread between its runs.

A system ``A = {a1, a2, a3}`` is compared through its per-query means
``m_A(q) = mean_s x_{A,s}(q)``: every test and interval of
:func:`metrics_core.stats.comparison.compare_runs` then sees one value per query and
system, so the difference is the difference of the systems' means. Two more numbers go
beside each difference:

* **seed SD** (``seed_sd_run``, ``seed_sd_baseline``): the standard deviation (n - 1) of
  the system's runs' means over the compared queries, the spread between seeds that a
  single run hides (0 runs' worth of information for a system of one run: NaN);
* **a test on queries and seeds** (``p_seeds``, its interval ``ci_seeds_lo``/``_hi`` and its
  corrected p): the paired t-test on the per-query means, whose variance gets the seeds'
  added: ``t = D / sqrt(s_D^2 / Q + s_A^2 / S_A + s_B^2 / S_B)``, with ``D`` the mean
  per-query difference, ``s_D`` its standard deviation over the ``Q`` queries, ``s_A`` the
  standard deviation of system A's ``S_A`` runs' means, and Satterthwaite's (1946)
  degrees of freedom for the sum of the three variances (Welch 1947). A system of one run
  adds nothing: the test is then the paired t-test. Adding the seeds' variance is what
  Bouthillier et al. (2021, "Accounting for variance in machine learning benchmarks",
  MLSys) ask of a comparison of training runs: two systems whose runs differ only by their
  seeds' luck are declared different at about the test's level, where a test on the
  per-query means alone takes that luck for a difference
  (``tests/stats/test_systems.py`` simulates it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.evaluation import RunValues


def parse_system(text: str) -> tuple[str, list[str]]:
    """``NAME=RUN,RUN,...`` -> ``(NAME, [RUN, ...])`` (the command line's ``--system``)."""
    name, sep, runs = str(text).partition("=")
    members = [r.strip() for r in runs.split(",") if r.strip()]
    if not sep or not name.strip() or not members:
        raise InputError(
            N_("a system is written NAME=RUN,RUN,..., not {text!r}"),
            field="systems",
            option="--system",
            params={"text": text},
        )
    return name.strip(), members


def check_systems(systems: Mapping[str, Sequence[str]], run_names: Sequence[str]) -> dict:
    """``{system: [run, ...]}`` checked against the runs' names: each run in one system at
    most, every member a run, no system named like a run outside it."""
    out: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    names = list(run_names)
    for system, members in systems.items():
        members = [str(m) for m in ([members] if isinstance(members, str) else members)]
        if not members:
            raise InputError(
                N_("the system {system!r} has no runs"), field="systems", params={"system": system}
            )
        for m in members:
            if m not in names:
                raise InputError(
                    N_("the system {system!r} names {run!r}, which is not a run"),
                    hint=N_("runs: {names}"),
                    field="systems",
                    params={"system": system, "run": m, "names": ", ".join(names)},
                )
            if m in seen:
                raise InputError(
                    N_("the run {run!r} is in two systems, {first!r} and {second!r}"),
                    field="systems",
                    params={"run": m, "first": seen[m], "second": system},
                )
            seen[m] = system
        out[str(system)] = list(dict.fromkeys(members))
    for system in out:
        if system in names and system not in seen:
            raise InputError(
                N_("the system {system!r} has the name of a run outside it"),
                field="systems",
                params={"system": system},
            )
    return out


def group_runs(evaluations: Sequence, systems: Mapping[str, Sequence[str]]):
    """The runs as systems: each system one :class:`~metrics_core.evaluation.RunValues`
    whose per-query values are the mean over its runs (a query some run has no value for
    has none), the runs outside every system as they are, in the order of their first run;
    and ``{system: [per-query frames of its runs]}`` (one frame for a lone run)."""
    by_name = {ev.run_name: ev for ev in evaluations}
    systems = check_systems(systems, list(by_name))
    owner = {m: s for s, members in systems.items() for m in members}
    out, members_of, done = [], {}, set()
    for ev in evaluations:
        system = owner.get(ev.run_name)
        if system is None:
            out.append(ev)
            members_of[ev.run_name] = [ev.per_query]
            continue
        if system in done:
            continue
        done.add(system)
        frames = [by_name[m].per_query for m in systems[system]]
        stacked = pd.concat(frames, keys=range(len(frames)), axis=0)
        mean = stacked.groupby(level=1, sort=True).mean()
        count = stacked.groupby(level=1, sort=True).count()
        mean = mean.where(count == len(frames))  # a query needs every run's value
        mean.index.name = frames[0].index.name
        out.append(RunValues(system, mean))
        members_of[system] = frames
    return out, members_of


def seed_t_test(base: np.ndarray, run: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """``(ci_lo, ci_hi, p)`` of the difference of two systems' means, queries and seeds
    accounted for; ``base`` and ``run``: queries x the system's runs (see the module's
    description)."""
    from scipy import stats

    q = base.shape[0]
    if q < 2:
        return np.nan, np.nan, np.nan
    d = run.mean(axis=1) - base.mean(axis=1)
    parts = [(float(d.var(ddof=1)) / q, q - 1)]
    for x in (base, run):
        if x.shape[1] > 1:
            parts.append((float(x.mean(axis=0).var(ddof=1)) / x.shape[1], x.shape[1] - 1))
    v = sum(part for part, _ in parts)
    delta = float(d.mean())
    if v == 0:
        return delta, delta, (1.0 if delta == 0 else 0.0)
    df = v**2 / sum(part**2 / dof for part, dof in parts if part > 0)
    t = delta / np.sqrt(v)
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * np.sqrt(v)
    return delta - half, delta + half, float(2 * stats.t.sf(abs(t), df))


def seed_columns(
    frame: pd.DataFrame,
    members_of: Mapping[str, list],
    query_set: str,
    confidence: float,
    correction: str,
    family: str,
) -> pd.DataFrame:
    """``frame`` (a :func:`compare_runs` frame of systems) with the systems' columns filled:
    runs per system, seed SD of each side, the test on queries and seeds with its interval
    (its p-value corrected like the other tests)."""
    from metrics_core.stats.families import corrected_in_families

    frame = frame.copy()
    everyone = list(members_of)
    for i, row in frame.iterrows():
        m = row["measure"]
        base_frames, run_frames = members_of[row["baseline"]], members_of[row["run"]]
        if query_set == "pairwise":
            names = [row["baseline"], row["run"]]
        else:
            names = everyone
        table = pd.concat(
            {(n, k): f[m] for n in names for k, f in enumerate(members_of[n])},
            axis=1,
        ).sort_index()
        table = table.dropna(how="any") if query_set != "qrels" else table.fillna(0.0)
        base = table[row["baseline"]].to_numpy(dtype=np.float64)
        run = table[row["run"]].to_numpy(dtype=np.float64)
        frame.at[i, "seeds_baseline"] = len(base_frames)
        frame.at[i, "seeds_run"] = len(run_frames)
        frame.at[i, "seed_sd_baseline"] = _seed_sd(base)
        frame.at[i, "seed_sd_run"] = _seed_sd(run)
        lo, hi, p = seed_t_test(base, run, confidence)
        frame.at[i, "ci_seeds_lo"], frame.at[i, "ci_seeds_hi"] = lo, hi
        frame.at[i, "p_seeds"] = p
    frame["p_corrected_seeds"] = corrected_in_families(
        frame, frame["p_seeds"].to_numpy(float), correction, family
    )
    return frame


def _seed_sd(values: np.ndarray) -> float:
    """The standard deviation (n - 1) of the runs' means over the queries; NaN for one run."""
    if values.shape[1] < 2 or values.shape[0] == 0:
        return np.nan
    return float(np.std(values.mean(axis=0), ddof=1))


__all__ = [
    "parse_system",
    "check_systems",
    "group_runs",
    "seed_t_test",
    "seed_columns",
]
