"""How the command line's process ends: main's status, Python's exit functions run, and no
native teardown after the answer (``metrics_core.cli.run``).

An interpreter that exits normally runs C++ static destructors, where Arrow's thread pools
with a worker still alive can abort the process ("terminate called without an active
exception") after the answer was printed. ``run`` ends the process with ``os._exit`` once
the streams are flushed and the exit functions have run; the last test shows that the
interpreter's teardown is skipped, with an object whose finaliser only teardown would call.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from metrics_core import cli

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        cwd=REPO,
        timeout=120,
    )


#: run() with an exit function and a module-level object whose __del__ only the
#: interpreter's teardown would call (both print to stdout, after the command's output)
PROBE = """
import atexit, sys
from metrics_core import cli

class Finalised:
    def __del__(self):
        print("torn down", flush=True)

KEEP = Finalised()
atexit.register(lambda: print("exit functions ran", flush=True))
cli.run(sys.argv[1:])
"""


def test_status_output_and_exit_functions(good_files):
    q, r = good_files
    p = _python(PROBE, "evaluate", "--qrels", str(q), "--run", str(r), "-m", "P_1")
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert "P@1" in out and "1.0000" in out
    # the answer first, then the exit functions
    assert out.index("1.0000") < out.index("exit functions ran")


def test_error_status_and_one_line(good_files):
    q, _ = good_files
    p = _python(PROBE, "evaluate", "--qrels", str(q), "--run", "-", stdin=b"q1 Q0 d1 1 1_0 sys\n")
    err = p.stderr.decode().splitlines()
    assert p.returncode == cli.EXIT_USAGE
    assert len(err) == 1 and "1_0" in err[0]
    assert "exit functions ran" in p.stdout.decode()


def test_the_interpreter_teardown_is_skipped(good_files):
    q, r = good_files
    p = _python(PROBE, "evaluate", "--qrels", str(q), "--run", str(r), "-m", "P_1")
    assert p.returncode == 0
    assert "torn down" not in p.stdout.decode()
    # the probe's finaliser does run when the interpreter ends normally (what run() skips)
    normal = _python(PROBE.replace("cli.run(sys.argv[1:])", "cli.main(sys.argv[1:])"), "--version")
    assert "torn down" in normal.stdout.decode()


def test_python_m_and_the_console_script_use_run():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli", reason="tomli reads TOML on Python 3.10")
    main_py = (REPO / "metrics_core" / "__main__.py").read_text()
    assert "run()" in main_py
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["ranklab"].partition(":")
    assert (module, name) == ("metrics_core.cli", "run")
    assert callable(getattr(cli, name))
