"""The self-contained HTML report: library (no plotly import), escaping, CLI command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

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
        out.append(SimpleNamespace(run_name=n, per_query=pq, measures=["AP"],
                                   aggregate={"AP": float(pq["AP"].mean())}))
    return out


def test_report_escapes_names_and_inlines_plotly():
    js = plotly_js_source()
    assert js is not None and "plotly" in js[:500].lower()
    text = comparison_report(_evs(), "base", ["AP"], n_permutations=200, plotly_js=js,
                             data={"qrels <q>.txt": data_digest(b"x")})
    assert "<script>alert(1)</script>" not in text.replace(js, "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<\\/script>" in text  # the name inside the figure JSON cannot close the script
    assert text.count("Plotly.newPlot(") == 2  # means + one Δ figure
    assert "qrels &lt;q&gt;.txt" in text and "Versions" in text and "Conventions and settings" in text


def test_report_without_plotly_js_is_tables_only():
    text = comparison_report(_evs(("a", "b")), None, ["AP"], n_permutations=200, plotly_js=None)
    assert "Plotly.newPlot" not in text and "Figures left out" in text
    assert "a (baseline)" in text


def test_report_module_imports_neither_plotly_nor_streamlit():
    code = ("import sys, metrics_core.report.html, metrics_core.cli.report; "
            "print(any(m.split('.')[0] in ('plotly', 'streamlit') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_report(tmp_path, capsys):
    assert "report" in COMMANDS
    out = tmp_path / "r.html"
    args = ["report", "--qrels", str(SAMPLE / "qrels.txt"), "--baseline", "bm25", "-m", "AP,RR",
            "--permutations", "300", "-o", str(out), "--quiet"]
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
