"""mc.compare's Comparison: the same numbers as compare_runs, the command line's JSON byte for
byte, a saved evaluations JSON compared like live evaluations, honest Markdown and LaTeX."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.errors import InputError
from metrics_core.report import provenance_json
from metrics_core.report.comparison import WIDE_COLUMNS, Comparison, compare, compare_json
from metrics_core.report.evaluations import RunValues, evaluations_json, runs_from_json
from metrics_core.report.legends import leaderboard_legend, markers_legend
from metrics_core.stats.comparison import TESTS, compare_runs, comparison_records, leaderboard


def _write_files(tmp_path, n_queries=30, n_docs=12, seed=3):
    """Qrels and three runs with tied scores (scores rounded to one decimal)."""
    rng = np.random.default_rng(seed)
    qrels, paths = [], []
    for q in range(n_queries):
        for d in range(n_docs):
            if rng.random() < 0.4:
                qrels.append(f"q{q} 0 d{d} {int(rng.integers(0, 3))}")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for name in ("bm25", "dense", "hybrid"):
        lines = []
        for q in range(n_queries - (3 if name == "hybrid" else 0)):  # hybrid misses 3 queries
            for d in range(n_docs):
                lines.append(f"q{q} Q0 d{d} 0 {round(float(rng.random()), 1)} {name}")
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return str(tmp_path / "qrels.txt"), paths


MEASURES = ["AP", "nDCG@10", "P@5", "NumRet"]


def _evaluations(qrels, paths, conv=None):
    q = mc.read_qrels(qrels)
    out = []
    for p in paths:
        ev = mc.evaluate(q, mc.read_run(p), MEASURES, conv)
        out.append(ev)
    return out


def _cli(capsys, *args):
    assert main(list(args)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "extra", [(), ("--per-query",), ("-c", "--per-query"), ("--correction", "bh")]
)
def test_to_dict_is_the_command_line_json_byte_for_byte(tmp_path, capsys, extra):
    qrels, paths = _write_files(tmp_path)
    args = [
        "compare",
        "--qrels",
        qrels,
        *sum((["--run", p] for p in paths), []),
        "--baseline",
        "dense",
        "-m",
        ",".join(MEASURES),
        "--permutations",
        "300",
        "--seed",
        "7",
        "--quiet",
        "--format",
        "json",
        *extra,
    ]
    printed = _cli(capsys, *args)
    complete = "-c" in extra
    conv = mc.Conventions().replace(missing_queries="zero") if complete else mc.Conventions()
    evs = _evaluations(qrels, paths, conv)
    correction = "bh" if "bh" in extra else "holm"
    c = mc.compare(
        evs,
        "dense",
        n_permutations=300,
        seed=7,
        correction=correction,
        query_set="qrels" if complete else "common",
    )
    assert json.dumps(c.to_dict(per_query="--per-query" in extra), indent=2) + "\n" == printed


def test_numbers_and_frame_are_compare_runs(tmp_path):
    qrels, paths = _write_files(tmp_path)
    evs = _evaluations(qrels, paths)
    frame = compare_runs(evs, "bm25", n_permutations=500, seed=2, alpha=0.1)
    c = compare(evs, "bm25", n_permutations=500, seed=2, alpha=0.1)
    assert isinstance(c, Comparison) and isinstance(mc.compare(evs), mc.Comparison)
    pd.testing.assert_frame_equal(c.to_frame(), frame)
    assert c.to_frame().attrs == {}
    assert c.records == comparison_records(frame)
    assert list(c.wide().columns) == list(WIDE_COLUMNS)
    assert {
        k: v for k, v in c.settings.items() if k not in ("conventions", "n_queries")
    } == frame.attrs
    assert c.settings["n_queries"] == {m: 27 for m in MEASURES}  # hybrid misses 3 of 30 queries
    pairwise = compare(evs, "bm25", n_permutations=50, query_set="pairwise")
    assert pairwise.settings["n_queries"] == {m: None for m in MEASURES}
    assert c.settings["conventions"] == mc.Conventions().as_dict()
    assert c.legend() == markers_legend(frame, tests=TESTS)
    assert c.legend(paper=False) == markers_legend(frame, tests=TESTS, paper=False)
    assert c.parameters() == {
        k: frame.attrs[k]
        for k in (
            "baseline",
            "permutations",
            "bootstrap",
            "seed",
            "correction",
            "family",
            "confidence",
            "alpha",
            "query_set",
        )
    }
    # values without the rankings: the same rows and the same JSON
    light = compare(
        [RunValues.from_evaluation(ev) for ev in evs],
        "bm25",
        n_permutations=500,
        seed=2,
        alpha=0.1,
        conventions=mc.Conventions(),
    )
    assert light.to_dict(per_query=True) == c.to_dict(per_query=True)
    assert pickle.loads(pickle.dumps(light)).to_dict() == c.to_dict()  # an app may cache it
    # default baseline: the first run; the mapping form gives the same numbers
    by_frames = compare(
        {ev.run_name: ev.per_query for ev in evs}, n_permutations=500, seed=2, alpha=0.1
    )
    pd.testing.assert_frame_equal(by_frames.to_frame(), frame)


def test_leaderboard_reuses_the_comparison(tmp_path):
    qrels, paths = _write_files(tmp_path)
    evs = _evaluations(qrels, paths)
    c = compare(
        evs,
        "dense",
        n_permutations=300,
        seed=3,
        correction="bonferroni",
        tests=("t", "permutation"),
    )
    board = c.leaderboard(n_resamples=200, test="t")
    direct = leaderboard(
        evs,
        "dense",
        MEASURES,
        n_resamples=200,
        seed=3,
        n_permutations=300,
        correction="bonferroni",
        test="t",
    )
    pd.testing.assert_frame_equal(board, direct)  # the t-test does not depend on the other tests
    assert leaderboard_legend(board) == leaderboard_legend(direct)
    with pytest.raises(InputError, match="wilcoxon"):
        c.leaderboard(test="wilcoxon")


def test_records_against_scipy_and_numpy_on_random_ties(tmp_path):
    qrels, paths = _write_files(tmp_path, seed=11)
    evs = _evaluations(qrels, paths)
    c = compare(evs, "bm25", n_permutations=200)
    base = evs[0].per_query
    for r in c.records:
        other = next(ev for ev in evs if ev.run_name == r["run"]).per_query
        common = base.index.intersection(other.index)
        for ev in evs:  # the common query set: every run answered
            common = common.intersection(ev.per_query.index)
        b = base.loc[common, r["measure"]].to_numpy()
        x = other.loc[common, r["measure"]].to_numpy()
        assert r["n_queries"] == len(common)
        assert r["mean_delta"] == pytest.approx(float(np.mean(x - b)), abs=1e-12)
        assert (r["wins"], r["ties"], r["losses"]) == (
            int((x > b).sum()),
            int((x == b).sum()),
            int((x < b).sum()),
        )
        if np.any(x != b) and np.std(x - b) > 0:
            assert r["p"]["t"] == pytest.approx(stats.ttest_rel(x, b).pvalue, rel=1e-9)


def test_saved_evaluations_json_compares_like_the_evaluations(tmp_path, capsys):
    qrels, paths = _write_files(tmp_path)
    saved = json.loads(
        _cli(
            capsys,
            "evaluate",
            "--qrels",
            qrels,
            *sum((["--run", p] for p in paths), []),
            "-m",
            ",".join(MEASURES),
            "--per-query",
            "--format",
            "json",
            "--quiet",
        )
    )
    evs = _evaluations(qrels, paths)
    live = compare(evs, "hybrid", n_permutations=400, seed=5)
    again = compare_json(saved, "hybrid", n_permutations=400, seed=5)
    assert again.records == live.records  # per-query values survive JSON exactly
    assert again.settings["conventions"] == live.settings["conventions"]
    # the runs section carries the file's aggregates and diagnostics
    assert again.to_dict()["runs"] == live.to_dict()["runs"]
    runs, conv = runs_from_json(saved)
    assert [r.run_name for r in runs] == [
        "bm25",
        "dense",
        "hybrid",
    ] and conv == mc.Conventions().as_dict()
    assert evaluations_json(runs, conv, per_query=True)["runs"] == saved["runs"]


@pytest.mark.parametrize(
    "payload", [{}, {"runs": []}, {"runs": [{"name": "a"}]}, {"runs": [{"per_query": {}}]}, []]
)
def test_a_saved_json_without_runs_or_per_query_values_is_an_input_error(payload):
    with pytest.raises(InputError) as info:
        runs_from_json(payload, "saved.json")
    assert str(info.value).startswith("saved.json: ")
    assert "--" not in info.value.plain()


def test_run_values_aggregate_is_the_mean_over_answered_queries():
    rv = RunValues(
        "a", pd.DataFrame({"AP": [0.2, np.nan, 0.6], "RR": [np.nan] * 3}, index=["1", "2", "3"])
    )
    assert rv.aggregate["AP"] == pytest.approx(0.4) and np.isnan(rv.aggregate["RR"])
    entry = rv.to_dict(per_query=True)["per_query"]["1"]
    assert entry["AP"] == 0.2 and np.isnan(entry["RR"]) and list(entry) == ["AP", "RR"]


def test_bad_baseline_and_no_runs_are_input_errors():
    idx = ["q1", "q2"]
    runs = {
        "a": pd.DataFrame({"AP": [0.1, 0.2]}, index=idx),
        "b": pd.DataFrame({"AP": [0.3, 0.2]}, index=idx),
    }
    with pytest.raises(InputError, match="no run named 'zz'"):
        compare(runs, "zz")
    with pytest.raises(InputError, match="no runs"):
        compare({})


HOSTILE = "x_1 & 50% $y$ #2 {z} ~^ \\input{/etc/passwd} <b>|[l](javascript:1)*"


def _hostile_comparison():
    rng = np.random.default_rng(0)
    idx = pd.Index([f"q{i}" for i in range(30)], name="query_id")
    base = pd.DataFrame({"AP": rng.random(30), "P_1": rng.random(30)}, index=idx)
    better = base + 0.3 + rng.normal(0, 0.01, (30, 2))
    return compare({"base": base, HOSTILE: better}, "base", n_permutations=500)


def test_latex_is_a_booktabs_table_escaped_with_a_short_caption():
    c = _hostile_comparison()
    text = c.to_latex(label="tab:cmp")
    lines = text.splitlines()
    assert r"\toprule" in lines and r"\midrule" in lines and r"\bottomrule" in lines
    assert r"\hline" not in text and r"\input{" not in text
    caption = next(line for line in lines if line.startswith(r"\caption{"))
    assert caption == r"\caption{Every run against base: mean (difference)}"
    assert r"\label{tab:cmp}" in lines
    row = next(line for line in lines if line.startswith("x\\_1"))
    assert r"\&" in row and r"\%" in row and r"\$y\$" in row and r"\textbackslash{}input\{" in row
    # markers in LaTeX, not raw Unicode; the legend is a note, the provenance a comment
    assert (
        "†" not in text
        and "‡" not in text
        and r"\textsuperscript{\textdagger{}\textdaggerdbl{}*}" in row
    )
    assert lines[0].startswith("% RankLab ") and "conventions" not in caption
    assert any(line.startswith(r"{\footnotesize Baseline: base.") for line in lines)
    assert all(line.startswith("%") for line in lines if "RankLab" in line)


@pytest.mark.slow  # runs pdflatex (the README's quick tier leaves it out)
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_latex_compiles(tmp_path):
    doc = (
        r"\documentclass{article}\usepackage{booktabs}\begin{document}"
        + "\n"
        + _hostile_comparison().to_latex()
        + r"\end{document}"
        + "\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0


def test_markdown_is_plain_and_escaped():
    c = _hostile_comparison()
    text = c.to_markdown()
    lines = text.splitlines()
    assert lines[0].startswith("| run | AP | P\\_1 |") and lines[1] == "|---|---|---|"
    row = lines[3]
    assert "<b>" not in row and "&lt;b&gt;" in row and "\\|" in row and "\\[l\\]" in row
    assert row.count(" | ") == 2  # the run name's pipe cannot add a column
    assert "**" not in text and not any(line.startswith("_") for line in lines)
    legend, prov = lines[-3], lines[-1]
    assert lines[-2] == "" and legend.startswith("Baseline: base.") and "\\* p &lt; 0.05" in legend
    assert prov.startswith("RankLab ") and "Holm" in legend


def test_plain_table_and_csv_are_the_wide_table():
    c = _hostile_comparison()
    table = c.to_table()
    assert table.splitlines()[0] == c.queries() and "p_corrected_permutation" in table
    csv = c.to_table("csv")
    # the CSV is the table only (issue: comment rows are junk rows in a spreadsheet); its
    # provenance is the sidecar JSON
    assert (
        csv.splitlines()[0].startswith("run,measure,n_queries,") and "#" not in csv.splitlines()[0]
    )
    assert not any(line.startswith("#") for line in csv.splitlines()) and "'=" not in csv
    side = json.loads(provenance_json(c.provenance(), c.queries()))
    assert side["provenance"]["ranklab_version"] and side["title"] == c.queries()
    with pytest.raises(InputError, match="table format"):
        c.to_table("latex")
    assert repr(c).startswith("Comparison(baseline='base'") and "<table" in c._repr_html_()


def test_the_comparison_columns_are_one_declaration(tmp_path):
    """The frame, the plain table and the app's tables read one declaration of the columns
    (they were written out in stats/comparison.py, report/comparison.py and pages/compare.py)."""
    import ast
    from pathlib import Path

    from metrics_core.stats.comparison import COLUMN_NAMES, COLUMNS

    qrels, paths = _write_files(tmp_path)
    c = compare(_evaluations(qrels, paths), "bm25", n_permutations=50)
    assert tuple(c.to_frame().columns) == COLUMN_NAMES == tuple(col.name for col in COLUMNS)
    # the systems' columns are in the frame (empty) and out of the tables without systems
    assert list(c.wide().columns) == [col.name for col in COLUMNS if col.plain and not col.systems]
    assert WIDE_COLUMNS == tuple(col.name for col in COLUMNS if col.plain and not col.systems)
    assert {col.test for col in COLUMNS if col.kind == "p" and not col.systems} == set(TESTS)
    root = Path(__file__).resolve().parents[2]
    for path in ("pages/compare.py", "metrics_core/report/comparison.py", "ui/compare/data.py"):
        # a copy: a list or tuple that writes out three or more of the columns' names
        copies = [
            node.lineno
            for node in ast.walk(ast.parse((root / path).read_text()))
            if isinstance(node, ast.List | ast.Tuple)
            and sum(isinstance(e, ast.Constant) and e.value in COLUMN_NAMES for e in node.elts) >= 3
        ]
        assert copies == [], path


def test_the_app_tables_follow_the_declaration():
    from metrics_core.stats.comparison import COLUMNS
    from ui.compare.data import answer_columns, answer_numbers

    for test in TESTS:
        shown = answer_columns(test)
        assert f"p_corrected_{test}" in shown and "ci" in shown and "wtl" in shown
        assert not [t for t in TESTS if t != test and f"p_corrected_{t}" in shown]
        assert set(answer_numbers(test)) <= set(shown)
    plain = [col.name for col in COLUMNS if col.answer and col.test is None and not col.systems]
    assert [n for n in answer_columns("t") if n in plain] == [
        n for n in plain if n not in ("ci_lo", "ci_hi", "wins", "ties", "losses")
    ]
