"""``ranklab ir_measures QRELS RUN 'nDCG@10 P@5'`` prints what ir_measures' command line
prints: the real one (installed for the tests) runs on the same random files with ties,
graded labels, missing and extra queries, under each output option."""

from __future__ import annotations

import io
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

pytest.importorskip("ir_measures")

from metrics_core import cli  # noqa: E402
from tests.compat.test_pytrec_eval_shim import random_data  # noqa: E402

MEASURES = ["nDCG@10 P@5", "RR@10", "AP", "RR", "NumRel", "Judged@10", "R@100", "P(rel=2)@5"]


def write(tmp_path, seed):
    qrels, run = random_data(seed, n_queries=20)
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(
        "".join(f"{qid} 0 {d} {v}\n" for qid, docs in qrels.items() for d, v in docs.items())
    )
    r.write_text(
        "".join(
            f"{qid} Q0 {d} {i + 1} {s!r} tag\n"
            for qid, docs in run.items()
            for i, (d, s) in enumerate(docs.items())
        )
    )
    return str(q), str(r)


def ours(args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["ir_measures", *args], prog="ranklab")
    return code, out.getvalue(), err.getvalue()


def theirs(args):
    done = subprocess.run(
        [sys.executable, "-m", "ir_measures", *args], capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["-q"],
        ["-q", "-n"],
        ["-o", "jsonl"],
        ["-q", "-o", "jsonl"],
        ["-p", "-1"],
        ["-p", "2", "-q"],
    ],
)
def test_output_equals_ir_measures_command_line(tmp_path, options):
    q, r = write(tmp_path, 11)
    args = [q, r, *MEASURES, *options]
    code, out, _ = ours(args)
    code_theirs, out_theirs, err_theirs = theirs(args)
    assert code == code_theirs == 0, err_theirs
    if "-q" in options:  # the same lines; ir_measures orders them by its providers
        assert sorted(out.splitlines()) == sorted(out_theirs.splitlines())
        summary = [
            line for line in out.splitlines() if line.startswith(("all\t", '{"query_id": "all"'))
        ]
        assert summary == [
            line
            for line in out_theirs.splitlines()
            if line.startswith(("all\t", '{"query_id": "all"'))
        ]
    else:
        assert out == out_theirs


def test_errors_are_one_line_and_usage_names_the_command(tmp_path):
    q, r = write(tmp_path, 3)
    code, out, err = ours([q, r, "nDCG@10 Nope@5 P@@1"])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "unknown measure: Nope@5" in err and "syntax error: P@@1" in err
    code, _, err = ours([q, r, "SDCG(max_rel=3)@10"])
    assert code == 2 and "SDCG(max_rel=3)@10 is not offered" in err and err.count("\n") == 1
    code, _, err = ours([q, r, "P@5", "--provider", "ranx"])
    assert code == 2 and "--provider ranx is not offered" in err
    code, _, err = ours([q, r, "P@5", "-n"])
    assert code == 2 and "only supported with --by_query" in err
    code, _, err = ours([str(tmp_path / "nope.txt"), r, "P@5"])
    assert code == 2 and "nope.txt: file not found" in err and "Traceback" not in err
    with pytest.raises(SystemExit):
        with redirect_stderr(io.StringIO()) as usage:
            cli.main(["ir_measures", q], prog="ranklab")
    assert usage.getvalue().startswith("ranklab ir_measures: error:")


def test_program_name_follows_how_it_was_run():
    assert cli.program_name("/opt/venv/bin/ranklab") == "ranklab"
    assert cli.program_name("/src/metrics_core/__main__.py") == "python -m metrics_core"
    done = subprocess.run(
        [sys.executable, "-m", "metrics_core", "ir_measures"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.startswith(
        "python -m metrics_core ir_measures: error:"
    )
