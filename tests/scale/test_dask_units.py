"""Dask with workers that read their own units (byte ranges of TREC files cut where the
query changes, Parquet row groups, CSV files) and stream them in blocks: the per-query
values, the means and the diagnostics equal the single process's bit for bit, on random
runs with ties, for several unit and block sizes, queries spread across files, runs not
grouped by query (the shuffle), CSV and Parquet parts; errors name the file and the line
in the file."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')"
)

import metrics_core as mc  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402
from metrics_core.io import read_qrels  # noqa: E402
from metrics_core.ranking.ranked import resolve_conventions  # noqa: E402
from metrics_core.ranking.registry import parse_measures, rank_cutoffs  # noqa: E402
from metrics_core.scale.distributed import evaluate_parts  # noqa: E402
from metrics_core.scale.units import plan_units, query_boundary  # noqa: E402

MEASURES = ["P@5", "P@10", "RR", "AP", "nDCG@10", "nDCG", "Bpref", "GMAP", "NumRet", "NumRelRet"]
CONVENTIONS = [{}, {"missing_queries": "zero"}, {"depth": 10, "ties": "input"}]


@pytest.fixture(scope="module")
def client():
    # threads in this process (no network listener); test_dask.py runs worker processes
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    c = distributed.Client(cluster, timeout="30s")
    yield c
    c.close()
    cluster.close()


def random_run(seed: int, n_queries: int = 30):
    """TREC run lines grouped by query (scores with one decimal: many ties) and qrels
    (some run queries unjudged, one judged query absent from the run)."""
    rng = np.random.default_rng(seed)
    lines, qrels = [], []
    for q in range(n_queries):
        n = int(rng.integers(1, 50))
        docs = rng.choice(400, size=n, replace=False)
        scores = np.round(rng.random(n) * 3, 1)
        lines += [
            f"q{q} Q0 d{d} {r + 1} {s} tag\n"
            for r, (d, s) in enumerate(zip(docs, scores, strict=True))
        ]
        if q % 7 != 3:
            qrels += [
                f"q{q} 0 d{d} {rng.integers(0, 3)}\n"
                for d in rng.choice(400, size=15, replace=False)
            ]
    qrels.append("qabsent 0 d1 1\n")
    return lines, qrels


def bits(x: float) -> str:
    return "nan" if math.isnan(x) else float(x).hex()


def assert_same(whole, dist):
    pd.testing.assert_frame_equal(whole.per_query, dist.per_query, check_exact=True)
    assert {k: bits(v) for k, v in whole.aggregate.items()} == {
        k: bits(v) for k, v in dist.aggregate.items()
    }
    assert dist.diagnostics == whole.diagnostics


def on_dask(client, qrels, run, unit_bytes, block_rows, **conv):
    specs = parse_measures(MEASURES)
    return evaluate_parts(
        read_qrels(qrels),
        run,
        specs,
        resolve_conventions(None, conv),
        rank_cutoffs(specs),
        client,
        block_rows=block_rows,
        unit_bytes=unit_bytes,
    )


def write(path, lines):
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("units")
    lines, qrels = random_run(5)
    return tmp, lines, write(tmp / "qrels.txt", qrels)


def test_query_boundary_and_units_cut_where_the_query_changes(tmp_path):
    path = write(
        tmp_path / "r.run",
        [
            "q1 Q0 a 1 3 t\n",
            "q1 Q0 b 2 2 t\n",
            "# note\n",
            "q1 Q0 c 3 1 t\n",
            "q2 Q0 a 1 3 t\n",
            "q2 Q0 b 2 2 t\n",
        ],
    )
    data = path.read_bytes()
    q2 = data.index(b"q2")
    assert query_boundary(str(path), 1) == q2
    assert query_boundary(str(path), q2) == len(data)  # no change after q2's first line
    assert query_boundary(str(path), 0) == 0
    units = plan_units([str(path)], unit_bytes=30)
    assert [(u.start, u.end) for u in units] == [(0, q2), (q2, len(data))]
    assert [u.line_offset for u in units] == [
        0,
        None,
    ]  # a later range's lines are counted when read


@pytest.mark.parametrize("unit_bytes,block_rows", [(10**9, 10**6), (2500, 40), (600, 9)])
def test_random_runs_with_ties_grouped_by_query(client, data, unit_bytes, block_rows):
    tmp, lines, qrels = data
    run = write(tmp / "grouped.run", lines)
    for conv in CONVENTIONS:
        whole = mc.evaluate(qrels, run, MEASURES, block_rows=0, **conv)
        dist = on_dask(client, qrels, run, unit_bytes, block_rows, **conv)
        assert_same(whole, dist)
        assert dist.distributed["shuffled_queries"] == 0  # no shuffle for a run grouped by query
    assert dist.distributed["units"] > (1 if unit_bytes < 10**6 else 0)


@pytest.mark.parametrize("n_files", [2, 5])
def test_queries_spread_across_files(client, data, n_files):
    tmp, lines, qrels = data
    rng = np.random.default_rng(n_files)
    cuts = sorted(rng.choice(np.arange(1, len(lines)), size=n_files - 1, replace=False))
    folder = tmp / f"files{n_files}"
    folder.mkdir()
    bounds = [0, *cuts, len(lines)]
    for i in range(n_files):
        write(folder / f"p{i:02d}.run", lines[bounds[i] : bounds[i + 1]])
    whole_run = write(tmp / "grouped.run", lines)
    for conv in CONVENTIONS[:2]:
        whole = mc.evaluate(qrels, whole_run, MEASURES, block_rows=0, **conv)
        dist = on_dask(client, qrels, folder, 1500, 25, **conv)
        assert_same(whole, dist)
        # the queries cut by a file boundary are put together from the units' edge rows
        assert dist.distributed["shuffled_queries"] == 0
        assert dist.distributed["edge_queries"] >= 1


@pytest.mark.parametrize("how", ["shuffled", "moved"])
def test_runs_not_grouped_by_query_are_shuffled(client, data, how):
    tmp, lines, qrels = data
    rng = np.random.default_rng(11)
    if how == "shuffled":
        order = rng.permutation(len(lines))
    else:  # a stretch moved: a few queries in two places
        k = len(lines) // 3
        order = np.r_[np.arange(k, 2 * k), np.arange(k), np.arange(2 * k, len(lines))]
    run = write(tmp / f"{how}.run", [lines[i] for i in order])
    for conv in [*CONVENTIONS, {"duplicates": "first"}]:
        whole = mc.evaluate(qrels, run, MEASURES, block_rows=0, **conv)
        dist = on_dask(client, qrels, run, 2500, 40, **conv)
        assert_same(whole, dist)
        assert dist.distributed["shuffled_queries"] > 0


def test_csv_and_parquet_parts(client, data):
    tmp, lines, qrels = data
    folder = tmp / "mixed"
    folder.mkdir()
    third = len(lines) // 3
    write(folder / "a.run", lines[:third])
    frame = mc.read_run(write(tmp / "b.run", lines[third : 2 * third])).to_frame()
    frame.to_csv(folder / "b.csv", index=False)
    frame = mc.read_run(write(tmp / "c.run", lines[2 * third :])).to_frame()
    frame.to_parquet(folder / "c.parquet", row_group_size=37)  # row groups in several units
    whole_run = write(tmp / "grouped.run", lines)
    whole = mc.evaluate(qrels, whole_run, MEASURES, block_rows=0)
    dist = on_dask(client, qrels, folder, 1500, 30)
    assert_same(whole, dist)
    kinds = [u.kind for u in plan_units(sorted(str(p) for p in folder.iterdir()), 1500)]
    assert kinds.count("parquet") > 1 and kinds.count("trec") > 1 and "file" in kinds


def message(fn) -> str:
    with pytest.raises(InputError) as info:
        fn()
    return str(info.value)


def test_errors_name_the_file_and_the_line_in_the_file(client, data):
    tmp, lines, qrels = data
    bad = list(lines)
    k = len(bad) * 3 // 4  # in a later byte range: its place in the file is counted
    bad[k] = bad[k].rsplit(" ", 2)[0] + " abc tag\n"
    run = write(tmp / "bad.run", bad)
    expected = message(lambda: mc.read_run(run))
    assert f"line {k + 1}:" in expected
    assert message(lambda: on_dask(client, qrels, run, 600, 9)) == expected
    # a duplicate inside a later range, and one far from its pair (a run not grouped)
    judged = [i for i, line in enumerate(lines) if int(line.split()[0][1:]) % 7 != 3]
    k = max(i for i in judged if i < k)
    for at, dup in ((k + 1, k), (len(lines), judged[10])):
        rows = list(lines)
        rows.insert(at, lines[dup])
        run = write(tmp / "dup.run", rows)
        expected = message(lambda run=run: mc.evaluate(qrels, run, MEASURES, block_rows=0))
        assert message(lambda run=run: on_dask(client, qrels, run, 600, 9)) == expected
    # a duplicate in two files names both
    folder = tmp / "dups"
    folder.mkdir()
    write(folder / "a.run", lines[:100])
    write(folder / "b.run", [*lines[100:], lines[judged[5]]])
    text = message(lambda: on_dask(client, qrels, folder, 600, 9))
    assert f"a.run, line {judged[5] + 1} and {folder / 'b.run'}, line {len(lines) - 99}" in text
    # CSV and Parquet: the line (row) of the file
    frame = mc.read_run(write(tmp / "all.run", lines)).to_frame()
    frame["score"] = frame["score"].astype(str)
    frame.loc[len(frame) - 3, "score"] = "abc"
    frame.to_csv(tmp / "bad.csv", index=False)
    assert message(lambda: on_dask(client, qrels, [tmp / "bad.csv"], 600, 9)) == message(
        lambda: mc.read_run(tmp / "bad.csv")
    )
    frame["score"] = frame["score"].replace("abc", "nan").astype(float)
    frame.to_parquet(tmp / "bad.parquet", row_group_size=50)
    text = message(lambda: on_dask(client, qrels, [tmp / "bad.parquet"], 600, 9))
    assert text == message(lambda: mc.read_run(tmp / "bad.parquet"))
    assert f"row {len(frame) - 2}:" in text


def test_unit_size_gives_each_worker_two_units_within_bounds(monkeypatch):
    from metrics_core.scale import distributed as dist

    monkeypatch.setattr(dist.os.path, "getsize", lambda path: 100 << 20)
    assert dist.unit_size(["a"], 2) == 25 << 20  # 100 MiB for 2 workers: 4 units
    assert dist.unit_size(["a"] * 20, 2) == 30 << 20  # 2 GiB: at most 30 MiB a unit
    assert dist.unit_size(["a"], 16) == 8 << 20  # never below 8 MiB


def test_workers_get_glibc_malloc_thresholds_back_once():
    import subprocess
    import sys

    code = (
        "from metrics_core.scale.unit_tasks import tune_malloc; print(tune_malloc(), tune_malloc())"
    )
    root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    plain = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root
    )
    nanny = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=root,
        env=dict(env, MALLOC_TRIM_THRESHOLD_="65536"),
    )
    assert plain.stdout.split() == ["False", "False"]  # nothing to undo
    import platform

    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    expected = ["True", "True"] if glibc else ["False", "False"]
    assert nanny.stdout.split() == expected, nanny.stderr
