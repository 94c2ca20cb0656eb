"""The measures from distance histograms (one function for every device) against the
plain expressions they were first written as: the shared computation gives every term
bit for bit (zeros' signs included), and every sum is the order-free fixed-point sum of
those terms, on random histograms with ties, empty distances, single items, queries
without relevant items and cuts inside groups."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from metrics_core.hashing import evaluate
from metrics_core.hashing.ties import (
    fixed_sum,
    harmonic_numbers,
    harmonic_on,
    rule_sums,
    rule_terms,
    tie_tables,
)


def plain_ap_sums(n, r, ties, topk, H):
    """The closed forms as plain expressions with masked divisions (the test's oracle),
    each group's terms summed per query by the library's order-free sum."""
    s, count = plain_ap_terms(n, r, ties, topk, H)
    return to_np(fixed_sum(torch.from_numpy(s), 1)), to_np(fixed_sum(torch.from_numpy(count), 1))


def to_np(x):
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def plain_ap_terms(n, r, ties, topk, H):
    """The closed forms as plain expressions with masked divisions, per distance group."""
    A = np.cumsum(n, axis=1) - n
    B = np.cumsum(r, axis=1) - r
    HA = H[A]
    limit = n if topk is None else np.clip(topk - A, 0, n)
    if ties == "expected":
        m, nn = r.astype(np.float64), n.astype(np.float64)
        dH = H[A + limit] - HA
        frac = np.divide(m, nn, out=np.zeros_like(m), where=nn > 0)
        c2 = frac * np.divide(m - 1, nn - 1, out=np.zeros_like(m), where=nn > 1)
        s = frac * (B + 1) * dH + c2 * (limit - (A + 1) * dH)
        count = frac * limit
    elif ties == "optimistic":
        k = np.minimum(r, limit)
        s = k + (B - A) * (H[A + k] - HA)
        count = k.astype(np.float64)
    else:
        start = A + n - r
        k = np.clip(limit - (n - r), 0, r)
        s = k + (B - start) * (H[start + k] - H[start])
        count = k.astype(np.float64)
    return np.asarray(s, dtype=np.float64), np.asarray(count, dtype=np.float64)


def histograms(seed):
    """Random (n, r) with every row summing to one database size."""
    rng = np.random.default_rng(seed)
    nq, width = int(rng.integers(1, 400)), int(rng.integers(2, 70))
    n = rng.integers(0, 50, (nq, width)) * (rng.random((nq, width)) < 0.3)
    n[rng.random((nq, width)) < 0.15] = 1  # single items
    n[:, -1] += n.sum(axis=1).max() + 1 - n.sum(axis=1)
    share = rng.choice([0.0, 0.05, 0.5, 1.0], (nq, 1)) * rng.random((nq, width))
    r = rng.binomial(n, share)
    full = rng.random((nq, width)) < 0.1
    r[full] = n[full]  # every item relevant
    return n, r


def bits_of(x):
    return np.asarray(x, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("topk", [None, 1, 7, 40, 10**6])
def test_rule_sums_equal_the_plain_expressions_bit_for_bit(seed, topk):
    n, r = histograms(seed)
    H = harmonic_numbers(int(n.sum(axis=1).max()) + 1)
    Ht = harmonic_on("cpu", len(H) - 1)
    rules = ("expected", "optimistic", "pessimistic")
    shared = rule_sums(n, r, rules, topk, tie_tables(n, r, topk, Ht))
    shared_terms = rule_terms(n, r, rules, topk, tie_tables(n, r, topk, Ht))
    assert 0 < shared["expected"][0].max()
    for rule in rules:
        want_s, want_c = plain_ap_sums(n, r, rule, topk, H)
        alone = rule_sums(n, r, (rule,), topk)[rule]
        for got_s, got_c in (shared[rule], alone):
            np.testing.assert_array_equal(bits_of(to_np(got_s)), bits_of(want_s))
            np.testing.assert_array_equal(bits_of(to_np(got_c)), bits_of(want_c))
        # the terms themselves are the plain expressions', bit for bit
        term_s, term_c = plain_ap_terms(n, r, rule, topk, H)
        np.testing.assert_array_equal(bits_of(to_np(shared_terms[rule][0])), bits_of(term_s))
        np.testing.assert_array_equal(bits_of(to_np(shared_terms[rule][1])), bits_of(term_c))
        # and the order-free sums are the exact sums of those terms, correctly rounded or
        # within an ulp of the largest term per group
        exact = np.array([math.fsum(row) for row in term_s])
        scale = np.abs(term_s).max(axis=1, initial=0.0) * term_s.shape[1] * 2.0**-53
        assert (np.abs(want_s - exact) <= scale).all()


@pytest.mark.parametrize("seed", range(4))
def test_precision_and_recall_by_radius_equal_the_masked_divisions(seed):
    n, r = histograms(seed)
    R = r.sum(axis=1).astype(np.float64)
    cum_n, cum_r = np.cumsum(n, axis=1), np.cumsum(r, axis=1)
    want_p = np.divide(cum_r, cum_n, out=np.zeros(n.shape), where=cum_n > 0)
    want_r = np.divide(cum_r, R[:, None], out=np.zeros(n.shape), where=R[:, None] > 0)
    got_p, got_r, got_R = evaluate._by_radius(torch.from_numpy(r), tie_tables(n, r, None))
    np.testing.assert_array_equal(bits_of(got_p.numpy()), bits_of(want_p))
    np.testing.assert_array_equal(bits_of(got_r.numpy()), bits_of(want_r))
    np.testing.assert_array_equal(got_R.numpy(), R)


def test_each_query_from_its_own_row_alone(monkeypatch):
    """A query's numbers come from its own histogram row alone: evaluating the queries in
    pieces gives the whole evaluation's per-query values bit for bit (the sums over queries
    are exact integer sums, so the curve's means are the same too)."""
    n, r = histograms(3)
    ql = np.arange(len(n)) % 7
    monkeypatch.setattr(evaluate, "hamming_counts", lambda *a, **k: (n, r, None))
    whole = evaluate.evaluate_hashing(None, None, ql, None, ks=(1, 5), topk=None)
    assert 0 < whole["map"] < 1
    cut = len(n) // 3
    parts = []
    for rows in (slice(0, cut), slice(cut, None)):
        monkeypatch.setattr(
            evaluate, "hamming_counts", lambda *a, _s=rows, **k: (n[_s], r[_s], None)
        )
        parts.append(evaluate.evaluate_hashing(None, None, ql[rows], None, ks=(1, 5), topk=None))
    joined = np.concatenate([p["ap"] for p in parts])
    np.testing.assert_array_equal(bits_of(joined), bits_of(whole["ap"]))


def test_row_blocks_and_threads_change_no_value(monkeypatch):
    """Small blocks (many threads) and one block give the same numbers, the precision-recall
    curve's sums over queries included."""
    from metrics_core import threads

    n, r = histograms(3)
    ql = np.arange(len(n)) % 7
    monkeypatch.setattr(evaluate, "hamming_counts", lambda *a, **k: (n, r, None))
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    results = []
    for cells in (1 << 30, 200, 64):
        monkeypatch.setattr(evaluate, "ROW_BLOCK_CELLS", cells)
        results.append(evaluate.evaluate_hashing(None, None, ql, None, ks=(1, 5), topk=None))
    for other in results[1:]:
        np.testing.assert_array_equal(bits_of(other["ap"]), bits_of(results[0]["ap"]))
        assert repr(other) == repr(results[0])
    assert 0 < results[0]["map"] < 1


def test_fixed_sum_is_order_free_and_exact_where_a_float_sum_is():
    rng = np.random.default_rng(11)
    x = rng.random((50, 300)) * rng.choice([1e-9, 1.0, 1e6], (50, 1)) - 1e-3 * rng.random((50, 1))
    got = fixed_sum(torch.from_numpy(x), 1).numpy()
    shuffled = fixed_sum(torch.from_numpy(rng.permuted(x, axis=1)), 1).numpy()
    np.testing.assert_array_equal(bits_of(got), bits_of(shuffled))
    exact = np.array([math.fsum(row) for row in x])
    assert (np.abs(got - exact) <= np.abs(x).max(axis=1) * 300 * 2.0**-53).all()
    dyadic = np.array([[0.5, 0.25, 3.0, 0.125], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(fixed_sum(torch.from_numpy(dyadic), 1).numpy(), [3.875, 0.0])
    cols = fixed_sum(torch.from_numpy(x), 0).numpy()  # along the other axis too
    exact_cols = np.array([math.fsum(col) for col in x.T])
    assert (np.abs(cols - exact_cols) <= np.abs(x).max(axis=0) * 50 * 2.0**-53).all()


@pytest.mark.parametrize("classes", [43, 3])
def test_per_class_map_equals_the_mean_over_each_class_mask(classes):
    """Small classes, and classes of thousands of queries (where a pairwise sum and a
    running sum differ in the last bits)."""
    rng = np.random.default_rng(5)
    ap = rng.random(9000) / 7
    keep = rng.random(9000) < 0.8
    ql = rng.integers(-3, classes - 3, 9000)
    ql[ql == 7] = 8  # a class that only the database might have is simply absent
    got = evaluate._per_class_map(ap, keep, ql)
    want = {
        str(c): float(np.mean(ap[(ql == c) & keep])) if ((ql == c) & keep).any() else math.nan
        for c in np.unique(ql)
    }
    assert list(got) == list(want)
    assert repr(got) == repr(want)
    every = {str(c): float(np.mean(ap[ql == c])) for c in np.unique(ql)}
    assert repr(evaluate._per_class_map(ap, None, ql)) == repr(every)  # None: every query
    keep[ql == ql[0]] = False  # a class whose queries are all left out: NaN
    assert math.isnan(evaluate._per_class_map(ap, keep, ql)[str(ql[0])])
