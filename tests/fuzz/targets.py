"""One fuzz target per reader: bytes in, a checked result or an InputError out.

Each target feeds its bytes to one reader. The only outcomes allowed are

* an :class:`~metrics_core.errors.InputError` whose message is one non-empty line, or
* a result that passes :func:`check_columns` (every id a non-empty string, every value a
  finite float, the columns of one length): never a silent misread.

Anything else (another exception, a crash) is a finding. The targets are driven by atheris
(coverage-guided, :mod:`tests.fuzz.fuzz_readers`) and by the short runs in the test suite.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from metrics_core.errors import InputError
from metrics_core.io.trec import ASCII_SPACE

ROOT = Path(__file__).resolve().parents[2]


def check_columns(data, trec: bool = False) -> None:
    """A Run / Qrels that was read must be sound. Ids of a TREC file (``trec``) hold no
    field separator (ASCII white space, where trec_eval splits a line); a table's ids are
    not empty nor only white space."""
    q, d, v = data.query_ids, data.doc_ids, data.values
    assert len(q) == len(d) == len(v)
    assert np.isfinite(v).all() and v.dtype == np.float64
    for ids in (q, d):
        assert all(isinstance(x, str) for x in ids)
        if trec:
            bad = [x for x in ids if not x or any(c in x for c in ASCII_SPACE)]
        else:
            bad = [x for x in ids if not x.strip(ASCII_SPACE)]
        assert not bad, f"an empty or split id was accepted: {bad[:3]!r}"


def check_trec(data) -> None:
    check_columns(data, trec=True)


def _check_error(exc: InputError) -> None:
    text = str(exc)
    assert text and "\n" not in text and "Traceback" not in text, text


def _guard(read: Callable[[], object], check: Callable[[object], None] = check_columns) -> None:
    try:
        result = read()
    except InputError as exc:
        _check_error(exc)
        return
    check(result)


def _run(fmt: str, name: str):
    from metrics_core.io import read_run

    check = check_trec if fmt in ("trec", "msmarco") else check_columns
    return lambda data: _guard(lambda: read_run(_Named(data, name), fmt=fmt), check)


def _qrels(fmt: str, name: str):
    from metrics_core.io import read_qrels

    check = check_trec if fmt in ("trec", "msmarco") else check_columns
    return lambda data: _guard(lambda: read_qrels(_Named(data, name), fmt=fmt), check)


class _Named(io.BytesIO):
    """Bytes with a file name (as an upload has), so the extension counts."""

    def __init__(self, data: bytes, name: str):
        super().__init__(data)
        self.name = name


def stream_run(data: bytes) -> None:
    """The block reader must give what the whole-file reader gives, or defer to it."""
    from metrics_core.io import NotStreamable, open_run_stream, read_run

    try:
        stream = open_run_stream(_Named(data, "run.txt"), batch_rows=7)
        batches = list(stream.batches())
    except NotStreamable:
        return
    except InputError as exc:
        _check_error(exc)
        return
    rows = sum(b.num_rows for b in batches)
    try:
        whole = read_run(_Named(data, "run.txt"))
    except InputError as exc:
        # the evaluator reads a stream of no rows whole: only then may the two disagree
        _check_error(exc)
        assert rows == 0, f"the stream read {rows} rows the whole-file reader refuses: {exc}"
        return
    assert rows == len(whole), (rows, len(whole))
    if rows:
        scores = np.concatenate([b.column("score").to_numpy() for b in batches])
        assert np.array_equal(scores, whole.scores)


def json_records(data: bytes) -> None:
    """Decoded JSON given as an object in memory (the structured forms' reader)."""
    from metrics_core.io import read_qrels, read_run

    try:
        obj = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return
    for reader in (read_run, read_qrels):
        _guard(lambda r=reader: r(obj))


def scores_table(data: bytes) -> None:
    from metrics_core.io.scores import read_scores

    _guard(lambda: read_scores(_Named(data, "scores.csv")), lambda result: None)


def metadata_table(data: bytes) -> None:
    from metrics_core.io.metadata import read_metadata

    _guard(lambda: read_metadata(data, "meta.csv"), lambda result: None)


def click_log(data: bytes) -> None:
    from metrics_core.io.clicks import read_click_log

    _guard(lambda: read_click_log(_Named(data, "clicks.csv")), lambda result: None)


def code_matrix(data: bytes) -> None:
    from metrics_core.io.codes import read_matrix

    def check(matrix):
        assert isinstance(matrix, np.ndarray)

    _guard(lambda: read_matrix(_Named(data, "codes.npy")), check)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "trec_run": _run("trec", "run.txt"),
    "trec_qrels": _qrels("trec", "qrels.txt"),
    "msmarco_run": _run("msmarco", "run.tsv"),
    "auto_run": _run("auto", "run"),
    "auto_qrels": _qrels("auto", "qrels"),
    "tsv_qrels": _qrels("auto", "qrels.tsv"),
    "csv_run": _run("csv", "run.csv"),
    "json_run": _run("json", "run.json"),
    "jsonl_qrels": _qrels("jsonl", "qrels.jsonl"),
    "parquet_run": _run("parquet", "run.parquet"),
    "stream_run": stream_run,
    "json_objects": json_records,
    "scores": scores_table,
    "metadata": metadata_table,
    "clicks": click_log,
    "codes": code_matrix,
}


def seeds() -> list[bytes]:
    """The seed corpus: files in the layouts the reader tests write, and the sample data."""
    import pandas as pd

    out = [
        b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d3 1 0.5 bm25\n",
        b"q1\tQ0\td1\t1\t2.5\tbm25\n# comment\n\nq1\tQ0\td#2\t2\t1.5\tbm25\n",
        b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n",
        b"1\t0\t12\t1\n2\t0\t5\t1\n",
        b"1\t12\t1\n1\t5\t2\n2\t7\t1\n",
        b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\n",
        b"qid,docid,docno,rank,score,query\n1,10,d1,0,2.5,a b\n1,11,d2,1,1.5,a b\n",
        b"qid,docno,label\n1,d1,1\n1,d2,0\n",
        b"q_id,doc_id,score\nq1,d1,0.5\n",
        b'{"q1": {"d1": 1.5, "d2": 0.5}, "q2": {"d3": 1}}',
        b'[{"query_id": "q1", "doc_id": "d1", "score": 1.0}]',
        b'{"query_id": "q1", "doc_id": "d1", "relevance": 1, "iteration": "0"}\n'
        b'{"query_id": "q1", "doc_id": "d2", "relevance": 0, "iteration": "0"}\n',
        b"score,label\n0.9,1\n0.1,0\n",
        b"query,candidate,prob,gold\nq1,a,0.9,1\n",
        gzip.compress(b"q1 Q0 d1 1 2.5 bm25\n", mtime=0),
    ]
    buf = io.BytesIO()
    pd.DataFrame({"q_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}).to_parquet(
        buf
    )
    out.append(buf.getvalue())
    buf = io.BytesIO()
    np.save(buf, np.array([[0, 1, 1], [1, 0, 1]], dtype=np.uint8))
    out.append(buf.getvalue())
    for path in sorted((ROOT / "sample_data" / "ranking").glob("*")):
        if path.is_file():
            out.append(path.read_bytes()[:2048])
    return out


def write_seeds(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(seeds()):
        (folder / f"seed-{i:03d}").write_bytes(data)
    return folder
