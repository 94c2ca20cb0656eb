"""Nothing a user hands RankLab is ever unpickled.

A pickled payload whose unpickling would create a marker file is fed, under many names
and wrappings (raw pickle, .npy object array, torch file, gzip), to every reader through
the library and through every subcommand. The marker must never appear, and each attempt
ends with an :class:`InputError` (exit status 2 on the command line).
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metrics_core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


class _Payload:
    """Unpickling this calls ``open(marker, "w")``: the marker file appears."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def payloads(d: Path, marker: str) -> dict[str, bytes]:
    raw = pickle.dumps(_Payload(marker), protocol=4)
    buf = io.BytesIO()
    # an object array of the payload: np.save pickles it inside a valid .npy header
    arr = np.empty(1, dtype=object)
    arr[0] = _Payload(marker)
    np.save(buf, arr, allow_pickle=True)
    out = {
        "raw": raw,
        "npy": buf.getvalue(),
        "gz": gzip.compress(raw),
        "npy_gz": gzip.compress(buf.getvalue()),
    }
    try:
        import torch

        tbuf = io.BytesIO()
        torch.save({"codes": _Payload(marker)}, tbuf)
        out["pt"] = tbuf.getvalue()
    except ImportError:  # pragma: no cover - torch is a dependency of hashing
        pass
    return out


NAMES = [
    "x.pkl",
    "x.pickle",
    "x.npy",
    "x.npz",
    "x.pt",
    "x.parquet",
    "x.json",
    "x.jsonl",
    "x.csv",
    "x.tsv",
    "x.txt",
    "x.gz",
    "x",
]


@pytest.fixture()
def hostile(tmp_path):
    marker = str(tmp_path / "UNPICKLED_MARKER")
    files = []
    for kind, data in payloads(tmp_path, marker).items():
        for name in NAMES:
            path = tmp_path / f"{kind}-{name}"
            path.write_bytes(data)
            files.append(path)
    return marker, files


def test_the_payload_is_live(tmp_path):
    """The payload does what the other tests guard against: unpickled, it writes the marker."""
    marker = str(tmp_path / "LIVE")
    pickle.loads(payloads(tmp_path, marker)["raw"])
    assert os.path.exists(marker)
    os.remove(marker)
    np.load(io.BytesIO(payloads(tmp_path, marker)["npy"]), allow_pickle=True)
    assert os.path.exists(marker)


def _library_readers():
    from metrics_core.io import read_qrels, read_run
    from metrics_core.io.codes import read_matrix
    from metrics_core.io.scores import read_candidates, read_scores

    return {
        "read_run": read_run,
        "read_qrels": read_qrels,
        "read_scores": read_scores,
        "read_candidates": read_candidates,
        "read_matrix codes": lambda p: read_matrix(p, "codes"),
        "read_matrix labels": lambda p: read_matrix(p, "labels"),
    }


def test_no_library_reader_unpickles(hostile):
    marker, files = hostile
    not_refused = []
    for path in files:
        for reader_name, reader in _library_readers().items():
            for source in (str(path), path.read_bytes()):
                try:
                    reader(source)
                    not_refused.append(f"{reader_name}({path.name})")
                except InputError:
                    pass
                assert not os.path.exists(marker), f"{reader_name} unpickled {path.name}"
    assert not not_refused, not_refused


def test_no_subcommand_unpickles(hostile, tmp_path):
    marker, files = hostile
    good = tmp_path / "good"
    good.mkdir()
    (good / "run.txt").write_text("q1 Q0 d1 1 3.0 sys\n")
    (good / "qrels.txt").write_text("q1 0 d1 1\n")
    np.save(good / "c.npy", np.array([[1, -1], [-1, 1]]))
    np.save(good / "l.npy", np.array([0, 1]))
    picked = [
        p
        for p in files
        if p.name.split("-", 1)[1] in ("x.npy", "x.pt", "x.parquet", "x.pkl", "x.gz")
    ]
    commands = []
    for p in picked:
        p = str(p)
        commands += [
            ["evaluate", "--qrels", str(good / "qrels.txt"), "--run", p],
            ["evaluate", "--qrels", p, "--run", str(good / "run.txt")],
            ["detect", p],
            ["calibrate", p],
            ["dynamic-k", p],
            [
                "hash",
                "--query-codes",
                p,
                "--db-codes",
                str(good / "c.npy"),
                "--query-labels",
                str(good / "l.npy"),
                "--db-labels",
                str(good / "l.npy"),
            ],
            [
                "hash",
                "--query-codes",
                str(good / "c.npy"),
                "--db-codes",
                str(good / "c.npy"),
                "--query-labels",
                str(good / "l.npy"),
                "--db-labels",
                p,
            ],
            [
                "history",
                "add",
                "--suite",
                "s",
                "--qrels",
                str(good / "qrels.txt"),
                "--run",
                p,
                "--store",
                str(tmp_path / "h.sqlite3"),
            ],
        ]
    # one child process runs every command in turn (start-up paid once)
    script = (
        "import sys, json\n"
        "from metrics_core.cli import main\n"
        "codes = []\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    try:\n"
        "        codes.append(main(argv))\n"
        "    except SystemExit as exc:\n"
        "        codes.append(exc.code)\n"
        "print(json.dumps(codes))\n"
    )
    import json

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run(
        [sys.executable, "-c", script, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert not os.path.exists(marker), "a subcommand unpickled a payload"
    assert p.returncode == 0, p.stderr[-2000:]
    codes = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(codes) == len(commands)
    assert all(c == 2 for c in codes), [
        (" ".join(a[:2]), c) for a, c in zip(commands, codes, strict=True) if c != 2
    ]
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == len(commands), p.stderr[-2000:]
