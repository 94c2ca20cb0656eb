"""RankLab against trec_eval itself (through pytrec_eval), on random data.

pytrec_eval (package ``pytrec-eval-terrier``) runs trec_eval's C code. Hypothesis
generates qrels and runs that stress what the conformance files do not: ties in score
that mix relevance levels, graded labels 0-3 and negative labels, queries without a
relevant document, qrels queries missing from the run, run queries absent from the qrels,
empty rankings, and document ids of varied lengths (``"a"`` < ``"ab"`` < ``"b"``), with
non-ASCII characters, so the string order that breaks ties matters.

pytrec_eval's C code is trec_eval 9's where iprec_at_recall is concerned: it turns recall
level r into (long)(r * R + 0.9) relevant documents, where trec_eval 10 (the conformance
files, which RankLab's default reproduces) rounds r * R to the nearest whole number.
So against pytrec_eval, IPrec is asked for as ``IPrec(rounding=trec9)@r``; the default
is pinned by the conformance test and ``test_iprec_rounding_trec10_default_trec9_variant``.

Scores are multiples of 1/8 between 0 and 2: exactly representable as float32 (the
binding's storage) and as float64, so both sides see the same ties.

Conventions of the comparison (trec_eval's, which RankLab's defaults copy):
- a query of the run that is absent from the qrels is ignored by both;
- an empty ranking is no ranking: a TREC file cannot hold one, so the query counts as
  missing from the run (skipped by default, 0 with ``missing_queries="zero"``);
- pytrec_eval skips qrels queries absent from the run; trec_eval ``-c`` (RankLab's
  ``missing_queries="zero"``) scores them 0 and averages over every qrels query.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import metrics_core as mc  # noqa: E402
from tests.ranking.test_conformance_trec_eval import ranklab_name  # noqa: E402  (the one name table)

# random runs often share no query or no judged document with their qrels: the readers'
# coverage warning is expected here (tests/io/test_coverage.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

CUTOFFS = (1, 2, 3, 5, 10)
PYTREC_MEASURES = {
    "P." + ",".join(map(str, CUTOFFS)),
    "recall." + ",".join(map(str, CUTOFFS)),
    "map_cut." + ",".join(map(str, CUTOFFS)),
    "ndcg_cut." + ",".join(map(str, CUTOFFS)),
    "success." + ",".join(map(str, CUTOFFS)),
    "recip_rank",
    "map",
    "ndcg",
    "Rprec",
    "bpref",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall",
    "num_q",
}
# Every value is a sum of a few dozen terms at most; both sides use float64.
ABS_TOL = 1e-9


# --- generators --------------------------------------------------------------------

# Short ids over a small alphabet: many share prefixes, so "a" vs "ab" vs "a#" decides ties.
DOC_IDS = st.text(alphabet="ab9A_#-.é中", min_size=1, max_size=4)
QUERY_IDS = st.text(alphabet="q0123", min_size=1, max_size=3)
LABELS = st.sampled_from([-2, -1, 0, 0, 1, 1, 2, 3])
SCORES = st.integers(min_value=0, max_value=16).map(lambda i: i / 8)


@st.composite
def qrels_and_run(draw):
    """(qrels, run) as {qid: {docid: value}}; the run may hold empty rankings."""
    qids = draw(st.lists(QUERY_IDS, min_size=1, max_size=6, unique=True))
    qrels, run = {}, {}
    for qid in qids:
        judged = draw(st.dictionaries(DOC_IDS, LABELS, max_size=8))
        # where: 0 both, 1 qrels only (missing from run), 2 run only (extra), 3 empty ranking
        where = draw(st.sampled_from([0, 0, 0, 0, 1, 2, 3]))
        if where in (0, 1, 3) and judged:
            qrels[qid] = judged
        if where in (0, 2):
            pool = sorted(judged) + draw(st.lists(DOC_IDS, max_size=6))
            docs = draw(st.lists(st.sampled_from(pool), unique=True, max_size=12)) if pool else []
            run[qid] = {d: draw(SCORES) for d in docs}
        elif where == 3:
            run[qid] = {}
    # Both sides need at least one pair to read (an empty input is a user error).
    if not qrels:
        qrels["q-forced"] = {"a": 1}
    if not any(run.values()):
        run.setdefault("q-forced", {})["a"] = 1.0
    return qrels, run


# --- the reference: trec_eval through pytrec_eval, on what it can take ------------------


def pytrec_values(qrels, run, relevance_level=1):
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, PYTREC_MEASURES, relevance_level=relevance_level
    )
    return evaluator.evaluate(run)


def _zero_row(measures, num_ret=0, num_rel=0):
    row = dict.fromkeys(measures, 0.0)
    row["num_ret"], row["num_rel"] = float(num_ret), float(num_rel)
    return row


MEASURE_NAMES = sorted(
    m for m in pytrec_values({"x": {"a": 1}}, {"x": {"a": 1.0}})["x"] if m != "num_q"
)


def trec_eval_reference(qrels, run, relevance_level=1, complete=False):
    """trec_eval's per-query values ({qid: {measure: value}}), ``complete`` = its -c.

    Two kinds of input are kept away from the binding because they break its memory
    (found while writing these tests; pytrec-eval-terrier 0.5.11):
    - an empty ranking ({qid: {}}): segfaults or returns garbage (num_rel 1 instead of 0,
      NaN iprec) depending on the other measures requested. A TREC file cannot hold an
      empty ranking; trec_eval sees such a query as absent from the run.
    - a qrels query whose every label is negative, with bpref and any other measure
      requested: heap corruption (``free(): invalid next size``), later segfaults or hangs.
      Such a query has R = 0, so trec_eval's definitions give 0 for every measure but
      num_ret; that row is written here from the definition.
    A qrels query absent from the run is skipped, or with -c scored 0 for every measure
    but num_rel, which stays the qrels count (conformance out.test.aqc, query 302).
    """
    ranked = {q: d for q, d in run.items() if d}
    safe_qrels = {q: j for q, j in qrels.items() if max(j.values()) >= 0}
    expected = pytrec_values(safe_qrels, ranked, relevance_level) if safe_qrels else {}
    expected = {q: {m: v[m] for m in MEASURE_NAMES} for q, v in expected.items()}
    for q in set(qrels) - set(safe_qrels):
        if q in ranked:
            expected[q] = _zero_row(MEASURE_NAMES, num_ret=len(ranked[q]))
    if complete:
        for q, judged in qrels.items():
            if q not in ranked:
                expected[q] = _zero_row(
                    MEASURE_NAMES, num_rel=sum(1 for x in judged.values() if x >= relevance_level)
                )
    return expected


# --- the comparison ----------------------------------------------------------------


def pytrec_to_ranklab(trec_name: str) -> str:
    """RankLab's name for a pytrec_eval measure: the conformance table's, except IPrec,
    which the binding computes with trec_eval 9's recall-level rounding."""
    name = ranklab_name(trec_name)
    if name.startswith("IPrec@"):
        name = name.replace("IPrec@", "IPrec(rounding=trec9)@")
    return name


def assert_matches_trec_eval(qrels, run, relevance_level=1, complete=False):
    """Per query and mean over queries, every shared measure, within ABS_TOL."""
    expected = trec_eval_reference(qrels, run, relevance_level, complete)
    conventions = {"relevance_threshold": relevance_level}
    if complete:
        conventions["missing_queries"] = "zero"
    ev = mc.evaluate(
        qrels, run, [pytrec_to_ranklab(m) for m in MEASURE_NAMES] + ["NumQ"], **conventions
    )
    names = dict(zip(MEASURE_NAMES, ev.measures, strict=False))
    assert sorted(ev.per_query.index) == sorted(expected), "evaluated queries differ"
    assert ev.aggregate["NumQ"] == len(expected)
    problems, bad_queries = [], []
    for trec_name, name in names.items():
        col = ev.per_query[name]
        for qid, values in expected.items():
            want, got = values[trec_name], float(col.loc[qid])
            if not math.isclose(got, want, rel_tol=0, abs_tol=ABS_TOL):
                problems.append(
                    f"{trec_name} ({name}) query {qid!r}: trec_eval {want!r}, RankLab {got!r}"
                )
                bad_queries.append(qid)
        if expected:
            values = [v[trec_name] for v in expected.values()]
            summary = (
                float(np.sum(values)) if trec_name.startswith("num_") else float(np.mean(values))
            )
            if not math.isclose(ev.aggregate[name], summary, rel_tol=0, abs_tol=ABS_TOL):
                problems.append(
                    f"{trec_name} ({name}) all: trec_eval {summary!r}, "
                    f"RankLab {ev.aggregate[name]!r}"
                )
    shown = list(dict.fromkeys(bad_queries))[:2]
    assert not problems, "\n".join(problems[:20]) + "".join(
        f"\nquery {q!r}: qrels={qrels.get(q)!r} run={run.get(q)!r}" for q in shown
    )


FAST = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FAST
@given(qrels_and_run())
def test_random_runs_match_trec_eval(data):
    qrels, run = data
    assert_matches_trec_eval(qrels, run)


@FAST
@given(qrels_and_run())
def test_random_runs_match_trec_eval_relevance_level_2(data):
    qrels, run = data
    assert_matches_trec_eval(qrels, run, relevance_level=2)


@FAST
@given(qrels_and_run(), st.sampled_from([1, 2]))
def test_random_runs_match_trec_eval_c(data, level):
    qrels, run = data
    assert_matches_trec_eval(qrels, run, relevance_level=level, complete=True)


def trec_order_top(ranking: dict, depth: int) -> dict:
    """The first ``depth`` documents in trec_eval's order: score descending, then doc id
    descending as byte strings (strcmp on UTF-8)."""
    ordered = sorted(ranking.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)
    return dict(ordered[:depth])


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(qrels_and_run(), st.sampled_from([1, 2, 3, 5]))
def test_depth_cut_matches_trec_eval_on_the_truncated_run(data, depth):
    """trec_eval -M d ranks first, then keeps the top d: the same as evaluating the run cut
    to its top d (in trec_eval's order) without -M."""
    qrels, run = data
    cut = {q: trec_order_top(d, depth) for q, d in run.items()}
    expected = trec_eval_reference(qrels, cut)
    ev = mc.evaluate(qrels, run, [pytrec_to_ranklab(m) for m in MEASURE_NAMES], depth=depth)
    names = dict(zip(MEASURE_NAMES, ev.measures, strict=True))
    assert sorted(ev.per_query.index) == sorted(expected)
    for trec_name, name in names.items():
        for qid, values in expected.items():
            assert math.isclose(
                float(ev.per_query.loc[qid, name]), values[trec_name], rel_tol=0, abs_tol=ABS_TOL
            ), (trec_name, qid, depth)


# --- fixed cases that pin single behaviours ----------------------------------------------


def test_tie_order_is_doc_id_descending_as_strings():
    """Equal scores: "b" > "ab" > "a" > "A" > "9" in trec_eval's strcmp order."""
    qrels = {"q": {"a": 1}}
    run = {"q": {"9": 1.0, "A": 1.0, "a": 1.0, "ab": 1.0, "b": 1.0}}
    expected = pytrec_values(qrels, run)["q"]
    assert expected["recip_rank"] == pytest.approx(1 / 3)
    ev = mc.evaluate(qrels, run, ["RR", "P@3", "P@2"])
    assert ev.per_query.loc["q", "RR"] == pytest.approx(1 / 3, abs=ABS_TOL)
    assert ev.per_query.loc["q", "P@3"] == pytest.approx(expected["P_3"], abs=ABS_TOL)
    assert ev.per_query.loc["q", "P@2"] == 0.0


def test_iprec_rounding_trec10_default_trec9_variant():
    """Recall level r becomes c relevant documents; IPrec@r is the best precision at or
    after the c-th relevant. trec_eval 10 (conformance files) takes c = round(r * R);
    trec_eval 9 and pytrec_eval take c = (long)(r * R + 0.9). With R = 4, r = 0.3:
    c = 1 (IPrec = P@1 = 1.0) against c = 2 (IPrec = P@5 = 0.4)."""
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "r4": 1}}
    run = {"q": {"r1": 5.0, "n1": 4.0, "n2": 3.0, "n3": 2.0, "r2": 1.0}}
    trec9 = pytrec_values(qrels, run)["q"]
    assert trec9["iprec_at_recall_0.30"] == pytest.approx(2 / 5)
    ev = mc.evaluate(
        qrels,
        run,
        ["IPrec@0.3", "IPrec(rounding=trec9)@0.3", "IPrec@0.6", "IPrec(rounding=trec9)@0.6"],
    )
    row = ev.per_query.loc["q"]
    assert row["IPrec@0.3"] == 1.0
    assert row["IPrec(rounding=trec9)@0.3"] == pytest.approx(2 / 5, abs=ABS_TOL)
    # r = 0.6: round(2.4) = 2 relevant (retrieved: P@5 = 0.4); 2.4 + 0.9 -> 3 (not retrieved: 0)
    assert row["IPrec@0.6"] == pytest.approx(2 / 5, abs=ABS_TOL)
    assert row["IPrec(rounding=trec9)@0.6"] == trec9["iprec_at_recall_0.60"] == 0.0
    # Hypothesis' first counterexample: R = 2, one relevant retrieved (recall 0.5).
    assert_matches_trec_eval({"0": {"9": 1, "A": 1}}, {"0": {"9": 0.0}})


def test_all_negative_labels_query_scores_zero():
    """A judged query whose every label is negative has R = 0: trec_eval's definitions give
    0 everywhere (the binding cannot be asked: it corrupts its heap on this input)."""
    qrels = {"q": {"a": -1, "b": -2}, "p": {"a": 1}}
    run = {"q": {"a": 2.0, "c": 1.0}, "p": {"a": 1.0}}
    ev = mc.evaluate(qrels, run, [ranklab_name(m) for m in MEASURE_NAMES])
    row = ev.per_query.loc["q"]
    assert row["NumRet"] == 2
    assert (row.drop("NumRet") == 0).all(), row[row != 0]


def test_pytrec_eval_skips_qrels_queries_absent_from_run():
    """Ground truth for RankLab's default: a judged query with no ranking is not evaluated."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0, "c": 0.5}}
    assert set(pytrec_values(qrels, run)) == {"q1"}
    ev = mc.evaluate(qrels, run, ["AP", "NumQ"])
    assert list(ev.per_query.index) == ["q1"]
    assert ev.aggregate == {"AP": 1.0, "NumQ": 1.0}
    assert ev.diagnostics["missing_queries"] == ["q2"]


def test_missing_zero_averages_over_every_qrels_query():
    """trec_eval -c: the mean is over all qrels queries, a missing one counting 0."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1, "d": 2}}
    run = {"q1": {"a": 1.0}, "q3": {"x": 2.0, "d": 1.0}, "q9": {"a": 1.0}}
    skip = mc.evaluate(qrels, run, ["AP", "NumQ", "NumRel", "NumRet"])
    zero = mc.evaluate(qrels, run, ["AP", "NumQ", "NumRel", "NumRet"], missing_queries="zero")
    assert skip.aggregate["AP"] == pytest.approx((1.0 + 0.25) / 2, abs=ABS_TOL)
    assert zero.aggregate["AP"] == pytest.approx((1.0 + 0.0 + 0.25) / 3, abs=ABS_TOL)
    assert zero.per_query.loc["q2", "AP"] == 0.0
    assert (zero.aggregate["NumQ"], zero.aggregate["NumRel"], zero.aggregate["NumRet"]) == (3, 4, 3)
    assert skip.diagnostics["extra_queries"] == ["q9"]
    assert_matches_trec_eval(qrels, run, complete=True)


def test_bigger_fixed_seed_case():
    """200 queries, up to 60 documents each, heavy ties, graded and negative labels."""
    rng = np.random.default_rng(20261121)
    qrels, run = {}, {}
    for qi in range(200):
        qid = f"Q{qi}"
        n_docs = int(rng.integers(1, 80))
        docs = [f"D{int(x)}" for x in rng.choice(10_000, size=n_docs, replace=False)]
        labels = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=n_docs)
        n_judged = int(rng.integers(0, n_docs + 1))
        if qi % 17 != 5:  # a few queries only in the run
            qrels[qid] = {
                d: int(x) for d, x in zip(docs[:n_judged], labels[:n_judged], strict=True)
            }
            if not qrels[qid]:
                del qrels[qid]
        if qi % 13 != 3:  # a few qrels queries missing from the run
            retrieved = [str(d) for d in rng.permutation(docs)[: int(rng.integers(1, 61))]]
            run[qid] = {d: float(rng.integers(0, 24)) / 8 for d in retrieved}
    for level in (1, 2):
        assert_matches_trec_eval(qrels, run, relevance_level=level)
        assert_matches_trec_eval(qrels, run, relevance_level=level, complete=True)
