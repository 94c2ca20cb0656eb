"""Files and objects written exactly as the usual tools write them give pytrec_eval's numbers,
through the library and the command line.

The data are random (seeded), with ties in score and graded labels; every format below is
written by the test itself, in the layout (and where possible by the very code) of its
tool: trec_eval, BEIR, MTEB/HuggingFace, MS MARCO, PyTerrier, ir_datasets, ir_measures,
ranx, pandas, polars and Arrow.
"""

from __future__ import annotations

import json
import math
import warnings
from collections import namedtuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.errors import InputWarning

pytrec_eval = pytest.importorskip("pytrec_eval")

PYTREC = {"map": "AP", "P_5": "P@5", "ndcg_cut_10": "nDCG@10", "recip_rank": "RR"}
MEASURES = list(PYTREC.values())


def make_data(seed: int = 7, n_queries: int = 12, with_ranks: bool = False):
    """({qid: {docid: label}}, {qid: {docid: score}}): numeric-looking ids (as MS MARCO's),
    scores multiples of 1/4 (ties; exact in float32), graded labels, unjudged documents,
    a qrels query the run misses and a run query the qrels lack."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(1, n_queries + 1):
        docs = [str(d) for d in rng.choice(400, size=25, replace=False)]
        qrels[str(q)] = {d: int(rng.choice([0, 0, 1, 2])) for d in docs[:12]}
        if q == n_queries:
            continue  # missing from the run
        retrieved = docs[4:] + [str(d) for d in rng.choice(range(400, 800), size=10, replace=False)]
        if with_ranks:  # distinct scores: a rank order
            scores = rng.permutation(len(retrieved)) + 1.0
        else:
            scores = rng.integers(0, 12, size=len(retrieved)) / 4
        run[str(q)] = dict(zip(retrieved, scores.tolist(), strict=True))
    run["999"] = {"5": 1.0}  # absent from the qrels
    return qrels, run


def reference(qrels, run) -> dict:
    """pytrec_eval's means over the queries it evaluates (those in both)."""
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    return {PYTREC[m]: float(np.mean([v[m] for v in per_query.values()])) for m in PYTREC}


def assert_numbers(aggregate: dict, want: dict) -> None:
    for measure, value in want.items():
        assert math.isclose(aggregate[measure], value, rel_tol=0, abs_tol=1e-12), (
            measure,
            aggregate,
            want,
        )


def cli_aggregate(qrels_path, run_path, *options) -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "evaluate",
                "--qrels",
                str(qrels_path),
                "--run",
                str(run_path),
                "-m",
                ",".join(MEASURES),
                "--format",
                "json",
                *options,
            ]
        )
    assert code == 0
    return json.loads(out.getvalue())["runs"][0]["aggregate"]


def rows(mapping):
    return [(q, d, v) for q, docs in mapping.items() for d, v in docs.items()]


@pytest.fixture(scope="module")
def data():
    qrels, run = make_data()
    return qrels, run, reference(qrels, run)


# --- files ------------------------------------------------------------------------------


def write_trec(tmp_path, qrels, run):
    """trec_eval's formats (``qid iter docno rel``, ``qid Q0 docno rank score tag``)."""
    qp, rp = tmp_path / "qrels.test", tmp_path / "bm25.run"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in rows(qrels)))
    lines = []
    for q, docs in run.items():
        for i, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), start=1):
            lines.append(f"{q} Q0 {d} {i} {s} bm25\n")
    rp.write_text("".join(lines))
    return qp, rp


def write_beir(tmp_path, qrels, run):
    """BEIR: ``qrels/test.tsv`` with a ``query-id corpus-id score`` header; results as the
    JSON of ``{qid: {docid: score}}`` that ``EvaluateRetrieval.retrieve`` returns."""
    qp = tmp_path / "test.tsv"
    qp.write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in rows(qrels))
    )
    rp = tmp_path / "results.json"
    rp.write_text(json.dumps(run))
    return qp, rp


def write_mteb(tmp_path, qrels, run):
    """MTEB / HuggingFace datasets: Parquet qrels (``query-id``, ``corpus-id``, ``score``)
    and a run with HuggingFace's ``query_id``, ``corpus_id``, ``score``."""
    qp, rp = tmp_path / "qrels.parquet", tmp_path / "run.parquet"
    q = rows(qrels)
    pq.write_table(
        pa.table(
            {
                "query-id": [r[0] for r in q],
                "corpus-id": [r[1] for r in q],
                "score": [r[2] for r in q],
            }
        ),
        qp,
    )
    r = rows(run)
    pq.write_table(
        pa.table(
            {
                "query_id": [x[0] for x in r],
                "corpus_id": [x[1] for x in r],
                "score": [x[2] for x in r],
            }
        ),
        rp,
    )
    return qp, rp


def write_msmarco(tmp_path, qrels, run):
    """MS MARCO: ``qrels.dev.tsv`` (``qid 0 pid rel``, tabs, no header) and a run
    ``qid pid rank`` (tabs, no score)."""
    qp, rp = tmp_path / "qrels.dev.tsv", tmp_path / "run.dev.tsv"
    qp.write_text("".join(f"{q}\t0\t{d}\t{r}\n" for q, d, r in rows(qrels)))
    lines = []
    for q, docs in run.items():
        for rank, (d, _) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), start=1):
            lines.append(f"{q}\t{d}\t{rank}\n")
    rp.write_text("".join(lines))
    return qp, rp


def pyterrier_frames(qrels, run):
    """PyTerrier's data frames: results ``qid, docid, docno, rank, score, query`` (``docid``
    Terrier's internal number, ``rank`` from 0) and qrels ``qid, docno, label``."""
    internal = {}
    res = []
    for q, docs in run.items():
        for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1])):
            res.append(
                {
                    "qid": q,
                    "docid": internal.setdefault(d, len(internal) + 10_000),
                    "docno": d,
                    "rank": rank,
                    "score": s,
                    "query": f"text of query {q}",
                }
            )
    q = rows(qrels)
    return (
        pd.DataFrame(
            {"qid": [r[0] for r in q], "docno": [r[1] for r in q], "label": [r[2] for r in q]}
        ),
        pd.DataFrame(res),
    )


def write_pyterrier(tmp_path, qrels, run, fmt):
    qf, rf = pyterrier_frames(qrels, run)
    qp, rp = tmp_path / f"qrels.{fmt}", tmp_path / f"results.{fmt}"
    if fmt == "csv":
        qf.to_csv(qp, index=False)
        rf.to_csv(rp, index=False)
    else:
        qf.to_parquet(qp)
        rf.to_parquet(rp)
    return qp, rp


def write_ranx(tmp_path, qrels, run):
    """ranx's own writers: ``Qrels.save(kind="parquet")`` (``q_id, doc_id, score``) and
    ``Run.save(kind="trec")``."""
    ranx = pytest.importorskip("ranx")
    qp, rp = tmp_path / "qrels.parquet", tmp_path / "run.trec"
    ranx.Qrels({q: {d: int(v) for d, v in docs.items()} for q, docs in qrels.items()}).save(
        str(qp), kind="parquet"
    )
    ranx.Run(run, name="bm25").save(str(rp), kind="trec")
    return qp, rp


WRITERS = {
    "trec_eval": write_trec,
    "beir": write_beir,
    "mteb": write_mteb,
    "msmarco": write_msmarco,
    "pyterrier-csv": lambda t, q, r: write_pyterrier(t, q, r, "csv"),
    "pyterrier-parquet": lambda t, q, r: write_pyterrier(t, q, r, "parquet"),
    "ranx": write_ranx,
}


@pytest.mark.parametrize("tool", sorted(WRITERS))
def test_files_as_each_tool_writes_them(tmp_path, tool):
    qrels, run = make_data(with_ranks=tool == "msmarco")
    want = reference(qrels, run)
    qp, rp = WRITERS[tool](tmp_path, qrels, run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = mc.evaluate(qp, rp, MEASURES)
    assert not [w for w in caught if issubclass(w.category, InputWarning)]
    assert ev.coverage["problem"] is None
    assert_numbers(ev.aggregate, want)
    assert_numbers(cli_aggregate(qp, rp), want)


def test_msmarco_run_keeps_the_rank_order_and_explicit_formats(tmp_path):
    qrels, run = make_data(with_ranks=True)
    qp, rp = write_msmarco(tmp_path, qrels, run)
    read = mc.read_run(rp)
    assert read.name == "run.dev" and read.scores[:3].tolist() == [-1.0, -2.0, -3.0]
    other = tmp_path / "run.txt"
    other.write_text(rp.read_text())
    want = reference(qrels, run)
    assert_numbers(
        cli_aggregate(qp, other, "--run-format", "msmarco", "--qrels-format", "msmarco"), want
    )
    assert_numbers(
        mc.evaluate(
            mc.read_qrels(qp, fmt="msmarco"), mc.read_run(other, fmt="msmarco"), MEASURES
        ).aggregate,
        want,
    )


def test_pyterrier_docno_wins_over_the_internal_docid(data):
    qrels, run, want = data
    qf, rf = pyterrier_frames(qrels, run)
    ev = mc.evaluate(qf, rf, MEASURES)
    assert_numbers(ev.aggregate, want)
    assert mc.read_run(rf).columns_used["doc_id"] == "docno"


def test_column_mapping_on_the_command_line(tmp_path, data):
    qrels, run, want = data
    qp = tmp_path / "q.csv"
    rp = tmp_path / "r.csv"
    pd.DataFrame(rows(qrels), columns=["topic_no", "passage", "grade_x"]).to_csv(qp, index=False)
    pd.DataFrame(rows(run), columns=["topic_no", "passage", "bm25"]).to_csv(rp, index=False)
    assert_numbers(
        cli_aggregate(
            qp,
            rp,
            "--columns",
            "query_id=topic_no,doc_id=passage,score=bm25",
            "--qrels-columns",
            "query_id=topic_no,doc_id=passage,relevance=grade_x",
        ),
        want,
    )


# --- objects in memory --------------------------------------------------------------------

ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")  # ir_datasets' look-alikes
TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")


def object_forms(qrels, run):
    import ir_measures
    import polars as pl

    ranx = pytest.importorskip("ranx")
    q, r = rows(qrels), rows(run)
    qcols = {
        "query_id": [x[0] for x in q],
        "doc_id": [x[1] for x in q],
        "relevance": [x[2] for x in q],
    }
    rcols = {"query_id": [x[0] for x in r], "doc_id": [x[1] for x in r], "score": [x[2] for x in r]}
    return {
        "ir_datasets-lists": (
            lambda: [TrecQrel(a, b, c, "0") for a, b, c in q],
            lambda: [ScoredDoc(*x) for x in r],
        ),
        "ir_datasets-generators": (
            lambda: (TrecQrel(a, b, c, "0") for a, b, c in q),
            lambda: (ScoredDoc(*x) for x in r),
        ),
        "ir_measures": (
            lambda: [ir_measures.Qrel(*x) for x in q],
            lambda: iter([ir_measures.ScoredDoc(*x) for x in r]),
        ),
        "dicts": (
            lambda: [dict(zip(("query_id", "doc_id", "relevance"), x, strict=True)) for x in q],
            lambda: [dict(zip(("query_id", "doc_id", "score"), x, strict=True)) for x in r],
        ),
        "tuples": (lambda: list(q), lambda: tuple(r)),
        "ranx": (
            lambda: ranx.Qrels({a: {d: int(v) for d, v in b.items()} for a, b in qrels.items()}),
            lambda: ranx.Run(run, name="bm25"),
        ),
        "pandas": (lambda: pd.DataFrame(qcols), lambda: pd.DataFrame(rcols)),
        "polars": (lambda: pl.DataFrame(qcols), lambda: pl.DataFrame(rcols)),
        "arrow": (lambda: pa.table(qcols), lambda: pa.table(rcols)),
        "arrow-batch": (
            lambda: pa.RecordBatch.from_pydict(qcols),
            lambda: pa.RecordBatch.from_pydict(rcols),
        ),
        "nested": (lambda: qrels, lambda: run),
    }


FORMS = [
    "ir_datasets-lists",
    "ir_datasets-generators",
    "ir_measures",
    "dicts",
    "tuples",
    "ranx",
    "pandas",
    "polars",
    "arrow",
    "arrow-batch",
    "nested",
]


@pytest.mark.parametrize("form", FORMS)
def test_objects_in_memory(data, form):
    qrels, run, want = data
    make_qrels, make_run = object_forms(qrels, run)[form]
    ev = mc.evaluate(make_qrels(), make_run(), MEASURES)
    assert_numbers(ev.aggregate, want)
    if form == "ranx":
        assert mc.read_run(make_run()).name == "bm25"


def test_a_generator_is_read_once():
    calls = []

    def gen():
        calls.append(1)
        yield ScoredDoc("1", "a", 1.0)

    run = mc.read_run(gen())
    assert len(run) == 1 and calls == [1]


@pytest.mark.parametrize(
    "value, words",
    [
        ("query_id", "is not ROLE=COLUMN"),
        ("colour=qid", "unknown role"),
        ("doc_id=nope", "'nope' (given for doc_id) is not in the table"),
    ],
)
def test_bad_column_mappings_are_one_line(tmp_path, capsys, data, value, words):
    qrels, run, _ = data
    qp, rp = write_beir(tmp_path, qrels, run)
    tsv = tmp_path / "run.tsv"
    tsv.write_text("qid\tdocno\tscore\n1\td1\t1.0\n")
    assert main(["evaluate", "--qrels", str(qp), "--run", str(tsv), "--columns", value]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and words in err and "\n" not in err


def test_headered_tsv_run_and_a_space_separated_qrels_named_csv(tmp_path, data):
    """Headerless 4-column qrels are TREC whatever the extension; a headed TSV is a table."""
    qrels, run, want = data
    qp = tmp_path / "qrels.csv"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in rows(qrels)))
    rp = tmp_path / "run.tsv"
    rp.write_text("qid\tdocno\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows(run)))
    assert_numbers(mc.evaluate(qp, rp, MEASURES).aggregate, want)
    assert_numbers(cli_aggregate(qp, rp), want)
