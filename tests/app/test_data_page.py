"""The Data page's uploaders (AppTest): one message per uploader, a failed file leaves
the uploader, the message says what is still loaded, in the page's words."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "data.py")


def _page_with_sample() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.button(key="ranklab.data.sample").click().run()
    assert not at.exception, at.exception
    return at


def _named(data: bytes, name: str) -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name
    return f


def _uploader(at, prefix):
    return next(u for u in at.get("file_uploader") if u.key.startswith(prefix))


def test_failed_qrels_leaves_the_uploader_with_one_message():
    at = _page_with_sample()
    at.selectbox(key="ranklab.data.qrels_fmt").set_value("trec").run()
    up = _uploader(at, "ranklab.data.qrels_file")
    key = up.key
    up.set_value(("graded.txt", b"q1 0 d1 relevant\nq1 0 d2 1\n", "text/plain")).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1  # one message, not a status box plus an error
    message = at.error[0].value
    assert "graded.txt, line 1: relevance 'relevant' is not a number" in message
    assert "Previous data still loaded: 50 queries, 3 runs, metadata for 50 queries." in message
    assert "--" not in message and "Traceback" not in message
    assert _uploader(at, "ranklab.data.qrels_file").key != key  # the failed file left the list
    assert len(at.session_state["ranklab.qrels"].unique_query_ids()) == 50  # nothing replaced
    at.run()  # the message stays until the next upload, still one
    assert len(at.error) == 1


def test_several_failed_runs_are_one_message_and_good_ones_load():
    at = _page_with_sample()
    good = b"q01 Q0 D01195 1 3.5 mine\nq01 Q0 D00364 2 1.0 mine\n"
    _uploader(at, "ranklab.data.run_file").set_value(
        [
            ("mine.txt", good, "text/plain"),
            ("junk.bin", bytes(range(256)) * 4, "application/octet-stream"),
            ("broken.txt", b"q01 Q0 D1 1 notanumber x\n", "text/plain"),
        ]
    ).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert message.startswith("Could not load junk.bin, broken.txt:")
    assert "Previous data still loaded: 50 queries, 4 runs" in message
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid", "mine"}
    assert _uploader(at, "ranklab.data.run_file").key.endswith(".1")


def test_a_table_whose_columns_can_be_chosen_stays_with_its_mapping():
    at = _page_with_sample()
    _uploader(at, "ranklab.data.run_file").set_value(
        ("wrong.csv", b"topic,document,value\nq01,D01195,3.5\nq01,D00364,1.0\n", "text/csv")
    ).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1 and "Choose its columns below" in at.error[0].value
    assert _uploader(at, "ranklab.data.run_file").key.endswith(".0")  # kept: the page can fix it
    at.selectbox(key="ranklab.data.map.run.wrong.csv.query_id").set_value("topic")
    at.selectbox(key="ranklab.data.map.run.wrong.csv.doc_id").set_value("document")
    at.selectbox(key="ranklab.data.map.run.wrong.csv.score").set_value("value")
    at.button(key="ranklab.data.map.run.wrong.csv.apply").click().run()
    assert not at.exception and len(at.error) == 0
    assert "wrong" in at.session_state["ranklab.runs"]


def test_reader_messages_are_put_in_the_page_words():
    """The readers' own application wording (``InputError.plain()``), no rewriting: the
    swapped-file hint names the qrels and the run, not ``--qrels``/``--run`` (the page used to
    say "is it in the right box"; the library's words now say the files look swapped)."""
    with pytest.raises(mc.InputError) as info:
        mc.read_run(_named(b"q1 0 d1 1\n", "run.txt"))
    text = info.value.plain()
    assert "--" not in text and "are the qrels and the run swapped?" in text
    assert text.startswith("run.txt, line 1: ") and info.value.field == "run"
    with pytest.raises(mc.InputError) as info:
        mc.read_qrels(_named(b"a,b\nq1,d1\n", "q.txt"), fmt="csv")
    assert info.value.plain() == "q.txt: no query_id column found. columns found: a, b"
    assert info.value.field == "query_id"


def test_a_mapping_message_has_no_python_or_command_line_syntax():
    at = _page_with_sample()
    _uploader(at, "ranklab.data.qrels_file").set_value(
        ("odd.csv", b"xq,yd,zr\nq01,D01195,1\n", "text/csv")
    ).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert "Choose its columns below" in message
    assert "--" not in message and "columns={" not in message and "NAME" not in message


def _run_rows(tag: str, shift: float) -> bytes:
    return "".join(
        f"q{q} Q0 d{d} {d + 1} {10 - d + shift * ((q + d) % 3):.3f} {tag}\n"
        for q in range(1, 6)
        for d in range(6)
    ).encode()


def test_a_file_dropped_into_a_box_drawn_anew_never_takes_a_loaded_run_name():
    """The runs box drawn anew (the visitor left the page and came back: the box is empty, its
    runs still loaded), then a different file of the same name dropped into it: a second run
    (named by its tag), not a replacement of the first (which kept the name it had)."""
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    _uploader(at, "ranklab.data.run_file").set_value(
        ("test_run.txt", _run_rows("sysA", 0.0), "text/plain")
    ).run()
    assert not at.exception, at.exception
    first = at.session_state["ranklab.runs"]["test_run"]
    # a new widget key: the box is drawn empty, as after a page change
    at.session_state["ranklab.upload.nonces"] = {"ranklab.data.run_file": 5}
    at.run()
    assert _uploader(at, "ranklab.data.run_file").key.endswith(".5")
    assert list(at.session_state["ranklab.runs"]) == ["test_run"]  # the empty box removed nothing
    _uploader(at, "ranklab.data.run_file").set_value(
        ("test_run.txt", _run_rows("sysB", 1.5), "text/plain")
    ).run()
    assert not at.exception, at.exception
    runs = at.session_state["ranklab.runs"]
    assert set(runs) == {"test_run", "test_run (sysB)"}
    assert runs["test_run"] is first  # the first run kept its name and its data
    assert any("the name test\\_run was taken" in i.value for i in at.info), [
        i.value for i in at.info
    ]


def test_diagnostics_fit_the_page_in_two_tables():
    """The diagnostics' nine columns were one table 1302 px wide in Spanish (the page is 818 px
    at 1280x800): now two tables, each run a row of both, every diagnostic in one of them."""
    import json

    from metrics_core.report.diagnostics import diagnostic_measures, diagnostics_table

    at = _page_with_sample()
    runs = at.session_state["ranklab.runs"]
    frames = [d for d in at.dataframe if list(d.value.index) == list(runs)]
    assert len(frames) == 2, [list(d.value.columns) for d in at.dataframe]
    evs = {
        n: mc.evaluate(at.session_state["ranklab.qrels"], r, diagnostic_measures(10))
        for n, r in runs.items()
    }
    table = diagnostics_table(evs, 10, runs)
    shown = [c for d in frames for c in d.value.columns]
    assert sorted(shown) == sorted(table.columns)
    assert all(len(d.value.columns) <= 5 for d in frames)
    assert frames[0].value["lines"].tolist() == table["lines"].tolist()
    labels = json.loads(frames[1].proto.columns)
    assert labels["tied groups straddling @10"]["label"] == "Tied groups straddling @10"
