"""compare_runs on hand-built evaluations, and the ``compare`` subcommand."""

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics_core.cli import main
from metrics_core.errors import InputError
from metrics_core.report import json_safe
from metrics_core.report.legends import paper_table
from metrics_core.stats import significance as sig
from metrics_core.stats.comparison import compare_runs, comparison_records


@dataclass
class FakeEvaluation:
    run_name: str
    per_query: pd.DataFrame


def _evaluations(n=40, seed=0):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"q{i}" for i in range(n)], name="query_id")
    base = pd.DataFrame({"AP": rng.random(n), "P@5": rng.integers(0, 6, n) / 5}, index=idx)
    better = pd.DataFrame(
        {"AP": np.clip(base["AP"] + 0.2 + rng.normal(0, 0.05, n), 0, 1), "P@5": base["P@5"]},
        index=idx,
    )
    # The third run misses five queries: its comparisons use the 35 common ones.
    noisy = pd.DataFrame({"AP": rng.random(n), "P@5": rng.integers(0, 6, n) / 5}, index=idx).iloc[
        5:
    ]
    return [
        FakeEvaluation("base", base),
        FakeEvaluation("better", better),
        FakeEvaluation("noisy", noisy),
    ]


def test_compare_runs_values():
    evs = _evaluations()
    # the per-pair common sets of this test are the legacy "pairwise" query set
    frame = compare_runs(
        evs,
        "base",
        ["AP", "P@5"],
        n_permutations=2000,
        seed=3,
        correction="holm",
        query_set="pairwise",
    )
    assert list(zip(frame["run"], frame["measure"], strict=True)) == [
        ("better", "AP"),
        ("better", "P@5"),
        ("noisy", "AP"),
        ("noisy", "P@5"),
    ]
    row = frame.iloc[2]
    b, r, common = sig.paired_values(evs[0].per_query["AP"], evs[2].per_query["AP"])
    assert list(common) == sorted(f"q{i}" for i in range(5, 40))  # the common set, sorted ids
    assert row["n_queries"] == 35
    assert row["mean_delta"] == pytest.approx((r - b).mean())
    assert row["p_t"] == pytest.approx(stats.ttest_rel(r, b).pvalue)
    assert row["p_wilcoxon"] == pytest.approx(stats.wilcoxon(r - b).pvalue)
    assert row["p_permutation"] == sig.permutation_test(b, r, 2000, seed=3)
    assert [row["ci_lo"], row["ci_hi"]] == pytest.approx(
        sig.bootstrap_ci(b, r, 0.95, 2000, seed=3), rel=1e-12
    )
    assert (row["wins"], row["ties"], row["losses"]) == sig.win_tie_loss(b, r)
    assert row["effect_size"] == pytest.approx((r - b).mean() / (r - b).std(ddof=1))
    # Holm over the 4 comparisons, per test
    assert frame["p_corrected_t"].tolist() == pytest.approx(
        sig.correct_pvalues(frame["p_t"], "holm")
    )
    # identical P@5 for "better": every test says 1.0, all ties
    tied = frame.iloc[1]
    assert tied["p_t"] == tied["p_wilcoxon"] == tied["p_permutation"] == 1.0
    assert tied["ties"] == 40 and tied["markers"] == ""
    assert frame.iloc[0]["significant"] == {"t": True, "wilcoxon": True, "permutation": True}
    # reproducible across calls
    again = compare_runs(
        evs, "base", ["AP", "P@5"], n_permutations=2000, seed=3, query_set="pairwise"
    )
    assert again["p_permutation"].tolist() == frame["p_permutation"].tolist()
    rec = comparison_records(frame)[0]
    assert set(rec["p"]) == set(rec["p_corrected"]) == {"t", "wilcoxon", "permutation"}
    assert len(rec["ci95"]) == 2
    # a paper table needs one query set per measure: a pairwise frame is refused ...
    with pytest.raises(InputError, match="different query sets"):
        paper_table(frame)
    # ... and the common set (35 queries) gives one
    frame = compare_runs(evs, "base", ["AP", "P@5"], n_permutations=2000, seed=3, correction="holm")
    table = paper_table(frame)
    first = frame.iloc[0]
    assert table.loc["better", "AP"] == f"{first['mean_run']:.4f} ({first['mean_delta']:+.4f})*"
    assert table.loc["base", "AP"] == f"{first['mean_baseline']:.4f}"


def test_compare_runs_bad_baseline_and_measure():
    evs = _evaluations()
    with pytest.raises(InputError, match="baseline"):
        compare_runs(evs, "nope", ["AP"])
    with pytest.raises(InputError, match="nDCG"):
        compare_runs(evs, "base", ["nDCG"])
    with pytest.raises(InputError):
        compare_runs(evs, "base", ["AP"], correction="sidak")


def _write_files(tmp_path, n_queries=25):
    rng = np.random.default_rng(1)
    qrels = tmp_path / "qrels.txt"
    with open(qrels, "w") as f:
        for q in range(n_queries):
            for d in range(8):
                if rng.random() < 0.35 or d == 0:
                    f.write(f"q{q} 0 d{d} 1\n")
    paths = []
    for name in ("bm25", "dense", "hybrid"):
        path = tmp_path / f"{name}.txt"
        with open(path, "w") as f:
            for q in range(n_queries):
                scores = rng.random(8)
                for rank, d in enumerate(np.argsort(-scores)):
                    f.write(f"q{q} Q0 d{d} {rank + 1} {scores[d]:.6f} {name}\n")
        paths.append(str(path))
    return str(qrels), paths


def _args(qrels, paths, *extra):
    out = ["compare", "--qrels", qrels]
    for p in paths:
        out += ["--run", p]
    return out + list(extra)


def test_cli_json(tmp_path, capsys):
    qrels, paths = _write_files(tmp_path)
    rc = main(
        _args(
            qrels,
            paths,
            "--baseline",
            "bm25",
            "-m",
            "AP",
            "-m",
            "P@5",
            "--permutations",
            "500",
            "--seed",
            "4",
            "--correction",
            "bh",
            "--format",
            "json",
            "--quiet",
        )
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert {"version", "conventions", "runs", "comparisons"} <= set(out)
    assert len(out["runs"]) == 3 and len(out["comparisons"]) == 4
    keys = {
        "run",
        "baseline",
        "measure",
        "n_queries",
        "mean_delta",
        "ci95",
        "p",
        "p_corrected",
        "wins",
        "ties",
        "losses",
    }
    for c in out["comparisons"]:
        assert keys <= set(c)
        assert set(c["p"]) == set(c["p_corrected"]) == {"t", "wilcoxon", "permutation"}
        assert c["baseline"] == "bm25" and c["n_queries"] == 25
        assert c["wins"] + c["ties"] + c["losses"] == 25
    assert out["comparison"]["correction"] == "bh" and out["comparison"]["seed"] == 4
    # mean_baseline / mean_run agree with evaluate's aggregates (no query is missing here)
    runs = {r["name"]: r for r in out["runs"]}
    for c in out["comparisons"]:
        assert c["mean_run"] == pytest.approx(runs[c["run"]]["aggregate"][c["measure"]])
        assert c["mean_baseline"] == pytest.approx(runs["bm25"]["aggregate"][c["measure"]])
        assert c["mean_delta"] == pytest.approx(c["mean_run"] - c["mean_baseline"])
    # same seed, same numbers
    main(
        _args(
            qrels,
            paths,
            "--baseline",
            "bm25",
            "-m",
            "AP",
            "-m",
            "P@5",
            "--permutations",
            "500",
            "--seed",
            "4",
            "--correction",
            "bh",
            "--format",
            "json",
            "--quiet",
        )
    )
    again = json.loads(capsys.readouterr().out)
    assert again["comparisons"] == out["comparisons"]


@pytest.mark.parametrize(
    "fmt, marker",
    [("markdown", "| run |"), ("latex", r"\begin{tabular}"), ("table", "p_corrected_permutation")],
)
def test_cli_text_formats(tmp_path, capsys, fmt, marker):
    qrels, paths = _write_files(tmp_path)
    out_file = tmp_path / f"out.{fmt}"
    rc = main(
        _args(
            qrels,
            paths,
            "--baseline",
            "dense",
            "-m",
            "AP",
            "--permutations",
            "200",
            "--format",
            fmt,
            "-o",
            str(out_file),
            "--quiet",
        )
    )
    assert rc == 0
    text = out_file.read_text()
    assert marker in text and "RankLab" in text
    if fmt != "table":
        assert "Holm" in text and "dense" in text


@pytest.mark.parametrize(
    "extra",
    [
        ["--baseline", "nope"],
        ["--baseline", "bm25", "--correction", "sidak"],
        ["--baseline", "bm25", "--permutations", "0"],
        ["--baseline", "bm25", "--permutations", "many"],
        ["--baseline", "bm25", "-m", "NotAMeasure"],
        ["--baseline", "bm25", "--confidence", "1.5"],
    ],
)
def test_cli_bad_arguments_exit_2(tmp_path, capsys, extra):
    qrels, paths = _write_files(tmp_path)
    try:
        rc = main(_args(qrels, paths, *extra, "--quiet"))
    except SystemExit as exc:  # argparse errors
        rc = exc.code
    assert rc == 2
    assert capsys.readouterr().err.strip()


def test_cli_needs_two_runs(tmp_path, capsys):
    qrels, paths = _write_files(tmp_path)
    assert main(_args(qrels, paths[:1], "--baseline", "bm25", "--quiet")) == 2
    assert "two runs" in capsys.readouterr().err


def test_compare_runs_disjoint_queries_give_nan_not_errors():
    idx_a = pd.Index(["q1", "q2", "q3"], name="query_id")
    idx_b = pd.Index(["q7", "q8", "q9"], name="query_id")
    a = FakeEvaluation("a", pd.DataFrame({"AP": [0.1, 0.2, 0.3]}, index=idx_a))
    b = FakeEvaluation("b", pd.DataFrame({"AP": [0.4, 0.5, 0.6]}, index=idx_b))
    c = FakeEvaluation("c", pd.DataFrame({"AP": [0.9, 0.9, 0.9]}, index=idx_a))
    frame = compare_runs([a, b, c], "a", ["AP"], n_permutations=100, query_set="pairwise")
    empty, full = frame.iloc[0], frame.iloc[1]
    assert empty["n_queries"] == 0 and np.isnan(empty["p_t"]) and np.isnan(empty["p_corrected_t"])
    assert np.isnan(empty["ci_lo"]) and empty["markers"] == ""
    # the NaN comparison does not count in the family: c's Holm p is its raw p
    assert full["p_corrected_t"] == full["p_t"]
    rec = json.loads(json.dumps(json_safe(comparison_records(frame))))
    assert rec[0]["p"]["t"] is None and rec[0]["ci95"] == [None, None]


def test_cli_csv_is_the_table_and_its_provenance_is_beside_it(tmp_path, capsys):
    """``-o FILE.csv`` writes the table only (no comment rows) and FILE.csv.provenance.json;
    a CSV on stdout is the table only; other formats keep their provenance inside."""
    qrels, paths = _write_files(tmp_path)
    out_file = tmp_path / "out.csv"
    args = _args(
        qrels,
        paths,
        "--baseline",
        "dense",
        "-m",
        "AP",
        "--permutations",
        "200",
        "--format",
        "csv",
        "--quiet",
    )
    assert main([*args, "-o", str(out_file)]) == 0
    text = out_file.read_text()
    assert text.splitlines()[0].startswith("run,measure,n_queries,")
    assert not any(line.startswith("#") for line in text.splitlines())
    frame = pd.read_csv(out_file)
    assert all(repr(float(v)) == str(v) for v in frame["mean_delta"].astype(str))
    side = json.loads((tmp_path / "out.csv.provenance.json").read_text())
    assert side["provenance"]["ranklab_version"] and side["provenance"]["baseline"] == "dense"
    assert side["title"].startswith("Queries:")
    capsys.readouterr()
    assert main(args) == 0
    assert capsys.readouterr().out == text
    assert [p.name for p in tmp_path.glob("*.provenance.json")] == ["out.csv.provenance.json"]
