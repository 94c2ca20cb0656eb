"""The catalogs ship inside the package: pyproject's package-data covers every catalog,
and a copy of the package holding only what an install holds (its modules and its
package data) runs ``table --lang es`` in Spanish, away from the source tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from metrics_core.report import catalogs

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "metrics_core"
SAMPLE = ROOT / "sample_data" / "ranking"


def _patterns() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]["package-data"]["metrics_core"]


def _package_data() -> set[Path]:
    """The files setuptools adds to the package for the patterns (globs relative to it)."""
    return {p for pattern in _patterns() for p in PACKAGE.glob(pattern) if p.is_file()}


def test_the_catalogs_live_in_the_package_and_package_data_covers_them():
    assert catalogs.locales_dir() == PACKAGE / "locales"
    assert not (ROOT / "locales").exists()
    tracked = subprocess.run(
        ["git", "ls-files", "metrics_core/locales"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    po = {ROOT / t for t in tracked if t.endswith(".po")}
    assert {catalogs.catalog_path(lang) for lang in catalogs.LANGUAGES} <= po
    assert po <= _package_data()


def test_an_installed_copy_runs_table_in_spanish(tmp_path):
    site = tmp_path / "site"
    for path in [*PACKAGE.rglob("*.py"), *_package_data()]:
        if "__pycache__" not in path.parts:
            target = site / "metrics_core" / path.relative_to(PACKAGE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    assert (site / "metrics_core" / "locales" / "es" / "LC_MESSAGES" / "messages.po").is_file()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "metrics_core",
            "table",
            "--qrels",
            str(SAMPLE / "qrels.txt"),
            "--run",
            str(SAMPLE / "bm25.txt"),
            "--run",
            str(SAMPLE / "hybrid.txt"),
            "--lang",
            "es",
            "--format",
            "markdown",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "Tabla comparativa" in done.stdout and "| Ejecución | Consultas | MRR |" in done.stdout
