"""Hash-code retrieval against brute force: every tie rule, cutoffs, radius, the seed's tests."""

import itertools

import numpy as np
import pytest
import torch

from metrics_core.errors import InputError
from metrics_core.hashing import (
    calculate_hamming_dist_matrix,
    calculate_mAP,
    calculate_precision_at_k,
    evaluate_hashing,
    validate_codes,
)


def ap_of_order(rel, order, topk, normalizer):
    r = rel[order]
    R = rel.sum()
    cut = len(r) if topk is None else min(topk, len(r))
    r = r[:cut]
    s = float((np.cumsum(r) / np.arange(1, cut + 1) * r).sum())
    if topk is None:
        norm = R
    else:
        norm = r.sum() if normalizer == "retrieved" else min(R, topk)
    return s / norm if norm > 0 else 0.0


def tie_orders(dist_row):
    groups = [np.flatnonzero(dist_row == d) for d in np.unique(dist_row)]
    for combo in itertools.product(*[itertools.permutations(g) for g in groups]):
        yield np.concatenate([np.array(c, dtype=int) for c in combo])


def brute_force(qc, dc, ql, dl, topk, normalizer, rule):
    D = calculate_hamming_dist_matrix(qc, dc).numpy()
    out = []
    for i in range(len(qc)):
        rel = (dl == ql[i]).astype(float)
        if rule == "stable":
            out.append(ap_of_order(rel, np.argsort(D[i], kind="stable"), topk, normalizer))
            continue
        vals = [ap_of_order(rel, o, topk, normalizer) for o in tie_orders(D[i])]
        out.append(
            {"expected": np.mean(vals), "optimistic": max(vals), "pessimistic": min(vals)}[rule]
        )
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
def test_every_tie_rule_equals_exhaustive_permutations(seed):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        bits, ndb = int(rng.integers(2, 4)), int(rng.integers(2, 7))
        qc, dc = rng.choice([-1, 1], (3, bits)), rng.choice([-1, 1], (ndb, bits))
        ql, dl = rng.integers(0, 2, 3), rng.integers(0, 2, ndb)
        for topk in (None, 1, 2, 4):
            for normalizer in ("retrieved", "min_r_k"):
                rules = ["expected", "stable"]
                if topk is None or normalizer == "min_r_k":
                    rules += ["optimistic", "pessimistic"]
                for rule in rules:
                    got = evaluate_hashing(
                        qc, dc, ql, dl, topk=topk, ties=rule, normalizer=normalizer, ks=()
                    )["ap"]
                    np.testing.assert_allclose(
                        got,
                        brute_force(qc, dc, ql, dl, topk, normalizer, rule),
                        atol=1e-12,
                        err_msg=f"{rule} topk={topk} {normalizer}",
                    )


def test_expected_equals_average_over_many_shuffles():
    rng = np.random.default_rng(11)
    qc, dc = rng.choice([-1, 1], (5, 4)), rng.choice([-1, 1], (60, 4))
    ql, dl = rng.integers(0, 3, 5), rng.integers(0, 3, 60)
    D = calculate_hamming_dist_matrix(qc, dc).numpy()
    exact = evaluate_hashing(qc, dc, ql, dl, ks=())["ap"]
    sims = np.zeros(5)
    trials = 4000
    for _ in range(trials):
        jitter = rng.random(D.shape)  # a random order inside each tie group
        for i in range(5):
            sims[i] += ap_of_order(
                (dl == ql[i]).astype(float), np.lexsort((jitter[i], D[i])), None, "retrieved"
            )
    np.testing.assert_allclose(sims / trials, exact, atol=0.01)


def test_band_contains_expected_and_stable():
    rng = np.random.default_rng(5)
    qc, dc = rng.choice([0, 1], (40, 8)), rng.choice([0, 1], (300, 8))
    ql, dl = rng.integers(0, 4, 40), rng.integers(0, 4, 300)
    for rule in ("expected", "stable"):
        out = evaluate_hashing(qc, dc, ql, dl, ties=rule, ks=())
        lo, hi = out["map_band"]
        assert lo <= out["map"] <= hi and lo < hi


def test_precision_at_k_and_radius_against_brute_force():
    rng = np.random.default_rng(8)
    qc, dc = rng.choice([-1, 1], (20, 6)), rng.choice([-1, 1], (80, 6))
    ql, dl = rng.integers(0, 3, 20), rng.integers(0, 3, 80)
    D = calculate_hamming_dist_matrix(qc, dc).numpy()
    rel = (ql[:, None] == dl[None, :]).astype(float)
    stable = evaluate_hashing(qc, dc, ql, dl, ks=(1, 5, 80), ties="stable")
    expected = evaluate_hashing(qc, dc, ql, dl, ks=(1, 5, 80), ties="expected")
    for k in (1, 5, 80):
        want = np.mean([rel[i][np.argsort(D[i], kind="stable")][:k].sum() / k for i in range(20)])
        assert stable["precision_at_k"][k] == pytest.approx(want)
        # expected P@k: full groups count, the boundary group contributes its share
        exp_k = []
        for i in range(20):
            d_k = np.sort(D[i])[k - 1]
            inside, boundary = D[i] < d_k, D[i] == d_k
            exp_k.append((rel[i][inside].sum() + rel[i][boundary].mean() * (k - inside.sum())) / k)
        assert expected["precision_at_k"][k] == pytest.approx(np.mean(exp_k))
    within = D <= 2
    prec = np.where(within.sum(1) > 0, (rel * within).sum(1) / np.maximum(within.sum(1), 1), 0.0)
    rec = (rel * within).sum(1) / rel.sum(1).clip(min=1)
    assert stable["precision_radius"] == pytest.approx(prec.mean())
    assert stable["recall_radius"] == pytest.approx(rec.mean())


@pytest.mark.parametrize("seed", [3, 11])
def test_queries_with_no_code_within_each_radius_against_brute_force(seed):
    """pr_by_radius["empty"]: per radius, the queries with no database code within it (what
    the rule of precision within a radius, metrics_core.hashing.tables.radius_precision,
    reads); far codes leave the small radii empty for every query."""
    rng = np.random.default_rng(seed)
    qc = rng.choice([0, 1], (30, 12))
    dc = np.concatenate([1 - qc[:10], rng.choice([0, 1], (50, 12))])  # some at distance 12
    ql, dl = rng.integers(0, 3, 30), rng.integers(0, 3, 60)
    D = calculate_hamming_dist_matrix(qc, dc).numpy()
    out = evaluate_hashing(qc, dc, ql, dl, ks=(1,))
    want = [int((D.min(axis=1) > r).sum()) for r in range(13)]
    assert out["pr_by_radius"]["empty"] == want
    assert out["empty_radius_queries"] == want[2]
    far = evaluate_hashing(np.zeros((4, 8)), np.ones((6, 8)), [0, 1, 0, 1], [0, 1, 0, 1, 0, 1])
    assert far["pr_by_radius"]["empty"] == [4] * 8 + [0]


def test_multi_label_relevance_is_any_shared_label():
    qc = [[1, 1], [1, -1]]
    dc = [[1, 1], [-1, -1], [1, -1]]
    ql = np.array([[1, 0, 1], [0, 1, 0]])
    dl = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 1]])
    out = evaluate_hashing(qc, dc, ql, dl, ks=(1,), ties="stable")
    # query 0: distances 0,2,1 -> order d0(rel), d2(rel), d1(rel): AP 1
    # query 1: distances 1,1,0 -> order d2(rel), d0, d1: AP 1
    assert out["map"] == pytest.approx(1.0)
    assert set(out["per_class_map"]) == {"0", "1", "2"}


def test_zero_relevant_queries_zero_or_excluded():
    qc, dc = [[1, 1], [-1, -1]], [[1, 1], [1, -1]]
    ql, dl = [0, 5], [0, 0]
    assert evaluate_hashing(qc, dc, ql, dl, ks=())["map"] == pytest.approx(0.5)
    assert evaluate_hashing(qc, dc, ql, dl, ks=(), zero_relevant="exclude")["map"] == pytest.approx(
        1.0
    )


def test_codes_validation():
    assert validate_codes([[0, 1]]).tolist() == [[-1.0, 1.0]]
    with pytest.raises(InputError, match="row 1, bit 0"):
        validate_codes([[1, -1], [0, 1]])  # mixes the two encodings: 0 is no ±1 bit
    with pytest.raises(InputError, match="not a code bit"):
        validate_codes([[0.5, 1]])
    with pytest.raises(InputError, match="bits"):
        calculate_hamming_dist_matrix([[1, 1]], [[1, 1, 1]])


# --- seed 004's four acceptance tests --------------------------------------------------
def test_hamming_distance_matrix_correctness():
    q = torch.tensor([[1, 1, -1], [-1, -1, -1]])
    db = torch.tensor([[1, 1, -1], [-1, 1, -1], [1, -1, 1]])
    D = calculate_hamming_dist_matrix(q, db)
    assert isinstance(D, torch.Tensor)
    assert D.tolist() == [[0.0, 1.0, 2.0], [2.0, 1.0, 2.0]]


def test_vectorized_high_performance_requirement():
    g = torch.Generator().manual_seed(0)
    q = torch.randint(0, 2, (64, 32), generator=g) * 2 - 1
    db = torch.randint(0, 2, (500, 32), generator=g) * 2 - 1
    D = calculate_hamming_dist_matrix(q, db)
    assert D.shape == (64, 500)
    # the batch equals row-by-row distances
    rows = torch.stack([calculate_hamming_dist_matrix(q[i : i + 1], db)[0] for i in range(64)])
    assert torch.equal(D, rows)
    assert float(D.min()) >= 0 and float(D.max()) <= 32


def test_map_calculation_manual():
    q = [[1, 1, -1]]
    db = [[1, 1, -1], [-1, -1, 1], [1, 1, 1], [-1, 1, -1]]
    # distances 0, 3, 1, 1; relevant: db 0 and db 1 (class 7)
    ql, dl = [7], [7, 7, 2, 2]
    # order 0 | {2, 3} tied (irrelevant) | 1: AP = (1/1 + 2/4) / 2 = 0.75 whatever the tie order
    assert calculate_mAP(q, db, ql, dl) == pytest.approx(0.75)
    assert isinstance(calculate_mAP(q, db, ql, dl), float)


def test_precision_at_k_correctness():
    q = [[1, 1, -1]]
    db = [[1, 1, -1], [-1, -1, 1], [1, 1, 1], [-1, 1, -1]]
    ql, dl = [7], [7, 2, 7, 2]
    # top 1 = db0 (rel); top 3 = db0 + {db2 (rel), db3} tied at 1, then db1
    assert calculate_precision_at_k(q, db, ql, dl, k=1) == 1.0
    assert calculate_precision_at_k(q, db, ql, dl, k=3) == pytest.approx(2 / 3)
    assert calculate_precision_at_k(q, db, ql, dl, k=2) == pytest.approx(0.75)  # expected over ties
    assert calculate_precision_at_k(q, db, ql, dl, k=2, ties="stable") == 1.0


@pytest.mark.parametrize("bits", [1, 7, 8, 9, 32, 33, 64, 65, 89, 90, 100, 127, 128, 255, 256, 300])
@pytest.mark.parametrize("multilabel", [False, True])
@pytest.mark.parametrize("piece", [None, 7])
def test_distance_histograms_equal_direct_counts(bits, multilabel, piece, monkeypatch):
    """The CPU histogram (bit packing, pair-counted columns, class slices, query chunks
    spread over threads) equals counting the distance matrix directly."""
    from metrics_core.hashing import CPU_CHUNK_QUERIES, distance_histograms, histograms

    if piece is not None:  # bincount in many pieces per row, as on a database of millions
        monkeypatch.setattr(histograms, "BINCOUNT_PIECE", piece)
    rng = np.random.default_rng(bits)
    nq = 3 * CPU_CHUNK_QUERIES + 5  # several chunks per class, a ragged last one
    ndb = 201  # odd: one column left over by the pairing
    qc = rng.choice([-1, 1], (nq, bits))
    dc = rng.choice([-1, 1], (ndb, bits))
    dc[:40] = dc[0]  # many equal codes: heavy ties
    if multilabel:
        ql, dl = rng.integers(0, 2, (nq, 4)), rng.integers(0, 2, (ndb, 4))
        rel = (ql @ dl.T) > 0
    else:
        ql, dl = rng.integers(0, 5, nq), rng.integers(0, 4, ndb)  # class 4: no db item
        rel = ql[:, None] == dl[None, :]
    D = calculate_hamming_dist_matrix(qc, dc).numpy().astype(int)
    want_n = np.stack([np.bincount(row, minlength=bits + 1) for row in D])
    want_r = np.stack(
        [np.bincount(row[m], minlength=bits + 1) for row, m in zip(D, rel, strict=True)]
    )
    n, r = distance_histograms(qc, dc, ql, dl, device="cpu")
    np.testing.assert_array_equal(n, want_n)
    np.testing.assert_array_equal(r, want_r)


def test_code_bits_checks_like_validate_codes():
    from metrics_core.hashing import code_bits

    assert code_bits(np.array([[-1, 1]], dtype=np.int8)).tolist() == [[False, True]]
    assert code_bits(torch.tensor([[True, False]])).tolist() == [[True, False]]
    assert code_bits([1.0, -1.0]).shape == (1, 2)  # one code
    for bad, where in (
        ([[1, -1], [0, 1]], "row 1, bit 0"),
        ([[1, 2]], "row 0, bit 1"),
        ([[1.0, np.nan]], "row 0, bit 1"),
        ([[0, 1], [1, 3]], "row 1, bit 1"),
    ):
        with pytest.raises(InputError, match=where):
            code_bits(np.array(bad))
    with pytest.raises(InputError, match="must be numbers"):
        code_bits(np.array([["a", "b"]]))
    with pytest.raises(InputError, match="2-D"):
        code_bits(np.zeros((2, 2, 2)))


@pytest.mark.parametrize("multilabel", [False, True])
@pytest.mark.parametrize("bits", [16, 32, 64])
def test_every_output_bit_identical_to_histograms_counted_directly(monkeypatch, bits, multilabel):
    """evaluate_hashing's outputs (mAP, band, AP per query, P@k, radius, PR curve, per-class
    mAP), computed from the CPU route's histograms, equal bit for bit those computed from
    histograms counted directly on the distance matrix."""
    from metrics_core.hashing import evaluate as ev

    rng = np.random.default_rng(bits)
    qc, dc = rng.choice([-1, 1], (90, bits)), rng.choice([0, 1], (700, bits))
    dc[:100] = qc[0] > 0  # ties with the first query's code
    if multilabel:
        ql, dl = rng.integers(0, 2, (90, 5)), rng.integers(0, 2, (700, 5))
        rel = (ql @ dl.T) > 0
    else:
        ql, dl = rng.integers(0, 7, 90), rng.integers(0, 6, 700)
        rel = ql[:, None] == dl[None, :]
    D = calculate_hamming_dist_matrix(qc, dc).numpy().astype(int)

    def direct(*args, **kwargs):
        n = np.stack([np.bincount(row, minlength=bits + 1) for row in D])
        r = np.stack(
            [np.bincount(row[m], minlength=bits + 1) for row, m in zip(D, rel, strict=True)]
        )
        assert kwargs.get("stable") is None  # the histograms alone
        return n, r, None

    options = [
        dict(ks=(1, 10, 100)),
        dict(topk=50, ks=(5,)),
        dict(topk=50, normalizer="min_r_k", ks=()),
        dict(ties="optimistic", ks=(3,)),
        dict(ties="pessimistic", zero_relevant="exclude", ks=(3,)),
    ]
    got = [evaluate_hashing(qc, dc, ql, dl, device="cpu", **o) for o in options]
    monkeypatch.setattr(ev, "hamming_counts", direct)
    want = [evaluate_hashing(qc, dc, ql, dl, device="cpu", **o) for o in options]
    for g, w in zip(got, want, strict=True):
        assert g.keys() == w.keys()
        for key in g:
            if key == "ap":
                np.testing.assert_array_equal(g[key], w[key])
            else:
                assert repr(g[key]) == repr(w[key]), (
                    key
                )  # repr: NaN equal to NaN, floats to the bit
