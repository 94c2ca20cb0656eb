"""Every page of the explorer under Streamlit's AppTest, with the sample data: the numbers
on the page equal metrics_core's for the same data and conventions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.clicks import click_mrr, read_click_log
from metrics_core.stats.aggregate import group_means
from ui.ranking.data import sample_files

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60


def _app(page: str, sample=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    if sample is not None:
        qrels, runs, meta = sample
        at.session_state["ranklab.qrels"] = qrels
        at.session_state["ranklab.runs"] = dict(runs)
        at.session_state["ranklab.meta"] = meta
    return at.run()


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _frame_with(at: AppTest, column: str) -> pd.DataFrame:
    for df in at.dataframe:
        value = df.value
        if column in value.columns or column == value.index.name:
            return value
    raise AssertionError(f"no table with a {column!r} column")


def test_home_and_sample_button():
    at = _app("home")
    _ok(at)
    at.button(key="ranklab.home.sample").click().run()
    _ok(at)
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}
    assert any("qrels: 50 queries" in c.value for c in at.sidebar.caption)


TASKS_EN = ["Rankings", "Detection and calibration", "Hash codes", "Comparing systems"]
TASKS_ES = ["Rankings", "Detección y calibración", "Códigos hash", "Comparar sistemas"]


@pytest.mark.parametrize("lang, tasks", [(None, TASKS_EN), ("es", TASKS_ES)])
def test_home_routes_the_four_tasks_each_with_its_sample(lang, tasks):
    at = AppTest.from_file(str(ROOT / "pages" / "home.py"), default_timeout=TIMEOUT)
    if lang:
        at.query_params["lang"] = lang
    at.run()
    _ok(at)
    assert [h.value for h in at.subheader] == tasks
    opens = [b for b in at.button if b.key and b.key.startswith("ranklab.home.open.")]
    assert [b.key.rsplit(".", 1)[1] for b in opens] == [
        "rankings",
        "detection",
        "hashing",
        "compare",
    ]
    assert len({b.label for b in opens}) == 1
    assert not any(
        "Conventions" in c.value or "Convenciones" in c.value for c in at.caption
    )  # no status line


def test_a_task_button_loads_the_sample():
    at = _app("home")
    at.button(key="ranklab.home.open.hashing").click().run()
    _ok(at)
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}
    assert at.session_state["ranklab.hashing.data"] is not None


def test_the_app_entry_point_in_spanish():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = "es"
    at.run()
    _ok(at)
    assert [h.value for h in at.subheader] == TASKS_ES  # Home is the default page
    assert at.radio(key="ranklab_language_switch").value == "es"


def test_every_menu_title_has_a_spanish_title():
    from metrics_core.report.catalogs import translations
    from ui.common.navigation import SECTIONS, page_titles

    es = translations("es")
    same = {"Rankings"}  # the same word in Spanish
    for word in [*SECTIONS, *page_titles().values()]:
        assert es.gettext(word) != word or word in same, word
    assert page_titles()["pages/table.py"] == "Comparative table"
    assert es.gettext("Comparative table") == "Tabla comparativa"


def test_data_page_sample_and_diagnostics(sample):
    at = _app("data")
    _ok(at)
    at.button(key="ranklab.data.sample").click().run()
    _ok(at)
    qrels, runs, _ = sample
    # the diagnostics are two tables (queries and lines; ties and judged at k), joined by run
    table = _frame_with(at, "missing queries").join(_frame_with(at, "tied groups straddling @10"))
    for name, run in runs.items():
        ev = mc.evaluate(qrels, run, ["Judged@10", "P@10"])
        assert table.loc[name, "missing queries"] == len(ev.diagnostics["missing_queries"])
        assert table.loc[name, "extra queries"] == len(ev.diagnostics["extra_queries"])
        assert (
            table.loc[name, "tied groups straddling @10"] == ev.diagnostics["ties_straddling"]["10"]
        )
        assert table.loc[name, "Judged@10 (mean)"] == pytest.approx(ev.aggregate["Judged@10"])
    assert table.loc["dense", "missing queries"] == 2
    # change a control: the cutoff of the diagnostics
    at.number_input(key="ranklab.data.diag_k").set_value(5).run()
    _ok(at)
    table = _frame_with(at, "tied groups straddling @5")
    ev = mc.evaluate(qrels, runs["hybrid"], ["Judged@5", "P@5"])
    assert (
        table.loc["hybrid", "tied groups straddling @5"] == ev.diagnostics["ties_straddling"]["5"]
    )
    assert table.loc["hybrid", "Judged@5 (mean)"] == pytest.approx(ev.aggregate["Judged@5"])


def _bad_upload_script():
    import streamlit as st

    from ui.common import state
    from ui.common.frame import page_setup
    from ui.ranking.data import load_sample_into_state
    from ui.ranking.upload import handle_upload

    class Upload:  # what st.file_uploader hands over
        def __init__(self, data: bytes, name: str):
            self._data, self.name, self.size, self.file_id = data, name, len(data), name

        def getvalue(self) -> bytes:
            return self._data

    page_setup()
    if "sample_loaded" not in st.session_state:
        load_sample_into_state()
        st.session_state["sample_loaded"] = True
    handle_upload("run", Upload(bytes(range(256)) * 4, "junk.bin"), "auto")
    handle_upload(
        "run",
        Upload(b"topic,document,value\nq01,D01195,3.5\nq01,D00364,1.0\n", "wrong.csv"),
        "auto",
    )
    st.write("runs: " + ",".join(st.session_state[state.RUNS]))


def _load_once_script():
    import streamlit as st

    from metrics_core.errors import InputError
    from ui.common.upload import read_once

    st.session_state.setdefault("loads", 0)
    signature = st.session_state.get("signature", "a.csv#1")

    def load():
        st.session_state["loads"] += 1
        if signature.startswith("bad"):
            raise InputError("not a number", source=signature, line=3)
        st.session_state["data"] = signature

    error = read_once("seen", signature, load)[1]
    if error:
        st.error(error)


def test_an_upload_is_read_once_and_does_not_undo_the_sample():
    """Detection, calibration, dynamic K, hashing and clicks read an upload when it
    changes, not on every rerun; a choice made after it (the sample) stays."""
    at = AppTest.from_function(_load_once_script, default_timeout=TIMEOUT).run()
    assert at.session_state["loads"] == 1 and at.session_state["data"] == "a.csv#1"
    at.session_state["data"] = "sample"  # "use the sample" after the upload
    at.run()
    assert at.session_state["loads"] == 1 and at.session_state["data"] == "sample"
    at.session_state["signature"] = "bad.csv#2"  # a bad file: error, data kept
    at.run()
    at.run()
    assert at.session_state["loads"] == 2 and at.session_state["data"] == "sample"
    assert len(at.error) == 1 and "line 3" in at.error[0].value
    at.session_state["signature"] = "b.csv#3"
    at.run()
    assert at.session_state["loads"] == 3 and at.session_state["data"] == "b.csv#3"
    assert not at.error


def test_bad_uploads_show_errors_keep_data_and_map_columns(sample):
    at = AppTest.from_function(_bad_upload_script, default_timeout=TIMEOUT).run()
    _ok(at)
    errors = [e.value for e in at.error]
    assert any("junk.bin" in e and "binary" in e for e in errors), errors
    assert any("wrong.csv" in e and "column" in e for e in errors), errors
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}
    # the column-mapping step for the table whose columns were not recognised
    at.selectbox(key="ranklab.data.map.run.wrong.csv.query_id").set_value("topic")
    at.selectbox(key="ranklab.data.map.run.wrong.csv.doc_id").set_value("document")
    at.selectbox(key="ranklab.data.map.run.wrong.csv.score").set_value("value")
    at.button(key="ranklab.data.map.run.wrong.csv.apply").click().run()
    _ok(at)
    runs = at.session_state["ranklab.runs"]
    assert set(runs) == {"bm25", "dense", "hybrid", "wrong"}
    assert runs["wrong"].doc_ids.tolist() == ["D01195", "D00364"]
    assert runs["wrong"].scores.tolist() == [3.5, 1.0]


def _open_own_queries(at: AppTest) -> AppTest:
    """Open the Overview's "Each run on its own queries" expander (drawn only when open)."""
    at.session_state["ranklab.overview.own_queries"] = True
    return at.run()


def test_overview_values_equal_evaluate(sample):
    qrels, runs, _ = sample
    at = _app("overview", sample)
    _ok(at)
    assert not any("aggregate" in d.value.columns for d in at.dataframe)  # closed: not computed
    _open_own_queries(at)
    table = _frame_with(at, "aggregate")
    measures = ["RR", "nDCG@10", "P@5", "P@10", "AP", "R@100"]
    for name, run in runs.items():
        ev = mc.evaluate(qrels, run, measures)
        got = table[table["run"] == name].set_index("measure")
        for m in measures:  # each measure under its canonical name (RR, as the pickers)
            assert got.loc[m, "aggregate"] == pytest.approx(ev.aggregate[m], abs=1e-12)
            assert got.loc[m, "median"] == pytest.approx(float(ev.per_query[m].median()))
            assert got.loc[m, "ci_low"] <= got.loc[m, "mean"] <= got.loc[m, "ci_high"]
        rr = ev.aggregate["RR"]
        expected_label = "Good" if rr >= 0.7 else "Fair" if rr >= 0.35 else "Needs improvement"
        assert got.loc["RR", "interpretation"] == expected_label
    metrics = {m.label: m.value for m in at.metric}
    # the cards are on the leaderboard's one query set: by default the queries every run
    # answered (dense misses two), so hybrid's RR is its mean over those 48 queries
    pq = {n: mc.evaluate(qrels, r, ["RR"]).per_query["RR"] for n, r in runs.items()}
    common = pq["bm25"].index.intersection(pq["dense"].index).intersection(pq["hybrid"].index)
    assert len(common) == 48
    assert metrics["hybrid · RR"] == f"{pq['hybrid'].loc[common].mean():.4f}"

    # change controls: add a measure by name, and a convention in the sidebar
    at.text_input(key="ranklab.w.custom_measure").input("nDCG(gain=exp)@5").run()
    at.selectbox(key="ranklab.w.conv.missing_queries").set_value("zero").run()
    _ok(at)
    table = _frame_with(at, "aggregate")
    ev = mc.evaluate(qrels, runs["dense"], ["RR", "nDCG(gain=exp)@5"], missing_queries="zero")
    got = table[table["run"] == "dense"].set_index("measure")
    assert got.loc["nDCG(gain=exp)@5", "aggregate"] == pytest.approx(
        ev.aggregate["nDCG(gain=exp)@5"]
    )
    assert got.loc["RR", "aggregate"] == pytest.approx(ev.aggregate["RR"])
    assert got.loc["RR", "queries"] == 50  # missing queries scored 0
    assert at.session_state["ranklab.conventions"].missing_queries == "zero"
    # reset to trec_eval's defaults
    at.button(key="ranklab.w.reset_conventions").click().run()
    assert at.session_state["ranklab.conventions"] == mc.Conventions()


def test_overview_threshold_edit_changes_labels(sample):
    # the session's thresholds (the comparative table's editor sets them; an older session's
    # single number is the Good threshold)
    at = _app("overview", sample)
    at.session_state["ranklab.thresholds"] = {"RR": 0.5}
    _open_own_queries(at)
    _ok(at)
    table = _frame_with(at, "interpretation").set_index(["run", "measure"])
    assert table.loc[("bm25", "RR"), "interpretation"] == "Good"  # 0.63 >= 0.5
    assert table.loc[("bm25", "nDCG@10"), "interpretation"] == ""  # no threshold now


def test_per_query_page(sample):
    qrels, runs, _ = sample
    at = _app("per_query", sample)
    _ok(at)
    at.selectbox(key="ranklab.pq.run").set_value("hybrid").run()
    _ok(at)
    ev = mc.evaluate(
        qrels, runs["hybrid"], ["RR", "nDCG@10", "P@5", "P@10", "AP", "R@100", "Judged@10"]
    )
    table = _frame_with(at, "nDCG@10")
    np.testing.assert_allclose(table["nDCG@10"].to_numpy(), ev.per_query["nDCG@10"].to_numpy())
    # one query, from the shared selection key: ranked list in trec_eval's order
    at.session_state["ranklab.selected_query"] = "q07"
    at.run()
    _ok(at)
    assert at.selectbox(key="ranklab.pq.query").value == "q07"
    at.selectbox(key="ranklab.pq.side0").set_value("bm25").run()
    ranking = at.dataframe[
        [i for i, d in enumerate(at.dataframe) if "rank" in d.value.columns][0]
    ].value
    frame = runs["bm25"].to_frame()
    ref = frame[frame["query_id"] == "q07"].sort_values(
        ["score", "doc_id"], ascending=[False, False]
    )
    assert ranking["doc_id"].tolist() == ref["doc_id"].head(len(ranking)).tolist()
    judged = qrels.to_frame()
    judged = judged[judged["query_id"] == "q07"].set_index("doc_id")["relevance"]
    expected_rel = ref["doc_id"].head(len(ranking)).map(judged)
    np.testing.assert_array_equal(
        ranking["relevance"].to_numpy(dtype=float), expected_rel.to_numpy(dtype=float)
    )


def test_per_query_rankings_show_five_columns(sample):
    """The two rankings side by side had six columns, 472 px in a 400 px half page (the last
    cut): "Judged" repeated the relevance column's "unjudged" and is left out on screen."""
    at = _app("per_query", sample)
    _ok(at)
    rankings = [d for d in at.dataframe if "rank" in d.value.columns]
    assert len(rankings) == 2
    for d in rankings:
        assert list(d.proto.column_order) == ["rank", "doc_id", "score", "relevance", "tied"]
        assert "judged" in d.value.columns  # still in the data (and its exports)


def test_breakdown_page(sample):
    qrels, runs, meta = sample
    at = _app("breakdown", sample)
    _ok(at)
    measures = ["RR", "nDCG@10", "P@5", "P@10", "AP", "R@100"]
    at.selectbox(key="ranklab.bd.column").set_value("difficulty").run()
    _ok(at)
    long = _frame_with(at, "difficulty")
    ev = mc.evaluate(qrels, runs["bm25"], measures)
    ref = group_means(ev.per_query, meta, "difficulty")
    got = long[long["run"] == "bm25"].set_index("difficulty")
    for m in measures:  # means by group, under the measures' canonical names
        np.testing.assert_allclose(got.loc[ref.index, m].to_numpy(), ref[m].to_numpy())
    assert got.loc[ref.index, "count"].tolist() == ref["count"].tolist()
    # the labelled report of each query is the comparative table's now (one place for labels:
    # tests/app/test_labels_one_place.py); Breakdown links to it
    assert not any("interpretation" in d.value.columns for d in at.dataframe)
    assert any(
        "Comparative table" in c.value for c in at.caption
    )  # the link (a caption outside the menu)


def test_breakdown_date_filter(sample):
    qrels, runs, meta = sample
    at = _app("breakdown", sample)
    lo = meta["date"].min().date()
    cut = pd.Timestamp("2025-02-01")
    at.date_input(key="ranklab.bd.dates").set_value((lo, cut.date())).run()
    _ok(at)
    in_range = set(meta.index[meta["date"] <= cut])
    long = _frame_with(at, "category")
    kept = meta.loc[sorted(in_range)]
    counts = long[long["run"] == "bm25"].set_index("category")["count"]
    expected = kept.groupby("category").size()
    assert counts.sum() == expected.sum() < len(meta)  # only the queries of the range are counted


def test_learn_page_seed_examples():
    at = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=TIMEOUT).run()
    _ok(at)
    at.button(key="ranklab.learn.graded").click().run()
    _ok(at)
    values = _frame_with(at, "value")
    assert values.loc["DCG@6", "value"] == pytest.approx(10.279642067948915)
    assert values.loc["nDCG@6", "value"] == pytest.approx(0.7424602308163405)
    at.button(key="ranklab.learn.four_results").click().run()
    _ok(at)
    cmp = _frame_with(at, "the seed says").set_index("measure")
    assert bool(cmp.loc["DCG@4", "agrees to the seed's decimals"])
    assert not bool(cmp.loc["nDCG@4", "agrees to the seed's decimals"])  # the seed's slip
    assert cmp.loc["nDCG@4", "RankLab"] == pytest.approx(0.9514426589871553)
    # change a control: the discount
    at.selectbox(key="ranklab.learn.discount").set_value("jarvelin").run()
    values = _frame_with(at, "value")
    run, qrels = mc.io.from_relevance_vectors({"x": [3, 1, 3, 0]})
    ref = mc.evaluate(qrels, run, ["DCG@4"], discount="jarvelin").aggregate["DCG@4"]
    assert values.loc["DCG@4", "value"] == pytest.approx(ref)


def test_clicks_page():
    at = AppTest.from_file(str(ROOT / "pages" / "clicks.py"), default_timeout=TIMEOUT).run()
    _ok(at)
    at.button(key="ranklab.clicks.sample").click().run()
    _ok(at)
    log = read_click_log(sample_files()["clicks"].read_bytes(), "clicks.csv")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["MRR (from clicks)"] == f"{click_mrr(log).mrr:.4f}"
    assert int(metrics["Ignored clicks (not shown)"]) == click_mrr(log).ignored_clicks > 0
    at.radio(key="ranklab.clicks.rule").set_value("top").run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["MRR (from clicks)"] == f"{click_mrr(log, rule='top').mrr:.4f}"
    at.checkbox(key="ranklab.clicks.strict").check().run()
    _ok(at)
    assert any("not among the shown" in e.value for e in at.error)


def test_clicks_tables_headed_in_spanish():
    """The Spanish Click feedback page headed its tables query / impressions and shown /
    clicks / ignored_clicks / first_click_rank (the library's column names)."""
    import json

    at = AppTest.from_file(str(ROOT / "pages" / "clicks.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = "es"
    at.run()
    at.button(key="ranklab.clicks.sample").click().run()
    _ok(at)
    heads = [
        {c: v.get("label") for c, v in json.loads(d.proto.columns).items()} for d in at.dataframe
    ]
    per_query = next(h for h in heads if "impressions" in h)
    assert per_query["_index"] == "Consulta" and per_query["impressions"] == "Impresiones"
    per_impression = next(h for h in heads if "first_click_rank" in h)
    assert per_impression["ignored_clicks"] == "Clics ignorados"
    assert per_impression["shown"] == "Mostrados" and per_impression["query"] == "Consulta"


@pytest.mark.parametrize("page", ["overview", "per_query", "breakdown"])
def test_pages_without_data_say_so(page):
    at = _app(page)
    _ok(at)
    assert any("No data loaded" in i.value for i in at.info)


SHARED_RANKING_SCRIPT = """
import streamlit as st

from ui.ranking.data import evaluate_loaded, load_sample_into_state

load_sample_into_state()
st.session_state["diag"] = evaluate_loaded(["Judged@10", "P@10", "NumRet"])  # the Data page's
st.session_state["board"] = evaluate_loaded(["RR", "nDCG@10", "P@5", "AP", "R@100"])  # the Overview's
st.session_state["other"] = evaluate_loaded(["P@7"])  # a cutoff not built yet: ranked again
"""


def test_a_run_is_ranked_once_for_every_measure_set(sample, tmp_path):
    """The Data page's diagnostics and the Overview's measures are computed on one ranking of
    each run; the numbers and diagnostics are mc.evaluate's."""
    script = tmp_path / "shared_ranking.py"
    script.write_text(SHARED_RANKING_SCRIPT)
    at = AppTest.from_file(str(script), default_timeout=TIMEOUT).run()
    _ok(at)
    qrels, runs, _ = sample
    for name in runs:  # one ranking for the first two measure sets; ranked again for cutoff 7
        assert at.session_state["diag"][name].ranking is at.session_state["board"][name].ranking
        assert (
            at.session_state["other"][name].ranking is not at.session_state["board"][name].ranking
        )
    for key, measures in (
        ("diag", ["Judged@10", "P@10", "NumRet"]),
        ("board", ["RR", "nDCG@10", "P@5", "AP", "R@100"]),
        ("other", ["P@7"]),
    ):
        for name, ev in at.session_state[key].items():
            want = mc.evaluate(qrels, runs[name], measures)
            pd.testing.assert_frame_equal(ev.per_query, want.per_query)
            assert ev.aggregate == want.aggregate and ev.diagnostics == want.diagnostics


def test_the_menu_opens_with_home_and_the_four_tasks_of_the_home_page():
    """Fourteen pages in five sections: a newcomer sees the four tasks first, in the Home page's
    order and words; the pages that serve every task come last."""
    from ui.common.navigation import SECTIONS

    sections = list(SECTIONS)
    assert sections[0] == "Start" and [p for p, *_r in SECTIONS["Start"]] == ["pages/home.py"]
    assert sections[1:5] == TASKS_EN and sections[-1] == "More"
    assert [p for p, *_r in SECTIONS["More"]] == [
        "pages/clicks.py",
        "pages/history.py",
        "pages/learn.py",
    ]
    at = AppTest.from_file(str(ROOT / "pages" / "home.py"), default_timeout=TIMEOUT).run()
    assert [h.value for h in at.subheader] == sections[1:5]  # the menu's words are the Home page's


def test_overview_details_mark_significance_beside_p(sample):
    """The details' own "Significant" column made the table 785 px wide at 800 px (its heading
    cut): the marker sits beside the corrected p it comes from, one column fewer."""
    at = _app("overview", sample)
    _ok(at)
    details = next(d for d in at.dataframe if "p_shown" in d.value.columns)
    assert "marker" not in list(details.proto.column_order)
    rows = details.value[details.value["run"] != "bm25"]
    assert (rows["marker"] == "*").any() and (rows["marker"] == "").any()
    for p, marker, shown in zip(rows["p_corrected"], rows["marker"], rows["p_shown"], strict=True):
        assert shown == f"{p:.4f} {marker}".rstrip()
    assert any("*: significant after correction" in c.value for c in at.caption)


def test_breakdown_names_the_grouping_column_in_spanish(sample):
    """The Spanish Breakdown offered "category" (the table headed it "Categoría") and titled
    its chart "RR por category"."""
    import json

    qrels, runs, meta = sample
    at = AppTest.from_file(str(ROOT / "pages" / "breakdown.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = "es"
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = meta
    at.run()
    _ok(at)
    group = at.selectbox(key="ranklab.bd.column")
    assert group.value == "category" and "Categoría" in group.options
    assert "category" not in group.options and "Dificultad" in group.options
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"] == "RR por categoría"
    assert spec["layout"]["xaxis"]["title"]["text"] == "Categoría"
