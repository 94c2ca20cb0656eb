"""The ir_measures drop-in against the real ir_measures (installed for the tests), measure by
measure, with the provider ir_measures picks for each: random runs with tied scores
(exact and float32 ties), graded and negative labels, qrels queries the run misses, run
queries without judgements. Every per-query value and every aggregate is compared."""

from __future__ import annotations

import math
import shutil
import warnings

import numpy as np
import pytest

ir_measures = pytest.importorskip("ir_measures")

from metrics_core.compat import ir_measures as shim  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402
from tests.compat.test_pytrec_eval_shim import random_data  # noqa: E402

# every measure whose provider is installed with the test requirements: pytrec_eval, msmarco,
# judged and (with perl) gdeval
MEASURES = [
    "P@5",
    "P(rel=2)@10",
    "R@20",
    "R(rel=2)@10",
    "AP",
    "AP@10",
    "AP(rel=2)",
    "RR",
    "RR(rel=2)",
    "RR@10",
    "RR@3",
    "RR(rel=2)@10",
    "MRR@5",
    "nDCG",
    "nDCG@10",
    "Rprec",
    "Rprec(rel=2)",
    "Bpref",
    "Success@1",
    "Success@10",
    "Success(rel=2)@5",
    "IPrec@0.0",
    "IPrec@0.3",
    "IPrec@1.0",
    "infAP",
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "NumRet(rel=2)",
    "SetP",
    "SetRelP",
    "SetR",
    "SetF",
    "SetF(beta=0.5)",
    "SetAP",
    "Judged@5",
    "Judged@10",
    "Judged",
]
# nDCG with custom gains apart: asked in the same call as plain nDCG, ir_measures (0.4)
# computes the plain nDCG with those gains too whenever its set of measures happens to list
# the gains one first (a Python set's order: it changes with PYTHONHASHSEED; seen with 0).
# RankLab's plain nDCG is the one ir_measures gives when it is asked alone.
GAINS = ["nDCG(gains={0:0,1:1,2:5,3:10})@10", "nDCG(gains={0:0,1:1,2:5,3:10})"]
# judged_only measures apart: ir_measures files the counts (NumRet, NumQ) under whichever
# pytrec_eval call its set of measures happens to list first, judged_only or not
JUDGED_ONLY = [
    "P(judged_only=True)@5",
    "nDCG(judged_only=True)@10",
    "AP(judged_only=True)",
    "RR(judged_only=True)",
]
GDEVAL = ["ERR@10", "ERR@3", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@5"]


def numeric_ids(qrels, run):
    """The same collection with numeric query ids (gdeval reads only those), labels capped at
    gdeval's largest grade."""
    rename = {q: str(i + 1) for i, q in enumerate(sorted(set(qrels) | set(run)))}
    return (
        {rename[q]: {d: min(v, 4) for d, v in docs.items()} for q, docs in qrels.items()},
        {rename[q]: docs for q, docs in run.items()},
    )


def compare(names, qrels, run):
    objects = [ir_measures.parse_measure(m) for m in names]
    expected = {
        (r.query_id, str(r.measure)): r.value for r in ir_measures.iter_calc(objects, qrels, run)
    }
    mine = [shim.parse_measure(m) for m in names]
    got = {(r.query_id, str(r.measure)): r.value for r in shim.iter_calc(mine, qrels, run)}
    assert got.keys() == expected.keys()
    bad = [
        (k, got[k], v)
        for k, v in expected.items()
        if not (got[k] == v or (math.isnan(v) and math.isnan(got[k])))
    ]
    assert not bad, bad[:5]
    agg_expected = ir_measures.calc_aggregate(objects, qrels, run)
    agg_got = shim.calc_aggregate(mine, qrels, run)
    assert [str(m) for m in agg_got] == [str(m) for m in objects]
    for theirs, ours in zip(objects, mine, strict=True):
        assert agg_got[ours] == agg_expected[theirs], str(
            ours
        )  # added in the same order: equal bits


@pytest.mark.parametrize("seed", range(6))
def test_every_offered_measure_equals_ir_measures(seed):
    qrels, run = random_data(500 + seed, n_queries=30)
    compare(MEASURES, qrels, run)


@pytest.mark.parametrize("seed", range(3))
def test_custom_gains_equal_ir_measures(seed):
    compare(GAINS, *random_data(550 + seed, n_queries=30))


def test_plain_ndcg_is_ir_measures_asked_alone_whatever_else_is_asked():
    """ir_measures' plain nDCG can take the gains of an nDCG(gains=...) of the same call (in
    the set order of that run); RankLab's never does: it is always the value asked alone."""
    qrels, run = random_data(500, n_queries=30)
    alone = {
        (r.query_id, str(r.measure)): r.value
        for r in ir_measures.iter_calc([ir_measures.parse_measure("nDCG")], qrels, run)
    }
    with_gains = [shim.parse_measure(m) for m in ["nDCG", *GAINS]]
    got = {
        (r.query_id, str(r.measure)): r.value
        for r in shim.iter_calc(with_gains, qrels, run)
        if str(r.measure) == "nDCG"
    }
    assert got == alone


@pytest.mark.parametrize("seed", range(2))
def test_judged_only_measures_equal_ir_measures(seed):
    compare(JUDGED_ONLY, *random_data(600 + seed, n_queries=20))


@pytest.mark.skipif(shutil.which("perl") is None, reason="ir_measures runs gdeval with perl")
@pytest.mark.parametrize("seed", range(3))
def test_gdeval_measures_equal_ir_measures(seed):
    qrels, run = numeric_ids(*random_data(700 + seed, n_queries=20))
    compare(GDEVAL, qrels, run)


def test_rr_at_k_breaks_ties_as_the_msmarco_provider():
    qrels = {"1": {"b": 1}}
    run = {"1": {"a": 1.0, "b": 1.0, "c": 1.0}}
    # msmarco: equal scores by doc id ascending -> b second; trec_eval's rule would put it second too
    # from the other end (c, b, a); d makes the two rules disagree
    run["1"]["d"] = 1.0
    ours = shim.calc_aggregate([shim.RR @ 10], qrels, run)[shim.RR @ 10]
    theirs = ir_measures.calc_aggregate([ir_measures.RR @ 10], qrels, run)[ir_measures.RR @ 10]
    assert ours == theirs == 0.5
    # RR without a cutoff goes to pytrec_eval: trec_eval's order d, c, b, a
    assert (
        shim.calc_aggregate([shim.RR], qrels, run)[shim.RR]
        == ir_measures.calc_aggregate([ir_measures.RR], qrels, run)[ir_measures.RR]
        == pytest.approx(1 / 3)
    )


def test_measure_objects_print_and_default_as_ir_measures():
    for name, theirs in vars(ir_measures.measures).items():
        if (
            not isinstance(theirs, ir_measures.Measure)
            or name.startswith("_")
            or name not in shim.__all__
        ):
            continue
        ours = getattr(shim, name)
        assert repr(ours) == repr(theirs), name
        assert set(ours.SUPPORTED_PARAMS) == set(theirs.SUPPORTED_PARAMS), name
        for param, info in theirs.SUPPORTED_PARAMS.items():
            default = (
                None if info.default is ir_measures.measures.base._NOT_PROVIDED else info.default
            )
            mine = ours.SUPPORTED_PARAMS[param].default
            assert (None if mine is shim.NOT_PROVIDED else mine) == default, (name, param)
    for text in [
        "RBP(p=0.8)",
        "RBP(p=0.9)",
        "nDCG(dcg='exp-log2')@10",
        "P(rel=2)@5",
        "IPrec@0.1",
        "MRR@10",
        "NumRelRet",
        "SetRelP",
        "nDCG(gains={0:0,1:1,2:3})@10",
        "NDCG@5",
        "BPref",
    ]:
        assert repr(shim.parse_measure(text)) == repr(ir_measures.parse_measure(text)), text
    assert shim.RBP["p"] == ir_measures.RBP["p"] == 0.8
    assert shim.RBP(p=0.8) == shim.RBP and hash(shim.RBP(p=0.8)) == hash(shim.RBP)


def test_rbp_uses_ir_measures_default_persistence():
    qrels = {"q1": {"d1": 1, "d3": 1}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # cwl_eval's conventions are reproduced: nothing to say
        value = shim.calc_aggregate([shim.RBP(rel=1)], qrels, run)[shim.RBP(rel=1)]
        assert shim.RBP(p=0.9, rel=1).calc_aggregate(qrels, run) == pytest.approx(0.1 * (1 + 0.81))
    assert value == pytest.approx(0.2 * (1 + 0.8**2))  # (1 - p) sum p^(i-1), p = 0.8
    # graded RBP (no rel=) is RankLab's: ir_measures has no provider for it, and says so
    with pytest.warns(UserWarning, match="rel="):
        graded = shim.calc_aggregate([shim.RBP], qrels, run)[shim.RBP]
    assert graded == pytest.approx(0.2 * (1 + 0.8**2))


def _long_query(data, seed):
    """A query of 1,100 retrieved documents with tied scores (cwl_eval reads 1,000)."""
    qrels, run = data
    rng = np.random.default_rng(seed)
    run["long"] = {f"d{i}": float(rng.integers(0, 20)) for i in range(1100)}
    qrels["long"] = {f"d{i}": int(rng.integers(0, 3)) for i in range(0, 1100, 7)}
    return qrels, run


@pytest.mark.parametrize("seed", range(6))
def test_rbp_with_rel_equals_cwl_eval(seed):
    """RBP(rel=r) as ir_measures computes it with cwl_eval: equal scores in the run's order
    (a stable sort), the first 1,000 documents, negative labels as 0, a qrels query the run
    misses scored 0. cwl_eval sums with a BLAS dot product of 1,000 weights, RankLab by its
    own sum: values agree to a few units in the last place, not bit for bit."""
    pytest.importorskip("cwl")
    qrels, run = _long_query(random_data(seed), seed)
    for measure in ("RBP(rel=1)", "RBP(p=0.9,rel=2)", "RBP(p=0.5,rel=3)"):
        theirs_m, ours_m = ir_measures.parse_measure(measure), shim.parse_measure(measure)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = {m.query_id: m.value for m in ir_measures.iter_calc([theirs_m], qrels, run)}
        ours = {m.query_id: m.value for m in shim.iter_calc([ours_m], qrels, run)}
        assert set(ours) == set(theirs), measure
        for qid, value in theirs.items():
            assert ours[qid] == pytest.approx(value, rel=1e-14, abs=1e-16), (measure, qid)
        agg = ir_measures.calc_aggregate([theirs_m], qrels, run)[theirs_m]
        assert shim.calc_aggregate([ours_m], qrels, run)[ours_m] == pytest.approx(agg, rel=1e-14)


def test_the_peer_names_only_and_refusals_in_one_line():
    assert not {"np", "re", "namedtuple", "Iterable"} & set(shim.__all__)
    # the peer's names, and RankLab's documented additions (the shim's docstring names them)
    additions = {"NCG"}
    assert set(shim.__all__) - additions <= set(ir_measures.__all__)
    assert all(name in shim.__doc__ for name in additions)
    for name in shim.__all__:
        assert hasattr(shim, name)
    with pytest.raises(InputError, match=r"SDCG\(max_rel=3\)@10 is not offered") as info:
        shim.calc_aggregate([shim.SDCG(max_rel=3) @ 10], {"q": {"d": 1}}, {"q": {"d": 1.0}})
    assert "\n" not in str(info.value)
    with pytest.raises(NameError):
        shim.parse_measure("Nope@10")
    with pytest.raises(ValueError):
        shim.parse_measure("P@@5")


def test_readers_take_paths_text_files_and_gzip(tmp_path):
    import gzip

    text = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"
    run_text = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"
    path, gz = tmp_path / "qrels.txt", tmp_path / "qrels.txt.gz"
    path.write_text(text)
    gz.write_bytes(gzip.compress(text.encode()))
    (tmp_path / "run.txt").write_text(run_text)
    expected = list(ir_measures.read_trec_qrels(str(path)))
    for source in (str(path), str(gz), text, path):
        assert [tuple(q) for q in shim.read_trec_qrels(source)] == [tuple(q) for q in expected]
    with open(path) as handle:
        assert [tuple(q) for q in shim.read_trec_qrels(handle)] == [tuple(q) for q in expected]
    run_path = str(tmp_path / "run.txt")
    assert [tuple(r) for r in shim.read_trec_run(run_path)] == [
        tuple(r) for r in ir_measures.read_trec_run(run_path)
    ]
    # the usual script: read, then evaluate; and the paths themselves
    measures = [shim.nDCG @ 10, shim.P @ 1, shim.RR @ 10]
    got = shim.calc_aggregate(
        measures, shim.read_trec_qrels(str(path)), shim.read_trec_run(run_path)
    )
    theirs = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(str(m)) for m in measures],
        ir_measures.read_trec_qrels(str(path)),
        ir_measures.read_trec_run(run_path),
    )
    assert [got[m] for m in measures] == pytest.approx(
        [theirs[ir_measures.parse_measure(str(m))] for m in measures]
    )
    assert shim.calc_aggregate(measures, str(path), run_path) == got
    with pytest.raises(InputError, match="line 2"):
        list(shim.read_trec_qrels("q1 0 d1 1\nq1 0 d2\n"))


def test_evaluator_and_calc_results():
    qrels, run = random_data(42, n_queries=12)
    measures = [shim.AP, shim.nDCG @ 10, shim.RR @ 10, shim.NumQ]
    ev = shim.evaluator(measures, qrels)
    theirs = ir_measures.evaluator([ir_measures.parse_measure(str(m)) for m in measures], qrels)
    agg = ev.calc_aggregate(run)
    agg_theirs = theirs.calc_aggregate(run)
    assert [agg[m] for m in measures] == pytest.approx(
        [agg_theirs[ir_measures.parse_measure(str(m))] for m in measures]
    )
    result = ev.calc(run)
    assert result.aggregated == agg and len(result.per_query) == len(list(theirs.iter_calc(run)))
    assert shim.AP.calc_aggregate(qrels, run) == pytest.approx(
        ir_measures.AP.calc_aggregate(qrels, run)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(ev.iter_calc(run))  # no coverage warning: ir_measures' missing-query rule is applied
