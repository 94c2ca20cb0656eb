"""The test run itself: ``pytest -n 2`` keeps each ``xdist_group`` in one process.

The README's command runs two processes; the tests that share an expensive fixture (the hostile
corpus) or a single resource (the browser tests: one Chromium, one app server at a time) are
marked ``xdist_group`` and must run in one of them. ``tests/conftest.py`` makes ``-n 2``
distribute by group unless the command line names a mode, and names each grouped test by its
group where pytest-xdist's own naming no longer takes effect (pytest 9.2). A small suite that
uses that conftest is run here in two processes, and where each test ran is read back.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("xdist", reason="pytest-xdist is not installed (requirements-dev.txt)")

TESTS = Path(__file__).resolve().parent

PROBE = """
import pytest


@pytest.mark.xdist_group("corpus")
@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    pass


@pytest.mark.parametrize("i", range(6))
def test_free(i):
    pass
"""


def _where(tmp_path: Path, *args: str) -> dict[str, set[str]]:
    """{test name as reported: the workers that ran it} for ``pytest -n 2 ARGS``."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "xdist", "-p", "no:cacheprovider"]
        + ["-n", "2", *args],
        cwd=tmp_path,
        # no other plugin: the two processes start in a second
        env=dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran: dict[str, set[str]] = defaultdict(set)
    for worker, name in re.findall(r"^\[(gw\d+)\] .*PASSED (\S+)", done.stdout, re.M):
        ran[name.split("::", 1)[1]].add(worker)
    assert len(ran) == 12, done.stdout[-3000:]
    return ran


@pytest.fixture
def suite(tmp_path):
    shutil.copyfile(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return tmp_path


def test_pytest_n_2_runs_each_group_in_one_process(suite):
    ran = _where(suite)
    grouped = {name: workers for name, workers in ran.items() if name.startswith("test_grouped")}
    assert len(grouped) == 6
    # each grouped test is named by its group, and all six ran in one process
    assert all(name.endswith("]@corpus") for name in grouped), sorted(grouped)
    assert len(set().union(*grouped.values())) == 1, grouped


def test_a_mode_named_on_the_command_line_is_kept(suite):
    ran = _where(suite, "--dist", "load")
    assert not any("@" in name for name in ran), sorted(ran)
