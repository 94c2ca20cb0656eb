"""``ranklab fuse`` (a run out, or --tune's cross-validated report) and ``compare --all-pairs``."""

from __future__ import annotations

import json
import pathlib

import pytest

import metrics_core as mc
from metrics_core.cli import main

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "sample_data" / "ranking"
BM25, DENSE, HYBRID, QRELS = (
    str(SAMPLE / n) for n in ("bm25.txt", "dense.txt", "hybrid.txt", "qrels.txt")
)


def test_fuse_writes_the_library_run(tmp_path):
    out = tmp_path / "fused.txt"
    assert (
        main(
            [
                "fuse",
                "--run",
                BM25,
                "--run",
                DENSE,
                "--method",
                "rrf",
                "--param",
                "k=20",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    back = mc.read_run(str(out))
    expected = mc.fuse([mc.read_run(BM25), mc.read_run(DENSE)], method="rrf", params={"k": 20})
    assert back.doc_ids.tolist() == expected.doc_ids.tolist()
    assert back.scores.tolist() == pytest.approx(expected.scores.tolist())
    assert out.read_text().split("\n")[0].split()[1] == "Q0"


def test_fuse_weights_and_stdout(capsys):
    assert (
        main(
            [
                "fuse",
                "--run",
                BM25,
                "--run",
                DENSE,
                "--method",
                "wsum",
                "--weight",
                "0.7",
                "--weight",
                "0.3",
            ]
        )
        == 0
    )
    first = capsys.readouterr().out.splitlines()[0].split()
    assert len(first) == 6 and first[3] == "1"


def test_fuse_tune_reports_held_out_scores(tmp_path, capsys):
    run_out = tmp_path / "cv.txt"
    assert (
        main(
            [
                "fuse",
                "--run",
                BM25,
                "--run",
                DENSE,
                "--method",
                "rrf",
                "--tune",
                "--qrels",
                QRELS,
                "--folds",
                "3",
                "--permutations",
                "200",
                "--format",
                "json",
                "--tune-run",
                str(run_out),
            ]
        )
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["validation"] == "cross-validation" and not payload["in_sample"]
    assert len(payload["folds"]) == 3 and {"bm25", "dense"} == {
        r["run"] for r in payload["summary"]
    }
    assert run_out.exists()


def test_fuse_in_sample_says_so(capsys):
    assert (
        main(
            [
                "fuse",
                "--run",
                BM25,
                "--run",
                DENSE,
                "--method",
                "rrf",
                "--tune",
                "--qrels",
                QRELS,
                "--in-sample",
                "--permutations",
                "100",
            ]
        )
        == 0
    )
    assert "optimistic" in capsys.readouterr().out


def test_fuse_bad_input_is_one_line(capsys):
    assert main(["fuse", "--run", BM25, "--run", DENSE, "--method", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown fusion method" in err and len(err.splitlines()) <= 2
    assert main(["fuse", "--run", BM25, "--run", DENSE, "--method", "rbc"]) == 2
    assert "phi" in capsys.readouterr().err


def test_compare_all_pairs_and_several_baselines(capsys):
    assert (
        main(
            [
                "compare",
                "--qrels",
                QRELS,
                "--run",
                BM25,
                "--run",
                DENSE,
                "--run",
                HYBRID,
                "--all-pairs",
                "-m",
                "AP",
                "--permutations",
                "500",
                "--format",
                "json",
            ]
        )
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["letters"] == {"bm25": "a", "dense": "b", "hybrid": "c"}
    assert len(payload["comparisons"]) == 3
    assert (
        main(
            [
                "compare",
                "--qrels",
                QRELS,
                "--run",
                BM25,
                "--run",
                DENSE,
                "--run",
                HYBRID,
                "--baseline",
                "bm25",
                "--baseline",
                "dense",
                "-m",
                "AP",
                "--test",
                "t",
                "--format",
                "latex",
            ]
        )
        == 0
    )
    assert "$^{" in capsys.readouterr().out
    assert main(["compare", "--qrels", QRELS, "--run", BM25, "--run", DENSE, "-m", "AP"]) == 2


def test_help_lists_every_subcommand(capsys):
    from metrics_core.cli import COMMANDS

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for name in COMMANDS:
        assert f"\n    {name} " in text or f"\n    {name}\n" in text, name
