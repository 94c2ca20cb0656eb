"""The library's foundation as a new user meets it: an install without torch, measure
lists on the command line, the bundled sample history, a query with an empty ranking,
and the package's import graph."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import metrics_core as mc
from tests.cli.test_history_cli import cli

ROOT = Path(__file__).resolve().parents[1]
QRELS = "q1 0 d1 1\nq1 0 d2 2\nq1 0 d3 0\nq2 0 d1 1\n"
RUN = "q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 2.0 s\nq1 Q0 d3 3 1.0 s\nq2 Q0 d9 1 1.0 s\n"

# a finder that refuses torch, as an environment without it does
NO_TORCH = """
import importlib.abc, sys
class _NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'")
sys.meta_path.insert(0, _NoTorch())
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def _python(code: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, **kw)


def test_help_and_evaluate_without_torch(files):
    qrels, run = files
    code = NO_TORCH + f"""
from metrics_core.cli import main
try:
    main(["--help"])
except SystemExit as exc:
    assert exc.code == 0, exc.code
assert main(["evaluate", "--qrels", {str(qrels)!r}, "--run", {str(run)!r}, "-m", "P@1", "--quiet"]) == 0
assert "torch" not in sys.modules
"""
    done = _python(code, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "evaluate" in done.stdout and "hash" in done.stdout


def test_import_loads_neither_torch_nor_pandas():
    done = _python("import sys, metrics_core as mc; mc.InputError; mc.Conventions;"
                   "print(sorted(m for m in ('torch', 'pandas', 'scipy', 'sklearn') if m in sys.modules))",
                   cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("command", ["evaluate", "compare", "history"])
def test_measure_list_with_parameters_on_every_command(files, tmp_path, command):
    qrels, run = files
    names = "P(rel=2)@5,nDCG@10"
    if command == "evaluate":
        code, out, err = cli("evaluate", "--qrels", qrels, "--run", run, "-m", names, "--format", "json")
        assert code == 0, err
        assert list(json.loads(out)["runs"][0]["aggregate"]) == ["P(rel=2)@5", "nDCG@10"]
    elif command == "compare":
        other = tmp_path / "other.txt"
        other.write_text(RUN.replace("3.0", "0.5"))
        code, out, err = cli("compare", "--qrels", qrels, "--run", run, "--run", other, "--baseline", "run",
                             "-m", names, "--format", "json", "--permutations", "100")
        assert code == 0, err
        assert {r["measure"] for r in json.loads(out)["comparisons"]} == {"P(rel=2)@5", "nDCG@10"}
    else:
        store = tmp_path / "h.sqlite3"
        code, out, err = cli("history", "add", "--store", store, "--suite", "s", "--qrels", qrels,
                             "--run", run, "-m", names, "--fail-below", "P(rel=2)@5=0.0,nDCG@10=0.0")
        assert code == 0, err
        code, out, err = cli("history", "report", "--store", store, "-m", names, "--format", "json")
        assert code == 0, err
        assert "P(rel=2)@5" in out and "nDCG@10" in out


def test_sample_history_loads_from_an_installed_copy(tmp_path):
    # only the package, as a wheel installs it: no sample_data/ beside it
    shutil.copytree(ROOT / "metrics_core", tmp_path / "site" / "metrics_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("from metrics_core.history import HistoryStore, load_sample_history\n"
            "store = HistoryStore(':memory:')\n"
            "print(len(load_sample_history(store)))\n")
    done = _python(code, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0


def test_package_data_lists_the_sample_history():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"history/*.json"' in text
    assert (ROOT / "metrics_core" / "history" / "sample.json").is_file()


def test_a_query_with_an_empty_ranking_scores_zero():
    run, qrels = mc.from_lists({"q1": (["A", "B"], ["A"]), "q2": ([], ["B"])})
    ev = mc.evaluate(qrels, run, ["RR", "P@1", "NumQ"])
    assert ev.aggregate == {"RR": 0.5, "P@1": 0.5, "NumQ": 2.0}
    assert ev.diagnostics["missing_queries"] == []
    assert ev.per_query.loc["q2", "RR"] == 0.0


def _imports(path: Path, package: str) -> set[str]:
    """metrics_core modules imported at module level by ``path`` (not inside functions)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("metrics_core"):
                out.add(node.module)
                out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("metrics_core"))
    return out


def test_no_import_cycles_between_modules():
    pkg = ROOT / "metrics_core"
    modules = {}
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        modules[name] = path
    graph = {name: {m for m in _imports(path, "metrics_core") if m in modules and m != name}
             for name, path in modules.items()}
    # a package's __init__ importing its own submodules is how packages re-export
    for name in graph:
        graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node, stack):
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycle.extend(stack[stack.index(nxt):] + [nxt])
                return True
            if state.get(nxt) is None and visit(nxt, stack + [nxt]):
                return True
        state[node] = 2
        return False

    for name in sorted(graph):
        if state.get(name) is None and visit(name, [name]):
            break
    assert not cycle, " -> ".join(cycle)


def test_the_library_never_imports_the_app_stack():
    for path in (ROOT / "metrics_core").rglob("*.py"):
        text = path.read_text()
        for banned in ("import streamlit", "from streamlit", "import plotly", "from plotly"):
            assert banned not in text, f"{path} has {banned!r}"


def test_unique_query_ids_is_kept_on_the_object_and_follows_its_ids():
    """Counted once per object (the app asks several times per page), a fresh list each
    call, and recomputed when the ids change."""
    import pyarrow as pa

    q = mc.Qrels(["q2", "q1", "q2", "q10"], ["a", "b", "c", "d"], [1, 0, 1, 2])
    first = q.unique_query_ids()
    assert first == ["q1", "q10", "q2"]
    first.append("mutated")
    assert q.unique_query_ids() == ["q1", "q10", "q2"]
    q.qid = pa.array(["x", "x", "y", "y"])
    assert q.unique_query_ids() == ["x", "y"]
    q.extra_query_ids = ("z",)
    assert q.unique_query_ids() == ["x", "y", "z"]
