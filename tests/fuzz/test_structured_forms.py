"""The structured forms (records, mappings, DataFrames, Arrow tables) fuzzed with hypothesis:
any value in any field gives a sound Run/Qrels or an InputError, and valid records read
exactly as the same data given as ``{qid: {docid: value}}``."""

from __future__ import annotations

import math
from collections import namedtuple

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core.errors import InputError
from tests.fuzz.targets import check_columns

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")
Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")

ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.binary(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
IDS = st.text(alphabet="abq19 _-é", min_size=1, max_size=4).filter(lambda s: s.strip())
VALUES = st.integers(-3, 3) | st.floats(-10, 10, allow_nan=False)


def _read_all_ways(kind: str, records):
    read = mc.read_run if kind == "run" else mc.read_qrels
    out = []
    for wrap in (list, tuple, iter):
        try:
            data = read(wrap(records))
        except InputError as exc:
            assert str(exc) and "\n" not in str(exc)
            out.append(None)
            continue
        check_columns(data)
        out.append(data)
    return out


@SETTINGS
@given(
    st.lists(st.tuples(ANY, ANY, ANY), max_size=5),
    st.sampled_from(["run", "qrels"]),
    st.sampled_from(["namedtuple", "dict", "tuple"]),
)
def test_any_field_values(rows, kind, shape):
    if shape == "namedtuple":
        records = [ScoredDoc(*r) if kind == "run" else Qrel(*r, "0") for r in rows]
    elif shape == "dict":
        vname = "score" if kind == "run" else "relevance"
        records = [{"query_id": a, "doc_id": b, vname: c} for a, b, c in rows]
    else:
        records = rows
    results = _read_all_ways(kind, records)
    # a list, a tuple and a generator of the same records read alike
    assert (
        len(
            {
                None if r is None else (tuple(r.query_ids), tuple(r.doc_ids), tuple(r.values))
                for r in results
            }
        )
        == 1
    )


@SETTINGS
@given(st.dictionaries(IDS, st.dictionaries(IDS, VALUES, max_size=4), max_size=4))
def test_valid_records_read_as_the_mapping(mapping):
    pairs = [(q, d, v) for q, docs in mapping.items() for d, v in docs.items()]
    if not pairs:
        assert len(mc.read_run(mapping)) == 0
        return
    want = mc.read_run(mapping)
    frame = pd.DataFrame(pairs, columns=["query_id", "doc_id", "score"])
    for form in (
        [ScoredDoc(*p) for p in pairs],
        (p for p in pairs),
        frame,
        pa.Table.from_pandas(frame),
        [dict(zip(("q_id", "doc_id", "score"), p, strict=True)) for p in pairs],
    ):
        got = mc.read_run(form)
        assert got.query_ids.tolist() == want.query_ids.tolist()
        assert got.doc_ids.tolist() == want.doc_ids.tolist()
        assert [float(v) for v in got.scores] == [float(v) for v in want.scores]


@SETTINGS
@given(st.lists(st.one_of(ANY, st.tuples(ANY, ANY)), min_size=1, max_size=4))
def test_mixed_or_odd_records_are_refused_clearly(records):
    for kind in ("run", "qrels"):
        for result in _read_all_ways(kind, records):
            if result is not None:
                assert all(isinstance(x, str) for x in result.query_ids)


@pytest.mark.parametrize(
    "obj", [object(), 3, 2.5, None, True], ids=["object", "int", "float", "none", "bool"]
)
def test_objects_that_are_no_table(obj):
    with pytest.raises(InputError, match="cannot read data from an object"):
        mc.read_run(obj)


class _Broken:
    def to_dataframe(self):
        raise RuntimeError("boom")


class _DictOnly:
    def to_dict(self):
        return {"q": {"d": 1.0}}


def test_duck_typed_objects():
    with pytest.raises(InputError, match=r"to_dataframe\(\) failed \(RuntimeError\)"):
        mc.read_run(_Broken())
    assert mc.read_run(_DictOnly()).doc_ids.tolist() == ["d"]


def test_never_ending_generator_is_bounded(monkeypatch):
    import itertools

    from metrics_core.io import objects

    monkeypatch.setattr(objects, "MAX_RECORDS", 1000)
    with pytest.raises(InputError, match="more than 1,000 records"):
        mc.read_run(ScoredDoc("q", str(i), 1.0) for i in itertools.count())


def test_nan_score_in_records_names_the_row():
    with pytest.raises(InputError, match="row 2") as caught:
        mc.read_run([ScoredDoc("q", "a", 1.0), ScoredDoc("q", "b", math.nan)])
    assert "score" in str(caught.value)
