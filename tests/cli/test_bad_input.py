"""Bad input: exit status 2 and ONE line on stderr naming the file and the line.

Each malformed-file kind goes through the real command line twice -- a subprocess
(``python -m metrics_core evaluate``, as a user runs it) and ``metrics_core.cli.main``
in-process -- and through the Python API, which must raise ``InputError`` carrying the
same file and line. Big files take the reader's fast path (Arrow), so each kind of bad
line is also planted at line 5000 of a 6000-line run, past the first 64 KiB.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import metrics_core as mc
from metrics_core import cli
from tests.cli.conftest import GOOD_QRELS, GOOD_RUN

REPO = Path(__file__).resolve().parents[2]


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _binary_junk() -> bytes:
    rng = np.random.default_rng(7)
    data = bytearray(GOOD_RUN) + bytearray(rng.integers(0, 256, size=400, dtype=np.uint8).tobytes())
    data[len(GOOD_RUN) + 5] = 0  # make sure there is a NUL byte
    return bytes(data)


JUNK = _binary_junk()
NON_UTF8 = GOOD_RUN + b"q2 Q0 caf\xe9\xff 2 1.0 sys\n"


def _big_run(bad_line: bytes | None = None, at: int = 5000) -> bytes:
    """6000 regular run lines (about 170 KB); line ``at`` (1-based) replaced when given."""
    lines = [
        b"q%d Q0 doc%05d %d %.3f sys\n" % (i // 100, i, i % 100 + 1, 1000 - i * 0.01)
        for i in range(6000)
    ]
    if bad_line is not None:
        lines[at - 1] = bad_line
    return b"".join(lines)


GZIP_FULL = gzip.compress(_big_run())
GZIP_TRUNCATED = GZIP_FULL[: len(GZIP_FULL) // 2]

BIG_QRELS = b"".join(b"q%d 0 doc%05d %d\n" % (i // 100, i, i % 3) for i in range(0, 6000, 7))


@dataclass(frozen=True)
class Case:
    """A malformed input: which file is bad, its bytes, where the problem is."""

    id: str
    bad: str  # "run" or "qrels"
    data: bytes | None = None  # None: see `special`
    line: int | None = None  # the line the message must name
    lines: tuple = ()  # several lines (duplicates)
    special: str = ""  # "directory", "missing"
    suffix: str = ".txt"
    words: tuple = field(default=())  # fragments the message must contain (case-insensitive)
    # One subprocess per kind of problem (start-up costs about a second of CPU); the
    # variants (qrels side, big files) go through cli.main in-process only.
    subprocess: bool = True


FILE_CASES = [
    Case("run-too-few-columns", "run", GOOD_RUN + b"q2 Q0 d4 2\n", line=4, words=("column",)),
    Case(
        "run-non-numeric-score",
        "run",
        b"q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 high sys\n",
        line=2,
        words=("score", "high"),
    ),
    Case(
        "run-nan-score",
        "run",
        b"q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 nan sys\n",
        line=2,
        words=("score",),
    ),
    Case(
        "run-inf-score",
        "run",
        b"q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 -inf sys\nq1 Q0 d3 3 1 sys\n",
        line=2,
        words=("score",),
    ),
    Case("run-empty-file", "run", b"", words=("empty",)),
    Case("run-only-blank-lines", "run", b"\n  \n\n", words=("empty",), subprocess=False),
    Case("run-binary-junk", "run", JUNK, line=_line_of(JUNK, JUNK.index(b"\0")), words=("binary",)),
    Case("run-non-utf8", "run", NON_UTF8, line=4, words=("utf-8",)),
    Case(
        "run-duplicate-pair",
        "run",
        b"q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\nq1 Q0 d1 3 0.5 s\n",
        lines=(1, 3),
        words=("duplicate", "q1", "d1"),
    ),
    Case("run-gzip-truncated", "run", GZIP_TRUNCATED, suffix=".txt.gz", words=("gzip",)),
    Case("run-directory", "run", special="directory", words=("folder",)),
    Case("run-missing-file", "run", special="missing", words=("not found",)),
    Case(
        "qrels-too-few-columns",
        "qrels",
        b"q1 0 d1 1\nq1 0 d2\n",
        line=2,
        words=("column",),
        subprocess=False,
    ),
    Case(
        "qrels-non-numeric-label",
        "qrels",
        b"q1 0 d1 1\nq1 0 d2 high\n",
        line=2,
        words=("high",),
        subprocess=False,
    ),
    Case(
        "qrels-duplicate-pair",
        "qrels",
        b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n",
        lines=(1, 3),
        words=("duplicate", "q1", "d1"),
    ),
    Case("qrels-empty-file", "qrels", b"", words=("empty",), subprocess=False),
    Case("qrels-missing-file", "qrels", special="missing", words=("not found",), subprocess=False),
    Case(
        "qrels-binary-junk",
        "qrels",
        b"q1 0 d1 1\n\x00\x01\x02junk\n",
        line=2,
        words=("binary",),
        subprocess=False,
    ),
    # Past the first 64 KiB, where the fast reader works: the line must still be named.
    Case(
        "big-run-non-numeric",
        "run",
        _big_run(b"q49 Q0 docX 1 abc sys\n"),
        line=5000,
        words=("abc",),
        subprocess=False,
    ),
    Case(
        "big-run-nan",
        "run",
        _big_run(b"q49 Q0 docX 1 NaN sys\n"),
        line=5000,
        words=("score",),
        subprocess=False,
    ),
    Case(
        "big-run-inf",
        "run",
        _big_run(b"q49 Q0 docX 1 inf sys\n"),
        line=5000,
        words=("score",),
        subprocess=False,
    ),
    Case(
        "big-run-too-few-columns",
        "run",
        _big_run(b"q49 Q0 docX 1\n"),
        line=5000,
        words=("column",),
        subprocess=False,
    ),
    Case(
        "big-run-nul",
        "run",
        _big_run(b"q49 Q0 do\x00cX 1 1.0 sys\n"),
        line=5000,
        words=("binary",),
        subprocess=False,
    ),
    Case(
        "big-run-non-utf8",
        "run",
        _big_run(b"q49 Q0 doc\xe9X 1 1.0 sys\n"),
        line=5000,
        words=("utf-8",),
        subprocess=False,
    ),
    Case(
        "big-run-duplicate-pair",
        "run",
        _big_run(b"q0 Q0 doc00010 11 999.9 sys\n"),
        lines=(11, 5000),
        words=("duplicate", "doc00010"),
        subprocess=False,
    ),
]


@pytest.fixture
def files(tmp_path):
    """Write a case's files; returns (qrels path, run path, the bad path)."""

    def make(case: Case):
        big = case.id.startswith("big-")
        qrels = tmp_path / "qrels.txt"
        run = tmp_path / "run.txt"
        qrels.write_bytes(BIG_QRELS if big else GOOD_QRELS)
        run.write_bytes(GOOD_RUN)
        bad = tmp_path / f"bad-{case.bad}{case.suffix}"
        if case.special == "directory":
            bad.mkdir()
        elif case.special != "missing":
            bad.write_bytes(case.data)
        if case.bad == "run":
            run = bad
        else:
            qrels = bad
        return qrels, run, bad

    return make


def names_lines(text: str, lines: tuple) -> bool:
    """'lines 1 and 3' (or 'lines 1, 3', 'line 1 and line 3'): both, in order."""
    a, b = lines
    return re.search(rf"\blines?\s+{a}\D{{1,12}}\b{b}\b", text) is not None


def check_message(stderr: str, case: Case, bad: Path):
    assert "Traceback" not in stderr
    text = stderr.strip()
    # What the message says about the problem, without the path (tmp paths hold test ids).
    said = text.replace(str(bad), "<file>")
    assert text, "nothing on stderr"
    assert len(text.splitlines()) == 1, f"more than one line on stderr:\n{stderr}"
    assert str(bad) in text, f"the file is not named: {text}"
    if case.line is not None:
        assert re.search(rf"\bline {case.line}\b", said), f"line {case.line} not named: {text}"
    if case.lines:
        assert names_lines(said, case.lines), f"lines {case.lines} not named: {text}"
    for word in case.words:
        assert word.lower() in said.lower(), f"{word!r} not in: {text}"


def _argv(qrels, run):
    return ["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "P@1", "-m", "AP"]


def run_subprocess(args):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "metrics_core", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


def run_cli(args, how: str, capsys):
    """(exit status, stdout, stderr) of the command line, in a subprocess or through main."""
    if how == "subprocess":
        proc = run_subprocess(args)
        return proc.returncode, proc.stdout, proc.stderr
    return run_main(args, capsys)


def assert_one_line_usage_error(status, out, err):
    assert status == 2
    assert out == ""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def run_main(args, capsys):
    try:
        status = cli.main(args)
    except SystemExit as exc:  # argparse errors leave through SystemExit
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("case", [c for c in FILE_CASES if c.subprocess], ids=lambda c: c.id)
def test_cli_subprocess(case, files):
    qrels, run, bad = files(case)
    proc = run_subprocess(_argv(qrels, run))
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    check_message(proc.stderr, case, bad)


@pytest.mark.parametrize("case", FILE_CASES, ids=lambda c: c.id)
def test_cli_main(case, files, capsys):
    qrels, run, bad = files(case)
    status, out, err = run_main(_argv(qrels, run), capsys)
    assert status == 2, err
    assert out == ""
    check_message(err, case, bad)


@pytest.mark.parametrize("case", FILE_CASES, ids=lambda c: c.id)
def test_python_api_raises_input_error(case, files):
    qrels, run, bad = files(case)
    with pytest.raises(mc.InputError) as info:
        mc.evaluate(str(qrels), str(run), ["P@1", "AP"])
    exc = info.value
    assert exc.source is not None and str(bad) in str(exc.source)
    if case.line is not None:
        assert exc.line == case.line
    text = str(exc).replace(str(bad), "<file>")
    if case.lines:
        assert names_lines(text, case.lines), text
    for word in case.words:
        assert word.lower() in text.lower(), text
    # The readers alone refuse everything but duplicates (those are the engine's call).
    if not case.lines:
        reader = mc.read_run if case.bad == "run" else mc.read_qrels
        with pytest.raises(mc.InputError):
            reader(str(bad))


# --- arguments rather than files --------------------------------------------------------


ACCEPTED_SAMPLE = ("P@k", "nDCG@k", "AP", "RR", "Bpref")


@pytest.mark.parametrize(
    ("measure", "how"),
    [("Foo@3", "subprocess")]
    + [(m, "main") for m in ("Foo@3", "P@x", "nDCG(gain=cubic)@10", "P@0")],
)
def test_unknown_measure(measure, how, good_files, capsys):
    qrels, run = good_files
    args = ["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", measure]
    status, out, err = run_cli(args, how, capsys)
    assert_one_line_usage_error(status, out, err)
    assert measure in err
    if measure in ("Foo@3", "P@x"):  # unknown names list what is accepted
        assert all(name in err for name in ACCEPTED_SAMPLE), err


@pytest.mark.parametrize("measure", ["Foo@3", "P@x", "nDCG(gain=cubic)@10", "P@0"])
def test_unknown_measure_api(measure, good_files):
    qrels, run = good_files
    with pytest.raises(mc.InputError) as info:
        mc.evaluate(str(qrels), str(run), [measure])
    assert measure in str(info.value)
    with pytest.raises(mc.InputError):
        mc.measures.parse_measure(measure)


def test_unknown_name_lists_every_accepted_family():
    with pytest.raises(mc.InputError) as info:
        mc.measures.parse_measure("Foo@3")
    text = str(info.value)
    families = [name for name, _ in mc.measures.list_measures()]
    missing = [f for f in families if f not in text]
    assert not missing, f"accepted names not listed: {missing}"


@pytest.mark.parametrize("how", ["subprocess", "main"])
def test_unknown_output_format(how, good_files, capsys):
    qrels, run = good_files
    args = ["evaluate", "--qrels", str(qrels), "--run", str(run), "--format", "xyz"]
    status, out, err = run_cli(args, how, capsys)
    assert_one_line_usage_error(status, out, err)
    assert "xyz" in err and "json" in err


def test_unknown_input_format_api(good_files):
    qrels, run = good_files
    for reader, path in ((mc.read_run, run), (mc.read_qrels, qrels)):
        with pytest.raises(mc.InputError) as info:
            reader(str(path), fmt="xyz")
        assert "xyz" in str(info.value) and "trec" in str(info.value)


def test_unrecognised_table_columns(tmp_path, capsys):
    """A CSV whose columns say nothing: the error names the file and the columns found."""
    qrels, table = tmp_path / "qrels.txt", tmp_path / "run.csv"
    qrels.write_bytes(GOOD_QRELS)
    table.write_text("foo,bar,baz\n1,2,3\n")
    status, out, err = run_main(_argv(qrels, table), capsys)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert str(table) in err and "foo" in err
    with pytest.raises(mc.InputError):
        mc.read_run(str(table))
