"""``python -m metrics_core history``: add and its gate, report, list, delete."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.history import HistoryStore

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d4 2\nq2 0 d3 1\nq3 0 d9 1\n"
# q1: relevant d1 at rank 2 and d4 at rank 3; q2: d3 first; q3: nothing relevant retrieved.
RUN = (
    "q1 Q0 d2 1 3.0 sysA\nq1 Q0 d1 2 2.0 sysA\nq1 Q0 d4 3 1.0 sysA\n"
    "q2 Q0 d3 1 1.0 sysA\nq3 Q0 d8 1 1.0 sysA\n"
)


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "store" / "h.sqlite3"


def expected():
    return mc.evaluate(
        mc.read_qrels(QRELS.encode()), mc.read_run(RUN.encode()), ["RR", "nDCG@10", "P@5"]
    )


def test_add_saves_and_prints(files):
    qrels, run, store = files
    code, out, err = cli(
        "history",
        "add",
        "--suite",
        "smoke",
        "--qrels",
        qrels,
        "--run",
        run,
        "--store",
        store,
        "--timestamp",
        "2025-01-28T09:00:00Z",
    )
    assert code == 0, err
    ev = expected()
    assert out.startswith("saved evaluation 1: suite=smoke run=run ")
    assert f"nDCG@10={ev.aggregate['nDCG@10']:.4f}" in out
    with HistoryStore(store) as s:
        rec = s.load_evaluation(1)
        assert rec.aggregate == ev.aggregate and rec.timestamp.startswith("2025-01-28T09:00:00")
    # the suite now exists: --qrels may be left out
    code, out, _ = cli(
        "history", "add", "--suite", "smoke", "--run", run, "--store", store, "--name", "v2"
    )
    assert code == 0 and "saved evaluation 2: suite=smoke run=v2" in out


def test_gate_exit_status(files):
    qrels, run, store = files
    ndcg = expected().aggregate["nDCG@10"]
    base = ["history", "add", "--suite", "g", "--qrels", qrels, "--run", run, "--store", store]
    code, _, err = cli(*base, "--fail-below", f"nDCG@10={ndcg - 0.01}")
    assert code == 0 and err == ""
    code, _, err = cli(*base, "--fail-below", f"nDCG@10={ndcg + 0.01}", "--fail-below", "P@5=0.01")
    assert code == 1
    assert f"below threshold: nDCG@10 = {ndcg:.4f}" in err and "P@5" not in err
    # a measure the gate names but -m does not is evaluated and saved too
    code, out, err = cli(*base, "-m", "P@5", "--fail-below", "AP=0.99", "--format", "json")
    assert code == 1 and "AP" in err
    data = json.loads(out)
    assert set(data["aggregate"]) == {"P@5", "AP"} and set(data["failed"]) == {"AP"}
    # failing evaluations are saved all the same
    with HistoryStore(store) as s:
        assert s.count_evaluations() == 3


@pytest.mark.parametrize("bad", ["nDCG@10", "nDCG@10=high", "Bogus@3=0.5", "=0.5"])
def test_gate_bad_threshold_is_exit_2(files, bad):
    qrels, run, store = files
    code, out, err = cli(
        "history",
        "add",
        "--suite",
        "g",
        "--qrels",
        qrels,
        "--run",
        run,
        "--store",
        store,
        "--fail-below",
        bad,
    )
    assert code == 2 and out == "" and err.startswith("error:") and "Traceback" not in err


def test_bad_input_is_exit_2(files, tmp_path):
    qrels, run, store = files
    code, _, err = cli("history", "add", "--suite", "new", "--run", run, "--store", store)
    assert code == 2 and "--qrels" in err
    code, _, err = cli(
        "history",
        "add",
        "--suite",
        "x",
        "--qrels",
        tmp_path / "nope.txt",
        "--run",
        run,
        "--store",
        store,
    )
    assert code == 2 and "nope.txt" in err
    code, _, err = cli("history", "report", "--from", "yesterday", "--store", store)
    assert code == 2 and "not a date" in err
    code, _, err = cli("history", "report", "--store", tmp_path)
    assert code == 2 and "folder" in err


def test_report_formats_and_filter(files, tmp_path):
    qrels, run, store = files
    for day in ("2025-01-27", "2025-01-28", "2025-02-03"):
        assert (
            cli(
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
                "--timestamp",
                day,
                "--name",
                f"run-{day}",
            )[0]
            == 0
        )
    ev = expected()
    code, out, _ = cli(
        "history", "report", "--store", store, "--from", "2025-01-28", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert [r["Run"] for r in data["rows"]] == ["run-2025-01-28", "run-2025-02-03"]
    assert data["rows"][0]["nDCG@10"] == ev.aggregate["nDCG@10"]
    assert data["summary"]["count"] == 2 and data["summary"]["means"]["RR"] == pytest.approx(
        ev.aggregate["RR"]
    )
    assert data["summary"]["label"] in ("Efficient", "Acceptable", "Needs improvement")

    target = tmp_path / "report.csv"
    code, out, _ = cli(
        "history",
        "report",
        "--store",
        store,
        "--to",
        "2025-01-28",
        "--per-query",
        "--format",
        "csv",
        "-o",
        target,
    )
    assert code == 0 and out == ""
    df = pd.read_csv(target, comment="#")
    assert len(df) == 2 * 3 + 1 and df["ID"].iloc[-1] == "Summary"
    body = df.iloc[:-1]
    got = body[body["Run"] == "run-2025-01-27"].set_index("Query ID")["RR"]
    assert got.to_dict() == ev.per_query["RR"].to_dict()

    code, out, _ = cli("history", "report", "--store", store, "--format", "markdown", "-m", "AP")
    assert code == 0 and "| ID | Suite | Run | Date | AP | Interpretation |" in out

    code, out, _ = cli("history", "report", "--store", store)
    assert code == 0 and "3 evaluations (1 suite)" in out


def test_list_and_delete(files):
    qrels, run, store = files
    cli("history", "add", "--suite", "s", "--qrels", qrels, "--run", run, "--store", store)
    cli("history", "add", "--suite", "s", "--run", run, "--store", store, "--name", "second")
    code, out, _ = cli("history", "list", "--store", store, "--format", "json")
    assert code == 0
    assert [e["id"] for e in json.loads(out)["evaluations"]] == [1, 2]
    code, _, err = cli("history", "delete", "1", "--store", store)
    assert code == 2 and "--yes" in err
    code, out, _ = cli("history", "delete", "1", "--yes", "--store", store)
    assert code == 0 and "deleted evaluation 1" in out
    code, _, err = cli("history", "delete", "1", "--yes", "--store", store)
    assert code == 2 and "no evaluation with id 1" in err
    code, out, _ = cli("history", "list", "--store", store, "--format", "csv")
    rows = pd.read_csv(io.StringIO(out), comment="#")
    assert rows["id"].tolist() == [2] and rows["run"].tolist() == ["second"]


def test_default_store_under_ranklab_home(files, tmp_path, monkeypatch):
    qrels, run, _ = files
    monkeypatch.setenv("RANKLAB_HOME", str(tmp_path / "home"))
    assert cli("history", "add", "--suite", "s", "--qrels", qrels, "--run", run)[0] == 0
    assert (tmp_path / "home" / "history.sqlite3").is_file()
