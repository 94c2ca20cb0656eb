"""The library type-checks and the code base is formatted, as configured in pyproject.toml.

- ``mypy`` (its ``[tool.mypy]`` section: the files are ``metrics_core``) reports no error,
  and every ``# type: ignore`` in the library names its error code and says why.
- ``ruff format --check`` (``[tool.ruff]`` and ``[tool.ruff.format]``: line length 100)
  would change no file of the repository.

Both tools are in requirements-dev.txt; without one, its test is skipped with the reason.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # runs mypy (the README's quick tier leaves it out)
def test_mypy_finds_no_error_in_the_library(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (requirements-dev.txt installs it)")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    # the configuration was read: it names the package, and mypy checked its modules
    checked = re.search(r"Success: no issues found in (\d+) source files", report)
    assert checked and int(checked.group(1)) >= 50, report[-2000:]


def test_every_type_ignore_in_the_library_names_its_error_and_a_reason():
    bare, unexplained = [], []
    for path in sorted((ROOT / "metrics_core").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            at = line.find("# type: ignore")
            if at < 0:
                continue
            where = f"{path.relative_to(ROOT)}:{number}"
            rest = line[at + len("# type: ignore") :]
            if not rest.startswith("["):
                bare.append(where)
            elif "#" not in rest.split("]", 1)[1]:
                unexplained.append(where)
    assert not bare, "a type: ignore without its error code: " + ", ".join(bare)
    assert not unexplained, "a type: ignore without a reason (# ...): " + ", ".join(unexplained)


def test_the_checkers_are_configured_in_pyproject():
    """What the two tests above rely on: mypy checks the package (not the whole tree, not
    --strict) and wants a code on every ignore; the formatter's line length is the linter's."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        tomllib = pytest.importorskip("tomli", reason="tomli reads TOML on Python 3.10")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    assert config["mypy"]["files"] == ["metrics_core"]
    assert "ignore-without-code" in config["mypy"]["enable_error_code"]
    assert not config["mypy"].get("strict", False)
    assert "format" in config["ruff"] and config["ruff"]["line-length"] == 100


def test_ruff_format_would_change_no_file():
    pytest.importorskip("ruff", reason="ruff is not installed (requirements-dev.txt installs it)")
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (
        "ruff format would reformat these files (run `ruff format .`):\n"
        + done.stdout[-6000:]
        + done.stderr[-2000:]
    )
