"""The ranked-list engine: ordering rules, duplicates, depth, diagnostics, API shape."""

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import InputError

MEASURES = [
    "P@5",
    "R@10",
    "RR",
    "AP",
    "AP@5",
    "nDCG",
    "nDCG@5",
    "Rprec",
    "Bpref",
    "Success@3",
    "IPrec@0.3",
    "Judged@5",
    "NumRet",
    "NumRelRet",
    "F1@5",
    "Hits@5",
    "FirstRel",
]


def random_case(seed, n_queries=30, ties=True):
    rng = np.random.default_rng(seed)
    rows, qrows = [], []
    for q in range(n_queries):
        docs = rng.choice(200, size=rng.integers(1, 40), replace=False)
        for d in docs:
            s = rng.integers(0, 5) if ties else rng.random()
            rows.append((f"q{q}", f"d{d}", float(s)))
        for d in rng.choice(200, size=rng.integers(1, 30), replace=False):
            qrows.append((f"q{q}", f"d{d}", int(rng.choice([-1, 0, 1, 2, 3]))))
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_line_order_does_not_matter(seed):
    run, qrels = random_case(seed)
    base = mc.evaluate(qrels, run, MEASURES).per_query
    shuffled = run.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    again = mc.evaluate(qrels, shuffled, MEASURES).per_query
    pd.testing.assert_frame_equal(base, again)


def test_ties_follow_docid_descending_by_default():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    # trec_eval: equal scores -> doc id descending: c, b, a
    assert mc.evaluate(qrels, run, ["RR"]).aggregate["RR"] == pytest.approx(1 / 3)
    assert mc.evaluate(qrels, run, ["RR"], ties="docid_asc").aggregate["RR"] == 1.0
    df = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["b", "a", "c"], "score": [1.0] * 3})
    assert mc.evaluate(qrels, df, ["RR"], ties="input").aggregate["RR"] == pytest.approx(1 / 2)


def test_negative_zero_ties_with_zero():
    qrels = {"q": {"a": 1}}
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [0.0, -0.0]})
    assert mc.evaluate(qrels, run, ["RR"]).aggregate["RR"] == 0.5  # b > a: tie broken by id


def test_duplicate_conventions():
    qrels = {"q": {"a": 1}}
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "a"], "score": [1.0, 3.0, 5.0]})
    with pytest.raises(InputError, match=r"duplicate document in the run .*'a'.*rows 1 and 3"):
        mc.evaluate(qrels, run, ["RR"])
    assert mc.evaluate(qrels, run, ["RR"], duplicates="max").aggregate["RR"] == 1.0
    assert mc.evaluate(qrels, run, ["RR"], duplicates="first").aggregate["RR"] == 0.5
    assert mc.evaluate(qrels, run, ["RR"], duplicates="last").aggregate["RR"] == 1.0
    counted = mc.evaluate(qrels, run, ["P@3", "NumRet"], duplicates="count")
    assert counted.aggregate["P@3"] == pytest.approx(2 / 3)
    assert counted.aggregate["NumRet"] == 3
    assert counted.diagnostics["duplicates"] == 1


def test_duplicate_judgements_error_or_resolved():
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "relevance": [0, 2]})
    run = {"q": {"a": 1.0}}
    with pytest.raises(InputError, match="duplicate judgement"):
        mc.evaluate(qrels, run, ["P@1"])
    assert mc.evaluate(qrels, run, ["P@1"], duplicates="max").aggregate["P@1"] == 1.0
    assert mc.evaluate(qrels, run, ["P@1"], duplicates="first").aggregate["P@1"] == 0.0


def test_missing_and_extra_queries_are_reported():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q3": {"c": 1.0}}
    ev = mc.evaluate(qrels, run, ["P@1", "NumQ"])
    assert ev.diagnostics["missing_queries"] == ["q2"]
    assert ev.diagnostics["extra_queries"] == ["q3"]
    assert ev.per_query.index.tolist() == ["q1"]
    zero = mc.evaluate(qrels, run, ["P@1", "NumQ"], missing_queries="zero")
    assert zero.per_query.index.tolist() == ["q1", "q2"]
    assert zero.aggregate == {"P@1": 0.5, "NumQ": 2.0}


def test_depth_cut_equals_truncated_run():
    run, qrels = random_case(7)
    ranked = run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False])
    top3 = ranked.groupby("query_id").head(3)
    a = mc.evaluate(qrels, run, MEASURES, depth=3).per_query
    b = mc.evaluate(qrels, top3, MEASURES).per_query
    pd.testing.assert_frame_equal(a, b)


def test_ties_straddling_a_cutoff():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}}
    ev = mc.evaluate(qrels, run, ["P@2", "P@3"])
    assert ev.diagnostics["ties_straddling"] == {"2": 1, "3": 0}
    assert ev.diagnostics["ties"] == 1


def test_to_dict_matches_cli_contract():
    ev = mc.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["P@1", "RR"])
    d = ev.to_dict(per_query=True)
    assert set(d) == {"name", "aggregate", "per_query", "diagnostics"}
    assert d["per_query"] == {"q": {"P@1": 1.0, "RR": 1.0}}
    assert {"missing_queries", "extra_queries", "ties", "duplicates"} <= set(d["diagnostics"])


def test_gmap_is_geometric_with_trec_floor():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0}}
    ev = mc.evaluate(qrels, run, ["AP", "GMAP"])
    assert ev.aggregate["AP"] == 0.5
    assert ev.aggregate["GMAP"] == pytest.approx(np.sqrt(1.0 * 1e-5))


def test_named_variants_change_only_what_they_name():
    qrels = {"q": {"a": 1, "b": 1, "z": 1}}
    run = {"q": {"a": 3.0, "x": 2.0}}
    ev = mc.evaluate(
        qrels,
        run,
        [
            "P@5",
            "P(denom=retrieved)@5",
            "AP@1",
            "AP(norm=min_rel_k)@1",
            "AP(norm=rel_retrieved)",
            "RR(miss=k_plus_1)@1",
        ],
    )
    assert ev.aggregate["P@5"] == pytest.approx(1 / 5)
    assert ev.aggregate["P(denom=retrieved)@5"] == pytest.approx(1 / 2)
    assert ev.aggregate["AP@1"] == pytest.approx(1 / 3)
    assert ev.aggregate["AP(norm=min_rel_k)@1"] == 1.0
    assert ev.aggregate["AP(norm=rel_retrieved)"] == 1.0
    assert ev.aggregate["RR(miss=k_plus_1)@1"] == 1.0


def test_unknown_measure_lists_accepted_names():
    with pytest.raises(InputError, match="accepted: P@k"):
        mc.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["nope"])


@pytest.mark.parametrize("weak_hash", ["constant", "length", "first_byte"])
@pytest.mark.parametrize("duplicates", ["error", "count", "first", "max"])
def test_fingerprint_collisions_never_change_a_result(monkeypatch, weak_hash, duplicates):
    """Equal fingerprints of different document ids (forced here by a weak hash) must be
    told apart string by string: same values, same duplicate verdicts, as with the real
    fingerprints, for runs given in rank order and shuffled, with an unjudged query."""
    from metrics_core.ranking import engine

    run, qrels = random_case(7, n_queries=12)
    run = pd.concat(
        [run, pd.DataFrame([("qx", "d1", 1.0), ("qx", "d2", 0.5)], columns=run.columns)]
    )
    if duplicates != "error":
        run = pd.concat([run, run.iloc[[3, 10, 10]].assign(score=[9.0, 0.25, 0.5])])
    ranked = run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False])
    cases = [
        ranked.reset_index(drop=True),
        run.sample(frac=1.0, random_state=3).reset_index(drop=True),
    ]
    want = [mc.evaluate(qrels, r, MEASURES, duplicates=duplicates) for r in cases]

    real = engine.hash_strings

    def weak(arr):
        h = real(arr)
        if weak_hash == "constant":
            return np.zeros_like(h)
        import pyarrow.compute as pc

        if weak_hash == "length":
            return pc.binary_length(arr).to_numpy(zero_copy_only=False).astype(np.uint64)
        return (
            pc.utf8_slice_codeunits(arr, 0, 2)
            .cast("binary")
            .to_pandas()
            .map(lambda b: int.from_bytes(b, "little"))
            .to_numpy()
            .astype(np.uint64)
        )

    monkeypatch.setattr(engine, "hash_strings", weak)
    for r, w in zip(cases, want, strict=True):
        got = mc.evaluate(qrels, r, MEASURES, duplicates=duplicates)
        pd.testing.assert_frame_equal(got.per_query, w.per_query)
        assert got.diagnostics == w.diagnostics
        assert got.ranking.lists.row_index.tolist() == w.ranking.lists.row_index.tolist()


def test_a_judged_document_sharing_a_fingerprint_with_a_retrieved_one_is_not_a_match(monkeypatch):
    """Run has d2, qrels judge d1, and the two ids collide: d2 must stay unjudged."""
    import pyarrow as pa

    from metrics_core.ranking import engine

    real = engine.hash_strings

    def colliding(arr):  # "d1" and "d2" get one fingerprint
        arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        return real(pa.array(["d1" if s == "d2" else s for s in arr.to_pylist()]))

    run = {"q1": {"d2": 2.0, "d5": 1.0}, "q2": {"d1": 1.0}}
    qrels = {"q1": {"d1": 1, "d5": 0}, "q2": {"d1": 2}}
    want = mc.evaluate(qrels, run, ["P@1", "NumRelRet", "Judged@2"]).per_query
    monkeypatch.setattr(engine, "hash_strings", colliding)
    got = mc.evaluate(qrels, run, ["P@1", "NumRelRet", "Judged@2"]).per_query
    pd.testing.assert_frame_equal(got, want)
    assert got.loc["q1", "P@1"] == 0.0 and got.loc["q1", "Judged@2"] == 0.5


@pytest.mark.parametrize("block", [1, 2, 7, 1 << 20])
def test_tie_order_in_blocks_equals_one_pass(block):
    """The tie order is computed in blocks cut at group boundaries: any block size gives
    the order of one pass over all tied rows."""
    import pyarrow as pa

    from metrics_core.ranking.keys import tie_order
    from metrics_core.ranking.strings import order_within_groups

    rng = np.random.default_rng(block)
    ids = pa.chunked_array(
        [
            pa.array([f"d{rng.integers(0, 60)}" for _ in range(150)]),
            pa.array([f"x{i % 9}" for i in range(90)]),
        ]
    )
    n = 120
    source_rows = rng.choice(len(ids), n, replace=False)
    tied = np.arange(n) + 1000
    group = np.sort(rng.integers(0, 25, n))
    for descending in (True, False):
        want = tied[order_within_groups(ids, group, descending, rows=source_rows)]
        got = tie_order(ids, tied, source_rows, group, descending, block=block)
        assert got.tolist() == want.tolist()
