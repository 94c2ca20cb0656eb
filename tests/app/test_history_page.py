"""The History page (AppTest), its trend figure and the save action."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.history import REPORT_MEASURES, HistoryStore, load_sample_history
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS
from ui.history import state as hs
from ui.history.data import save_current_evaluation
from ui.history.figures import trend_figure, trend_groups

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "history.py")


@pytest.fixture(autouse=True)
def _no_deployer_store(monkeypatch):
    """Each test starts without a deployer's store; ``page(path)`` sets one for itself
    (monkeypatch restores the environment afterwards)."""
    monkeypatch.setenv(hs.ENV_STORE, "")
    monkeypatch.delenv(hs.ENV_STORE)


def page(store_path, **state) -> AppTest:
    """The History page with a deployer's shared store at ``store_path`` (None: the
    session's own history)."""
    import os

    if store_path is None:
        os.environ.pop(hs.ENV_STORE, None)
    else:
        os.environ[hs.ENV_STORE] = str(store_path)
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def report_frame(at):
    assert not at.exception, at.exception
    return at.dataframe[0].value


def sample_report(tmp_path, **kw):
    with HistoryStore(tmp_path / "expected.sqlite3") as s:
        load_sample_history(s)
        return s.report(**kw)


def test_empty_store_shows_sample_then_loads_it(tmp_path):
    path = tmp_path / "h.sqlite3"
    at = page(path)
    assert "sample history" in at.info[0].value
    shown = report_frame(at)
    expected = sample_report(tmp_path)
    assert len(shown) == len(expected) == 7
    np.testing.assert_allclose(
        shown["nDCG@10"].to_numpy(float), expected["nDCG@10"].to_numpy(float), rtol=1e-12
    )
    assert shown["Interpretation"].tolist() == expected["Interpretation"].tolist()
    assert shown["ID"].iloc[-1] == "Summary"
    # nothing was written to the user's store just by looking
    with HistoryStore(path) as s:
        assert s.count_evaluations() == 0

    next(b for b in at.button if b.label == "Load sample history into my history").click().run()
    assert not at.exception
    assert len(at.info) == 0
    with HistoryStore(path) as s:
        assert s.count_evaluations() == 6
    assert len(report_frame(at)) == 7
    assert [m.value for m in at.metric][-1] == expected.iloc[-1]["Interpretation"]


def test_filter_and_per_query_view(tmp_path):
    path = tmp_path / "h.sqlite3"
    with HistoryStore(path) as s:
        load_sample_history(s)
    at = page(path)
    at.date_input(key=hs.DATES).set_value((dt.date(2025, 1, 28), dt.date(2025, 1, 28))).run()
    shown = report_frame(at)
    assert shown["Run"].tolist()[:-1] == ["v1.0-keyword", "v1.1-semantic"]
    assert shown["Run"].iloc[-1].startswith("2 evaluations")

    at.radio(key=hs.VIEW).set_value(hs.VIEWS[1]).run()
    shown = report_frame(at)
    expected = sample_report(tmp_path, date_from="2025-01-28", date_to="2025-01-28", per_query=True)
    assert len(shown) == 2 * 5 + 1
    assert shown["Query"].tolist() == expected["Query"].tolist()
    np.testing.assert_allclose(
        shown["RR"].to_numpy(float), expected["RR"].to_numpy(float), rtol=1e-12
    )
    assert at.metric[0].value == "10"


def test_delete_asks_for_confirmation(tmp_path):
    path = tmp_path / "h.sqlite3"
    with HistoryStore(path) as s:
        ids = load_sample_history(s)
    at = page(path)
    at.selectbox(key=hs.DELETE_ID).set_value(ids[0]).run()
    next(b for b in at.button if b.label == "Delete…").click().run()
    assert "cannot be undone" in at.warning[0].value
    with HistoryStore(path) as s:
        assert s.count_evaluations() == 6  # not yet
    next(b for b in at.button if b.label == "Cancel").click().run()
    assert len(at.warning) == 0
    next(b for b in at.button if b.label == "Delete…").click().run()
    next(b for b in at.button if b.label == "Yes, delete").click().run()
    assert not at.exception
    with HistoryStore(path) as s:
        assert ids[0] not in s.list_evaluations()["id"].tolist() and s.count_evaluations() == 5
    assert len(report_frame(at)) == 6


def test_saved_evaluation_appears_in_history(tmp_path):
    path = tmp_path / "h.sqlite3"
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
    ev = mc.evaluate(
        qrels, {"q1": {"d9": 3.0, "d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}, list(REPORT_MEASURES)
    )
    eid = save_current_evaluation(ev, "from-overview", qrels, store_path=str(path))
    at = page(path)
    shown = report_frame(at)
    assert shown["ID"].tolist() == [str(eid), "Summary"]
    assert shown["Suite"].iloc[0] == "from-overview"
    assert shown["RR"].iloc[0] == ev.aggregate["RR"]
    with pytest.raises(mc.InputError, match="different qrels"):
        save_current_evaluation(ev, "from-overview", {"q1": {"d1": 1}}, store_path=str(path))


def test_bad_store_path_shows_error(tmp_path):
    at = page(tmp_path)  # a folder
    assert not at.exception
    assert "folder" in at.error[0].value


def test_trend_joins_only_the_same_run_on_the_same_suite(tmp_path):
    """The sample's six versions have six run names: no line joins two of them."""
    with HistoryStore(":memory:") as s:
        load_sample_history(s)
        evals = s.list_evaluations()
    assert trend_groups(evals) == {}
    assert len(trend_figure(evals, "RR", DEFAULT_GOOD_THRESHOLDS).data) == 0
    # the same run saved on three dates is one line, in time order, with the threshold
    again = evals.copy()
    again.loc[again.index[:3], "run"] = "nightly"
    fig = trend_figure(again, "nDCG@10", DEFAULT_GOOD_THRESHOLDS)
    assert [t.name for t in fig.data] == ["nightly"]
    np.testing.assert_array_equal(
        np.asarray(fig.data[0].y, float), evals["nDCG@10"].to_numpy(float)[:3]
    )
    assert [sh.y0 for sh in fig.layout.shapes] == [DEFAULT_GOOD_THRESHOLDS["nDCG@10"]]
    # the same run name on two suites is two lines
    again.loc[again.index[1:3], "suite"] = "other"
    again.loc[again.index[3:5], ["run", "suite"]] = ["nightly", "other"]
    assert sorted(trend_groups(again)) == [("other", "nightly")]


def _overview_stub():
    """What the Overview page does: evaluate, then draw the save form."""
    import streamlit as st

    import metrics_core as mc
    from ui.history.widgets import save_evaluation_form

    qrels = {"q1": {"d1": 1}, "q2": {"d3": 2}}
    evs = [
        mc.evaluate(
            qrels, {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}, ["RR", "nDCG@10", "P@5"]
        ),
        mc.evaluate(
            qrels, {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d4": 1.0}}, ["RR", "nDCG@10", "P@5"]
        ),
    ]
    evs = [evs[0].renamed("bm25"), evs[1].renamed("dense")]
    st.session_state["saved_id"] = save_evaluation_form(evs, qrels, key="test")


def test_save_form_of_the_overview(tmp_path):
    path = tmp_path / "h.sqlite3"
    import os

    os.environ[hs.ENV_STORE] = str(path)
    at = AppTest.from_function(_overview_stub, default_timeout=60)
    at.run()
    at.button[0].click().run()  # no suite name: an error, nothing saved
    assert not at.exception and "suite needs a name" in at.error[0].value
    at.text_input(key=f"{hs.SAVE_SUITE}.test").input("nightly")
    at.multiselect[0].set_value(["dense"])
    at.button[0].click().run()
    assert not at.exception and len(at.success) == 1
    with HistoryStore(path) as s:
        listed = s.list_evaluations()
        assert listed["run"].tolist() == ["dense"] and listed["suite"].tolist() == ["nightly"]
        assert at.session_state["saved_id"] == listed["id"].iloc[0]
        assert listed["RR"].iloc[0] == 0.25  # q1: rank 2 -> 0.5, q2: nothing relevant -> 0


def _texts(at) -> str:
    parts = []
    for kind in (
        "markdown",
        "caption",
        "info",
        "error",
        "warning",
        "success",
        "title",
        "subheader",
    ):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [str(getattr(w, "label", "")) for w in (*at.button, *at.selectbox, *at.text_input)]
    return "\n".join(parts)


def test_no_path_input_and_no_server_path_shown(tmp_path):
    """A visitor cannot type a file path, and the deployer's path is never shown."""
    shared = tmp_path / "deployer" / "history.sqlite3"
    with HistoryStore(shared) as s:
        load_sample_history(s)
    at = page(shared)
    assert not at.exception
    assert len(at.text_input) == 0
    assert str(tmp_path) not in _texts(at) and "sqlite3" not in _texts(at)
    assert "Shared history" in _texts(at)
    assert len(at.get("file_uploader")) == 0  # nobody uploads over the shared store
    at = page(None)  # the session's own history
    assert not at.exception and len(at.text_input) == 0
    assert "this browser session only" in _texts(at)


def test_session_history_by_default_then_download_and_upload(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKLAB_HOME", str(tmp_path / "home"))
    at = page(None)
    next(b for b in at.button if b.label == "Load sample history into my history").click().run()
    assert not at.exception and len(at.info) == 0
    assert len(report_frame(at)) == 7
    assert not (tmp_path / "home").exists()  # nothing written on the server
    saved = at.session_state[hs.SESSION_STORE].to_bytes()
    assert saved.startswith(b"SQLite format 3\x00")

    fresh = page(None)  # another visitor / a new session: empty again
    assert "sample history" in fresh.info[0].value
    fresh.get("file_uploader")[0].set_value(
        ("mine.sqlite3", saved, "application/octet-stream")
    ).run()
    assert not fresh.exception, fresh.exception
    assert len(fresh.info) == 0 and len(fresh.error) == 0
    assert len(report_frame(fresh)) == 7
    assert fresh.session_state[hs.SESSION_STORE].count_evaluations() == 6


def test_upload_refuses_anything_but_a_history_file(tmp_path):
    import pickle

    at = page(None)
    next(b for b in at.button if b.label == "Load sample history into my history").click().run()
    key = at.get("file_uploader")[0].key
    at.get("file_uploader")[0].set_value(
        ("evil.sqlite3", pickle.dumps({"x": 1}), "application/octet-stream")
    ).run()
    assert not at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert "evil.sqlite3" in message and "not a RankLab history file" in message
    assert "unchanged (6 evaluations)" in message
    assert at.get("file_uploader")[0].key != key  # the failed file left the uploader
    assert at.session_state[hs.SESSION_STORE].count_evaluations() == 6


def _three_runs():
    qrels = {"q1": {"d1": 1}, "q2": {"d3": 1}}
    runs = {
        "bm25": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}},
        "dense": {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d4": 1.0}},
        "hybrid": {"q1": {"d1": 2.0}, "q2": {"d4": 2.0, "d3": 1.0}},
    }
    evs = []
    for name, run in runs.items():
        ev = mc.evaluate(qrels, run, list(REPORT_MEASURES))
        ev = ev.renamed(name)
        evs.append(ev)
    return qrels, evs


def test_runs_saved_together_are_one_batch_side_by_side_not_a_trend(tmp_path):
    from ui.history.data import save_current_evaluations

    path = tmp_path / "h.sqlite3"
    qrels, evs = _three_runs()
    ids = save_current_evaluations(evs, "nightly", qrels, store_path=str(path))
    with HistoryStore(path) as s:
        listed = s.list_evaluations()
    assert listed["id"].tolist() == ids and listed["batch"].nunique() == 1
    at = page(path)
    assert not at.exception
    assert "Runs saved together" in [h.value for h in at.subheader]
    side = at.dataframe[1].value
    assert side["Run"].tolist() == ["bm25", "dense", "hybrid"]
    np.testing.assert_allclose(
        side["MRR (mean RR)"].to_numpy(float), [ev.aggregate["RR"] for ev in evs]
    )
    assert any("No trend to draw" in c.value for c in at.caption)
    assert not any(
        getattr(c, "key", None) == "ranklab.history.trend" for c in at.get("plotly_chart")
    )

    # the same three runs saved again later: now each run has a trend of two points
    save_current_evaluations(evs, "nightly", qrels, store_path=str(path), timestamp="2030-01-01")
    at = page(path)
    assert not at.exception
    assert not any("No trend to draw" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 2  # the batch chart and the trend


def test_save_form_saves_the_chosen_runs_as_one_batch(tmp_path):
    import os

    path = tmp_path / "h.sqlite3"
    os.environ[hs.ENV_STORE] = str(path)
    at = AppTest.from_function(_overview_stub, default_timeout=60).run()
    at.text_input(key=f"{hs.SAVE_SUITE}.test").input("nightly")
    at.button[0].click().run()
    assert not at.exception and "2 runs as one batch" in at.success[0].value
    assert str(path) not in at.success[0].value
    with HistoryStore(path) as s:
        listed = s.list_evaluations()
    assert listed["run"].tolist() == ["bm25", "dense"] and listed["batch"].tolist() == [1, 1]


def test_sample_view_is_built_once_per_session_and_the_download_is_deferred(monkeypatch):
    """Review (issue 12): the sample history is not rebuilt, nor the store serialised, on every rerun."""
    calls = {"to_bytes": 0}
    real = HistoryStore.to_bytes

    def counting(self):
        calls["to_bytes"] += 1
        return real(self)

    monkeypatch.setattr(HistoryStore, "to_bytes", counting)
    at = page(None)
    first = report_frame(at)
    view = at.session_state[hs.SAMPLE_VIEW]
    at.run()
    assert at.session_state[hs.SAMPLE_VIEW] is view  # the same store: not loaded again
    pd.testing.assert_frame_equal(report_frame(at), first)
    next(b for b in at.button if b.label == "Load sample history into my history").click().run()
    at.run()
    assert len(report_frame(at)) == 7
    assert calls["to_bytes"] == 0  # made only when "Download history" is clicked


def test_history_in_spanish_labels_in_the_specifications_words(tmp_path):
    import os

    at = AppTest.from_file(PAGE, default_timeout=60)
    os.environ.pop(hs.ENV_STORE, None)
    at.query_params["lang"] = "es"
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Historial"
    assert "historial de ejemplo" in at.info[0].value
    shown = at.dataframe[0].value
    assert set(shown["Interpretation"]) <= {
        "Bueno",
        "Regular",
        "Mejorable",
        "Eficiente",
        "Aceptable",
        "",
    }
    assert shown["ID"].iloc[-1] == "Resumen" and shown["Interpretation"].iloc[-1] == "Aceptable"
    assert (
        at.selectbox(key=hs.SUITE).label == "Conjunto"
        and "Todos los conjuntos" in at.selectbox(key=hs.SUITE).options
    )
    assert at.subheader[0].value == "Reporte comparativo"


def test_history_export_states_the_thresholds_in_words():
    from ui.history.widgets import thresholds_words

    assert thresholds_words() == "Good: MRR ≥ 0.7, nDCG@10 ≥ 0.6, P@5 ≥ 0.5"
    assert "{" not in thresholds_words()


def test_report_headings_in_spanish_and_the_summary_row_not_cut(tmp_path):
    """The Spanish report headed RR's column "MRR (mean RR)" in English, and its ID column (50 px)
    cut the summary row's "Resumen"."""
    import json
    import os

    os.environ[hs.ENV_STORE] = str(tmp_path / "h.sqlite3")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["lang"] = "es"
    at.run()
    assert not at.exception, at.exception
    shown = at.dataframe[0]
    assert shown.value["ID"].iloc[-1] == "Resumen"
    config = json.loads(shown.proto.columns)
    assert config["RR"]["label"] == "MRR (media de RR)"
    assert config["ID"]["width"] >= 75  # "Resumen" is about 60 px wide, with 16 px of padding


def test_report_leaves_off_columns_that_say_nothing(tmp_path):
    """The report's nine columns were 832 px wide on a 766 px page (800 px window), its last
    cut: with one suite (named above the table) and one evaluation per batch, the Suite and
    Batch columns say nothing and are left off screen (kept in the data and the download)."""
    at = page(tmp_path / "h.sqlite3")
    assert not at.exception, at.exception
    report = at.dataframe[0]
    order = list(report.proto.column_order)
    assert "Suite" not in order and "Batch" not in order
    assert {"ID", "Run", "Date", "Interpretation"} <= set(order)
    assert {"Suite", "Batch"} <= set(report.value.columns)
    assert any(c.value == "Suite: semantic-panel" for c in at.caption)
