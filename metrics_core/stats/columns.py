"""The comparison table's columns: one declaration (:data:`COLUMNS`) that the frame of
:func:`metrics_core.stats.comparison.compare_runs`, the plain table
(:meth:`metrics_core.report.comparison.Comparison.wide`, the command line's
``--format table|csv``), the HTML report and the app's tables read.
"""

from __future__ import annotations

from dataclasses import dataclass

from metrics_core.errors import N_

TESTS = ("t", "wilcoxon", "permutation")
#: Marker appended to a delta whose corrected p-value is below alpha, per test.
MARKERS = {"t": "†", "wilcoxon": "‡", "permutation": "*"}


@dataclass(frozen=True)
class Column:
    """One column of the comparison table (:func:`compare_runs`): the one declaration that the
    frame, the plain table (:meth:`metrics_core.report.comparison.Comparison.wide`, the command
    line's ``--format table|csv``) and the app's tables read.

    ``name``: the frame's column; ``heading``: its English heading, marked for the catalogs
    (``{test}`` stands for the test's name, :data:`metrics_core.report.legends.TEST_NAMES`);
    ``kind``: what a cell holds ("name", "count", "value": a mean or difference, "p",
    "flags": a dict test -> bool, "text"); ``plain``: in the plain table; ``answer``: in the
    app's first table (the p of the test shown only, the interval and wins / ties / losses
    each joined into one cell); ``detail``: in the app's table of every test's p-values;
    ``test``: the test whose p-value it holds; ``power``: a figure of the topic set size
    design (:mod:`metrics_core.stats.power`), filled and shown where it is asked
    (``compare(..., power=True)``, ``ranklab compare --power``, the app's power table);
    ``systems``: only where runs were grouped into systems of several runs
    (:mod:`metrics_core.stats.systems`), left out of the tables otherwise;
    ``help``: a sentence under the heading.
    """

    name: str
    heading: str
    kind: str
    plain: bool = True
    answer: bool = False
    detail: bool = False
    test: str | None = None
    help: str = ""
    power: bool = False
    systems: bool = False


#: The comparison table's columns, in order (one row per run and measure). A column added
#: here is in the frame (its value set in :func:`compare_runs`'s rows), the plain table and,
#: as its flags say, the app's tables.
COLUMNS: tuple[Column, ...] = (
    Column("run", N_("Run"), "name", answer=True, detail=True),
    Column("baseline", N_("Baseline"), "name", plain=False),
    Column("measure", N_("Measure"), "name", answer=True, detail=True),
    Column("n_queries", N_("Queries"), "count", detail=True),
    Column("mean_baseline", N_("Baseline mean"), "value", answer=True),
    Column("mean_run", N_("Run mean"), "value", answer=True),
    Column("mean_delta", "Δ", "value", answer=True, help=N_("run mean − baseline mean")),
    Column("ci_lo", N_("CI low"), "value", answer=True),
    Column("ci_hi", N_("CI high"), "value", answer=True),
    *(Column(f"p_{t}", N_("p ({test})"), "p", plain=False, detail=True, test=t) for t in TESTS),
    *(
        Column(f"p_corrected_{t}", N_("p ({test}, corrected)"), "p", True, True, True, t)
        for t in TESTS
    ),
    Column("wins", N_("Wins"), "count", answer=True),
    Column("ties", N_("Ties"), "count", answer=True),
    Column("losses", N_("Losses"), "count", answer=True),
    Column("effect_size", N_("Effect size (d)"), "value", detail=True),
    Column("significant", N_("Significant"), "flags", plain=False),
    Column("markers", N_("Significant"), "text", answer=True),
    # systems of several runs (seeds): runs per system, the spread between them, the test
    # that accounts for both queries and runs (metrics_core.stats.systems)
    Column("seeds_baseline", N_("Baseline runs"), "count", detail=True, systems=True),
    Column("seeds_run", N_("Runs"), "count", detail=True, systems=True),
    Column(
        "seed_sd_baseline",
        N_("Baseline seed SD"),
        "value",
        detail=True,
        systems=True,
        help=N_("standard deviation of the baseline system's runs' means"),
    ),
    Column(
        "seed_sd_run",
        N_("Seed SD"),
        "value",
        answer=True,
        detail=True,
        systems=True,
        help=N_("standard deviation of the system's runs' means"),
    ),
    Column("ci_seeds_lo", N_("CI low (queries and seeds)"), "value", systems=True),
    Column("ci_seeds_hi", N_("CI high (queries and seeds)"), "value", systems=True),
    Column("p_seeds", N_("p (queries and seeds)"), "p", detail=True, systems=True),
    Column(
        "p_corrected_seeds",
        N_("p (queries and seeds, corrected)"),
        "p",
        answer=True,
        detail=True,
        systems=True,
        help=N_("paired t-test with the seeds' variance added (Satterthwaite's df)"),
    ),
    Column(
        "sd_delta",
        N_("SD of Δ"),
        "value",
        plain=False,
        power=True,
        help=N_("standard deviation of the per-query differences"),
    ),
    Column(
        "queries_needed",
        N_("Queries needed"),
        "count",
        plain=False,
        power=True,
        help=N_("for the paired t-test to detect the observed Δ with the chosen power"),
    ),
    Column(
        "queries_needed_target",
        N_("Queries needed (chosen Δ)"),
        "count",
        plain=False,
        power=True,
        help=N_("for the paired t-test to detect the chosen Δ with the chosen power"),
    ),
    Column(
        "min_detectable",
        N_("Smallest detectable Δ"),
        "value",
        plain=False,
        power=True,
        help=N_("the smallest Δ the current queries detect with the chosen power"),
    ),
)
#: The frame's columns, in order.
COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
#: The columns of the topic set size design.
POWER_COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMNS if c.power)
#: The power table's columns (the Compare page's, the comparative table's): each row's names
#: and query count (the detail table's), the observed difference, then the topic set size
#: figures.
POWER_TABLE: tuple[str, ...] = (
    *(c.name for c in COLUMNS if c.detail and c.kind in ("name", "count") and not c.systems),
    "mean_delta",
    *POWER_COLUMNS,
)
