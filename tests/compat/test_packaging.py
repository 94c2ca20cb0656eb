"""The wheel describes the library (not the app), with classifiers and a changelog."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_package_description_is_the_librarys():
    meta = project()
    readme = (ROOT / meta["readme"]).read_text(encoding="utf-8")
    assert meta["readme"] == "metrics_core/README.md"
    assert (
        "streamlit run" not in readme and "requirements.txt" not in readme
    )  # the app's commands stay out
    for words in (
        "import metrics_core as mc",
        "from metrics_core.compat import ir_measures",
        "ranklab ir_measures",
        "pip install ranklab",
    ):
        assert words in readme, words
    assert "Streamlit" not in meta["description"]


def test_classifiers_keywords_and_changelog():
    meta = project()
    classifiers = meta["classifiers"]
    assert "License :: OSI Approved :: MIT License" in classifiers
    assert any(c.startswith("Topic :: ") for c in classifiers)
    minimum = meta["requires-python"].removeprefix(">=")
    assert f"Programming Language :: Python :: {minimum}" in classifiers
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog") and "## Unreleased" in changelog
    assert "ignore_identical_ids" in changelog and "ranklab ir_measures" in changelog
