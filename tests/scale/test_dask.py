"""Evaluation on Dask (``evaluate(..., client=...)``, ``evaluate --scheduler``): the same
numbers as one process, on a LocalCluster and on a real ``dask scheduler`` with two
``dask worker`` processes on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')"
)

import metrics_core as mc  # noqa: E402
from metrics_core.cli import main  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "ranking"
MEASURES = ["P@5", "P@10", "RR", "AP", "nDCG@10", "nDCG", "Bpref", "GMAP", "NumRet", "NumRelRet"]


def _bits(x: float) -> str:
    return "nan" if math.isnan(x) else float(x).hex()


def assert_same(whole, dist):
    pd.testing.assert_frame_equal(whole.per_query, dist.per_query, check_exact=True)
    assert {k: _bits(v) for k, v in whole.aggregate.items()} == {
        k: _bits(v) for k, v in dist.aggregate.items()
    }
    assert dist.diagnostics == whole.diagnostics


def write_parts(lines: list[str], cuts: list[int], folder: Path, suffix=".run") -> Path:
    folder.mkdir()
    bounds = [0, *cuts, len(lines)]
    for i in range(len(bounds) - 1):
        (folder / f"part{i:02d}{suffix}").write_text("".join(lines[bounds[i] : bounds[i + 1]]))
    return folder


@contextlib.contextmanager
def plain_main():
    """Worker processes are spawned, and a spawned child re-runs ``__main__`` when it is a
    script; after Streamlit's AppTest (earlier test modules) ``__main__`` is an app page.
    An empty ``__main__`` while the workers start keeps them clean."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


@pytest.fixture(scope="module")
def client():
    with plain_main():
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
        )
    c = distributed.Client(cluster, timeout="30s")
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def hybrid_lines():
    return (SAMPLE / "hybrid.txt").read_text().splitlines(True)


@pytest.mark.slow  # starts a Dask cluster (the README's quick tier leaves it out)
def test_local_cluster_parts_straddling_queries(client, tmp_path, hybrid_lines):
    # cuts inside queries (20 rows per query in the sample): a query straddles two parts
    folder = write_parts(hybrid_lines, [7, 333, 1001, 1002, 1750], tmp_path / "parts")
    for conv in ({}, {"missing_queries": "zero"}, {"depth": 10, "ties": "input"}):
        whole = mc.evaluate(
            SAMPLE / "qrels.txt", SAMPLE / "hybrid.txt", MEASURES, block_rows=0, **conv
        )
        dist = mc.evaluate(SAMPLE / "qrels.txt", folder, MEASURES, client=client, **conv)
        assert dist.distributed["parts"] == 6
        assert_same(whole, dist)


@pytest.mark.slow  # starts a Dask cluster (the README's quick tier leaves it out)
def test_local_cluster_noncontiguous_mixed_formats_glob(client, tmp_path, hybrid_lines):
    rng = np.random.default_rng(3)
    lines = [hybrid_lines[i] for i in rng.permutation(len(hybrid_lines))]
    whole_path = tmp_path / "all.run"
    whole_path.write_text("".join(lines))
    folder = write_parts(lines, [500, 1200], tmp_path / "parts")
    # the last part as Parquet: a run may mix formats
    last = mc.read_run(folder / "part02.run").to_frame()
    (folder / "part02.run").unlink()
    last.to_parquet(folder / "part02.parquet", row_group_size=97)
    whole = mc.evaluate(
        SAMPLE / "qrels.txt", whole_path, MEASURES, block_rows=0, duplicates="first"
    )
    dist = mc.evaluate(
        SAMPLE / "qrels.txt", str(folder / "part*"), MEASURES, client=client, duplicates="first"
    )
    assert_same(whole, dist)


@pytest.mark.slow  # starts a Dask cluster (the README's quick tier leaves it out)
def test_worker_processes_read_byte_ranges_and_shuffle(client, tmp_path, hybrid_lines):
    # worker processes: units, results, pieces and errors travel pickled between processes
    from metrics_core.ranking.ranked import resolve_conventions
    from metrics_core.ranking.registry import parse_measures, rank_cutoffs
    from metrics_core.scale.distributed import evaluate_parts

    specs = parse_measures(MEASURES)
    qrels = mc.read_qrels(SAMPLE / "qrels.txt")
    rng = np.random.default_rng(8)
    k = len(hybrid_lines) // 2
    moved = (
        hybrid_lines[k : k + 70] + hybrid_lines[:k] + hybrid_lines[k + 70 :]
    )  # queries in two places
    for lines, shuffled in ((hybrid_lines, False), (moved, True)):
        path = tmp_path / "run.txt"
        path.write_text("".join(lines))
        whole = mc.evaluate(qrels, path, MEASURES, block_rows=0)
        dist = evaluate_parts(
            qrels,
            path,
            specs,
            resolve_conventions(None, {}),
            rank_cutoffs(specs),
            client,
            block_rows=int(rng.integers(30, 90)),
            unit_bytes=9000,
        )
        assert dist.distributed["units"] > 4
        assert bool(dist.distributed["shuffled_queries"]) == shuffled
        assert_same(whole, dist)
    lines = list(hybrid_lines)
    lines[1500] = lines[1500].replace(" Q0 ", " Q0 ", 1).rsplit(" ", 2)[0] + " x1 tag\n"
    path.write_text("".join(lines))
    with pytest.raises(InputError, match=f"{path}, line 1501: score 'x1' is not a number"):
        evaluate_parts(
            qrels,
            path,
            specs,
            resolve_conventions(None, {}),
            rank_cutoffs(specs),
            client,
            unit_bytes=9000,
        )


@pytest.mark.slow  # starts a Dask cluster (the README's quick tier leaves it out)
def test_local_cluster_duplicate_error_and_no_parts(client, tmp_path):
    folder = write_parts(["q1 Q0 a 1 2 t\n", "q1 Q0 a 2 1 t\n"], [1], tmp_path / "dups")
    with pytest.raises(InputError, match="duplicate document in the run"):
        mc.evaluate(b"q1 0 a 1\n", folder, ["P@1"], client=client)
    with pytest.raises(InputError, match="no run parts found"):
        mc.evaluate(b"q1 0 a 1\n", str(tmp_path / "nothing*"), ["P@1"], client=client)


@pytest.mark.slow  # starts a Dask cluster (the README's quick tier leaves it out)
def test_cli_scheduler_local(tmp_path, capsys, hybrid_lines):
    folder = write_parts(hybrid_lines, [999], tmp_path / "hybrid")
    args = [
        "--qrels",
        str(SAMPLE / "qrels.txt"),
        "-m",
        "AP,nDCG@10,P@5",
        "--format",
        "json",
        "--per-query",
        "--quiet",
    ]
    assert main(["evaluate", *args, "--run", str(SAMPLE / "hybrid.txt")]) == 0
    whole = json.loads(capsys.readouterr().out)
    with plain_main():
        assert main(["evaluate", *args, "--run", str(folder), "--scheduler", "local:2"]) == 0
    dist = json.loads(capsys.readouterr().out)
    assert dist["runs"][0]["per_query"] == whole["runs"][0]["per_query"]
    assert dist["runs"][0]["aggregate"] == whole["runs"][0]["aggregate"]
    assert dist["runs"][0]["name"] == "hybrid"


def test_cli_bad_scheduler_address(capsys):
    code = main(
        [
            "evaluate",
            "--qrels",
            str(SAMPLE / "qrels.txt"),
            "--run",
            str(SAMPLE / "bm25.txt"),
            "--scheduler",
            "local:zero",
        ]
    )
    assert code == 2
    assert "local:N needs a whole number" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # starts a Dask cluster (the README's quick tier leaves it out)
@pytest.mark.skipif(shutil.which("dask") is None, reason="the dask command is not installed")
def test_real_scheduler_and_two_workers(tmp_path, hybrid_lines):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    folder = write_parts(hybrid_lines, [13, 1500], tmp_path / "parts")
    procs = []
    log = open(tmp_path / "dask.log", "w")
    try:
        procs.append(
            subprocess.Popen(
                ["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                env=env,
                stdout=log,
                stderr=log,
            )
        )
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        "dask",
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--no-dashboard",
                    ],
                    env=env,
                    stdout=log,
                    stderr=log,
                    cwd=tmp_path,
                )
            )
        deadline = time.monotonic() + 40
        while True:
            try:
                with distributed.Client(address, timeout="5s") as c:
                    c.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(
                        "the dask scheduler and workers did not start: "
                        + (tmp_path / "dask.log").read_text()[-2000:]
                    )
                time.sleep(0.5)
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "metrics_core",
                "evaluate",
                "--qrels",
                str(SAMPLE / "qrels.txt"),
                "--run",
                str(folder),
                "--scheduler",
                address,
                "-m",
                ",".join(MEASURES),
                "-c",
                "--format",
                "json",
                "--per-query",
                "--quiet",
            ],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        dist = json.loads(out.stdout)["runs"][0]
        whole = mc.evaluate(
            SAMPLE / "qrels.txt",
            SAMPLE / "hybrid.txt",
            MEASURES,
            block_rows=0,
            missing_queries="zero",
        )
        assert dist["aggregate"] == pytest.approx(whole.aggregate, rel=0, abs=0)
        assert dist["diagnostics"]["num_queries"] == whole.diagnostics["num_queries"]
        assert dist["per_query"] == json.loads(
            json.dumps(whole.to_dict(per_query=True)["per_query"])
        )
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        log.close()
