"""One test per defect of the hostile-input report that is not a plain "exit 2, one
line" case of the corpus: safe outputs (CSV formulas, Markdown/HTML, LaTeX), library
entry points, label spellings under pandas' string dtype, messages (1-based positions,
no numpy reprs, files named), stores, and the reader's format detection."""

from __future__ import annotations

import gzip
import io
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.errors import InputError
from metrics_core.io import read_qrels, read_run
from metrics_core.io.scores import read_scores
from metrics_core.report import csv_safe, format_table, latex_escape, markdown_escape

FORMULA = '=HYPERLINK("http://x.example","click")'


def _cli(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def formula_files(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text(f"{FORMULA} Q0 d1 1 3.0 sys\n@cmd Q0 d1 1 2.0 sys\n-x Q0 d2 1 1.0 sys\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{FORMULA} 0 d1 1\n@cmd 0 d1 1\n-x 0 d2 1\n")
    other = tmp_path / "+plus.txt"
    other.write_text(run.read_text())
    return tmp_path, run, qrels, other


def _csv_cells(text):
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    return pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)


def test_csv_cells_cannot_run_as_formulas(formula_files, capsys):
    d, run, qrels, _ = formula_files
    code, out, err = _cli(
        capsys,
        "evaluate",
        "--qrels",
        qrels,
        "--run",
        run,
        "--per-query",
        "--format",
        "csv",
        "-m",
        "P@1",
    )
    assert code == 0, err
    cells = _csv_cells(out)
    for col in cells.columns:
        for v in cells[col]:
            assert not v.startswith(("=", "+", "@", "\t", "\r")), (col, v)
            assert not (v.startswith("-") and not v[1:2].isdigit()), (col, v)
    assert "'" + FORMULA in set(cells["query_id"])
    assert "'@cmd" in set(cells["query_id"]) and "'-x" in set(cells["query_id"])


def test_compare_and_history_csv_are_safe(formula_files, capsys):
    d, run, qrels, other = formula_files
    code, out, err = _cli(
        capsys,
        "compare",
        "--qrels",
        qrels,
        "--run",
        run,
        "--run",
        other,
        "--baseline",
        "run",
        "--format",
        "csv",
        "--permutations",
        "10",
        "-m",
        "P@1",
    )
    assert code == 0, err
    assert "'+plus" in set(_csv_cells(out)["run"])
    store = d / "h.sqlite3"
    code, out, err = _cli(
        capsys,
        "history",
        "add",
        "--suite",
        "=SUM(1)",
        "--qrels",
        qrels,
        "--run",
        run,
        "--name",
        "@evil",
        "--store",
        store,
    )
    assert code == 0, err
    for action in ("list", "report"):
        code, out, err = _cli(capsys, "history", action, "--format", "csv", "--store", store)
        assert code == 0, err
        cells = _csv_cells(out)
        values = {v for col in cells.columns for v in cells[col]}
        assert not any(v.startswith(("=", "@", "+")) for v in values), values


def test_csv_safe_keeps_numbers():
    assert csv_safe("-0.25") == "-0.25" and csv_safe("+1e3") == "+1e3"
    assert csv_safe("-1 ") == "'-1 " and csv_safe("\tx") == "'\tx" and csv_safe("\rx") == "'\rx"
    assert csv_safe(-0.5) == -0.5 and csv_safe("plain") == "plain"


def test_markdown_escapes_html_and_links():
    df = pd.DataFrame(
        {
            "run": ["<script>alert(1)</script>", "[x](javascript:alert(1))", "a|b"],
            "P@5": [0.5, 0.25, 0.0],
        }
    )
    text = format_table(df, "markdown", index=False)
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "[x](javascript" not in text and "\\[x\\](javascript" in text
    assert "a\\|b" in text
    assert markdown_escape("<img src=x onerror=alert(1)>").startswith("&lt;img")


def test_latex_escapes_specials():
    assert latex_escape("a_b & 50% <x> {y} $z$ #1 ~ ^ \\") == (
        r"a\_b \& 50\% \textless{}x\textgreater{} \{y\} \$z\$ \#1 \textasciitilde{} "
        r"\textasciicircum{} \textbackslash{}"
    )
    text = format_table(
        pd.DataFrame({"run": ["x\\input{/etc/passwd}"], "v": [1.0]}), "latex", index=False
    )
    assert "\\input{" not in text


def test_yes_no_labels_in_string_columns():
    """pandas 3 reads text as its string dtype; yes/no and true/false are labels all the same."""
    t = read_scores(b"score,label\n0.9,yes\n0.1,No\n0.5, TRUE \n0.4,false\n", name="s.csv")
    assert t.y_true.tolist() == [1, 0, 1, 0]
    frame = pd.DataFrame({"score": [0.2, 0.8], "label": pd.array(["no", "yes"], dtype="string")})
    assert mc.detection.roc_auc_score(frame["label"], frame["score"]) == 1.0


def test_library_entry_points_raise_input_error(tmp_path):
    with pytest.raises(InputError, match="None"):
        mc.from_lists({"q1": (["a", None], ["a"])})
    with pytest.raises(InputError):
        mc.from_lists({"q1": None})
    with pytest.raises(InputError, match="'x' is not a number"):
        mc.from_relevance_vectors({"q": [1, "x"]})
    with pytest.raises(InputError, match="relevance_threshold"):
        mc.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["P@1"], relevance_threshold="a")
    with pytest.raises(InputError, match="finite"):
        mc.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["P@1"], relevance_threshold=float("nan"))
    with pytest.raises(InputError, match="file not found"):
        mc.evaluate(str(tmp_path / "nope.txt"), {"q": {"d": 1.0}}, ["P@1"])
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="symbolic link loop"):
        mc.evaluate(str(loop), {"q": {"d": 1.0}}, ["P@1"])


def test_gain_overflow_is_a_clear_error():
    with pytest.raises(InputError, match="too large for gain=exp"):
        mc.evaluate({"q": {"d": 2**40}}, {"q": {"d": 1.0}}, ["nDCG@10"], gain="exp")


def test_messages_have_no_numpy_reprs_and_are_1_based():
    with pytest.raises(InputError) as err:
        read_run(pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [np.float64("nan")]}))
    assert "np.float64" not in str(err.value)
    with pytest.raises(InputError, match="position 3"):
        mc.detection.roc_auc_score([0, 1, 2], [0.1, 0.2, 0.3])
    with pytest.raises(InputError, match="position 2"):
        mc.calibration.expected_calibration_error([0, 1], [0.5, 1.5])


def test_text_relevance_in_trec_qrels_names_the_line():
    with pytest.raises(InputError, match=r"line 1: relevance 'relevant' is not a number"):
        read_qrels(b"q1 0 d1 relevant\n", name="qrels.txt")
    # a TSV table with a header is still a table
    q = read_qrels(b"qid\titer\tdocno\trel\nq1\t0\td1\t1\n", name="q.txt")
    assert q.doc_ids.tolist() == ["d1"]


def test_trec_doc_id_with_comma_is_trec():
    run = read_run(b"q1 Q0 d,1 1 3.0 sys\nq1 Q0 d2 2 2.0 sys\n")
    assert run.doc_ids.tolist() == ["d,1", "d2"]
    qrels = read_qrels(b"q1 0 d,1 1\n")
    assert qrels.doc_ids.tolist() == ["d,1"]


@pytest.mark.parametrize("value", ["1_000", "\u0661\u0662", "0x10", "1e", "--1"])
def test_numbers_as_trec_eval_reads_them(value):
    with pytest.raises(InputError, match="is not a number"):
        read_run(f"q1 Q0 d1 1 {value} sys\n".encode())
    with pytest.raises(InputError, match="is not a number"):
        read_run(f"query_id,doc_id,score\nq1,d1,{value}\n".encode(), fmt="csv")


def test_quote_in_trec_line_is_named():
    with pytest.raises(InputError, match="double quote"):
        read_run(b'"q 1" Q0 d1 1 3.0 sys\n')


@pytest.mark.parametrize(
    "data,fmt",
    [
        (b"query_id,doc_id,score\n,d1,1.0\n", "csv"),
        (b"query_id,doc_id,score\n  ,d1,1.0\n", "csv"),
        (b'[{"query_id": null, "doc_id": "d", "score": 1}]', "json"),
        (b'{"query_id": "q", "doc_id": "", "score": 1}\n', "jsonl"),
    ],
)
def test_empty_ids_rejected_in_every_format(data, fmt):
    with pytest.raises(InputError, match="empty"):
        read_run(data, fmt=fmt)


def test_parquet_list_id_column(tmp_path):
    buf = io.BytesIO()
    pd.DataFrame({"query_id": [[1, 2]], "doc_id": ["d"], "score": [1.0]}).to_parquet(buf)
    with pytest.raises(InputError, match="not a single value"):
        read_run(buf.getvalue(), fmt="parquet")


def test_utf16_is_named():
    with pytest.raises(InputError, match="UTF-16"):
        read_run("q1 Q0 d1 1 3.0 sys\n".encode("utf-16"))
    with pytest.raises(InputError, match="UTF-16"):
        read_scores("score,label\n0.5,1\n".encode("utf-16"), name="s.csv")


def test_compression_by_content_in_every_reader(tmp_path):
    p = tmp_path / "plain.gz"
    p.write_text("q1 Q0 d1 1 3.0 sys\n")
    assert read_run(str(p)).doc_ids.tolist() == ["d1"]
    q = tmp_path / "q.gz"
    q.write_text("q1 0 d1 1\n")
    assert read_qrels(str(q)).doc_ids.tolist() == ["d1"]
    s = tmp_path / "scores.csv"
    s.write_bytes(gzip.compress(b"score,label\n0.5,1\n0.2,0\n"))
    assert read_scores(str(s)).y_true.tolist() == [1, 0]


def test_npy_header_is_checked_before_allocation():
    """A header declaring more than the input limit is refused by that size (before its
    consistency with the bytes); one within the limit that the bytes do not fill, by the
    mismatch."""
    from metrics_core.io.codes import read_matrix

    def npy(shape) -> bytes:
        header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}"
        header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
        head = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
        return head + b"\x00" * 16

    with pytest.raises(InputError, match=r"the array its header declares .* above the input"):
        read_matrix(npy((1000000000000, 16)), name="huge.npy")
    with pytest.raises(InputError, match=r"declares shape \(4, 16\) \(512 bytes\) but the file"):
        read_matrix(npy((4, 16)), name="short.npy")


def test_hash_errors_name_the_file(tmp_path, capsys):
    np.save(tmp_path / "q.npy", np.ones((2, 8)))
    np.save(tmp_path / "d.npy", np.ones((3, 16)))
    np.save(tmp_path / "ql.npy", np.array([0, 1]))
    np.save(tmp_path / "dl.npy", np.array([0, 1]))  # 2 labels for 3 codes
    np.save(tmp_path / "d8.npy", np.ones((3, 8)))
    code, _out, err = _cli(
        capsys,
        "hash",
        "--query-codes",
        tmp_path / "q.npy",
        "--db-codes",
        tmp_path / "d8.npy",
        "--query-labels",
        tmp_path / "ql.npy",
        "--db-labels",
        tmp_path / "dl.npy",
    )
    assert code == 2 and "dl.npy" in err and err.count("\n") == 1, err


def test_damaged_history_store(tmp_path, capsys):
    store = tmp_path / "h.sqlite3"
    run, qrels = tmp_path / "r.txt", tmp_path / "q.txt"
    run.write_text("q1 Q0 d1 1 3.0 sys\n")
    qrels.write_text("q1 0 d1 1\n")
    for i in range(3):
        assert (
            _cli(
                capsys,
                "history",
                "add",
                "--suite",
                f"s{i}",
                "--qrels",
                qrels,
                "--run",
                run,
                "--store",
                store,
            )[0]
            == 0
        )
    with sqlite3.connect(store) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(store.read_bytes())
    page = 4096
    for i in range(page, len(data)):  # keep the header page, damage the rest
        if i % 7:
            data[i] = 0x55
    store.write_bytes(bytes(data))
    for p in (tmp_path / "h.sqlite3-wal", tmp_path / "h.sqlite3-shm"):
        p.unlink(missing_ok=True)
    code, _out, err = _cli(capsys, "history", "list", "--store", store)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "damaged" in err and "integrity check" in err and "h.sqlite3" in err


def test_read_only_store_can_be_listed(tmp_path, capsys, monkeypatch):
    """A store the process may not write is opened read-only (os.access is what root
    ignores, so the check is simulated)."""
    import os

    from metrics_core.history import HistoryStore

    store = tmp_path / "h.sqlite3"
    run, qrels = tmp_path / "r.txt", tmp_path / "q.txt"
    run.write_text("q1 Q0 d1 1 3.0 sys\n")
    qrels.write_text("q1 0 d1 1\n")
    assert (
        _cli(
            capsys,
            "history",
            "add",
            "--suite",
            "s",
            "--qrels",
            qrels,
            "--run",
            run,
            "--store",
            store,
        )[0]
        == 0
    )
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode, **kw: False if mode == os.W_OK else real_access(p, mode)
    )
    with HistoryStore(store) as s:
        assert s.read_only
    code, out, err = _cli(capsys, "history", "list", "--store", store, "--format", "json")
    assert code == 0, err
    assert len(json.loads(out)["evaluations"]) == 1
    code, _out, err = _cli(capsys, "history", "add", "--suite", "s", "--run", run, "--store", store)
    assert code == 2 and "read-only" in err and err.count("\n") == 1, err


def test_data_page_upload_with_text_relevance_names_the_line():
    """The Data page's qrels upload (auto format): the value and line, not "no query_id column"."""
    from ui.ranking.data import parse_qrels

    with pytest.raises(
        InputError, match=r"qrels.txt, line 1: relevance 'relevant' is not a number"
    ):
        parse_qrels(b"q1 0 d1 relevant\nq1 0 d2 0\n", "qrels.txt")
