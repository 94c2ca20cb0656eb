"""The CPU histogram route (two query rows counted by one bincount, XOR words in blocks,
bincount in pieces) against plain per-query references: np.bincount of each distance row,
and AP / P@k from an explicit argsort of each query under each tie rule."""

import numpy as np
import pytest

from metrics_core.hashing import distance_histograms, evaluate_hashing, histograms
from metrics_core.hashing.histograms import row_histograms


def test_row_histograms_equal_bincount_per_row():
    rng = np.random.default_rng(5)
    for rows in (1, 2, 3, 7, 8):
        for width in (2, 9, 33, 65, 91, 200):  # paired up to 90, one row at a time above
            v = rng.integers(0, width, (rows, 301)).astype(np.uint8 if width <= 256 else np.uint16)
            lo, hi = sorted(rng.integers(0, 302, 2))
            n, r = row_histograms(v, width, int(lo), int(hi))
            assert n.tolist() == [np.bincount(row, minlength=width).tolist() for row in v]
            assert r.tolist() == [np.bincount(row[lo:hi], minlength=width).tolist() for row in v]


def reference(qc, dc, ql, dl, ties, topk, ks):
    """AP and P@k per query from one argsort per query, the tie rule written as a sort key
    (stable: index; optimistic: relevant first; pessimistic: relevant last); ``expected``
    as the mean precision over the positions of each tie group, written as a loop."""
    dist = ((qc[:, None, :] > 0) != (dc[None, :, :] > 0)).sum(-1)
    rel = ql[:, None] == dl[None, :] if ql.ndim == 1 else (ql @ dl.T) > 0
    aps, pk = [], {k: [] for k in ks}
    for i in range(len(qc)):
        d, g = dist[i], rel[i]
        R = int(g.sum())
        if ties == "expected":
            s, taken, above, above_rel, inside = 0.0, 0, 0, 0, {k: 0.0 for k in ks}
            for value in np.unique(d):
                n, m = int((d == value).sum()), int(g[d == value].sum())
                cut = n if topk is None else max(0, min(n, topk - above))
                for p in range(1, cut + 1):
                    others = (p - 1) * (m - 1) / (n - 1) if n > 1 else 0.0
                    s += (m / n) * (above_rel + 1 + others) / (above + p)
                taken += (m / n) * cut
                for k in ks:
                    inside[k] += m * max(0, min(n, k - above)) / n
                above, above_rel = above + n, above_rel + m
            aps.append(s / R if R else 0.0)
            for k in ks:
                pk[k].append(inside[k] / k)
            continue
        order = {
            "stable": np.argsort(d, kind="stable"),
            "optimistic": np.lexsort((~g, d)),
            "pessimistic": np.lexsort((g, d)),
        }[ties]
        ranked = g[order]
        cut = ranked if topk is None else ranked[:topk]
        hits = np.cumsum(cut)
        s = float((hits / np.arange(1, len(cut) + 1))[cut].sum())
        aps.append(s / R if R else 0.0)
        for k in ks:
            pk[k].append(ranked[:k].sum() / k)
    return np.array(aps), {k: float(np.mean(v)) for k, v in pk.items()}


@pytest.mark.parametrize("bits", [3, 6, 16, 33, 64, 90])
@pytest.mark.parametrize("multilabel", [False, True])
def test_evaluation_equals_per_query_argsort(bits, multilabel, monkeypatch):
    monkeypatch.setattr(histograms, "BINCOUNT_PIECE", 50)  # several pieces per row
    monkeypatch.setattr(histograms, "XOR_BLOCK_BYTES", 3 * 257 * 8)  # several XOR blocks per chunk
    rng = np.random.default_rng(bits)
    nq, ndb = 2 * histograms.CPU_CHUNK_QUERIES + 3, 257  # odd rows per class chunk
    qc, dc = rng.choice([-1, 1], (nq, bits)), rng.choice([-1, 1], (ndb, bits))
    dc[:60] = dc[0]  # heavy ties
    qc[:4] = dc[0]
    if multilabel:
        ql, dl = rng.integers(0, 2, (nq, 3)), rng.integers(0, 2, (ndb, 3))
        ql[0] = 0  # no relevant item
    else:
        ql, dl = rng.integers(0, 4, nq), rng.integers(0, 3, ndb)  # class 3: no item
        ql[0] = 3
    ks = (1, 5, 100, 1000)  # 1000 > database
    for ties in ("expected", "optimistic", "pessimistic", "stable"):
        for topk in (None, 10, 1000):
            want_ap, want_pk = reference(qc, dc, ql, dl, ties, topk, ks)
            normalizer = "min_r_k" if topk else "retrieved"
            got = evaluate_hashing(
                qc, dc, ql, dl, ties=ties, topk=topk, ks=ks, normalizer=normalizer, device="cpu"
            )
            if topk is not None:  # AP@k divides by min(R, k)
                R = np.array(
                    [
                        (ql[i] == dl).sum() if ql.ndim == 1 else ((ql[i] @ dl.T) > 0).sum()
                        for i in range(nq)
                    ]
                )
                full = want_ap * R
                want_ap = np.divide(full, np.minimum(R, topk), out=np.zeros(nq), where=R > 0)
            np.testing.assert_allclose(got["ap"], want_ap, rtol=1e-12, atol=1e-12)
            assert got["ap"][0] == 0.0 and got["zero_relevant_queries"] >= 1
            for k in ks:
                assert got["precision_at_k"][k] == pytest.approx(want_pk[k], abs=1e-12)


def test_histograms_do_not_depend_on_chunks_or_threads(monkeypatch):
    rng = np.random.default_rng(9)
    qc, dc = rng.choice([-1, 1], (77, 64)), rng.choice([-1, 1], (1001, 64))
    ql, dl = rng.integers(0, 5, 77), rng.integers(0, 5, 1001)
    want = distance_histograms(qc, dc, ql, dl, device="cpu")
    for chunk, workers, block in ((1, 1, 8), (3, 2, 8 * 1001), (16, 1, 1 << 30)):
        monkeypatch.setattr(histograms, "CPU_CHUNK_QUERIES", chunk)
        monkeypatch.setattr(histograms, "_worker_count", lambda w=workers: w)
        monkeypatch.setattr(histograms, "XOR_BLOCK_BYTES", block)
        got = distance_histograms(qc, dc, ql, dl, device="cpu")
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert (want[0].sum(axis=1) == 1001).all()
