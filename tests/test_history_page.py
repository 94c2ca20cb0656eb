"""The History page (AppTest), its trend figure and the save action."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.history import REPORT_MEASURES, HistoryStore, load_sample_history
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS
from ui import history_state as hs
from ui.figures_history import trend_figure
from ui.history_actions import save_current_evaluation

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "history.py")


def page(store_path, **state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state[hs.STORE_PATH] = str(store_path)
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
    np.testing.assert_allclose(shown["nDCG@10"].to_numpy(float), expected["nDCG@10"].to_numpy(float), rtol=1e-12)
    assert shown["Interpretation"].tolist() == expected["Interpretation"].tolist()
    assert shown["ID"].iloc[-1] == "Summary"
    # nothing was written to the user's store just by looking
    with HistoryStore(path) as s:
        assert s.count_evaluations() == 0

    at.button[0].click().run()  # "Load sample history into my store"
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
    np.testing.assert_allclose(shown["RR"].to_numpy(float), expected["RR"].to_numpy(float), rtol=1e-12)
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
    ev = mc.evaluate(qrels, {"q1": {"d9": 3.0, "d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}, list(REPORT_MEASURES))
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


def test_trend_figure_traces_follow_the_report(tmp_path):
    rows = sample_report(tmp_path).iloc[:-1]
    fig = trend_figure(rows, REPORT_MEASURES, DEFAULT_GOOD_THRESHOLDS)
    assert [t.name for t in fig.data] == list(REPORT_MEASURES)
    for trace, m in zip(fig.data, REPORT_MEASURES, strict=True):
        np.testing.assert_array_equal(np.asarray(trace.y, float), rows[m].to_numpy(float))
        assert len(trace.x) == len(rows) and trace.x[0].startswith(f"#{rows['ID'].iloc[0]} ")
    assert sorted(s.y0 for s in fig.layout.shapes) == sorted(DEFAULT_GOOD_THRESHOLDS[m] for m in REPORT_MEASURES)
    two = rows.copy()
    two.loc[two.index[:2], "Suite"] = "other"
    assert len(trend_figure(two, ["RR"]).data) == 2


def _overview_stub():
    """What the Overview page does: evaluate, then draw the save form."""
    import streamlit as st

    import metrics_core as mc
    from ui.history_actions import save_evaluation_form

    qrels = {"q1": {"d1": 1}, "q2": {"d3": 2}}
    evs = [mc.evaluate(qrels, {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}, ["RR", "nDCG@10", "P@5"]),
           mc.evaluate(qrels, {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d4": 1.0}}, ["RR", "nDCG@10", "P@5"])]
    evs[0].run_name, evs[1].run_name = "bm25", "dense"
    st.session_state["saved_id"] = save_evaluation_form(evs, qrels, key="test")


def test_save_form_of_the_overview(tmp_path):
    path = tmp_path / "h.sqlite3"
    at = AppTest.from_function(_overview_stub, default_timeout=60)
    at.session_state[hs.STORE_PATH] = str(path)
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
