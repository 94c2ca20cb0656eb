"""Every reader bounds what it decodes before decoding it, in the library and on the command
line: each bomb below is refused with one line naming the file, what is too large and the
limit, and the process's peak resident set while it is read grows by less than
:data:`BOUND_MB`.

The bombs are made at test time (nothing large is kept in git) and read in fresh child
processes -- one for the library's readers, one for the command line -- so that the memory
is measured on a clean heap: before each case the child resets its peak
(``/proc/self/clear_refs``) and reports ``VmHWM`` less the resident set before the read.
Before these limits: the 0.96 MB Parquet whose document-id dictionary decodes to 1 GB took
the library past 3 GB, a 39 MB CSV of one line was accepted at +389-435 MB, a 500 MB
one-line file took the library past 3 GB, and three 0.9 MB zstd text bombs cost 938 MB; a
2 kB torch ``.pt`` holding an expanded view (100,000,000 x 64 declared, one row stored) was
accepted and every later step allocated its shape; a history store file whose CHECK
constraint builds a 900 MB string ran it on ``history add`` (+860 MB).

Last, the command itself (``python -m metrics_core evaluate``) is run on four bombs as a
user runs it: exit status 2, one line, a peak within :data:`BOUND_MB` of its peak on a
valid one-line run.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metrics_core.errors import InputError
from metrics_core.io import Limits, read_run, using_limits
from tests.hostile.bombs import (
    RUN_LINE,
    check_bomb_history,
    deep_json,
    expanded_pt,
    forged_npy,
    forged_npz,
    forged_zip_sizes,
    one_line_file,
    parquet_dictionary_bomb,
    text_bomb,
    zip_text_bomb,
)

ROOT = Path(__file__).resolve().parents[2]
#: MiB a refused bomb may add to the peak resident set of the process reading it.
BOUND_MB = 150
MIB = 1 << 20

pytestmark = [
    pytest.mark.skipif(
        not Path("/proc/self/clear_refs").exists(),
        reason="the peak resident set needs Linux's /proc",
    ),
    pytest.mark.xdist_group("reader_limits"),  # one process writes the bombs (pytest -n 2)
]

#: The child: reads cases (name, Python code) as JSON on stdin, runs each after resetting
#: its peak, and prints one JSON line per case: the peak growth and what was said.
CHILD = r"""
import contextlib, gc, io, json, sys, threading, time
sys.path.insert(0, sys.argv[1])
import metrics_core as mc
from metrics_core.cli import main
from metrics_core.io import Limits, read_qrels, read_run, using_limits, open_run_stream
from metrics_core.io.codes import read_matrix
from metrics_core.io.metadata import read_metadata
from metrics_core.io.clicks import read_click_log
from metrics_core.io.scores import read_candidates, read_scores
from metrics_core.history.store import HistoryStore
read_run(b"q1 Q0 d1 1 1.0 t\n", name="warm")
read_qrels(b"q1 0 d1 1\n")
import pandas, pyarrow.parquet, torch  # imports out of the measure


def kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])


def cli(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    text = err.getvalue().strip()
    if code != 2:  # judged as this case's failure, the child goes on to the next
        raise AssertionError(f"exit status {code}: {text}")
    raise RuntimeError(text)


def three(read, *sources):
    said = []
    def go(source):
        try:
            read(source)
            said.append("accepted")
        except Exception as exc:
            said.append(str(exc))
    threads = [threading.Thread(target=go, args=(s,)) for s in sources]
    [t.start() for t in threads]
    [t.join() for t in threads]
    raise RuntimeError(" | ".join(said))


def three_cli(*argvs):
    err = io.StringIO()
    codes = []
    def go(argv):
        codes.append(main([str(a) for a in argv]))
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        threads = [threading.Thread(target=go, args=(a,)) for a in argvs]
        [t.start() for t in threads]
        [t.join() for t in threads]
    lines = err.getvalue().strip().splitlines()
    if codes != [2, 2, 2] or len(lines) != 3:
        raise AssertionError(f"exit statuses {codes}: {lines}")
    raise RuntimeError(" | ".join(lines))


def upload(path, name):
    fh = io.BytesIO(open(path, "rb").read())
    fh.name = name
    return fh


for name, code in json.load(sys.stdin):
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = kib("VmRSS")
    start = time.perf_counter()
    try:
        exec(code)
        said, kind = "accepted", None
    except Exception as exc:
        said, kind = str(exc), type(exc).__name__
    grown = (kib("VmHWM") - before) / 1024
    took = time.perf_counter() - start
    row = {"case": name, "grown_mb": grown, "s": took, "said": said, "kind": kind}
    print(json.dumps(row), flush=True)
"""


def run_child(cases: list[tuple[str, str]]) -> dict[str, dict]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {r["case"]: r for r in rows}


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    """Every bomb, written under one folder; the two large ones (39 MB and 500 MB of one
    line, written in blocks) are removed when the module is done."""
    folder = tmp_path_factory.mktemp("bombs")
    out = {}

    def put(name: str, data: bytes) -> None:
        out[name] = folder / name
        out[name].write_bytes(data)

    put("dictionary.parquet", parquet_dictionary_bomb())
    put(
        "long-ids.parquet",
        parquet_dictionary_bomb(50_000_000, entry=2 * MIB, distinct=2, noise=False),
    )
    out["one-line.csv"] = folder / "one-line.csv"
    one_line_file(out["one-line.csv"], 39 * MIB)
    out["one-line-500.txt"] = folder / "one-line-500.txt"
    one_line_file(out["one-line-500.txt"], 500 * MIB, head=b"")
    out["long-id.txt"] = folder / "long-id.txt"
    out["long-id.txt"].write_bytes(b"q1 Q0 " + b"d" * (200 << 10) + b" 1 2.5 run\n" + RUN_LINE)
    put("deep.json", deep_json())
    put("big.json", b'{"q1": {' + b",".join(b'"d%d": 1.0' % i for i in range(300_000)) + b"}}")
    for fmt in ("gzip", "bzip2", "xz", "zstd", "lz4"):
        put(f"lines.{fmt}", text_bomb(fmt))
    out["lines.zip"] = folder / "lines.zip"
    zip_text_bomb(out["lines.zip"])
    import torch

    buf = io.BytesIO()
    torch.save(torch.ones(64, 8), buf)
    put("forged.pt", forged_zip_sizes(buf.getvalue()))
    buf = io.BytesIO()
    torch.save(torch.ones(4 * MIB, 8, dtype=torch.uint8), buf)  # 32 MiB of codes
    put("big.pt", buf.getvalue())
    buf = io.BytesIO()
    np.savez(buf, codes=np.ones((64, 8)))
    put("forged.npz", forged_zip_sizes(buf.getvalue()))
    buf = io.BytesIO()
    np.save(buf, np.ones((4 * MIB, 8), dtype=np.uint8))
    put("big.npy", buf.getvalue())
    from metrics_core.history.store import HistoryStore

    with HistoryStore(":memory:") as store:
        put("history.sqlite3", store.to_bytes() + bytes(4 * MIB))  # a 4 MB history file
    put("qrels.txt", b"q1 0 d1 1\n")
    put("run.txt", RUN_LINE)
    put("forged.npy", forged_npy())
    put("forged-header.npz", forged_npz())
    put("expanded.pt", expanded_pt())
    put("check-bomb.sqlite3", check_bomb_history(900_000_000))
    yield out
    for name in ("one-line.csv", "one-line-500.txt"):
        out[name].unlink(missing_ok=True)


#: case -> (code run in the child, words of the refusal). ``P[...]`` is a bomb's path.
LIBRARY = {
    "Parquet dictionary (1 GB of ids)": ("read_run(P['dictionary.parquet'])", "texts decoded"),
    "Parquet dictionary, uploaded": (
        "read_run(upload(P['dictionary.parquet'], 'up.parquet'))",
        "texts decoded",
    ),
    "Parquet dictionary, in batches": (
        "list(open_run_stream(P['dictionary.parquet']).batches())",
        "a batch of the Parquet file",
    ),
    "Parquet dictionary, mc.evaluate": (
        "mc.evaluate(P['qrels.txt'], P['dictionary.parquet'])",
        "texts decoded",
    ),
    "Parquet ids of 2 MiB": ("read_run(P['long-ids.parquet'])", "above the field limit of 64 KiB"),
    "CSV of one 39 MB line": ("read_run(P['one-line.csv'])", "line limit of 1 MiB"),
    "CSV of one 39 MB line, uploaded": (
        "read_run(upload(P['one-line.csv'], 'up.csv'))",
        "line limit of 1 MiB",
    ),
    "one 500 MB line, mc.evaluate": (
        "mc.evaluate(P['qrels.txt'], P['one-line-500.txt'])",
        "line limit of 1 MiB",
    ),
    "TREC id of 200 KB": ("read_run(P['long-id.txt'])", "document id of 200 KiB"),
    "JSON nested 10^6 deep": ("read_run(P['deep.json'])", "JSON nested more than 100"),
    "JSON over its limit": (
        "read_run(P['big.json'], limits=Limits(max_input_mb=16))",
        "above the JSON limit of 2 MiB",
    ),
    "metadata of one 39 MB line": ("read_metadata(str(P['one-line.csv']))", "line limit"),
    "click log of one 39 MB line": ("read_click_log(str(P['one-line.csv']))", "line limit"),
    "scores of one 39 MB line": ("read_scores(str(P['one-line.csv']))", "line limit"),
    "candidates of one 39 MB line": ("read_candidates(str(P['one-line.csv']))", "line limit"),
    "three zstd text bombs at once": (
        "three(read_run, *(upload(P['lines.zstd'], f'bomb{i}.zst') for i in range(3)))",
        "decompression bomb",
    ),
    "torch .pt, forged member sizes": ("read_matrix(P['forged.pt'])", "above the input limit"),
    "torch .pt over the limit": (
        "read_matrix(P['big.pt'], limits=Limits(max_input_mb=16))",
        "takes 32 MiB, above the input limit of 16 MiB",
    ),
    "numpy .npy over the limit": (
        "read_matrix(P['big.npy'], limits=Limits(max_input_mb=16))",
        "above the input limit of 16 MiB",
    ),
    "numpy .npz, forged member sizes": ("read_matrix(P['forged.npz'])", "above the input limit"),
    "numpy .npy header declaring 256 TB": (
        "read_matrix(P['forged.npy'])",
        "the array its header declares ((1000000000000, 64) of float32) takes 244,140,625",
    ),
    "numpy .npz member declaring 256 TB": (
        "read_matrix(upload(P['forged-header.npz'], 'codes.npz'))",
        "codes.npz:codes.npy: the array its header declares",
    ),
    "torch .pt view declaring 25.6 GB": (
        "read_matrix(P['expanded.pt'])",
        "the tensor the .pt file declares ((100000000, 64) of float32) takes 24,414.1 MiB, "
        "above the input limit of 1,024 MiB",
    ),
    "history store file, CHECK building 900 MB": (
        "s = HistoryStore(P['check-bomb.sqlite3']); s.add_suite('new', P['qrels.txt'])",
        "the SQL of suite_qrels is not RankLab's own schema",
    ),
    "history upload, CHECK building 900 MB": (
        "HistoryStore.from_bytes(open(P['check-bomb.sqlite3'], 'rb').read(), 'h.sqlite3')",
        "the SQL of suite_qrels is not RankLab's own schema",
    ),
    "history file over the limit": (
        "with using_limits(Limits(max_input_mb=2)): "
        "HistoryStore.from_bytes(open(P['history.sqlite3'], 'rb').read(), 'h.sqlite3')",
        "above the input limit of 2 MiB",
    ),
}
for _fmt in ("gzip", "bzip2", "xz", "zstd", "lz4", "zip"):
    LIBRARY[f"{_fmt} text bomb"] = (f"read_run(P['lines.{_fmt}'])", "decompression bomb")

#: case -> (command line, words of the refusal: the command line's flags)
COMMAND_LINE = {
    "evaluate: Parquet dictionary": (
        "cli('evaluate', '--quiet', '--qrels', P['qrels.txt'], '--run', P['dictionary.parquet'])",
        "raise the limit: --max-input-mb N",
    ),
    "evaluate: one 500 MB line": (
        "cli('evaluate', '--quiet', '--qrels', P['qrels.txt'], '--run', P['one-line-500.txt'])",
        "with --max-line-kb N",
    ),
    "evaluate: qrels of one 39 MB line": (
        "cli('evaluate', '--quiet', '--qrels', P['one-line.csv'], '--run', P['qrels.txt'])",
        "with --max-line-kb N",
    ),
    "evaluate: zstd text bomb": (
        "cli('evaluate', '--quiet', '--qrels', P['qrels.txt'], '--run', P['lines.zstd'])",
        "decompression bomb",
    ),
    "evaluate: JSON over --max-input-mb": (
        "cli('evaluate', '--quiet', '--qrels', P['qrels.txt'], '--run', P['big.json'], '--max-input-mb', '16')",
        "above the JSON limit of 2 MiB",
    ),
    "trec_eval: one 500 MB line": (
        "cli('trec_eval', P['qrels.txt'], P['one-line-500.txt'])",
        "line limit",
    ),
    "detect: scores of one 39 MB line": ("cli('detect', P['one-line.csv'])", "line limit"),
    "hash: forged .pt": (
        "cli('hash', '--query-codes', P['forged.pt'], '--db-codes', P['forged.pt'], "
        "'--query-labels', P['qrels.txt'], '--db-labels', P['qrels.txt'])",
        "above the input limit",
    ),
    "hash: .npy over --max-input-mb": (
        "cli('hash', '--query-codes', P['big.npy'], '--db-codes', P['big.npy'], "
        "'--query-labels', P['qrels.txt'], '--db-labels', P['qrels.txt'], '--max-input-mb', '16')",
        "above the input limit of 16 MiB",
    ),
}


EVALUATE = "cli('evaluate', '--quiet', '--qrels', P['qrels.txt'], '--run', P[{!r}])"
HASH = (
    "cli('hash', '--query-codes', P[{0!r}], '--db-codes', P[{0!r}], "
    "'--query-labels', P['qrels.txt'], '--db-labels', P['qrels.txt'])"
)
COMMAND_LINE.update(
    {
        "evaluate: Parquet ids of 2 MiB": (EVALUATE.format("long-ids.parquet"), "--max-field-kb N"),
        "evaluate: TREC id of 200 KB": (EVALUATE.format("long-id.txt"), "--max-field-kb N"),
        "evaluate: JSON nested 10^6 deep": (
            EVALUATE.format("deep.json"),
            "JSON nested more than 100 levels deep",
        ),
        "evaluate: three zstd text bombs at once": (
            "three_cli(*[('evaluate', '--quiet', '--qrels', P['qrels.txt'], '--run', "
            "P['lines.zstd']) for _ in range(3)])",
            "decompression bomb",
        ),
        "fuse: Parquet dictionary": (
            "cli('fuse', '--run', P['run.txt'], '--run', P['dictionary.parquet'])",
            "--max-input-mb N",
        ),
        "hash: .pt view declaring 25.6 GB": (
            HASH.format("expanded.pt"),
            "the tensor the .pt file declares ((100000000, 64) of float32)",
        ),
        "hash: .npy header declaring 256 TB": (
            HASH.format("forged.npy"),
            "the array its header declares ((1000000000000, 64) of float32)",
        ),
        "hash: .npz member declaring 256 TB": (
            HASH.format("forged-header.npz"),
            "forged-header.npz:codes.npy: the array its header declares",
        ),
        "hash: .npz, forged member sizes": (HASH.format("forged.npz"), "--max-input-mb N"),
        "history add: a store whose CHECK builds 900 MB": (
            "cli('history', 'add', '--suite', 'new', '--qrels', P['qrels.txt'], '--run', "
            "P['run.txt'], '--store', P['check-bomb.sqlite3'])",
            "the SQL of suite_qrels is not RankLab's own schema",
        ),
    }
)
for _fmt in ("gzip", "bzip2", "xz", "lz4", "zip"):
    COMMAND_LINE[f"evaluate: {_fmt} text bomb"] = (
        EVALUATE.format(f"lines.{_fmt}"),
        "decompression bomb",
    )


def _cases(table: dict, bombs: dict) -> list[tuple[str, str]]:
    paths = "P = " + repr({k: str(v) for k, v in bombs.items()}) + "\n"
    return [(name, paths + code) for name, (code, _) in table.items()]


@pytest.fixture(scope="module")
def library_results(bombs):
    return run_child(_cases(LIBRARY, bombs))


@pytest.fixture(scope="module")
def command_line_results(bombs):
    return run_child(_cases(COMMAND_LINE, bombs))


def _judge(result: dict, words: str) -> None:
    said = result["said"]
    assert result["kind"] in ("InputError", "RuntimeError"), said  # never another error
    assert "\n" not in said and "Traceback" not in said, said
    for part in said.split(" | "):  # three at once: each refused
        assert words in part, said
    assert result["grown_mb"] < BOUND_MB, f"+{result['grown_mb']:.0f} MB: {said}"


@pytest.mark.slow  # the bombs, read in child processes (not in the quick tier)
@pytest.mark.parametrize("case", sorted(LIBRARY))
def test_the_library_refuses_each_bomb_in_bounded_memory(library_results, case):
    _judge(library_results[case], LIBRARY[case][1])


@pytest.mark.slow  # the bombs, read in child processes (not in the quick tier)
@pytest.mark.parametrize("case", sorted(COMMAND_LINE))
def test_the_command_line_refuses_each_bomb_in_one_line(command_line_results, case):
    result = command_line_results[case]
    _judge(result, COMMAND_LINE[case][1])
    assert result["said"].startswith(("error: ", "trec_eval: ")), result["said"]
    assert "limits=Limits(" not in result["said"]  # the flags, not the library's words


# -- limits raised, and what stays readable ----------------------------------------------


def test_a_raised_limit_reads_what_the_default_refuses():
    text = RUN_LINE * 3 + b"q2 Q0 " + b"d" * (80 << 10) + b" 1 1.0 run\n"
    with pytest.raises(InputError, match="field limit of 64 KiB"):
        read_run(text, name="r")
    assert len(read_run(text, name="r", limits=Limits(max_field_kb=128))) == 4
    with using_limits(Limits(max_field_kb=128)):
        assert len(read_run(text, name="r")) == 4


def test_one_line_json_documents_are_not_held_to_the_line_limit():
    """A JSON document written by json.dump is one line: its size and depth are its limits."""
    doc = json.dumps({"q1": {f"d{i}": 1.0 for i in range(200_000)}}).encode()
    assert len(doc) > 2 * MIB and doc.count(b"\n") == 0
    assert len(read_run(doc, fmt="json", name="r")) == 200_000


def test_compressed_runs_read_from_disk_equal_the_plain_ones(tmp_path):
    """Past 16 MiB a decompressed input is read from a file on a disk: same rows."""
    from tests.hostile.bombs import compress

    rng = np.random.default_rng(1)
    lines = "".join(
        f"q{q} Q0 d{q}-{r} {r + 1} {rng.random():.6f} run\n" for q in range(200) for r in range(600)
    ).encode()
    plain = read_run(lines, name="r")
    big = lines * 5  # past the 16 MiB kept in memory
    assert len(big) > 16 * MIB
    for fmt in ("gzip", "zstd"):
        unpacked = read_run(compress(fmt, big), name="r", fmt="trec", limits=Limits())
        assert len(unpacked) == 5 * len(plain)
        np.testing.assert_array_equal(unpacked.scores[: len(plain)], plain.scores)


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("RANKLAB_MAX_INPUT_MB", "2")
    monkeypatch.setenv("RANKLAB_MAX_LINE_KB", "1")
    limits = Limits.from_env()
    assert (limits.input_bytes, limits.line_bytes) == (2 * MIB, 1024)
    with pytest.raises(InputError, match="line limit of 1 KiB"):
        read_run(RUN_LINE + b"q1 Q0 " + b"d" * 2000 + b" 1 1.0 x\n", name="r")
    monkeypatch.setenv("RANKLAB_MAX_INPUT_MB", "lots")
    with pytest.raises(InputError, match="RANKLAB_MAX_INPUT_MB is 'lots'"):
        Limits.from_env()


def test_a_run_file_read_whole_is_held_to_the_input_limit_but_not_one_read_in_blocks(tmp_path):
    import metrics_core as mc

    path = tmp_path / "run.txt"
    path.write_bytes(
        b"".join(
            b"q%d Q0 d%d %d %d.0 r\n" % (i // 100, i, i % 100 + 1, 100 - i % 100)
            for i in range(3000)
        )
    )
    qrels = b"q1 0 d101 1\nq2 0 d205 1\n"
    with using_limits(Limits(max_input_mb=20 / 1024)):  # 20 KiB; the file takes 65 KiB
        with pytest.raises(
            InputError, match="the file takes 6.* KiB, above the input limit of 20 KiB"
        ):
            read_run(path)
        streamed = mc.evaluate(qrels, path, ["P@5", "AP"], block_rows=500)
    assert streamed.streaming["blocks"] > 1
    assert streamed.aggregate == mc.evaluate(qrels, path, ["P@5", "AP"]).aggregate


# -- the command itself, as a user runs it ------------------------------------------------


def _command(*argv) -> tuple[int, str, float]:
    """(exit status, standard error, peak resident set in MiB) of ``python -m
    metrics_core ARGV`` run from a folder outside the repository."""
    import os

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "metrics_core", *map(str, argv)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=Path(argv[-1]).parent,
        env=env,
    )
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, err, usage.ru_maxrss / 1024


@pytest.fixture(scope="module")
def valid_run_peak_mb(bombs) -> float:
    """The command's peak resident set on a valid one-line run (its own imports)."""
    status, err, peak_mb = _command(
        "evaluate", "--qrels", bombs["qrels.txt"], "--run", bombs["run.txt"]
    )
    assert status == 0, err
    return peak_mb


@pytest.mark.slow  # the bombs, read in child processes (not in the quick tier)
@pytest.mark.parametrize(
    "bomb, words",
    [
        ("dictionary.parquet", "the Parquet table, its texts decoded, takes"),
        ("one-line-500.txt", "a line longer than the line limit of 1 MiB"),
        ("lines.zstd", "decompression bomb"),
        ("deep.json", "JSON nested more than 100 levels deep"),
    ],
)
def test_the_command_refuses_a_bomb_in_one_line_near_its_footprint_on_a_valid_run(
    bombs, valid_run_peak_mb, bomb, words
):
    """``python -m metrics_core evaluate`` on each bomb: exit status 2, one line on standard
    error naming the file (after the note that announces a large input), and a peak
    resident set within :data:`BOUND_MB` of the same command's on a valid one-line run."""
    status, err, peak_mb = _command("evaluate", "--qrels", bombs["qrels.txt"], "--run", bombs[bomb])
    assert status == 2, err
    *notes, said = err.strip().splitlines()  # a large file is announced before it is read
    assert all(n.startswith("evaluating ") for n in notes), err
    assert said.startswith(f"error: {bombs[bomb]}") and words in said, err
    grown = peak_mb - valid_run_peak_mb
    assert grown < BOUND_MB, f"{peak_mb:.0f} MB against {valid_run_peak_mb:.0f} MB: {err}"
