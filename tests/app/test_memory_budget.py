"""What uploads and evaluations ask of the memory gate (:mod:`ui.common.budget`): an upload's
need is estimated from its size before it is read; one that could never fit the server is
refused before it is parsed, in one line that names the file, what it needs, the limit and
the command line; one the server cannot give memory to now is refused with "try again"; what
was loaded stays. No fixed share per visitor refuses work that fits. The budget counts the
process's anonymous memory, within its memory cgroup's limit; the Data page says where the
visitor's data is kept; a parsed upload's raw bytes are released."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ui.common import budget

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
MB = budget.MB


def _run_text(lines: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 50, lines)
    return "".join(
        f"q{a:02d} Q0 D{i:07d} {i} {s:.5f} big\n"
        for i, (a, s) in enumerate(zip(q, rng.random(lines), strict=True))
    ).encode()


def test_the_estimate_grows_with_the_text_and_reading_in_batches_needs_less():
    small, big = _run_text(1_000), _run_text(10_000)
    assert budget.estimate(big, "run") == budget.PARSE_FIXED + int(
        budget.PARSE_PEAK_FACTOR * len(big)
    )
    grows = budget.estimate(big, "run") - budget.estimate(small, "run")
    assert grows == int(budget.PARSE_PEAK_FACTOR * len(big)) - int(
        budget.PARSE_PEAK_FACTOR * len(small)
    )
    # a run read batch by batch: a fixed part and 12 bytes a line, not the text's columns
    lines = big.count(b"\n") + 1
    assert budget.estimate(big, "run-stream") == (
        budget.STREAM_PARSE_FIXED + lines * budget.STREAM_PARSE_BYTES_PER_ROW
    )
    million = b"q1 Q0 d1234567 1 1.2345 bm25\n" * 1_000_000  # 29 MB
    assert budget.estimate(million, "run-stream") < budget.estimate(million, "run")


def test_a_compressed_upload_is_estimated_from_the_text_it_states():
    """5,000,000 lines gzip to a few hundred kB: the estimate reads the text size the gzip
    trailer states, before a byte is decompressed."""
    text = b"q1 Q0 doc 1 1.0 x\n" * 5_000_000
    data = gzip.compress(text, compresslevel=1)
    assert len(data) < len(text) // 20
    assert budget.estimate(data, "run") >= budget.PARSE_PEAK_FACTOR * len(text)  # not its bytes


def test_the_budget_comes_from_the_environment_within_the_cgroups_limit(monkeypatch):
    monkeypatch.setattr(budget, "cgroup_limit", lambda: None)
    monkeypatch.setenv("RANKLAB_SERVER_MB", "300")
    assert budget.server_budget() == 300 * MB
    monkeypatch.setenv("RANKLAB_SERVER_MB", "not a number")
    assert budget.server_budget() == budget.DEFAULT_SERVER_MB * MB
    # inside a 500 MB memory cgroup: its share, whatever the setting
    monkeypatch.setattr(budget, "cgroup_limit", lambda: 500 * MB)
    assert budget.server_budget() == int(500 * MB * budget.CGROUP_SHARE)
    assert budget.process_anon() > 0 and budget.process_rss() >= budget.process_anon() // 2


@pytest.mark.parametrize(
    "cgroup, file, text, limit",
    [
        ("0::/app\n", "app/memory.max", "1073741824\n", 1 << 30),  # v2
        ("0::/app\n", "app/memory.max", "max\n", None),  # v2, no limit
        (
            "5:cpu:/x\n4:memory:/srv/app\n",
            "memory/srv/app/memory.limit_in_bytes",
            "1073741824",
            1 << 30,
        ),
        ("4:memory:/\n", "memory/memory.limit_in_bytes", "9223372036854771712", None),  # v1 root
        ("", "memory.max", "1", None),  # no cgroup
    ],
)
def test_the_memory_cgroups_limit_is_read(tmp_path, cgroup, file, text, limit):
    proc = tmp_path / "cgroup"
    proc.write_text(cgroup)
    (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / file).write_text(text)
    assert budget.cgroup_limit(str(proc), str(tmp_path)) == limit


def test_the_anonymous_memory_is_what_is_counted_not_mapped_files(tmp_path):
    """Pages of a memory-mapped file count in the resident size but not in the anonymous
    memory the gate counts (the system can drop them)."""
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc: not Linux")
    from metrics_core.scale import spill

    path = tmp_path / "big.arrow"
    spill.write_columns(path, {"v": np.arange(8_000_000, dtype=np.float64)})  # 64 MB
    anon, rss = budget.process_anon(), budget.process_rss()
    mapped = spill.as_numpy(spill.map_columns(path)["v"])
    assert float(mapped.sum()) == float(np.arange(8_000_000, dtype=np.float64).sum())
    assert budget.process_rss() - rss > 40 * MB  # the file's pages, read: resident
    assert budget.process_anon() - anon < 20 * MB  # but not anonymous


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
    if st.session_state.get("tight"):  # the server's budget just above what it holds now
        import os

        from ui.common import budget

        os.environ["RANKLAB_SERVER_MB"] = str(budget.process_anon() // budget.MB + 5)
    handle_upload("run", Upload(text.encode(), "huge.txt"), "auto")
    st.write("runs: " + ",".join(st.session_state[state.RUNS]))


@pytest.fixture
def fresh_gate(monkeypatch):
    monkeypatch.setattr(budget, "_gate", budget._Gate())
    monkeypatch.setattr(budget, "cgroup_limit", lambda: None)
    monkeypatch.setattr(budget, "trim", lambda collect=True: None)


def test_an_upload_that_could_never_fit_is_refused_before_parsing(monkeypatch, fresh_gate):
    """The server at rest cannot give what reading it needs: refused at once, one line."""
    monkeypatch.setenv("RANKLAB_SERVER_MB", "100000")
    at = AppTest.from_function(_upload_script, default_timeout=TIMEOUT)
    at.session_state["tight"] = True
    at.run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    line = errors[0]
    assert "huge.txt" in line and "reading it needs about" in line and "at most" in line, line
    assert "ranklab evaluate" in line and "\n" not in line  # what to do, in one line
    # what was loaded stays; the refused run never became one
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}


def test_an_upload_the_server_has_no_memory_for_now_is_refused_with_try_again(
    monkeypatch, fresh_gate
):
    """It would fit an idle server, but the memory is held now (data at rest) and nothing is
    in flight to give any back: refused, one line, "try again"."""
    monkeypatch.setenv("RANKLAB_SERVER_MB", "100000")
    budget._gate.floor = 0  # the server was once idle at 0 MB: anything up to its budget fits
    at = AppTest.from_function(_upload_script, default_timeout=TIMEOUT)
    at.session_state["tight"] = True
    at.run()
    assert not at.exception, at.exception
    assert any("the server has" in e.value and "Try again" in e.value for e in at.error), [
        e.value for e in at.error
    ]
    assert "huge" not in at.session_state["ranklab.runs"]


def test_an_upload_that_fits_loads_whatever_the_visitor_already_holds(monkeypatch):
    """No fixed share: the 64 MB share that refused a 1 M-line run on an idle server is gone."""
    monkeypatch.setenv("RANKLAB_VISITOR_MB", "1")  # the old setting: ignored
    at = AppTest.from_function(_upload_script, default_timeout=TIMEOUT)
    at.session_state["lines"] = 20_000
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "huge" in at.session_state["ranklab.runs"]


def test_the_data_page_says_where_the_data_is_kept(sample):
    qrels, runs, meta = sample
    at = AppTest.from_file(str(ROOT / "pages" / "data.py"), default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert not at.exception
    lines = [c.value for c in at.caption if "this server's" in c.value]
    assert len(lines) == 1 and "Your data takes" in lines[0], lines
    assert any(c.value.startswith("Loaded: bm25 (") for c in at.caption), [
        c.value for c in at.caption
    ]


@pytest.mark.parametrize("lang, words", [("es", "Tus datos ocupan")])
def test_the_cost_line_is_translated(sample, lang, words):
    qrels, runs, meta = sample
    at = AppTest.from_file(str(ROOT / "pages" / "data.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert any(words in c.value for c in at.caption), [c.value for c in at.caption]


def test_an_evaluation_the_server_cannot_hold_is_refused_with_one_line(
    sample, monkeypatch, fresh_gate
):
    """The evaluation reserves its temporaries too: with no memory to give, the Overview says
    so in one line (what to do included) instead of evaluating."""
    qrels, runs, meta = sample
    # under what the process holds already: no evaluation fits, however small
    monkeypatch.setenv("RANKLAB_SERVER_MB", str(budget.process_anon() // MB - 1))
    at = AppTest.from_file(str(ROOT / "pages" / "overview.py"), default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert (
        len(errors) == 1
        and "evaluating bm25 needs about" in errors[0]
        and "ranklab evaluate" in errors[0]
    ), errors


#: The server's anonymous memory at rest with every page's libraries loaded (measured on
#: ``streamlit run app.py`` after visiting every page: BENCHMARKS.md, hosting), rounded up.
IDLE_SERVER_MB = 300
#: Bytes a line of a researcher's TREC run takes (the issue's 1,000,000-line run: 34 MB).
RUN_LINE_BYTES = 34


def test_the_upload_limit_the_box_states_is_the_limit_that_applies():
    """The upload box said "40MB per file" while a 34 MB run was refused by a 64 MB share:
    the limit a visitor meets first must be the one that applies. The box states
    ``server.maxUploadSize``; a TREC run of that size must be accepted by an idle server of the
    default budget (inside a 1 GB cgroup), so the box's limit, not the gate, is the one a run
    meets; and a 5,000,000-line run (about 170 MB) must be under it."""
    import streamlit as st
    import tomllib

    from ui.common.uploader_words import limit_line, size_words, upload_limit_mb

    with open(ROOT / ".streamlit" / "config.toml", "rb") as fh:
        configured = tomllib.load(fh)["server"]["maxUploadSize"]
    assert upload_limit_mb() == configured == st.get_option("server.maxUploadSize")
    assert 5_000_000 * RUN_LINE_BYTES <= configured * MB  # the target run fits the box
    # what reading the largest run the box takes needs, beside its own bytes, on an idle
    # server whose budget is the 1 GB cgroup's share
    largest = configured * MB
    lines = largest // RUN_LINE_BYTES
    need = budget.STREAM_PARSE_FIXED + lines * budget.STREAM_PARSE_BYTES_PER_ROW
    idle_budget = min(budget.DEFAULT_SERVER_MB * MB, int(1024 * 2**20 * budget.CGROUP_SHARE))
    assert need + largest <= idle_budget - IDLE_SERVER_MB * MB
    # and its evaluation (in blocks of the most rows evaluated at once) fits too
    work = budget.WORK_FIXED + budget.WORK_ROWS_MAX * budget.WORK_BYTES_PER_ROW
    assert work <= idle_budget - IDLE_SERVER_MB * MB
    # the box says the limit in both languages
    assert limit_line(gettext=lambda t: t) == f"Up to {size_words(configured)} per file"


def _lying_gzip_page():
    import gzip

    import streamlit as st

    from ui.common import state
    from ui.common.frame import page_setup
    from ui.ranking.upload import handle_upload

    class Upload:
        def __init__(self, data: bytes, name: str):
            self._data, self.name, self.size, self.file_id = data, name, len(data), name

        def getvalue(self) -> bytes:
            return self._data

    page_setup()
    text = b"q1 Q0 doc 1 1.0 x\n" * 2_000_000  # 36 MB of text ...
    data = bytearray(gzip.compress(text, compresslevel=1))
    data[-4:] = (100_000).to_bytes(4, "little")  # ... whose trailer says 100 kB
    handle_upload("run", Upload(bytes(data), "liar.txt.gz"), "auto")
    st.write("runs: " + ",".join(st.session_state[state.RUNS]))


def test_the_readers_decode_no_more_than_the_gate_reserved(monkeypatch):
    """The gate reserves from the text an upload states (a gzip trailer); the readers get that
    as their input limit, so a file decoding to more is refused by its reader, one line,
    before it takes memory nobody reserved."""
    monkeypatch.setenv("RANKLAB_SERVER_MB", "100000")
    at = AppTest.from_function(_lying_gzip_page, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "liar.txt.gz" in errors[0] and "limit" in errors[0], errors
    assert "\n" not in errors[0]
    assert not at.session_state["ranklab.runs"]


def test_the_unjudged_bands_bpref_search_stays_within_the_work_the_gate_reserves():
    """The Overview's unjudged band is built inside a reservation of the ranking pages' work
    (:func:`ui.common.budget.work_need`: a fixed part and so much a run row). Its bpref search
    over (candidate count, relevant document) pairs held 4 M pairs at once: 166 MB of
    temporaries for a run of 100,000 lines, 559 MB for 1,000,000, past what was reserved.
    Here: 100,000 lines, 7 M pairs; the peak of what numpy allocates stays within the need."""
    import tracemalloc

    import metrics_core as mc

    rng = np.random.default_rng(3)
    queries, docs = 200, 500
    q = np.repeat([f"q{i}" for i in range(queries)], docs)
    d = np.tile([f"d{j}" for j in range(docs)], queries)
    judged = rng.random(q.size) < 0.5  # half judged (a third of those relevant), half not
    qrels = pd.DataFrame(
        {"query_id": q[judged], "doc_id": d[judged], "relevance": rng.integers(0, 3, judged.sum())}
    )
    run = pd.DataFrame({"query_id": q, "doc_id": d, "score": rng.random(q.size)})
    ranking = mc.rank(qrels, run)
    need = budget.WORK_FIXED + len(run) * budget.WORK_BYTES_PER_ROW
    tracemalloc.start()
    try:
        lo, hi = ranking.unjudged_bounds(["Bpref"])["Bpref"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= need, (peak, need)
    assert np.all(lo <= hi) and np.any(lo < hi)  # a band was searched, not skipped


def test_the_coverage_check_of_a_run_of_millions_of_lines_fits_a_1_gib_server():
    """The coverage check joins the run block by block, and reserves one block's join: a
    5,000,000-line run beside 100,000 judgements needs what a block of the run does, well
    within what a 1 GiB server gives one computation (reserved for every row, 840 MB, it
    was refused at once)."""
    from metrics_core.io.coverage import BLOCK_ROWS
    from ui.ranking.data import coverage_need

    assert coverage_need(5_000_000, 100_000) == coverage_need(BLOCK_ROWS, 100_000)
    assert coverage_need(100_000, 100_000) < coverage_need(BLOCK_ROWS, 100_000)
    at_rest = 200 * budget.MB  # the server's anonymous memory at rest (BENCHMARKS: 174-187 MB)
    one_gib_capacity = int(1024 * budget.MB * budget.CGROUP_SHARE) - at_rest
    assert coverage_need(5_000_000, 100_000) < one_gib_capacity / 2
