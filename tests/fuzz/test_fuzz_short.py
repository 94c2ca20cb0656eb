"""A short coverage-guided run of every reader's fuzz target (atheris), in the suite.

Each target runs in its own process (libFuzzer ends the process it runs in) for a fixed
number of inputs from a fixed seed, starting from the seed corpus: the same inputs on
every machine, about 1-3 s per target. A finding fails the test with the input that
caused it (saved under the test's temporary folder) and the reader's traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fuzz.targets import TARGETS

pytest.importorskip(
    "atheris",
    reason="atheris (coverage-guided fuzzing, optional) is not installed: pip install -r requirements-fuzz.txt",
)
ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("RANKLAB_FUZZ_RUNS", "1500"))


@pytest.mark.fuzz
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_short_fuzz_run(tmp_path, target):
    cmd = [
        sys.executable,
        "-m",
        "tests.fuzz.fuzz_readers",
        target,
        f"-runs={10 * RUNS}",
        "-seed=1",
        "-timeout=20",
        "-rss_limit_mb=3072",
        f"-artifact_prefix={tmp_path}/",
    ]
    done = subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONHASHSEED": "0", "RANKLAB_FUZZ_EXIT_AFTER": str(RUNS)},
    )
    findings = sorted(
        p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-"))
    )
    assert done.returncode == 0 and not findings, f"{target}: {findings}\n{done.stderr[-4000:]}"
    assert f"ranklab-fuzz: {RUNS} inputs, no finding" in done.stderr
