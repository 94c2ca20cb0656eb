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


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_table_thresholds_label_every_page(sample, lang):
    """One source of thresholds (issue 29, item 7): set on the comparative table, read by the
    Overview's own-queries table, Clicks and History; the other pages have no editor of their
    own, state the thresholds they used and link to the table."""
    boxes = {"ranklab.table.good.RR": 0.5, "ranklab.table.fair.RR": 0.45}  # as typed in
    table = _run("table", sample, lang, **{"ranklab.table.source": "runs", **boxes})
    assert table.number_input(key="ranklab.table.good.RR").value == 0.5
    assert not table.exception, table.exception
    chosen = table.session_state["ranklab.thresholds"]
    assert chosen["RR"] == (0.5, 0.45)
    assert chosen["P@5"] == pytest.approx((0.5, 0.25))  # untouched: the default pair
    chosen = dict(chosen)
    del chosen["nDCG@10"]  # as the editor records a measure left without a label
    good, fair, needs = (
        ("Good", "Fair", "Needs improvement")
        if lang == "en"
        else (
            "Bueno",
            "Regular",
            "Mejorable",
        )
    )

    # the Overview of the same session labels with them
    overview = _run(
        "overview",
        sample,
        lang,
        **{"ranklab.thresholds": chosen, "ranklab.overview.own_queries": True},
    )
    assert not any(
        e.key and e.key.startswith("ranklab.thr") for e in overview.get("arrow_data_editor")
    )
    frame = next(df.value for df in overview.dataframe if "interpretation" in df.value.columns)
    rows = frame.set_index(["run", "measure"])
    mrr = {run: evaluate(sample[0], sample[1][run], ["RR"]).aggregate["RR"] for run in sample[1]}
    for run, value in mrr.items():  # 0.45 <= each sample run's MRR < 0.7: Good only now
        expected = good if value >= 0.5 else fair if value >= 0.45 else needs
        assert rows.loc[(run, "RR"), "interpretation"] == expected
    assert (rows.xs("nDCG@10", level="measure")["interpretation"] == "").all()  # no label now
    captions = " ".join(c.value for c in overview.caption)
    assert "RR: " in captions and "0.45" in captions
    assert ("Comparative table" if lang == "en" else "Tabla comparativa") in captions

    # Clicks: the sample log's MRR against the same pair
    clicks = _run("clicks", sample, lang, **{"ranklab.thresholds": chosen})
    clicks.button(key="ranklab.clicks.sample").click().run()
    assert not clicks.exception, clicks.exception
    texts = " ".join(c.value for c in clicks.caption)
    assert "0.5" in texts and "0.45" in texts, texts
    assert ("Comparative table" if lang == "en" else "Tabla comparativa") in texts

    # History: the report labels its rows and summary with them
    history = AppTest.from_file(str(ROOT / "pages" / "history.py"), default_timeout=180)
    history.query_params["lang"] = lang
    history.session_state["ranklab.thresholds"] = chosen
    history.run()
    assert not history.exception, history.exception
    report = history.dataframe[0].value
    report = getattr(report, "data", report)  # a Styler on screen
    assert "RR: " + ("Good" if lang == "en" else "Bueno") in " ".join(
        c.value for c in history.caption
    )
    body = report[report["ID"] != ("Summary" if lang == "en" else "Resumen")]
    for _i, row in body.iterrows():
        levels = []
        if row["RR"] == row["RR"]:
            levels.append(0 if row["RR"] >= 0.5 else 1 if row["RR"] >= 0.45 else 2)
        if row["P@5"] == row["P@5"]:  # nDCG@10: no label
            levels.append(0 if row["P@5"] >= 0.5 else 1 if row["P@5"] >= 0.25 else 2)
        expected = (good, fair, needs)[max(levels)] if levels else ""
        assert row["Interpretation"] == expected, row.to_dict()
