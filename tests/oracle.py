"""NIST trec_eval as a test oracle: run live where it can be built, recorded for every clone.

trec_eval 10.0 and 9.0.8 are built from NIST's sources in the shared folder beside the
repository (or under ``$RANKLAB_SHARED``) by ``reference/build-trec_eval.sh``: a full-precision
build of each (values printed with ``%.17g``; kinds ``"10"`` and ``"9"``) and a stock one
(``%6.4f``, for byte-for-byte comparisons; kinds ``"10_stock"`` and ``"9_stock"``).

A clone with nothing beside it has no such folder. So every deterministic case a test asks of
trec_eval (:func:`run` with ``record=True``: fixed inputs, or inputs made by
:class:`StableRandom`) has trec_eval's output committed in ``tests/data/trec_eval/
recorded.jsonl.gz``, keyed by the build, the arguments and the bytes of every input file;
``python tools/record_trec_eval.py`` writes it where trec_eval can be built. Where trec_eval
runs, each such case is run live and must equal its recording (a case without one fails: record
it), so CI keeps the recordings true; elsewhere the recording answers. Cases drawn by
Hypothesis cannot be recorded (``record=False``): they run only where trec_eval is built, and
skip elsewhere with the reason.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import random
import subprocess
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import pytest

from tests.conftest import shared_dir

try:
    import fcntl
except ImportError:  # not POSIX: no trec_eval build there (bash), recordings only
    fcntl = None  # type: ignore[assignment]

#: trec_eval's recorded outputs (one JSON object a line, gzip), written by tools/record_trec_eval.py
RECORDED = Path(__file__).resolve().parent / "data" / "trec_eval" / "recorded.jsonl.gz"
#: set by tools/record_trec_eval.py: live runs are appended to this file, not checked
RECORD_ENV = "RANKLAB_RECORD_TREC_EVAL"
#: the builds, as build-trec_eval.sh names them
KINDS = {
    "10": "trec_eval10",
    "9": "trec_eval9",
    "10_stock": "trec_eval10_stock",
    "9_stock": "trec_eval9_stock",
}
HOW_TO_RECORD = "record it with `python tools/record_trec_eval.py` where trec_eval can be built"


@lru_cache(maxsize=1)
def binaries() -> tuple[dict[str, str], str]:
    """The built trec_evals ({build name: path}), or ({}, why not)."""
    script = shared_dir() / "reference" / "build-trec_eval.sh"
    if not script.is_file():
        return {}, f"{script} not found"
    # one build at a time on this machine (test processes in parallel: pytest -n)
    lock = Path(tempfile.gettempdir()) / "ranklab-trec_eval-build.lock"
    try:
        with open(lock, "w") as held:
            if fcntl is not None:
                fcntl.flock(held, fcntl.LOCK_EX)
            out = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {}, f"building trec_eval failed: {exc}"
    if out.returncode != 0:
        return {}, (
            "no C compiler/make to build trec_eval: "
            if out.returncode == 3
            else "building trec_eval failed: "
        ) + out.stderr.strip()[-300:]
    return dict(line.split("=", 1) for line in out.stdout.split() if "=" in line), ""


def live(kind: str) -> str | None:
    """The path of a built trec_eval of this kind, or None."""
    return binaries()[0].get(KINDS[kind])


def why_not_live(kind: str) -> str:
    return binaries()[1] or f"trec_eval build {KINDS[kind]} not found"


def require_live(kind: str) -> str:
    """The built trec_eval, or skip: for cases that cannot be recorded (Hypothesis draws)."""
    path = live(kind)
    if path is None:
        pytest.skip(
            f"{why_not_live(kind)}; the recorded trec_eval cases run without it "
            "(tests/data/trec_eval/recorded.jsonl.gz)"
        )
    return path


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def case_key(kind: str, args: Sequence[str]) -> tuple[str, list[str]]:
    """The recording's key of a call, and its arguments as shown in the recording.

    An argument that is an absolute path to a file stands for its bytes (its digest), so the
    key does not depend on where the test wrote it."""
    parts, shown = [kind], []
    for arg in args:
        path = Path(arg)
        if path.is_absolute() and path.is_file():
            parts.append("@" + _digest(path.read_bytes()))
            shown.append(f"{path.name}@{parts[-1][1:]}")
        else:
            parts.append(arg)
            shown.append(arg)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24], shown


@lru_cache(maxsize=1)
def recorded() -> dict[str, dict]:
    if not RECORDED.is_file():
        return {}
    with gzip.open(RECORDED, "rt", encoding="utf-8") as fh:
        records = (json.loads(line) for line in fh if line.strip())
        return {r["key"]: r for r in records}


def _stdout(record: dict) -> bytes:
    return record["stdout"].encode("utf-8", "surrogateescape")


def run(kind: str, args: Sequence[str], *, record: bool = True) -> tuple[bytes, int]:
    """trec_eval's standard output and exit status for ``trec_eval ARGS``.

    ``record=True`` (a deterministic case): live where trec_eval is built, checked against
    its recording; the recording elsewhere. ``record=False``: live only (skips elsewhere).
    """
    args = [str(a) for a in args]
    binary = live(kind)
    if not record:
        binary = require_live(kind)
    key, shown = case_key(kind, args)
    if binary is None:
        saved = recorded().get(key)
        if saved is None:
            pytest.fail(
                f"trec_eval ({KINDS[kind]}) {' '.join(shown)}: no recorded output in "
                f"{RECORDED.name} and no trec_eval to run ({why_not_live(kind)}); {HOW_TO_RECORD}"
            )
        return _stdout(saved), saved["status"]
    out = subprocess.run([binary, *args], capture_output=True, timeout=300)
    if record:
        target = os.environ.get(RECORD_ENV)
        if target:
            line = {
                "key": key,
                "kind": kind,
                "args": shown,
                "status": out.returncode,
                "stdout": out.stdout.decode("utf-8", "surrogateescape"),
            }
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        else:
            saved = recorded().get(key)
            assert saved is not None, (
                f"trec_eval ({KINDS[kind]}) {' '.join(shown)} has no recorded output, so a "
                f"clone without trec_eval cannot run this case; {HOW_TO_RECORD}"
            )
            assert (_stdout(saved), saved["status"]) == (out.stdout, out.returncode), (
                f"trec_eval ({KINDS[kind]}) {' '.join(shown)}: the recorded output differs "
                f"from the live one; {HOW_TO_RECORD}"
            )
    return out.stdout, out.returncode


def values(stdout: bytes, not_measures=("runid", "relstring")) -> dict[tuple[str, str], float]:
    """``{(measure, query): value}`` of trec_eval's output lines (full precision)."""
    found = {}
    for line in stdout.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] not in not_measures:
            found[(parts[0], parts[1])] = float(parts[2])
    return found


class StableRandom:
    """Seeded draws that are the same on every machine and every version of Python and numpy.

    Built on :meth:`random.Random.random` alone, the one stream Python promises to keep for a
    seed (its other methods and numpy's generators may change between versions), so the
    recorded cases' inputs are made again, byte for byte, in any clone.
    """

    def __init__(self, seed: int):
        self._random = random.Random(seed)

    def random(self) -> float:
        return self._random.random()

    def integer(self, low: int, high: int) -> int:
        """A whole number from ``low`` to ``high``, both included."""
        return low + min(math.floor(self.random() * (high - low + 1)), high - low)

    def choice(self, items: Sequence):
        return items[self.integer(0, len(items) - 1)]

    def sample(self, items: Sequence, k: int) -> list:
        """``k`` distinct items, in drawn order (a partial Fisher-Yates shuffle)."""
        pool = list(items)
        for i in range(k):
            j = self.integer(i, len(pool) - 1)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]
