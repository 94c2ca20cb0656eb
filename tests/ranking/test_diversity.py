"""The diversity measures against ndeval itself (pyndeval wraps ndeval.c 4.5): every value
per query equal to ndeval's, bit for bit, on random subtopic qrels and runs with ties, any
alpha, beta, relevance threshold and cutoff up to ndeval's 20; whole, streamed in blocks
and on Dask; the readers of subtopic qrels; ndeval's conventions one by one."""

from __future__ import annotations

import math
import types

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core.errors import InputError, InputWarning

pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (ndeval.c) is the oracle")

pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CUTS = (1, 2, 3, 5, 10, 20)
FAMILIES = ("alpha-nDCG", "alpha-DCG", "ERR-IA", "nERR-IA", "P-IA", "strec")
WHOLE = ("NRBP", "nNRBP", "MAP-IA")


def ndeval_names(cuts=CUTS) -> list[str]:
    return [f"{f}@{k}" for f in FAMILIES for k in cuts] + list(WHOLE)


@st.composite
def diversity(draw):
    """(subtopic judgements [(qid, subtopic, doc, label)], run [(qid, doc, score)]): up to
    5 queries over 12 documents, up to 4 subtopics, labels 0..2, scores from five values
    (ties), documents unjudged, queries only in the qrels or only in the run."""
    qrels, run = [], []
    for q in range(draw(st.integers(1, 5))):
        qid = str(q + 1)
        docs = [f"d{i:02d}" for i in range(12)]
        n_sub = draw(st.integers(1, 4))
        in_qrels = q == 0 or draw(st.integers(0, 5)) > 0
        if in_qrels:
            for s in range(1, n_sub + 1):
                judged = draw(st.lists(st.sampled_from(docs), max_size=6, unique=True))
                for d in judged:
                    qrels.append((qid, str(s), d, draw(st.integers(0, 2))))
            if not any(r[0] == qid for r in qrels):
                qrels.append((qid, "1", docs[0], 0))
        if q == 0 or draw(st.integers(0, 5)) > 0:
            got = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=12, unique=True))
            for d in got:
                run.append((qid, d, float(draw(st.integers(0, 4)))))
    # pyndeval numbers subtopics by first appearance over the whole file: written by
    # subtopic number, that is ndeval.c's numeric order (the order gains are added in)
    qrels.sort(key=lambda r: int(r[1]))
    return qrels, run


def oracle(qrels, run, names, alpha=0.5, beta=0.5, rel=1) -> dict:
    ev = pyndeval.RelevanceEvaluator(
        [pyndeval.SubtopicQrel(*r) for r in qrels],
        names,
        relevance_level=rel,
        alpha=alpha,
        beta=beta,
    )
    # pyndeval takes a run grouped by query
    ordered = sorted(run, key=lambda r: r[0])
    return ev.evaluate([pyndeval.ScoredDoc(*r) for r in ordered])


def ranklab(qrels, run, names, **kw):
    q = pd.DataFrame(qrels, columns=["query_id", "subtopic", "doc_id", "relevance"])
    r = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    return mc.evaluate(
        mc.read_qrels(q, subtopics=True), mc.read_run(r), names, ties="docid_asc", **kw
    )


def with_params(name: str, alpha, beta, rel) -> str:
    family, _, cut = name.partition("@")
    params = [f"rel={rel}"] if rel != 1 else []
    if family not in ("P-IA", "strec", "MAP-IA") and alpha != 0.5:
        params.append(f"alpha={alpha}")
    if family in ("NRBP", "nNRBP") and beta != 0.5:
        params.append(f"beta={beta}")
    text = family + (f"({','.join(params)})" if params else "")
    return text + (f"@{cut}" if cut else "")


def assert_equal_to_ndeval(qrels, run, alpha=0.5, beta=0.5, rel=1, **kw):
    names = ndeval_names()
    want = oracle(qrels, run, names, alpha, beta, rel)
    ours = [with_params(n, alpha, beta, rel) for n in names]
    ev = ranklab(qrels, run, ours, **kw)
    frame = ev.per_query
    assert sorted(frame.index) == sorted(want), "ndeval evaluates the queries of both"
    for qid, values in want.items():
        for name, mine in zip(names, ours, strict=True):
            theirs = values[name]
            got = frame.loc[qid, mc.parse_measure(mine).name]
            if name == "nNRBP" and math.isnan(theirs):
                assert got == 0.0  # ndeval's 0/0 for a query without a relevant subtopic
                continue
            assert got == theirs, (qid, name, got, theirs)
    return ev


@SETTINGS
@given(data=diversity())
def test_every_value_equals_ndeval(data):
    assert_equal_to_ndeval(*data)


@SETTINGS
@given(
    data=diversity(),
    alpha=st.sampled_from([0.0, 0.25, 0.3, 0.7, 1.0]),
    beta=st.sampled_from([0.0, 0.3, 0.8, 1.0]),
    rel=st.sampled_from([1, 2]),
)
def test_every_value_equals_ndeval_under_its_parameters(data, alpha, beta, rel):
    assert_equal_to_ndeval(*data, alpha=alpha, beta=beta, rel=rel)


def test_a_larger_collection_equals_ndeval_whole_streamed_and_on_dask():
    qrels, run = random_collection(np.random.default_rng(7), queries=40)
    whole = assert_equal_to_ndeval(qrels, run)
    names = [mc.parse_measure(n).name for n in ndeval_names()]
    q = mc.read_qrels(
        pd.DataFrame(qrels, columns=["query_id", "subtopic", "doc_id", "relevance"]),
        subtopics=True,
    )
    r = mc.read_run(pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))
    streamed = mc.evaluate(q, r, names, ties="docid_asc", block_rows=100)
    assert streamed.streaming["blocks"] > 1
    pd.testing.assert_frame_equal(whole.per_query, streamed.per_query, check_exact=True)
    assert whole.aggregate == streamed.aggregate


def random_collection(rng, queries=30, docs=60):
    qrels, run = [], []
    for q in range(queries):
        qid = str(q + 1)
        n_sub = int(rng.integers(1, 7))
        for s in range(1, n_sub + 1):
            judged = rng.choice(docs, size=int(rng.integers(0, 15)), replace=False)
            qrels += [(qid, str(s), f"doc{d:03d}", int(rng.integers(0, 3))) for d in judged]
        got = rng.choice(docs, size=int(rng.integers(1, 40)), replace=False)
        run += [(qid, f"doc{d:03d}", float(rng.integers(0, 8))) for d in got]
    qrels.sort(key=lambda r: int(r[1]))
    return qrels, run


def test_on_dask_equals_whole(tmp_path):
    distributed = pytest.importorskip("distributed")
    import sys

    qrels, run = random_collection(np.random.default_rng(11), queries=25)
    qpath, rpath = tmp_path / "subtopics.qrels", tmp_path / "run.txt"
    qpath.write_text("".join(f"{q} {s} {d} {v}\n" for q, s, d, v in qrels))
    rpath.write_text("".join(f"{q} Q0 {d} 0 {v} r\n" for q, d, v in run))
    names = ndeval_names((5, 20))
    whole = mc.evaluate(qpath, rpath, names, block_rows=0)
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        cluster = distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
        )
    finally:
        sys.modules["__main__"] = main
    with distributed.Client(cluster, timeout="30s") as client:
        dist = mc.evaluate(qpath, rpath, names, client=client)
    cluster.close()
    pd.testing.assert_frame_equal(whole.per_query, dist.per_query, check_exact=True)
    assert whole.aggregate == dist.aggregate


# --- ndeval's conventions, one by one ------------------------------------------------------


def test_alpha_dcg_at_1_is_left_undivided_as_ndeval_leaves_it():
    qrels = [("1", "1", "a", 1), ("1", "2", "a", 1), ("1", "3", "b", 1)]
    run = [("1", "a", 2.0), ("1", "b", 1.0)]
    ev = assert_equal_to_ndeval(qrels, run)
    assert ev.aggregate["alpha-DCG@1"] == 2.0  # a covers 2 of the 3 subtopics: not 2/3
    assert ev.aggregate["ERR-IA@1"] == 2.0


def test_the_ideal_is_greedy_and_can_be_beaten():
    """ndeval's greedy ideal takes the document covering most first (a: 4 subtopics); b and c
    cover all six together, so with alpha = 0.9 the run b, c scores above 1 -- as ndeval
    says too."""
    qrels = [("1", s, "a", 1) for s in ("2", "3", "4", "5")]
    qrels += [("1", s, "b", 1) for s in ("1", "2", "3")]
    qrels += [("1", s, "c", 1) for s in ("4", "5", "6")]
    qrels.sort(key=lambda r: int(r[1]))
    run = [("1", "b", 2.0), ("1", "c", 1.0)]
    ev = assert_equal_to_ndeval(qrels, run, alpha=0.9)
    assert ev.aggregate["alpha-nDCG(alpha=0.9)@2"] > 1.0


def test_unjudged_and_unanswered_and_ndeval_amean():
    qrels = [("1", "1", "a", 1), ("2", "1", "b", 1), ("3", "1", "c", 0)]
    run = [("1", "x", 3.0), ("1", "a", 2.0), ("3", "c", 1.0), ("9", "a", 1.0)]
    ev = assert_equal_to_ndeval(qrels, run)
    # ndeval's amean: over the run's queries that the qrels judge (1 and 3); -c: all three
    assert ev.diagnostics["missing_queries"] == ["2"]
    assert ev.aggregate["strec@5"] == (1.0 + 0.0) / 2
    c = ranklab(qrels, run, ["strec@5", "nNRBP"], missing_queries="zero")
    assert c.aggregate["strec@5"] == 1.0 / 3
    assert c.per_query.loc["3", "nNRBP"] == 0.0  # no relevant subtopic: 0, not ndeval's nan


def test_labels_above_one_count_once_and_threshold_applies():
    qrels = [("1", "1", "a", 2), ("1", "1", "b", 1), ("1", "2", "b", 2)]
    run = [("1", "a", 2.0), ("1", "b", 1.0)]
    assert_equal_to_ndeval(qrels, run, rel=1)
    ev = assert_equal_to_ndeval(qrels, run, rel=2)
    assert ev.per_query.iloc[0]["strec(rel=2)@1"] == 0.5


def test_ties_follow_the_conventions_and_ndeval_traditional():
    qrels = [("1", "1", "a", 1), ("1", "2", "b", 1)]
    run = [("1", "a", 1.0), ("1", "b", 1.0)]
    # trec_eval's order (ndeval -traditional): b before a; pyndeval's: a before b
    q = pd.DataFrame(qrels, columns=["query_id", "subtopic", "doc_id", "relevance"])
    r = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    trec = mc.evaluate(mc.read_qrels(q, subtopics=True), mc.read_run(r), ["P-IA@1"])
    assert trec.aggregate["P-IA@1"] == 0.5
    assert_equal_to_ndeval(qrels, run)


def test_the_front_door_reads_subtopics_when_a_diversity_measure_is_asked(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 1 a 1\n1 2 a 1\n1 2 b 1\n")
    run = {"1": {"a": 2.0, "b": 1.0}}
    ev = mc.evaluate(path, run, ["alpha-nDCG@2", "nDCG@2", "P@2"])
    # nDCG and P see one row per (query, document): its highest label over the subtopics
    assert ev.aggregate["P@2"] == 1.0 and ev.aggregate["nDCG@2"] == 1.0
    assert ev.aggregate["alpha-nDCG@2"] == 1.0
    assert mc.evaluate(path, run, ["strec@1"]).aggregate["strec@1"] == 1.0


def test_ordinary_qrels_are_one_subtopic_with_a_warning():
    with pytest.warns(InputWarning, match="no subtopics"):
        ev = mc.evaluate(
            mc.read_qrels({"q": {"a": 1, "b": 1}}), {"q": {"a": 2.0, "b": 1.0}}, ["alpha-DCG@2"]
        )
    assert ev.aggregate["alpha-DCG@2"] == 1.0


def test_names_and_parameters():
    assert mc.parse_measure("alpha_nDCG@20").name == "alpha-nDCG@20"
    assert mc.parse_measure("ERR_IA@5").name == "ERR-IA@5"
    assert mc.parse_measure("StRecall@10").name == "strec@10"
    assert mc.parse_measure("P_IA@10").name == "P-IA@10"
    assert mc.parse_measure("AP_IA").name == "MAP-IA"
    assert mc.parse_measure("nrbp(alpha=0.3,beta=0.8)").name == "NRBP(alpha=0.3,beta=0.8)"
    assert mc.parse_measure("NRBP").param("beta", mc.Conventions()) == 0.5
    assert mc.parse_measure("SetF").param("beta", mc.Conventions()) == 1.0
    for bad in ("NRBP(beta=1.5)", "alpha-nDCG(alpha=2)@5", "alpha-nDCG", "MAP-IA@5"):
        with pytest.raises(InputError):
            mc.parse_measure(bad)


def test_repeated_judgement_is_an_error_naming_its_lines(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 1 a 1\n1 2 b 1\n1 1 a 0\n")
    with pytest.raises(InputError, match="lines 1 and 3"):
        mc.evaluate(path, {"1": {"a": 1.0}}, ["alpha-nDCG@5"])
    ev = mc.evaluate(path, {"1": {"a": 1.0}}, ["strec@5"], duplicates="max")
    assert ev.aggregate["strec@5"] == 0.5


# --- the readers -----------------------------------------------------------------------------


def test_reader_forms_agree(tmp_path):
    rows = [("1", "1", "a", 1), ("1", "2", "b", 2), ("2", "1", "c", 1)]
    text = "".join(f"{q} {s} {d} {v}\n" for q, s, d, v in rows)
    forms = [
        text.encode(),
        pd.DataFrame(rows, columns=["qid", "iteration", "docno", "label"]),
        {"1": {"1": {"a": 1}, "2": {"b": 2}}, "2": {"1": {"c": 1}}},
        rows,
        [pyndeval.SubtopicQrel(*r) for r in rows],
    ]
    csv = tmp_path / "q.csv"
    pd.DataFrame(rows, columns=["query_id", "subtopic", "doc_id", "relevance"]).to_csv(
        csv, index=False
    )
    forms.append(csv)
    want = mc.read_qrels(forms[0], subtopics=True).to_frame(subtopics=True)
    for f in forms[1:]:
        got = mc.read_qrels(f, subtopics=True).to_frame(subtopics=True)
        pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"1 1 a\n", "line 1: expected 4 columns, found 3"),
        (b"1 1 a 1\n1 1 b x\n", "line 2: relevance 'x' is not a number"),
        (b"", "empty"),
    ],
)
def test_bad_lines_are_named(text, message):
    with pytest.raises(InputError, match=message):
        mc.read_qrels(text, subtopics=True)


def test_judgements_without_subtopics_are_one_subtopic_with_a_warning():
    """As ir_measures reads qrels without an iteration column (subtopic '0')."""
    for source in (
        pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [1, 0]}),
        {"1": {"a": 1, "b": 0}},
        [("1", "a", 1), ("1", "b", 0)],
    ):
        with pytest.warns(InputWarning, match="no subtopics"):
            q = mc.read_qrels(source, subtopics=True)
        assert q.subtopic_names == ["0"] and q.pair_label.tolist() == [1.0, 0.0]


def test_looks_like_subtopics():
    from metrics_core.io.subtopics import looks_like_subtopics

    assert looks_like_subtopics(b"1 1 a 1\n1 2 a 1\n")
    assert not looks_like_subtopics(b"1 0 a 1\n1 0 b 1\n")
    assert not looks_like_subtopics(b"query,doc,label\n1,a,1\n")


def _two_subtopics_by_definition(text: bytes) -> bool:
    """The rule itself, line by line: two lines of four fields (not comments) judging one
    (query, document) with different second columns."""
    seen: dict = {}
    for line in text.split(b"\n"):
        parts = line.split()
        if len(parts) != 4 or line.startswith(b"#"):
            continue
        if seen.setdefault((parts[0], parts[2]), parts[1]) != parts[1]:
            return True
    return False


def test_looks_like_subtopics_is_the_rule_on_any_whitespace_comments_and_short_lines():
    """The detection (a quick look at the second columns first, then the lines) answers as the
    rule does: leading and mixed whitespace, comment lines, lines of other lengths, several
    second columns that never meet on one (query, document)."""
    import random

    from metrics_core.io.formats import is_trec
    from metrics_core.io.source import read_source
    from metrics_core.io.subtopics import looks_like_subtopics

    assert looks_like_subtopics(b"  1\t1 a 1\n\t1 2\x0ba 1\n")  # leading and mixed whitespace
    assert not looks_like_subtopics(b"1 0 a 1\n#1 1 a 1\n")  # a comment does not count
    assert not looks_like_subtopics(b"1 0 a 1\n1 1 a\n1 2 a 1 x\n")  # nor lines of 3 or 5
    assert not looks_like_subtopics(b"1 0 a 1\n1 1 b 1\n2 2 a 0\n")  # never on one pair
    rng = random.Random(7)
    spaces = [b" ", b"\t", b"  ", b" \t", b"\x0b", b"\x0c", b"\r"]
    checked = found = 0
    for _ in range(2000):
        lines = []
        for _ in range(rng.randint(1, 8)):
            fields = [rng.choice(x) for x in ([b"1", b"2"], [b"0", b"0", b"1"], [b"a", b"b"])]
            fields = (fields + [rng.choice([b"0", b"1"]), b"x"])[: rng.choice([2, 3, 4, 4, 5])]
            line = rng.choice(spaces).join(fields)
            if rng.random() < 0.2:
                line = rng.choice(spaces) + line
            if rng.random() < 0.1:
                line = b"#" + line
            lines.append(line)
        text = b"\n".join(lines) + b"\n"
        if not is_trec(read_source(text), "qrels"):
            continue
        expected = _two_subtopics_by_definition(text)
        assert looks_like_subtopics(text) == expected, text
        checked, found = checked + 1, found + expected
    assert checked > 1000 and 100 < found < checked - 100  # both answers, often


def test_the_bundled_sample_equals_ndeval():
    """sample_data/diversity: the subtopic qrels and both runs, read from their files (the
    fast reader), every value equal to ndeval's; the diverse run scores higher."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "sample_data" / "diversity"
    qrels = [tuple(line.split()) for line in (root / "subtopics.qrels").read_text().splitlines()]
    qrels = [(q, s, d, int(v)) for q, s, d, v in qrels]
    names = [mc.parse_measure(n).name for n in ndeval_names()]
    means = {}
    for run_name in ("relevance", "diverse"):
        lines = (root / f"{run_name}.txt").read_text().splitlines()
        run = [(q, d, float(s)) for q, _, d, _, s, _ in (line.split() for line in lines)]
        want = oracle(qrels, run, ndeval_names())
        ev = mc.evaluate(
            root / "subtopics.qrels", root / f"{run_name}.txt", names, ties="docid_asc"
        )
        for qid, values in want.items():
            for name, mine in zip(ndeval_names(), names, strict=True):
                got, theirs = ev.per_query.loc[qid, mine], values[name]
                assert got == theirs or (math.isnan(theirs) and got == 0.0), (qid, name)
        means[run_name] = ev.aggregate
    for m in ("alpha-nDCG@10", "ERR-IA@10", "strec@10"):
        assert means["diverse"][m] > means["relevance"][m]
