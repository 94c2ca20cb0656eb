"""Types users can see: the package ships ``py.typed`` and the lazily loaded public names
keep their real signatures for type checkers (``if TYPE_CHECKING:`` imports beside the lazy
loader). mypy checks a small user script: the correct calls pass, a misuse is reported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("mypy", reason="mypy is not installed (requirements-dev.txt installs it)")

GOOD = """
import metrics_core as mc

qrels = {"q1": {"d1": 1, "d2": 0}}
run_a = {"q1": {"d1": 2.0, "d2": 1.0}}
run_b = {"q1": {"d1": 1.0, "d2": 2.0}}
ranking: mc.Ranking = mc.rank(qrels, run_a)
ev_a: mc.Evaluation = ranking.evaluate(["AP", "nDCG@10"])
ev_b: mc.Evaluation = mc.evaluate(qrels, run_b, ["AP", "nDCG@10"])
report: mc.Comparison = mc.compare([ev_a, ev_b], baseline=ev_a.run_name)
mean: float = ev_a.aggregate["AP"]
print(report.to_markdown(), mean)
"""

MISUSE = (
    GOOD
    + """
wrong: int = mc.evaluate(qrels, run_b, ["AP"])
mc.rank(qrels, run_a, conventions="trec_eval")
"""
)


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            "--python-version",
            "3.11",
            str(script),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"MYPYPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )


def test_the_package_ships_py_typed():
    assert (ROOT / "metrics_core" / "py.typed").is_file()
    assert "py.typed" in (ROOT / "pyproject.toml").read_text()


@pytest.mark.slow  # runs mypy (the README's quick tier leaves it out)
def test_a_user_script_type_checks(tmp_path):
    out = _mypy(tmp_path, GOOD)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow  # runs mypy (the README's quick tier leaves it out)
def test_a_misuse_is_reported(tmp_path):
    out = _mypy(tmp_path, MISUSE)
    assert out.returncode == 1, out.stdout + out.stderr
    text = out.stdout
    # the Evaluation assigned to an int, and a string where Conventions is expected
    assert (
        'incompatible types in assignment (expression has type "Evaluation"' in text.lower()
        or 'Incompatible types in assignment (expression has type "Evaluation"' in text
    ), text
    assert '"rank" has incompatible type "str"' in text, text


def test_every_lazy_public_name_is_known_to_type_checkers():
    """Each name of ``metrics_core._PUBLIC`` is imported under ``if TYPE_CHECKING:`` too."""
    import ast

    import metrics_core

    tree = ast.parse((ROOT / "metrics_core" / "__init__.py").read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    seen = {
        alias.asname or alias.name
        for node in block.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert seen == set(metrics_core._PUBLIC)
