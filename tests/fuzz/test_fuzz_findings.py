"""Every input the fuzzers found that broke a reader, as a test: a clear InputError (or a
sound result), never a traceback, a hang or a silent misread."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics_core as mc
from metrics_core.errors import InputError
from metrics_core.io import NotStreamable, open_run_stream
from metrics_core.io.codes import read_matrix
from tests.fuzz.targets import TARGETS, seeds


def test_an_empty_doc_id_between_two_tabs_is_named_not_read():
    """``2<TAB>0<TAB><TAB>51``: the tab-separated fast path read an empty document id
    (and relevance 51); the line has 3 fields."""
    with pytest.raises(InputError) as caught:
        mc.read_qrels(b"1\t0\t12\t1\n2\t0\t\t51\n", name="qrels.tsv")
    assert caught.value.line == 2 and "expected 4 columns, found 3" in str(caught.value)


def test_an_empty_pid_in_an_msmarco_run_is_named_not_read():
    with pytest.raises(InputError) as caught:
        mc.read_run(b"2\t\t01211\n", fmt="msmarco")
    assert caught.value.line == 1 and "expected 3 columns, found 2" in str(caught.value)


def test_an_empty_doc_id_in_a_streamed_trec_run_defers_to_the_whole_reader():
    data = (
        b"".join(b"q1\tQ0\td%d\t%d\t%d.0\tx\n" % (i, i, 100 - i) for i in range(20))
        + b"q2\tQ0\t\t1\t1.0\tx\n"
    )
    with pytest.raises(NotStreamable):
        list(open_run_stream(data, batch_rows=4).batches())
    with pytest.raises(InputError) as caught:
        mc.read_run(data)
    assert caught.value.line == 21


def test_parquet_with_damaged_pandas_metadata_is_read_by_its_columns():
    """The streamed reader read such a file, the whole-file one refused it."""
    table = pa.table({"q_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata({b"pandas": b"{not json"}), buf)
    run = mc.read_run(buf.getvalue(), name="r")
    assert run.doc_ids.tolist() == ["d1", "d2"] and run.scores.tolist() == [1.0, 2.0]
    streamed = list(open_run_stream(buf.getvalue()).batches())
    assert sum(b.num_rows for b in streamed) == 2


def test_npy_header_that_does_not_tokenize_is_an_input_error():
    data = (
        b"\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }"
        b"                         (                                \n\x00\x01\x01\x01\x00\x01"
    )
    with pytest.raises(InputError, match="not a readable .npy file"):
        read_matrix(data)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_seed_through_every_target(target):
    """The seed corpus replayed in-process (no instrumentation): every outcome allowed."""
    for data in seeds():
        TARGETS[target](data)
    for data in [b"", b"\n", b"\x00", b"\xff\xfe", b"#", b"PAR1", np.arange(3).tobytes()]:
        TARGETS[target](data)


def test_table_with_empty_doc_id_is_refused_everywhere():
    frame = pd.DataFrame({"query_id": ["q"], "doc_id": [" "], "score": [1.0]})
    with pytest.raises(InputError, match="empty document id"):
        mc.read_run(frame)


def test_parquet_text_that_is_not_utf8_is_an_input_error():
    """A Parquet string column holding invalid UTF-8 failed inside pandas (ArrowException)."""
    buf = io.BytesIO()
    pq.write_table(
        pa.table({"q_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}),
        buf,
        compression="none",
        write_statistics=False,
    )
    data = buf.getvalue().replace(b"d1", b"d\xc6", 1)
    for read in (mc.read_qrels, mc.read_run):
        with pytest.raises(InputError, match="Parquet"):
            read(data)
    with pytest.raises(InputError, match="Parquet"):
        list(open_run_stream(data).batches())


def test_a_quoted_line_the_whole_reader_refuses_is_not_streamed():
    """The streamed line reader read a line with a stray double quote that the whole-file
    reader refuses (and names): the two must agree."""
    data = b'q1\tQ0\td"M 1\t1\t2.5\tm x\tQ0\td1\t\td#2\t2\t1.5\tbm25\n'
    with pytest.raises(NotStreamable):
        list(open_run_stream(data).batches())
    with pytest.raises(InputError, match="double quote") as caught:
        mc.read_run(data)
    assert caught.value.line == 1


def test_a_json_null_beside_an_empty_score_is_an_input_error():
    """Found through the records' fuzzing: a None beside text in a value column failed
    inside the number check (pandas 3's text dtype keeps None missing)."""
    data = b'[{"query_id": "q", "doc_id": "d", "score": null}, {"query_id": "q", "doc_id": "e", "score": ""}]'
    with pytest.raises(InputError, match="not a number"):
        mc.read_run(io.BytesIO(data))
    with pytest.raises(InputError, match="not a number"):
        mc.read_run([("q", "d", None), ("q", "e", "")])


@pytest.mark.parametrize(
    "data, kind",
    [
        (b"q  \x0b\x0b\x0b\x0b\x0b  .5 ", "run"),  # vertical tabs read as a document id
        (b"q1 Q0 d1 1 2.5 x\nq1 Q0 d\t2 2 1.5 x\n", "run"),  # a tab inside a space-separated file
        (b"\x0c\t0\t1\t-0", "qrels"),  # a form feed read as a query id
    ],
)
def test_fast_and_line_readers_split_fields_alike(data, kind):
    """The delimiter-split fast path read fields the line reader splits (found by the long
    fuzz run): every reader now splits on ASCII white space, as trec_eval does."""
    read = mc.read_run if kind == "run" else mc.read_qrels
    try:
        got = read(data)
    except InputError as exc:
        assert "column" in str(exc)
        return
    for ids in (got.query_ids, got.doc_ids):
        assert all(x and not any(c in x for c in " \t\n\r\x0b\x0c") for x in ids), ids


def test_ids_with_other_control_characters_are_ids_as_in_trec_eval():
    """U+001C and a no-break space are not white space to trec_eval's C reader: part of the id,
    whichever path reads the file."""
    slow = mc.read_run(b"\x1c\t57\t1\n# c\n", fmt="msmarco")
    fast = mc.read_run(b"\x1c\t57\t1\n", fmt="msmarco")
    assert slow.query_ids.tolist() == fast.query_ids.tolist() == ["\x1c"]
    nbsp = mc.read_run("q1 Q0 d\u00a01 1 2.5 x\n# comment\n".encode())
    assert nbsp.doc_ids.tolist() == ["d\u00a01"]


def test_csv_rows_longer_than_the_header_are_not_streamed():
    """The chunked table reader read rows the whole-file reader refuses (found by the long
    fuzz run): it now defers to the whole-file reader, which names the line."""
    data = b"qid,docno,score\nq1,d1,1.0,5\n"
    with pytest.raises(NotStreamable):
        list(open_run_stream(io.BytesIO(data)).batches())
    with pytest.raises(InputError, match="more fields than the header") as caught:
        mc.read_run(io.BytesIO(data))
    assert caught.value.line == 2


@pytest.mark.parametrize(
    "data",
    [
        b"\x11\t\t\x01\t\t65\t\n",  # empty Q0, rank and tag: 3 fields, an MS MARCO line
        b"q1\tQ0\td1\t1\t2.5\tx\nq1\t\td2\t2\t1.5\tx\n",  # an empty Q0 field
        b"q1\tQ0\td1\t1\t2.5\t\n",  # an empty tag
    ],
)
def test_empty_fields_read_alike_whole_and_streamed(data):
    """Empty fields between tabs: the fast paths read 6 fields where the line reader (and
    trec_eval) sees fewer (found by the long fuzz run: the streamed reader scored a line
    the whole-file reader read as an MS MARCO line)."""
    TARGETS["stream_run"](data)
    try:
        whole = mc.read_run(data)
    except InputError as exc:
        assert "column" in str(exc)
        return
    assert whole.scores.tolist() == [-65.0]  # the MS MARCO reading: 3 fields, rank 65


def test_parquet_schema_text_that_is_not_utf8_is_an_input_error():
    """A column name that is not UTF-8 raised UnicodeDecodeError in the streamed Parquet
    reader (found by the long fuzz run)."""
    buf = io.BytesIO()
    pq.write_table(
        pa.table({"q_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}),
        buf,
        store_schema=False,
    )
    data = buf.getvalue().replace(b"doc_id", b"do\x9f_id")
    for read in (mc.read_run, lambda d: list(open_run_stream(d).batches())):
        with pytest.raises(InputError, match="Parquet"):
            read(data)


def test_parquet_whose_pandas_metadata_renames_a_column_is_read_by_its_columns():
    """A 30-minute fuzzing run found it: pandas metadata naming a column ``doc_ie`` beside an
    Arrow schema naming it ``doc_id``; the streamed reader read the schema's names, the
    whole-file reader the metadata's, and refused the file. Both read the table's own names."""
    import json

    frame = pd.DataFrame({"q_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    table = pa.Table.from_pandas(frame)
    meta = json.loads(table.schema.metadata[b"pandas"])
    for col in meta["columns"]:
        if col["name"] == "doc_id":
            col["name"] = "doc_ie"
    table = table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    data = buf.getvalue()
    run = mc.read_run(data, name="r.parquet")
    assert run.doc_ids.tolist() == ["d1", "d2"] and run.scores.tolist() == [1.0, 2.0]
    streamed = list(open_run_stream(data).batches())
    assert sum(b.num_rows for b in streamed) == 2
    TARGETS["stream_run"](data)  # the target's own check: stream and whole reader agree
