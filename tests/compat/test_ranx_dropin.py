"""``metrics_core.compat.ranx`` against the real ranx: Qrels, Run, evaluate with ranx's
argument forms, on random collections with graded labels, queries without relevant
documents, short rankings with ties (ranx keeps their input order) and long ones without."""

from __future__ import annotations

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

# numba compiles ranx's functions (and its own argsort) once per process, tens of seconds
# in a fresh environment: the tests that call them run in one process of pytest -n 2
pytestmark = pytest.mark.xdist_group("numba")

from metrics_core.compat import ranx as shim  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402

NAMES = [
    "ndcg@10",
    "ndcg",
    "ndcg_burges@5",
    "map@100",
    "mrr",
    "precision@5",
    "recall@10",
    "hit_rate@3",
    "hits@5",
    "f1@5",
    "r-precision",
    "ndcg@10-l2",
    "precision@5-l2",
    "rbp.80",
    "dcg@5",
]


def collection(seed: int, ties: bool):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(25):
        n = int(rng.integers(3, 15 if ties else 60))
        docs = [f"d{i}" for i in rng.permutation(n)]
        labels = rng.integers(0, 4, size=n) if q % 6 else np.zeros(n, int)
        qrels[f"q{q}"] = {d: int(v) for d, v in zip(docs[: n // 2 + 1], labels, strict=False)}
        scores = rng.integers(0, 4, n).astype(float) if ties else rng.permutation(n) + 0.5
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
    return qrels, run


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_evaluate_equals_ranx(seed, ties):
    qrels, run = collection(seed, ties)
    theirs_run, ours_run = ranx.Run(run, name="r"), shim.Run(run, name="r")
    theirs = ranx.evaluate(ranx.Qrels(qrels), theirs_run, NAMES)
    ours = shim.evaluate(shim.Qrels(qrels), ours_run, NAMES)
    assert list(ours) == NAMES
    for name in NAMES:
        assert ours[name] == pytest.approx(float(theirs[name]), rel=1e-12, abs=1e-15), name
        for q in qrels:
            assert ours_run.scores[name][q] == pytest.approx(
                float(theirs_run.scores[name][q]), abs=1e-12
            ), (name, q)
    per_query = shim.evaluate(shim.Qrels(qrels), shim.Run(run), "ndcg@5", return_mean=False)
    np.testing.assert_allclose(
        per_query,
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@5", return_mean=False),
        rtol=1e-12,
    )
    if not ties:  # plain dicts: ranx ranks hashed ids, so only untied runs are comparable
        single = shim.evaluate(qrels, run, "mrr")
        assert isinstance(single, float) and single == pytest.approx(
            float(ranx.evaluate(qrels, run, "mrr"))
        )
    else:
        with pytest.warns(UserWarning, match="given as a dict"):
            shim.evaluate(qrels, run, "mrr")


def test_query_sets_files_and_refusals(tmp_path):
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    run = {"q1": {"d1": 1.0, "d2": 0.5}, "q3": {"d2": 1.0}}
    with pytest.raises(InputError, match="do not match"):
        shim.evaluate(qrels, run, "mrr")
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "mrr", make_comparable=True)
    assert shim.evaluate(shim.Qrels(qrels), shim.Run(run), "mrr", make_comparable=True) == float(
        theirs
    )
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d2 1 2.0 r\n")
    q, r = (
        shim.Qrels.from_file(str(tmp_path / "q.txt")),
        shim.Run.from_file(str(tmp_path / "r.txt")),
    )
    assert q.to_dict() == ranx.Qrels.from_file(str(tmp_path / "q.txt")).to_dict()
    assert shim.evaluate(q, r, "mrr") == 1.0
    with pytest.raises(InputError, match="not offered") as info:
        shim.plot()
    assert "\n" not in str(info.value)
    assert set(shim.__all__) == set(ranx.__all__)


def test_long_rankings_with_equal_scores_in_ranx_order_and_the_bpref_warning():
    """ranx's quicksort moves equal scores in lists of 16 or more: reproduced, no warning."""
    rng = np.random.default_rng(3)
    qrels = {f"q{q}": {f"d{i}": int(rng.integers(0, 3)) for i in range(60)} for q in range(6)}
    run = {
        f"q{q}": {f"d{i}": float(rng.integers(0, 4)) for i in rng.permutation(60)} for q in range(6)
    }
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["ndcg@10", "map", "mrr"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = shim.evaluate(shim.Qrels(qrels), shim.Run(run), ["ndcg@10", "map", "mrr"])
    assert ours == {k: float(v) for k, v in theirs.items()}
    with pytest.warns(UserWarning, match="bpref"):
        shim.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, "bpref")
