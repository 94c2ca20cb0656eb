"""The unjudged band: per query the lowest and highest value of each covered measure over
every labelling of the unjudged retrieved documents with labels 0 .. the qrels' highest,
proved against brute force (every labelling evaluated) on small rankings with ties, graded
labels, judged documents not retrieved and several queries; its report, the front door and
the command line."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core import cli
from metrics_core.errors import InputError
from metrics_core.ranking.unjudged import COVERED

pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = [
    "P@3",
    "P(denom=retrieved)@3",
    "P",
    "Hits@2",
    "Success@2",
    "RR",
    "RR@2",
    "RR(miss=k_plus_1)@2",
    "R@3",
    "R",
    "Rprec",
    "AP",
    "AP@3",
    "AP(norm=min_rel_k)@3",
    "AP(rel=2)",
    "Bpref",
    "Bpref(rel=2)",
    "Rprec(rel=2)",
    "DCG@3",
    "DCG(gain=exp)",
    "nDCG",
    "nDCG@3",
    "nDCG(gain=exp)@2",
    "nDCG(ideal=retrieved)@3",
    "nDCG(discount=jarvelin)@4",
    "NCG@3",
    "NCG",
]


@st.composite
def incomplete(draw):
    """({qid: {doc: label}}, {qid: {doc: score}}): labels 0..3 (-1 too), judged documents
    not retrieved, up to 4 unjudged retrieved ones, scores from three values (ties)."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 3))):
        docs = [f"d{i}" for i in range(7)]
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=4, unique=True))
        qrels[f"q{q}"] = {d: draw(st.integers(-1, 3)) for d in judged}
        for i in range(draw(st.integers(0, 2))):
            qrels[f"q{q}"][f"x{i}"] = draw(st.integers(0, 3))
        got = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=7, unique=True))
        unjudged = [d for d in got if d not in qrels[f"q{q}"]][4:]
        got = [d for d in got if d not in unjudged]
        run[f"q{q}"] = {d: float(draw(st.integers(0, 2))) for d in got}
    return qrels, run


def brute(qrels, run, names, **conv) -> dict:
    """Every labelling of each query's unjudged retrieved documents (those the evaluation
    keeps: a depth cut drops the others), evaluated -- each labelling a query of its own,
    all in one evaluation: the lowest and the highest value per query and measure."""
    top = max(int(max(max(v.values()) for v in qrels.values())), 0)
    ranking = mc.rank(qrels, run, **conv)
    out = {}
    for q in run:
        if q not in qrels:
            continue
        kept = ranking.ranking(q)
        unjudged = kept.loc[~kept["judged"], "doc_id"].tolist()
        big_q, big_r = {}, {}
        for i, labels in enumerate(itertools.product(range(top + 1), repeat=len(unjudged))):
            big_q[f"{q}#{i}"] = dict(qrels[q]) | dict(zip(unjudged, labels, strict=True))
            big_r[f"{q}#{i}"] = run[q]
        frame = mc.evaluate(big_q, big_r, names, **conv).per_query
        out[q] = {n: (frame[n].min(), frame[n].max()) for n in names}
    return out


def check(qrels, run, names=NAMES, **conv):
    names = [mc.parse_measure(n).name for n in names]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = mc.evaluate(qrels, run, names, unjudged_report=True, **conv)
        want = brute(qrels, run, names, **conv)
    rep = ev.unjudged_report
    assert rep["covered"] == names and not rep["not_covered"]
    for q, values in want.items():
        for n, (lo, hi) in values.items():
            got = rep["per_query"][q][n]
            assert got["min"] == pytest.approx(lo, abs=1e-12), (q, n, got, lo, hi)
            assert got["max"] == pytest.approx(hi, abs=1e-12), (q, n, got, lo, hi)
            assert got["value"] == ev.per_query.loc[q, n]
    return ev


@SETTINGS
@given(data=incomplete())
def test_band_equals_brute_force(data):
    check(*data)


@SETTINGS
@given(data=incomplete())
def test_band_equals_brute_force_under_other_conventions(data):
    check(*data, names=["AP", "nDCG@3", "P@2", "Bpref", "NCG@2"], ties="docid_asc", depth=4)


def test_labelling_an_unjudged_document_relevant_can_lower_ap_and_ndcg():
    """A relevant document found deep down raises R and the ideal: AP and nDCG fall."""
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    ev = check(qrels, run, ["AP", "nDCG", "Rprec", "P@3"])
    pq = ev.unjudged_report["per_query"]["q"]
    assert pq["AP"]["max"] == 1.0 and pq["AP"]["min"] < 1.0  # (1 + 2/2 + 3/3) / 3 = 1 too
    assert pq["nDCG"]["max"] == 1.0
    assert pq["P@3"] == {"value": 1 / 3, "min": 1 / 3, "max": 1.0}
    assert ev.unjudged_report["unjudged_dependent"]["P@3"] == ["q"]


def test_report_shape_aggregate_and_not_covered():
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    ev = mc.evaluate(qrels, run, ["P@2", "ERR@5", "AP(norm=rel_retrieved)"], unjudged_report=True)
    rep = ev.unjudged_report
    assert rep["covered"] == ["P@2"]
    assert set(rep["not_covered"]) == {"ERR@5", "AP(norm=rel_retrieved)"}
    assert rep["aggregate"]["P@2"] == {"min": (0.5 + 0.5) / 2, "max": (1.0 + 0.5) / 2}
    assert rep["unjudged_dependent"]["P@2"] == ["q1"]
    assert (rep["unjudged_documents"], rep["queries_with_unjudged"], rep["top_label"]) == (1, 1, 2)
    assert ev.to_dict()["unjudged_report"] == rep
    again = mc.rank(qrels, run).unjudged_bounds(["P@2"])["P@2"]
    assert [a.tolist() for a in again] == [[0.5, 0.5], [1.0, 0.5]]


def test_every_covered_family_is_listed():
    assert set(COVERED) <= set(mc.measures.REGISTRY)


def test_needs_the_whole_run():
    with pytest.raises(InputError, match="unjudged report needs the whole run"):
        mc.evaluate(
            {"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"], unjudged_report=True, block_rows=10
        )


def test_command_line(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    r.write_text("q1 Q0 x 0 3 t\nq1 Q0 a 0 2 t\nq1 Q0 b 0 1 t\n")
    args = ["evaluate", "--qrels", str(q), "--run", str(r), "-m", "P@1,RR", "--format", "json"]
    assert cli.main(args + ["--unjudged-report"]) == 0
    out = json.loads(capsys.readouterr().out)["runs"][0]["unjudged_report"]
    assert out["per_query"]["q1"]["RR"] == {"value": 0.5, "min": 0.5, "max": 1.0}
    assert cli.main(args + ["--unjudged-report", "--block-rows", "5"]) == 2
    assert "--unjudged-report" in capsys.readouterr().err


def test_bounds_on_a_larger_run_are_attained_and_ordered():
    rng = np.random.default_rng(5)
    qrels = {
        f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in rng.choice(60, 15, replace=False)}
        for i in range(30)
    }
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 20)) for j in range(50)} for i in range(30)}
    names = [mc.parse_measure(n).name for n in NAMES]
    ev = mc.evaluate(qrels, run, names, unjudged_report=True)
    rep = ev.unjudged_report
    for n in names:
        for q, row in rep["per_query"].items():
            assert row[n]["min"] <= row[n]["max"] + 1e-15, (q, n)
        if not n.startswith("Bpref"):  # bpref skips unjudged documents: not a labelling
            for q, row in rep["per_query"].items():
                assert row[n]["min"] - 1e-12 <= row[n]["value"] <= row[n]["max"] + 1e-12, (q, n)
