"""The one front door (metrics_core.front_door): it alone picks whole, streamed or Dask
evaluation and checks the options against each other; every path gives the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.front_door import check_options, evaluate_many, evaluate_runs

pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

MEASURES = ["AP", "nDCG@10", "P@5", "RR", "R@20"]


def _data(seed: int = 3):
    """Random qrels and a run with many tied scores (one decimal)."""
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(50, 10, replace=False)}
        for i in range(40)
    }
    run = {
        f"q{i}": {f"d{j}": float(np.round(rng.random(), 1)) for j in range(50)} for i in range(45)
    }
    return mc.read_qrels(qrels), mc.read_run(run, name="sys")


def _same(a, b) -> None:
    assert a.aggregate == b.aggregate
    assert a.per_query.equals(b.per_query)
    assert a.diagnostics == b.diagnostics


def test_a_run_in_memory_over_stream_rows_is_evaluated_in_blocks_with_the_same_numbers():
    qrels, run = _data()
    whole = mc.evaluate(qrels, run, MEASURES)
    blocks = mc.evaluate(qrels, run, MEASURES, stream_rows=300, name="named")
    assert blocks.streaming["blocks"] > 1 and whole.ranking is not None and blocks.ranking is None
    assert blocks.run_name == "named" and whole.run_name == "sys"
    _same(whole, blocks)
    # at or under the bound: read whole
    assert mc.evaluate(qrels, run, MEASURES, stream_rows=len(run)).ranking is not None


def test_a_ranking_the_caller_keeps_is_reused_and_gives_the_same_numbers():
    qrels, run = _data()
    kept = mc.rank(qrels, run, cutoffs=(5, 10, 20, 50))
    asked = []

    def ranker(cutoffs):
        asked.append(cutoffs)
        return kept

    ev = mc.evaluate(qrels, run, MEASURES, ranker=ranker, name="app")
    assert ev.ranking is kept and ev.run_name == "app" and asked == [(5, 10, 20)]
    _same(mc.evaluate(qrels, run, MEASURES), ev)
    # evaluated in blocks, the ranker is not asked
    mc.evaluate(qrels, run, MEASURES, ranker=ranker, block_rows=200)
    assert len(asked) == 1


def test_the_tie_report_conflict_is_one_check_with_one_message():
    qrels, run = _data()
    with pytest.raises(mc.InputError) as lib:
        mc.evaluate(qrels, run, MEASURES, tie_report=True, block_rows=100)
    with pytest.raises(mc.InputError) as runs:
        # checked before any scheduler is reached (this address would fail to connect)
        evaluate_runs(qrels, [run], MEASURES, tie_report=True, scheduler="tcp://127.0.0.1:9")
    assert str(lib.value) == str(runs.value)
    assert "tie report needs the whole run" in str(lib.value) and lib.value.field == "tie_report"
    check_options(tie_report=True, block_rows=0)  # read whole: allowed
    check_options(block_rows=100, distributed=True)  # no tie report: allowed


def test_evaluate_runs_tells_repeated_names_apart_and_matches_evaluate(tmp_path):
    qrels, run = _data()
    path = tmp_path / "sys.txt"
    path.write_text(
        "".join(
            f"{q} Q0 {d} 0 {s!r} t\n"
            for q, d, s in zip(run.query_ids, run.doc_ids, run.scores.tolist(), strict=True)
        )
    )
    stepped = []

    class Step:
        def __init__(self, source):
            stepped.append(str(source))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    evs = evaluate_runs(qrels, [path, path, run], MEASURES, block_rows=None, step=Step)
    assert [e.run_name for e in evs] == ["sys", "sys-2", "sys-3"]
    assert stepped == [str(path), str(path), str(run)]
    for ev in evs:
        _same(mc.evaluate(qrels, run, MEASURES), ev)
    streamed = evaluate_runs(qrels, [path], MEASURES, block_rows=150)[0]
    assert streamed.streaming["blocks"] > 1
    _same(evs[0], streamed)


def test_one_multi_run_entry_point_streams_by_the_front_doors_rule(tmp_path, monkeypatch):
    """``mc.evaluate_many`` is the one multi-run entry point (``evaluate_runs`` is the same
    function under its former name): a run file over the streaming threshold streams there
    as it does alone, a mapping names its evaluations, and the numbers are evaluate's."""
    from metrics_core.scale import streaming

    assert evaluate_runs is evaluate_many is mc.evaluate_many
    qrels, run = _data()
    path = tmp_path / "sys.txt"
    path.write_text(
        "".join(
            f"{q} Q0 {d} 0 {s!r} t\n"
            for q, d, s in zip(run.query_ids, run.doc_ids, run.scores.tolist(), strict=True)
        )
    )
    monkeypatch.setattr(streaming, "STREAM_THRESHOLD_BYTES", path.stat().st_size)
    monkeypatch.setattr(streaming, "DEFAULT_BLOCK_ROWS", 300)
    alone = mc.evaluate(qrels, str(path), MEASURES)
    many = mc.evaluate_many(qrels, {"a": str(path), "b": run}, MEASURES)
    assert alone.streaming["blocks"] > 1 and many[0].streaming == alone.streaming
    assert [e.run_name for e in many] == ["a", "b"] and many[1].ranking is not None
    for ev in many:
        _same(alone, ev)
    listed = mc.evaluate_many(qrels, [str(path), str(path)], MEASURES)
    assert [e.run_name for e in listed] == ["sys", "sys-2"]
    assert all(hasattr(e, "streaming") for e in listed)
