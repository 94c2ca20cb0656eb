"""The Compare page's computations: the comparison of every run with a baseline
(:func:`metrics_core.compare`, cached on the per-query values and settings), its on-screen
table and its exports.

The names of the tests and corrections are the library's one copy
(:data:`metrics_core.report.legends.TEST_NAMES`, ``CORRECTION_NAMES``), translated
where they are shown (:func:`test_label`, :func:`correction_label`).
"""

from __future__ import annotations

import html
import json

import pandas as pd
import streamlit as st

import metrics_core as mc
from metrics_core.ranking.registry import COMMON_MEASURES, COMPARE_MEASURES
from metrics_core.report.catalogs import N_
from metrics_core.report.comparison import Comparison
from metrics_core.report.evaluations import RunValues
from metrics_core.report.legends import CORRECTION_NAMES, TEST_NAMES
from metrics_core.stats.comparison import COLUMNS, MARKERS, POWER_TABLE, TESTS, Column
from metrics_core.stats.significance import CORRECTIONS
from ui.common import budget
from ui.common.cache import remember
from ui.common.i18n import gettext as _
from ui.common.style import COUNT_FORMAT, MEASURE_FORMAT, plain, say

#: The page's tables in the session cache (:mod:`ui.common.cache`).
COMPARISONS, DELTAS = "compare.comparisons", "compare.deltas"
FOLDS, CRITERIA, ALL_PAIRS = "compare.folds", "compare.criteria", "compare.all_pairs"
THESIS = "compare.thesis"

#: The library's test and correction names, marked for the catalogs (``TEST_NAMES`` and
#: ``CORRECTION_NAMES`` are not in a scanned module; tests/app/test_compare_page.py checks
#: that every one of their values is here).
LIBRARY_WORDS = (
    N_("paired t-test"),
    N_("Wilcoxon signed-rank test"),
    N_("paired randomization test"),
    N_("Holm"),
    N_("Bonferroni"),
    N_("Benjamini-Hochberg"),
    N_("no correction"),
)


def test_label(test: str) -> str:
    """A test's name on screen (:data:`TEST_NAMES`, translated)."""
    return _(TEST_NAMES[test])


def correction_label(correction: str) -> str:
    """A correction's name on screen (:data:`CORRECTION_NAMES`, translated; "none" reads
    "no correction")."""
    return _("no correction") if correction == "none" else _(CORRECTION_NAMES[correction])


def _settings_key(conventions) -> str:
    return repr(conventions.as_dict() if hasattr(conventions, "as_dict") else conventions)


def compare(
    evaluations: list,
    baseline: str,
    measures: list,
    permutations: int,
    seed: int,
    correction: str,
    confidence: float,
    query_set: str,
    conventions=None,
    systems: dict | None = None,
    power: float = 0.8,
    power_delta: float | None = None,
) -> Comparison:
    """:func:`metrics_core.compare` of the loaded evaluations, kept in the session for these
    very evaluations and settings (:func:`ui.common.cache.remember`): widget changes that only
    pick what to draw do not rerun 10,000 permutations."""
    key = (
        _settings_key(conventions),
        baseline,
        tuple(measures),
        int(permutations),
        int(seed),
        correction,
        float(confidence),
        query_set,
        float(power),
        power_delta,
        tuple((k, tuple(v)) for k, v in (systems or {}).items()),
    )

    def build() -> Comparison:
        with st.spinner(_("Running the significance tests ...")):
            return mc.compare(
                [RunValues.from_evaluation(ev) for ev in evaluations],
                baseline,
                measures=list(measures),
                n_permutations=int(permutations),
                seed=int(seed),
                correction=correction,
                confidence=float(confidence),
                query_set=query_set,
                conventions=conventions,
                power=float(power),
                power_delta=power_delta,
                systems=systems or None,
            )

    return remember(COMPARISONS, key, build, held=tuple(evaluations), size=8, need=budget.work_need)


#: The answer table's cells that join two or more declared columns into one text.
JOINED = {"ci_lo": "ci", "ci_hi": "ci", "wins": "wtl", "ties": "wtl", "losses": "wtl"}


def systems_from_text(text: str, names) -> dict:
    """The Compare page's systems, one per line ``NAME=run,run`` (blank lines skipped),
    checked against the loaded runs' ``names`` (:class:`metrics_core.InputError` otherwise)."""
    from metrics_core.stats.systems import check_systems, parse_system

    systems = dict(parse_system(line) for line in str(text or "").splitlines() if line.strip())
    return check_systems(systems, list(names)) if systems else {}


def as_systems(evaluations: list, text: str) -> tuple[list, dict]:
    """The Comparative table's rows with the Compare page's systems (``text``) applied: each
    system one row, its per-query mean over its runs (:func:`metrics_core.stats.systems.group_runs`);
    ``({}, rows)`` unchanged when none is set or a line is wrong (the Compare page says why)."""
    from metrics_core.stats.systems import group_runs

    try:
        systems = systems_from_text(text, [ev.run_name for ev in evaluations])
    except mc.InputError:
        return evaluations, {}
    if not systems:
        return evaluations, {}
    values = sum(int(ev.per_query.size) for ev in evaluations)
    with budget.work(values * TABLE_BYTES_PER_VALUE):  # per-query means: a few copies
        return group_runs(evaluations, systems)[0], systems


def systems_caption(systems: dict) -> str:
    """One sentence naming the systems and their runs (plain: its names are the visitor's;
    the page shows it through ``md_text``)."""
    named = "; ".join(
        plain(_("{system} ({n} runs)"), system=s, n=len(m)) + ": " + ", ".join(m)
        for s, m in systems.items()
    )
    return plain(
        _("Systems from the Compare page, each the per-query mean of its runs: {systems}."),
        systems=named,
    )


def answer_columns(test: str, systems: bool = False) -> list[str]:
    """The answer table's columns, in the declared order (:data:`COLUMNS`' ``answer``): the
    corrected p of ``test`` only, the interval and wins / ties / losses each one cell; the
    systems' columns (seed SD, the test on queries and seeds) where runs form systems."""
    out = []
    for c in COLUMNS:
        if c.systems and not systems:
            continue
        if c.answer and (c.test is None or c.test == test):
            name = JOINED.get(c.name, c.name)
            if name not in out:
                out.append(name)
    return out


def answer_numbers(test: str, systems: bool = False) -> list[str]:
    """The answer table's numbers of 4 decimals (values and the corrected p of ``test``)."""
    return [
        c.name
        for c in COLUMNS
        if c.answer and c.kind in ("value", "p") and c.name not in JOINED
        if c.test is None or c.test == test
        if systems or not c.systems
    ]


def answer_table(comparison: Comparison) -> pd.DataFrame:
    """The comparison's rows for the screen: the columns shown, the interval and the
    wins / ties / losses as text ("–" where a run has no common query: no interval)."""
    shown = comparison.wide().copy()
    shown["ci"] = [
        plain(_("{lo} to {hi}"), lo=f"{lo:.4f}", hi=f"{hi:.4f}") if pd.notna(lo) else "–"
        for lo, hi in zip(shown["ci_lo"], shown["ci_hi"], strict=True)
    ]
    shown["wtl"] = [
        f"{w} / {t} / {l_}"
        for w, t, l_ in zip(shown["wins"], shown["ties"], shown["losses"], strict=True)
    ]
    return shown


def heading(column: Column) -> str:
    """A declared column's heading in the visitor's language (its test named)."""
    text = _(column.heading)
    return text.format(test=test_label(column.test)) if column.test else text


def answer_config(
    test: str, baseline: str, confidence: float, correction: str, systems: bool = False
) -> dict:
    """The answer table's ``column_config``: each declared column's heading and format, and
    the screen's own short headings (the baseline's name over its mean, "corrected p", the
    interval's level), sized so the columns fit an 800 px window."""
    config = {}
    for c in COLUMNS:
        if c.name not in answer_columns(test, systems):
            continue
        head, helptext = heading(c), _(c.help) if c.help else None
        if c.kind in ("value", "p", "count"):
            number = COUNT_FORMAT if c.kind == "count" else MEASURE_FORMAT
            config[c.name] = st.column_config.NumberColumn(head, format=number, help=helptext)
        else:
            config[c.name] = st.column_config.TextColumn(
                head, help=helptext, pinned=c.name == "run"
            )
    # a grid's heading is plain text (never Markdown): the baseline's name as written
    config["mean_baseline"] = st.column_config.NumberColumn(str(baseline), format=MEASURE_FORMAT)
    config[f"p_corrected_{test}"] = st.column_config.NumberColumn(
        _("corrected p"),
        format=MEASURE_FORMAT,
        help=say(
            _("{test}; correction: {correction}"),
            test=test_label(test),
            correction=correction_label(correction),
        ),
    )
    # widths: the nine columns fit an 800 px window (the last header was clipped)
    config["ci"] = st.column_config.TextColumn(
        plain(_("Δ {level} CI"), level=f"{confidence:.0%}"),
        width=112,
        help=_("paired bootstrap percentile interval"),
    )
    config["wtl"] = st.column_config.TextColumn(
        _("W / T / L"),
        help=_("queries where the run wins / ties / loses against the baseline"),
    )
    return config


def detail_table(comparison: Comparison) -> pd.DataFrame:
    """Every test's raw and corrected p-values and the effect size (the declared ``detail``
    columns), headed in the visitor's language; measures under their canonical names."""
    held = comparison.columns()
    columns = [c for c in COLUMNS if c.detail and c.name in held]
    detail = comparison.to_frame()[[c.name for c in columns]].copy()
    detail.columns = [heading(c) for c in columns]
    return detail


def detail_numbers(comparison_detail: pd.DataFrame) -> list[str]:
    """The headings of :func:`detail_table`'s numbers of 4 decimals (values and p-values)."""
    kinds = {heading(c): c.kind for c in COLUMNS if c.detail}
    return [h for h in comparison_detail.columns if kinds.get(h) in ("value", "p")]


def _power_headed(frame: pd.DataFrame) -> pd.DataFrame:
    """The declared power table's columns of ``frame`` (:data:`POWER_TABLE`; the chosen
    difference's column only when one was chosen), headed in the visitor's language. Query
    counts are whole numbers; an unreachable size shows as missing."""
    declared = {c.name: c for c in COLUMNS}
    columns = [
        declared[n]
        for n in POWER_TABLE
        if n in frame
        and not (n == "queries_needed_target" and frame["queries_needed_target"].isna().all())
    ]
    table = frame[[c.name for c in columns]].copy()
    for c in ("queries_needed", "queries_needed_target"):
        if c in table:
            table[c] = table[c].where(table[c] < float("inf")).astype("Int64")
    table.columns = [heading(c) for c in columns]
    return table


def power_table(comparison: Comparison) -> pd.DataFrame:
    """How many queries each comparison needs (the declared ``power`` columns: topic set size
    design), headed in the visitor's language, run and measure first; the chosen difference's
    column only when one was chosen."""
    return _power_headed(comparison.to_frame())


def thesis_power_table(table) -> pd.DataFrame | None:
    """How many queries each comparison of the comparative table against its baseline needs
    (:attr:`metrics_core.report.thesis.ThesisTable.power`, computed with the table inside the
    gate by :func:`thesis`), headed as :func:`power_table`, measures as the table names them;
    None without a baseline."""
    from metrics_core.report.thesis import display_measure

    if table.power is None:
        return None
    frame = table.power.copy()
    frame["measure"] = frame["measure"].map(display_measure)
    return _power_headed(frame)


def power_numbers(table: pd.DataFrame) -> list[str]:
    """The headings of :func:`power_table`'s values of 4 decimals."""
    kinds = {heading(c): c.kind for c in COLUMNS}
    return [h for h in table.columns if kinds.get(h) == "value"]


def power_legend(comparison: Comparison) -> str:
    """The sentence under the power table: the method and its references, translated."""
    return comparison.power_sentence(gettext=_)


def thesis_power_legend(table) -> str:
    """The sentence under the comparative table's power table: the method and its
    references, translated (the table's settings: power, alpha)."""
    from metrics_core.report.legends import power_sentence

    return power_sentence(table.power_settings, gettext=_)


#: Bytes a table made of the per-query values takes per value (the deltas, the folds' and
#: criteria's means): a few copies of 8-byte numbers and their index. An estimate (eight
#: copies), not measured: these tables are the queries', not the runs' rows.
TABLE_BYTES_PER_VALUE = 64


def _values(evaluations) -> int:
    return sum(int(ev.per_query.size) for ev in evaluations)


def per_query_deltas(evaluations: list, baseline: str, run: str, measure: str, query_set: str):
    """Per query, ``run`` minus ``baseline`` on ``measure`` over the comparison's query set
    (:func:`metrics_core.stats.deltas.per_query_deltas` of
    :func:`metrics_core.stats.comparison.aligned_values`), kept in the session."""
    from metrics_core.stats.comparison import aligned_values
    from metrics_core.stats.deltas import per_query_deltas as deltas

    by_name = {ev.run_name: ev for ev in evaluations}

    def build():
        table = aligned_values(
            [
                by_name[baseline],
                by_name[run],
                *[e for e in evaluations if e.run_name not in (baseline, run)],
            ],
            measure,
            query_set,
        )
        return deltas(
            table[[baseline]].rename(columns={baseline: measure}),
            table[[run]].rename(columns={run: measure}),
            measure,
        )

    return remember(
        DELTAS,
        (baseline, run, measure, query_set),
        build,
        held=tuple(evaluations),
        size=8,
        need=_values(evaluations) * TABLE_BYTES_PER_VALUE,
    )


def fold_views(on_set: dict, meta: pd.DataFrame, column: str) -> tuple[dict, pd.DataFrame]:
    """Per run (name -> per-query values on the common queries), its per-fold means by the
    metadata's ``column`` (:func:`metrics_core.stats.folds.fold_values`), and the summary of
    each run (mean ± standard deviation over the folds); InputError for a column that is no
    fold. Kept in the session."""
    from metrics_core.stats import folds

    def build():
        tables = {name: folds.fold_values(pq, meta, column) for name, pq in on_set.items()}
        summary = pd.DataFrame(
            {name: folds.fold_summary(pq, meta, column)["formatted"] for name, pq in on_set.items()}
        ).T
        return tables, summary

    return remember(
        FOLDS,
        (tuple(on_set), column),
        build,
        held=(*on_set.values(), meta),
        size=4,
        need=_values_of(on_set) * TABLE_BYTES_PER_VALUE,
    )


def criterion_views(on_set: dict, meta: pd.DataFrame, column: str) -> dict:
    """Per run, its means per criterion of the metadata's ``column``, micro and macro
    (:func:`metrics_core.stats.folds.criterion_averages`); kept in the session."""
    from metrics_core.stats import folds

    return remember(
        CRITERIA,
        (tuple(on_set), column),
        lambda: {name: folds.criterion_averages(pq, meta, column) for name, pq in on_set.items()},
        held=(*on_set.values(), meta),
        size=4,
        need=_values_of(on_set) * TABLE_BYTES_PER_VALUE,
    )


def _values_of(frames: dict) -> int:
    return sum(int(f.size) for f in frames.values())


def export_texts(comparison) -> dict:
    """The files of a comparison, each made when its button is clicked (a function: the
    common downloads run it inside the memory gate, :func:`ui.common.downloads.gated`): the
    whole comparison as JSON (the command line's document), the paper table as Markdown and
    LaTeX (run mean, delta and markers) and the plain comparison table as CSV, each stating
    the settings; an all-pairs comparison adds its HTML page."""
    out = {
        "json": lambda: json.dumps(comparison.to_dict(), indent=2),
        "markdown": comparison.to_markdown,
        "latex": comparison.to_latex,
        "csv": lambda: comparison.to_table("csv"),
    }
    if not isinstance(comparison, Comparison):  # every run against every other
        out.pop("json")
        out["html"] = lambda: comparison.to_html(gettext=_)
    return out


def export_need(comparison) -> int:
    """What making one of a comparison's files may take: its table's size, a few times."""
    return int(comparison.to_frame().memory_usage(deep=True).sum()) * 20


def all_pairs(
    evaluations: list, measures: list, test: str, correction: str, query_set: str, conventions
):
    """Every run against every other (:func:`metrics_core.compare` with ``all_pairs=True``,
    10,000 permutations), kept in the session for these evaluations and settings; InputError
    for a bad setting."""
    key = (tuple(measures), test, correction, query_set, _settings_key(conventions))
    return remember(
        ALL_PAIRS,
        key,
        lambda: mc.compare(
            list(evaluations),
            all_pairs=True,
            measures=list(measures),
            test=test,
            correction=correction,
            n_permutations=10000,
            query_set=query_set,
            conventions=conventions,
        ),
        held=tuple(evaluations),
        size=4,
        need=budget.work_need,  # with the statistics
    )


#: Bytes the comparative table and its files take per per-query value of its rows (the
#: labelled table, its paired tests, 2,000 permutations a pair in blocks), measured with the
#: leaderboard's statistics (:data:`ui.common.budget.STATS_BYTES_PER_QUERY`): its need is that
#: of the queries, as the leaderboard's.
THESIS_PERMUTATIONS = 2000


def _row_values(rows) -> int:
    frames = rows.values() if isinstance(rows, dict) else [ev.per_query for ev in rows]
    return sum(int(f.size) for f in frames)


def thesis(rows, measures, meta, grading, dates, significance):
    """The comparative table of the page's choices
    (:func:`metrics_core.report.thesis.thesis_table`; InputError for a bad choice), kept in
    the session for these rows and settings. ``rows``: evaluations, or name -> per-query
    frame; ``grading``: the labels' thresholds and names; ``dates``: (from, to);
    ``significance``: (baseline or None, test, correction)."""
    from metrics_core.report.thesis import thesis_table

    baseline, test, correction = significance
    held = tuple(rows.values()) if isinstance(rows, dict) else tuple(rows)
    key = (
        tuple(rows) if isinstance(rows, dict) else tuple(ev.run_name for ev in rows),
        tuple(measures),
        repr(grading),
        tuple(dates),
        tuple(significance),
    )
    queries = max(_row_values(rows), 1)
    return remember(
        THESIS,
        key,
        lambda: thesis_table(
            rows,
            measures,
            grading=grading,
            metadata=meta,
            date_from=dates[0],
            date_to=dates[1],
            baseline=baseline,
            test=test,
            correction=correction,
            n_permutations=THESIS_PERMUTATIONS,
        ),
        held=(*held, meta),
        size=4,
        need=min(queries * budget.STATS_BYTES_PER_QUERY, budget.STATS_BYTES_MAX)
        + queries * TABLE_BYTES_PER_VALUE,
    )


def html_document(table, words: dict, lang: str) -> str:
    """The HTML report of the table: a whole page (its language declared) around
    :func:`metrics_core.report.thesis_export.to_html`'s fragment."""
    from metrics_core.report.thesis_export import to_html

    title = html.escape(words["caption"])
    style = (
        "body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}"
        "th,td{padding:.3rem .6rem;border-bottom:1px solid #ccc;text-align:left}"
        "td.num{text-align:right}tfoot{font-weight:600}.label{color:#555;font-size:.9em}"
        ".legend{color:#555;font-size:.9em}"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="{html.escape(lang)}">\n<head><meta charset="utf-8">'
        f"<title>{title}</title><style>{style}</style></head>\n<body>\n<h1>{title}</h1>\n"
        f"{to_html(table, words)}</body>\n</html>\n"
    )


def thesis_exports(table, words: dict, lang: str) -> dict[str, str]:
    """The downloads of the comparative table: CSV, Markdown, LaTeX and the HTML report, in
    ``words``, made inside the memory gate (a few times the table's values)."""
    from metrics_core.report.thesis_export import to_csv, to_latex, to_markdown

    values = int(table.values.size) + len(table.runs)
    with budget.work(values * TABLE_BYTES_PER_VALUE * 4):
        return {
            "csv": to_csv(table, words),
            "markdown": to_markdown(table, words),
            "latex": to_latex(table, words),
            "html": html_document(table, words, lang),
        }


__all__ = [
    "html_document",
    "thesis",
    "thesis_exports",
    "all_pairs",
    "export_need",
    "COMMON_MEASURES",
    "COMPARE_MEASURES",
    "CORRECTIONS",
    "MARKERS",
    "LIBRARY_WORDS",
    "criterion_views",
    "fold_views",
    "per_query_deltas",
    "TESTS",
    "test_label",
    "correction_label",
    "compare",
    "systems_from_text",
    "as_systems",
    "systems_caption",
    "answer_columns",
    "answer_numbers",
    "answer_table",
    "answer_config",
    "detail_table",
    "detail_numbers",
    "heading",
    "export_texts",
    "power_table",
    "thesis_power_table",
    "power_numbers",
    "power_legend",
    "thesis_power_legend",
]
