"""Every third-party module the code and the tests import is named in a requirements file.

The README's test command (``pip install -r requirements-dev.txt && python -m pytest -q -n 2 ...``,
what ``.ci/run`` runs in a fresh virtual environment) installs only what the requirements
files name. A module that the tests reach but that arrives only as another package's
dependency, or only because someone installed it by hand, passes here and fails on a fresh
machine. So each import (``import x``, ``from x import y``, at any depth) and each
``pytest.importorskip("x")`` in the library, the app, the tests, the benchmark scripts the
tests run and the tools is read from the source (no import, no installed metadata), and its
top-level module must be either:

- the standard library, or a module of this repository (the tests put ``bench/`` and
  ``tools/`` on ``sys.path``);
- a requirement named in ``requirements-dev.txt`` or a file it includes with ``-r``;
- an optional tool listed in :data:`OPTIONAL` with its reason, whose every importing file
  skips without it (``pytest.importorskip``, a ``try``/``except ImportError``) or is kept out
  of the test run (``collect_ignore`` of a ``conftest.py``).
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ["metrics_core", "tests", "ui", "pages", "app.py", "bench", "tools"]
# folders whose modules the tests import by their bare names (they insert them on sys.path)
PATH_FOLDERS = [ROOT, ROOT / "bench", ROOT / "tools"]

# import name -> requirement name, where the two differ
DISTRIBUTION = {
    "sklearn": "scikit-learn",
    "pytrec_eval": "pytrec-eval-terrier",
    "distributed": "dask",  # dask[distributed]
    "markdown_it": "markdown-it-py",
    "yaml": "pyyaml",
    "cwl": "cwl-eval",
    "xdist": "pytest-xdist",
}

# optional tools: the tests that need them skip, with this reason, where they are absent
OPTIONAL = {
    "atheris": "coverage-guided fuzzing (libFuzzer; requirements-fuzz.txt); run by hand, the "
    "short runs skip without it",
    "beir": "the BEIR drop-in's comparisons with BEIR itself skip without it (BEIR pulls "
    "sentence-transformers, faiss and elasticsearch: too heavy for every test run)",
    "pyterrier": "the per-measure significance family's comparison with PyTerrier's Experiment "
    "skips without it (PyTerrier pulls ir_datasets and its many readers: installed by hand)",
}

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(path: Path) -> set[str]:
    """The normalised names of the requirements in ``path`` and the files it includes."""
    names: set[str] = set()
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith(("-r ", "--requirement ")):
            names |= requirements(path.parent / line.split(None, 1)[1])
        elif line and not line.startswith("-"):
            match = _REQUIREMENT.match(line)
            assert match, f"{path.name}: cannot read the requirement {raw!r}"
            names.add(_normal(match.group(1)))
    return names


def local_modules() -> set[str]:
    names = {"__future__"}
    for folder in PATH_FOLDERS:
        for entry in folder.iterdir():
            if entry.suffix == ".py":
                names.add(entry.stem)
            elif entry.is_dir() and not entry.name.startswith("."):
                names.add(entry.name)  # packages and namespace packages (bench, tools)
    return names


def _python_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


class _Imports(ast.NodeVisitor):
    """Top-level module names imported by one file, and whether each import is guarded."""

    def __init__(self) -> None:
        self.found: list[tuple[str, int, bool]] = []  # (module, line, guarded)
        self._guarded = 0

    def visit_Try(self, node: ast.Try) -> None:
        catches = any(
            handler.type is None
            or any(
                isinstance(n, ast.Name)
                and n.id in {"ImportError", "ModuleNotFoundError", "Exception"}
                for n in ast.walk(handler.type)
            )
            for handler in node.handlers
        )
        self._guarded += catches
        for stmt in node.body:
            self.visit(stmt)
        self._guarded -= catches
        for stmt in [*node.handlers, *node.orelse, *node.finalbody]:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append((alias.name.split(".")[0], node.lineno, self._guarded > 0))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            self.found.append((node.module.split(".")[0], node.lineno, self._guarded > 0))

    def visit_Call(self, node: ast.Call) -> None:
        # pytest.importorskip("x") and importlib.util.find_spec("x") test for a module (a
        # skip, a branch); importlib.import_module("x") imports it like a statement
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if (
            name in {"importorskip", "find_spec", "import_module"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and not node.args[0].value.startswith(".")
        ):
            guarded = name != "import_module" or self._guarded > 0
            self.found.append((node.args[0].value.split(".")[0], node.lineno, guarded))
        self.generic_visit(node)


@functools.cache
def third_party_imports() -> tuple[tuple[str, Path, int, bool], ...]:
    local = local_modules()
    out = []
    for path in _python_files():
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(), filename=str(path)))
        out += [
            (module, path, line, guarded)
            for module, line, guarded in visitor.found
            if module not in sys.stdlib_module_names and module not in local
        ]
    return tuple(out)


def _not_collected(path: Path) -> bool:
    """Whether a ``conftest.py`` beside ``path`` keeps it out of the test run."""
    conftest = path.parent / "conftest.py"
    if not conftest.is_file():
        return False
    for node in ast.parse(conftest.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "collect_ignore" for t in node.targets
        ):
            return path.name in ast.literal_eval(node.value)
    return False


def test_the_reader_of_requirement_files_reads_names_extras_markers_and_includes(tmp_path):
    (tmp_path / "base.txt").write_text(
        "--extra-index-url https://example.org/simple\n"
        "torch==2.13.0\nscikit-learn>=1.3  # comment\n"
    )
    (tmp_path / "dev.txt").write_text(
        '-r base.txt\ndask[distributed]>=2024.1\ntomli>=2; python_version < "3.11"\nPyYAML\n'
    )
    assert requirements(tmp_path / "dev.txt") == {
        "torch",
        "scikit-learn",
        "dask",
        "tomli",
        "pyyaml",
    }


def test_the_scan_sees_nested_guarded_and_importorskip_imports(tmp_path, monkeypatch):
    source = (
        "import numpy as np\nfrom sklearn.metrics import auc\n"
        "def f():\n    import polars\n"
        "try:\n    import atheris\nexcept ImportError:\n    atheris = None\n"
        "x = pytest.importorskip('markdown_it')\nfrom . import sibling\n"
        "importlib.util.find_spec('plotly')\nimportlib.import_module('dask')\n"
    )
    visitor = _Imports()
    visitor.visit(ast.parse(source))
    assert visitor.found == [
        ("numpy", 1, False),
        ("sklearn", 2, False),
        ("polars", 4, False),
        ("atheris", 6, True),
        ("markdown_it", 9, True),
        ("plotly", 11, True),
        ("dask", 12, False),
    ]


def test_every_third_party_import_is_a_named_requirement_or_an_optional_tool():
    named = requirements(ROOT / "requirements-dev.txt")
    unnamed = sorted(
        {
            f"{module} ({path.relative_to(ROOT)}:{line})"
            for module, path, line, _ in third_party_imports()
            if module not in OPTIONAL and _normal(DISTRIBUTION.get(module, module)) not in named
        }
    )
    assert not unnamed, (
        "imported but named in no requirements file that requirements-dev.txt "
        "installs (add it there, or to OPTIONAL with a skip): " + ", ".join(unnamed)
    )


def test_every_import_of_an_optional_tool_skips_without_it():
    unguarded = sorted(
        f"{module} ({path.relative_to(ROOT)}:{line})"
        for module, path, line, guarded in third_party_imports()
        if module in OPTIONAL and not guarded and not _not_collected(path)
    )
    assert not unguarded, "an optional tool imported where its absence is an error: " + ", ".join(
        unguarded
    )


def test_the_optional_tools_are_not_also_requirements():
    named = requirements(ROOT / "requirements-dev.txt")
    assert not {_normal(DISTRIBUTION.get(m, m)) for m in OPTIONAL} & named
    assert all(reason.strip() for reason in OPTIONAL.values())
