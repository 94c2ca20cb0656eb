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
#: the two scripts' tests share one mypy run (a module fixture): one process of ``pytest -n 2``
pytestmark = pytest.mark.xdist_group("typing")

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


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory) -> subprocess.CompletedProcess:
    """One mypy run over two user scripts (one run: its analysis of the library, numpy and
    pandas is the cost): ``good.py``, the correct calls, and ``misuse.py``, the same and two
    misuses."""
    tmp_path = tmp_path_factory.mktemp("typing")
    for name, source in (("good.py", GOOD), ("misuse.py", MISUSE)):
        (tmp_path / name).write_text(textwrap.dedent(source))
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
            "good.py",
            "misuse.py",
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
def test_a_user_script_type_checks(mypy_run):
    text = mypy_run.stdout + mypy_run.stderr
    # both scripts were checked, and every error found is one of the misuse script's two
    assert "Found 2 errors in 1 file (checked 2 source files)" in text, text
    assert not [line for line in text.splitlines() if line.startswith("good.py")], text


@pytest.mark.slow  # runs mypy (the README's quick tier leaves it out)
def test_a_misuse_is_reported(mypy_run):
    assert mypy_run.returncode == 1, mypy_run.stdout + mypy_run.stderr
    text = mypy_run.stdout
    errors = [line for line in text.splitlines() if line.startswith("misuse.py")]
    # the Evaluation assigned to an int, and a string where Conventions is expected
    assert any(
        'incompatible types in assignment (expression has type "evaluation"' in line.lower()
        for line in errors
    ), text
    assert any('"rank" has incompatible type "str"' in line for line in errors), text


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
