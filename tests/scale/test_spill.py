"""Runs, qrels and ranked lists kept on disk and mapped back (:mod:`metrics_core.scale.spill`).

Every number computed from mapped data equals the number computed from the same data in
memory, bit for bit (whole and streamed evaluation, the tie report and bounds, one query's
ranking, tie sizes), under many conventions; the mapped columns are views of the file (no
copy in the process's memory) and read-only; the files are the owner's only and never
written over; a memory-backed folder (tmpfs) is told from a disk."""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core.io import open_run_stream
from metrics_core.scale import spill

pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "ranking"
MEASURES = [
    "P@5",
    "P@10",
    "R@100",
    "RR",
    "AP",
    "nDCG@10",
    "nDCG",
    "Rprec",
    "Bpref",
    "NumRet",
    "NumRelRet",
    "GMAP",
    "Success@5",
    "IPrec@0.5",
    "Judged@10",
    "Hole@10",
    "ERR@10",
]
CONVENTIONS = [
    {},
    {"ties": "input"},
    {"ties": "docid_asc", "missing_queries": "zero"},
    {"compat": "trec_eval9"},
    {"judged_only": True},
    {"depth": 7, "duplicates": "first"},
    {"ignore_identical_ids": True},
    {"labels": "keep"},
]


def _bits(x) -> str:
    return "nan" if math.isnan(x) else float(x).hex()


def assert_same(a, b) -> None:
    pd.testing.assert_frame_equal(a.per_query, b.per_query, check_exact=True)
    assert {k: _bits(v) for k, v in a.aggregate.items()} == {
        k: _bits(v) for k, v in b.aggregate.items()
    }
    assert a.diagnostics == b.diagnostics


def _texts(seed: int, rows: int = 3_000, queries: int = 40):
    """A run with ties (two-decimal scores, some equal), duplicates-free, queries not all in
    the qrels, a few document ids equal to their query id; qrels with graded and negative
    labels and fractional ones."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, queries, rows)
    d = rng.integers(0, 400, rows)
    pairs = {(int(a), int(b)) for a, b in zip(q, d, strict=True)}
    lines = []
    for a, b in sorted(pairs):
        doc = f"q{a}" if b == 7 else f"d{b}"
        lines.append(f"q{a} Q0 {doc} 1 {rng.integers(0, 30) / 4:.2f} run\n")
    run = "".join(lines).encode()
    judged = []
    for a in range(3, queries + 5):  # some qrels queries the run lacks, some run queries unjudged
        for b in rng.choice(400, 25, replace=False):
            judged.append(f"q{a} 0 d{b} {rng.choice([-1, 0, 0, 1, 1, 2, 3, 1.5])}\n")
    return run, "".join(judged).encode()


def _mapped(tmp_path, qrels_text: bytes, run_text: bytes, name: str = "x"):
    qrels = spill.spill_data(mc.read_qrels(qrels_text), tmp_path / f"q{name}")
    run = spill.spill_data(mc.read_run(run_text), tmp_path / f"r{name}")
    return qrels, run


@pytest.mark.parametrize("conv", CONVENTIONS)
def test_mapped_data_gives_the_same_numbers(tmp_path, conv):
    run_text, qrels_text = _texts(1)
    qrels, run = mc.read_qrels(qrels_text), mc.read_run(run_text)
    mq, mr = _mapped(tmp_path, qrels_text, run_text)
    assert spill.spilled(mr) is not None and spill.spilled(run) is None
    assert_same(mc.evaluate(qrels, run, MEASURES, **conv), mc.evaluate(mq, mr, MEASURES, **conv))
    # ranked lists moved to disk too (as the app keeps them), evaluated again from the mapping
    mine = mc.rank(mq, mr, cutoffs=(5, 10), **conv)
    spill.spill_ranking(mine, tmp_path / "k")
    theirs = mc.rank(qrels, run, cutoffs=(5, 10), **conv)
    assert_same(theirs.evaluate(MEASURES), mine.evaluate(MEASURES))
    covered = ["AP", "P@5", "nDCG@10", "RR"]
    assert theirs.tie_report(covered) == mine.tie_report(covered)
    for m, (lo, hi) in theirs.tie_bounds(covered).items():
        lo2, hi2 = mine.tie_bounds(covered)[m]
        assert np.array_equal(lo, lo2) and np.array_equal(hi, hi2)
    for qid in ("q3", "q10", "nope"):
        pd.testing.assert_frame_equal(theirs.ranking(qid), mine.ranking(qid), check_exact=True)
        assert np.array_equal(theirs.tie_sizes(qid), mine.tie_sizes(qid))
    spill.shed(mine)  # what it derived goes; the numbers stay
    assert_same(theirs.evaluate(MEASURES), mine.evaluate(MEASURES))


def test_expected_ties_and_streamed_evaluation_of_mapped_runs(tmp_path):
    run_text, qrels_text = _texts(2)
    qrels, run = mc.read_qrels(qrels_text), mc.read_run(run_text)
    mq, mr = _mapped(tmp_path, qrels_text, run_text)
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    assert_same(
        mc.evaluate(qrels, run, measures, ties="expected"),
        mc.evaluate(mq, mr, measures, ties="expected"),
    )
    # the app's path for large runs: in blocks (the same blocks, mapped or not)
    streamed = mc.evaluate(qrels, run, MEASURES, stream_rows=500)
    mapped = mc.evaluate(mq, mr, MEASURES, stream_rows=500)
    assert hasattr(mapped, "streaming") and mapped.streaming == streamed.streaming
    assert_same(streamed, mapped)


def test_a_mapped_file_deleted_while_in_use_still_gives_the_same_numbers(tmp_path):
    run_text, qrels_text = _texts(3)
    mq, mr = _mapped(tmp_path, qrels_text, run_text)
    before = mc.evaluate(mq, mr, MEASURES)
    for f in spill.files_of(tmp_path / "rx") + spill.files_of(tmp_path / "qx"):
        f.unlink()  # what removing a visitor's folder does to data still held
    assert not list(tmp_path.iterdir())
    assert_same(before, mc.evaluate(mq, mr, MEASURES))


def test_mapped_columns_are_read_only_views_of_the_file_not_copies(tmp_path):
    run_text, qrels_text = _texts(4, rows=20_000)
    run = mc.read_run(run_text)
    ids = run.doc_ids.tolist()
    spill.spill_data(run, tmp_path / "r")
    assert not run.values.flags.writeable and not run.values.flags.owndata
    with pytest.raises(ValueError):
        run.values[0] = 1.0
    # mapping allocates nothing in Arrow's pools: the columns are the file's pages
    before = pa.total_allocated_bytes()
    mapped = spill.map_columns(spill.files_of(tmp_path / "r")[0])
    assert pa.total_allocated_bytes() == before
    assert all(len(c) for c in mapped.values())
    assert run.doc_ids.tolist() == ids


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2", "10", "é"]),
            st.text(alphabet="ab9_-é", min_size=1, max_size=3),
            st.integers(0, 6),
        ),
        min_size=1,
        max_size=60,
    ),
    conv=st.sampled_from([{"duplicates": "first"}, {"duplicates": "count", "ties": "input"}]),
)
def test_random_runs_with_ties_mapped_equal(tmp_path_factory, rows, conv):
    run_text = "".join(f"{q} Q0 {d} 1 {s / 2} t\n" for q, d, s in rows).encode()
    qrels_text = "".join(f"{q} 0 {d} {s % 3}\n" for q, d, s in rows[::2]).encode()
    tmp = tmp_path_factory.mktemp("m")
    mq, mr = _mapped(tmp, qrels_text, run_text)
    measures = ["P@3", "AP", "RR", "nDCG@5", "NumRet", "Bpref"]
    assert_same(
        mc.evaluate(qrels_text, run_text, measures, **conv),
        mc.evaluate(mq, mr, measures, **conv),
    )


def test_a_run_written_batch_by_batch_is_the_run_read_whole(tmp_path):
    run_text, qrels_text = _texts(5, rows=5_000)
    whole = mc.read_run(run_text)
    stream = open_run_stream(run_text, batch_rows=700)
    with spill.RunWriter(tmp_path / "w") as writer:
        for batch in stream.batches():
            writer.add(
                batch.column("qid"),
                batch.column("docid"),
                batch.column("score"),
                batch.column("line"),
            )
        run = writer.finish(name=whole.name, source=whole.source, tags=whole.tags)
    assert spill.spilled(run) == tmp_path / "w"
    assert run.query_ids.tolist() == whole.query_ids.tolist()
    assert run.doc_ids.tolist() == whole.doc_ids.tolist()
    assert np.array_equal(run.scores, whole.scores)
    assert run.rows_are_lines and run.line_of(4) == whole.line_of(4) == 5
    assert_same(mc.evaluate(qrels_text, whole, MEASURES), mc.evaluate(qrels_text, run, MEASURES))


def _rss_file() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("RssFile:"):
            return int(line.split()[1]) * 1024
    return 0


def test_released_pages_leave_the_resident_memory_and_come_back_the_same(tmp_path):
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc: not Linux")
    n = 4_000_000
    run = mc.Run(np.repeat(["q1", "q2"], n // 2), np.arange(n).astype(str), np.arange(n) / 7.0)
    spill.spill_data(run, tmp_path / "r")
    total = float(run.values.sum()) + len(run.doc_ids)  # every page read: resident
    before = _rss_file()
    assert spill.release_pages(run) > 30_000_000
    assert before - _rss_file() > 30_000_000  # the file's pages left the process
    assert float(run.values.sum()) + len(run.doc_ids) == total  # and come back, the same
    assert spill.release_pages(mc.Run(["q"], ["d"], [1.0])) == 0  # not spilled: nothing


def test_lines_that_stop_being_the_rows_are_kept_from_the_first_row(tmp_path):
    with spill.RunWriter(tmp_path / "w") as writer:
        writer.add(pa.array(["q1", "q1"]), pa.array(["a", "b"]), np.array([2.0, 1.0]), [1, 2])
        writer.add(pa.array(["q2"]), pa.array(["a"]), np.array([1.0]), [5])  # a comment before
        run = writer.finish(name="r")
    assert not run.rows_are_lines and run.line_numbers.tolist() == [1, 2, 5]
    # only the run's files are left: the scratch files went into them
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "w.cols.arrow",
        "w.ids.arrow",
        "w.qids.arrow",
    ]
    with spill.RunWriter(tmp_path / "x") as writer:
        writer.add(pa.array(["q1"]), pa.array(["a"]), np.array([1.0]), [1])
        writer.discard()
    assert not list(tmp_path.glob("x.*"))


def test_lines_that_are_not_the_rows_are_kept(tmp_path):
    with spill.RunWriter(tmp_path / "w") as writer:
        writer.add(pa.array(["q1", "q1"]), pa.array(["a", "b"]), np.array([2.0, 1.0]), [3, 7])
        writer.add(pa.array(["q2"]), pa.array(["a"]), np.array([1.0]), [9])
        run = writer.finish(name="r")
    assert not run.rows_are_lines and run.line_numbers.tolist() == [3, 7, 9]
    assert run.query_ids.tolist() == ["q1", "q1", "q2"] and run.line_of(2) == 9


def test_empty_data_and_rankings_map_back(tmp_path):
    qrels = spill.spill_data(mc.read_qrels(b"q1 0 d1 1\n"), tmp_path / "q")
    run = spill.spill_data(mc.Run([], [], []), tmp_path / "r")
    assert len(run) == 0 and run.values.dtype == np.float64 and run.query_ids.tolist() == []
    ranking = spill.spill_ranking(mc.rank(qrels, run), tmp_path / "k")
    assert_same(mc.evaluate(qrels, mc.Run([], [], []), ["AP"]), ranking.evaluate(["AP"]))


def test_files_are_the_owners_only_and_never_written_over(tmp_path):
    run_text, _ = _texts(6, rows=200)
    spill.spill_data(mc.read_run(run_text), tmp_path / "r")
    files = spill.files_of(tmp_path / "r")
    assert [f.name for f in files] == ["r.cols.arrow", "r.ids.arrow", "r.qids.arrow"]
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        spill.spill_data(mc.read_run(run_text), tmp_path / "r")
    with pytest.raises(FileExistsError):
        spill.write_columns(files[0], {"a": np.zeros(3)})


def test_a_memory_backed_folder_is_told_from_a_disk(tmp_path):
    mounts = tmp_path / "mounts"
    disk, memory = tmp_path / "disk", tmp_path / "mem"
    disk.mkdir()
    memory.mkdir()
    mounts.write_text(
        "/dev/vda / ext4 rw 0 0\n"
        f"tmpfs {memory} tmpfs rw 0 0\n"
        f"tmpfs {tmp_path / 'mem2'} tmpfs rw 0 0\n"
    )
    assert spill.filesystem_of(memory / "a" / "b", str(mounts)) == "tmpfs"
    assert spill.memory_backed(memory, str(mounts))
    assert not spill.memory_backed(disk, str(mounts))
    assert spill.filesystem_of(tmp_path / "mem2x", str(mounts)) == "ext4"  # a prefix, not inside
    assert spill.disk_folder([memory, disk], str(mounts)) == (disk, True)
    # every candidate in memory (the environment's and the system's too): the first, said so
    everything = tmp_path / "all"
    everything.write_text("tmpfs / tmpfs rw 0 0\n")
    assert spill.disk_folder([memory, disk], str(everything)) == (memory, False)
    assert not spill.memory_backed(disk, str(tmp_path / "no such file"))  # not Linux: unknown


def test_the_deployers_folder_comes_before_the_systems(tmp_path, monkeypatch):
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/vda / ext4 rw 0 0\n")
    monkeypatch.setenv(spill.SPILL_DIR_ENV, str(tmp_path / "chosen"))
    assert spill.disk_folder([], str(mounts)) == (tmp_path / "chosen", True)
    assert (tmp_path / "chosen").is_dir()


def test_streamed_evaluation_spills_non_contiguous_queries_on_disk(tmp_path, monkeypatch):
    """The streamed path's spilled rows go through the same module: a disk folder, mapped."""
    used = []
    real = spill.disk_folder

    def watched(*a, **k):
        used.append(real(*a, **k))
        return used[-1]

    import metrics_core.scale.streaming as streaming

    monkeypatch.setattr(streaming, "disk_folder", watched)
    text = (SAMPLE / "bm25.txt").read_text().splitlines(keepends=True)
    shuffled = "".join(text[1::2] + text[::2]).encode()  # every query's rows in two places
    whole = mc.evaluate(SAMPLE / "qrels.txt", shuffled, ["AP", "nDCG@10"], block_rows=0)
    streamed = mc.evaluate(SAMPLE / "qrels.txt", shuffled, ["AP", "nDCG@10"], block_rows=300)
    assert used and streamed.streaming["spilled_rows"] > 0
    pd.testing.assert_frame_equal(whole.per_query, streamed.per_query, check_exact=True)
    assert os.path.isdir(used[0][0])
