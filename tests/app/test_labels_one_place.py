"""Interpretation labels in one place (issue 29, item 7): the comparative table labels the
queries of one loaded run (a controlled test's report); Breakdown and History link to it
instead of labelling with thresholds of their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from metrics_core import evaluate

ROOT = Path(__file__).resolve().parents[2]


def _run(page: str, sample, lang: str = "en", **state) -> AppTest:
    qrels, runs, meta = sample
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=180)
    at.query_params["lang"] = lang
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = meta
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(
    "lang,query,summary,level",
    [
        ("en", "Query", "Summary ({n} queries)", "Good"),
        ("es", "Consulta", "Resumen ({n} consultas)", "Bueno"),
    ],
)
def test_the_table_labels_each_query_of_one_run(sample, lang, query, summary, level):
    at = _run(
        "table",
        sample,
        lang,
        **{"ranklab.table.source": "queries", "ranklab.table.query_run": "dense"},
    )
    ev = evaluate(sample[0], sample[1]["dense"], ["RR"])
    n = len(ev.per_query)  # the queries the run answered (48 of the 50 judged)
    frame = at.dataframe[0].value
    assert frame.columns[0] == query
    assert len(frame) == n + 1 and frame.iloc[-1, 0] == summary.format(
        n=n
    )  # each query, then the summary
    assert frame.iloc[:-1, 0].tolist() == [str(q) for q in ev.per_query.index]
    assert (frame.iloc[:-1, 1].astype(int) == 1).all()  # one query per row
    assert any(level in str(v) for v in frame.iloc[:-1, -1])
    # the summary row is the run's own mean
    mean = ev.aggregate["RR"]
    assert frame.iloc[-1]["MRR"].startswith(f"{mean:.4f}")
    assert not any(
        s.key == "ranklab.table.baseline" for s in at.selectbox
    )  # no paired test between queries
    caption = " ".join(m.value for m in at.markdown)
    assert "dense" in caption


def test_breakdown_and_history_link_to_the_table(sample):
    at = _run("breakdown", sample)
    assert not any(
        n.key == "ranklab.fair_ratio" for n in at.number_input
    )  # no thresholds editor of its own
    assert not any(
        "interpretation" in [str(c).lower() for c in df.value.columns] for df in at.dataframe
    )
    texts = " ".join(c.value for c in at.caption)
    assert "Comparative table" in texts and "Queries of one loaded run" in texts
    history = AppTest.from_file(str(ROOT / "pages" / "history.py"), default_timeout=180)
    history.run()
    assert not history.exception
    assert "Comparative table" in " ".join(c.value for c in history.caption)
