"""mc.rank / Ranking: one ranking serves evaluations, tie reports and per-query views with
evaluate's numbers bit for bit; its per-query view and tie groups against an independent
construction (pandas sort by score, then document id descending: trec_eval's rule)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.ranking.ranked import RANKING_COLUMNS, Ranking

MEASURES = ["P@5", "P@10", "R@100", "RR@10", "AP", "nDCG@10", "nDCG@100", "Bpref", "Judged@10"]


def _data(seed: int, ties: bool = True):
    rng = np.random.default_rng(seed)
    rows, judgements = [], []
    for i in range(25):
        n = int(rng.integers(0, 30))
        docs = rng.choice(60, n, replace=False)
        scores = rng.integers(0, 6, n) if ties else rng.permutation(n) + 0.5
        rows += [(f"q{i}", f"d{d}", float(s)) for d, s in zip(docs, scores, strict=True)]
        judged = rng.choice(60, int(rng.integers(1, 25)), replace=False)
        judgements += [(f"q{i}", f"d{d}", int(rng.choice([0, 0, 1, 2, 3]))) for d in judged]
    judgements.append(("q99", "x", 1))  # judged, not in the run
    run = mc.read_run("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows).encode())
    qrels = mc.read_qrels("".join(f"{q} 0 {d} {r}\n" for q, d, r in judgements).encode())
    return qrels, run, rows, judgements


def _same_evaluation(got, want):
    pd.testing.assert_frame_equal(got.per_query, want.per_query, check_exact=True)
    for m in want.measures:
        a, b = got.per_query[m].to_numpy(), want.per_query[m].to_numpy()
        assert a.tobytes() == b.tobytes(), m
    assert got.aggregate == want.aggregate
    assert got.diagnostics == want.diagnostics


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "conv",
    [
        mc.Conventions(),
        mc.Conventions(missing_queries="zero"),
        mc.Conventions(compat="trec_eval9"),
        mc.Conventions(ties="input", depth=12),
    ],
)
def test_ranking_evaluates_as_evaluate_for_any_subset_of_its_cutoffs(seed, conv):
    qrels, run, _, _ = _data(seed)
    ranking = mc.rank(qrels, run, conv, cutoffs=(1, 3, 5, 10, 20, 100))
    assert isinstance(ranking, Ranking)
    for measures in (MEASURES, ["AP"], ["P@3", "NumRet", "Judged@1"]):
        _same_evaluation(ranking.evaluate(measures), mc.evaluate(qrels, run, measures, conv))
    ev = ranking.evaluate(["AP"], name="other")
    assert ev.run_name == "other" and ev.ranking is ranking


def test_a_cutoff_the_ranking_lacks_is_ranked_again_with_the_same_numbers():
    qrels, run, _, _ = _data(4)
    ranking = mc.rank(qrels, run, cutoffs=(5,))
    ev = ranking.evaluate(["P@7", "P@5"])
    _same_evaluation(ev, mc.evaluate(qrels, run, ["P@7", "P@5"]))
    assert ranking.cutoffs == (5, 7)
    assert set(ev.diagnostics["ties_straddling"]) == {"5", "7"}


def test_overrides_and_attributes():
    qrels, run, _, _ = _data(5)
    ranking = mc.rank(qrels, run, missing_queries="zero")
    assert ranking.conventions.missing_queries == "zero"
    assert ranking.query_ids[-1] == "q99" and ranking.n_queries == len(ranking.query_ids)
    assert ranking.run is run and ranking.qrels is qrels and ranking.run_name == run.name
    assert ranking.diagnostics["missing_queries"] == ["q99"]
    assert ranking.diagnostics["num_queries"] == ranking.n_queries


@pytest.mark.parametrize("seed", [0, 6])
def test_tie_report_and_bounds_equal_the_evaluations(seed):
    qrels, run, _, _ = _data(seed)
    ranking = mc.rank(qrels, run, cutoffs=(5, 10, 100))
    want = mc.evaluate(qrels, run, MEASURES, tie_report=True).tie_report
    assert ranking.tie_report(MEASURES) == want
    assert ranking.evaluate(MEASURES, tie_report=True).tie_report == want
    bounds = ranking.tie_bounds(MEASURES)
    assert set(bounds) == set(want["aggregate"])
    for m, (lo, hi) in bounds.items():
        for i, q in enumerate(ranking.query_ids):
            assert (
                lo[i] == want["per_query"][q][m]["min"] and hi[i] == want["per_query"][q][m]["max"]
            )


def _expected_ranking(rows, judgements, q):
    frame = pd.DataFrame([r for r in rows if r[0] == q], columns=["qid", "doc_id", "score"])
    # trec_eval: score descending, then document id descending (byte order)
    frame = frame.sort_values(
        ["score", "doc_id"], ascending=[False, False], kind="stable"
    ).reset_index(drop=True)
    labels = {d: float(r) for qq, d, r in judgements if qq == q}
    frame["relevance"] = [labels.get(d, np.nan) for d in frame["doc_id"]]
    frame["judged"] = frame["doc_id"].isin(labels)
    frame.insert(0, "rank", np.arange(1, len(frame) + 1))
    return frame.drop(columns="qid")


@pytest.mark.parametrize("seed", [0, 3])
def test_one_querys_ranking_and_tie_sizes_against_pandas(seed):
    qrels, run, rows, judgements = _data(seed)
    ranking = mc.rank(qrels, run)
    all_sizes = ranking.tie_sizes()
    assert len(all_sizes) == int(ranking.lists.starts[-1])
    for i, q in enumerate(ranking.query_ids):
        got = ranking.ranking(q)
        assert tuple(got.columns) == RANKING_COLUMNS
        want = _expected_ranking(rows, judgements, q)
        assert got["doc_id"].tolist() == want["doc_id"].tolist()
        assert got["rank"].tolist() == want["rank"].tolist()
        assert np.array_equal(got["score"].to_numpy(), want["score"].to_numpy())
        assert np.array_equal(
            got["relevance"].to_numpy(), want["relevance"].to_numpy(), equal_nan=True
        )
        assert got["judged"].tolist() == want["judged"].tolist()
        # tie groups: equal scores next to each other in the ranking
        scores = want["score"].to_numpy()
        sizes = np.array([int(np.sum(scores == s)) for s in scores], dtype=np.int64)
        assert ranking.tie_sizes(q).tolist() == sizes.tolist()
        lo, hi = int(ranking.lists.starts[i]), int(ranking.lists.starts[i + 1])
        assert all_sizes[lo:hi].tolist() == sizes.tolist()
    assert ranking.ranking("nope").empty and list(ranking.ranking("nope").columns) == list(
        RANKING_COLUMNS
    )
    assert ranking.tie_sizes("nope").tolist() == []


def test_tie_sizes_compare_scores_as_float32_under_trec_eval9():
    run = {"q1": {"a": 1.0, "b": 1.0 + 1e-12, "c": 0.5}}
    qrels = {"q1": {"a": 1}}
    assert mc.rank(qrels, run).tie_sizes("q1").tolist() == [1, 1, 1]
    assert mc.rank(qrels, run, compat="trec_eval9").tie_sizes("q1").tolist() == [2, 2, 1]


def test_evaluation_values_follow_the_evaluated_order():
    qrels, run, _, _ = _data(7)
    ev = mc.evaluate(qrels, run, ["AP", "P@5"])
    frame = ev.per_query
    ids = ev.evaluated_ids
    for m, values in ev.values.items():
        assert np.array_equal(frame[m].reindex(ids).to_numpy(), values)


def test_a_streamed_evaluation_has_no_ranking_and_the_same_numbers(tmp_path):
    qrels, run, rows, _ = _data(8)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows))
    streamed = mc.evaluate(qrels, path, MEASURES, block_rows=50)
    assert streamed.ranking is None and hasattr(streamed, "streaming")
    whole = mc.evaluate(qrels, path, MEASURES, block_rows=0)
    assert isinstance(whole.ranking, mc.Ranking)
    pd.testing.assert_frame_equal(streamed.per_query, whole.per_query, check_exact=True)
    assert streamed.aggregate == whole.aggregate
    assert mc.Evaluation is type(whole)
