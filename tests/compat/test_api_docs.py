"""The API reference (docs/, Sphinx autodoc) builds from the docstrings without a warning,
and it documents the public API, the conventions and the drop-ins."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")

# a Sphinx build (the README's quick tier leaves it out)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_api_reference_builds_with_warnings_as_errors(tmp_path):
    out = tmp_path / "html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            str(ROOT / "docs"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    api = (out / "api.html").read_text(encoding="utf-8")
    assert "metrics_core.evaluate" in api and "ties=&quot;expected&quot;" in api
    for name in (
        "metrics_core.fuse",
        "metrics_core.tune_fusion",
        "metrics_core.write_run",
        "seed_t_test",
    ):
        assert name in api, name
    conventions = (out / "conventions.html").read_text(encoding="utf-8")
    assert "ignore_identical_ids" in conventions
    # the measures, band and power analysis added beyond trec_eval (issue 40)
    for name in ("SubtopicQrels", "alpha_ndcg", "ncg", "unjudged_report", "queries_needed"):
        assert name in api, name
    compat = (out / "compat.html").read_text(encoding="utf-8")
    for name in (
        "read_trec_run",
        "calc_aggregate",
        "compute_aggregated_measure",
        "translate",
        "optimize_fusion",
        "OptimizationReport",
    ):
        assert name in compat, name
