"""The words History's library writes (the summary row), in English and through a
translation (Spanish catalogs): the page passes its ``ngettext``."""

from __future__ import annotations

import pytest

from metrics_core.history import HistoryStore, load_sample_history, summary_text
from metrics_core.report.catalogs import translations

ES = translations("es").ngettext


@pytest.mark.parametrize(
    "count, suites, per_query, english, spanish",
    [
        (6, 1, False, "6 evaluations (1 suite)", "6 evaluaciones (1 conjunto)"),
        (1, 2, False, "1 evaluation (2 suites)", "1 evaluación (2 conjuntos)"),
        (0, 0, False, "0 evaluations (0 suites)", "0 evaluaciones (0 conjuntos)"),
        (1, 1, True, "1 query evaluation (1 suite)", "1 evaluación de consulta (1 conjunto)"),
        (
            96,
            3,
            True,
            "96 query evaluations (3 suites)",
            "96 evaluaciones de consultas (3 conjuntos)",
        ),
    ],
)
def test_summary_text_in_both_languages(count, suites, per_query, english, spanish):
    assert summary_text(count, suites, per_query) == english
    assert summary_text(count, suites, per_query, ngettext=ES) == spanish


@pytest.fixture(scope="module")
def store():
    with HistoryStore(":memory:") as s:
        load_sample_history(s)
        yield s


def test_the_report_summary_row_in_spanish(store):
    english, spanish = store.report(), store.report(ngettext=ES)
    n, suites = len(english) - 1, english["Suite"].iloc[:-1].nunique()
    assert (
        english["Run"].iloc[-1] == f"{n} evaluations ({suites} suite{'s' if suites != 1 else ''})"
    )
    assert spanish["Run"].iloc[-1] == summary_text(n, suites, ngettext=ES)
    assert spanish["Run"].iloc[-1].startswith(f"{n} evaluaciones (")
    assert spanish.attrs["summary"]["suites"] == suites
    # only the summary's words change: the rows, numbers, labels (English keys) are the same
    assert spanish.iloc[:-1].equals(english.iloc[:-1]) and spanish["ID"].iloc[-1] == "Summary"
    per_query = store.report(per_query=True, ngettext=ES)
    assert "evaluaciones de consultas" in per_query["Run"].iloc[-1]
