"""Runs dropped on the Overview (AppTest): with qrels loaded and no run, the Overview offers
its own drop zone; with runs loaded, "Add runs". A run dropped there is on the leaderboard,
in the sidebar and in the status line of the same script run; a bad file gets one message
and leaves the box, as on the Data page. The Data page lists an upload in the run that
loads it (its sidebar is drawn last), and a parsed run is never shared between sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_app_pages import TIMEOUT, _ok
from ui.ranking.data import load_sample, parse_run

ROOT = Path(__file__).resolve().parents[2]
MINE = b"q01 Q0 D01195 1 3.5 mine\nq01 Q0 D00364 2 1.0 mine\nq02 Q0 D00001 1 2.0 mine\n"


def _page(name: str, qrels=None, runs=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    if qrels is not None:
        at.session_state["ranklab.qrels"] = qrels
    if runs is not None:
        at.session_state["ranklab.runs"] = dict(runs)
    return at.run()


def _uploader(at, prefix):
    return next(u for u in at.get("file_uploader") if u.key.startswith(prefix))


def _board_runs(at) -> set:
    """The runs named in the leaderboard grid's Run column ("bm25 (baseline)" is bm25)."""
    grid = next(d.value for d in at.dataframe if "Run" in d.value.columns)
    return {str(r).replace("(baseline)", "").strip() for r in grid["Run"]}


def _sidebar_text(at) -> str:
    return " ".join(str(c.value) for c in at.sidebar.caption)


def test_overview_with_qrels_only_offers_a_drop_zone_and_shows_the_dropped_run():
    qrels, _, _ = load_sample()
    at = _page("overview", qrels=qrels)
    _ok(at)
    assert any("Qrels loaded (50 queries judged)" in i.value for i in at.info)
    assert not at.dataframe  # no leaderboard without a run
    _uploader(at, "ranklab.overview.run_file").set_value([("mine.txt", MINE, "text/plain")]).run()
    _ok(at)
    assert set(at.session_state["ranklab.runs"]) == {"mine"}
    assert "mine" in _board_runs(at)
    assert "runs: mine (3 lines)" in _sidebar_text(at)


def test_a_run_added_on_the_overview_is_on_the_board_sidebar_and_status_in_the_same_run():
    qrels, runs, _ = load_sample()
    at = _page("overview", qrels=qrels, runs=runs)
    _ok(at)
    assert "mine" not in _board_runs(at)
    _uploader(at, "ranklab.overview.run_file").set_value([("mine.txt", MINE, "text/plain")]).run()
    _ok(at)
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid", "mine"}
    assert {"bm25", "dense", "hybrid", "mine"} <= _board_runs(at)
    assert "mine (3 lines)" in _sidebar_text(at)
    status = " ".join(str(c.value) for c in at.main.caption)
    assert "4 runs: bm25, dense, hybrid, mine" in status


def test_a_bad_file_dropped_on_the_overview_gets_one_message_and_leaves_the_box():
    qrels, runs, _ = load_sample()
    at = _page("overview", qrels=qrels, runs=runs)
    key = _uploader(at, "ranklab.overview.run_file").key
    _uploader(at, "ranklab.overview.run_file").set_value(
        [("broken.txt", b"q01 Q0 D1 1 notanumber x\n", "text/plain")]
    ).run()
    _ok(at)
    assert len(at.error) == 1
    message = at.error[0].value
    assert "broken.txt" in message and "Previous data still loaded: 50 queries, 3 runs." in message
    assert "--" not in message and "Traceback" not in message
    assert _uploader(at, "ranklab.overview.run_file").key != key  # the failed file left the box
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}
    assert _board_runs(at) >= {"bm25", "dense", "hybrid"} and "broken" not in _board_runs(at)


def test_the_data_page_lists_an_upload_in_the_run_that_loads_it():
    at = _page("data")
    _ok(at)
    assert at.button(key="ranklab.data.clear").disabled
    qrels_text = (ROOT / "sample_data" / "ranking" / "qrels.txt").read_bytes()
    _uploader(at, "ranklab.data.qrels_file").set_value(
        ("qrels.txt", qrels_text, "text/plain")
    ).run()
    _ok(at)
    assert "qrels: 50 queries" in _sidebar_text(at)
    _uploader(at, "ranklab.data.run_file").set_value([("mine.txt", MINE, "text/plain")]).run()
    _ok(at)
    assert "runs: mine (3 lines)" in _sidebar_text(at)
    assert not at.button(key="ranklab.data.clear").disabled  # enabled in the same run
    assert any("mine" in str(d.value.index.tolist()) for d in at.dataframe)  # the diagnostics


def test_a_parsed_run_is_not_shared_between_uploads():
    """Each upload gets its own Run: naming one (the page names runs after their file) can
    never rename another session's run parsed from the same bytes."""
    a = parse_run(MINE, "a.txt")
    a.name = "renamed"
    b = parse_run(MINE, "b.txt")
    assert b is not a and b.name != "renamed"
    assert len(a) == len(b) == 3


def test_the_overview_settings_keep_their_values_when_the_evaluation_fails():
    """The settings' widgets are drawn after the leaderboard, and on an evaluation error too:
    a widget not drawn in a run would lose its value."""
    import metrics_core as mc
    from metrics_core.conventions import Conventions

    qrels, _, _ = load_sample()
    dup = mc.read_run(b"q01 Q0 D01195 1 3.5 dup\nq01 Q0 D01195 2 1.0 dup\n")
    at = _page("overview", qrels=qrels, runs={"dup": dup})
    _ok(at)
    at.number_input(key="ranklab.overview.resamples").set_value(500).run()
    at.session_state["ranklab.conventions"] = Conventions(duplicates="error")
    at.run()
    _ok(at)
    assert len(at.error) == 1 and "duplicate" in at.error[0].value
    at.run()
    assert at.number_input(key="ranklab.overview.resamples").value == 500
    assert "runs: dup (2 lines)" in _sidebar_text(at)  # the sidebar is drawn on that path too


def test_the_leaderboard_is_kept_per_session_and_recomputed_only_when_asked(monkeypatch):
    """A rerun draws the kept leaderboard; a new setting computes one more; a run added makes
    the boards of the old data go (the session does not keep their evaluations alive)."""
    import metrics_core.stats.comparison as comparison

    calls = []
    real = comparison.leaderboard
    monkeypatch.setattr(
        comparison, "leaderboard", lambda *a, **k: calls.append(k["seed"]) or real(*a, **k)
    )
    qrels, runs, _ = load_sample()
    at = _page("overview", qrels=qrels, runs=runs)
    _ok(at)
    assert calls == [0]
    at.run()
    assert calls == [0]  # kept
    at.number_input(key="ranklab.overview.seed").set_value(7).run()
    _ok(at)
    assert calls == [0, 7]
    assert len(at.session_state["ranklab.cache"]["overview.boards"]) == 2  # the app's one cache
    _uploader(at, "ranklab.overview.run_file").set_value([("mine.txt", MINE, "text/plain")]).run()
    _ok(at)
    assert calls == [0, 7, 7]
    assert (
        len(at.session_state["ranklab.cache"]["overview.boards"]) == 1
    )  # the old data's boards dropped


def test_the_data_page_shows_the_judgements_per_label_once_qrels_are_loaded():
    """Under the qrels box: the judgements of each label and their share (a table drawn as soon
    as qrels load, which also loads the browser's data-grid code before the leaderboard)."""
    import numpy as np

    at = _page("data")
    assert not any("Label" in d.value.columns for d in at.dataframe)
    qrels_text = (ROOT / "sample_data" / "ranking" / "qrels.txt").read_bytes()
    _uploader(at, "ranklab.data.qrels_file").set_value(
        ("qrels.txt", qrels_text, "text/plain")
    ).run()
    _ok(at)
    table = next(d.value for d in at.dataframe if "Label" in d.value.columns)
    rel = np.asarray(at.session_state["ranklab.qrels"].relevance)
    labels, counts = np.unique(rel, return_counts=True)
    assert table["Label"].tolist() == [f"{v:g}" for v in labels]
    assert table["Judgements"].tolist() == counts.tolist()
    assert table["Share"].sum() == pytest.approx(100.0)  # in percent units
    assert any(f"{len(rel):,} judgements" in str(c.value) for c in at.main.caption)
