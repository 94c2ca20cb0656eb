"""Shared test pieces: where trec_eval's conformance files live, and a parser for them.

The conformance files are NIST trec_eval 10.0's own test data and outputs, committed in
``tests/data/trec_eval/nist`` (the inputs gzip-compressed; see the README.md there, and its
LICENSE.md, NIST's notice) and unpacked once into a folder of the temporary directory, so every
clone tests against them. ``python tools/record_trec_eval.py --nist DIR`` makes that folder
again from NIST's test folder.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: NIST's test files, as committed (inputs as ``NAME.gz``)
CONFORMANCE_DATA = Path(__file__).resolve().parent / "data" / "trec_eval" / "nist"

# The app's server budget (ui/common/budget.py) measures this process: the test process holds
# the whole suite's data, far more than a 1 GB host's server, so the in-process app tests run
# under a budget of their own; the budget tests set theirs (monkeypatch.setenv), and the load
# test its server's.
os.environ.setdefault("RANKLAB_SERVER_MB", "100000")


def _dist_chosen(config) -> bool:
    """Whether the command line (or ``PYTEST_ADDOPTS``) names a distribution mode itself."""
    args = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    return any(str(arg).startswith("--dist") or str(arg) == "-d" for arg in args)


def pytest_configure(config):
    """``pytest -n 2`` distributes as ``--dist loadgroup`` (the README's command) unless the
    command line names a mode: the tests marked ``xdist_group`` (the hostile corpus, built
    once; the browser tests, one Chromium and one app server at a time) then run in one
    process whichever way the suite is started. pytest-xdist's default, ``load``, ignores the
    groups. The controller chooses the scheduler; each worker, which parses the same command
    line, names its tests by their group as ``loadgroup`` does."""
    if not config.pluginmanager.hasplugin("xdist") or _dist_chosen(config):
        return
    if hasattr(config, "workerinput"):  # a worker of pytest -n
        config.option.loadgroup = True
    elif getattr(config.option, "numprocesses", None) and config.option.dist == "load":
        config.option.dist = "loadgroup"


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own naming, where it works
def pytest_collection_modifyitems(config, items):
    """A worker of ``--dist loadgroup`` names each test of an ``xdist_group`` by its group
    (``nodeid@group``: the scheduler sends one group to one process). pytest-xdist 3.8 writes
    the name into ``item._nodeid``, which pytest 9.2's structured node ids no longer read, so
    the groups were silently ignored (pytest-dev/pytest-xdist#1386); the name is set here in
    the structured id, and a name xdist did set is left as it is."""
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    for item in items:
        names = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        if not names:
            continue
        suffix = "@" + "_".join(names)
        if item.nodeid.endswith(suffix):
            continue
        named = item.nodeid + suffix
        if hasattr(item, "_id"):  # pytest >= 9.2: a structured id, parsed from the string
            item._id = type(item._id).parse(named)
        else:
            item._nodeid = named


def shared_dir() -> Path:
    """The shared folder (trec_eval's sources): ``$RANKLAB_SHARED`` if set, else
    ``<repo>/../shared``. A clone with nothing beside it has none."""
    env = os.environ.get("RANKLAB_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared"


@functools.cache
def conformance_dir() -> Path:
    """The trec_eval conformance folder: the committed files, unpacked (once per content)."""
    files = sorted(p for p in CONFORMANCE_DATA.iterdir() if p.is_file())
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    target = Path(tempfile.gettempdir()) / f"ranklab-trec_eval-{digest.hexdigest()[:16]}"
    if not target.is_dir():
        work = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
        for path in files:
            if path.suffix == ".gz":
                (work / path.stem).write_bytes(gzip.decompress(path.read_bytes()))
            else:
                shutil.copyfile(path, work / path.name)
        try:
            work.rename(target)
        except OSError:  # another process unpacked it first
            shutil.rmtree(work, ignore_errors=True)
    return target


def conformance_available() -> bool:
    return (conformance_dir() / "qrels.test").is_file()


SKIP_NO_CONFORMANCE = (
    f"trec_eval conformance files not found in {CONFORMANCE_DATA} "
    "(python tools/record_trec_eval.py --nist DIR makes them again)"
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
