"""The streamed TREC reader reads a file in pieces of whole lines (one reused buffer) and
checks each piece before parsing it: every row it hands out equals the whole-file
reader's, wherever the pieces are cut, and a file that stops being regular in a later
piece is read on by the line reader (same rows) or refused with the whole reader's error."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import metrics_core as mc
from metrics_core.errors import InputError
from metrics_core.io import open_run_stream, read_run, trec_pieces


def _rows_streamed(source):
    table = pa.concat_tables(list(open_run_stream(source, fmt="trec").batches()))
    return (
        table.column("qid").to_pylist(),
        table.column("docid").to_pylist(),
        table.column("score").to_numpy().tolist(),
        table.column("line").to_numpy().tolist(),
    )


def _rows_whole(source):
    run = read_run(source, fmt="trec")
    lines = [run.line_of(i) for i in range(len(run))]
    return run.query_ids.tolist(), run.doc_ids.tolist(), run.scores.tolist(), lines


def _regular(n: int, sep: str = " ", end: str = "\n") -> str:
    return "".join(
        f"q{i // 7}{sep}Q0{sep}d{i * 37 % 1000}{sep}{i % 7 + 1}{sep}{(i * 13) % 17 / 4}"
        f"{sep}run{i % 3}{end}"
        for i in range(n)
    )


def _both(tmp_path, text: str):
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    return [str(path), text.encode()]


@pytest.mark.parametrize("piece", [23, 64, 100, 1 << 20])
@pytest.mark.parametrize("variant", ["spaces", "tabs", "crlf", "no final newline"])
def test_pieces_give_the_whole_readers_rows(tmp_path, monkeypatch, piece, variant):
    monkeypatch.setattr(trec_pieces, "PIECE_BYTES", piece)
    text = {
        "spaces": _regular(300),
        "tabs": _regular(300, "\t"),
        "crlf": _regular(300, end="\r\n"),
        "no final newline": _regular(300).rstrip("\n"),
    }[variant]
    for source in _both(tmp_path, text):
        assert _rows_streamed(source) == _rows_whole(source)


@pytest.mark.parametrize(
    "bad",
    [
        "q9\tQ0 d1 1 2 run\n",
        "q9 Q0 d1\x0b1 2 run\n",
        "# a comment\n",
        "\n",
        "q9 Q0 d1 1 2 run extra\n",
        "q9 Q0 d1 1 2\n",
    ],
)
def test_irregular_later_piece_read_on_by_the_line_reader(tmp_path, monkeypatch, bad):
    monkeypatch.setattr(trec_pieces, "PIECE_BYTES", 64)
    text = _regular(200) + bad + _regular(50)
    for source in _both(tmp_path, text):
        if (
            bad.count(" ") + bad.count("\t") + bad.count("\x0b") < 5
            and bad.strip()
            and not bad.startswith("#")
        ):
            with pytest.raises(InputError):
                read_run(source, fmt="trec")
            continue
        assert _rows_streamed(source) == _rows_whole(source)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("q9 Q0  1 2 run\n", r"line 201: expected 6 columns, found 5"),
        ("q9  d1 1 2 run\n", r"line 201: expected 6 columns, found 5"),
        ("q9 Q0 d1 1 2 \n", r"line 201: expected 6 columns, found 5"),
        ("q9 Q0 d1 1 inf run\n", r"line 201: score is 'inf', not a finite number"),
        ("q9 Q0 d1 1 2 r\x00n\n", r"line 201"),
    ],
)
def test_bad_line_in_a_later_piece_named_as_the_whole_reader_names_it(
    tmp_path, monkeypatch, bad, message
):
    monkeypatch.setattr(trec_pieces, "PIECE_BYTES", 64)
    text = _regular(200) + bad + _regular(50)
    qrels = b"q1 0 d37 1\n"
    for source in _both(tmp_path, text):
        with pytest.raises(InputError, match=message):
            read_run(source, fmt="trec")
        with pytest.raises(InputError, match=message):
            mc.evaluate(qrels, source, ["P@1"], block_rows=16)


def test_line_longer_than_a_piece_read_by_the_line_reader(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_pieces, "PIECE_BYTES", 64)
    text = _regular(20) + "q9 Q0 " + "d" * 200 + " 1 2 run\n" + _regular(20)
    for source in _both(tmp_path, text):
        assert _rows_streamed(source) == _rows_whole(source)


def test_streamed_evaluation_with_small_pieces_identical(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_pieces, "PIECE_BYTES", 97)
    text = _regular(700)
    qrels = "".join(f"q{i // 7} 0 d{i * 37 % 1000} {i % 4}\n" for i in range(0, 700, 3)).encode()
    for source in _both(tmp_path, text):
        whole = mc.evaluate(qrels, source, ["P@5", "AP", "nDCG@10", "RR"], block_rows=0)
        streamed = mc.evaluate(qrels, source, ["P@5", "AP", "nDCG@10", "RR"], block_rows=40)
        assert streamed.streaming["blocks"] > 1
        for m in ("P@5", "AP", "nDCG@10", "RR"):
            assert np.array_equal(whole.per_query[m].to_numpy(), streamed.per_query[m].to_numpy())
            assert whole.aggregate[m] == streamed.aggregate[m]
