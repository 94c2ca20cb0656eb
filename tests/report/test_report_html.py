"""The self-contained HTML report: library (no plotly import), escaping, CLI command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from metrics_core.cli import COMMANDS, main
from metrics_core.report.html import comparison_report, data_digest, plotly_js_source

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "ranking"


def _evs(names=("base", "<script>alert(1)</script>")):
    rng = np.random.default_rng(1)
    idx = pd.Index([f"q{i}" for i in range(20)], name="query_id")
    out = []
    for i, n in enumerate(names):
        pq = pd.DataFrame({"AP": np.clip(rng.random(20) + 0.1 * i, 0, 1)}, index=idx)
        out.append(
            SimpleNamespace(
                run_name=n, per_query=pq, measures=["AP"], aggregate={"AP": float(pq["AP"].mean())}
            )
        )
    return out


def test_report_escapes_names_and_inlines_plotly():
    js = plotly_js_source()
    assert js is not None and "plotly" in js[:500].lower()
    text = comparison_report(
        _evs(),
        "base",
        ["AP"],
        n_permutations=200,
        plotly_js=js,
        data={"qrels <q>.txt": data_digest(b"x")},
    )
    assert "<script>alert(1)</script>" not in text.replace(js, "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<\\/script>" in text  # the name inside the figure JSON cannot close the script
    assert text.count("Plotly.newPlot(") == 2  # means + one Δ figure
    assert (
        "qrels &lt;q&gt;.txt" in text and "Versions" in text and "Conventions and settings" in text
    )


def test_report_without_plotly_js_is_tables_only():
    text = comparison_report(_evs(("a", "b")), None, ["AP"], n_permutations=200, plotly_js=None)
    assert "Plotly.newPlot" not in text and "Figures left out" in text
    assert "a (baseline)" in text


def test_report_module_imports_neither_plotly_nor_streamlit():
    code = (
        "import sys, metrics_core.report.html, metrics_core.cli.report; "
        "print(any(m.split('.')[0] in ('plotly', 'streamlit') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_cli_report(tmp_path, capsys):
    assert "report" in COMMANDS
    out = tmp_path / "r.html"
    args = [
        "report",
        "--qrels",
        str(SAMPLE / "qrels.txt"),
        "--baseline",
        "bm25",
        "-m",
        "AP,RR",
        "--permutations",
        "300",
        "-o",
        str(out),
        "--quiet",
    ]
    for n in ("bm25", "dense", "hybrid"):
        args += ["--run", str(SAMPLE / f"{n}.txt")]
    assert main(args) == 0
    text = out.read_text()
    assert "bm25 (baseline)" in text and "n = 48" in text and "Plotly.newPlot" in text
    assert data_digest((SAMPLE / "qrels.txt").read_bytes()) in text
    assert main([*args[:-2], "--queries", "qrels", "-o", str(out), "--quiet"]) == 0
    assert "n = 50" in out.read_text()
    assert main([*args[:4], "nope", *args[5:]]) == 2
    assert "nope" in capsys.readouterr().err


# -- the report in Spanish ----------------------------------------------------------------

#: English words of the report's own text (headings, headers, legends, notes, settings).
ENGLISH = (
    "RankLab report",
    "Leaderboard",
    "Figures",
    "Every run against",
    "Each run on its own",
    "Conventions and settings",
    "Versions",
    "Data<",
    "Baseline mean",
    "Run mean",
    "Queries",
    "Significant",
    "Setting",
    "Input",
    "Digest",
    "corrected",
    "best mean",
    "significantly",
    "percentile ",
    "Markers",
    "Made ",
    "baseline",
    "not embedded",
    "query set",
    "test for the markers",
    "permutations",
    "bootstrap resamples",
    "confidence",
    "seed",
    "Mean of each measure",
    "difference from the baseline",
    " vs ",
    "randomization test",
    "Holm correction",
    "comparisons",
    "answered",
    "W / T / L",
    "CI:",
    "95% CI",
    " to ",
    "Run<",
    "Measure<",
    "(as trec_eval",
    "sums for counts",
    " runs,",
    "Value<",
    "Convention<",
)


def _visible(page: str, js: str | None = None) -> str:
    """The page without plotly.js, CSS and tags: the text a reader sees (figure titles
    and axis titles stay: they are inside the figures' JSON)."""
    import re

    if js:
        page = page.replace(js, "")
    page = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    return re.sub(r"<(?!/?(?:td|th)\b)[^>]+>", " ", page)


def _spanish(**kw):
    from metrics_core.report.catalogs import translations

    tr = translations("es")
    return comparison_report(
        _evs(("base", "<b>x</b>")),
        "base",
        ["AP"],
        n_permutations=200,
        gettext=tr.gettext,
        ngettext=tr.ngettext,
        lang="es",
        data={"qrels <q>.txt": data_digest(b"x")},
        **kw,
    )


def test_the_report_in_spanish_has_no_english_word_left():
    js = plotly_js_source()
    page = _spanish(plotly_js=js, conventions={"missing_queries": "skip", "depth": None})
    assert page.startswith('<!DOCTYPE html><html lang="es">')
    shown = _visible(page, js)
    left = [w for w in ENGLISH if w in shown]
    assert left == []
    for spanish in (
        "Reporte de RankLab",
        "Clasificación",
        "Cada ejecución frente a base",
        "Convenciones y ajustes",
        "Versiones",
        "Media de la línea base",
        "Significativo",
        "p aleatorización (corregido)",
        "IC 95%",
        "base (línea base)",
        "2 ejecuciones, línea base base",
        "Gráficos",
        "Media de cada medida con su intervalo",
        "AP: diferencia con la línea base",
        '"media"',
        "mejor media de la medida",
        "Huella (SHA-256",
    ):
        assert spanish in shown, spanish
    assert json.dumps("Δ AP frente a base") in page  # the Δ figure's axis title, in its JSON
    # names stay escaped and canonical; no depth cut reads "todo", never "None"
    assert "<b>x</b>" not in page.replace(js, "") and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "qrels &lt;q&gt;.txt" in page and "None" not in shown and "todo" in shown


def test_the_report_without_plotly_says_so_in_spanish():
    shown = _visible(_spanish(plotly_js=None))
    assert "Sin gráficos: plotly no está instalado" in shown and "no incluido" in shown
    assert [w for w in ENGLISH if w in shown] == []


def test_the_english_report_is_unchanged_by_default_and_shows_rr_as_mrr():
    text = comparison_report(_evs(("a", "b")), None, ["AP"], n_permutations=200, plotly_js=None)
    assert (
        text.startswith('<!DOCTYPE html><html lang="en">')
        and "<title>RankLab report</title>" in text
    )
    for english in (
        "Leaderboard",
        "Every run against a",
        "Conventions and settings",
        "a (baseline)",
        "95% CI",
        "Baseline mean",
        "p randomization (corrected)",
        "W / T / L",
        "2 runs, baseline a",
        "★ best mean of the measure.",
    ):
        assert english in text, english
    rng = np.random.default_rng(3)
    idx = pd.Index([f"q{i}" for i in range(12)], name="query_id")
    evs = [
        SimpleNamespace(
            run_name=n,
            per_query=pd.DataFrame({"RR": rng.random(12)}, index=idx),
            measures=["RR"],
            aggregate={"RR": 0.5},
        )
        for n in ("a", "b")
    ]
    shown = _visible(comparison_report(evs, "a", ["RR"], n_permutations=100, plotly_js=None))
    # one name per measure, as in the app: the canonical one (the thesis table alone says MRR)
    assert "<th>RR</th>" in shown and "<td>RR</td>" in shown and "MRR" not in shown


def test_cli_report_in_spanish(tmp_path):
    out = tmp_path / "r.html"
    args = [
        "report",
        "--qrels",
        str(SAMPLE / "qrels.txt"),
        "--baseline",
        "bm25",
        "-m",
        "AP,RR",
        "--permutations",
        "200",
        "--run",
        str(SAMPLE / "bm25.txt"),
        "--run",
        str(SAMPLE / "dense.txt"),
        "-o",
        str(out),
        "--quiet",
        "--lang",
        "es",
    ]
    assert main(args) == 0
    text = out.read_text(encoding="utf-8")
    js = plotly_js_source()
    shown = _visible(text, js)
    assert '<html lang="es">' in text and "<title>Reporte de RankLab</title>" in text
    assert "bm25 (línea base)" in shown and "ejecución dense (dense.txt)" in shown and "RR" in shown
    assert [w for w in ENGLISH if w in shown] == []
    assert main([*args[:-2], "--title", "Mi <informe>"]) == 0  # a given title is kept, escaped
    assert "<title>Mi &lt;informe&gt;</title>" in out.read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as exc:  # no such language: argparse's usage error
        main([*args[:-1], "fr"])
    assert exc.value.code == 2


def _three_runs():
    evs = _evs(("base", "<b>x</b>", "strong"))
    # a run clearly better than the others on every query: it beats both
    evs[2].per_query["AP"] = np.clip(evs[2].per_query["AP"] + 0.6, 0, 1)
    evs[2].aggregate["AP"] = float(evs[2].per_query["AP"].mean())
    return evs


def test_the_report_holds_the_all_pairs_table_as_the_comparison_formats_it():
    from metrics_core.report.all_pairs import compare_all_pairs

    evs = _three_runs()
    page = comparison_report(evs, "base", ["AP"], n_permutations=200, plotly_js=None)
    expected = compare_all_pairs(evs, measures=["AP"], n_permutations=200).to_html()
    assert "<h2>Every run against every other</h2>" + expected in page
    # the strong run (c) beats a and b: its mean carries both letters
    assert "<td>(c) strong</td>" in page and "<sup>ab</sup>" in expected
    # names are text: the markup in a run name is escaped, never rendered
    assert "<b>x</b>" not in page and "(b) &lt;b&gt;x&lt;/b&gt;" in page
    # two runs: the baseline table says it all; asked for, the table is there
    two = comparison_report(evs[:2], "base", ["AP"], n_permutations=200, plotly_js=None)
    assert "Every run against every other" not in two
    asked = comparison_report(
        evs[:2], "base", ["AP"], n_permutations=200, plotly_js=None, all_pairs=True
    )
    assert "<h2>Every run against every other</h2>" in asked


def test_the_all_pairs_table_of_the_spanish_report_is_in_spanish():
    from metrics_core.report.catalogs import translations

    tr = translations("es")
    page = comparison_report(
        _three_runs(),
        "base",
        ["AP"],
        n_permutations=200,
        plotly_js=None,
        gettext=tr.gettext,
        ngettext=tr.ngettext,
        lang="es",
    )
    assert "<h2>Cada ejecución frente a todas las demás</h2>" in page
    assert "<th>ejecución</th><th>AP</th>" in page
    shown = _visible(page)
    assert [w for w in ENGLISH if w in shown] == []
