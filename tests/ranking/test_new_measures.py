"""The measures and conventions added to reach trec_eval 10's whole ``all_trec`` set, and
ERR beyond it.

trec_eval itself checks the trec_eval measures value for value (tests/ranking/test_trec_eval_oracle.py);
here: ERR against a straightforward reference written from the paper, custom gains, the
``labels``, ``judged_only`` and ``compat`` conventions, and their command-line flags.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core import cli
from metrics_core.errors import InputError

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def graded(draw):
    """({qid: {doc: label}}, {qid: {doc: score}}) with ties and labels -1..5."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 9)))]
        qrels[f"q{q}"] = {d: draw(st.integers(-1, 5)) for d in docs if draw(st.booleans())} or {
            docs[0]: 1
        }
        run[f"q{q}"] = {d: float(draw(st.integers(0, 3))) for d in docs}
    return qrels, run


def trec_order(ranking: dict) -> list[str]:
    """Score descending, equal scores by document id descending (trec_eval)."""
    return [
        d for d, _ in sorted(ranking.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)
    ]


def err_reference(labels: list[float], k: int | None, g_max: float) -> float:
    """ERR from Chapelle et al. (2009), Algorithm 2, written out as a plain loop."""
    p, total = 1.0, 0.0
    for i, g in enumerate(labels[:k] if k else labels, start=1):
        g = min(max(g, 0.0), g_max)
        r = (2.0**g - 1.0) / 2.0**g_max
        total += p * r / i
        p *= 1.0 - r
    return total


@SETTINGS
@given(data=graded(), k=st.sampled_from([None, 1, 3, 5, 20]), g_max=st.sampled_from([1, 3, 4, 5]))
def test_err_equals_an_independent_reference(data, k, g_max):
    qrels, run = data
    name = f"ERR(max_grade={g_max})" + (f"@{k}" if k else "")
    ev = mc.evaluate(qrels, run, [name])
    col = ev.per_query[mc.parse_measure(name).name]
    for q, ranking in run.items():
        labels = [float(qrels[q].get(d, 0)) for d in trec_order(ranking)]
        assert col[q] == pytest.approx(err_reference(labels, k, g_max), rel=1e-12, abs=1e-15)


def test_err_known_value():
    # grades 2, 0, 1 with max grade 2: R = 3/4, 0, 1/4
    ev = mc.evaluate(
        {"q": {"a": 2, "b": 0, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["ERR(max_grade=2)"]
    )
    assert ev.aggregate["ERR(max_grade=2)"] == pytest.approx(0.75 + (1 / 3) * 0.25 * 0.25)


# --- custom gains ------------------------------------------------------------------------


def dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def test_custom_gains_are_exact_without_truncation():
    """gains 1:3.5 and 2:3 -- trec_eval sorts its ideal ranking on the truncated difference
    (0), RankLab on the gains: the ideal puts the 3.5 first."""
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    ev = mc.evaluate(qrels, run, ["nDCG(gains=1:3.5,2:3)", "nDCG(gains=0:0.5)"])
    assert ev.aggregate["nDCG(gains=1:3.5,2:3)"] == pytest.approx(
        dcg([3, 3.5]) / dcg([3.5, 3]), rel=1e-15
    )
    # label 0 can be given a gain too
    assert ev.aggregate["nDCG(gains=0:0.5)"] == pytest.approx(dcg([2, 1, 0.5]) / dcg([2, 1, 0.5]))
    assert mc.parse_measure("nDCG(gains=2:9,1:3.5)").name == "nDCG(gains=1:3.5,2:9)"


@pytest.mark.parametrize(
    "bad",
    [
        "nDCG(gains=1)",
        "nDCG(gains=a:2)",
        "nDCG(gains=1:2,1:3)",
        "RBP(p=1.5)",
        "ERR(max_grade=-1)",
        "SetF(beta=x)",
    ],
)
def test_bad_parameters_are_refused(bad):
    with pytest.raises(InputError):
        mc.parse_measure(bad)


# --- labels ------------------------------------------------------------------------------


def test_fractional_labels_truncate_by_default_and_keep_on_request():
    qrels = {"q": {"a": 1.7, "b": 0.5, "c": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    trunc = mc.evaluate(qrels, run, ["nDCG", "R"])
    keep = mc.evaluate(qrels, run, ["nDCG", "R"], labels="keep")
    as_ints = mc.evaluate({"q": {"a": 1, "b": 0, "c": 2}}, run, ["nDCG", "R"])
    assert trunc.aggregate == as_ints.aggregate
    assert keep.aggregate["nDCG"] == pytest.approx(dcg([1.7, 0.5, 2]) / dcg([2, 1.7, 0.5]))
    assert keep.aggregate["R"] == 2 / 2  # 1.7 and 2 relevant at threshold 1; 0.5 is not
    assert trunc.diagnostics["fractional_labels"] == 2
    assert "fractional_labels" not in as_ints.diagnostics


def test_cli_warns_about_fractional_labels(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 a 1.5\nq1 0 b 0\n")
    r.write_text("q1 Q0 a 0 2 t\nq1 Q0 b 0 1 t\n")
    assert cli.main(["evaluate", "--qrels", str(q), "--run", str(r), "-m", "nDCG"]) == 0
    out = capsys.readouterr().out
    assert "1 fractional relevance labels" in out and "truncated" in out


# --- judged only (-J) --------------------------------------------------------------------


@SETTINGS
@given(data=graded())
def test_judged_only_equals_the_run_without_unjudged_documents(data):
    qrels, run = data
    names = ["AP", "P@3", "nDCG@5", "RR", "Bpref", "NumRet", "infAP", "RBP"]
    judged = {
        q: {d: s for d, s in r.items() if qrels.get(q, {}).get(d, -1) >= 0} for q, r in run.items()
    }
    kept = {q: r for q, r in judged.items() if r}
    a = mc.evaluate(qrels, run, names, judged_only=True).per_query
    if not kept:
        assert (a["NumRet"] == 0).all()
        return
    b = mc.evaluate(qrels, kept, names).per_query
    np.testing.assert_array_equal(a.loc[b.index].to_numpy(), b.to_numpy())


def test_cli_flags_reach_the_conventions(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    r.write_text("q1 Q0 x 0 3 t\nq1 Q0 a 0 2 t\nq1 Q0 b 0 1 t\n")
    args = [
        "evaluate",
        "--qrels",
        str(q),
        "--run",
        str(r),
        "-m",
        "P@1,Utility(d=1)",
        "--format",
        "json",
    ]
    assert cli.main(args + ["-J", "-N", "100", "--compat", "trec_eval9", "--labels", "keep"]) == 0
    out = json.loads(capsys.readouterr().out)
    conv = out["conventions"]
    assert (conv["judged_only"], conv["num_docs"], conv["compat"], conv["labels"]) == (
        True,
        100,
        "trec_eval9",
        "keep",
    )
    agg = out["runs"][0]["aggregate"]
    assert agg["P@1"] == 1.0  # x (unjudged) dropped: a is first
    assert agg["Utility(d=1)"] == 1 - 1 + (100 + 1 - 2 - 1)  # -J: 2 retrieved, 1 relevant
    assert cli.main(args) == 0
    agg = json.loads(capsys.readouterr().out)["runs"][0]["aggregate"]
    assert agg["P@1"] == 0.0 and agg["Utility(d=1)"] == 1 - 2 + (0 + 1 - 3 - 1)  # N = 0 by default


# --- compat=trec_eval9 -------------------------------------------------------------------


def test_compat_trec_eval9_ties_scores_equal_in_float32():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.00000002, "b": 1.00000001}}  # one float32: b before a (doc id descending)
    assert mc.evaluate(qrels, run, ["RR"]).aggregate["RR"] == 1.0
    assert mc.evaluate(qrels, run, ["RR"], compat="trec_eval9").aggregate["RR"] == 0.5


@SETTINGS
@given(data=graded())
def test_compat_trec_eval9_rounds_recall_levels_as_trec_eval9(data):
    qrels, run = data
    levels = [f"IPrec@{r}" for r in (0.0, 0.1, 0.3, 0.5, 0.7, 1.0)]
    nine = mc.evaluate(qrels, run, levels + ["IPrecAvg"], compat="trec_eval9").per_query
    explicit = mc.evaluate(
        qrels, run, [n.replace("@", "(rounding=trec9)@") for n in levels]
    ).per_query
    np.testing.assert_array_equal(nine[levels].to_numpy(), explicit.to_numpy())


# --- compare-modes -----------------------------------------------------------------------


def test_compare_modes_names_the_causes():
    from metrics_core.ranking.modes import FLOAT32, ROUNDING, compare_modes

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1, "b": 1, "c": 1, "d": 0, "e": 1, "f": 1}}
    run = {
        "q1": {"a": 1.00000002, "b": 1.00000001},  # equal in float32: reordered
        "q2": {"d": 5.0, "a": 4.0, "b": 3.0, "c": 2.0, "e": 1.0},
    }  # R = 5: IPrec@0.1's c is 1 vs 1
    rep = compare_modes(qrels, run, ["RR", "IPrec@0.3", "AP"])
    got = {(d["query"], d["measure"]): d["why"] for d in rep["differences"]}
    assert got[("q1", "RR")] == [FLOAT32] and got[("q1", "AP")] == [FLOAT32]
    # IPrec@0.3 with R = 5: round(1.5) = 2 documents (trec_eval 10), floor(2.4) = 2 -> same;
    assert ("q2", "IPrec@0.3") not in got
    rep = compare_modes(qrels, run, ["IPrec@0.1"])  # round(0.5) = 1 vs floor(1.4) = 1 -> same
    assert not [d for d in rep["differences"] if d["query"] == "q2"]
    rep = compare_modes(
        {"q": {"a": 1, "b": 1, "c": 1, "x": 1, "y": 1, "z": 1}},
        {"q": {"a": 4.0, "n": 3.0, "m": 2.0, "b": 1.0}},
        ["IPrec@0.2"],
    )
    # R = 6: c = round(1.2) = 1 (trec_eval 10): P@1 = 1; c = floor(2.1) = 2 (trec_eval 9): P@4
    assert rep["differences"] == [
        {
            "query": "q",
            "measure": "IPrec@0.2",
            "trec_eval10": 1.0,
            "trec_eval9": 0.5,
            "why": [ROUNDING],
        }
    ]
    assert rep["summary"]["by_cause"] == {ROUNDING: 1}


def test_compare_modes_cli(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    r.write_text("q1 Q0 a 0 1.00000002 t\nq1 Q0 b 0 1.00000001 t\n")
    assert (
        cli.main(
            ["compare-modes", "--qrels", str(q), "--run", str(r), "-m", "RR", "--format", "json"]
        )
        == 0
    )
    rep = json.loads(capsys.readouterr().out)["runs"][0]
    assert rep["differences"] == [
        {
            "query": "q1",
            "measure": "RR",
            "trec_eval10": 1.0,
            "trec_eval9": 0.5,
            "why": ["float32 near-tie"],
        }
    ]
    assert rep["aggregate"]["RR"] == {
        "trec_eval10": 1.0,
        "trec_eval9": 0.5,
        "why": ["float32 near-tie"],
    }
    assert cli.main(["compare-modes", "--qrels", str(q), "--run", str(r), "-m", "RR"]) == 0
    assert "1 values differ on 1 of 1 queries" in capsys.readouterr().out


# --- compat=trec_eval9 against pytrec_eval (trec_eval 9.0.8 inside) ----------------------


@st.composite
def near_ties(draw):
    """Runs whose scores often differ only beyond float32's precision."""
    qrels, run = {}, {}
    base = [0.5, 1.0, 2.0, 1.0 + 1e-9, 1.0 + 3e-9, 2.0 + 1e-8, 0.1 + 1e-10]
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{i}" for i in range(draw(st.integers(2, 9)))]
        qrels[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in docs if draw(st.booleans())} or {
            docs[0]: 1
        }
        run[f"q{q}"] = {d: draw(st.sampled_from(base)) for d in docs}
    return qrels, run


@SETTINGS
@given(data=near_ties())
def test_compat_trec_eval9_equals_pytrec_eval_exactly(data):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = data
    trec = {
        "map": "AP",
        "recip_rank": "RR",
        "P_5": "P@5",
        "ndcg": "nDCG",
        "ndcg_cut_10": "nDCG@10",
        "Rprec": "Rprec",
        "bpref": "Bpref",
        "iprec_at_recall_0.10": "IPrec@0.1",
        "iprec_at_recall_0.50": "IPrec@0.5",
        "recall_10": "R@10",
        "infAP": "infAP",
        "11pt_avg": "IPrecAvg",
        "binG": "BinG",
        "Rndcg": "RnDCG",
    }
    got = pytrec_eval.RelevanceEvaluator(qrels, set(trec)).evaluate(run)
    ev = mc.evaluate(qrels, run, list(trec.values()), compat="trec_eval9").per_query
    for q, values in got.items():
        for m, v in values.items():
            name = mc.parse_measure(trec[m]).name
            assert float(ev.loc[q, name]) == v, (q, m)


# --- JSON keeps the requested order ------------------------------------------------------


def test_json_keeps_the_requested_measure_order(tmp_path, capsys):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 a 1\n")
    r.write_text("q1 Q0 a 0 2 t\nq1 Q0 b 0 1 t\nq2 Q0 b 0 1 t\n")
    requested = [
        "recip_rank",
        "Unjudged@5",
        "P@1",
        "ndcg_cut_10",
        "infAP",
        "AP",
        "map",
        "Bpref",
        "set_F",
    ]
    want = [
        "RR",
        "Unjudged@5",
        "P@1",
        "nDCG@10",
        "infAP",
        "AP",
        "Bpref",
        "SetF",
    ]  # canonical, map = AP
    assert (
        cli.main(
            [
                "evaluate",
                "--qrels",
                str(q),
                "--run",
                str(r),
                "-m",
                ",".join(requested[:4]),
                "-m",
                ",".join(requested[4:]),
                "--per-query",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)["runs"][0]
    assert list(out["aggregate"]) == want
    assert all(list(v) == want for v in out["per_query"].values())


def test_streamed_summaries_equal_whole_ones_under_compat_trec_eval9():
    qrels = {f"q{i}": {"a": i % 3, "b": 1, "c": 0} for i in range(12)}
    run = {f"q{i}": {"a": 1.0 + i * 1e-9, "b": 1.0, "c": 0.5} for i in range(0, 12, 2)}
    names = ["GMAP", "AP", "NumRel", "IPrec@0.5", "GMBpref"]
    kw = dict(compat="trec_eval9", missing_queries="zero")
    whole = mc.evaluate(qrels, mc.read_run(run), names, block_rows=0, **kw)
    streamed = mc.evaluate(qrels, mc.read_run(run), names, block_rows=4, **kw)
    assert hasattr(streamed, "streaming")
    assert {k: float(v).hex() for k, v in whole.aggregate.items()} == {
        k: float(v).hex() for k, v in streamed.aggregate.items()
    }
