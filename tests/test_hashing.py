"""Hash-code retrieval measures against brute-force references (with many ties)."""

import itertools

import numpy as np
import pytest
import torch

from metrics_core.errors import InputError
from metrics_core.hashing import (
    calculate_hamming_dist_matrix,
    calculate_mAP,
    calculate_precision_at_k,
    evaluate_hash_codes,
    relevance_matrix,
    validate_codes,
)

# --------------------------------------------------------------------------- references


def ap_of_ranking(rel_ranked, topk=None, normalizer="retrieved", total_rel=None):
    """AP of one explicit ranking, written as the definition reads."""
    rel_ranked = list(rel_ranked)
    total = sum(rel_ranked) if total_rel is None else total_rel
    cut = rel_ranked if topk is None else rel_ranked[:topk]
    hits, s = 0, 0.0
    for i, r in enumerate(cut, start=1):
        if r:
            hits += 1
            s += hits / i
    if topk is None:
        denom = total
    elif normalizer == "retrieved":
        denom = hits
    else:
        denom = min(total, topk)
    return s / denom if denom else 0.0


def brute_distances(q, d):
    qb = (np.asarray(q) > 0).astype(int)
    db = (np.asarray(d) > 0).astype(int)
    return (qb[:, None, :] != db[None, :, :]).sum(-1)


def brute_rel(ql, dl):
    ql, dl = np.asarray(ql), np.asarray(dl)
    if ql.ndim == 1:
        return ql[:, None] == dl[None, :]
    return (ql @ dl.T) > 0


def legacy_loop(q, d, ql, dl, topk=None, normalizer="retrieved"):
    """Per-query argsort loop (DeepHash style) with a stable sort."""
    dist = brute_distances(q, d)
    rel = brute_rel(ql, dl)
    aps = []
    for i in range(len(q)):
        order = np.argsort(dist[i], kind="stable")
        aps.append(ap_of_ranking(rel[i][order], topk, normalizer, total_rel=rel[i].sum()))
    return np.array(aps)


def random_case(rng, n_q, n_db, bits, n_classes, multilabel=False):
    q = rng.choice([-1, 1], size=(n_q, bits))
    d = rng.choice([-1, 1], size=(n_db, bits))
    if multilabel:
        ql = (rng.random((n_q, n_classes)) < 0.3).astype(int)
        dl = (rng.random((n_db, n_classes)) < 0.3).astype(int)
    else:
        ql = rng.integers(0, n_classes, n_q)
        dl = rng.integers(0, n_classes, n_db)
    return q, d, ql, dl


def orderings_exhaustive(dist_row, rel_row):
    """Every within-tie order, equally weighted: all permutations, then a stable distance sort."""
    n = len(dist_row)
    for perm in itertools.permutations(range(n)):
        perm = np.array(perm)
        order = perm[np.argsort(dist_row[perm], kind="stable")]
        yield rel_row[order]


# --------------------------------------------------------------------------- seed acceptance


def test_hamming_distance_matrix_correctness():
    q = torch.tensor([[1, 1, -1], [-1, 1, 1]])
    db = torch.tensor([[1, 1, -1], [-1, -1, 1], [1, -1, -1], [-1, 1, 1]])
    dist = calculate_hamming_dist_matrix(q, db)
    # by hand: q0 vs db = 0, 3, 1, 2 bits differ; q1 vs db = 2, 1, 3, 0
    assert dist.tolist() == [[0, 3, 1, 2], [2, 1, 3, 0]]
    assert isinstance(dist, torch.Tensor)


def test_vectorized_high_performance_requirement(monkeypatch):
    rng = np.random.default_rng(1)
    q = torch.tensor(rng.choice([-1, 1], size=(64, 32)))
    db = torch.tensor(rng.choice([-1, 1], size=(500, 32)))
    calls = []
    real = torch.matmul
    monkeypatch.setattr(torch, "matmul", lambda a, b: calls.append((a.shape, b.shape)) or real(a, b))
    dist = calculate_hamming_dist_matrix(q, db)
    # one batched product for the whole batch, not one per query
    assert calls == [((64, 32), (32, 500))]
    assert dist.shape == (64, 500)
    np.testing.assert_array_equal(dist.numpy(), brute_distances(q.numpy(), db.numpy()))


def test_map_calculation_manual():
    q = torch.tensor([[1, 1, -1, -1]])
    db = torch.tensor([[1, 1, -1, -1],   # d=0, relevant
                       [1, 1, -1, 1],    # d=1, not relevant
                       [1, -1, -1, 1],   # d=2, relevant
                       [-1, -1, 1, 1]])  # d=4, relevant
    # ranks of relevant: 1, 3, 4 -> AP = (1/1 + 2/3 + 3/4) / 3
    expected = (1 + 2 / 3 + 3 / 4) / 3
    got = calculate_mAP(q, db, torch.tensor([7]), torch.tensor([7, 2, 7, 7]))
    assert isinstance(got, float)
    assert got == pytest.approx(expected, abs=1e-12)
    # mAP@2 with the legacy normaliser: only rank 1 relevant in the top 2 -> 1.0
    assert calculate_mAP(q, db, torch.tensor([7]), torch.tensor([7, 2, 7, 7]), topk=2) == pytest.approx(1.0)
    # with min(R, K) = 2: 1/2
    assert calculate_mAP(q, db, torch.tensor([7]), torch.tensor([7, 2, 7, 7]), topk=2,
                         normalizer="min_r_k") == pytest.approx(0.5)


def test_map_manual_with_a_tie():
    # q vs db distances 0, 1, 1: one relevant in a tie pair after a relevant at rank 1.
    q = torch.tensor([[1, 1]])
    db = torch.tensor([[1, 1], [1, -1], [-1, 1]])
    ql, dl = torch.tensor([0]), torch.tensor([0, 0, 1])
    # relevant second: (1 + 2/2)/2 = 1 ; relevant third: (1 + 2/3)/2 = 5/6 ; expected 11/12
    assert calculate_mAP(q, db, ql, dl) == pytest.approx(11 / 12)
    assert calculate_mAP(q, db, ql, dl, ties="optimistic") == pytest.approx(1.0)
    assert calculate_mAP(q, db, ql, dl, ties="pessimistic") == pytest.approx(5 / 6)
    assert calculate_mAP(q, db, ql, dl, ties="stable") == pytest.approx(1.0)  # index 1 first


def test_precision_at_k_correctness():
    q = torch.tensor([[1, 1, -1, -1], [-1, -1, 1, 1]])
    db = torch.tensor([[1, 1, -1, -1], [1, 1, -1, 1], [1, -1, -1, 1], [-1, -1, 1, 1]])
    ql, dl = torch.tensor([7, 2]), torch.tensor([7, 2, 7, 7])
    # q0 distances 0,1,2,4 rel 1,0,1,1: P@1 = 1, P@2 = 1/2, P@3 = 2/3
    # q1 distances 4,3,2,0 rel 0,1,0,0 -> order db3, db2, db1, db0: P@1 = 0, P@2 = 0, P@3 = 1/3
    assert calculate_precision_at_k(q, db, ql, dl, k=1) == pytest.approx(0.5)
    assert calculate_precision_at_k(q, db, ql, dl, k=2) == pytest.approx(0.25)
    assert calculate_precision_at_k(q, db, ql, dl, k=3) == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert isinstance(calculate_precision_at_k(q, db, ql, dl, k=3), float)


# --------------------------------------------------------------------------- validation


def test_zero_one_codes_are_converted():
    assert validate_codes(np.array([[0, 1], [1, 0]])).tolist() == [[-1, 1], [1, -1]]
    a = evaluate_hash_codes([[0, 1, 1]], [[0, 1, 1], [1, 0, 0]], [0], [0, 0])
    b = evaluate_hash_codes([[-1, 1, 1]], [[-1, 1, 1], [1, -1, -1]], [0], [0, 0])
    assert torch.equal(a.n_hist, b.n_hist) and a.n_hist.tolist() == [[1, 0, 0, 1]]


@pytest.mark.parametrize("codes, where, value", [
    ([[1, -1], [1, 0]], "row 1, bit 1", "0"),          # a 0 among ±1 (what sign() would make)
    ([[0, 1], [2, 1]], "row 1, bit 0", "2"),
    ([[1, -1], [0.5, 1]], "row 1, bit 0", "0.5"),
    ([[1, float("nan")]], "row 0, bit 1", "nan"),
])
def test_bad_code_values_name_the_position(codes, where, value):
    with pytest.raises(InputError) as err:
        validate_codes(codes, "query codes")
    assert where in str(err.value) and f"value {value}" in str(err.value)


def test_mismatched_inputs():
    with pytest.raises(InputError, match="bits"):
        evaluate_hash_codes([[1, 1]], [[1, 1, 1]], [0], [0])
    with pytest.raises(InputError, match="rows"):
        evaluate_hash_codes([[1, 1]], [[1, 1]], [0, 1], [0])
    with pytest.raises(InputError, match="ties"):
        evaluate_hash_codes([[1, 1]], [[1, 1]], [0], [0], ties="random")
    with pytest.raises(InputError, match="not 0 or 1"):
        evaluate_hash_codes([[1, 1]], [[1, 1]], [[1, 2]], [[1, 0]])


def test_relevance_single_and_multi():
    assert relevance_matrix([1, 2], [2, 1, 1]).tolist() == [[False, True, True], [True, False, False]]
    assert relevance_matrix([[1, 0, 1]], [[0, 1, 0], [0, 0, 1]]).tolist() == [[False, True]]


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("seed", range(6))
def test_expected_equals_exhaustive_permutations(seed):
    rng = np.random.default_rng(seed)
    q, d, ql, dl = random_case(rng, 3, 6, 3, 2)  # 3 bits, 6 items: ties everywhere
    dist, rel = brute_distances(q, d), brute_rel(ql, dl)
    ev = evaluate_hash_codes(q, d, ql, dl)
    for topk, norm in [(None, "retrieved"), (3, "retrieved"), (4, "min_r_k"), (2, "retrieved")]:
        want = []
        for i in range(len(q)):
            aps = [ap_of_ranking(r, topk, norm, rel[i].sum()) for r in orderings_exhaustive(dist[i], rel[i])]
            want.append(np.mean(aps))
        ev.normalizer = norm
        got = ev.average_precision("expected", topk).numpy()
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    for k in (1, 3, 6, 9):
        want = np.mean([np.mean([r[:k].sum() / k for r in orderings_exhaustive(dist[i], rel[i])])
                        for i in range(len(q))])
        assert ev.precision_at_k(k) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("multilabel", [False, True])
def test_expected_matches_average_over_shuffles(multilabel):
    rng = np.random.default_rng(7)
    q, d, ql, dl = random_case(rng, 4, 40, 4, 3, multilabel)
    dist, rel = brute_distances(q, d), brute_rel(ql, dl)
    ev = evaluate_hash_codes(q, d, ql, dl, topk=10)
    n_shuffles = 3000
    for i in range(len(q)):
        samples_all, samples_k = [], []
        for _ in range(n_shuffles):
            perm = rng.permutation(len(d))
            order = perm[np.argsort(dist[i][perm], kind="stable")]
            samples_all.append(ap_of_ranking(rel[i][order], None, total_rel=rel[i].sum()))
            samples_k.append(ap_of_ranking(rel[i][order], 10, "retrieved"))
        for samples, got in ((samples_all, ev.average_precision("expected", None)[i]),
                             (samples_k, ev.average_precision("expected", 10)[i])):
            se = np.std(samples) / np.sqrt(n_shuffles)
            assert abs(float(got) - np.mean(samples)) <= 4 * se + 1e-12


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("multilabel", [False, True])
def test_bounds_and_stable_against_explicit_orders(seed, multilabel):
    rng = np.random.default_rng(100 + seed)
    q, d, ql, dl = random_case(rng, 12, 90, 6, 4, multilabel)
    dist, rel = brute_distances(q, d), brute_rel(ql, dl)
    for topk, norm in [(None, "retrieved"), (15, "retrieved"), (15, "min_r_k"), (200, "retrieved")]:
        for ties, key in [("optimistic", lambda i: np.lexsort((~rel[i], dist[i]))),
                          ("pessimistic", lambda i: np.lexsort((rel[i], dist[i]))),
                          ("stable", lambda i: np.argsort(dist[i], kind="stable"))]:
            ev = evaluate_hash_codes(q, d, ql, dl, topk=topk, normalizer=norm, ties=ties,
                                     ks=(1, 5, 15, 100), memory_budget=4000)  # many chunks
            want = [ap_of_ranking(rel[i][key(i)], topk, norm, rel[i].sum()) for i in range(len(q))]
            np.testing.assert_allclose(ev.average_precision().numpy(), want, atol=1e-12)
            for k in (1, 5, 15, 100):
                want_p = np.mean([rel[i][key(i)][:k].sum() / k for i in range(len(q))])
                assert ev.precision_at_k(k) == pytest.approx(want_p, abs=1e-12)
        if topk is None:
            np.testing.assert_allclose(
                evaluate_hash_codes(q, d, ql, dl, ties="stable").average_precision().numpy(),
                legacy_loop(q, d, ql, dl), atol=1e-12)
    ev = evaluate_hash_codes(q, d, ql, dl)
    lo, hi = ev.map_band()
    assert lo <= ev.mean_average_precision() <= hi


def test_radius_measures_pr_curve_and_per_class():
    rng = np.random.default_rng(3)
    q, d, ql, dl = random_case(rng, 20, 150, 8, 5)
    ql[0] = 99  # a query with no relevant item
    dist, rel = brute_distances(q, d), brute_rel(ql, dl)
    ev = evaluate_hash_codes(q, d, ql, dl)
    curve = ev.pr_curve_by_radius()
    for r in range(9):
        inside = dist <= r
        n_in = inside.sum(1)
        rel_in = (inside & rel).sum(1)
        prec = np.where(n_in > 0, rel_in / np.maximum(n_in, 1), 0.0).mean()
        rec = np.where(rel.sum(1) > 0, rel_in / np.maximum(rel.sum(1), 1), 0.0).mean()
        assert curve.loc[r, "precision"] == pytest.approx(prec, abs=1e-12)
        assert curve.loc[r, "recall"] == pytest.approx(rec, abs=1e-12)
    p2, r2 = ev.radius_precision_recall(2)
    assert (p2, r2) == (curve.loc[2, "precision"], curve.loc[2, "recall"])
    ap = ev.average_precision().numpy()
    table = ev.per_class_map().set_index("class")
    for c in np.unique(ql):
        assert table.loc[c, "mAP"] == pytest.approx(ap[ql == c].mean(), abs=1e-12)
        assert table.loc[c, "n_queries"] == (ql == c).sum()
    # zero-relevant: counted as 0 by default, left out with exclude
    assert ap[0] == 0.0
    assert ev.mean_average_precision() == pytest.approx(ap.mean())
    ex = evaluate_hash_codes(q, d, ql, dl, zero_relevant="exclude")
    assert ex.mean_average_precision() == pytest.approx(ap[1:].mean())


def test_multilabel_per_class():
    rng = np.random.default_rng(5)
    q, d, ql, dl = random_case(rng, 15, 60, 6, 4, multilabel=True)
    ev = evaluate_hash_codes(q, d, ql, dl)
    ap = ev.average_precision().numpy()
    table = ev.per_class_map()
    for c in range(4):
        member = ql[:, c] == 1
        if member.any():
            assert table.loc[c, "mAP"] == pytest.approx(ap[member].mean(), abs=1e-12)


def test_64_plus_bits_and_budget_chunks_agree():
    rng = np.random.default_rng(9)
    q, d, ql, dl = random_case(rng, 9, 50, 70, 3)  # two 64-bit words
    a = evaluate_hash_codes(q, d, ql, dl, memory_budget=1)
    b = evaluate_hash_codes(q, d, ql, dl)
    assert torch.equal(a.n_hist, b.n_hist) and torch.equal(a.m_hist, b.m_hist)
    dist = brute_distances(q, d)
    want = np.stack([np.bincount(row, minlength=71) for row in dist])
    np.testing.assert_array_equal(a.n_hist.numpy(), want)
