"""The memory budget (:mod:`ui.common.budget`): an upload that would exceed the visitor's share
or the server's free memory is refused before it is parsed, with one line that says what it
needs, what fits and what to do; what was loaded stays; the Data page shows what the visitor's
data costs; a parsed upload's raw bytes are released."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ui.common import budget

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def _run_text(lines: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 50, lines)
    return "".join(
        f"q{a:02d} Q0 D{i:07d} {i} {s:.5f} big\n"
        for i, (a, s) in enumerate(zip(q, rng.random(lines), strict=True))
    ).encode()


def test_the_estimate_grows_with_the_rows_and_counts_a_rankings_cost():
    small, big = _run_text(1_000), _run_text(10_000)
    peak_s, held_s = budget.estimate(small, "run")
    peak_b, held_b = budget.estimate(big, "run")
    assert held_b > 9 * held_s and peak_b > held_b
    # the ranking's bytes per row are counted for a run, not for qrels
    assert (
        budget.estimate(big, "run")[1] - budget.estimate(big, "qrels")[1]
        == (big.count(b"\n") + 1) * budget.RANKING_BYTES_PER_ROW
    )
    assert held_b >= len(big)  # never less than the text it holds


def test_a_gzip_upload_is_estimated_from_its_size():
    import gzip

    data = gzip.compress(_run_text(5_000))
    peak, held = budget.estimate(data, "run")
    assert held >= len(data) // budget.COMPRESSED_BYTES_PER_ROW * budget.RANKING_BYTES_PER_ROW


def test_a_five_million_line_run_is_refused_up_front_even_compressed():
    """5,000,000 lines gzip to a few hundred kB: the estimate reads the text size the gzip
    trailer states, so the run is over a 64 MB share before a byte is decompressed."""
    import gzip

    data = gzip.compress(b"q1 Q0 doc 1 1.0 x\n" * 5_000_000, compresslevel=1)
    assert len(data) < 40 * budget.MB  # under the upload limit: the budget must refuse it
    peak, held = budget.estimate(data, "run")
    assert held > budget.DEFAULT_VISITOR_MB * budget.MB
    assert held >= 5_000_000 * budget.RANKING_BYTES_PER_ROW * 0.9


def test_budgets_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("RANKLAB_VISITOR_MB", "12")
    monkeypatch.setenv("RANKLAB_SERVER_MB", "300")
    assert budget.visitor_budget() == 12 * budget.MB and budget.server_budget() == 300 * budget.MB
    monkeypatch.setenv("RANKLAB_VISITOR_MB", "not a number")
    assert budget.visitor_budget() == budget.DEFAULT_VISITOR_MB * budget.MB
    assert budget.process_rss() > 0


def _upload_script():
    import numpy as np
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
    rng = np.random.default_rng(1)
    lines = int(st.session_state.get("lines", 200_000))
    text = "".join(
        f"q{a:02d} Q0 D{i:07d} {i} 1.0 big\n" for i, a in enumerate(rng.integers(1, 50, lines))
    )
    handle_upload("run", Upload(text.encode(), "huge.txt"), "auto")
    st.write("runs: " + ",".join(st.session_state[state.RUNS]))


def test_an_upload_over_the_visitors_share_is_refused_before_parsing(monkeypatch):
    monkeypatch.setenv("RANKLAB_VISITOR_MB", "5")
    at = AppTest.from_function(_upload_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    line = errors[0]
    assert "huge.txt" in line and "your share of this server is 5.0 MB" in line, line
    assert "ranklab evaluate" in line and "\n" not in line  # what to do, in one line
    # what was loaded stays; the refused run never became one
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}


def test_an_upload_over_the_servers_free_memory_is_refused(monkeypatch):
    monkeypatch.setenv("RANKLAB_SERVER_MB", str(budget.process_rss() // budget.MB + 1))
    at = AppTest.from_function(_upload_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert any("the server has" in e.value and "Try again" in e.value for e in at.error), [
        e.value for e in at.error
    ]
    assert "huge" not in at.session_state["ranklab.runs"]


def test_an_upload_within_the_budget_loads(monkeypatch):
    monkeypatch.setenv("RANKLAB_VISITOR_MB", "200")
    at = AppTest.from_function(_upload_script, default_timeout=TIMEOUT)
    at.session_state["lines"] = 20_000
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "huge" in at.session_state["ranklab.runs"]


def test_the_data_page_shows_what_the_data_costs(sample):
    qrels, runs, meta = sample
    at = AppTest.from_file(str(ROOT / "pages" / "data.py"), default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert not at.exception
    lines = [c.value for c in at.caption if "share of this server" in c.value]
    assert len(lines) == 1 and f"{budget.DEFAULT_VISITOR_MB} MB share" in lines[0], lines
    assert any(c.value.startswith("Loaded: bm25 (") for c in at.caption), [
        c.value for c in at.caption
    ]


@pytest.mark.parametrize("lang, words", [("es", "de tu parte de")])
def test_the_cost_line_is_translated(sample, lang, words):
    qrels, runs, meta = sample
    at = AppTest.from_file(str(ROOT / "pages" / "data.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert any(words in c.value for c in at.caption), [c.value for c in at.caption]


def test_an_evaluation_the_server_cannot_hold_is_refused_with_one_line(sample, monkeypatch):
    """The evaluation reserves its temporaries too: with no memory free, the Overview says so in
    one line (what to do included) instead of evaluating."""
    qrels, runs, meta = sample
    # under what the process holds already: no evaluation fits, however small
    monkeypatch.setenv("RANKLAB_SERVER_MB", str(budget.process_rss() // budget.MB - 1))
    # the heap's free pages stay counted (a trim in a long test process frees more than the
    # few MB the sample's evaluation needs)
    monkeypatch.setattr(budget, "trim", lambda collect=True: None)
    at = AppTest.from_file(str(ROOT / "pages" / "overview.py"), default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert (
        len(errors) == 1
        and "evaluating bm25 would need about" in errors[0]
        and "ranklab evaluate" in errors[0]
    )
