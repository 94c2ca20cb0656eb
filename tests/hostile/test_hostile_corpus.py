"""A corpus of hostile inputs, run through every reader, subcommand and option kind.

Each case runs ``python -m metrics_core ...`` -- in a child process with its address space
capped (``RLIMIT_AS``, 1.5 GB) and its CPU time capped (``RLIMIT_CPU``, 10 s), or in this
process under the same CPU-time cap (a profiling timer) -- with a wall-clock limit for a
case that blocks; it must end with exit status 2, exactly
one line on stderr naming the file or the argument, and no traceback. The cases are
generated (:func:`hostile_cases`) from a few families -- damaged and disguised files,
devices and pipes, wrong numbers, injection attempts, bad options -- crossed with the
inputs of each subcommand. Child processes run two at a time while the in-process cases
run in turn.

Cases marked ``registry`` are measure names whose checks belong to the measure registry
(parameters that overflow, NaN parameters, repeated parameters): they have their own test.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import resource
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 1536 << 20  # bytes of address space per child
CPU_LIMIT_S = 10  # CPU seconds a case may use (independent of the machine's load)
WALL_LIMIT_S = 60  # wall seconds before a case that waits (blocks) counts as a hang
WORKERS = 2

RUN = "q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 2.0 sys\nq2 Q0 d1 1 1.0 sys\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\n"
SCORES = "score,label\n0.9,1\n0.2,0\n0.7,1\n0.1,0\n"
CANDIDATES = "query,candidate,probability,is_gold\nq1,a,0.9,1\nq1,b,0.2,0\nq2,c,0.6,1\n"


@dataclass
class Case:
    id: str
    argv: list[str]
    names: str  # what the one stderr line must contain (file or option)
    stdin: bytes | None = None
    env: dict = field(default_factory=dict)
    registry: bool = False  # checked by the measure registry (see module docstring)


def _write(path: Path, data: bytes | str) -> str:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def _npy_with_shape(shape: str) -> bytes:
    """A tiny .npy whose header declares ``shape`` (the data is 16 bytes)."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }"
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\x00" * 16


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf)
    return buf.getvalue()


def hostile_files(d: Path) -> dict[str, str]:
    """Damaged, disguised and unusual files; name -> path."""
    f = {}
    f["empty"] = _write(d / "empty.txt", b"")
    f["blank"] = _write(d / "blank.txt", b"  \n\n \t\n")
    f["nul"] = _write(d / "nul.txt", b"q1 Q0 d1 1 1.0 x\n\x00\x00\x00\n")
    f["utf16"] = _write(d / "utf16.txt", RUN.encode("utf-16"))
    f["utf16_nobom"] = _write(d / "utf16le.txt", RUN.encode("utf-16-le"))
    f["latin1"] = _write(d / "latin1.txt", "q1 Q0 d\xe9 1 1.0 x\n".encode("latin-1"))
    for ext in ("gz", "bz2", "zst", "lz4", "xz"):
        f[f"fake_{ext}"] = _write(d / f"plain.{ext}", b"this is not compressed\n")
    f["trunc_gz"] = _write(d / "trunc.gz", gzip.compress(RUN.encode() * 50)[:-20])
    f["trunc_bz2"] = _write(d / "trunc.bz2", bz2.compress(RUN.encode() * 50)[:-20])
    f["trunc_xz"] = _write(d / "trunc.xz", lzma.compress(RUN.encode() * 50)[:-20])
    f["bad_zstd"] = _write(d / "bad.txt", b"\x28\xb5\x2f\xfd" + b"\x01" * 64)
    f["bad_lz4"] = _write(d / "bad_lz4.txt", b"\x04\x22\x4d\x18" + b"\x07" * 64)
    f["bzip_unnamed"] = _write(d / "bz_unnamed.txt", bz2.compress(b"q1 Q0 d1 1 x x\n"))
    f["deep_json"] = _write(d / "deep.json", "[" * 200_000 + "]" * 200_000)
    f["deep_jsonl"] = _write(d / "deep.jsonl", '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n")
    f["deep_json_noext"] = _write(d / "deep_noext", '{"a":' * 200_000 + "1" + "}" * 200_000)
    f["underscore"] = _write(d / "underscore.txt", "q1 Q0 d1 1 1_000 sys\n")
    f["arabic"] = _write(d / "arabic.txt", "q1 Q0 d1 1 \u0661\u0662 sys\n")
    f["hex"] = _write(d / "hex.txt", "q1 Q0 d1 1 0x10 sys\n")
    f["nan_score"] = _write(d / "nan.txt", "q1 Q0 d1 1 nan sys\n")
    f["inf_rel"] = _write(d / "infrel.txt", "q1 0 d1 inf\n")
    f["quoted"] = _write(d / "quoted.txt", '"q 1" Q0 d1 1 3.0 sys\n')
    f["text_rel"] = _write(d / "textrel.txt", "q1 0 d1 relevant\n")
    f["short"] = _write(d / "short.txt", "q1 Q0 d1\n")
    f["csv_empty_qid"] = _write(d / "emptyq.csv", "query_id,doc_id,score\n,d1,1.0\n")
    f["csv_empty_did"] = _write(d / "emptyd.csv", "query_id,doc_id,relevance\nq1,,1\n")
    f["csv_bad_number"] = _write(d / "badnum.csv", "query_id,doc_id,score\nq1,d1,1_000\n")
    f["csv_ragged"] = _write(d / "ragged.csv", "query_id,doc_id,score\nq1,d1,1.0,7,8\n")
    f["csv_no_columns"] = _write(d / "nocols.csv", "alpha,beta\n1,2\n")
    f["json_null_id"] = _write(
        d / "nullid.json", json.dumps([{"query_id": None, "doc_id": "d", "score": 1}])
    )
    f["json_list_id"] = _write(
        d / "listid.json", json.dumps([{"query_id": [1, 2], "doc_id": "d", "score": 1}])
    )
    f["json_scalar"] = _write(d / "scalar.json", "42")
    f["parquet_list_id"] = _write(
        d / "listid.parquet",
        _parquet(
            pd.DataFrame({"query_id": [[1, 2], [3]], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
        ),
    )
    f["parquet_struct_id"] = _write(
        d / "structid.parquet",
        _parquet(
            pd.DataFrame(
                {"query_id": [{"a": 1}, {"a": 2}], "doc_id": ["a", "b"], "relevance": [1, 0]}
            )
        ),
    )
    f["parquet_trunc"] = _write(
        d / "trunc.parquet", _parquet(pd.DataFrame({"score": [0.1], "label": [1]}))[:-30]
    )
    f["parquet_as_txt"] = _write(
        d / "disguised.txt", _parquet(pd.DataFrame({"score": [0.1], "label": [1]}))[:40]
    )
    f["npy_huge"] = _write(d / "huge.npy", _npy_with_shape("(1000000000000, 16)"))
    f["npy_bad_header"] = _write(d / "badhead.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': oops}\n")
    f["folder"] = str(d / "a_folder")
    os.makedirs(f["folder"], exist_ok=True)
    f["missing"] = str(d / "does_not_exist.txt")
    loop_a, loop_b = d / "loop_a", d / "loop_b"
    if not loop_a.is_symlink():
        os.symlink(loop_b, loop_a)
        os.symlink(loop_a, loop_b)
    f["symlink_loop"] = str(loop_a)
    fifo = d / "silent.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    f["fifo"] = str(fifo)
    f["dev_zero"] = "/dev/zero"
    f["dev_urandom"] = "/dev/urandom"
    # score tables
    f["scores_yes_bad"] = _write(d / "labels_bad.csv", "score,label\n0.5,maybe\n0.2,no\n")
    f["scores_nan"] = _write(d / "scores_nan.csv", "score,label\n0.5,1\nnan,0\n")
    f["scores_underscore"] = _write(d / "scores_us.csv", "score,label\n1_0,1\n0.2,0\n")
    f["scores_empty"] = _write(d / "scores_hdr.csv", "score,label\n")
    f["scores_two"] = _write(d / "scores_two.csv", "score,label\n2.5,1\n0.2,0\n")  # calibrate: > 1
    f["cand_empty_q"] = _write(
        d / "cand_emptyq.csv", "query,candidate,probability,is_gold\n,a,0.5,1\n"
    )
    f["cand_prob"] = _write(
        d / "cand_prob.csv", "query,candidate,probability,is_gold\nq1,a,1.5,1\n"
    )
    # hash codes
    f["codes_bad"] = _write(d / "codes_bad.csv", "1,0,2\n0,1,1\n")
    f["codes_nan"] = _write(d / "codes_nan.csv", "1,0,nan\n0,1,1\n")
    f["codes_ragged"] = _write(d / "codes_ragged.csv", "1,0,1\n0,1\n")
    # history stores
    f["store_text"] = _write(d / "store.txt", "not a database\n" * 100)
    f["store_header"] = _write(d / "store_hdr.sqlite3", b"SQLite format 3\x00" + b"\x01" * 200)
    # formula-looking names stay data (not errors): used by the injection test
    return f


def good_files(d: Path) -> dict[str, str]:
    g = {
        "run": _write(d / "run.txt", RUN),
        "qrels": _write(d / "qrels.txt", QRELS),
        "scores": _write(d / "scores.csv", SCORES),
        "candidates": _write(d / "cand.csv", CANDIDATES),
    }
    rng = np.random.default_rng(0)
    np.save(d / "qc.npy", np.where(rng.random((4, 8)) > 0.5, 1, -1))
    np.save(d / "dc.npy", np.where(rng.random((10, 8)) > 0.5, 1, -1))
    np.save(d / "ql.npy", np.array([0, 1, 0, 1]))
    np.save(d / "dl.npy", np.arange(10) % 2)
    g.update({k: str(d / f"{k}.npy") for k in ("qc", "dc", "ql", "dl")})
    return g


# which hostile files each role reads (every reader sees the file families that apply)
TEXT_FAMILY = [
    "empty",
    "blank",
    "nul",
    "utf16",
    "utf16_nobom",
    "latin1",
    "fake_gz",
    "fake_bz2",
    "fake_zst",
    "fake_lz4",
    "fake_xz",
    "trunc_gz",
    "trunc_bz2",
    "trunc_xz",
    "bad_zstd",
    "bad_lz4",
    "deep_json",
    "folder",
    "missing",
    "symlink_loop",
    "fifo",
    "dev_zero",
]


def hostile_cases(d: Path) -> list[Case]:
    f = hostile_files(d)
    g = good_files(d)
    store = str(d / "history.sqlite3")
    cases: list[Case] = []

    def add(cid, argv, names, **kw):
        cases.append(Case(cid, [str(a) for a in argv], names, **kw))

    ev = ["evaluate", "--qrels", g["qrels"], "--run", g["run"]]
    # -- every reader x the families of damaged files
    for key in TEXT_FAMILY + [
        "underscore",
        "arabic",
        "hex",
        "nan_score",
        "quoted",
        "short",
        "csv_empty_qid",
        "csv_bad_number",
        "csv_ragged",
        "csv_no_columns",
        "json_null_id",
        "json_list_id",
        "json_scalar",
        "parquet_list_id",
        "parquet_trunc",
        "deep_jsonl",
        "deep_json_noext",
        "bzip_unnamed",
        "dev_urandom",
    ]:
        add(f"evaluate-run-{key}", ["evaluate", "--qrels", g["qrels"], "--run", f[key]], f[key])
    for key in [
        "empty",
        "nul",
        "utf16",
        "fake_gz",
        "trunc_xz",
        "deep_json",
        "symlink_loop",
        "fifo",
        "dev_zero",
        "inf_rel",
        "text_rel",
        "csv_empty_did",
        "parquet_struct_id",
        "json_list_id",
    ]:
        add(f"evaluate-qrels-{key}", ["evaluate", "--qrels", f[key], "--run", g["run"]], f[key])
    for key in ["nul", "fake_bz2", "deep_json", "symlink_loop", "dev_zero", "underscore"]:
        add(
            f"compare-run-{key}",
            [
                "compare",
                "--qrels",
                g["qrels"],
                "--run",
                g["run"],
                "--run",
                f[key],
                "--baseline",
                "run",
            ],
            f[key],
        )
    for cmd in ("detect", "calibrate"):
        for key in [
            "empty",
            "nul",
            "utf16",
            "latin1",
            "fake_gz",
            "fake_zst",
            "trunc_gz",
            "deep_json",
            "folder",
            "missing",
            "symlink_loop",
            "fifo",
            "dev_zero",
            "parquet_trunc",
            "parquet_as_txt",
            "scores_yes_bad",
            "scores_nan",
            "scores_underscore",
            "scores_empty",
            "csv_no_columns",
        ]:
            add(f"{cmd}-{key}", [cmd, f[key]], f[key])
    add("calibrate-prob-above-1", ["calibrate", f["scores_two"]], f["scores_two"])
    for key in [
        "empty",
        "nul",
        "fake_bz2",
        "deep_json",
        "symlink_loop",
        "dev_zero",
        "cand_empty_q",
        "cand_prob",
        "scores_yes_bad",
    ]:
        add(f"dynamic-k-{key}", ["dynamic-k", f[key]], f[key])
    roles = ["--query-codes", "--db-codes", "--query-labels", "--db-labels"]
    good_hash = {
        "--query-codes": g["qc"],
        "--db-codes": g["dc"],
        "--query-labels": g["ql"],
        "--db-labels": g["dl"],
    }
    for i, key in enumerate(
        [
            "npy_huge",
            "npy_bad_header",
            "codes_bad",
            "codes_nan",
            "codes_ragged",
            "empty",
            "nul",
            "utf16",
            "fake_gz",
            "symlink_loop",
            "dev_zero",
            "fifo",
            "missing",
            "folder",
            "deep_json",
        ]
    ):
        role = (
            roles[i % 4]
            if key.startswith(
                (
                    "npy",
                    "empty",
                    "nul",
                    "utf16",
                    "fake",
                    "symlink",
                    "dev",
                    "fifo",
                    "missing",
                    "folder",
                    "deep",
                )
            )
            else roles[i % 2]
        )
        argv = ["hash"] + [a for r in roles for a in (r, f[key] if r == role else good_hash[r])]
        add(f"hash-{role.strip('-')}-{key}", argv, f[key])
    for key in ["nul", "fake_gz", "symlink_loop", "dev_zero"]:
        add(
            f"history-add-run-{key}",
            [
                "history",
                "add",
                "--suite",
                "s",
                "--qrels",
                g["qrels"],
                "--run",
                f[key],
                "--store",
                store,
            ],
            f[key],
        )
    add(
        "history-add-qrels-utf16",
        [
            "history",
            "add",
            "--suite",
            "s2",
            "--qrels",
            f["utf16"],
            "--run",
            g["run"],
            "--store",
            store,
        ],
        f["utf16"],
    )
    for key in ["store_text", "store_header", "folder"]:
        add(f"history-list-{key}", ["history", "list", "--store", f[key]], f[key])
        add(f"history-report-{key}", ["history", "report", "--store", f[key]], f[key])

    # -- standard input and pipes
    add(
        "evaluate-stdin-nul",
        ["evaluate", "--qrels", g["qrels"], "--run", "-"],
        "<stdin>",
        stdin=b"\x00" * 4096,
    )
    add(
        "evaluate-stdin-empty",
        ["evaluate", "--qrels", g["qrels"], "--run", "-"],
        "<stdin>",
        stdin=b"",
    )
    add(
        "evaluate-stdin-twice",
        ["evaluate", "--qrels", "-", "--run", "-"],
        "<stdin>",
        stdin=QRELS.encode(),
    )
    add("detect-stdin-utf16", ["detect", "-"], "<stdin>", stdin=SCORES.encode("utf-16"))
    add(
        "evaluate-dev-stdin-underscore",
        ["evaluate", "--qrels", g["qrels"], "--run", "/dev/stdin"],
        "/dev/stdin",
        stdin=b"q1 Q0 d1 1 1_0 sys\n",
    )
    add(
        "evaluate-input-limit",
        ["evaluate", "--qrels", g["qrels"], "--run", "-"],
        "<stdin>",
        stdin=RUN.encode() * 1000,
        env={"RANKLAB_MAX_INPUT_BYTES": "1000"},
    )
    add(
        "evaluate-gzip-bomb-limit",
        [
            "evaluate",
            "--qrels",
            g["qrels"],
            "--run",
            _write(d / "bomb.gz", gzip.compress(b"q1 Q0 d1 1 1 x\n" * 200_000)),
        ],
        "bomb.gz",
        env={"RANKLAB_MAX_INPUT_BYTES": "100000"},
    )

    # -- numeric options: NaN, infinity, out of range, not a number
    for opt, values in {
        "-l": ["nan", "inf", "-inf", "abc"],
        "-M": ["0", "-1", "2.5", "nan", "10**9"],
    }.items():
        for v in values:
            add(f"evaluate-opt{opt}={v}", ev + [opt, v], opt)
    add(
        "evaluate-gain-overflow",
        [
            "evaluate",
            "--qrels",
            _write(d / "bigrel.txt", "q1 0 d1 1099511627776\n"),
            "--run",
            g["run"],
            "--gain",
            "exp",
            "-m",
            "nDCG@10",
        ],
        "gain=exp",
    )
    add("evaluate-out-dev-full", ev + ["-o", "/dev/full"], "/dev/full")
    add("evaluate-out-missing-folder", ev + ["-o", str(d / "nope" / "out.txt")], "out.txt")
    add("evaluate-out-folder", ev + ["-o", f["folder"]], f["folder"])
    cmp_ = [
        "compare",
        "--qrels",
        g["qrels"],
        "--run",
        g["run"],
        "--run",
        _write(d / "run2.txt", RUN),
        "--baseline",
        "run",
    ]
    for opt, v in [
        ("--permutations", "0"),
        ("--permutations", "1e9"),
        ("--permutations", "100000000"),
        ("--bootstrap", "-1"),
        ("--bootstrap", "nan"),
        ("--confidence", "nan"),
        ("--confidence", "1.5"),
        ("--alpha", "inf"),
        ("--seed", "-1"),
        ("--seed", "x"),
    ]:
        add(f"compare-opt{opt}={v}", cmp_ + [opt, v], opt)
    add(
        "compare-out-dev-full",
        cmp_ + ["--permutations", "10", "--format", "csv", "-o", "/dev/full"],
        "/dev/full",
    )
    for opt, v in [
        ("--fpr", "nan"),
        ("--fpr", "2"),
        ("--fpr", "abc"),
        ("--bootstrap", "1000000000"),
        ("--seed", "-5"),
        ("--score-col", "nope"),
    ]:
        add(
            f"detect-opt{opt}={v}",
            ["detect", g["scores"], opt, v],
            opt if opt != "--score-col" else "nope",
        )
    for v in ["0", "-3", "1000000000", "nan", "2.5", "1e3"]:
        add(f"calibrate-bins={v}", ["calibrate", g["scores"], "--bins", v], "--bins")
    add("calibrate-out-dev-full", ["calibrate", g["scores"], "-o", "/dev/full"], "/dev/full")
    for opt, v in [
        ("--tau", "nan"),
        ("--tau", "inf"),
        ("--k-min", "-1"),
        ("--hard-cap", "-1"),
        ("--k-max-ratio", "nan"),
        ("--k-max-ratio", "-1"),
    ]:
        add(f"dynamic-k-opt{opt}={v}", ["dynamic-k", g["candidates"], opt, v], opt)
    hash_ok = ["hash"] + [a for r in roles for a in (r, good_hash[r])]
    for opt, v in [
        ("--radius", "-1"),
        ("--radius", "nan"),
        ("--topk", "0"),
        ("--topk", "1e9"),
        ("-k", "0"),
        ("-k", "nan"),
        ("--device", "bogus"),
        ("--device", "cuda:99"),
        ("--ties", "bogus"),
    ]:
        add(f"hash-opt{opt}={v}", hash_ok + [opt, v], opt if opt != "--device" else "device")
    add("hash-out-dev-full", hash_ok + ["-o", "/dev/full"], "/dev/full")
    hist = [
        "history",
        "add",
        "--suite",
        "s",
        "--qrels",
        g["qrels"],
        "--run",
        g["run"],
        "--store",
        store,
    ]
    for v in ["P@5=nan", "P@5=inf", "P@5=abc", "=0.5", "P@5"]:
        add(f"history-fail-below={v}", hist + ["--fail-below", v], "--fail-below")
    add("history-delete-unconfirmed", ["history", "delete", "1", "--store", store], "--yes")
    add(
        "history-list-out-dev-full",
        ["history", "list", "--store", store, "--format", "csv", "-o", "/dev/full"],
        "/dev/full",
    )

    # -- measure names: the registry's own checks (merged separately)
    for m in ["P@1000000000000000000000", "P(rel=nan)@5", "nDCG(gain=exp,gain=linear)@10"]:
        add(f"evaluate-measure-{m}", ev + ["-m", m], m.split("@")[0].split("(")[0], registry=True)
    add("evaluate-measure-unknown", ev + ["-m", "NoSuchMeasure@5"], "NoSuchMeasure")
    return cases


#: ids of the cases the measure registry checks
def _registry_ids(cases):
    return [c.id for c in cases if c.registry]


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S + 2))


def needs_process(case: Case) -> bool:
    """Cases that touch devices, pipes, standard input, the environment or declared sizes
    run in a child process with capped memory; the rest run in this process (the same
    ``main``; a timer stops a hang), which keeps the corpus fast on two cores."""
    return (
        case.stdin is not None
        or bool(case.env)
        or any(
            a.startswith("/dev/")
            or a.endswith((".fifo", "huge.npy", ".json", ".jsonl", "deep_noext"))
            for a in case.argv
        )
    )


class _Hang(BaseException):
    """Raised by the timer; not an Exception, so no handler of the code under test eats it."""


def _warm_up() -> None:
    """Import once what the in-process cases share (torch, scipy.stats, the subcommands),
    so that a case's timer measures the case, not a first import on a busy machine."""
    import importlib

    from metrics_core.cli import COMMANDS
    from metrics_core.hashing import evaluate_hashing

    for module, _ in COMMANDS.values():
        importlib.import_module(f"metrics_core.cli.{module}")
    evaluate_hashing([[1, -1]], [[1, -1], [-1, 1]], [0], [0, 1], ks=(1,))


def run_inprocess(case: Case) -> tuple[int | None, str, str]:
    import contextlib
    import signal
    import traceback
    import warnings

    from metrics_core.cli import main

    def on_alarm(signum, frame):
        what = "CPU" if signum == signal.SIGPROF else "wall"
        limit = CPU_LIMIT_S if signum == signal.SIGPROF else WALL_LIMIT_S
        raise _Hang(f"no answer within {limit} {what} seconds (a hang)")

    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, on_alarm)
    previous_prof = signal.signal(signal.SIGPROF, on_alarm)
    signal.alarm(WALL_LIMIT_S)
    signal.setitimer(signal.ITIMER_PROF, CPU_LIMIT_S)
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("default")
            try:
                code = main(list(case.argv))
            except SystemExit as exc:
                code = exc.code
            except _Hang as exc:
                err.write(f"{exc}\n")
                code = None
            except BaseException:  # noqa: BLE001 - anything that escapes is the defect to report
                err.write(traceback.format_exc())
                code = None
    finally:
        signal.alarm(0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGPROF, previous_prof)
    return code, out.getvalue(), err.getvalue()


def run_case(case: Case, cwd: Path) -> tuple[int | None, str, str]:
    # RLIMIT_AS counts address space reserved, not used: thread pools (OpenBLAS, Arrow's
    # CPU pool sized by OMP_NUM_THREADS) and glibc's per-thread malloc arenas reserve
    # tens of MB per thread on a many-core host, so the child keeps them small
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RANKLAB_PIPE_WAIT_S": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "2",
        "MALLOC_ARENA_MAX": "2",
        "RANKLAB_HOME": str(cwd / "home"),
        "PYTHONWARNINGS": "default",
        **case.env,
    }
    try:
        p = subprocess.run(
            [sys.executable, "-m", "metrics_core", *case.argv],
            cwd=cwd,
            input=case.stdin if case.stdin is not None else b"",
            capture_output=True,
            timeout=WALL_LIMIT_S,
            env=env,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        return None, "", f"no answer within {WALL_LIMIT_S} s (a hang)"
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def problems(case: Case, code, stderr: str) -> list[str]:
    out = []
    if code != 2:
        out.append(f"exit status {code}, expected 2")
    if "Traceback" in stderr:
        out.append("a traceback")
    lines = stderr.splitlines()
    if len(lines) != 1:
        out.append(f"{len(lines)} lines on stderr, expected 1")
    if case.names not in stderr:
        out.append(f"the message does not name {case.names!r}")
    if "np.float64" in stderr or "np.int64" in stderr:
        out.append("a numpy repr in the message")
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    cases = hostile_cases(d)
    child = [c for c in cases if needs_process(c)]
    _warm_up()
    with ThreadPoolExecutor(WORKERS) as pool:
        futures = {c.id: pool.submit(run_case, c, d) for c in child}
        results = {c.id: run_inprocess(c) for c in cases if not needs_process(c)}
        results.update({cid: fut.result() for cid, fut in futures.items()})
    return {c.id: (c, *results[c.id]) for c in cases}


def test_corpus_is_large_and_covers_every_subcommand(tmp_path):
    cases = hostile_cases(tmp_path)
    assert len(cases) >= 100
    assert len({c.id for c in cases}) == len(cases)
    commands = {c.argv[0] for c in cases}
    assert commands >= {
        "evaluate",
        "compare",
        "detect",
        "calibrate",
        "dynamic-k",
        "hash",
        "history",
    }


@pytest.mark.slow  # builds the corpus: 100+ commands (not in the quick tier)
@pytest.mark.xdist_group("hostile_corpus")  # one process builds the corpus (pytest -n)
def test_every_hostile_case_is_one_clear_line(corpus):
    failures = []
    for cid, (case, code, _out, err) in corpus.items():
        if case.registry:
            continue
        found = problems(case, code, err)
        if found:
            failures.append(f"{cid}: {'; '.join(found)} -- stderr: {err.strip()[-300:]!r}")
    assert not failures, f"{len(failures)} hostile cases failed:\n" + "\n".join(failures)


@pytest.mark.slow  # builds the corpus: 100+ commands (not in the quick tier)
@pytest.mark.xdist_group("hostile_corpus")  # one process builds the corpus (pytest -n)
def test_registry_cases(corpus):
    failures = [
        cid
        for cid, (case, code, _o, err) in corpus.items()
        if case.registry and problems(case, code, err)
    ]
    assert not failures, failures


@pytest.mark.slow  # builds the corpus: 100+ commands (not in the quick tier)
@pytest.mark.xdist_group("hostile_corpus")  # one process builds the corpus (pytest -n)
def test_fifo_and_dev_zero_are_refused_quickly(corpus):
    hash_dev_zero = next(
        cid for cid in corpus if cid.startswith("hash-") and cid.endswith("-dev_zero")
    )
    for cid in ("evaluate-run-fifo", "evaluate-run-dev_zero", "detect-dev_zero", hash_dev_zero):
        case, code, _out, err = corpus[cid]
        assert code == 2 and "Traceback" not in err, (cid, err)
    assert "pipe" in corpus["evaluate-run-fifo"][3]
    assert "NUL" in corpus["evaluate-run-dev_zero"][3]


def test_stdin_is_read_once_and_named(tmp_path):
    g = good_files(tmp_path)
    case = Case(
        "stdin-ok",
        ["evaluate", "--qrels", g["qrels"], "--run", "-", "-m", "P@1", "--format", "json"],
        "",
        stdin=RUN.encode(),
    )
    code, out, err = run_case(case, tmp_path)
    assert code == 0, err
    assert json.loads(out)["runs"][0]["aggregate"]["P@1"] == 1.0
    # /dev/stdin from a pipe: the old reader opened the path twice and saw an empty file
    case = Case(
        "devstdin-ok",
        ["evaluate", "--qrels", g["qrels"], "--run", "/dev/stdin", "-m", "P@1", "--format", "json"],
        "",
        stdin=RUN.encode(),
    )
    code, out, err = run_case(case, tmp_path)
    assert code == 0, err
    assert json.loads(out)["runs"][0]["aggregate"]["P@1"] == 1.0


def test_compressed_inputs_are_recognised_by_content(tmp_path):
    """gzip, bzip2 and xz under any name (or none) read as their content, in every reader."""
    g = good_files(tmp_path)
    for name, data in [
        ("run.bin", gzip.compress(RUN.encode())),
        ("run.txt", bz2.compress(RUN.encode())),
        ("run", lzma.compress(RUN.encode())),
    ]:
        path = _write(tmp_path / name, data)
        code, out, err = run_case(
            Case(
                name,
                ["evaluate", "--qrels", g["qrels"], "--run", path, "-m", "P@1", "--format", "json"],
                "",
            ),
            tmp_path,
        )
        assert code == 0, err
        assert json.loads(out)["runs"][0]["aggregate"]["P@1"] == 1.0
    path = _write(tmp_path / "scores.csv.xz", lzma.compress(SCORES.encode()))
    code, out, err = run_case(Case("det", ["detect", path], ""), tmp_path)
    assert code == 0, err
    assert json.loads(out)["auroc"] == 1.0
    path = _write(tmp_path / "scores_plain.csv", bz2.compress(SCORES.encode()))
    code, out, err = run_case(Case("cal", ["calibrate", path], ""), tmp_path)
    assert code == 0, err
    assert json.loads(out)["n"] == 4


def test_unix_permissions_case_is_refused(tmp_path):
    """A file the process may not read (skipped as root, who reads everything)."""
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    g = good_files(tmp_path)
    p = Path(_write(tmp_path / "secret.txt", RUN))
    p.chmod(0)
    try:
        code, _out, err = run_case(
            Case("perm", ["evaluate", "--qrels", g["qrels"], "--run", str(p)], ""), tmp_path
        )
    finally:
        p.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert code == 2 and "permission denied" in err and err.count("\n") == 1
