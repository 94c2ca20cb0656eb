"""Every worked example of the seed specifications, to its printed digits.

- seed 003 (a notebook of relevance-vector functions): its printed outputs, under the
  named conventions the notebook's code implies (P over the retrieved list, AP divided
  by the relevant documents retrieved, Jarvelin's discount, ideal ranking from the
  retrieved list);
- seed 001 (an explainer of P@K, MRR, MRR@K, NDCG@K with hand-computed examples);
- seed 000 (SPEC-003's MetricsCalculator test suite and its ReportAggregator), translated
  to ``mc.io.from_lists`` + ``mc.evaluate`` and ``metrics_core.stats.aggregate``.

Seed 000's lists are evaluated as the spec evaluates them: every query it is given
counts (``missing_queries="zero"``), and a document retrieved twice counts twice
(``duplicates="count"``), which is what its ``test_duplicates_in_retrieved`` asks for.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
import metrics_core.stats.aggregate as agg

# random runs often share no query or no judged document with their qrels: the readers'
# coverage warning is expected here (tests/io/test_coverage.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")


def vector_values(labels, measures, num_relevant=None):
    """Seed 003: measures of one relevance vector (labels of the retrieved list, in order)."""
    nr = None if num_relevant is None else {"q": num_relevant}
    run, qrels = mc.io.from_relevance_vectors({"q": labels}, num_relevant=nr)
    ev = mc.evaluate(qrels, run, measures)
    return dict(zip(measures, (float(ev.per_query.loc["q", m]) for m in ev.measures), strict=True))


# --- seed 003 -------------------------------------------------------------------------


def test_seed003_precision_of_the_retrieved_list():
    # precision([0,0,0,1]) = 0.25: relevant retrieved / retrieved (trec_eval's set_P),
    # the same as P with denominator min(k, retrieved) for any k >= 4.
    v = vector_values([0, 0, 0, 1], ["P", "P(denom=retrieved)@4", "P(denom=retrieved)@10"])
    assert v == {"P": 0.25, "P(denom=retrieved)@4": 0.25, "P(denom=retrieved)@10": 0.25}


def test_seed003_precision_at_1():
    assert vector_values([0, 0, 0, 1], ["P@1"]) == {"P@1": 0.0}


def test_seed003_recall_at_1_with_four_relevant():
    v = vector_values([0, 0, 0, 1], ["R@1", "R@4"], num_relevant=4)
    assert v == {"R@1": 0.0, "R@4": 0.25}


def test_seed003_average_precision_normalised_by_relevant_retrieved():
    # The notebook divides by sum(relevance): the relevant documents retrieved.
    # (1/2 + 2/4 + 3/5 + 4/6 + 5/7) / 5
    v = vector_values([0, 1, 0, 1, 1, 1, 1], ["AP(norm=rel_retrieved)", "AP"])
    assert repr(v["AP(norm=rel_retrieved)"]) == "0.5961904761904762"
    # Without unretrieved relevant documents both normalizers agree.
    assert v["AP"] == pytest.approx(0.5961904761904762, abs=1e-15)
    # With 8 relevant in the collection trec_eval's AP divides by 8, the notebook's by 5.
    v8 = vector_values([0, 1, 0, 1, 1, 1, 1], ["AP(norm=rel_retrieved)", "AP"], num_relevant=8)
    assert v8["AP(norm=rel_retrieved)"] == pytest.approx(0.5961904761904762, abs=1e-15)
    assert v8["AP"] == pytest.approx(0.5961904761904762 * 5 / 8, abs=1e-15)


SEED003_GRADED = [4, 4, 3, 0, 0, 1, 3, 3, 3, 0]


def test_seed003_dcg_at_6_jarvelin_discount():
    # DCG@K = sum rel_i / log2(max(i, 2)): Jarvelin & Kekalainen's discount.
    v = vector_values(SEED003_GRADED, ["DCG(discount=jarvelin)@6", "DCG@6"])
    assert repr(v["DCG(discount=jarvelin)@6"]) == "10.279642067948915"
    by_hand = 4 / 1 + 4 / math.log2(3) + 3 / 2 + 0 + 0 + 1 / math.log2(7)
    assert v["DCG@6"] == pytest.approx(by_hand, abs=1e-12)  # trec_eval's 1/log2(i+1)


def test_seed003_ndcg_at_6_ideal_from_retrieved_list():
    # The notebook's ideal ranking sorts the retrieved labels, not the qrels.
    v = vector_values(SEED003_GRADED, ["nDCG(discount=jarvelin,ideal=retrieved)@6"])
    assert repr(v["nDCG(discount=jarvelin,ideal=retrieved)@6"]) == "0.7424602308163405"


# --- seed 001 -------------------------------------------------------------------------


def lists_values(queries: dict, measures, **conventions):
    run, qrels = mc.io.from_lists(queries)
    ev = mc.evaluate(qrels, run, measures, **conventions)
    return ev


def test_seed001_precision_at_k():
    ev = lists_values(
        {"envios a Quito": ([f"HAW00{i}" for i in range(1, 6)], ["HAW001", "HAW003", "HAW005"])},
        ["P@1", "P@3", "P@5"],
    )
    row = ev.per_query.iloc[0]
    assert [f"{row[m]:.2f}" for m in ev.measures] == ["1.00", "0.67", "0.60"]


SEED001_MRR_QUERIES = {
    "envios a Quito": (["HAW001", "HAW002", "HAW003", "HAW004", "HAW005"], ["HAW002"]),
    "celulares del mes anterior": (["HAW010", "HAW011", "HAW012"], ["HAW010"]),
    "productos electronicos": (["HAW020", "HAW021", "HAW022", "HAW023"], ["HAW023"]),
}


def test_seed001_mrr_over_three_queries():
    ev = lists_values(SEED001_MRR_QUERIES, ["RR"])
    assert sorted(ev.per_query["RR"]) == [0.25, 0.5, 1.0]
    assert f"{ev.aggregate['RR']:.2f}" == "0.58"
    assert ev.aggregate["RR"] == pytest.approx(1.75 / 3, abs=1e-15)


def test_seed001_mrr_at_5_counts_a_miss_as_k_plus_1():
    # "Primer relevante en posicion 7 -> 1/6 = 0.17 (se cuenta como posicion 6)"
    docs = [f"D{i}" for i in range(1, 11)]
    ev = lists_values({"q1": (docs, ["D2"]), "q2": (docs, ["D7"])}, ["RR(miss=k_plus_1)@5", "RR@5"])
    pq = ev.per_query
    assert pq.loc["q1", "RR(miss=k_plus_1)@5"] == 0.5
    assert pq.loc["q2", "RR(miss=k_plus_1)@5"] == 1 / 6
    assert f"{pq.loc['q2', 'RR(miss=k_plus_1)@5']:.2f}" == "0.17"
    assert pq.loc["q2", "RR@5"] == 0.0  # trec_eval's default: a miss scores 0


def test_seed001_ndcg_at_4_true_value_not_the_printed_one():
    """Seed 001 prints DCG@4 = 5.13, IDCG@4 = 5.13 and NDCG@4 = 1.00 for labels [3,1,3,0].

    DCG@4 = 3/1 + 1/log2(3) + 3/2 + 0 = 5.1309 is right. The ideal ranking [3,3,1,0] is
    worth 3/1 + 3/log2(3) + 1/2 = 5.3928, not 5.13: the seed added the ideal labels with
    the discounts of the original positions (3.00 + 1.50 + 0.63). No convention makes
    this ranking ideal -- the relevant 3 sits below a 1 -- so every honest nDCG is < 1:
    0.9514 (trec_eval), 0.9341 (exponential gain), 0.8887 (Jarvelin's discount), and the
    ideal is the same whether built from the qrels or the retrieved list. We test the
    true value, and that 1.00 is not reproduced.
    """
    labels = [3, 1, 3, 0]
    names = [
        "DCG@4",
        "nDCG@4",
        "nDCG(ideal=retrieved)@4",
        "nDCG(gain=exp)@4",
        "nDCG(discount=jarvelin)@4",
    ]
    v = vector_values(labels, names)
    dcg = 3 + 1 / math.log2(3) + 3 / 2
    idcg = 3 + 3 / math.log2(3) + 1 / 2
    assert f"{v['DCG@4']:.2f}" == "5.13"
    assert v["DCG@4"] == pytest.approx(dcg, abs=1e-12)
    assert v["nDCG@4"] == pytest.approx(dcg / idcg, abs=1e-12)
    assert f"{v['nDCG@4']:.2f}" == "0.95"
    assert v["nDCG(ideal=retrieved)@4"] == pytest.approx(dcg / idcg, abs=1e-12)
    exp_dcg = 7 + 1 / math.log2(3) + 7 / 2
    exp_idcg = 7 + 7 / math.log2(3) + 1 / 2
    assert v["nDCG(gain=exp)@4"] == pytest.approx(exp_dcg / exp_idcg, abs=1e-12)
    assert v["nDCG(discount=jarvelin)@4"] == pytest.approx(
        (3 + 1 + 3 / math.log2(3)) / (3 + 3 + 1 / math.log2(3)), abs=1e-12
    )
    assert all(f"{x:.2f}" != "1.00" for k, x in v.items() if k.startswith("nDCG"))


def test_seed001_precision_and_recall_of_a_retrieved_set():
    # "10 recuperados, 7 relevantes": Precision = 0.70; "25 relevantes en el sistema":
    # Recall = 7/25 = 0.28.
    labels = [1, 0, 1, 1, 0, 1, 1, 0, 1, 1]
    v = vector_values(labels, ["P", "R"], num_relevant=25)
    assert (f"{v['P']:.2f}", f"{v['R']:.2f}") == ("0.70", "0.28")
    assert v == {"P": 0.7, "R": 0.28}


# --- seed 000: SPEC-003's MetricsCalculator test suite ---------------------------------

SEED000_MEASURES = ["P@3", "P@5", "R@10", "RR", "Hits@3", "Hits@5", "FirstRel"]


def calc(retrieved, expected, measures=SEED000_MEASURES) -> dict:
    """One query of seed 000 through RankLab: {measure: value}."""
    run, qrels = mc.io.from_lists({"q": (retrieved, expected)})
    ev = mc.evaluate(qrels, run, measures, duplicates="count", missing_queries="zero")
    assert list(ev.per_query.index) == ["q"], "the query was not evaluated"
    return {m: float(ev.per_query.loc["q", m]) for m in ev.measures}


class TestPrecisionAtK:
    def test_perfect_precision(self):
        assert calc(["A", "B", "C"], ["A", "B", "C", "D"])["P@3"] == 1.0

    def test_zero_precision(self):
        assert calc(["A", "B", "C"], ["D", "E", "F"])["P@3"] == 0.0

    def test_partial_precision(self):
        v = calc(["A", "B", "C", "D", "E"], ["A", "C", "F"])
        assert v["P@3"] == 2 / 3
        assert v["P@5"] == 2 / 5

    def test_empty_retrieved(self):
        assert calc([], ["A"])["P@3"] == 0.0

    def test_empty_expected(self):
        assert calc(["A"], [])["P@3"] == 0.0

    def test_k_larger_than_retrieved(self):
        # "Decision de diseno: usar k como denominador siempre"
        assert calc(["A", "B"], ["A"])["P@5"] == 1 / 5


class TestRecallAtK:
    def test_perfect_recall(self):
        assert calc(["A", "B", "C", "D"], ["A", "B"], ["R@4"])["R@4"] == 1.0

    def test_zero_recall(self):
        assert calc(["A", "B", "C"], ["D", "E"], ["R@3"])["R@3"] == 0.0

    def test_partial_recall(self):
        assert calc(["A", "B", "C"], ["A", "C", "D", "E"], ["R@3"])["R@3"] == 2 / 4

    def test_empty_expected(self):
        assert calc(["A"], [], ["R@3"])["R@3"] == 0.0


class TestMRR:
    def test_first_result_relevant(self):
        assert calc(["A", "B"], ["A"])["RR"] == 1.0

    def test_second_result_relevant(self):
        assert calc(["A", "B"], ["B"])["RR"] == 1 / 2

    def test_third_result_relevant(self):
        assert calc(["A", "B", "C"], ["C"])["RR"] == 1 / 3

    def test_no_relevant(self):
        assert calc(["A", "B"], ["C"])["RR"] == 0.0

    def test_multiple_relevant(self):
        assert calc(["A", "B", "C", "D"], ["B", "D"])["RR"] == 1 / 2

    def test_empty_retrieved(self):
        assert calc([], ["A"])["RR"] == 0.0


class TestCalculateAll:
    def test_calculate_all_comprehensive(self):
        v = calc(list("ABCDEFGHIJ"), ["A", "C", "F", "K"])
        assert v == {
            "P@3": 2 / 3,
            "P@5": 2 / 5,
            "R@10": 3 / 4,
            "RR": 1.0,
            "Hits@3": 2.0,
            "Hits@5": 2.0,
            "FirstRel": 1.0,
        }

    def test_calculate_all_no_results(self):
        v = calc(["A", "B", "C"], ["D", "E"])
        assert (v["P@3"], v["P@5"], v["R@10"], v["RR"], v["Hits@3"]) == (0.0, 0.0, 0.0, 0.0, 0.0)
        assert math.isnan(v["FirstRel"])  # the spec's None

    def test_docstring_example(self):
        v = calc(["mod1", "mod2", "mod3", "mod4", "mod5"], ["mod1", "mod3", "mod6"])
        assert f"{v['P@3']:.3f}" == "0.667"
        assert v["RR"] == 1.0

    def test_formula_examples(self):
        v = calc(["A", "B", "C", "D", "E"], ["A", "C", "F"], ["P@3", "P@5", "R@5"])
        assert (f"{v['P@3']:.3f}", f"{v['P@5']:.2f}", f"{v['R@5']:.3f}") == (
            "0.667",
            "0.40",
            "0.667",
        )
        assert calc(["A", "B", "C"], ["A"])["RR"] == 1.0
        assert f"{calc(['A', 'B', 'C', 'D'], ['C'])['RR']:.3f}" == "0.333"
        assert calc(["A", "B", "C"], ["D"])["RR"] == 0.0

    def test_first_relevant_position_later(self):
        v = calc(["A", "B", "C", "D"], ["D"], ["FirstRel", "Hits@3", "Hits@5"])
        assert v == {"FirstRel": 4.0, "Hits@3": 0.0, "Hits@5": 1.0}


class TestEdgeCases:
    def test_case_sensitivity(self):
        assert calc(["module_A", "module_b"], ["module_a", "module_B"], ["P@2"])["P@2"] == 0.0

    def test_duplicates_in_retrieved(self):
        # "Cada A cuenta como hit individual": P@3 = 2/3
        v = calc(["A", "A", "B"], ["A"], ["P@3", "Hits@3"])
        assert v == {"P@3": 2 / 3, "Hits@3": 2.0}

    def test_duplicates_in_retrieved_are_an_error_by_default(self):
        run, qrels = mc.io.from_lists({"q": (["A", "A", "B"], ["A"])})
        with pytest.raises(mc.InputError):
            mc.evaluate(qrels, run, ["P@3"])

    def test_duplicates_in_expected(self):
        # "expected es un set conceptualmente": A counts once as relevant.
        v = calc(["A", "B"], ["A", "A"], ["P@2", "R@10", "AP"])
        assert v == {"P@2": 1 / 2, "R@10": 1.0, "AP": 1.0}


# --- seed 000: ReportAggregator through metrics_core.stats.aggregate -------------------------

# (query, retrieved, expected, category, difficulty)
DETAILED = [
    ("q1", list("ABCDE"), ["A", "C", "F"], "envios", "facil"),
    ("q2", list("ABCDEFGHIJ"), ["J"], "envios", "dificil"),
    ("q3", ["X", "Y"], ["Y", "Z", "W"], "productos", "media"),
    ("q4", list("ABC"), ["D"], "productos", "dificil"),
    ("q5", list("QRSTU"), ["Q", "R", "S", "T"], "clientes", "facil"),
    ("q6", list("MNOP"), ["P", "M"], "envios", "media"),
]


def reference_metrics(retrieved, expected):
    """Seed 000's definitions, written out directly (a brute-force reference)."""
    rel = set(expected)

    def p_at(k):
        return sum(d in rel for d in retrieved[:k]) / k

    first = next((i for i, d in enumerate(retrieved, 1) if d in rel), None)
    return {
        "precision@3": p_at(3),
        "precision@5": p_at(5),
        "recall@10": sum(d in rel for d in retrieved[:10]) / len(rel) if rel else 0.0,
        "mrr": 1 / first if first else 0.0,
    }


SEED_TO_RANKLAB = {"precision@3": "P@3", "precision@5": "P@5", "recall@10": "R@10", "mrr": "RR"}


@pytest.fixture(scope="module")
def detailed_evaluation():
    run, qrels = mc.io.from_lists({q: (r, e) for q, r, e, _, _ in DETAILED})
    ev = mc.evaluate(
        qrels, run, list(SEED_TO_RANKLAB.values()), duplicates="count", missing_queries="zero"
    )
    meta = pd.DataFrame(
        {"category": [d[3] for d in DETAILED], "difficulty": [d[4] for d in DETAILED]},
        index=[d[0] for d in DETAILED],
    )
    reference = {q: reference_metrics(r, e) for q, r, e, _, _ in DETAILED}
    return ev, meta, reference


def test_per_query_values_match_the_reference(detailed_evaluation):
    ev, _, reference = detailed_evaluation
    for q, values in reference.items():
        for seed_name, name in SEED_TO_RANKLAB.items():
            assert ev.per_query.loc[q, name] == pytest.approx(values[seed_name], abs=1e-15), (
                q,
                name,
            )


def test_aggregate_metrics_mean_and_median(detailed_evaluation):
    ev, _, reference = detailed_evaluation
    summary = agg.summarize(ev.per_query)
    for seed_name, name in SEED_TO_RANKLAB.items():
        values = [reference[q][seed_name] for q in reference]
        assert summary.loc[name, "mean"] == pytest.approx(statistics.mean(values), abs=1e-15)
        assert ev.aggregate[name] == pytest.approx(statistics.mean(values), abs=1e-15)
        assert summary.loc[name, "median"] == pytest.approx(statistics.median(values), abs=1e-15)
    # the spec's two medians by name
    p3 = [reference[q]["precision@3"] for q in reference]
    mrr = [reference[q]["mrr"] for q in reference]
    assert summary.loc["P@3", "median"] == statistics.median(p3)
    assert summary.loc["RR", "median"] == statistics.median(mrr)


def test_group_by_category(detailed_evaluation):
    ev, meta, reference = detailed_evaluation
    for seed_name, name in SEED_TO_RANKLAB.items():
        expected = {}
        for q, _, _, category, _ in DETAILED:
            expected.setdefault(category, []).append(reference[q][seed_name])
        expected = {c: statistics.mean(v) for c, v in expected.items()}
        got = agg.group_by_category(ev.per_query, meta, name)
        assert got.keys() == expected.keys()
        for c in expected:
            assert got[c] == pytest.approx(expected[c], abs=1e-15), (name, c)


def test_group_by_difficulty(detailed_evaluation):
    ev, meta, reference = detailed_evaluation
    got = agg.group_by_difficulty(ev.per_query, meta, ["P@3", "P@5", "RR"])
    groups = {}
    for q, _, _, _, difficulty in DETAILED:
        groups.setdefault(difficulty, []).append(reference[q])
    assert got.keys() == groups.keys()
    for difficulty, rows in groups.items():
        assert got[difficulty]["count"] == len(rows)
        for seed_name, name in (("precision@3", "P@3"), ("precision@5", "P@5"), ("mrr", "RR")):
            want = statistics.mean(r[seed_name] for r in rows)
            assert got[difficulty][name] == pytest.approx(want, abs=1e-15), (difficulty, name)


def test_group_means_table_has_counts_and_every_measure(detailed_evaluation):
    ev, meta, _ = detailed_evaluation
    table = agg.group_means(ev.per_query, meta, "category")
    assert list(table.index) == sorted(set(meta["category"]))
    assert table["count"].tolist() == [1, 3, 2]  # clientes, envios, productos
    assert np.allclose(
        table.loc["envios", "RR"],
        ev.per_query.loc[["q1", "q2", "q6"], "RR"].mean(),
        rtol=0,
        atol=1e-15,
    )
