"""Readers: every input format gives the same run/qrels, and bad input names the problem."""

import gzip
import io
import json

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import InputError

RUN_TEXT = "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d3 1 0.5 sys\n"
ROWS = [("q1", "d1", 2.5), ("q1", "d2", 1.5), ("q2", "d3", 0.5)]


def rows_of(run):
    return list(zip(run.query_ids.tolist(), run.doc_ids.tolist(), run.scores.tolist(), strict=True))


@pytest.fixture
def frame():
    return pd.DataFrame(ROWS, columns=["qid", "docno", "score"])


def test_trec_run_from_path_bytes_and_filelike(tmp_path):
    path = tmp_path / "bm25.txt"
    path.write_text(RUN_TEXT)
    from_path = mc.read_run(path)
    assert from_path.name == "bm25"
    assert rows_of(from_path) == ROWS
    assert rows_of(mc.read_run(RUN_TEXT.encode())) == ROWS
    assert rows_of(mc.read_run(io.BytesIO(RUN_TEXT.encode()))) == ROWS


def test_trec_run_tabs_extra_columns_comments_and_blank_lines():
    text = (
        "# a comment\nq1\tQ0\td1\t1\t2.5\tsys\textra\n\nq1  Q0   d2 2 1.5 sys\nq2 Q0 d3 1 0.5 sys\n"
    )
    run = mc.read_run(text.encode())
    assert rows_of(run) == ROWS
    assert run.line_of(0) == 2 and run.line_of(1) == 4


def test_hash_in_doc_ids_is_data_not_comment():
    run = mc.read_run(b"q1 Q0 doc#1 1 2.0 sys\nq1 Q0 #doc2 2 1.0 sys\n")
    assert run.doc_ids.tolist() == ["doc#1", "#doc2"]


def test_gzip_is_recognised_by_content(tmp_path):
    path = tmp_path / "run.bin"
    path.write_bytes(gzip.compress(RUN_TEXT.encode()))
    assert rows_of(mc.read_run(path)) == ROWS


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "json", "jsonl"])
def test_table_formats_with_column_detection(tmp_path, frame, fmt):
    path = tmp_path / f"run.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif fmt == "parquet":
        frame.to_parquet(path)
    elif fmt == "json":
        path.write_text(frame.to_json(orient="records"))
    else:
        path.write_text(frame.to_json(orient="records", lines=True))
    assert rows_of(mc.read_run(path)) == ROWS


def test_explicit_column_mapping(frame):
    odd = frame.rename(columns={"qid": "a", "docno": "b", "score": "c"})
    with pytest.raises(InputError, match="no query_id column"):
        mc.read_run(odd)
    run = mc.read_run(odd, columns={"query_id": "a", "doc_id": "b", "score": "c"})
    assert rows_of(run) == ROWS


def test_nested_dict_and_numeric_ids():
    run = mc.read_run({1: {10: 0.5, 11: 0.25}})
    assert run.query_ids.tolist() == ["1", "1"] and run.doc_ids.tolist() == ["10", "11"]
    q = mc.read_qrels(pd.DataFrame({"query_id": [1.0], "doc_id": [10], "relevance": [2]}))
    assert q.query_ids.tolist() == ["1"] and q.relevance.tolist() == [2.0]


def test_json_nested_file(tmp_path):
    path = tmp_path / "qrels.json"
    path.write_text(json.dumps({"q1": {"d1": 1, "d2": 0}}))
    q = mc.read_qrels(path)
    assert sorted(zip(q.doc_ids.tolist(), q.relevance.tolist(), strict=False)) == [
        ("d1", 1.0),
        ("d2", 0.0),
    ]


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"", "empty"),
        (b"q1 Q0 d1 1\n", "expected 6 columns, found 4"),
        (b"q1 Q0 d1 1 abc sys\n", "score 'abc' is not a number"),
        (b"q1 Q0 d1 1 nan sys\n", "not a finite number"),
        (b"q1 Q0 d1 1 1.0 sys\nq1 Q0 d2 2 inf sys\n", "not a finite number"),
        (b"\x00\x01\x02binary", "binary data"),
        (b"q1 Q0 d\xff 1 1.0 sys\n", "not UTF-8"),
        (gzip.compress(RUN_TEXT.encode(), mtime=0)[:-12], "gzip data is truncated"),
    ],
)
def test_bad_runs_name_the_problem_and_line(data, problem):
    with pytest.raises(InputError, match=problem) as err:
        mc.read_run(data, name="x")
    if b"\n" in data and problem not in ("empty", "gzip data is truncated"):
        assert "line" in str(err.value)


def test_nan_in_csv_score_names_the_line(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("qid,docid,score\nq1,d1,1.0\nq1,d2,oops\n")
    with pytest.raises(InputError, match=r"run.csv, line 3: score 'oops' is not a number"):
        mc.read_run(path)


def test_from_relevance_vectors_counts_unretrieved_relevant():
    run, qrels = mc.from_relevance_vectors({"q": [0, 0, 0, 1]}, num_relevant={"q": 4})
    assert len(run) == 4 and int((qrels.relevance > 0).sum()) == 4
    with pytest.raises(InputError, match="num_relevant"):
        mc.from_relevance_vectors({"q": [1, 1]}, num_relevant={"q": 1})


def test_large_regular_file_takes_the_fast_path_and_agrees_with_slow_path(tmp_path):
    rng = np.random.default_rng(3)
    n = 5000
    q = rng.integers(0, 50, n)
    lines = [f"q{q[i]} Q0 doc{i} {i} {rng.random():.6f} sys" for i in range(n)]
    fast = tmp_path / "fast.txt"
    fast.write_text("\n".join(lines) + "\n")
    slow = tmp_path / "slow.txt"  # a comment line forces the line-by-line reader
    slow.write_text("# header\n" + "\n".join(lines) + "\n")
    a, b = mc.read_run(fast), mc.read_run(slow)
    assert rows_of(a) == rows_of(b)
    assert a.line_of(10) == 11 and b.line_of(10) == 12


@pytest.mark.parametrize(
    "odd_line",
    [
        b"# Q0 d1 1 2.5 sys\n",  # a comment with as many fields as a data line
        b"#q7 Q0 d1 1 2.5 sys\n",  # a commented-out data line
        b"# q1 Q0 d1 1 2.5 sys\n",  # one field more
        b"#\n",  # a bare comment
        b"\n",  # a blank line
    ],
)
@pytest.mark.parametrize("as_path", [False, True])
def test_large_file_with_odd_line_mid_file_reads_like_the_line_reader(tmp_path, odd_line, as_path):
    """Big regular files take Arrow's reader; a comment or blank line in the middle must
    be skipped, not read as data, and line numbers must stay those of the file."""
    lines = [
        f"q{i // 50} Q0 d{i} {i % 50 + 1} {100 - i % 50}.5 sys\n".encode() for i in range(4000)
    ]
    data = b"".join(lines[:2500]) + odd_line + b"".join(lines[2500:])
    source = data
    if as_path:
        source = tmp_path / "big.run"
        source.write_bytes(data)
    run = mc.read_run(source)
    assert len(run) == 4000
    assert run.doc_ids.tolist()[2499:2501] == ["d2499", "d2500"]
    assert run.line_of(2499) == 2500 and run.line_of(2500) == 2502
    assert "#" not in run.query_ids.tolist()


def test_large_file_doc_ids_starting_with_hash_are_data():
    lines = [
        f"q{i // 50} Q0 #d{i} {i % 50 + 1} {100 - i % 50}.5 sys\n".encode() for i in range(4000)
    ]
    run = mc.read_run(b"".join(lines))
    assert run.doc_ids.tolist()[:2] == ["#d0", "#d1"] and len(run) == 4000


@pytest.mark.parametrize("string_type", ["string", "large_string"])
@pytest.mark.parametrize(
    "values, found",
    [
        (["q1", "q2"], False),
        (["q1", "#q2"], True),
        (["q1", ""], True),
        (["#"], True),
        ([], False),
        (["\u00e9#", "a#b"], False),
    ],
)
def test_stream_reader_spots_comment_and_blank_lines(values, found, string_type):
    """The streaming TREC reader hands a batch to the line reader when a query id is empty
    or starts with '#' (a blank or comment line); also on a slice of a larger array."""
    import pyarrow as pa

    from metrics_core.io.trec import comment_or_blank

    typ = getattr(pa, string_type)()
    assert comment_or_blank(pa.array(values, typ)) is found
    assert comment_or_blank(pa.array(["x", *values, "y"], typ).slice(1, len(values))) is found


def test_a_parsed_runs_scores_are_not_held_in_arrows_default_pool():
    """A parsed TREC run's scores are numpy's memory (the system allocator), not Arrow's C++
    default pool: ``ChunkedArray.to_numpy`` takes that pool (mimalloc or jemalloc in the wheels)
    whatever pool pyarrow is told to use, and a long-lived server kept its pages after the runs
    were freed (bench/load_test.py at 25 visitors: 40 MB; ``ui.common.budget.limit_arenas``)."""
    import pyarrow as pa

    pools = [
        getattr(pa, f"{name}_memory_pool")()
        for name in pa.supported_memory_backends()
        if name != "system"
    ]
    if not pools:
        pytest.skip("this pyarrow has no pool besides the system allocator")
    rng = np.random.default_rng(0)  # 6 MB: more than one of the CSV reader's 4 MB blocks
    text = "".join(
        f"q{i // 100:05d} Q0 clueweb12-{i:07d}-doc {i % 100 + 1} {s:.6f} a-run-tag\n"
        for i, s in enumerate(rng.random(100_000))
    ).encode()
    told = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())  # what the app tells pyarrow
    try:
        before = [p.bytes_allocated() for p in pools]
        run = mc.read_run(io.BytesIO(text), fmt="trec")
        grew = max(p.bytes_allocated() - b for p, b in zip(pools, before, strict=True))
    finally:
        pa.set_memory_pool(told)
    assert len(run) == 100_000
    assert grew < 100_000 * 8 // 2, f"{grew} bytes held in Arrow's default pool"
