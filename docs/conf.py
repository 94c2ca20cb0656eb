"""Sphinx configuration of RankLab's API reference (built from the docstrings).

Build: ``python -m sphinx -W -b html docs docs/_build`` (the test suite builds it with
warnings as errors into a temporary folder: tests/compat/test_api_docs.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import metrics_core  # noqa: E402

project = "RankLab"
author = "RankLab contributors"
release = metrics_core.__version__
version = release
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_typehints = "none"
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: list[str] = []
suppress_warnings = [
    "ref.python",
    "ref.ref",
    "ref.doc",
    "ref.mod",
    "ref.func",
    "ref.class",
    "ref.meth",
    "ref.attr",
    "ref.data",
    "ref.exc",
    "ref.obj",
]
nitpicky = False
