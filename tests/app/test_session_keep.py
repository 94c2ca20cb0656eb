"""Sessions that survive a reload (:mod:`ui.common.keep`): the address names the session's token;
a new session at that address (a reload, another tab) takes back the data and settings; data
whose session is gone is released after its time, and the Data page then says so; the Data
page warns how long data is kept; the upload boxes list what is loaded."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

import metrics_core as mc
from ui.common import keep

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
DATA = str(ROOT / "pages" / "data.py")


def _first_visit(sample) -> AppTest:
    qrels, runs, meta = sample
    at = AppTest.from_file(DATA, default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.measures"] = ["AP", "P@5"]
    at.session_state["ranklab.conventions"] = mc.Conventions(missing_queries="zero")
    at.run()
    assert not at.exception
    return at


def test_a_reload_brings_back_the_data_and_settings(sample):
    first = _first_visit(sample)
    token = first.query_params.get(keep.QUERY_PARAM)
    token = token[0] if isinstance(token, list) else token
    assert token and len(token) >= 16
    again = AppTest.from_file(DATA, default_timeout=TIMEOUT)  # a new session: nothing in its state
    again.query_params[keep.QUERY_PARAM] = token
    again.run()
    assert not again.exception
    assert set(again.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}
    assert again.session_state["ranklab.qrels"] is not None
    assert again.session_state["ranklab.measures"] == ["AP", "P@5"]
    assert again.session_state["ranklab.conventions"] == first.session_state["ranklab.conventions"]
    # the runs box lists what is loaded, though the box itself is empty after a reload
    assert any(c.value.startswith("Loaded: bm25 (") for c in again.caption)


def test_another_address_gets_nothing_and_a_fresh_token(sample):
    first = _first_visit(sample)
    other = AppTest.from_file(DATA, default_timeout=TIMEOUT).run()
    assert not other.exception
    assert not other.session_state["ranklab.runs"]
    assert other.query_params.get(keep.QUERY_PARAM) != first.query_params.get(keep.QUERY_PARAM)


def test_released_data_is_gone_and_the_page_says_so(sample, monkeypatch):
    first = _first_visit(sample)
    token = first.query_params.get(keep.QUERY_PARAM)
    token = token[0] if isinstance(token, list) else token
    monkeypatch.setenv("RANKLAB_KEEP_SECONDS", "0")
    assert keep.purge(set()) >= 1  # no session open: past its time
    again = AppTest.from_file(DATA, default_timeout=TIMEOUT)
    again.query_params[keep.QUERY_PARAM] = token
    again.run()
    assert not again.exception
    assert not again.session_state["ranklab.runs"]
    assert any("was released" in w.value for w in again.warning), [w.value for w in again.warning]


def test_an_open_session_keeps_its_data(sample, monkeypatch):
    first = _first_visit(sample)
    monkeypatch.setenv("RANKLAB_KEEP_SECONDS", "0")
    before = keep.kept_count()
    # every kept session still open: nothing is released
    assert keep.purge({sid for _t, (_w, sid, _d) in keep._kept.items()}) == 0
    assert keep.kept_count() == before
    assert first.session_state["ranklab.runs"]


def test_the_data_page_warns_how_long_data_is_kept(sample):
    at = _first_visit(sample)
    assert any("brings your data back for 2 min" in c.value for c in at.caption), [
        c.value for c in at.caption
    ]
