"""The shared exports: CSV without comment rows and in shortest round-trip numbers, the
provenance as JSON (a sidecar beside a CSV file), LaTeX that pdflatex compiles with a short
caption, one cell and one p-value formatter (no "nan", "NaN" or "None" anywhere), and an
HTML report whose legend matches its tables."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.report import (
    MISSING,
    format_cell,
    format_p,
    format_table,
    provenance,
    provenance_json,
    sidecar_path,
    write_export,
)
from metrics_core.report.evaluations import RunValues
from metrics_core.report.html import comparison_report
from metrics_core.report.leaderboard_grid import leaderboard_grid, leaderboard_long
from metrics_core.report.legends import leaderboard_legend
from metrics_core.stats.comparison import leaderboard

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "ranking"
HOSTILE = "x_1 & 50% $y$ #2 {z} ~^ \\input{/etc/passwd} <b>|[l]* ★ Ejecución"
JUNK = re.compile(r"\b(nan|NaN|None)\b")


def _random_frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = rng.random((20, 3))
    values[rng.random((20, 3)) < 0.15] = np.nan
    values[0, 0] = 0.2
    values[1, 1] = 1 / 3
    values[2, 2] = 1e-300
    frame = pd.DataFrame(values, columns=["AP", "nDCG@10", "p"])
    frame.insert(0, "run", [f"r{i}" if i % 5 else HOSTILE for i in range(20)])
    frame["n"] = rng.integers(0, 100, 20)
    return frame


@pytest.mark.parametrize("seed", range(5))
def test_csv_has_no_comment_rows_and_reads_back_bit_exact(seed):
    frame = _random_frame(seed)
    text = format_table(
        frame, "csv", prov=provenance({"ties": "trec_eval"}), title="A title. n = 30.", index=False
    )
    lines = text.splitlines()
    assert lines[0] == "run,AP,nDCG@10,p,n"
    assert not any(line.startswith("#") for line in lines) and "RankLab" not in text
    assert "0.20000000000000001" not in text and "0.2" in lines[1].split(",")
    back = pd.read_csv(io.StringIO(text))
    assert len(back) == len(frame)
    for c in ("AP", "nDCG@10", "p"):  # shortest round-trip form: the very same doubles
        a, b = frame[c].to_numpy(), back[c].to_numpy()
        assert (
            np.array_equal(np.isnan(a), np.isnan(b)) and (a[~np.isnan(a)] == b[~np.isnan(b)]).all()
        )
    rows = list(csv.reader(io.StringIO(text)))
    assert all(cell == repr(float(cell)) for row in rows[1:] for cell in row[1:4] if cell)
    assert (back["n"] == frame["n"]).all()


def test_csv_text_that_a_spreadsheet_would_run_is_quoted():
    text = format_table(
        pd.DataFrame({"run": ["=cmd()", "-x", "-0.5"], "v": [1.0, 2.0, 3.0]}), "csv"
    )
    assert text.splitlines()[1:] == ["'=cmd(),1.0", "'-x,2.0", "-0.5,3.0"]


def test_provenance_json_is_the_csvs_sidecar(tmp_path):
    prov = provenance({"ties": "trec_eval"}, seed=0)
    side = json.loads(provenance_json(prov, "Leaderboard"))
    assert side == {"provenance": json.loads(json.dumps(prov)), "title": "Leaderboard"}
    out = tmp_path / "board.csv"
    frame = pd.DataFrame({"run": ["a"], "AP": [0.2]})
    written = write_export(
        format_table(frame, "csv", prov=prov), str(out), "csv", prov, "Leaderboard"
    )
    assert written == sidecar_path(str(out)) == str(out) + ".provenance.json"
    assert out.read_text().splitlines() == ["run,AP", "a,0.2"]
    assert json.loads(Path(written).read_text()) == side
    latex = tmp_path / "board.tex"
    assert write_export(format_table(frame, "latex", prov=prov), str(latex), "latex", prov) is None
    assert not Path(sidecar_path(str(latex))).exists()


def test_format_p_and_format_cell():
    assert (
        format_p(0.18878) == "0.1888"
        and format_p(5e-5) == "< 0.0001"
        and format_p(0.0) == "< 0.0001"
    )
    assert (
        format_p(0.0001) == "0.0001"
        and format_p(np.float32(np.nan)) == MISSING
        and format_p(None) == MISSING
    )
    rng = np.random.default_rng(1)
    for p in rng.random(200) ** 8:  # many tiny ones
        text = format_p(p)
        assert text == ("< 0.0001" if p < 1e-4 else f"{p:.4f}")
    for missing in (None, float("nan"), np.float32("nan"), pd.NA, pd.NaT):
        assert format_cell(missing) == MISSING
    assert format_cell(np.float32(0.5)) == "0.5000" and format_cell(np.int64(3)) == "3"


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_no_format_renders_nan_or_none(fmt):
    frame = pd.DataFrame(
        {
            "run": ["a", None, "c"],
            "AP": [np.nan, 0.5, np.float32("nan")],
            "x": pd.array([1, pd.NA, 3], dtype="Int64"),
        }
    )
    text = format_table(frame, fmt, index=False)
    body = [line for line in text.splitlines() if not line.startswith("%")]
    assert not JUNK.search("\n".join(body)), text
    assert (MISSING if fmt != "latex" else "--") in text


def _board_title():
    idx = pd.Index([f"q{i}" for i in range(30)], name="query_id")
    rng = np.random.default_rng(0)
    base = pd.DataFrame({"AP": rng.random(30), "RR": rng.random(30)}, index=idx)
    runs = [RunValues("base", base), RunValues(HOSTILE, (base + 0.2).clip(upper=1.0))]
    board = leaderboard(runs, "base", ["AP", "RR"], n_resamples=100, n_permutations=200)
    return board, "Leaderboard. " + leaderboard_legend(board)


def test_latex_caption_is_short_and_the_legend_a_note():
    board, title = _board_title()
    assert title.endswith("n = 30.")
    tex = format_table(
        leaderboard_grid(board),
        "latex",
        prov=provenance({"ties": "trec_eval"}),
        title=title,
        index=False,
    )
    lines = tex.splitlines()
    assert tex.isascii() and "★" not in tex and ".." not in tex.replace(r"\dots", "")
    assert r"\caption{Leaderboard.}" in lines
    assert r"\toprule" in lines and r"\midrule" in lines and r"\bottomrule" in lines
    assert all(line.startswith("%") for line in lines if "RankLab" in line or "conventions" in line)
    note = next(line for line in lines if line.startswith(r"\par\smallskip{\footnotesize"))
    assert r"$\star$ best mean" in note and note.endswith("n = 30.}")
    # the best cell is bold with the star in superscript; the hostile name is escaped
    assert re.search(r"\\textbf\{[0-9.]+\}\\textsuperscript\{\$\\star\$\*?\}", tex)
    assert r"x\_1 \& 50\% \$y\$ \#2 \{z\}" in tex and r"\input{" not in tex


@pytest.mark.slow  # runs pdflatex (the README's quick tier leaves it out)
@pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended)",
)
def test_the_shared_latex_export_compiles_with_pdflatex(tmp_path):
    board, title = _board_title()
    tables = [
        format_table(
            leaderboard_grid(board),
            "latex",
            prov=provenance({"ties": "trec_eval"}),
            title=title,
            index=False,
        ),
        format_table(_random_frame(0), "latex", title="Per query: " + HOSTILE + ".", index=False),
        format_table(leaderboard_long(board), "latex", title="Long.", index=False),
    ]
    doc = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + "\n".join(tables)
        + "\n\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0
    log = (tmp_path / "t.log").read_text(errors="replace")
    assert "Missing character" not in log


def test_long_format_has_no_rows_of_nan_and_says_why():
    board, _ = _board_title()
    board.loc[len(board)] = {**board.iloc[-1].to_dict(), "run": "empty", "mean": np.nan}
    long = leaderboard_long(board)
    assert long["mean"].notna().all() and long.attrs["dropped"] == [("empty", "RR")]
    assert "empty (RR)" in long.attrs["note"] and "reference" in long.attrs["note"]
    for fmt in ("markdown", "latex", "table"):
        assert not JUNK.search(format_table(long, fmt, index=False))


def _sample_evaluations(measures):
    qrels = mc.read_qrels(str(SAMPLE / "qrels.txt"))
    evs = []
    for name in ("bm25", "dense", "hybrid"):
        ev = mc.evaluate(qrels, mc.read_run(str(SAMPLE / f"{name}.txt")), measures)
        ev = ev.renamed(name)
        evs.append(ev)
    return evs


def test_html_report_legend_matches_its_tables_and_small_p_values():
    idx = pd.Index([f"q{i}" for i in range(40)], name="query_id")
    rng = np.random.default_rng(3)
    base = pd.DataFrame({"AP": rng.random(40) * 0.5}, index=idx)
    evs = [RunValues("base", base), RunValues("far", base + 0.4 + rng.normal(0, 0.01, (40, 1)))]
    text = comparison_report(evs, "base", ["AP"], n_permutations=20000, plotly_js=None)
    assert "in parentheses" not in text  # the table has a delta column, no parentheses
    assert "&lt; 0.0001" in text and "0.0000" not in text
    assert not JUNK.search(re.sub(r"<[^>]+>", " ", text))
    assert "Holm correction over the one comparison of this table" in text


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_p_value_columns_print_small_values_as_below_the_floor(fmt):
    frame = pd.DataFrame(
        {
            "run": ["a", "b", "c"],
            "p_corrected_t": [2e-43, 0.1888, np.nan],
            "precision": [1e-9, 0.5, 0.25],
        }
    )
    text = format_table(frame, fmt, index=False)
    floor = (
        r"\textless{} 0.0001"
        if fmt == "latex"
        else ("&lt; 0.0001" if fmt == "markdown" else "< 0.0001")
    )
    assert floor in text and "0.1888" in text
    assert "0.0000" in text  # a measure that small is a value, not a p-value: printed as is
    assert text.count("0.0001") == 1
