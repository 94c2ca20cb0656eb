"""Never a silent zero: the coverage check, its warning, its diagnostic and its stderr line;
empty runs; and messages that name only options that exist."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import metrics_core as mc
from metrics_core.cli import COMMANDS, build_parser, main
from metrics_core.errors import InputError, InputWarning
from metrics_core.io import coverage
from metrics_core.io.coverage import CoverageWarning, coverage_report

ROOT = Path(__file__).resolve().parents[2]


def _pyterrier(tmp_path):
    qp, rp = tmp_path / "qrels.csv", tmp_path / "res.csv"
    qp.write_text("qid,docno,label\n1,d1,1\n1,d2,0\n2,d3,1\n")
    rp.write_text(
        "qid,docid,docno,rank,score,query\n1,10,d1,0,2.5,a b\n1,11,d2,1,1.5,a b\n2,12,d3,0,3.0,c\n"
    )
    return qp, rp


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_wrong_doc_id_column_warns_naming_the_columns(tmp_path):
    qp, rp = _pyterrier(tmp_path)
    run = mc.read_run(rp, columns={"doc_id": "docid"})
    with pytest.warns(CoverageWarning) as caught:
        ev = mc.evaluate(qp, run, ["P@1", "AP"])
    message = str(caught[0].message)
    assert issubclass(caught[0].category, InputWarning)
    assert "'docid'" in message and "'docno'" in message and "none of the 3 retrieved" in message
    assert ev.aggregate == {"P@1": 0.0, "AP": 0.0}
    cov = ev.coverage
    assert cov["problem"] == "none_judged" and cov["doc_id_column"] == "docid"
    assert (
        cov["other_doc_id_columns"] == ["docno"]
        and cov["judged"] == 0
        and cov["shared_queries"] == 2
    )


def test_cli_prints_one_line_on_stderr_naming_the_run(tmp_path):
    qp, rp = _pyterrier(tmp_path)
    code, out, err = _cli(
        "evaluate",
        "--qrels",
        str(qp),
        "--run",
        str(rp),
        "-m",
        "P@1",
        "--columns",
        "doc_id=docid",
        "--qrels-columns",
        "doc_id=docno",
        "--format",
        "json",
    )
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("warning: res: none of the 3 retrieved")
    doc = json.loads(out)
    assert doc["runs"][0]["diagnostics"]["coverage"]["problem"] == "none_judged"
    assert "missing_queries" in doc["runs"][0]["diagnostics"]  # the existing keys stay
    # read right by default: no warning at all
    code, out, err = _cli(
        "evaluate", "--qrels", str(qp), "--run", str(rp), "-m", "P@1", "--format", "json"
    )
    assert code == 0 and "warning" not in err
    assert json.loads(out)["runs"][0]["aggregate"]["P@1"] == 1.0


def test_no_shared_query(tmp_path):
    qp, _ = _pyterrier(tmp_path)
    rp = tmp_path / "other.txt"
    rp.write_text("q7 Q0 d1 1 1.0 x\nq8 Q0 d3 1 1.0 x\n")
    with pytest.warns(CoverageWarning, match="shares no query"):
        ev = mc.evaluate(qp, rp, ["P@1"])
    assert ev.coverage["problem"] == "no_shared_query"
    code, _, err = _cli("evaluate", "--qrels", str(qp), "--run", str(rp), "-m", "P@1")
    assert code == 0 and err.count("warning: other: the run shares no query with the qrels") == 1


def test_query_ids_that_disagree_are_named():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"b": 1.0}, "q2": {"a": 1.0}}
    with pytest.warns(CoverageWarning, match="judged under other queries"):
        mc.evaluate(qrels, run, ["P@1"])


def test_few_judged_and_the_threshold():
    qrels = {str(q): {"a": 1} for q in range(20)}
    run = {str(q): {"a" if q == 0 else "z": 1.0} for q in range(20)}
    report = coverage_report(mc.read_qrels(qrels), mc.read_run(run))
    assert report["problem"] == "few_judged" and report["queries_with_judged"] == 1
    assert (
        coverage_report(mc.read_qrels(qrels), mc.read_run(run), min_share=0.05)["problem"] is None
    )


def test_well_judged_runs_say_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = mc.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "c": 1.0}}, ["P@2"])
    assert ev.coverage["problem"] is None


@pytest.mark.parametrize("block", [None, 1, 7, 64])
@pytest.mark.parametrize("seed", range(5))
def test_report_equals_a_count_by_hand(seed, block, monkeypatch):
    """Also with the run joined in blocks of ``block`` rows (the default: one block here),
    blocks that cut a query's rows in two included."""
    if block is not None:
        monkeypatch.setattr(coverage, "BLOCK_ROWS", block)
    rng = np.random.default_rng(seed)
    q = pd.DataFrame(
        {
            "query_id": rng.integers(0, 15, 200).astype(str),
            "doc_id": rng.integers(0, 60, 200).astype(str),
            "relevance": rng.integers(-1, 3, 200),
        }
    ).drop_duplicates(["query_id", "doc_id"])
    r = pd.DataFrame(
        {
            "query_id": rng.integers(5, 25, 300).astype(str),
            "doc_id": rng.integers(0, 90, 300).astype(str),
            "score": rng.random(300),
        }
    ).drop_duplicates(["query_id", "doc_id"])
    got = coverage_report(mc.read_qrels(q), mc.read_run(r))
    judged_pairs = set(zip(q.query_id, q.doc_id, strict=True))
    shared = set(r.query_id) & set(q.query_id)
    in_shared = r[r.query_id.isin(shared)]
    judged = [
        p for p in zip(in_shared.query_id, in_shared.doc_id, strict=True) if p in judged_pairs
    ]
    assert got["shared_queries"] == len(shared)
    assert (
        got["run_queries"] == r.query_id.nunique() and got["qrels_queries"] == q.query_id.nunique()
    )
    assert got["retrieved"] == len(in_shared) and got["judged"] == len(judged)
    assert got["queries_with_judged"] == len({p[0] for p in judged})
    if got["problem"] in ("none_judged", "few_judged"):
        assert got["doc_ids_in_qrels"] == pytest.approx(r.doc_id.isin(set(q.doc_id)).mean())
    else:
        assert got["doc_ids_in_qrels"] is None


def test_query_sets_decode_only_distinct_ids(monkeypatch):
    """A run's query set decodes its distinct ids, never one id per row (a 5,000,000-line run
    would decode every row's id at once, outside what the app reserves for the check); the
    same set, also across chunks with different dictionaries and with ids given without rows."""
    decoded = []
    plain = coverage._plain

    def counting(arr):
        out = plain(arr)
        if out is not arr:
            decoded.append(len(out))
        return out

    monkeypatch.setattr(coverage, "_plain", counting)
    chunks = [
        pa.array(["q1", "q2", "q1", "q1"] * 50).dictionary_encode(),
        pa.array(["q3", "q1"] * 50).dictionary_encode(),
    ]
    data = SimpleNamespace(qid=pa.chunked_array(chunks), extra_query_ids=("q9", "q1"))
    assert sorted(coverage._query_set(data).to_pylist()) == ["q1", "q2", "q3", "q9"]
    assert decoded and max(decoded) <= 4  # the distinct ids of both chunks, not 300 rows
    run = mc.read_run({f"q{i % 7}": {f"d{i}": float(i)} for i in range(300)})
    decoded.clear()
    assert sorted(coverage._query_set(run).to_pylist()) == sorted({f"q{i % 7}" for i in range(300)})
    assert max(decoded, default=0) <= 7


# --- empty runs ----------------------------------------------------------------------

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}


@pytest.mark.parametrize(
    "empty",
    [{}, [], (), pd.DataFrame({"query_id": [], "doc_id": [], "score": []})],
    ids=["dict", "list", "tuple", "frame"],
)
def test_an_empty_run_follows_missing_queries(empty):
    with pytest.warns(CoverageWarning, match="the run is empty"):
        ev = mc.evaluate(QRELS, empty, ["P@5", "AP"], missing_queries="zero")
    assert ev.per_query.to_dict() == {"P@5": {"q1": 0.0, "q2": 0.0}, "AP": {"q1": 0.0, "q2": 0.0}}
    with pytest.warns(CoverageWarning):
        ev = mc.evaluate(QRELS, empty, ["P@5"])
    assert len(ev.per_query) == 0 and ev.diagnostics["missing_queries"] == ["q1", "q2"]


def test_an_empty_ranking_in_a_mapping_is_a_missing_query():
    """{q: {}}: no ranking for q, as trec_eval (and pytrec_eval) see it: listed among the
    missing queries, skipped by default, 0 with missing_queries="zero"."""
    run = {"q1": {}, "q2": {"d2": 1.0}}
    ev = mc.evaluate(QRELS, run, ["P@5"])
    assert ev.per_query.to_dict() == {"P@5": {"q2": 0.2}} and ev.diagnostics["missing_queries"] == [
        "q1"
    ]
    ev = mc.evaluate(QRELS, run, ["P@5"], missing_queries="zero")
    assert ev.per_query.to_dict() == {"P@5": {"q1": 0.0, "q2": 0.2}}


def test_an_empty_file_stays_an_error(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        mc.read_run(path)


# --- every message names only options that exist --------------------------------------


def _options_of(parser, options: set[str]) -> None:
    for action in parser._actions:
        options.update(o for o in action.option_strings if o.startswith("--"))
        for child in (
            (getattr(action, "choices", None) or {}).values()
            if hasattr(action, "_name_parser_map")
            else ()
        ):
            _options_of(child, options)


def _options_of_every_subcommand() -> set[str]:
    options: set[str] = set()
    for name in COMMANDS:
        try:
            _options_of(build_parser(name), options)
        except ImportError:  # a subcommand whose extra (torch) is not installed
            continue
    return options


def test_messages_name_only_options_that_exist():
    known = _options_of_every_subcommand()
    assert {"--columns", "--qrels-columns", "--qrels-format", "--run-format"} <= known
    named = set()
    for path in (ROOT / "metrics_core").rglob("*.py"):
        if "cli" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named.update(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", node.value))
    assert named - known == set(), (
        f"messages name options that do not exist: {sorted(named - known)}"
    )


def test_missing_column_message_names_the_columns_option():
    from metrics_core.cli import error_line

    with pytest.raises(InputError) as caught:
        mc.read_qrels(pd.DataFrame({"a": ["q"], "b": ["d"], "c": [1]}))
    assert "columns={'query_id': NAME}" in str(caught.value)  # the library's argument
    shown = error_line(caught.value)  # the command line's flag
    assert "--columns query_id=NAME" in shown and "--query-id-col" not in shown


def test_empty_rankings_from_lists_are_no_trap():
    """from_lists with an empty retrieved list: evaluated (0), nothing retrieved, no warning."""
    run, qrels = mc.from_lists({"q1": ([], ["A"])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = mc.evaluate(qrels, run, ["P@3", "RR"])
    assert ev.aggregate == {"P@3": 0.0, "RR": 0.0} and ev.coverage["problem"] is None
    assert ev.coverage["retrieved"] == 0 and ev.coverage["shared_queries"] == 1
