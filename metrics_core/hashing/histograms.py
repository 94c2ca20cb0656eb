"""Per-query histograms of Hamming distances (all items, relevant items): the only
pass over the (query, item) pairs. CPU: XOR + popcount on bit-packed codes, chunks of
queries spread over threads; CUDA: one matrix product per chunk and one bincount.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from metrics_core.errors import InputError
from metrics_core.hashing._torch import torch
from metrics_core.hashing.validate import (
    DEFAULT_MEMORY_BUDGET,
    _labels,
    _relevance,
    resolve_device,
    validate_codes,
)

#: Queries per CPU chunk: small enough that a chunk's passes stay in cache (measured:
#: 16 rows of 54,000 items beat both 4 and 64 rows).
_CPU_CHUNK_QUERIES = 16
#: Largest joint histogram per row (bins) for which columns are counted in pairs.
_PAIR_BINS_MAX = 8192  # (<= 65536: the joint key is built in uint16)


def _pack_bits(pm1: torch.Tensor) -> np.ndarray:
    """±1 codes -> (items, words) uint64, bit set where the code is +1, zero padded."""
    bits01 = pm1.cpu().numpy() > 0
    n, k = bits01.shape
    words = -(-k // 64)
    padded = np.zeros((n, words * 64), dtype=bool)
    padded[:, :k] = bits01
    return np.packbits(padded, axis=1).view(np.uint64)


def _packed_distances(qp: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """Hamming distances by XOR + popcount on packed words (exact small integers).

    uint8 while the codes have fewer than 256 bits (one byte per pair keeps the passes
    that follow memory-light), uint16 beyond.
    """
    dtype = np.uint8 if qp.shape[1] * 64 < 256 else np.uint16
    out = np.bitwise_count(qp[:, None, 0] ^ dp[None, :, 0]).astype(dtype, copy=False)
    for w in range(1, qp.shape[1]):
        out += np.bitwise_count(qp[:, None, w] ^ dp[None, :, w])
    return out


def _row_histograms(dist: np.ndarray, width: int) -> np.ndarray:
    """Per row of small integer distances, the count of each value 0..width-1.

    One bincount over keys ``value + width * row``. When the squared width is small the
    columns are counted in pairs instead: key ``width * d[:, j] + d[:, j + h]`` counts the
    joint values of two columns at once (half the keys, the costly part of a bincount),
    and the marginals of that 2-D histogram give the counts.
    """
    rows, cols = dist.shape
    if rows == 0 or cols == 0:
        return np.zeros((rows, width), dtype=np.int64)
    half = cols // 2
    if width * width <= _PAIR_BINS_MAX and half > 0:
        # the joint value is built in 2 bytes (width**2 <= _PAIR_BINS_MAX), then widened
        key = np.multiply(dist[:, :half], width, dtype=np.uint16, casting="unsafe")
        np.add(key, dist[:, half:2 * half], out=key, casting="unsafe")
        key = key.astype(np.intp)
        key += (np.arange(rows, dtype=np.intp) * (width * width))[:, None]
        joint = np.bincount(key.ravel(), minlength=rows * width * width).reshape(rows, width, width)
        out = joint.sum(axis=2) + joint.sum(axis=1)
        if cols % 2:
            out[np.arange(rows), dist[:, -1]] += 1
        return out
    key = dist.astype(np.intp)
    key += (np.arange(rows, dtype=np.intp) * width)[:, None]
    return np.bincount(key.ravel(), minlength=rows * width).reshape(rows, width)


def _worker_count() -> int:
    """Threads for the CPU histogram: the cores this process may use (numpy's XOR,
    popcount and bincount release the GIL, so query chunks run in parallel)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, torch.get_num_threads()))


def _cpu_histograms(q: torch.Tensor, d: torch.Tensor, ql: torch.Tensor, dl: torch.Tensor,
                    width: int, memory_budget: int):
    """CPU route of :func:`distance_histograms`: bit-packed codes, small query chunks in
    a thread pool. With class labels the database is sorted by class, so the relevant
    items of a query are one contiguous slice of its distance row; queries are taken
    class by class."""
    nq, ndb = q.shape[0], d.shape[0]
    qp, dp = _pack_bits(q), _pack_bits(d)
    n_hist = np.zeros((nq, width), dtype=np.int64)
    r_hist = np.zeros((nq, width), dtype=np.int64)
    single = ql.ndim == 1 and dl.ndim == 1
    # Chunks of a few queries keep each pass in cache; the budget still caps them.
    per_query = max(ndb * 10, 1)
    chunk = max(1, min(_CPU_CHUNK_QUERIES, memory_budget // per_query))
    tasks = []
    if single:
        qln, dln = ql.numpy(), dl.numpy()
        db_order = np.argsort(dln, kind="stable")
        dp = dp[db_order]
        dls = dln[db_order]
        q_order = np.argsort(qln, kind="stable")
        qls = qln[q_order]
        bounds = np.flatnonzero(np.diff(qls)) + 1
        for group in np.split(q_order, bounds):
            if len(group) == 0:
                continue
            c = qln[group[0]]
            lo_c, hi_c = np.searchsorted(dls, c, "left"), np.searchsorted(dls, c, "right")
            for lo in range(0, len(group), chunk):
                tasks.append((group[lo:lo + chunk], lo_c, hi_c))

        def work(task):
            rows, lo_c, hi_c = task
            # the class's slice first: relevant columns [0, m), the others after, so each
            # item is counted once (r from the first part, n from both)
            dist = _packed_distances(qp[rows], np.concatenate((dp[lo_c:], dp[:lo_c])))
            m = hi_c - lo_c
            r_hist[rows] = _row_histograms(dist[:, :m], width)
            n_hist[rows] = r_hist[rows] + _row_histograms(dist[:, m:], width)
    else:
        for lo in range(0, nq, chunk):
            tasks.append(np.arange(lo, min(nq, lo + chunk)))

        def work(rows):
            dist = _packed_distances(qp[rows], dp).astype(np.intp)
            rel = _relevance(ql[rows], dl).numpy()
            both = _row_histograms(dist * 2 + rel, 2 * width).reshape(len(rows), width, 2)
            n_hist[rows] = both.sum(axis=2)
            r_hist[rows] = both[:, :, 1]

    workers = min(_worker_count(), len(tasks))
    if workers <= 1:
        for task in tasks:
            work(task)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(work, tasks))  # list(): re-raises a worker's exception here
    return n_hist, r_hist


def distance_histograms(query_codes, db_codes, query_labels, db_labels, *, device=None,
                        memory_budget: int = DEFAULT_MEMORY_BUDGET):
    """Per query and distance d = 0..K: items at d (``n``) and relevant items at d (``r``).

    Returns two int64 numpy arrays of shape (queries, K + 1). No sort. On the CPU the
    distances of a few queries at a time come from XOR + popcount on bit-packed codes (64
    bits per word: 1/32 of the memory a float product touches; measured faster, see
    BENCHMARKS.md), counted per row by bincount (:func:`_row_histograms`), chunks spread
    over the cores. On CUDA the distances come from one matrix product
    ``(K - Q D^T) / 2`` and each becomes a bin key ``2 d + relevant`` (plus a row offset)
    counted by one bincount. With class labels the relevance matrix is never built:
    relevant items are the query's class's slice of the class-sorted database.
    """
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes")
    if q.shape[1] != d.shape[1]:
        raise InputError(f"query codes have {q.shape[1]} bits, database codes {d.shape[1]}")
    ql = _labels(query_labels, q.shape[0], "query labels")
    dl = _labels(db_labels, d.shape[0], "database labels")
    dev = resolve_device(device)
    bits = q.shape[1]
    nq, ndb = q.shape[0], d.shape[0]
    width = bits + 1
    single = ql.ndim == 1 and dl.ndim == 1
    if not single:
        _relevance(ql[:1], dl[:1])  # checks the label kinds match
    if dev.type == "cpu":
        return _cpu_histograms(q, d, ql, dl, width, memory_budget)
    n_hist = np.zeros((nq, width), dtype=np.int64)
    r_hist = np.zeros((nq, width), dtype=np.int64)
    qg, dTg = q.to(dev), d.to(dev).T.contiguous()

    def distances(rows: np.ndarray, cols: np.ndarray | None):
        dT = dTg if cols is None else dTg[:, torch.as_tensor(cols, device=dev)]
        dist = ((bits - qg[torch.as_tensor(rows, device=dev)] @ dT) * 0.5).round().to(torch.int32)
        return dist.cpu().numpy()

    def counts(dist: np.ndarray, rel: np.ndarray | None) -> np.ndarray:
        rows = dist.shape[0]
        key = dist * 2
        if rel is not None:
            key += rel
        key += (np.arange(rows, dtype=np.int32) * (2 * width))[:, None]
        return np.bincount(key.ravel(), minlength=rows * 2 * width).reshape(rows, width, 2)

    chunk = max(1, min(nq, memory_budget // max(ndb * 12, 1)))
    for lo in range(0, nq, chunk):
        rows = np.arange(lo, min(nq, lo + chunk))
        rel = None if single else _relevance(ql[rows], dl).numpy().astype(np.int32)
        h = counts(distances(rows, None), rel)
        n_hist[rows] = h.sum(axis=2)
        if not single:
            r_hist[rows] = h[:, :, 1]
    if single:
        qln, dln = ql.numpy(), dl.numpy()
        for c in np.unique(qln):
            qi = np.flatnonzero(qln == c)
            dj = np.flatnonzero(dln == c)
            if len(dj) == 0:
                continue
            step = max(1, min(len(qi), memory_budget // max(len(dj) * 12, 1)))
            for lo in range(0, len(qi), step):
                rows = qi[lo:lo + step]
                r_hist[rows] = counts(distances(rows, dj), None).sum(axis=2)
    return n_hist, r_hist
