"""``metrics_core.compat.pytrec_eval`` equals the real pytrec_eval, value for value.

Random collections with tied scores (some equal only in float32), graded and negative
labels, queries without relevant documents, unjudged run queries and unanswered qrels
queries. One test drives both modules through the same function, the call pattern of a
BEIR-style retrieval evaluation (map, ndcg_cut, recall and P at 1, 3, 5, 10, 100, 1000,
then the mean of each key over queries), with only the module changed.
"""

from __future__ import annotations

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from metrics_core.compat import pytrec_eval as shim  # noqa: E402

KS = (1, 3, 5, 10, 100, 1000)


def random_data(seed: int, n_queries: int = 30):
    rng = np.random.default_rng(seed)
    scores = np.array([0.5, 1.0, 1.0000000001, 2.0, 2.00000003, 3.0, -1.25, 7.5])
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(int(rng.integers(2, 60)))]
        kind = rng.choice(["both"] * 5 + ["qrels_only", "run_only"])
        if kind != "run_only":
            judged = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
            labels = (
                rng.integers(-1, 4, size=len(judged))
                if rng.random() < 0.8
                else np.zeros(len(judged), int)
            )
            qrels[f"q{q}"] = {str(d): int(v) for d, v in zip(judged, labels, strict=True)}
        if kind != "qrels_only":
            retrieved = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
            tied = rng.random() < 0.5
            run[f"q{q}"] = {
                str(d): float(rng.choice(scores)) if tied else float(rng.normal())
                for d in retrieved
            }
    return qrels, run


def beir_style_evaluate(module, qrels, results, k_values=KS):
    """How BEIR-like code evaluates retrieval results (written for this test)."""
    map_string = "map_cut." + ",".join(str(k) for k in k_values)
    ndcg_string = "ndcg_cut." + ",".join(str(k) for k in k_values)
    recall_string = "recall." + ",".join(str(k) for k in k_values)
    precision_string = "P." + ",".join(str(k) for k in k_values)
    evaluator = module.RelevanceEvaluator(
        qrels, {map_string, ndcg_string, recall_string, precision_string}
    )
    scores = evaluator.evaluate(results)
    out = {}
    for prefix, key in (("NDCG", "ndcg_cut"), ("MAP", "map_cut"), ("Recall", "recall"), ("P", "P")):
        for k in k_values:
            out[f"{prefix}@{k}"] = round(
                sum(s[f"{key}_{k}"] for s in scores.values()) / len(scores), 5
            )
    return scores, out


@pytest.mark.parametrize("seed", range(8))
def test_beir_call_pattern_equals_pytrec_eval(seed):
    qrels, run = random_data(seed)
    theirs_scores, theirs = beir_style_evaluate(pytrec_eval, qrels, run)
    ours_scores, ours = beir_style_evaluate(shim, qrels, run)
    assert ours_scores == theirs_scores  # every per-query value, exactly
    assert ours == theirs
    assert [list(v) for v in ours_scores.values()] == [list(v) for v in theirs_scores.values()]


MEASURE_SETS = [
    {"all_trec"},
    {"official"},
    {"set"},
    {"map", "ndcg", "P_5", "P.10", "recall_100", "recip_rank", "bpref", "Rprec"},
    {
        "iprec_at_recall.0.1,0.5",
        "Rprec_mult.0.5,2",
        "success.1,3",
        "relative_P.5",
        "11pt_avg.0.2,0.8",
    },
    {"ndcg_cut", "map_cut.10", "set_F.0.5", "relstring.5", "num_q", "gm_map", "gm_bpref"},
]


@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("measures", range(len(MEASURE_SETS)))
@pytest.mark.parametrize("seed", range(3))
def test_measure_spellings_equal_pytrec_eval(seed, measures, level, judged_only):
    qrels, run = random_data(100 + seed, n_queries=12)
    ms = MEASURE_SETS[measures]
    expected = pytrec_eval.RelevanceEvaluator(qrels, ms, level, judged_only).evaluate(run)
    got = shim.RelevanceEvaluator(qrels, ms, level, judged_only).evaluate(run)
    assert list(got) == list(expected) or sorted(got) == sorted(expected)
    for q in expected:
        assert list(got[q]) == list(expected[q])
        for key, value in expected[q].items():
            assert got[q][key] == value or (np.isnan(value) and np.isnan(got[q][key])), (q, key)


def test_supported_measures_and_parsers(tmp_path):
    assert shim.supported_measures <= set(pytrec_eval.supported_measures)
    assert {
        "map",
        "ndcg_cut",
        "P",
        "recall",
        "recip_rank",
        "Rprec",
        "bpref",
    } <= shim.supported_measures
    lines_q = ["q1 0 d1 1", "q1 0 d2 0", "q2 0 d1 2"]
    lines_r = ["q1 Q0 d1 1 2.5 t", "q1 Q0 d3 2 1.5 t"]
    assert shim.parse_qrel(lines_q) == pytrec_eval.parse_qrel(lines_q)
    assert shim.parse_run(lines_r) == pytrec_eval.parse_run(lines_r)
    with pytest.raises(ValueError, match="unsupported measure"):
        shim.RelevanceEvaluator({"q1": {"d1": 1}}, {"bogus_measure"})
    assert shim.RelevanceEvaluator({"q1": {"d1": 1}}, {"map"}).evaluate({}) == {}


def test_empty_rankings_and_empty_judgements_as_pytrec_eval():
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1}, "q3": {}}
    run = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {}, "q3": {"d1": 1.0}}
    ms = {"map", "P.1", "num_ret", "num_rel", "recip_rank", "ndcg_cut.10"}
    assert shim.RelevanceEvaluator(qrels, ms).evaluate(run) == pytrec_eval.RelevanceEvaluator(
        qrels, ms
    ).evaluate(run)


@pytest.mark.parametrize(
    ("parse", "lines", "message"),
    [
        (
            shim.parse_qrel,
            ["q1 0 d1 1", "q1 0 d2 high"],
            "line 2: 'high' is not a number (qid 0 docid relevance)",
        ),
        (
            shim.parse_run,
            ["q1 Q0 d1 1 x tag"],
            "line 1: 'x' is not a number (qid Q0 docid rank score tag)",
        ),
        (
            shim.parse_run,
            ["q1 Q0 d1 1 2.5"],
            "line 1: expected 6 fields (qid Q0 docid rank score tag), found 5",
        ),
    ],
)
def test_a_bad_line_is_one_clear_error(parse, lines, message):
    """Where pytrec_eval's helpers stop with a bare ValueError, one line names the problem."""
    import metrics_core as mc

    with pytest.raises(mc.InputError) as info:
        parse(lines)
    assert str(info.value) == message


@pytest.mark.parametrize("seed", range(3))
def test_compute_aggregated_measure_equals_pytrec_eval(seed):
    qrels, run = random_data(900 + seed)
    measures = {
        "map",
        "gm_map",
        "num_rel",
        "num_ret",
        "P_5",
        "ndcg_cut_10",
        "recip_rank",
        "gm_bpref",
    }
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    mine = shim.RelevanceEvaluator(qrels, measures).evaluate(run)
    for key in next(iter(theirs.values())):
        values = [per_query[key] for per_query in theirs.values()]
        assert shim.compute_aggregated_measure(
            key, values
        ) == pytrec_eval.compute_aggregated_measure(key, values)
        assert shim.compute_aggregated_measure(
            key, [q[key] for q in mine.values()]
        ) == pytest.approx(pytrec_eval.compute_aggregated_measure(key, values), rel=1e-12)
