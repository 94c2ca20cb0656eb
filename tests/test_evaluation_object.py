"""An Evaluation is immutable once built: nothing of it is assigned, renaming or adding a
tie report or coverage gives a copy, and the original keeps its values."""

from __future__ import annotations

import pickle

import pytest

import metrics_core as mc
from metrics_core.evaluation import Evaluation

QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d2": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 2.0}, "q2": {"d1": 1.0, "d2": 0.5}}


def test_no_field_can_be_assigned_or_deleted():
    ev = mc.evaluate(QRELS, RUN, ["AP", "P@2"])
    for name, value in (
        ("run_name", "x"),
        ("aggregate", {}),
        ("tie_report", {}),
        ("coverage", None),
        ("streaming", {}),
        ("per_query", None),
        ("ranking", None),
        ("new", 1),
    ):
        with pytest.raises(AttributeError, match="immutable"):
            setattr(ev, name, value)
    with pytest.raises(AttributeError, match="immutable"):
        del ev.run_name
    assert ev.run_name == "run" and set(ev.aggregate) == {"AP", "P@2"}


def test_renamed_is_a_copy_with_the_same_numbers():
    ev = mc.evaluate(QRELS, RUN, ["AP", "P@2"], tie_report=True)
    other = ev.renamed("bm25")
    assert (other.run_name, ev.run_name) == ("bm25", "run")
    assert other.aggregate == ev.aggregate and other.diagnostics == ev.diagnostics
    assert other.per_query.equals(ev.per_query) and other.tie_report == ev.tie_report
    assert other.ranking is ev.ranking and other.to_dict()["name"] == "bm25"


def test_replace_takes_only_the_replaceable_fields():
    ev = mc.evaluate(QRELS, RUN, ["AP"])
    with pytest.raises(TypeError, match="aggregate"):
        ev.replace(aggregate={"AP": 1.0})
    assert ev.replace(tie_report={"x": 1}).tie_report == {"x": 1} and ev.tie_report is None


def test_a_deferred_coverage_is_made_once_on_first_use():
    calls = []
    ev = Evaluation("run", [], (["q1"], {}), {}, {}, None)
    later = ev.replace(coverage=lambda: calls.append(1) or {"problem": None})
    assert calls == []
    assert later.coverage == {"problem": None} and later.coverage == {"problem": None}
    assert calls == [1] and ev.coverage is None


def test_only_a_streamed_evaluation_has_streaming_information():
    whole = mc.evaluate(QRELS, RUN, ["AP"], block_rows=0)
    streamed = mc.evaluate(QRELS, mc.read_run(RUN), ["AP"], block_rows=2)
    assert not hasattr(whole, "streaming") and whole.ranking is not None
    assert streamed.streaming["blocks"] >= 1 and streamed.ranking is None
    assert streamed.aggregate == whole.aggregate


def test_a_pickled_evaluation_comes_back_equal_and_immutable():
    # as a Dask worker's evaluation travels (evaluated in blocks: no Ranking, no deferred report)
    ev = mc.evaluate(QRELS, mc.read_run(RUN), ["AP", "P@2"], block_rows=2).renamed("a")
    back = pickle.loads(pickle.dumps(ev))
    assert (
        back.run_name == "a"
        and back.aggregate == ev.aggregate
        and back.per_query.equals(ev.per_query)
    )
    assert back.streaming == ev.streaming
    with pytest.raises(AttributeError):
        back.run_name = "b"
