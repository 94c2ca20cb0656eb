"""Shared test pieces: where trec_eval's conformance files live, and a parser for them.

The conformance files (``shared/conformance/trec_eval`` next to the repository, or the
folder named by the environment variable ``RANKLAB_SHARED``) are NIST trec_eval 10.0's
own test data and outputs; see their README.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CONFORMANCE_SUBDIR = Path("conformance") / "trec_eval"

# The app's server budget (ui/common/budget.py) measures this process: the test process holds
# the whole suite's data, far more than a 1 GB host's server, so the in-process app tests run
# under a budget of their own; the budget tests set theirs (monkeypatch.setenv), and the load
# test its server's.
os.environ.setdefault("RANKLAB_SERVER_MB", "100000")


def shared_dir() -> Path:
    """The shared folder: ``$RANKLAB_SHARED`` if set, else ``<repo>/../shared``."""
    env = os.environ.get("RANKLAB_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared"


def conformance_dir() -> Path:
    """The trec_eval conformance folder (may not exist on a fresh machine).

    ``RANKLAB_SHARED`` may name the shared folder or the conformance folder itself.
    """
    base = shared_dir()
    if not (base / CONFORMANCE_SUBDIR).is_dir() and (base / "qrels.test").is_file():
        return base
    return base / CONFORMANCE_SUBDIR


def conformance_available() -> bool:
    return (conformance_dir() / "qrels.test").is_file()


SKIP_NO_CONFORMANCE = (
    f"trec_eval conformance files not found at {conformance_dir()} "
    "(set RANKLAB_SHARED to the folder that holds conformance/trec_eval)"
)


@pytest.fixture(scope="session")
def conformance_path() -> Path:
    """Path of the conformance folder; skips the test when it is absent."""
    if not conformance_available():
        pytest.skip(SKIP_NO_CONFORMANCE)
    return conformance_dir()


def parse_trec_eval_output(path) -> dict[tuple[str, str], str]:
    """Read a ``trec_eval`` output file into ``{(measure, query_id): printed value}``.

    Lines are ``measure<spaces>\\tquery\\tvalue`` (the measure name is padded with
    spaces before the tab). Values are kept as the printed strings so that comparisons
    happen on exactly what trec_eval printed (4 decimals for floats, integers for counts).
    A measure printed twice for the same query is an error in the file, not something to
    paper over.
    """
    values: dict[tuple[str, str], str] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                raise ValueError(
                    f"{path}, line {number}: expected 3 tab-separated fields: {line!r}"
                )
            measure, qid, value = parts[0].strip(), parts[1].strip(), parts[2].strip()
            key = (measure, qid)
            if key in values:
                raise ValueError(f"{path}, line {number}: {key} given twice")
            values[key] = value
    return values


@pytest.fixture(scope="session")
def trec_eval_output():
    """The parser, as a fixture."""
    return parse_trec_eval_output
