"""The comparative (thesis) table: numbers equal mc.evaluate's, labels at the thresholds'
boundaries, the date filter, significance, and its CSV / Markdown / LaTeX / HTML exports."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.data import Run
from metrics_core.errors import InputError
from metrics_core.io.metadata import read_metadata
from metrics_core.report.thesis import Grading, dated_queries, display_measure, thesis_table
from metrics_core.report.thesis_export import (
    localized_words,
    to_csv,
    to_html,
    to_latex,
    to_markdown,
)
from metrics_core.stats.power import paired_power
from metrics_core.stats.significance import correct_pvalues, paired_t_test, paired_values

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "ranking"
MEASURES = ["MRR", "nDCG@10", "P@5", "AP", "RR@10"]


def _random_case(seed: int, n_queries: int = 40, n_runs: int = 3):
    """Qrels and runs with tied scores, graded labels, a query a run did not answer."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, []
    for q in range(n_queries):
        docs = [f"d{d}" for d in rng.choice(60, size=25, replace=False)]
        qrels[f"q{q:03d}"] = {d: int(rng.integers(0, 3)) for d in docs[:15]}
    for r in range(n_runs):
        qs, ds, ss = [], [], []
        for q in qrels:
            if r == 1 and q == "q003":
                continue  # a query this run did not answer
            for d in rng.choice(60, size=20, replace=False):
                qs.append(q)
                ds.append(f"d{d}")
                ss.append(float(rng.integers(0, 5)))  # few distinct scores: many ties
        runs.append(Run(qs, ds, ss, name=f"run{r}"))
    return qrels, runs


def _metadata(queries, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2025-01-01") + pd.to_timedelta(
        rng.integers(0, 120, len(queries)), unit="D"
    )
    meta = pd.DataFrame({"date": days}, index=pd.Index(list(queries), name="query_id"))
    meta.iloc[0, 0] = pd.NaT  # an undated query
    return meta


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_are_mc_evaluate_aggregates(seed):
    qrels, runs = _random_case(seed)
    evs = [mc.evaluate(qrels, r, MEASURES) for r in runs]
    table = thesis_table(evs, MEASURES)
    assert table.measures == ["RR", "nDCG@10", "P@5", "AP", "RR@10"]
    for ev in evs:
        assert table.values.loc[ev.run_name].tolist() == [ev.aggregate[m] for m in table.measures]
        assert table.n_queries[ev.run_name] == len(ev.per_query)


@pytest.mark.parametrize("seed", [3, 4])
def test_date_filter_equals_evaluating_the_kept_queries(seed):
    qrels, runs = _random_case(seed)
    meta = _metadata(qrels, seed)
    evs = [mc.evaluate(qrels, r, MEASURES) for r in runs]
    table = thesis_table(evs, MEASURES, metadata=meta, date_from="2025-02-01", date_to="2025-03-15")
    dates = meta["date"]
    kept = set(dates.index[(dates >= "2025-02-01") & (dates <= "2025-03-15")])
    assert 0 < len(kept) < len(qrels)
    sub_qrels = {q: v for q, v in qrels.items() if q in kept}
    for run in runs:
        mask = np.isin(run.query_ids, list(kept))
        sub = Run(
            np.asarray(run.query_ids)[mask],
            np.asarray(run.doc_ids)[mask],
            np.asarray(run.scores)[mask],
            name=run.name,
        )
        expected = mc.evaluate(sub_qrels, sub, MEASURES)
        assert table.values.loc[run.name].tolist() == [
            expected.aggregate[m] for m in table.measures
        ]
        assert table.n_queries[run.name] == len(expected.per_query)
    assert table.undated == [meta.index[0]]
    assert (table.date_from, table.date_to) == ("2025-02-01", "2025-03-15")


def test_date_range_is_inclusive_whole_days():
    meta = pd.DataFrame(
        {
            "date": [
                pd.Timestamp("2025-01-01"),
                pd.Timestamp("2025-01-31 18:30"),
                pd.Timestamp("2025-02-01"),
                pd.NaT,
            ]
        },
        index=["a", "b", "c", "d"],
    )
    assert dated_queries(meta, "2025-01-01", "2025-01-31").tolist() == ["a", "b"]
    assert dated_queries(meta, None, "2025-01-01").tolist() == ["a"]
    assert dated_queries(meta, "2025-02-01", None).tolist() == ["c"]
    with pytest.raises(InputError, match="starts after it ends"):
        dated_queries(meta, "2025-03-01", "2025-01-01")
    with pytest.raises(InputError, match="not a date"):
        dated_queries(meta, "yesterday-ish", None)
    with pytest.raises(InputError, match="'date' column"):
        dated_queries(meta.rename(columns={"date": "when"}), "2025-01-01")


def test_a_range_with_no_query_is_an_error():
    frames = {"a": pd.DataFrame({"RR": [1.0]}, index=["q1"])}
    meta = pd.DataFrame({"date": ["2025-01-01"]}, index=["q1"])
    with pytest.raises(InputError, match="no evaluated query is dated"):
        thesis_table(frames, ["RR"], metadata=meta, date_from="2026-01-01")


def _single(values: dict) -> pd.DataFrame:
    return pd.DataFrame({m: [v] for m, v in values.items()}, index=["q1"])


def test_labels_at_the_boundaries_are_inclusive():
    rows = {
        "at": _single({"RR": 0.7, "nDCG@10": 0.6, "P@5": 0.5}),
        "fair_at": _single({"RR": 0.35, "nDCG@10": 0.3, "P@5": 0.25}),
        "below": _single({"RR": np.nextafter(0.35, 0), "nDCG@10": 0.6, "P@5": 0.5}),
        "just_below_good": _single({"RR": np.nextafter(0.7, 0), "nDCG@10": 0.6, "P@5": 0.5}),
    }
    t = thesis_table(rows, ["MRR", "nDCG@10", "P@5"])
    assert t.levels.loc["at"].tolist() == [0, 0, 0] and t.row_levels["at"] == 0
    assert t.levels.loc["fair_at"].tolist() == [1, 1, 1]
    assert t.levels.loc["below"].tolist() == [2, 0, 0] and t.row_levels["below"] == 2
    assert t.levels.loc["just_below_good"].tolist() == [1, 0, 0]
    assert [t.grading.name(t.row_levels[r]) for r in rows] == [
        "Good",
        "Fair",
        "Needs improvement",
        "Fair",
    ]


def test_the_specifications_example_table():
    """The semantic-search panel's example: three evaluations, summary Acceptable."""
    rows = {
        "1": _single({"RR": 0.833, "nDCG@10": 0.72, "P@5": 0.60}),
        "2": _single({"RR": 1.0, "nDCG@10": 0.85, "P@5": 0.80}),
        "3": _single({"RR": 0.25, "nDCG@10": 0.41, "P@5": 0.20}),
    }
    _words, names, verdicts = localized_words("es")
    t = thesis_table(
        rows, ["MRR", "nDCG@10", "P@5"], grading=Grading.from_good(names=names, verdicts=verdicts)
    )
    assert [t.grading.name(t.row_levels[r]) for r in rows] == ["Bueno", "Bueno", "Mejorable"]
    assert [round(v, 2) for v in t.summary] == [0.69, 0.66, 0.53]
    assert [t.grading.name(v) for v in t.summary_levels] == ["Regular", "Bueno", "Bueno"]
    assert t.grading.name(t.verdict, verdict=True) == "Aceptable"


def test_names_and_thresholds_are_editable():
    g = Grading(
        {"MRR": (0.9, 0.8), "P@5": (0.1, 0.0)}, names=("A", "B", "C"), verdicts=("X", "Y", "Z")
    )
    t = thesis_table(
        {"r": _single({"RR": 0.85, "P@5": 0.05, "AP": 0.3})}, ["RR", "P@5", "AP"], grading=g
    )
    assert t.levels.loc["r"].tolist() == [1, 1, -1]
    assert to_csv(t).splitlines()[1].endswith(",B")
    assert to_csv(t).splitlines()[2].endswith(",Y")
    for bad in ({"RR": (0.3, 0.5)}, {"RR": (float("nan"), 0.1)}, {"RR": "x"}):
        with pytest.raises(InputError):
            Grading(bad)
    with pytest.raises(InputError, match="three"):
        Grading({}, names=("a", "b"))


def test_significance_against_the_baseline():
    qrels, runs = _random_case(7)
    evs = [mc.evaluate(qrels, r, ["MRR", "P@5"]) for r in runs]
    t = thesis_table(evs, ["MRR", "P@5"], baseline="run0", correction="holm")
    raw = [
        paired_t_test(*paired_values(evs[0].per_query[m], ev.per_query[m])[:2])
        for ev in evs[1:]
        for m in ("RR", "P@5")
    ]
    assert (
        t.pvalues.loc[["run1", "run2"]].to_numpy().ravel().tolist()
        == correct_pvalues(raw, "holm").tolist()
    )
    assert t.pvalues.loc["run0"].isna().all() and t.n_comparisons == 4
    with pytest.raises(InputError, match="no run named"):
        thesis_table(evs, ["MRR"], baseline="nope")


def test_how_many_queries_against_the_baseline():
    """With a baseline, each (run, measure) comparison's topic set size figures: those of
    the paired comparison on the common queries (stats.power), power 0.8 at the table's alpha;
    none without a baseline."""
    qrels, runs = _random_case(7)
    evs = [mc.evaluate(qrels, r, ["MRR", "P@5"]) for r in runs]
    t = thesis_table(evs, ["MRR", "P@5"], baseline="run0")
    assert list(t.power[["run", "measure"]].itertuples(index=False, name=None)) == [
        ("run1", "RR"),
        ("run1", "P@5"),
        ("run2", "RR"),
        ("run2", "P@5"),
    ]
    for row in t.power.itertuples():
        b, r, _ = paired_values(
            evs[0].per_query[row.measure], evs[int(row.run[-1])].per_query[row.measure]
        )
        want = paired_power(b, r, 0.05, 0.8)
        assert row.n_queries == len(b) and row.mean_delta == float(np.mean(r - b))
        for k in ("sd_delta", "queries_needed", "min_detectable"):
            assert getattr(row, k) == want[k] or (np.isnan(want[k]) and np.isnan(getattr(row, k)))
    assert t.power_settings == {"power": 0.8, "alpha": 0.05, "delta": None, "method": "exact"}
    assert thesis_table(evs, ["MRR"], baseline="run0", power=0.9).power_target == 0.9
    assert thesis_table(evs, ["MRR"]).power is None
    with pytest.raises(InputError, match="power"):
        thesis_table(evs, ["MRR"], baseline="run0", power=1.5)


def _sample_table(**kw):
    qrels = mc.read_qrels(str(SAMPLE / "qrels.txt"))
    evs = [
        mc.evaluate(qrels, mc.read_run(str(SAMPLE / f"{n}.txt")), ["MRR", "nDCG@10", "P@5"])
        for n in ("bm25", "dense", "hybrid")
    ]
    return thesis_table(evs, **kw)


def test_csv_round_trip_in_shortest_form():
    t = _sample_table(baseline="bm25")
    text = to_csv(t)
    assert not any(line.startswith("#") for line in text.splitlines())
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [
        "Run",
        "Queries",
        "MRR",
        "MRR label",
        "nDCG@10",
        "nDCG@10 label",
        "P@5",
        "P@5 label",
        "p (MRR)",
        "p (nDCG@10)",
        "p (P@5)",
        "Interpretation",
    ]
    for row, run in zip(rows[1:4], t.runs, strict=True):
        assert row[0] == run and int(row[1]) == t.n_queries[run]
        assert [float(row[i]) for i in (2, 4, 6)] == t.values.loc[run].tolist()
        assert all(row[i] == repr(float(row[i])) for i in (2, 4, 6))
    assert rows[4][0] == "Summary" and [float(rows[4][i]) for i in (2, 4, 6)] == t.summary.tolist()
    two = thesis_table({"x": _single({"P@5": 0.2})}, ["P@5"])
    assert to_csv(two).splitlines()[1] == "x,1,0.2,Needs improvement,Needs improvement"


def test_csv_cells_are_never_formulas():
    frames = {'=HYPERLINK("x")': _single({"RR": 0.5}), "-cmd": _single({"RR": 0.25})}
    rows = list(csv.reader(io.StringIO(to_csv(thesis_table(frames, ["MRR"])))))
    assert [r[0] for r in rows[1:3]] == ['\'=HYPERLINK("x")', "'-cmd"]
    assert float(rows[1][2]) == 0.5


def test_spanish_words_in_every_export():
    words, names, verdicts = localized_words("es")
    t = _sample_table(grading=Grading.from_good(names=names, verdicts=verdicts), baseline="bm25")
    assert to_csv(t, words).startswith("Ejecución,Consultas,MRR,Etiqueta de MRR")
    assert "Resumen** (3 ejecuciones)" in to_markdown(t, words)
    assert "prueba t pareada" in to_html(t, words)
    assert "Tabla comparativa: 3 ejecuciones, 50 consultas." in to_latex(t, words)


HOSTILE = ["a_b&c%d$e#f{g}h~i^j\\k", "★ best <b>|x|</b>", "Ejecución ñ"]


def _hostile_table():
    frames = {
        name: pd.DataFrame(
            {"RR": [0.5 + i / 10, 0.9], "P@5": [0.4, 0.6 - i / 10]}, index=["q1", "q2"]
        )
        for i, name in enumerate(HOSTILE)
    }
    return thesis_table(frames, ["MRR", "P@5"], baseline=HOSTILE[0])


def test_latex_escapes_hostile_names_and_stays_ascii():
    tex = to_latex(_hostile_table())
    assert tex.isascii()
    assert r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k" in tex
    assert (
        r"{[}U+2605{]} best \textless{}b\textgreater{}\textbar{}x\textbar{}\textless{}/b\textgreater{}"
        in tex
    )
    assert r"Ejecuci\'{o}n \~{n}" in tex
    assert "\\toprule" in tex and "\\bottomrule" in tex and "★" not in tex


def test_the_best_value_of_each_column_is_bold_and_ties_share_it():
    t = _hostile_table()
    tex = to_latex(t)
    bold = re.findall(r"\\textbf\{([0-9.]+)\}", tex)
    assert bold == ["0.5000", "0.8000"]  # P@5 of the first run, MRR of the third
    frames = {"a": _single({"P@5": 0.4}), "b": _single({"P@5": 0.4}), "c": _single({"P@5": 0.2})}
    assert to_latex(thesis_table(frames, ["P@5"])).count("\\textbf{0.4000}") == 2


def test_markdown_and_html_escape_names():
    t = _hostile_table()
    md = to_markdown(t)
    # HTML as entities (the one escaper, markdown_escape; was backslash-escaped before)
    assert "★ best &lt;b&gt;\\|x\\|&lt;/b&gt;" in md and "<b>" not in md
    # the significance note names the baseline escaped too (it was left raw before); "$" too
    # (GitHub's Markdown reads $...$ as math)
    assert (
        md.splitlines()[-1]
        == "\\* p &lt; 0.05 against a\\_b&amp;c%d\\$e#f{g}h\\~i^j\\\\k (paired t-test; "
        "Holm correction over 4 comparisons)"
    )
    assert all(
        line.count("|") - line.count("\\|") == 6 for line in md.splitlines() if line.startswith("|")
    )
    page = to_html(t)
    assert (
        "<b>" not in page
        and "&lt;b&gt;|x|&lt;/b&gt;" in page
        and "a_b&amp;c%d$e#f{g}h~i^j\\k" in page
    )


@pytest.mark.slow  # runs pdflatex (the README's quick tier leaves it out)
@pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="pdflatex is not installed (apt-get install texlive-latex-base "
    "texlive-latex-recommended)",
)
def test_the_latex_table_compiles_with_pdflatex(tmp_path):
    words, names, verdicts = localized_words("es")
    spanish = _sample_table(
        grading=Grading.from_good(names=names, verdicts=verdicts), baseline="bm25"
    )
    doc = (
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
        "\\begin{document}\n"
        + to_latex(_hostile_table())
        + to_latex(spanish, words, label="tab:es")
        + "\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="ascii")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_display_names():
    assert [display_measure(m) for m in ("RR", "RR@10", "RR(rel=2)", "nDCG@10", "RRx")] == [
        "MRR",
        "MRR@10",
        "MRR(rel=2)",
        "nDCG@10",
        "RRx",
    ]


def _cli(capsys, *args) -> tuple[int, str, str]:
    status = main(
        [
            "table",
            "--quiet",
            "--qrels",
            str(SAMPLE / "qrels.txt"),
            *[a for n in ("bm25", "dense", "hybrid") for a in ("--run", str(SAMPLE / f"{n}.txt"))],
            *args,
        ]
    )
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_gives_the_library_table(capsys):
    status, out, _ = _cli(capsys, "--format", "csv", "--baseline", "bm25")
    assert status == 0
    assert out == to_csv(_sample_table(baseline="bm25"))


def test_cli_in_spanish_with_dates_and_thresholds(capsys):
    meta = read_metadata(str(SAMPLE / "queries.csv"), "queries.csv")
    status, out, _ = _cli(
        capsys,
        "--lang",
        "es",
        "--format",
        "csv",
        "--metadata",
        str(SAMPLE / "queries.csv"),
        "--from",
        "2025-01-01",
        "--to",
        "2025-02-28",
        "--good",
        "MRR=0.65",
        "--fair",
        "MRR=0.6",
        "--good",
        "P@5=0.3",
        "--names",
        "Alto,Medio,Bajo",
    )
    assert status == 0
    words, _n, verdicts = localized_words("es")
    qrels = mc.read_qrels(str(SAMPLE / "qrels.txt"))
    evs = [
        mc.evaluate(qrels, mc.read_run(str(SAMPLE / f"{n}.txt")), ["MRR", "nDCG@10", "P@5"])
        for n in ("bm25", "dense", "hybrid")
    ]
    expected = thesis_table(
        evs,
        metadata=meta,
        date_from="2025-01-01",
        date_to="2025-02-28",
        grading=Grading(
            {"RR": (0.65, 0.6), "P@5": (0.3, 0.15)},
            names=("Alto", "Medio", "Bajo"),
            verdicts=verdicts,
        ),
    )
    assert out == to_csv(expected, words)
    assert "Medio" in out and "Regular" not in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--from", "2025-01-01"], "need --metadata"),
        (["--metadata", str(SAMPLE / "queries.csv"), "--from", "someday"], "not a date"),
        (["--fair", "MRR=0.1", "--good", "P@5=0.3"], "no --good threshold"),
        (["--good", "MRR=0.2", "--fair", "MRR=0.5"], "good >= fair"),
        (["--baseline", "nope"], "no run named"),
    ],
)
def test_cli_bad_input_is_one_line(capsys, args, message):
    status, out, err = _cli(capsys, *args)
    assert status == 2 and out == "" and message in err and "Traceback" not in err


def test_cli_rejects_a_malformed_threshold(capsys):
    with pytest.raises(SystemExit) as exc:
        _cli(capsys, "--good", "MRR")
    assert exc.value.code == 2 and "MEASURE=VALUE" in capsys.readouterr().err


def test_a_run_without_queries_in_the_range_shows_a_dash_never_nan():
    frames = {
        "a": pd.DataFrame({"RR": [1.0, 0.5]}, index=["q1", "q2"]),
        "b": pd.DataFrame({"RR": [0.25]}, index=["q3"]),
    }
    meta = pd.DataFrame(
        {"date": pd.to_datetime(["2025-01-01", "2025-01-02", "2025-05-01"])},
        index=["q1", "q2", "q3"],
    )
    t = thesis_table(frames, ["MRR"], metadata=meta, date_to="2025-01-31", baseline="a")
    assert t.n_queries.tolist() == [2, 0] and np.isnan(t.values.at["b", "RR"])
    assert t.summary["RR"] == 0.75 and t.levels.at["b", "RR"] == -1
    for export in (to_csv, to_markdown, to_latex, to_html):
        text = export(t)
        assert not re.search(r"nan|None", text, re.I), export.__name__
    assert (
        "b,0,," in to_csv(t)
        and "| b | 0 | \u2013 |" in to_markdown(t)
        and "b & 0 & -- &" in to_latex(t)
    )


def _dated_table(lang: str, baseline):
    words, names, verdicts = localized_words(lang)
    meta = read_metadata(str(SAMPLE / "queries.csv"), "queries.csv")
    qrels = mc.read_qrels(str(SAMPLE / "qrels.txt"))
    evs = [
        mc.evaluate(qrels, mc.read_run(str(SAMPLE / f"{n}.txt")), ["MRR", "nDCG@10", "P@5"])
        for n in ("bm25", "dense", "hybrid")
    ]
    table = thesis_table(
        evs,
        baseline=baseline,
        metadata=meta,
        date_from="2024-10-01",
        date_to="2025-02-28",
        grading=Grading.from_good(names=names, verdicts=verdicts),
    )
    return table, words


def test_the_latex_table_names_its_packages_and_keeps_dates_whole():
    """What the compiled test below also checks in the file itself, without pdflatex (so the
    README's quick tier keeps it): the first line names the packages, and the caption's
    dates are whole boxes that cannot break at a hyphen."""
    for lang, baseline in [(lg, b) for lg in ("en", "es") for b in (None, "bm25")]:
        table, words = _dated_table(lang, baseline)
        tex = to_latex(table, words, label="tab:dates")
        assert (
            tex.splitlines()[0]
            == "% Needs \\usepackage{booktabs} and \\usepackage{graphicx} in the preamble."
        ), (lang, baseline)
        assert "\\mbox{2024-10-01}" in tex and "\\mbox{2025-02-28}" in tex, (lang, baseline)


@pytest.mark.slow  # runs pdflatex (the README's quick tier leaves it out)
@pytest.mark.skipif(
    shutil.which("pdflatex") is None or shutil.which("kpsewhich") is None,
    reason="pdflatex is not installed (apt-get install texlive-latex-base "
    "texlive-latex-recommended)",
)
@pytest.mark.parametrize("paper", ["a4paper,margin=2.5cm", "letterpaper,margin=1in", ""])
def test_the_latex_table_fits_the_text_width_and_keeps_dates_whole(tmp_path, paper):
    """The default three measures, with and without a baseline, in both languages, on A4
    with 2.5 cm margins, on letter, and in the article class's own narrow text block: the
    log has no overfull box (the table used to be 90-200 pt too wide), the file names its
    packages, and the caption's dates cannot break at a hyphen."""
    if paper and not subprocess.run(["kpsewhich", "geometry.sty"], capture_output=True).stdout:
        pytest.skip("the geometry package is not installed")
    body = []
    for i, (lang, baseline) in enumerate([(lg, b) for lg in ("en", "es") for b in (None, "bm25")]):
        table, words = _dated_table(lang, baseline)
        tex = to_latex(table, words, label=f"tab:{i}")
        assert (
            tex.splitlines()[0]
            == "% Needs \\usepackage{booktabs} and \\usepackage{graphicx} in the preamble."
        )
        assert "\\mbox{2024-10-01}" in tex and "\\mbox{2025-02-28}" in tex
        body.append(tex)
    pre = "\\documentclass{article}\n" + (f"\\usepackage[{paper}]{{geometry}}\n" if paper else "")
    doc = (
        pre + "\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
        "\\begin{document}\n" + "".join(body) + "\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="ascii")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    log = (tmp_path / "t.log").read_text(errors="replace")
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox[^\n]*", log)
    assert (tmp_path / "t.aux").read_text().count("\\newlabel{tab:") == 4
