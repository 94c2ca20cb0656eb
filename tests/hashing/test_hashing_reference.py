"""metrics_core.hashing.evaluate_hashing against independent brute-force references:
every tie rule x cut-off x AP@K normalizer, on tiny codes (all within-tie orders
enumerated) and on small codes with many ties (explicit orders, the legacy loop)."""

import itertools

import numpy as np
import pytest

from metrics_core.hashing import evaluate_hashing


def ap_of_ranking(rel_ranked, topk, normalizer, total_rel):
    hits, s = 0, 0.0
    cut = rel_ranked if topk is None else rel_ranked[:topk]
    for i, r in enumerate(cut, start=1):
        if r:
            hits += 1
            s += hits / i
    if topk is None:
        denom = total_rel
    elif normalizer == "retrieved":
        denom = hits
    else:
        denom = min(total_rel, topk)
    return s / denom if denom else 0.0


def brute(q, d, ql, dl):
    dist = ((np.asarray(q)[:, None, :] > 0) != (np.asarray(d)[None, :, :] > 0)).sum(-1)
    ql, dl = np.asarray(ql), np.asarray(dl)
    rel = ql[:, None] == dl[None, :] if ql.ndim == 1 else (ql @ dl.T) > 0
    return dist, rel


def case(seed, n_q, n_db, bits, n_classes, multilabel=False):
    rng = np.random.default_rng(seed)
    q, d = rng.choice([-1, 1], (n_q, bits)), rng.choice([-1, 1], (n_db, bits))
    if multilabel:
        return (
            q,
            d,
            (rng.random((n_q, n_classes)) < 0.3).astype(int),
            (rng.random((n_db, n_classes)) < 0.3).astype(int),
        )
    return q, d, rng.integers(0, n_classes, n_q), rng.integers(0, n_classes, n_db)


CONFIGS = [
    (None, "retrieved"),
    (2, "retrieved"),
    (3, "retrieved"),
    (4, "min_r_k"),
    (9, "retrieved"),
]


@pytest.mark.parametrize("seed", range(3))
def test_expected_equals_mean_over_all_within_tie_orders(seed):
    q, d, ql, dl = case(seed, 3, 6, 3, 2)
    dist, rel = brute(q, d, ql, dl)
    orders = []
    for i in range(len(q)):
        per = []
        for perm in itertools.permutations(range(d.shape[0])):
            perm = np.array(perm)
            per.append(rel[i][perm[np.argsort(dist[i][perm], kind="stable")]])
        orders.append(per)
    for topk, norm in CONFIGS:
        out = evaluate_hashing(q, d, ql, dl, topk=topk, normalizer=norm, ks=(1, 3, 5, 8))
        want = [
            np.mean([ap_of_ranking(r, topk, norm, rel[i].sum()) for r in orders[i]])
            for i in range(len(q))
        ]
        np.testing.assert_allclose(out["ap"], want, atol=1e-12)
        for k in (1, 3, 5, 8):
            want_p = np.mean([np.mean([r[:k].sum() / k for r in orders[i]]) for i in range(len(q))])
            assert out["precision_at_k"][k] == pytest.approx(want_p, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("multilabel", [False, True])
def test_bounds_and_stable_equal_explicit_orders(seed, multilabel):
    q, d, ql, dl = case(100 + seed, 10, 80, 6, 4, multilabel)
    dist, rel = brute(q, d, ql, dl)
    orders = {
        "optimistic": lambda i: np.lexsort((~rel[i], dist[i])),
        "pessimistic": lambda i: np.lexsort((rel[i], dist[i])),
        "stable": lambda i: np.argsort(dist[i], kind="stable"),
    }
    for topk, norm in [(None, "retrieved"), (15, "retrieved"), (15, "min_r_k"), (500, "retrieved")]:
        for ties, order in orders.items():
            out = evaluate_hashing(
                q,
                d,
                ql,
                dl,
                topk=topk,
                normalizer=norm,
                ties=ties,
                ks=(1, 5, 15, 100),
                memory_budget=3000,
            )  # many small chunks
            want = [
                ap_of_ranking(rel[i][order(i)], topk, norm, rel[i].sum()) for i in range(len(q))
            ]
            np.testing.assert_allclose(out["ap"], want, atol=1e-12)
            for k in (1, 5, 15, 100):
                want_p = np.mean([rel[i][order(i)][:k].sum() / k for i in range(len(q))])
                assert out["precision_at_k"][k] == pytest.approx(want_p, abs=1e-12)


def test_expected_at_k_matches_shuffles():
    q, d, ql, dl = case(7, 3, 40, 4, 3)
    dist, rel = brute(q, d, ql, dl)
    rng = np.random.default_rng(0)
    out = evaluate_hashing(q, d, ql, dl, topk=10, ks=())
    n = 2000
    for i in range(len(q)):
        samples = []
        for _ in range(n):
            perm = rng.permutation(d.shape[0])
            samples.append(
                ap_of_ranking(
                    rel[i][perm[np.argsort(dist[i][perm], kind="stable")]],
                    10,
                    "retrieved",
                    rel[i].sum(),
                )
            )
        assert abs(out["ap"][i] - np.mean(samples)) <= 4 * np.std(samples) / np.sqrt(n) + 1e-12
