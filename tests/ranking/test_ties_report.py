"""The tie report against brute force: every order of the tied documents, enumerated.

For small rankings with ties, the run is re-evaluated once per order of the documents
within each tie group (all orders, as distinct scores); the minimum, maximum and mean over
those evaluations must equal the report's minimum, maximum and expected value.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core import cli
from metrics_core.ranking.ties import COVERED

# random runs often share no query or no judged document with their qrels: the readers'
# coverage warning is expected here (tests/io/test_coverage.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

MEASURES = [
    "P@1",
    "P@3",
    "P",
    "P(denom=retrieved)@5",
    "R@2",
    "R",
    "Hits@3",
    "Success@2",
    "Success",
    "RR",
    "RR@2",
    "RR(miss=k_plus_1)@2",
    "AP",
    "AP@3",
    "AP(norm=min_rel_k)@2",
    "Rprec",
    "DCG@3",
    "nDCG",
    "nDCG@2",
    "nDCG(gain=exp)@4",
    "nDCG(discount=jarvelin)",
    "nDCG(ideal=retrieved)@3",
    "P(rel=2)@2",
    "AP(rel=2)",
    "Bpref",
    "Bpref(rel=2)",
]
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def one_query(draw):
    """(qrels {doc: label}, run {doc: score}) with ties; some retrieved documents unjudged,
    some judged ones not retrieved."""
    docs = [f"d{i}" for i in range(draw(st.integers(1, 7)))]
    run = {d: float(draw(st.integers(1, 3))) for d in docs}
    qrels = {d: draw(st.integers(-1, 3)) for d in docs if draw(st.integers(0, 3))}
    for i in range(draw(st.integers(0, 2))):
        qrels[f"x{i}"] = draw(st.integers(0, 2))
    if not qrels:
        qrels["x9"] = 1
    return qrels, run


def trec_order(run: dict) -> list[str]:
    return [d for d, _ in sorted(run.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)]


def every_order(run: dict):
    """Every ranking obtained by reordering documents within groups of equal score."""
    ranked = trec_order(run)
    groups = [list(g) for _, g in itertools.groupby(ranked, key=run.get)]
    for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [d for g in choice for d in g]


def brute_force(qrels, run, names):
    """(min, max, mean) of each measure over every order: one query per order, evaluated
    in one call."""
    orders = list(every_order(run))
    many_qrels = {f"o{i}": qrels for i in range(len(orders))}
    many_runs = {
        f"o{i}": {d: float(len(o) - r) for r, d in enumerate(o)} for i, o in enumerate(orders)
    }
    frame = mc.evaluate(many_qrels, many_runs, names).per_query
    return {n: (frame[n].min(), frame[n].max(), float(np.mean(frame[n].to_numpy()))) for n in names}


@SETTINGS
@given(data=one_query())
def test_report_equals_brute_force(data):
    qrels, run = data
    ev = mc.evaluate({"q": qrels}, {"q": run}, MEASURES, tie_report=True)
    report = ev.tie_report
    names = ev.measures
    want = brute_force(qrels, run, names)
    for n in names:
        got = report["per_query"]["q"][n]
        lo, hi, mean = want[n]
        assert got["min"] == pytest.approx(lo, abs=1e-12), n
        assert got["max"] == pytest.approx(hi, abs=1e-12), n
        assert got["expected"] == pytest.approx(mean, abs=1e-12), n
        assert got["value"] == ev.aggregate[n]
        assert lo - 1e-12 <= got["value"] <= hi + 1e-12
        assert (n in report["tie_dependent"] and "q" in report["tie_dependent"][n]) == (
            lo != hi
        ) or math.isclose(lo, hi, abs_tol=1e-12)


def test_several_queries_aggregate_band_and_flags():
    qrels = {"a": {"d1": 1, "d2": 0}, "b": {"d1": 1}, "c": {"d9": 1}}
    run = {"a": {"d1": 1.0, "d2": 1.0}, "b": {"d1": 2.0, "d2": 1.0}}
    ev = mc.evaluate(qrels, run, ["RR", "AP", "F1@1"], tie_report=True, missing_queries="zero")
    rep = ev.tie_report
    assert rep["per_query"]["a"]["RR"] == {"value": 0.5, "min": 0.5, "max": 1.0, "expected": 0.75}
    assert rep["per_query"]["b"]["RR"]["min"] == rep["per_query"]["b"]["RR"]["max"] == 1.0
    assert rep["per_query"]["c"]["RR"]["expected"] == 0.0
    assert rep["aggregate"]["RR"] == {"min": 0.5, "max": 2 / 3, "expected": pytest.approx(1.75 / 3)}
    assert rep["tie_dependent"]["RR"] == ["a"]
    assert "F1@1" in rep["not_covered"] and "F1@1" not in rep["aggregate"]


def test_constant_scorer_has_the_full_band():
    """A constant score (the MTEB case of an MRR@10 of 1.0): the band shows it."""
    qrels = {"q": {f"d{i}": int(i == 7) for i in range(10)}}
    run = {"q": {f"d{i}": 0.0 for i in range(10)}}
    rep = mc.evaluate(qrels, run, ["RR@10"], tie_report=True).tie_report["per_query"]["q"]["RR@10"]
    assert rep["max"] == 1.0 and rep["min"] == 0.1
    assert rep["expected"] == pytest.approx(sum(1 / r for r in range(1, 11)) / 10)


def test_compat_trec_eval9_ties_in_float32():
    rep = mc.evaluate(
        {"q": {"a": 1, "b": 0}},
        {"q": {"a": 1.00000002, "b": 1.00000001}},
        ["RR"],
        tie_report=True,
        compat="trec_eval9",
    ).tie_report
    assert rep["per_query"]["q"]["RR"]["expected"] == 0.75
    rep10 = mc.evaluate(
        {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.00000002, "b": 1.00000001}}, ["RR"], tie_report=True
    ).tie_report
    assert rep10["per_query"]["q"]["RR"]["expected"] == 1.0


def test_cli_tie_report_json(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    r.write_text("q1 Q0 a 0 1 t\nq1 Q0 b 0 1 t\n")
    assert (
        cli.main(
            [
                "evaluate",
                "--qrels",
                str(q),
                "--run",
                str(r),
                "-m",
                "RR,P@1",
                "--format",
                "json",
                "--tie-report",
            ]
        )
        == 0
    )
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["tie_report"]["per_query"]["q1"]["RR"]["min"] == 0.5
    assert run["tie_report"]["aggregate"]["P@1"] == {"min": 0.0, "max": 1.0, "expected": 0.5}
    assert (
        cli.main(["evaluate", "--qrels", str(q), "--run", str(r), "-m", "RR", "--format", "json"])
        == 0
    )
    assert "tie_report" not in json.loads(capsys.readouterr().out)["runs"][0]


def test_covered_families_are_registered():
    from metrics_core.ranking.registry import REGISTRY

    assert set(COVERED) <= set(REGISTRY)


def test_tie_report_needs_the_whole_run(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 a 1\n")
    r.write_text("q1 Q0 a 0 1 t\nq1 Q0 b 0 1 t\n")
    code = cli.main(
        [
            "evaluate",
            "--qrels",
            str(q),
            "--run",
            str(r),
            "-m",
            "RR",
            "--tie-report",
            "--block-rows",
            "1",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--tie-report" in err[0]
