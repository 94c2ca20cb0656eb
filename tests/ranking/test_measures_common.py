"""Common tests over the measure registry (as scikit-learn's ``test_common.py``): every
registered family, on generated data with ties, graded and negative labels, zero-relevant
and unanswered queries.

A new measure is tested here as soon as it is registered; what a family declares
(value range, perfect value, cut invariance, NaN) is what these tests hold it to.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core.ranking import registry
from metrics_core.ranking.registry import REGISTRY, from_trec_name, parse_measure, trec_names

# random runs often share no query or no judged document with their qrels: the readers'
# coverage warning is expected here (tests/io/test_coverage.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

FAMILIES = list(REGISTRY)
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def instances(d) -> list[str]:
    """Names to test a family under: uncut where allowed, and a few cutoffs."""
    if d.cutoff == "none":
        return [d.name]
    if d.cutoff == "fraction":
        return [f"{d.name}@0.0", f"{d.name}@0.5", f"{d.name}@1.0"]
    cut = [f"{d.name}@1", f"{d.name}@3"]
    return cut if d.cutoff == "required" else [d.name, *cut]


ALL_NAMES = [n for d in REGISTRY.values() for n in instances(d)]


@st.composite
def collections(draw, min_queries=1):
    """(qrels rows, run rows): up to 4 queries over 8 documents, labels -1..3, scores
    from a few values (ties), some queries unanswered, some judged without relevant."""
    nq = draw(st.integers(min_queries, 4))
    qrels, run = [], []
    for q in range(nq):
        docs = [f"d{i}" for i in range(8)]
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=8, unique=True))
        for d in judged:
            qrels.append((f"q{q}", d, draw(st.integers(-1, 3))))
        if draw(st.booleans()) or q == 0:
            retrieved = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=8, unique=True))
            for d in retrieved:
                run.append((f"q{q}", d, float(draw(st.integers(0, 3)))))
    return qrels, run


def frames(qrels, run):
    q = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    r = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    return q, r


def evaluate(qrels, run, names, **kw):
    q, r = frames(qrels, run)
    return mc.evaluate(mc.read_qrels(q), mc.read_run(r), names, **kw)


def same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return a.shape == b.shape and np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True)


# --- what every definition carries ----------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_definition_is_complete(family):
    d = REGISTRY[family]
    assert d.description and d.formula and d.reference and d.edge_cases, family
    assert d.example is not None and d.common, family
    doc = d.compute.__doc__
    assert "Formula" in doc and "References" in doc and ">>>" in doc, family
    assert d.cutoff in ("none", "optional", "required", "fraction")
    assert d.aggregate in ("mean", "sum", "gmean", "nanmean")


@pytest.mark.parametrize("family", FAMILIES)
def test_worked_example_reproduces(family):
    ex = REGISTRY[family].example
    got = mc.evaluate(ex.qrels, ex.run, [ex.measure]).aggregate[parse_measure(ex.measure).name]
    assert got == pytest.approx(ex.value, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_names_round_trip(name):
    spec = parse_measure(name)
    assert parse_measure(spec.name).name == spec.name
    for alias in spec.definition.aliases:
        assert parse_measure(alias + name[len(spec.family) :]).name == spec.name
    for trec in trec_names(spec):
        assert from_trec_name(trec) == spec.name


def test_accepted_names_and_picker_derive_from_the_registry():
    text = registry.accepted_names()
    for d in REGISTRY.values():
        assert d.name in text
        for m in d.common:
            assert parse_measure(m).name in registry.COMMON_MEASURES
    for group in (registry.DEFAULT_MEASURES, registry.EXPLORER_MEASURES, registry.COMPARE_MEASURES):
        assert [parse_measure(m).name for m in group] == list(group)


# --- properties on generated data ------------------------------------------------------


@SETTINGS
@given(data=collections(), seed=st.integers(0, 2**31 - 1))
def test_invariant_to_row_order(data, seed):
    qrels, run = data
    rng = np.random.default_rng(seed)
    a = evaluate(qrels, run, ALL_NAMES).per_query
    b = evaluate(
        [qrels[i] for i in rng.permutation(len(qrels))],
        [run[i] for i in rng.permutation(len(run))],
        ALL_NAMES,
    ).per_query
    assert same(a, b)


@SETTINGS
@given(data=collections())
def test_invariant_to_renaming_ids(data):
    qrels, run = data
    # query ids renamed freely; doc ids renamed keeping their byte order (the tie rule)
    qmap = {f"q{i}": name for i, name in enumerate(["zeta", "alpha", "10", "2"])}
    rename = lambda rows: [(qmap[q], "doc-" + d, v) for q, d, v in rows]  # noqa: E731
    a = evaluate(qrels, run, ALL_NAMES).per_query
    b = evaluate(rename(qrels), rename(run), ALL_NAMES).per_query
    b.index = [{v: k for k, v in qmap.items()}[q] for q in b.index]
    assert same(a.sort_index(), b.sort_index())


@SETTINGS
@given(data=collections())
def test_values_in_declared_range_and_nan_only_where_declared(data):
    qrels, run = data
    ev = evaluate(qrels, run, ALL_NAMES, missing_queries="zero")
    for name in ALL_NAMES:
        d = parse_measure(name).definition
        values = ev.per_query[name].to_numpy()
        nan = np.isnan(values)
        assert d.may_be_nan or not nan.any(), name
        low, high = d.value_range
        ok = values[~nan]
        assert (ok >= low).all(), name
        assert high is None or (ok <= high).all(), name


@SETTINGS
@given(data=collections())
def test_perfect_ranking_scores_the_declared_value(data):
    qrels, _ = data
    names = [
        n
        for d in REGISTRY.values()
        if d.perfect is not None
        for n in instances(d)
        if parse_measure(n).cutoff is None or d.cutoff == "fraction"
    ]
    # the perfect run: every judged document, labels descending; queries with a relevant one
    best = [
        (q, d, float(lab))
        for q, d, lab in qrels
        if any(q2 == q and lab2 >= 1 for q2, _, lab2 in qrels)
    ]
    if not best:
        return
    ev = evaluate(qrels, best, names)
    for name in names:
        want = parse_measure(name).definition.perfect
        assert np.allclose(ev.per_query[name].to_numpy(), want, rtol=0, atol=1e-12), name


@SETTINGS
@given(data=collections())
def test_cut_beyond_every_ranking_equals_the_uncut_value(data):
    qrels, run = data
    k = 50  # more than any ranking or judged set here
    fams = [d for d in REGISTRY.values() if d.cut_invariant]
    ev = evaluate(qrels, run, [d.name for d in fams] + [f"{d.name}@{k}" for d in fams])
    for d in fams:
        assert same(
            ev.per_query[[d.name]],
            ev.per_query[[f"{d.name}@{k}"]].rename(columns={f"{d.name}@{k}": d.name}),
        ), d.name


def summary(v: np.ndarray, rule: str) -> float:
    if rule == "sum":
        return float(np.sum(v))
    if rule == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(v, 1e-5)))))
    if rule == "nanmean":
        return float(np.nanmean(v)) if (~np.isnan(v)).any() else math.nan
    return float(np.mean(v))


@SETTINGS
@given(data=collections())
def test_aggregate_follows_the_declared_rule(data):
    qrels, run = data
    ev = evaluate(qrels, run, ALL_NAMES)
    for name in ALL_NAMES:
        d = parse_measure(name).definition
        v = ev.per_query[name].to_numpy()
        want = summary(v, d.aggregate)
        got = ev.aggregate[name]
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(
            want, rel=1e-12, abs=1e-15
        ), name


def test_every_family_declares_which_way_is_better():
    from metrics_core.ranking.definition import BETTER, measure

    for d in REGISTRY.values():
        assert d.better in BETTER, d.name
        spec = parse_measure(instances(d)[-1])
        assert spec.better == d.better
        assert spec.direction == {"higher": 1, "lower": -1, None: 0}[d.better]
    with pytest.raises(RuntimeError, match="better="):
        measure("Nothing", "a family that does not say which way is better")


@pytest.mark.parametrize("seed", range(5))
def test_the_declared_direction_holds_between_a_ranking_and_its_best_order(seed):
    """Sorting the retrieved (all judged) documents by label never makes a "higher" family
    lower nor a "lower" family higher, query by query."""
    rng = np.random.default_rng(seed)
    qrels, shuffled, best = {}, {}, {}
    for i in range(12):
        n = int(rng.integers(1, 15))
        labels = rng.choice([0, 0, 1, 2, 3], n)
        docs = [f"d{j}" for j in range(n)]
        extra = {
            f"x{j}": int(rng.integers(0, 3)) for j in range(int(rng.integers(0, 4)))
        }  # not retrieved
        qrels[f"q{i}"] = dict(zip(docs, labels.tolist(), strict=True)) | extra
        shuffled[f"q{i}"] = {d: float(s) for d, s in zip(docs, rng.permutation(n), strict=True)}
        order = np.argsort(-labels, kind="stable")
        best[f"q{i}"] = {docs[j]: float(n - r) for r, j in enumerate(order)}
    names = [n for n in ALL_NAMES if REGISTRY[parse_measure(n).family].better is not None]
    a = mc.evaluate(qrels, shuffled, names).per_query
    b = mc.evaluate(qrels, best, names).per_query
    for name in names:
        sign = parse_measure(name).direction
        x, y = a[name].to_numpy(), b[name].to_numpy()
        ok = np.isnan(x) & np.isnan(y) | (sign * (y - x) >= -1e-12)
        assert ok.all(), (name, x[~ok], y[~ok])
