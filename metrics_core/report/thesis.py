"""The thesis table: runs x measures, every cell and a summary row labelled (its files:
:mod:`metrics_core.report.thesis_export`).

Each row is a run (or a saved evaluation), each measure column its mean over the queries
kept (all of them, or those whose date in the query metadata lies in a range). A value is
graded on a three-level scale against per-measure thresholds ``(good, fair)``: level 0 at
or above ``good``, level 1 at or above ``fair``, else level 2 (every comparison is ``>=``).
A row's level is the worst level of its measures. The summary row holds the mean of each
measure over the rows, graded the same way, and an overall verdict: the worst level of
those means, named with the verdict words.

Defaults follow the semantic-search panel's specification: MRR (the mean of ``RR``) good
at 0.7, nDCG@10 at 0.6, P@5 at 0.5, the middle band down to half of each (the
specification leaves it open); levels *Good / Fair / Needs improvement* (Spanish *Bueno /
Regular / Mejorable*), verdicts *Efficient / Acceptable / Needs improvement* (*Eficiente /
Aceptable / Mejorable*). Names and thresholds are arguments of :class:`Grading`.

The library returns structure and English words; the exports take a ``words`` mapping
(:data:`DEFAULT_WORDS` keys) so callers pass translated words. Exports live in
:mod:`metrics_core.report.thesis_export`.

References
----------
Voorhees (1999), "The TREC-8 Question Answering Track Report" (MRR). Järvelin and
Kekäläinen (2002), "Cumulated gain-based evaluation of IR techniques" (nDCG).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.ranking.measures import aggregate
from metrics_core.ranking.registry import parse_measure
from metrics_core.stats.comparison import POWER_TABLE
from metrics_core.stats.power import paired_power
from metrics_core.stats.significance import (
    CORRECTIONS,
    correct_pvalues,
    paired_t_test,
    paired_values,
    permutation_test,
    wilcoxon_test,
)

#: "Good" thresholds of the semantic-search panel's specification (canonical names).
DEFAULT_GOOD = {"RR": 0.7, "nDCG@10": 0.6, "P@5": 0.5}
#: The middle band starts at this fraction of the good threshold unless given.
FAIR_RATIO = 0.5
LEVEL_NAMES = (N_("Good"), N_("Fair"), N_("Needs improvement"))
VERDICT_NAMES = (N_("Efficient"), N_("Acceptable"), N_("Needs improvement"))
TESTS = ("t", "wilcoxon", "permutation")


def canonical_measure(name: str) -> str:
    """The registry's name of a measure (``MRR`` -> ``RR``, ``ndcg@10`` -> ``nDCG@10``).

    >>> canonical_measure("MRR@10"), canonical_measure("ndcg@10")
    ('RR@10', 'nDCG@10')
    """
    return parse_measure(name).name


def display_measure(name: str) -> str:
    """A measure's label in the thesis table and its exports: ``RR`` is labelled ``MRR``.

    The semantic-search panel's specification heads its comparative table "MRR" (the mean
    of the reciprocal rank over queries, the *mean reciprocal rank*). Everywhere else (the
    app's other tables, charts and pickers, the reports) a measure goes by its canonical
    name, the registry's (``RR``, as ir_measures writes it): one name per measure.

    >>> display_measure("RR"), display_measure("RR(rel=2)@10"), display_measure("P@5")
    ('MRR', 'MRR(rel=2)@10', 'P@5')
    """
    return re.sub(r"^RR(?=$|[@(])", "MRR", name)


@dataclass(frozen=True)
class Grading:
    """Thresholds and names of the three-level scale.

    Parameters
    ----------
    thresholds : mapping
        measure -> ``(good, fair)`` with ``good >= fair``; a value ``v`` is level 0 when
        ``v >= good``, 1 when ``v >= fair``, else 2. Measures without a threshold are
        shown without a label.
    names : three str
        Names of the levels of a value (cells and rows).
    verdicts : three str
        Names of the levels of the summary's overall verdict.

    Examples
    --------
    >>> g = Grading.from_good()
    >>> [g.level("RR", v) for v in (0.7, 0.35, 0.3499)]
    [0, 1, 2]
    >>> g.level("AP", 0.9), g.level("RR", float("nan"))
    (-1, -1)
    """

    thresholds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    names: tuple[str, str, str] = LEVEL_NAMES
    verdicts: tuple[str, str, str] = VERDICT_NAMES

    def __post_init__(self):
        clean = {}
        for measure, pair in dict(self.thresholds).items():
            try:
                good, fair = (float(x) for x in pair)
            except (TypeError, ValueError):
                raise InputError(
                    N_("the thresholds of {measure} are not two numbers: {pair!r}"),
                    hint=N_("give (good, fair), e.g. (0.7, 0.35)"),
                    params={"measure": measure, "pair": pair},
                ) from None
            if not (math.isfinite(good) and math.isfinite(fair)) or fair > good:
                raise InputError(
                    N_("thresholds of {measure}: good={good}, fair={fair}"),
                    hint=N_("give finite numbers with good >= fair"),
                    params={"measure": measure, "good": good, "fair": fair},
                )
            clean[canonical_measure(measure)] = (good, fair)
        object.__setattr__(self, "thresholds", clean)
        for kind in ("names", "verdicts"):
            value = tuple(str(x) for x in getattr(self, kind))
            if len(value) != 3:
                raise InputError(
                    N_("names of the levels: three are needed, got {n}")
                    if kind == "names"
                    else N_("verdicts of the levels: three are needed, got {n}"),
                    params={"n": len(value)},
                )
            object.__setattr__(self, kind, value)

    @classmethod
    def from_good(
        cls, good: Mapping[str, float] | None = None, fair_ratio: float = FAIR_RATIO, **names
    ) -> Grading:
        """Thresholds ``(good, good * fair_ratio)`` (default: :data:`DEFAULT_GOOD`)."""
        good = DEFAULT_GOOD if good is None else good
        return cls({m: (g, g * fair_ratio) for m, g in good.items()}, **names)

    def level(self, measure: str, value: float) -> int:
        """0, 1 or 2; -1 when the measure has no threshold or the value is NaN."""
        pair = self.thresholds.get(measure)
        if pair is None or value is None or math.isnan(value):
            return -1
        return 0 if value >= pair[0] else 1 if value >= pair[1] else 2

    def name(self, level: int, verdict: bool = False) -> str:
        """The name of a level ("" for -1)."""
        return "" if level < 0 else (self.verdicts if verdict else self.names)[level]


@dataclass
class ThesisTable:
    """Runs x measures with levels, a summary row and significance against a baseline.

    ``values`` / ``levels`` / ``pvalues`` are frames indexed by run, one column per
    (canonical) measure; ``levels`` holds -1 where there is no label; ``pvalues`` holds the
    corrected p-values (NaN for the baseline, or everywhere without a baseline). ``power``:
    with a baseline, how many queries each (run, measure) comparison needs (one row each,
    the columns named as :data:`metrics_core.stats.comparison.COLUMNS` names them: ``run``,
    ``measure``, ``n_queries``, ``mean_delta``, ``sd_delta``, ``queries_needed``,
    ``min_detectable``), for a paired t-test at ``alpha`` with power ``power_target``
    (:mod:`metrics_core.stats.power`); None without a baseline.
    """

    runs: list[str]
    measures: list[str]
    values: pd.DataFrame
    n_queries: pd.Series
    levels: pd.DataFrame
    row_levels: pd.Series
    summary: pd.Series
    summary_levels: pd.Series
    verdict: int
    pvalues: pd.DataFrame
    grading: Grading
    baseline: str | None = None
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    date_from: str | None = None
    date_to: str | None = None
    undated: list[str] = field(default_factory=list)
    power: pd.DataFrame | None = None
    power_target: float = 0.8

    @property
    def power_settings(self) -> dict | None:
        """The power analysis's settings as a comparison states them
        (:func:`metrics_core.report.legends.power_sentence`); None without a baseline."""
        if self.power is None:
            return None
        return {"power": self.power_target, "alpha": self.alpha, "delta": None, "method": "exact"}

    @property
    def significant(self) -> pd.DataFrame:
        """True where the corrected p-value is below ``alpha``."""
        return self.pvalues.lt(self.alpha)

    @property
    def n_comparisons(self) -> int:
        """Number of (run, measure) pairs in the correction's family."""
        return int(self.pvalues.notna().sum().sum())


def dated_queries(metadata: pd.DataFrame | None, date_from=None, date_to=None) -> pd.Index:
    """Query ids whose ``date`` lies in ``[date_from, date_to]`` (whole days, inclusive).

    ``metadata`` is indexed by query id with a ``date`` column (see
    :func:`metrics_core.io.metadata.read_metadata`); queries without a date are left out.

    >>> meta = pd.DataFrame({"date": ["2025-01-05", "2025-02-01", None]}, index=["a", "b", "c"])
    >>> dated_queries(meta, "2025-01-01", "2025-01-31").tolist()
    ['a']
    """
    if metadata is None or "date" not in metadata.columns:
        raise InputError(
            N_("a date range needs query metadata with a 'date' column"),
            hint=N_("give a metadata table with query_id and date columns"),
        )
    dates = pd.to_datetime(metadata["date"], errors="coerce").dt.normalize()
    keep = dates.notna()
    lo, hi = _day(date_from, "from"), _day(date_to, "to")
    if lo is not None and hi is not None and lo > hi:
        raise InputError(
            N_("the date range starts after it ends ({start} > {end})"),
            hint=N_("swap the two dates"),
            params={"start": lo.date(), "end": hi.date()},
        )
    if lo is not None:
        keep &= dates >= lo
    if hi is not None:
        keep &= dates <= hi
    return pd.Index(metadata.index[keep.to_numpy()].astype(str))


def _day(value, which: str):
    if value is None or value == "":
        return None
    try:
        return pd.Timestamp(value).normalize()
    except (ValueError, TypeError):
        problem = (
            N_("the 'from' date {value!r} is not a date")
            if which == "from"
            else N_("the 'to' date {value!r} is not a date")
        )
        raise InputError(
            problem, hint=N_("write it as YYYY-MM-DD"), params={"value": value}
        ) from None


def _per_query(evaluations) -> tuple[list[str], list[pd.DataFrame], list[dict | None]]:
    items: list[tuple[str, pd.DataFrame, dict | None]]
    if isinstance(evaluations, Mapping):
        items = [(str(k), v, None) for k, v in evaluations.items()]
    else:
        items = [(ev.run_name, ev.per_query, dict(ev.aggregate)) for ev in evaluations]
    if not items:
        raise InputError(N_("the table needs at least one run or saved evaluation"))
    names = [n for n, _, _ in items]
    if len(set(names)) != len(names):
        raise InputError(
            N_("two runs have the same name"),
            hint=N_("rename one: {names}"),
            params={"names": ", ".join(names)},
        )
    frames = []
    for _name, frame, _ in items:
        frame = frame.copy()
        frame.index = frame.index.astype(str)
        frames.append(frame)
    return names, frames, [a for _, _, a in items]


def _mean(values: pd.Series, measure: str) -> float:
    """The registry's summary of one measure, queries added in trec_eval's order."""
    v = values.dropna()
    v = v.iloc[np.argsort(v.index.to_numpy(dtype=str), kind="stable")]
    return aggregate(v.to_numpy(dtype=np.float64), parse_measure(measure))


def _row_mean(column: np.ndarray) -> float:
    """Mean over the rows (NaN skipped), added top to bottom; NaN when no row has a value."""
    v = column[~np.isnan(column)]
    return float(np.cumsum(v)[-1] / v.size) if v.size else float("nan")


def _pvalue(base: pd.Series, other: pd.Series, test: str, n_permutations: int, seed: int) -> float:
    b, r, _ = paired_values(base, other)
    if test == "t":
        return paired_t_test(b, r)
    if test == "wilcoxon":
        return wilcoxon_test(b, r)
    return float(permutation_test(b, r, n_permutations=n_permutations, seed=seed))


def _significance(names, frames, measures, baseline, test, correction, n_permutations, seed):
    """Corrected p-values of every (run, measure) pair against the baseline (NaN elsewhere)."""
    pvalues = pd.DataFrame(np.nan, index=names, columns=measures)
    if baseline is None:
        return pvalues
    if baseline not in names:
        raise InputError(
            N_("no run named {name!r}"),
            hint=N_("the baseline must be one of: {names}"),
            params={"name": baseline, "names": ", ".join(names)},
        )
    base = frames[names.index(baseline)]
    for name, frame in zip(names, frames, strict=True):
        if name != baseline:
            for m in measures:
                pvalues.at[name, m] = _pvalue(base[m], frame[m], test, n_permutations, seed)
    flat = correct_pvalues(pvalues.to_numpy().ravel(), correction)
    return pd.DataFrame(flat.reshape(pvalues.shape), index=names, columns=measures)


def _power(names, frames, measures, baseline, alpha, target) -> pd.DataFrame | None:
    """How many queries each (run, measure) comparison against the baseline needs."""
    if baseline is None:
        return None
    base = frames[names.index(baseline)]
    rows = []
    for name, frame in zip(names, frames, strict=True):
        if name == baseline:
            continue
        for m in measures:
            b, r, _ = paired_values(base[m], frame[m])
            figures = paired_power(b, r, alpha, target)
            delta = float(np.mean(r - b)) if len(b) else float("nan")
            rows.append(
                {"run": name, "measure": m, "n_queries": len(b), "mean_delta": delta} | figures
            )
    # the power table's declared columns, less the chosen difference's (none chosen here)
    columns = [c for c in POWER_TABLE if c != "queries_needed_target"]
    return pd.DataFrame(rows, columns=columns)


def thesis_table(
    evaluations,
    measures=None,
    *,
    grading: Grading | None = None,
    metadata: pd.DataFrame | None = None,
    date_from=None,
    date_to=None,
    baseline: str | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    n_permutations: int = 10000,
    seed: int = 0,
    power: float = 0.8,
) -> ThesisTable:
    """Build the comparative table of runs (or saved evaluations) x measures.

    Parameters
    ----------
    evaluations : list of Evaluation, or mapping name -> per-query DataFrame
        The rows, in order. A saved evaluation is its per-query frame (query id index,
        one column per measure).
    measures : list of str, optional
        Columns (any accepted spelling, ``MRR`` included); default: the first row's.
    grading : Grading, optional
        Default ``Grading.from_good()`` (the specification's thresholds).
    metadata, date_from, date_to
        Keep only the queries whose metadata ``date`` lies in the range (inclusive).
        Without a range every query is kept and each mean equals the evaluation's own
        aggregate; with one, the mean over the kept queries, added in trec_eval's order
        (equal to evaluating the qrels and run restricted to those queries).
    baseline, test, correction, alpha, n_permutations, seed
        Paired test of every other run against ``baseline`` on each measure (common
        queries; ``t``, ``wilcoxon`` or ``permutation``), corrected over all (run,
        measure) pairs (:func:`metrics_core.stats.significance.correct_pvalues`).
    power : float
        With a baseline, the power of the topic set size design of each comparison (a paired
        t-test at ``alpha``, uncorrected): :attr:`ThesisTable.power`.

    Examples
    --------
    >>> per_query = {"bm25": pd.DataFrame({"RR": [1.0, 0.25], "P@5": [0.6, 0.2]}, index=["q1", "q2"])}
    >>> t = thesis_table(per_query, ["MRR", "P@5"])
    >>> t.values.loc["bm25"].tolist(), t.grading.name(t.row_levels["bm25"])
    ([0.625, 0.4], 'Fair')
    """
    names, frames, aggregates = _per_query(evaluations)
    measures = [canonical_measure(m) for m in (measures or list(frames[0].columns))]
    for name, frame in zip(names, frames, strict=True):
        missing = [m for m in measures if m not in frame.columns]
        if missing:
            raise InputError(
                N_("run {name!r} has no values of {measures}"),
                hint=N_("evaluate it with these measures, or choose others"),
                params={"name": name, "measures": ", ".join(missing)},
            )
    grading = grading or Grading.from_good()
    if test not in TESTS:
        raise InputError(
            N_("unknown test {test!r}"),
            hint=N_("accepted: {choices}"),
            params={"test": test, "choices": ", ".join(TESTS)},
        )
    if correction not in CORRECTIONS:
        raise InputError(
            N_("unknown correction {correction!r}"),
            hint=N_("accepted: {choices}"),
            params={"correction": correction, "choices": ", ".join(CORRECTIONS)},
        )
    undated: list[str] = []
    filtered = date_from not in (None, "") or date_to not in (None, "")
    if filtered:
        keep = dated_queries(metadata, date_from, date_to)
        assert metadata is not None  # dated_queries refuses a missing table
        dated = set(
            metadata.index[pd.to_datetime(metadata["date"], errors="coerce").notna()].astype(str)
        )
        undated = sorted(set().union(*(f.index for f in frames)) - dated)
        frames = [f.loc[f.index.intersection(keep)] for f in frames]
        if not any(len(f) for f in frames):
            raise InputError(
                N_("no evaluated query is dated from {start} to {end}"),
                hint=N_("widen the date range or check the metadata's date column"),
                params={"start": date_from or "...", "end": date_to or "..."},
            )
    values = pd.DataFrame(
        [
            [
                (agg[m] if agg is not None and not filtered and m in agg else _mean(f[m], m))
                for m in measures
            ]
            for f, agg in zip(frames, aggregates, strict=True)
        ],
        index=names,
        columns=measures,
        dtype=np.float64,
    )
    n_queries = pd.Series([len(f) for f in frames], index=names)
    levels = pd.DataFrame(
        [[grading.level(m, values.at[r, m]) for m in measures] for r in names],
        index=names,
        columns=measures,
        dtype=int,
    )
    summary = pd.Series({m: _row_mean(values[m].to_numpy()) for m in measures}, dtype=np.float64)
    summary_levels = pd.Series({m: grading.level(m, summary[m]) for m in measures}, dtype=int)
    pvalues = _significance(
        names, frames, measures, baseline, test, correction, n_permutations, seed
    )
    if not 0.0 < float(power) < 1.0:
        raise InputError(
            N_("the power must be between 0 and 1, got {value}"),
            field="power",
            params={"value": power},
        )
    return ThesisTable(
        names,
        measures,
        values,
        n_queries,
        levels,
        levels.max(axis=1).astype(int),
        summary,
        summary_levels,
        int(summary_levels.max()) if len(measures) else -1,
        pvalues,
        grading,
        baseline,
        test,
        correction,
        float(alpha),
        None if date_from in (None, "") else str(_day(date_from, "from").date()),
        None if date_to in (None, "") else str(_day(date_to, "to").date()),
        undated,
        _power(names, frames, measures, baseline, float(alpha), float(power)),
        float(power),
    )


__all__ = [
    "DEFAULT_GOOD",
    "FAIR_RATIO",
    "LEVEL_NAMES",
    "VERDICT_NAMES",
    "TESTS",
    "Grading",
    "ThesisTable",
    "canonical_measure",
    "display_measure",
    "dated_queries",
    "thesis_table",
]
