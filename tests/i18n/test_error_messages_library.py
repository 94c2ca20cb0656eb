"""The library's refusals in an application's language: real bad inputs through public
functions of the measures, statistics, thesis table, history and Dynamic K modules.
``str(exc)`` stays the English of the command line, byte for byte; ``exc.plain(gettext)``
with the Spanish catalog is Spanish and keeps the user's data (names, values, files) as
given. An AST scan keeps every ``InputError(...)`` of these modules a marked template."""

from __future__ import annotations

import ast
import string
import sys
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core import calibration, clicks, detection, dynamic_k
from metrics_core.conventions import Conventions
from metrics_core.data import Run
from metrics_core.errors import InputError
from metrics_core.history.store import HistoryStore
from metrics_core.ranking.registry import accepted_names, parse_measure, parse_measures
from metrics_core.report.catalogs import translations
from metrics_core.report.thesis import Grading, thesis_table
from metrics_core.stats import comparison, significance
from metrics_core.stats.aggregate import group_means

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import i18n_catalogs  # noqa: E402

from tests.i18n.test_error_messages import SCANNED  # noqa: E402  (the library but cli/ and compat/)


def _per_query():
    return {
        "bm25": pd.DataFrame({"AP": [0.5, 0.25, 0.75]}, index=["q1", "q2", "q3"]),
        "dense": pd.DataFrame({"AP": [0.75, 0.5, 0.5]}, index=["q1", "q2", "q3"]),
    }


def _evaluations():
    return [NS(run_name=name, per_query=frame) for name, frame in _per_query().items()]


def _meta():
    return pd.DataFrame(
        {"date": ["2025-01-05", "2025-01-06", "2025-01-07"]}, index=["q1", "q2", "q3"]
    )


def _same_names():
    frames = _per_query()
    return [
        NS(run_name="bm25", per_query=frames["bm25"], aggregate={}),
        NS(run_name="bm25", per_query=frames["dense"], aggregate={}),
    ]


def _clicks():
    return pd.DataFrame({"query": ["q"], "shown": [["a", "b"]], "clicked": [["b"]]})


#: name -> (the bad call, its English message (a callable where it lists every accepted
#: name), the user's data the Spanish message must keep)
CASES = {
    "unknown measure": (
        lambda: parse_measure("nDGC@10"),
        lambda: (
            f"unknown measure 'nDGC@10': no measure called 'nDGC'. accepted: {accepted_names()}"
        ),
        ["'nDGC@10'", "'nDGC'", "nDCG@k"],
    ),
    "cutoff not a number": (
        lambda: parse_measure("P@ten"),
        lambda: (
            f"unknown measure 'P@ten': cutoff 'ten' is not a number. accepted: {accepted_names()}"
        ),
        ["'P@ten'", "'ten'"],
    ),
    "no measures": (
        lambda: parse_measures([]),
        lambda: f"no measures given. accepted: {accepted_names()}",
        ["AP@k"],
    ),
    "zero cutoff": (
        lambda: parse_measure("P@0"),
        "measure 'P@0': the cutoff must be a positive whole number",
        ["'P@0'"],
    ),
    "unknown measure parameter": (
        lambda: parse_measure("P(colour=1)@5"),
        "measure 'P(colour=1)@5': unknown parameter 'colour'. P accepts: rel, denom",
        ["'P(colour=1)@5'", "'colour'", "rel, denom"],
    ),
    "measure parameter choice": (
        lambda: parse_measure("nDCG(gain=cubic)@10"),
        "measure 'nDCG(gain=cubic)@10': gain='cubic' is not accepted. gain accepts linear, exp",
        ["'nDCG(gain=cubic)@10'", "gain='cubic'", "linear, exp"],
    ),
    "measure parameter number": (
        lambda: parse_measure("P(rel=high)@5"),
        "measure 'P(rel=high)@5': rel='high' is not accepted. rel could not convert string to float: 'high'",
        ["'P(rel=high)@5'", "rel='high'"],
    ),
    "measure needs a cutoff": (
        lambda: parse_measure("IPrec"),
        "measure 'IPrec': IPrec needs a cutoff. e.g. IPrec@0.1",
        ["'IPrec'", "IPrec@0.1"],
    ),
    "miss needs a cutoff": (
        lambda: parse_measure("RR(miss=k_plus_1)"),
        "measure 'RR(miss=k_plus_1)': miss=k_plus_1 needs a cutoff. e.g. RR(miss=k_plus_1)@10",
        ["'RR(miss=k_plus_1)'", "RR(miss=k_plus_1)@10"],
    ),
    "unknown baseline in the thesis table": (
        lambda: thesis_table(_per_query(), ["AP"], baseline="splade"),
        "no run named 'splade'. the baseline must be one of: bm25, dense",
        ["'splade'", "bm25, dense"],
    ),
    "thesis thresholds reversed": (
        lambda: Grading(thresholds={"AP": (0.2, 0.5)}),
        "thresholds of AP: good=0.2, fair=0.5. give finite numbers with good >= fair",
        ["AP", "good=0.2, fair=0.5"],
    ),
    "thesis thresholds not numbers": (
        lambda: Grading(thresholds={"AP": "high"}),
        "the thresholds of AP are not two numbers: 'high'. give (good, fair), e.g. (0.7, 0.35)",
        ["AP", "'high'", "(0.7, 0.35)"],
    ),
    "thesis labels": (
        lambda: Grading(names=("Top", "Low")),
        "names of the levels: three are needed, got 2",
        ["2"],
    ),
    "thesis verdicts": (
        lambda: Grading(verdicts=("Top",)),
        "verdicts of the levels: three are needed, got 1",
        ["1"],
    ),
    "thesis date range empty": (
        lambda: thesis_table(
            _per_query(), ["AP"], metadata=_meta(), date_from="2025-03-01", date_to="2025-03-31"
        ),
        "no evaluated query is dated from 2025-03-01 to 2025-03-31. widen the date range or check the "
        "metadata's date column",
        ["2025-03-01", "2025-03-31"],
    ),
    "thesis date range reversed": (
        lambda: thesis_table(
            _per_query(), ["AP"], metadata=_meta(), date_from="2025-01-07", date_to="2025-01-05"
        ),
        "the date range starts after it ends (2025-01-07 > 2025-01-05). swap the two dates",
        ["2025-01-07 > 2025-01-05"],
    ),
    "thesis bad date": (
        lambda: thesis_table(_per_query(), ["AP"], metadata=_meta(), date_from="someday"),
        "the 'from' date 'someday' is not a date. write it as YYYY-MM-DD",
        ["'someday'"],
    ),
    "thesis unknown test": (
        lambda: thesis_table(_per_query(), ["AP"], baseline="bm25", test="anova"),
        "unknown test 'anova'. accepted: t, wilcoxon, permutation",
        ["'anova'", "t, wilcoxon, permutation"],
    ),
    "thesis missing measure": (
        lambda: thesis_table(_per_query(), ["nDCG@10"]),
        "run 'bm25' has no values of nDCG@10. evaluate it with these measures, or choose others",
        ["'bm25'", "nDCG@10"],
    ),
    "thesis same names": (
        lambda: thesis_table(_same_names()),
        "two runs have the same name. rename one: bm25, bm25",
        ["bm25, bm25"],
    ),
    "compare unknown baseline": (
        lambda: comparison.compare_runs(_evaluations(), "splade", ["AP"]),
        "no run named 'splade' to use as the baseline. runs: bm25, dense",
        ["'splade'", "bm25, dense"],
    ),
    "compare unknown test": (
        lambda: comparison.compare_runs(_evaluations(), "bm25", ["AP"], tests=("anova",)),
        "unknown test 'anova'. accepted: t, wilcoxon, permutation",
        ["'anova'"],
    ),
    "compare unknown query set": (
        lambda: comparison.compare_runs(_evaluations(), "bm25", ["AP"], query_set="all"),
        "unknown query set 'all'. accepted: common, qrels, pairwise",
        ["'all'", "common, qrels, pairwise"],
    ),
    "compare missing measure": (
        lambda: comparison.compare_runs(_evaluations(), "bm25", ["nDCG@10"]),
        "run 'bm25' has no values for nDCG@10. evaluate every run with the same measures",
        ["'bm25'", "nDCG@10"],
    ),
    "unknown correction": (
        lambda: significance.correct_pvalues([0.01, 0.2], "sidak"),
        "unknown correction 'sidak'. accepted: holm, bonferroni, bh, none",
        ["'sidak'"],
    ),
    "no permutations": (
        lambda: significance.permutation_test([0.1, 0.2], [0.3, 0.4], n_permutations=0),
        "the number of permutations must be at least 1, got 0",
        ["0"],
    ),
    "paired shapes": (
        lambda: significance.bootstrap_ci([0.1, 0.2], [0.3, 0.4, 0.5]),
        "paired values must have equal shapes, got (2,) and (3,)",
        ["(2,)", "(3,)"],
    ),
    "metadata column": (
        lambda: group_means(_per_query()["bm25"], _meta(), "topic"),
        "the query metadata has no column 'topic'. columns: date",
        ["'topic'", "date"],
    ),
    "history dates reversed": (
        lambda: HistoryStore(":memory:").list_evaluations(
            date_from="2025-02-01", date_to="2025-01-01"
        ),
        "the start date is after the end date. swap date_from= and date_to=",
        [],
    ),
    "history bad date": (
        lambda: HistoryStore(":memory:").list_evaluations(date_from="March"),
        "start date 'March' is not a date. write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC unless an "
        "offset is given)",
        ["'March'"],
    ),
    "history unknown suite": (
        lambda: HistoryStore(":memory:").get_suite_qrels("regression"),
        "no suite named 'regression'. known suites: none yet",
        ["'regression'"],
    ),
    "history unknown evaluation": (
        lambda: HistoryStore(":memory:").load_evaluation(42),
        "no evaluation with id 42. see `history list` for the ids",
        ["42"],
    ),
    "history upload not sqlite": (
        lambda: HistoryStore.from_bytes(b"not a database" * 20, "upload.sqlite3"),
        "upload.sqlite3: not a RankLab history file (it is not an SQLite database). upload a file saved "
        "with the History page's download button",
        ["upload.sqlite3: "],
    ),
    "dynamic K field": (
        lambda: dynamic_k.field_words("budget"),
        "unknown Dynamic K field 'budget'. accepted: tau, k_min, hard_cap, k_max_ratio, conflict, avg_k, "
        "recall, precision, micro_recall, micro_precision, n_queries",
        ["'budget'", "k_max_ratio"],
    ),
    "dynamic K negative": (
        lambda: dynamic_k.select_k(dynamic_k.prepare(["a"], [0.5], [1]), 0.5, -1, 5, 1.0),
        "k_min must be a non-negative integer, got -1",
        ["k_min", "-1"],
    ),
    "calibration strategy": (
        lambda: calibration.check_bins(10, "kmeans"),
        "unknown binning strategy 'kmeans'. Accepted: uniform, quantile",
        ["'kmeans'", "uniform, quantile"],
    ),
    "detection target": (
        lambda: detection.tpr_at_fpr([0, 1, 0, 1], [0.1, 0.9, 0.4, 0.6], target=1.5),
        "target FPR 1.5 is outside [0, 1]",
        ["1.5"],
    ),
    "click rule": (
        lambda: clicks.click_mrr(_clicks(), rule="sometimes"),
        "unknown click rule 'sometimes'. accepted: first, top",
        ["'sometimes'"],
    ),
    "convention value": (
        lambda: Conventions(depth=0),
        "depth must be a positive integer, got 0",
        ["depth", "0"],
    ),
    "duplicate judgement": (
        lambda: mc.evaluate(
            mc.read_qrels(b"q1 0 d1 1\nq1 0 d1 2\n"), mc.read_run(b"q1 Q0 d1 1 1.0 r\n"), ["AP"]
        ),
        "<bytes>: duplicate judgement for query 'q1', document 'd1' (lines 1 and 2; 1 duplicate row(s) in "
        "all). Remove the duplicates, or choose a duplicates convention (keep first, last or max)",
        ["<bytes>: ", "'q1'", "'d1'"],
    ),
    "score not finite": (
        lambda: Run(
            ["q1", "q1"], ["d1", "d2"], [1.0, np.inf], source="run.txt", line_numbers=[3, 4]
        ),
        "run.txt, line 4: score is inf, not a finite number. Every score must be a finite number",
        ["run.txt, línea 4: ", "inf"],
    ),
}


@pytest.fixture(scope="module")
def spanish():
    return translations("es").gettext


def _raised(name) -> InputError:
    call = CASES[name][0]
    with pytest.raises(InputError) as info:
        call()
    return info.value


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_english_message_is_unchanged(name):
    english = CASES[name][1]
    assert str(_raised(name)) == (english() if callable(english) else english)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_message_is_spanish_and_keeps_the_data(name, spanish):
    exc = _raised(name)
    es, en = exc.plain(spanish), exc.plain()
    assert es != en
    # the problem itself is translated, not only its frame or hint
    problem = exc.templates["problem"]
    assert spanish(problem) != problem, problem
    for data in CASES[name][2]:
        assert data in es, (data, es)
    assert "\n" not in es
    # the English of the application: same words as str() but the application's hint
    assert en.split(". ")[0] == str(exc).split(". ")[0]


def test_spanish_words_of_a_few_messages(spanish):
    assert _raised("unknown baseline in the thesis table").plain(spanish) == (
        "no hay ninguna ejecución llamada 'splade'. la línea base debe ser una de: bm25, dense"
    )
    assert _raised("history unknown suite").plain(spanish) == (
        "no hay ningún conjunto de pruebas llamado 'regression'. conjuntos conocidos: ninguno todavía"
    )
    assert _raised("score not finite").plain(spanish) == (
        "run.txt, línea 4: la puntuación es inf, no un número finito. Cada puntuación debe ser un número finito"
    )
    assert _raised("zero cutoff").plain(spanish) == (
        "medida 'P@0': el corte debe ser un número entero positivo"
    )


def test_the_application_hints_name_no_command_line_option():
    for name in ("history dates reversed", "history unknown evaluation"):
        exc = _raised(name)
        assert "--" not in exc.plain() and "`" not in exc.plain(), exc.plain()
        assert exc.plain() != str(exc)


def test_a_user_value_is_never_read_as_a_template(spanish):
    exc = _raised_with(lambda: thesis_table(_per_query(), ["AP"], baseline="{name}"))
    assert str(exc) == "no run named '{name}'. the baseline must be one of: bm25, dense"
    assert "'{name}'" in exc.plain(spanish)
    exc = _raised_with(lambda: parse_measure("P({x}=1)@5"))
    assert "'{x}'" in str(exc) and "'{x}'" in exc.plain(spanish)


def _raised_with(call) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


# --- every module with a refusal is in the catalogs (tests/i18n/test_error_messages.py
# checks that each refusal of the library is a marked template) --------------------------


def test_every_module_with_a_refusal_is_in_the_catalogs():
    listed = tuple(i18n_catalogs.LIBRARY_SOURCES)
    missing = []
    for rel in SCANNED:
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        refuses = any(
            isinstance(n, ast.Call)
            and getattr(n.func, "id", getattr(n.func, "attr", None)) == "InputError"
            for n in ast.walk(tree)
        )
        if refuses and not any(rel == s or rel.startswith(s.rstrip("/") + "/") for s in listed):
            missing.append(rel)
    assert missing == []


def _fields(text: str) -> list:
    return sorted(
        (name, conversion or "", spec or "")
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    )


def test_conversions_and_format_specs_survive_translation():
    """``{name!r}``, ``{limit:,}`` and ``{label:.17g}`` stay as they are in Spanish (the
    catalog test checks the names only)."""
    template = i18n_catalogs.template()
    mine = {
        m.id
        for m in template
        if m.id
        and not isinstance(m.id, tuple)
        and any(loc.startswith("metrics_core/") for loc, _ in m.locations)
    }
    cat = i18n_catalogs.read_catalog("es")
    for msgid in mine:
        assert _fields(cat[msgid].string) == _fields(msgid), (msgid, cat[msgid].string)
