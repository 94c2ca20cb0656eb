"""Streaming evaluation (``evaluate(..., block_rows=N)``) against the whole-run path.

Every comparison is exact: per-query values equal as floats, aggregates equal bit for
bit, diagnostics equal (plus ``noncontiguous_queries`` where a query's rows reappear in
a later block). Block sizes are chosen so that block boundaries fall inside queries and a
query is larger than a block.
"""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core.errors import InputError
from metrics_core.io import NotStreamable, open_run_stream
from metrics_core.scale.read_ahead import ReadAhead, query_blocks
from tests.conftest import SKIP_NO_CONFORMANCE, conformance_available, conformance_dir

# random runs often share no query or no judged document with their qrels: the readers'
# coverage warning is expected here (tests/io/test_coverage.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

ROOT = Path(__file__).resolve().parents[2]
CONF = conformance_dir()
SAMPLE = ROOT / "sample_data" / "ranking"
MEASURES = [
    "P@5",
    "P@10",
    "R@100",
    "RR",
    "AP",
    "nDCG@10",
    "nDCG",
    "Rprec",
    "Bpref",
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "GMAP",
    "AP@10",
    "Success@5",
    "P@1000",
]


def _bits(x: float) -> str:
    return "nan" if math.isnan(x) else float(x).hex()


def assert_same(whole, streamed, noncontiguous: int | None = None):
    """Per-query values, aggregates (bit for bit) and diagnostics all equal."""
    pd.testing.assert_frame_equal(whole.per_query, streamed.per_query, check_exact=True)
    assert {k: _bits(v) for k, v in whole.aggregate.items()} == {
        k: _bits(v) for k, v in streamed.aggregate.items()
    }
    d = dict(streamed.diagnostics)
    got = d.pop("noncontiguous_queries", None)
    assert d == whole.diagnostics
    if noncontiguous is not None:
        assert got == noncontiguous
    assert streamed.run_name == whole.run_name


def both(qrels, run, block_rows, measures=MEASURES, **conv):
    whole = mc.evaluate(qrels, run, measures, block_rows=0, **conv)
    streamed = mc.evaluate(qrels, run, measures, block_rows=block_rows, **conv)
    assert hasattr(streamed, "streaming"), "the run was not streamed"
    return whole, streamed


needs_conformance = pytest.mark.skipif(not conformance_available(), reason=SKIP_NO_CONFORMANCE)


@needs_conformance
@pytest.mark.parametrize("block_rows", [1, 7, 100, 499, 500, 501, 10**6])
@pytest.mark.parametrize(
    "conv",
    [
        {},
        {"missing_queries": "zero"},
        {"depth": 50},
        {"missing_queries": "zero", "depth": 100, "ties": "input"},
    ],
)
def test_conformance_files_identical(block_rows, conv):
    whole, streamed = both(CONF / "qrels.test", CONF / "results.test", block_rows, **conv)
    assert_same(whole, streamed, noncontiguous=None)
    if block_rows < 500:  # 3 queries of 500 rows: boundaries inside queries
        assert streamed.streaming["blocks"] == 3


@needs_conformance
@pytest.mark.parametrize(
    "qrels,run,conv",
    [
        ("qrels.test", "results.trunc", {"missing_queries": "zero"}),
        ("qrels.test", "results.trunc", {"missing_queries": "zero", "depth": 100}),
        ("qrels.comment.test", "results.comment.test", {}),
        ("qrels.test.with-comments", "results.test", {}),
        ("qrels.rel_level", "results.test", {"relevance_threshold": 2}),
    ],
)
def test_other_conformance_files_identical(qrels, run, conv):
    for block_rows in (13, 1000):
        whole, streamed = both(CONF / qrels, CONF / run, block_rows, **conv)
        assert_same(whole, streamed)


@pytest.mark.parametrize("name", ["bm25", "dense", "hybrid"])
def test_sample_runs_identical(name):
    for block_rows in (1, 97, 5000):
        whole, streamed = both(
            SAMPLE / "qrels.txt", SAMPLE / f"{name}.txt", block_rows, missing_queries="zero"
        )
        assert_same(whole, streamed, noncontiguous=None)


def _shuffled_chunks(text: str, size: int, seed: int) -> str:
    lines = text.splitlines()
    chunks = [lines[i : i + size] for i in range(0, len(lines), size)]
    random.Random(seed).shuffle(chunks)
    return "\n".join(line for c in chunks for line in c) + "\n"


@needs_conformance
@pytest.mark.parametrize("block_rows", [1, 50, 300])
@pytest.mark.parametrize("conv", [{}, {"missing_queries": "zero"}, {"ties": "input", "depth": 20}])
def test_noncontiguous_queries_exact_and_reported(block_rows, conv):
    text = _shuffled_chunks((CONF / "results.test").read_text(), 37, seed=1)
    run = text.encode()
    whole, streamed = both(CONF / "qrels.test", run, block_rows, **conv)
    assert_same(whole, streamed, noncontiguous=3)
    assert streamed.streaming["noncontiguous_queries"] == 3
    assert streamed.streaming["spilled_rows"] == 1500


def test_noncontiguous_unjudged_query_reported_not_spilled():
    qrels = b"q1 0 a 1\nq1 0 b 1\n"
    run = b"q1 Q0 a 1 2 t\nzz Q0 a 1 1 t\nq1 Q0 b 2 1 t\nzz Q0 c 1 3 t\n"
    whole, streamed = both(qrels, run, 1, ["P@1", "AP"])
    assert_same(whole, streamed, noncontiguous=2)
    assert streamed.streaming["spilled_rows"] == 2  # only the judged query's rows


def test_query_larger_than_block_and_boundaries_inside_queries():
    rng = np.random.default_rng(5)
    rows = []
    for q, n in (("a", 40), ("b", 3), ("c", 25), ("d", 1)):
        for i in range(n):
            rows.append(f"{q} Q0 d{i} {i} {rng.integers(0, 5) / 2} t")
    run = ("\n".join(rows) + "\n").encode()
    qrels = "".join(f"{q} 0 d{i} {i % 3}\n" for q in "abcd" for i in range(0, 40, 3)).encode()
    for block_rows in (1, 2, 10, 30, 41):
        whole, streamed = both(qrels, run, block_rows, ["P@5", "AP", "nDCG@10", "NumRet"])
        assert_same(whole, streamed, noncontiguous=None)
        assert "noncontiguous_queries" not in streamed.diagnostics


def test_blocks_hold_whole_queries():
    stream = open_run_stream(
        CONF / "results.test" if (CONF / "results.test").exists() else SAMPLE / "bm25.txt",
        batch_rows=7,
    )
    seen = set()
    total = 0
    for table in query_blocks(stream.batches(), 100):
        names = set(table.column("qid").to_pylist())
        assert not names & seen  # a query never straddles two blocks
        seen |= names
        total += table.num_rows
    assert total == len(mc.read_run(stream.source))


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet"])
def test_table_formats_identical(tmp_path, fmt):
    frame = mc.read_run(SAMPLE / "hybrid.txt").to_frame()
    frame = frame.iloc[np.random.default_rng(0).permutation(len(frame))[:1500]]  # non-contiguous
    path = tmp_path / f"run.{fmt}"
    if fmt == "parquet":
        frame.to_parquet(path, row_group_size=100)
    else:
        frame.to_csv(path, sep="\t" if fmt == "tsv" else ",", index=False)
    for block_rows in (64, 10**6):
        whole, streamed = both(SAMPLE / "qrels.txt", path, block_rows, missing_queries="zero")
        assert_same(whole, streamed)


def test_duplicates_conventions_identical():
    run = (
        b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 a 3 1 t\nq2 Q0 x 1 1 t\nq2 Q0 y 2 1 t\n"
        b"q2 Q0 x 3 5 t\nq1 Q0 b 4 9 t\n"
    )
    qrels = b"q1 0 a 1\nq1 0 b 0\nq2 0 x 1\nq2 0 y 2\n"
    for dup in ("count", "first", "last", "max"):
        for block_rows in (1, 2, 3, 100):
            whole, streamed = both(
                qrels, run, block_rows, ["P@1", "AP", "NumRet", "nDCG"], duplicates=dup
            )
            assert_same(whole, streamed)
            assert streamed.diagnostics["duplicates"] == whole.diagnostics["duplicates"] > 0


def test_duplicate_error_names_lines():
    run = b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 1 t\nq2 Q0 c 2 0 t\n"
    with pytest.raises(InputError, match=r"duplicate document in the run .*'c'.*lines 3 and 4"):
        mc.evaluate(b"q1 0 a 1\nq2 0 c 1\n", run, ["P@1"], block_rows=2)


def test_bad_line_in_stream_named():
    good = "".join(f"q{i // 10} Q0 d{i} {i} {i}.5 t\n" for i in range(300))
    run = (good + "q99 Q0 dx 1 abc t\n").encode()
    with pytest.raises(InputError, match=r"line 301: score 'abc' is not a number"):
        mc.evaluate(b"q1 0 d10 1\n", run, ["P@1"], block_rows=16)


def test_irregular_file_streams_from_where_it_stops_being_regular():
    regular = "".join(f"q{i // 10}\tQ0\td{i}\t{i}\t{i % 4}\tt\n" for i in range(200))
    tail = "# a comment\n\nq3 Q0 d999 1 2 t\nq30 Q0 d5 1 1 t\n"
    run = (regular + tail).encode()
    qrels = (
        "".join(f"q{i // 10} 0 d{i} {i % 3}\n" for i in range(0, 200, 3)).encode() + b"q30 0 d5 1\n"
    )
    whole, streamed = both(qrels, run, 8, ["P@5", "AP", "NumRet"], ties="input")
    assert_same(whole, streamed, noncontiguous=1)


def test_not_streamable_sources_read_whole():
    with pytest.raises(NotStreamable):
        open_run_stream({"q1": {"a": 1.0}})
    ev = mc.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 0.5}}, ["P@1"], block_rows=1)
    assert ev.aggregate["P@1"] == 1.0 and not hasattr(ev, "streaming")


# --- random runs --------------------------------------------------------------------

QIDS = st.sampled_from(["q1", "q2", "q10", "3", "é"])
DOCS = st.text(alphabet="ab9A_#-.é", min_size=1, max_size=3)


@st.composite
def run_and_qrels(draw):
    rows = draw(st.lists(st.tuples(QIDS, DOCS, st.integers(0, 8)), min_size=1, max_size=80))
    judged = draw(
        st.lists(
            st.tuples(QIDS, DOCS, st.sampled_from([-1, 0, 1, 1, 2, 3])), min_size=1, max_size=40
        )
    )
    judged = list({(q, d): (q, d, r) for q, d, r in judged}.values())
    if draw(st.booleans()):  # grouped by query, as most runs are written
        rows = sorted(rows, key=lambda r: r[0])
    run = "".join(f"{q} Q0 {d} 1 {s / 4} t\n" for q, d, s in rows).encode()
    qrels = "".join(f"{q} 0 {d} {r}\n" for q, d, r in judged).encode()
    return run, qrels


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=run_and_qrels(),
    block_rows=st.integers(1, 30),
    conv=st.sampled_from(
        [
            {"duplicates": "first"},
            {"duplicates": "count", "ties": "input"},
            {"duplicates": "max", "missing_queries": "zero"},
            {"duplicates": "last", "depth": 3, "ties": "docid_asc"},
        ]
    ),
)
def test_random_runs_with_ties_identical(data, block_rows, conv):
    run, qrels = data
    whole, streamed = both(
        qrels,
        run,
        block_rows,
        ["P@3", "AP", "RR", "nDCG@5", "NumRet", "Bpref", "GMAP", "Rprec"],
        **conv,
    )
    assert_same(whole, streamed)


def test_automatic_threshold(monkeypatch, tmp_path):
    import metrics_core.scale.streaming as streaming

    path = tmp_path / "run.txt"
    path.write_bytes((SAMPLE / "bm25.txt").read_bytes())
    small = mc.evaluate(SAMPLE / "qrels.txt", str(path), ["AP"])
    assert not hasattr(small, "streaming")
    monkeypatch.setattr(streaming, "STREAM_THRESHOLD_BYTES", 1000)
    big = mc.evaluate(SAMPLE / "qrels.txt", str(path), ["AP"])
    assert big.streaming["blocks"] == 1
    assert _bits(big.aggregate["AP"]) == _bits(small.aggregate["AP"])


def test_cli_block_rows(capsys):
    from metrics_core.cli import main

    args = [
        "evaluate",
        "--qrels",
        str(SAMPLE / "qrels.txt"),
        "--run",
        str(SAMPLE / "dense.txt"),
        "-m",
        "AP,nDCG@10",
        "--format",
        "json",
        "--per-query",
        "--quiet",
    ]
    assert main(args) == 0
    whole = capsys.readouterr().out
    assert main(args + ["--block-rows", "50"]) == 0
    assert capsys.readouterr().out == whole


def test_stream_from_file_object():
    data = (SAMPLE / "bm25.txt").read_bytes()
    whole = mc.evaluate(SAMPLE / "qrels.txt", io.BytesIO(data), ["AP", "P@10"], block_rows=0)
    streamed = mc.evaluate(SAMPLE / "qrels.txt", io.BytesIO(data), ["AP", "P@10"], block_rows=33)
    assert_same(whole, streamed)


@pytest.mark.parametrize("block_rows", [1, 50, 10**6])
def test_run_in_memory_streamed(block_rows):
    frame = mc.read_run(SAMPLE / "dense.txt").to_frame()
    frame = frame.iloc[np.random.default_rng(1).permutation(len(frame))]  # non-contiguous
    run = mc.read_run(frame, name="dense")
    whole, streamed = both(SAMPLE / "qrels.txt", run, block_rows, missing_queries="zero")
    assert_same(whole, streamed)
    parsed = mc.read_run(SAMPLE / "bm25.txt")
    whole, streamed = both(SAMPLE / "qrels.txt", parsed, block_rows)
    assert_same(whole, streamed, noncontiguous=None)


def test_app_streams_big_runs(monkeypatch):
    st = pytest.importorskip("streamlit")
    import ui.ranking.data as rd
    from ui.common import state

    qrels, runs, _ = rd.load_sample()
    monkeypatch.setattr(st, "session_state", {state.QRELS: qrels, state.RUNS: runs})
    monkeypatch.setattr(rd, "STREAM_ROWS", 100)
    evs = rd.evaluate_loaded(["AP", "nDCG@10"])
    from ui.ranking.data import query_ranking

    for name, run in runs.items():
        assert evs[name].streaming["blocks"] > 1
        whole = mc.evaluate(qrels, run, ["AP", "nDCG@10"])
        assert_same(whole, evs[name])
        for qid in whole.ranking.query_ids[:3] + whole.ranking.query_ids[-2:]:
            pd.testing.assert_frame_equal(
                query_ranking(evs[name], run, qrels, qid).ranking(qid),
                query_ranking(whole, run, qrels, qid).ranking(qid),
            )


def test_bench_split_parts_cuts_at_line_ends(tmp_path):
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import bench_streaming

    src = SAMPLE / "hybrid.txt"
    folder = bench_streaming.split_parts(src, tmp_path / "parts", 5)
    parts = sorted(folder.iterdir())
    assert len(parts) == 5
    assert b"".join(p.read_bytes() for p in parts) == src.read_bytes()
    assert all(p.read_bytes().endswith(b"\n") for p in parts if p.stat().st_size)
    out = tmp_path / "trec.txt"
    out.write_text("P_5                   \tall\t0.5\nmap\t301\t0.25\nmap\tall\t0.125\n")
    assert bench_streaming.trec_values(out) == {"P_5": 0.5, "map": 0.125}


@pytest.mark.parametrize(
    "conv", [{}, {"depth": 7, "duplicates": "first"}, {"missing_queries": "zero"}]
)
def test_run_in_memory_streamed_equals_the_whole_run(conv):
    """A Run streamed in memory (duplicates, non-contiguous queries) gives the whole run's
    numbers. (It keeps no ranked lists: the per-query page ranks one query's rows alone.)"""
    lines = (SAMPLE / "hybrid.txt").read_text().splitlines(True)
    lines = lines[:500] + lines[:3] + lines[900:1300] + lines[500:900]  # duplicates, non-contiguous
    run = mc.read_run("".join(lines).encode(), name="hybrid")
    whole, streamed = both(SAMPLE / "qrels.txt", run, 64, ["AP"], **{"duplicates": "first", **conv})
    assert_same(whole, streamed)
    assert streamed.ranking is None and whole.ranking is not None


def test_streamed_summaries_follow_trec_eval9_compat_like_the_whole_run():
    # under compat=trec_eval9 with -c, the summed NumRel counts every positive judgement
    # (trec_eval's rule), whatever the threshold; the streamed summary must do the same
    qrels = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d4 2\nq3 0 d5 1\n"
    run = "q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\nq2 Q0 d9 1 1.0 s\n"
    conv = dict(compat="trec_eval9", missing_queries="zero", relevance_threshold=2)
    names = ["NumRel", "AP", "GMAP", "P@1"]
    whole = mc.evaluate(qrels.encode(), run.encode(), names, block_rows=0, **conv)
    streamed = mc.evaluate(qrels.encode(), run.encode(), names, block_rows=2, **conv)
    assert streamed.aggregate == whole.aggregate


def test_read_ahead_keeps_order_raises_in_place_and_stops_when_closed():
    import threading
    import time

    assert list(ReadAhead(iter(range(50)), depth=2)) == list(range(50))

    def failing():
        yield 1
        yield 2
        raise InputError("bad line", source="run", line=3)

    got = []
    with pytest.raises(InputError, match="bad line"):
        for item in ReadAhead(failing()):
            got.append(item)
    assert got == [1, 2]  # the error comes where its item would have

    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    def read_ahead_threads():
        return [t for t in threading.enumerate() if t.name == "ranklab-read-ahead"]

    with ReadAhead(endless(), depth=1) as items:
        assert next(items) == 0
        assert read_ahead_threads()
    # leaving the block (the consumer stops early, or fails) ends the producer
    assert not read_ahead_threads()
    n = len(produced)
    time.sleep(0.2)
    assert len(produced) == n
    # a producer that is never consumed is stopped by close() as well
    idle = ReadAhead(endless())
    time.sleep(0.05)
    idle.close()
    assert not read_ahead_threads()


@pytest.mark.parametrize("bad_row", [1, 5, 6, 17, 23])
def test_a_bad_parquet_row_is_named_by_its_row_in_the_file(tmp_path, bad_row):
    """Read in batches of 5 rows, a Parquet file names a bad value by its row in the file,
    as the whole-file reader does (not by its row within the batch)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 23
    scores = [str(0.5 + i) for i in range(n)]
    scores[bad_row - 1] = "oops"
    table = pa.table(
        {
            "query_id": [f"q{i // 4}" for i in range(n)],
            "doc_id": [f"d{i}" for i in range(n)],
            "score": scores,
        }
    )
    path = tmp_path / "run.parquet"
    pq.write_table(table, path, row_group_size=7)
    with pytest.raises(mc.InputError) as whole:
        mc.read_run(str(path))
    with pytest.raises(mc.InputError) as streamed:
        list(open_run_stream(str(path), batch_rows=5).batches())
    assert f"row {bad_row}:" in str(whole.value)
    assert str(streamed.value) == str(whole.value)
