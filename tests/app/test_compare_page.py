"""AppTest of the Compare page: the table equals compare_runs on metrics_core's evaluations."""

from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.stats.comparison import compare_runs
from metrics_core.stats.deltas import per_query_deltas
from metrics_core.stats.folds import criterion_averages, fold_summary
from ui.compare import figures as figs

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "compare.py")


def _data(n_queries=20, seed=0):
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in range(6)} for q in range(n_queries)
    }
    runs = {}
    for name in ("bm25", "dense", "hybrid"):
        run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(6)} for q in range(n_queries)}
        runs[name] = mc.read_run(run, name=name)
    meta = pd.DataFrame(
        {"fold": np.arange(n_queries) % 4, "criterion": rng.choice(["x", "y"], n_queries)},
        index=pd.Index([f"q{q}" for q in range(n_queries)], name="query_id"),
    )
    return mc.read_qrels(qrels), runs, meta


def _app(meta=None):
    qrels, runs, m = _data()
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = runs
    at.session_state["ranklab.conventions"] = mc.Conventions()
    at.session_state["ranklab.meta"] = m if meta else None
    return at, qrels, runs, m


def test_page_table_equals_metrics_core():
    at, qrels, runs, meta = _app(meta=True)
    at.run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    evs = mc.evaluate_many(qrels, runs, ["AP", "nDCG@10", "P@10", "RR"])
    expected = compare_runs(
        evs,
        "bm25",
        ["AP", "nDCG@10", "P@10", "RR"],
        n_permutations=10000,
        seed=0,
        correction="holm",
    )
    assert list(table["run"]) == list(expected["run"])
    for col in (
        "mean_delta",
        "ci_lo",
        "ci_hi",
        "p_corrected_t",
        "p_corrected_wilcoxon",
        "p_corrected_permutation",
        "wins",
        "losses",
    ):
        assert table[col].to_numpy(float) == pytest.approx(expected[col].to_numpy(float)), col
    # how many queries each comparison needs (power 0.8): the library's figures
    needed = next(d.value for d in at.dataframe if "Queries needed" in d.value.columns)
    want = compare_runs(evs, "bm25", ["AP", "nDCG@10", "P@10", "RR"], n_permutations=100, power=0.8)
    assert needed["Queries needed"].astype(float).tolist() == pytest.approx(
        want["queries_needed"].tolist(), nan_ok=True
    )
    assert any("Topic set size design" in c.value for c in at.caption)
    # fold view: mean ± std strings from metrics_core.stats.folds
    fold_table = next(
        d.value for d in at.dataframe if "AP" in d.value.columns and "dense" in d.value.index
    )
    ev = next(e for e in evs if e.run_name == "dense")
    assert (
        fold_table.loc["dense", "AP"]
        == fold_summary(ev.per_query, meta, "fold").loc["AP", "formatted"]
    )
    crit = next(d.value for d in at.dataframe if "criterion" in d.value.columns).set_index(
        ["run", "criterion"]
    )  # shown as columns, headed
    assert crit.loc[("dense", "micro"), "AP"] == pytest.approx(
        criterion_averages(ev.per_query, meta, "criterion").loc["micro", "AP"]
    )
    assert len(at.get("download_button")) == 4


def test_page_changes_baseline_and_correction():
    at, qrels, runs, _ = _app()
    at.run()
    at.selectbox[0].set_value("dense")
    at.selectbox[1].set_value("bonferroni")
    at.button[0].click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert set(table["run"]) == {"bm25", "hybrid"}
    evs = mc.evaluate_many(qrels, runs, ["AP", "nDCG@10", "P@10", "RR"])
    expected = compare_runs(evs, "dense", ["AP", "nDCG@10", "P@10", "RR"], correction="bonferroni")
    assert table["p_corrected_t"].to_numpy(float) == pytest.approx(
        expected["p_corrected_t"].to_numpy(float)
    )


def test_page_without_data_says_what_to_do():
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.run()
    assert not at.exception
    assert "at least two runs" in at.info[0].value


def test_delta_figure_sorted_with_query_ids():
    idx = pd.Index(["q1", "q2", "q3", "q4"], name="query_id")
    base = pd.DataFrame({"AP": [0.5, 0.2, 0.9, 0.4]}, index=idx)
    run = pd.DataFrame({"AP": [0.7, 0.2, 0.1, 0.5]}, index=idx)
    deltas = per_query_deltas(base, run, "AP")
    assert list(deltas.index) == ["q3", "q2", "q4", "q1"]
    fig = figs.delta_bar_figure(deltas, "run", "base", "AP")
    assert isinstance(fig, go.Figure)
    assert list(fig.data[0].customdata) == ["q3", "q2", "q4", "q1"]
    assert list(fig.data[0].y) == pytest.approx([-0.8, 0.0, 0.1, 0.2])
    assert "1 ties" in fig.layout.title.text and "2 wins" in fig.layout.title.text


def test_page_bad_measure_shows_error_not_traceback():
    at, *_ = _app()
    at.run()
    at.multiselect[0].set_value(["AP", "NotAMeasure@3"])
    at.button[0].click().run()
    assert not at.exception
    assert "NotAMeasure" in at.error[0].value


def test_test_and_correction_names_are_the_librarys_marked_for_translation():
    from metrics_core.report.legends import CORRECTION_NAMES, TEST_NAMES
    from ui.compare.data import LIBRARY_WORDS, correction_label, test_label

    assert set(TEST_NAMES.values()) <= set(LIBRARY_WORDS)
    assert {v for k, v in CORRECTION_NAMES.items() if k != "none"} <= set(LIBRARY_WORDS)
    assert [test_label(t) for t in TEST_NAMES] == list(TEST_NAMES.values())
    assert (
        correction_label("none") == "no correction"
        and correction_label("bh") == "Benjamini-Hochberg"
    )


def test_compare_page_in_spanish():
    at, *_ = _app()
    at.query_params["lang"] = "es"
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Comparar sistemas"
    assert at.subheader[0].value == "Cada ejecución frente a bm25"
    assert at.selectbox[0].label == "Línea base"
    assert at.selectbox[1].label == "Corrección" and "sin corrección" in at.selectbox[1].options
    assert "prueba t pareada" in at.selectbox[2].options
    assert at.button[0].label == "Comparar"
    assert "Diferencias por consulta" in [s.value for s in at.subheader]
    # the numbers are the English page's
    table = at.dataframe[0].value
    assert list(table["run"]) == [
        "dense",
        "dense",
        "dense",
        "dense",
        "hybrid",
        "hybrid",
        "hybrid",
        "hybrid",
    ]


def test_compare_exports_are_the_comparisons():
    import json

    from ui.compare.data import compare, export_texts

    qrels, runs, _meta = _data()
    evs = mc.evaluate_many(qrels, runs, ["AP", "RR"])
    c = mc.compare(evs, "bm25", measures=["AP", "RR"], n_permutations=500, seed=1, power=True)
    texts = {fmt: make() for fmt, make in export_texts(c).items()}  # made when clicked
    assert json.loads(texts["json"]) == json.loads(json.dumps(c.to_dict()))
    assert texts["latex"] == c.to_latex() and texts["markdown"] == c.to_markdown()
    assert texts["csv"] == c.to_table("csv")
    cached = compare(evs, "bm25", ["AP", "RR"], 500, 1, "holm", 0.95, "common", mc.Conventions())
    pd.testing.assert_frame_equal(cached.to_frame(), c.to_frame())


def test_fold_and_criterion_views_name_their_columns_in_spanish():
    """The Spanish criteria table was headed run / criterion / count (the index's raw names),
    the pickers offered "fold" and "criterion" and the charts said "AP por criterion"."""
    import json

    at, *_ = _app(meta=True)
    at.query_params["lang"] = "es"
    at.run()
    assert not at.exception, at.exception
    pickers = {s.label: s for s in at.selectbox}
    assert pickers["Columna de partición"].options == ["Partición", "Criterio"]
    assert pickers["Columna de criterio"].value == "criterion"
    crit = next(d for d in at.dataframe if "criterion" in d.value.columns)
    labels = {c: v.get("label") for c, v in json.loads(crit.proto.columns).items()}
    assert labels["run"] == "Ejecución" and labels["criterion"] == "Criterio"
    assert labels["count"] == "Cantidad"
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert "AP por partición" in titles and "AP por criterio (micro y macro al final)" in titles


def test_systems_of_several_runs_on_the_compare_page_and_the_comparative_table():
    """A system typed on the page (NAME=run,run) is compared through its per-query mean,
    with the seed SD and the test on queries and seeds in the table; wrong lines are one
    error; the Comparative table shows the system as one row; Spanish headings."""
    at, qrels, runs, _ = _app()
    at.run()
    at.text_area(key="ranklab.w.compare.systems").set_value("neural=dense,hybrid")
    at.button[0].click().run()
    assert not at.exception, at.exception
    at.selectbox[0].set_value("bm25")
    at.button[0].click().run()
    table = at.dataframe[0].value
    assert list(table["run"].unique()) == ["neural"]
    assert {"seed_sd_run", "p_corrected_seeds"} <= set(table.columns)
    evs = mc.evaluate_many(qrels, runs, ["AP", "nDCG@10", "P@10", "RR"])
    expected = mc.compare(
        evs, "bm25", systems={"neural": ["dense", "hybrid"]}, n_permutations=10000
    )
    want = expected.to_frame().set_index("measure")
    got = table.set_index("measure")
    for col in ("mean_run", "seed_sd_run", "p_corrected_seeds"):
        assert got[col].to_numpy(float) == pytest.approx(want[col].to_numpy(float)), col
    assert "neural (2 runs)" in " ".join(c.value for c in at.caption)
    at.text_area(key="ranklab.w.compare.systems").set_value("broken")
    at.button[0].click().run()
    assert not at.exception and any("NAME=RUN" in e.value for e in at.error)
    # the Comparative table groups the same runs
    table_page = AppTest.from_file(str(Path(PAGE).with_name("table.py")), default_timeout=60)
    for key in ("ranklab.qrels", "ranklab.runs", "ranklab.conventions", "ranklab.meta"):
        table_page.session_state[key] = at.session_state[key]
    table_page.session_state["ranklab.w.compare.systems"] = "neural=dense,hybrid"
    table_page.run()
    assert not table_page.exception, table_page.exception
    assert any("neural (2 runs): dense, hybrid" in c.value for c in table_page.caption)
    # in Spanish: the input, the legend's sentence and the columns' headings
    es, *_ = _app()
    es.query_params["lang"] = "es"
    es.session_state["ranklab.w.compare.systems"] = "neural=dense,hybrid"
    es.run()
    assert not es.exception, es.exception
    assert es.text_area(key="ranklab.w.compare.systems").label.startswith("Un sistema por línea")
    assert any("DE entre semillas" in c.value for c in es.caption)
