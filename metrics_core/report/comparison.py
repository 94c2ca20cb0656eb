"""A comparison of runs against a baseline as a result that formats itself.

:func:`compare` runs :func:`metrics_core.stats.comparison.compare_runs` and returns a
:class:`Comparison`: the rows (one per run and measure), the settings they were computed
with, and every export the command line and the app offer (the JSON of
``ranklab compare --format json``, a plain table, CSV, a paper table in Markdown and in
LaTeX), each stating the RankLab version and the conventions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, overload

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.report.cells import (
    LATEX_MARKERS,
    latex_cell,
    latex_escape,
    latex_table,
    markdown_escape,
)
from metrics_core.report.evaluations import as_runs, evaluations_json, runs_from_json
from metrics_core.report.exports import format_table, json_safe, provenance
from metrics_core.report.legends import (
    markers_legend,
    paper_table,
    power_sentence,
    queries_sentence,
)
from metrics_core.stats.comparison import (
    COLUMNS,  # noqa: F401  (read by Comparison.columns)
    DEFAULT_FAMILY,
    POWER_COLUMNS,
    TESTS,
    compare_runs,
    comparison_records,
    leaderboard,
)

if TYPE_CHECKING:
    from metrics_core.report.all_pairs import AllPairsComparison

#: The settings the JSON's ``comparison`` object and every export's provenance state.
PARAMETERS = (
    "baseline",
    "permutations",
    "bootstrap",
    "seed",
    "correction",
    "family",
    "confidence",
    "alpha",
    "query_set",
)
#: How the comparison of systems of several runs tests (the JSON's ``system_test``)
SYSTEM_TEST = (
    "paired t-test on the per-query means with the variance of each system's runs' means "
    "added, Satterthwaite's degrees of freedom (Satterthwaite 1946; Bouthillier et al. 2021)"
)
#: Columns of the plain comparison table (:meth:`Comparison.wide`): the declared columns
#: (:data:`metrics_core.stats.comparison.COLUMNS`) that are ``plain``.
WIDE_COLUMNS = tuple(c.name for c in COLUMNS if c.plain and not c.systems)
#: The plain table's further columns where runs form systems of several runs.
SYSTEM_COLUMNS = tuple(c.name for c in COLUMNS if c.plain and c.systems)


class Comparison:
    """Every run against a baseline, measure by measure: the rows, the settings, the exports.

    Made by :func:`compare` (or :func:`compare_json`); not meant to be built by hand.

    Attributes
    ----------
    settings : dict
        baseline, measures, permutations, bootstrap (resamples of the interval), seed,
        correction, confidence, alpha, query_set, tests, interval, ``n_queries`` (measure ->
        the size of its query set; None where the pairs differ, ``query_set="pairwise"``)
        and ``conventions`` (a dict, or None when the runs did not say).
    runs : tuple
        The compared evaluations (:class:`~metrics_core.evaluation.Evaluation` or
        :class:`~metrics_core.report.evaluations.RunValues`), baseline included, in the
        order given.

    Examples
    --------
    >>> idx = pd.Index(["q1", "q2", "q3", "q4"], name="query_id")
    >>> c = compare({"a": pd.DataFrame({"AP": [0.1, 0.2, 0.3, 0.4]}, index=idx),
    ...              "b": pd.DataFrame({"AP": [0.3, 0.5, 0.2, 0.9]}, index=idx)},
    ...             n_permutations=1000)
    >>> c
    Comparison(baseline='a', runs=['b'], measures=['AP'], query_set='common', correction='holm')
    >>> r = c.records[0]
    >>> r["run"], r["n_queries"], round(r["mean_delta"], 4), sorted(r["p"])
    ('b', 4, 0.225, ['permutation', 't', 'wilcoxon'])
    >>> c.paper(digits=2).to_dict(orient="index")
    {'a': {'AP': '0.25'}, 'b': {'AP': '0.47 (+0.23)'}}
    """

    def __init__(self, frame: pd.DataFrame, runs: Sequence = (), conventions=None):
        self._frame = frame
        self.runs = tuple(runs)
        conv = conventions.as_dict() if hasattr(conventions, "as_dict") else conventions
        self._conventions = conventions
        sizes = (
            frame.groupby("measure", sort=False)["n_queries"].agg(["min", "max"])
            if len(frame)
            else None
        )
        n_queries = (
            {}
            if sizes is None
            else {str(m): int(lo) if lo == hi else None for m, (lo, hi) in sizes.iterrows()}
        )
        self.settings = {
            "family": DEFAULT_FAMILY,
            **frame.attrs,
            "n_queries": n_queries,
            "conventions": None if conv is None else dict(conv),
        }

    # --- the rows -----------------------------------------------------------------------
    @property
    def records(self) -> list[dict]:
        """One dict per (run, measure), as the JSON's ``comparisons`` list: ``ci95: [lo, hi]``,
        ``p`` and ``p_corrected`` as dicts per test, ``significant`` per test."""
        return comparison_records(self._frame)

    def to_frame(self) -> pd.DataFrame:
        """The long table: one row per (run, measure), every column of
        :func:`~metrics_core.stats.comparison.compare_runs` (the settings are in
        :attr:`settings`, not in the frame's ``attrs``)."""
        out = self._frame.copy()
        out.attrs = {}
        return out

    def wide(self) -> pd.DataFrame:
        """The plain table: means, delta, interval, corrected p of each test, wins / ties /
        losses, effect size and markers (the command line's ``--format table`` columns);
        with a power analysis (``compare(..., power=True)``) its figures after them, and
        where runs form systems of several runs their columns."""
        columns = list(WIDE_COLUMNS) + (list(POWER_COLUMNS) if self.power() else [])
        columns += list(SYSTEM_COLUMNS) if self.settings.get("systems") else []
        out = self.to_frame()[columns]
        for c in ("queries_needed", "queries_needed_target"):
            if c in out:  # whole numbers (an unreachable size shows as missing)
                out[c] = out[c].replace(np.inf, np.nan).astype("Int64")
        return out

    def power(self) -> dict | None:
        """The topic set size design's settings (power, alpha, chosen delta, method and its
        references in words), or None when it was not asked."""
        return self.settings.get("power")

    def power_sentence(self, gettext=None) -> str:
        """The sentence stating the power analysis and its method (empty when not asked)."""
        return power_sentence(self.power(), gettext)

    def columns(self) -> list[str]:
        """The declared columns this comparison holds values for: the systems' columns
        (:mod:`metrics_core.stats.systems`) only when runs were grouped into systems."""
        grouped = bool(self.settings.get("systems"))
        return [c.name for c in COLUMNS if grouped or not c.systems]

    def paper(self, tests: Sequence[str] = TESTS, digits: int = 4) -> pd.DataFrame:
        """Runs x measures: the baseline's means, each other run's ``mean (+delta)`` and the
        markers of ``tests`` (:func:`~metrics_core.report.legends.paper_table`)."""
        return paper_table(self._frame, tests=tests, digits=digits)

    def leaderboard(self, n_resamples: int = 1000, test: str | None = None) -> pd.DataFrame:
        """The Overview's board on this comparison's runs, measures, query set and settings:
        per (run, measure) the mean, its percentile-bootstrap interval (``n_resamples``, at
        the comparison's confidence and seed), the best mark and the marker of ``test``
        (default: the last test computed) from this comparison's corrected p-values, not
        recomputed. Its legend is :func:`~metrics_core.report.legends.leaderboard_legend`.
        """
        s = self.settings
        test = test or s["tests"][-1]
        if test not in s["tests"]:
            raise InputError(
                N_("the comparison did not run the {test} test"),
                hint=N_("accepted: {choices}"),
                field="test",
                params={"test": test, "choices": ", ".join(s["tests"])},
            )
        return leaderboard(
            list(self.runs),
            s["baseline"],
            list(s["measures"]),
            query_set=s["query_set"],
            n_resamples=n_resamples,
            confidence=s["confidence"],
            seed=s["seed"],
            n_permutations=s["permutations"],
            correction=s["correction"],
            alpha=s["alpha"],
            test=test,
            comparison=self._frame,
            family=s["family"],
        )

    # --- text ---------------------------------------------------------------------------
    def legend(self, tests: Sequence[str] = TESTS, paper: bool = True, gettext=None) -> str:
        """The sentence under a comparison table: baseline, what each marker means (test,
        alpha, correction over how many comparisons) and the query set with its size.

        ``paper=False`` leaves out "Delta vs baseline in parentheses" (a screen table with
        its own delta column); ``gettext``: a translation function for every phrase (the
        app passes the visitor's language), English without it."""
        text = markers_legend(self._frame, tests=tests, paper=paper, gettext=gettext)
        systems = self.settings.get("systems")
        if systems:
            tr = gettext or (lambda t: t)
            named = ", ".join(
                tr(N_("{system} ({n} runs)")).format(system=s, n=len(m)) for s, m in systems.items()
            )
            text += " " + tr(
                N_(
                    "Systems: {systems}; per query the mean over a system's runs. Seed SD: the "
                    "standard deviation of a system's runs' means. p (queries and seeds): the "
                    "paired t-test with the seeds' variance added (Satterthwaite's degrees of "
                    "freedom; Bouthillier et al. 2021)."
                )
            ).format(systems=named)
        return text

    def queries(self, gettext=None) -> str:
        """ "Queries: ..." naming the query set and its size per measure."""
        return queries_sentence(self._frame, gettext=gettext)

    def provenance(self) -> dict:
        """RankLab version, conventions and :data:`PARAMETERS` (what every export states)."""
        params = self.parameters()
        if "power" in params:  # its method is stated in words beside the table
            params["power"] = {k: v for k, v in params["power"].items() if k != "method_text"}
        return provenance(self._conventions, **params)

    def parameters(self) -> dict:
        """The JSON's ``comparison`` object: :data:`PARAMETERS` and their values (and
        ``power``, the topic set size design's settings, when it was asked; ``systems`` and
        ``system_test`` where runs form systems)."""
        out = {k: self.settings[k] for k in PARAMETERS}
        power = self.power()
        if power:
            out["power"] = dict(power)
        if self.settings.get("systems"):
            out["systems"] = self.settings["systems"]
            out["system_test"] = SYSTEM_TEST
        return out

    # --- exports ------------------------------------------------------------------------
    def to_dict(self, per_query: bool = False) -> dict:
        """The object ``ranklab compare --format json`` prints (JSON-safe: NaN is None).

        ``json.dumps(c.to_dict(per_query), indent=2)`` is the command line's output byte for
        byte: ``version``, ``conventions``, ``runs`` (each run's aggregate, diagnostics and,
        with ``per_query``, its per-query values), ``comparison`` (:meth:`parameters`) and
        ``comparisons`` (:attr:`records`).
        """
        out = evaluations_json(self.runs, self._conventions, per_query)
        out["comparison"] = self.parameters()
        out["comparisons"] = self.records
        return json_safe(out)

    def to_table(self, fmt: str = "table") -> str:
        """The plain table (:meth:`wide`) as text (``"table"``) or ``"csv"``, titled with the
        query set, with the provenance (the command line's ``--format table|csv``)."""
        if fmt not in ("table", "csv"):
            raise InputError(
                N_("unknown table format {format!r}"),
                hint=N_("accepted: table, csv"),
                field="format",
                params={"format": fmt},
            )
        title = self.queries()
        if self.power():
            title = f"{title}\n{self.power_sentence()}"
        return format_table(self.wide(), fmt, prov=self.provenance(), index=False, title=title)

    def to_markdown(self, tests: Sequence[str] = TESTS, digits: int = 4) -> str:
        """The paper table (:meth:`paper`) in plain Markdown: a pipe table, the legend and the
        provenance as plain paragraphs; every cell and sentence escaped (no HTML, links or
        emphasis survive, so a ``*`` marker and ``_`` in names print as themselves)."""
        table = self.paper(tests, digits).reset_index()
        cols = [str(c) for c in table.columns]
        lines = [
            "| " + " | ".join(markdown_escape(c) for c in cols) + " |",
            "|" + "---|" * len(cols),
        ]
        for row in table.itertuples(index=False, name=None):
            lines.append("| " + " | ".join(markdown_escape(v) for v in row) + " |")
        line = format_table(pd.DataFrame(), "table", prov=self.provenance()).strip()
        return (
            "\n".join([*lines, "", markdown_escape(self.legend(tests)), "", markdown_escape(line)])
            + "\n"
        )

    def to_latex(
        self,
        tests: Sequence[str] = TESTS,
        digits: int = 4,
        caption: str | None = None,
        label: str | None = None,
    ) -> str:
        r"""The paper table (:meth:`paper`) as a LaTeX ``table`` with booktabs rules.

        Cells, headers, the caption and the legend are escaped; the markers are
        ``\textdagger``, ``\textdaggerdbl`` and ``*`` in superscript. The caption is short
        (``caption``, default "Every run against BASELINE: mean (difference)"); the legend
        is a note under the table; the provenance (version, conventions, settings) is in
        ``%`` comments. Needs ``\usepackage{booktabs}``.
        """
        table = self.paper(tests, digits)
        baseline = self.settings["baseline"]
        caption = caption or f"Every run against {baseline}: mean (difference)"
        line = format_table(pd.DataFrame(), "table", prov=self.provenance()).strip()
        return latex_table(
            ["run", *table.columns],
            [[latex_escape(run), *(latex_cell(v) for v in row)] for run, row in table.iterrows()],
            caption,
            label,
            line,
            self.legend(tests),
        )

    def __repr__(self) -> str:
        s = self.settings
        runs = list(dict.fromkeys(self._frame["run"])) if len(self._frame) else []
        return (
            f"Comparison(baseline={s['baseline']!r}, runs={runs}, measures={list(s['measures'])}, "
            f"query_set={s['query_set']!r}, correction={s['correction']!r})"
        )

    def _repr_html_(self) -> str:
        return self.wide().to_html(index=False, na_rep="–", float_format=lambda v: f"{v:.4f}")


@overload
def compare(
    evaluations,
    baseline: str | None = ...,
    *,
    measures=...,
    n_permutations: int = ...,
    seed: int = ...,
    correction: str = ...,
    confidence: float = ...,
    n_resamples: int | None = ...,
    alpha: float = ...,
    query_set: str = ...,
    tests: Sequence[str] = ...,
    interval: bool = ...,
    conventions=...,
    family: str = ...,
    all_pairs: Literal[False] = ...,
    test: str = ...,
    systems: Mapping[str, Sequence[str]] | None = ...,
    power: bool | float = ...,
    power_alpha: float | None = ...,
    power_delta: float | None = ...,
    power_method: str = ...,
) -> Comparison: ...


@overload
def compare(
    evaluations,
    baseline: str | Sequence[str] | None = ...,
    *,
    measures=...,
    n_permutations: int = ...,
    seed: int = ...,
    correction: str = ...,
    confidence: float = ...,
    n_resamples: int | None = ...,
    alpha: float = ...,
    query_set: str = ...,
    tests: Sequence[str] = ...,
    interval: bool = ...,
    conventions=...,
    family: str = ...,
    all_pairs: bool = ...,
    test: str = ...,
    systems: Mapping[str, Sequence[str]] | None = ...,
    power: bool | float = ...,
    power_alpha: float | None = ...,
    power_delta: float | None = ...,
    power_method: str = ...,
) -> Comparison | AllPairsComparison: ...


def compare(
    evaluations,
    baseline: str | Sequence[str] | None = None,
    *,
    measures=None,
    n_permutations: int = 10000,
    seed: int = 0,
    correction: str = "holm",
    confidence: float = 0.95,
    n_resamples: int | None = None,
    alpha: float = 0.05,
    query_set: str = "common",
    tests: Sequence[str] = TESTS,
    interval: bool = True,
    conventions=None,
    family: str = DEFAULT_FAMILY,
    all_pairs: bool = False,
    test: str = "permutation",
    systems: Mapping[str, Sequence[str]] | None = None,
    power: bool | float = False,
    power_alpha: float | None = None,
    power_delta: float | None = None,
    power_method: str = "exact",
) -> Comparison | AllPairsComparison:
    """Every run against ``baseline`` on every measure, as a :class:`Comparison`.

    With ``all_pairs=True``, every run against every other; with a list of baselines
    (``baseline=["bm25", "dense"]``), each baseline against every run: an
    :class:`~metrics_core.report.all_pairs.AllPairsComparison`
    (:func:`~metrics_core.report.all_pairs.compare_all_pairs`, one ``test``: ``permutation``,
    ``t``, ``wilcoxon`` or ``tukey``).

    Parameters
    ----------
    evaluations : sequence of Evaluation or RunValues, or mapping
        The runs (baseline included): evaluations, or run name -> per-query DataFrame
        (index query id, one column per measure), or system name -> a list of evaluations
        (a system of several runs, e.g. seeds).
    baseline : str, optional
        The baseline's run name (default: the first run).
    measures, n_permutations, seed, correction, confidence, n_resamples, alpha, query_set, tests, interval, family :
        As :func:`metrics_core.stats.comparison.compare_runs` (same defaults, same numbers);
        ``family``: the correction's scope, ``"all"`` pairs or ``"per_measure"`` (PyTerrier).
    conventions : Conventions or dict, optional
        What the runs were evaluated with (default: the first evaluation's
        ``conventions``, when it has one); stated by every export.
    systems : mapping, optional
        System name -> the names of its runs (seeds, folds, restarts): each system is
        compared through its per-query mean over its runs; each row then also holds the
        runs per system, their spread (seed SD) and a test that accounts for queries and
        seeds (interval and p-value, corrected like the others):
        :mod:`metrics_core.stats.systems`. ``baseline`` may name a system.
    power : bool or float
        How many queries each comparison needs (topic set size design: Sakai, IRJ 2016;
        Webber, Moffat & Zobel, CIKM 2008): ``True`` for power 0.8, or the power. Adds to
        every row the standard deviation of the per-query differences, the queries the
        paired t-test needs to detect the observed difference (``queries_needed``) and the
        chosen one (``power_delta``: ``queries_needed_target``), and the smallest difference
        the current queries detect (``min_detectable``), power from the noncentral t
        (:mod:`metrics_core.stats.power`); ``to_frame``, ``to_dict`` (each record's
        ``power``, the settings in ``comparison.power``) and the plain table show them.
    power_alpha, power_delta, power_method :
        The t-test's level (default ``alpha``), a chosen difference to size the query set
        for, and ``"exact"`` (noncentral t) or ``"nagata"`` (Sakai's Excel tool's
        approximation).

    Returns
    -------
    Comparison

    Raises
    ------
    InputError
        No runs, an unknown baseline (``field="baseline"``), or a bad setting.

    Examples
    --------
    >>> import metrics_core as mc
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> a = mc.evaluate(qrels, {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 2.0, "d2": 1.0}}, ["RR"])
    >>> b = mc.evaluate(qrels, {"q1": {"d1": 1.0, "d2": 2.0}, "q2": {"d1": 1.0, "d2": 2.0}}, ["RR"])
    >>> a, b = a.renamed("a"), b.renamed("b")
    >>> c = mc.compare([a, b], "a", n_permutations=100)
    >>> [(r["mean_baseline"], r["mean_run"], r["wins"], r["losses"]) for r in c.records]
    [(0.75, 0.75, 1, 1)]
    >>> sorted(c.to_dict())
    ['comparison', 'comparisons', 'conventions', 'runs', 'version']
    """
    evaluations, systems = _systems_from_mapping(evaluations, systems)
    if systems and (all_pairs or (baseline is not None and not isinstance(baseline, str))):
        raise InputError(
            N_("systems of several runs are compared against one baseline, not every pair"),
            field="systems",
        )
    if all_pairs or (baseline is not None and not isinstance(baseline, str)):
        from metrics_core.report.all_pairs import compare_all_pairs

        return compare_all_pairs(
            evaluations,
            baselines=None
            if all_pairs and (baseline is None or isinstance(baseline, str))
            else baseline,
            measures=measures,
            test=test,
            n_permutations=n_permutations,
            seed=seed,
            correction=correction,
            alpha=alpha,
            query_set=query_set,
            conventions=conventions,
            **_power_options(power, power_alpha, power_delta, power_method),
        )
    runs = as_runs(evaluations)
    if not runs:
        raise InputError(
            N_("no runs to compare"),
            hint=N_("give the baseline and at least one other run"),
            field="runs",
        )
    if conventions is None:
        conventions = getattr(runs[0], "conventions", None)
    members_of = None
    if systems:
        from metrics_core.stats.systems import group_runs

        runs, members_of = group_runs(runs, systems)
    baseline = runs[0].run_name if baseline is None else baseline
    frame = compare_runs(
        runs,
        baseline,
        measures,
        n_permutations=n_permutations,
        seed=seed,
        correction=correction,
        confidence=confidence,
        n_resamples=n_resamples,
        alpha=alpha,
        query_set=query_set,
        tests=tests,
        interval=interval,
        family=family,
        **_power_options(power, power_alpha, power_delta, power_method),
    )
    if members_of is not None:
        from metrics_core.stats.systems import check_systems, seed_columns

        attrs = dict(frame.attrs)
        frame = seed_columns(frame, members_of, query_set, confidence, correction, family)
        attrs["systems"] = check_systems(systems, _member_names(evaluations))
        frame.attrs = attrs
    return Comparison(frame, runs, conventions)


def _member_names(evaluations) -> list[str]:
    return [ev.run_name for ev in as_runs(evaluations)]


def _systems_from_mapping(evaluations, systems):
    """A mapping system -> list of evaluations as the runs and ``systems`` (each run named
    by its own name, or ``SYSTEM#k`` where two would share one)."""
    if not isinstance(evaluations, Mapping) or not any(
        isinstance(v, list | tuple) for v in evaluations.values()
    ):
        return evaluations, dict(systems or {})
    runs, groups = [], dict(systems or {})
    taken: set[str] = set()
    for name, value in evaluations.items():
        if isinstance(value, list | tuple):
            members = []
            for k, ev in enumerate(value, start=1):
                run_name = getattr(ev, "run_name", f"{name}#{k}")
                if run_name in taken or run_name == name:
                    run_name = f"{name}#{k}"
                if ev.run_name != run_name:
                    ev = (
                        ev.renamed(run_name)
                        if hasattr(ev, "renamed")
                        else dataclasses.replace(ev, run_name=run_name)
                    )
                taken.add(run_name)
                members.append(run_name)
                runs.append(ev)
            groups[str(name)] = members
        else:
            runs.extend(as_runs({name: value}))
            taken.add(str(name))
    return runs, groups


def _power_options(power, power_alpha, power_delta, power_method) -> dict:
    """The power keywords of :func:`compare_runs` from :func:`compare`'s (``power=True``:
    0.8)."""
    if power is False or power is None:
        return {}
    level = 0.8 if power is True else float(power)
    return {
        "power": level,
        "power_alpha": power_alpha,
        "power_delta": power_delta,
        "power_method": power_method,
    }


def compare_json(
    payload: Mapping,
    baseline: str | None = None,
    *,
    source: str = "the evaluations JSON",
    **settings,
) -> Comparison | AllPairsComparison:
    """A :class:`Comparison` of the runs saved in an evaluations JSON object.

    ``payload`` is what ``ranklab evaluate --per-query --format json`` writes (or the
    ``runs`` part of ``ranklab compare --per-query --format json``): each run's per-query
    values are compared as :func:`compare` compares evaluations, under the file's
    conventions. ``settings`` are :func:`compare`'s keywords.

    Examples
    --------
    >>> saved = {"conventions": {"ties": "trec_eval"}, "runs": [
    ...     {"name": "a", "aggregate": {"AP": 0.5}, "per_query": {"q1": {"AP": 0.5}, "q2": {"AP": 0.5}}},
    ...     {"name": "b", "aggregate": {"AP": 0.75}, "per_query": {"q1": {"AP": 1.0}, "q2": {"AP": 0.5}}}]}
    >>> c = compare_json(saved, "a", n_permutations=100)
    >>> c.records[0]["mean_delta"], c.settings["conventions"]
    (0.25, {'ties': 'trec_eval'})
    """
    runs, conventions = runs_from_json(payload, source)
    settings.setdefault("conventions", conventions)
    return compare(runs, baseline, **settings)


__all__ = ["Comparison", "compare", "compare_json", "PARAMETERS", "WIDE_COLUMNS", "LATEX_MARKERS"]
