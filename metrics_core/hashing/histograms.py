"""Per-query histograms of Hamming distances (all items, relevant items): the only
pass over the (query, item) pairs. CPU: XOR + popcount on bit-packed codes, chunks of
queries spread over threads; CUDA: one matrix product per chunk and one bincount.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.hashing._torch import torch
from metrics_core.hashing.validate import (
    DEFAULT_MEMORY_BUDGET,
    as_labels,
    code_bits,
    relevance_matrix,
    resolve_device,
)

#: Queries per CPU chunk: small enough that a chunk's passes stay in cache (16 rows of
#: 50,000 items beat both 8 and 32 rows).
CPU_CHUNK_QUERIES = 16
#: Largest joint histogram per row (bins) for which columns are counted in pairs (the
#: joint key is built in int16, so it must stay below 32,768).
PAIR_BINS_MAX = 8192
#: Keys per torch.bincount call: below torch's grain size (32,768), so the call stays on
#: the calling thread.
BINCOUNT_PIECE = 32768


def _word_dtype(bits: int) -> np.dtype:
    """The packing word: one uint8 up to 8 bits (numpy's byte popcount is vectorised),
    one uint32 up to 32 bits (half the memory of uint64, the same popcount speed), else
    uint64 words."""
    return np.dtype(np.uint8 if bits <= 8 else np.uint32 if bits <= 32 else np.uint64)


def _pack_bits(bits01: np.ndarray) -> np.ndarray:
    """Boolean (items, bits) -> (items, words) of :func:`_word_dtype`, zero padded
    (padding bits are equal in every row, so they add no distance and share no label)."""
    n, k = bits01.shape
    word = _word_dtype(k)
    per = word.itemsize * 8
    words = -(-k // per)
    padded = np.zeros((n, words * per), dtype=bool)
    padded[:, :k] = bits01
    return np.ascontiguousarray(np.packbits(padded, axis=1).view(word))


class _Scratch(threading.local):
    """Per-thread buffers reused across the chunks of one call (fresh pages for every
    chunk cost more kernel time, in page faults, than the arithmetic); released with the
    object at the end of the call."""

    def get(self, name: str, count: int, dtype) -> np.ndarray:
        buf = getattr(self, name, None)
        if buf is None or buf.size < count or buf.dtype != dtype:
            buf = np.empty(count, dtype=dtype)
            setattr(self, name, buf)
        return buf[:count]


def _packed_distances(qp: np.ndarray, dp: np.ndarray, scratch: _Scratch | None = None) -> np.ndarray:
    """Hamming distances by XOR + popcount on packed words (exact small integers).

    uint8 while the codes have fewer than 256 bits (one byte per pair keeps the passes
    that follow memory-light), uint16 beyond. With ``scratch`` the result lives in its
    buffer of this thread, valid until the thread's next call.
    """
    scratch = _Scratch() if scratch is None else scratch
    rows, cols, words = qp.shape[0], dp.shape[0], qp.shape[1]
    dtype = np.uint8 if words * qp.dtype.itemsize * 8 < 256 else np.uint16
    xor = scratch.get("xor", rows * cols, qp.dtype).reshape(rows, cols)
    out = scratch.get("dist", rows * cols, dtype).reshape(rows, cols)
    np.bitwise_xor(qp[:, None, 0], dp[None, :, 0], out=xor)
    np.bitwise_count(xor, out=out, casting="unsafe")
    if words > 1:
        more = scratch.get("more", rows * cols, np.uint8).reshape(rows, cols)
        for w in range(1, words):
            np.bitwise_xor(qp[:, None, w], dp[None, :, w], out=xor)
            np.add(out, np.bitwise_count(xor, out=more), out=out, casting="unsafe")
    return out


def _shared_label(qlp: np.ndarray, dlp: np.ndarray) -> np.ndarray:
    """(rows, items) bool: the packed label rows share at least one set bit."""
    both = qlp[:, None, 0] & dlp[None, :, 0]
    for w in range(1, qlp.shape[1]):
        both |= qlp[:, None, w] & dlp[None, :, w]
    return both != 0


def _row_histograms(dist: np.ndarray, width: int, groups=None, scratch: _Scratch | None = None) -> list:
    """Per row of small integer distances, the count of each value 0..width-1 over each
    group of column ranges (``groups``: a list of lists of ``(lo, hi)``; default: one
    group, every column). Returns one (rows, width) int64 array per group.

    Per row, one bincount over keys ``value + width * group``. When the squared width is
    small the columns of a range are counted in pairs instead: key ``width * d[:, j] +
    d[:, j + h]`` counts the joint values of two columns at once (half the keys, the
    costly part of a bincount), and the marginals of that 2-D histogram give the counts.
    torch's bincount counts int16 keys without widening them and releases the GIL; it is
    called on at most :data:`BINCOUNT_PIECE` keys at a time, below torch's grain size,
    so it never starts threads of its own (inside the caller's thread pool they would
    only compete for the same cores; measured 15x slower on a busy machine).
    """
    rows, cols = dist.shape
    groups = [[(0, cols)]] if groups is None else groups
    scratch = _Scratch() if scratch is None else scratch
    out = [np.zeros((rows, width), dtype=np.int64) for _ in groups]
    if rows == 0 or cols == 0:
        return out
    paired = width * width <= PAIR_BINS_MAX
    bins = width * width if paired else width
    ranges = [(g, lo, hi, (hi - lo) // 2 if paired else hi - lo)
              for g, group in enumerate(groups) for lo, hi in group]
    total, nbins = sum(r[3] for r in ranges), len(groups) * bins
    key_type = np.dtype(np.int16 if nbins < 2**15 else np.int32 if nbins < 2**31 else np.int64)
    keys = scratch.get("keys", rows * total, key_type).reshape(rows, total)
    at = 0
    for g, lo, hi, count in ranges:
        part = keys[:, at:at + count]
        if paired:
            np.multiply(dist[:, lo:lo + count], width, out=part, dtype=key_type, casting="unsafe")
            np.add(part, dist[:, lo + count:lo + 2 * count], out=part, casting="unsafe")
            if (hi - lo) % 2:
                out[g][np.arange(rows), dist[:, hi - 1]] += 1  # the column left unpaired
        else:
            np.copyto(part, dist[:, lo:hi], casting="unsafe")
        if g:
            part += key_type.type(g * bins)
        at += count
    per_row = []
    for i in range(rows):
        row = torch.from_numpy(keys[i])
        counts = torch.bincount(row[:BINCOUNT_PIECE], minlength=nbins)
        for lo in range(BINCOUNT_PIECE, total, BINCOUNT_PIECE):
            counts += torch.bincount(row[lo:lo + BINCOUNT_PIECE], minlength=nbins)
        per_row.append(counts)
    counts = torch.stack(per_row).numpy().reshape(rows, len(groups), *((width, width) if paired else (width,)))
    for g in range(len(groups)):
        joint = counts[:, g]
        out[g] += joint.sum(axis=2) + joint.sum(axis=1) if paired else joint
    return out


def _worker_count() -> int:
    """Threads for the CPU histogram: the cores this process may use (numpy's XOR,
    popcount and key arithmetic and torch's bincount release the GIL, so query chunks run
    in parallel)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, torch.get_num_threads()))


def _class_tasks(qln: np.ndarray, dls: np.ndarray, chunk: int) -> list:
    """(query rows, class slice of the class-sorted database) per chunk, class by class."""
    tasks = []
    q_order = np.argsort(qln, kind="stable")
    bounds = np.flatnonzero(np.diff(qln[q_order])) + 1
    for group in np.split(q_order, bounds):
        if len(group) == 0:
            continue
        c = qln[group[0]]
        lo_c, hi_c = np.searchsorted(dls, c, "left"), np.searchsorted(dls, c, "right")
        for lo in range(0, len(group), chunk):
            tasks.append((group[lo:lo + chunk], lo_c, hi_c))
    return tasks


def _cpu_histograms(q: np.ndarray, d: np.ndarray, ql: torch.Tensor, dl: torch.Tensor,
                    width: int, memory_budget: int):
    """CPU route of :func:`distance_histograms`: bit-packed codes, small query chunks in
    a thread pool. With class labels the database is sorted by class, so the relevant
    items of a query are one contiguous slice of its distance row; queries are taken
    class by class."""
    nq, ndb = q.shape[0], d.shape[0]
    qp, dp = _pack_bits(q), _pack_bits(d)
    scratch = _Scratch()
    n_hist = np.zeros((nq, width), dtype=np.int64)
    r_hist = np.zeros((nq, width), dtype=np.int64)
    # Chunks of a few queries keep each pass in cache; the budget still caps them
    # (per pair: the XOR word, the distance, the pair and the key).
    per_query = max(ndb * (qp.dtype.itemsize + 8), 1)
    chunk = max(1, min(CPU_CHUNK_QUERIES, memory_budget // per_query))
    if ql.ndim == 1 and dl.ndim == 1:
        qln, dln = ql.numpy(), dl.numpy()
        db_order = np.argsort(dln, kind="stable")
        dp = dp[db_order]
        tasks = _class_tasks(qln, dln[db_order], chunk)

        def work(task):
            rows, lo_c, hi_c = task
            # two groups: the items outside the class, the class (relevant); each once
            outside, inside = _row_histograms(_packed_distances(qp[rows], dp, scratch), width,
                                              [[(0, lo_c), (hi_c, ndb)], [(lo_c, hi_c)]], scratch)
            r_hist[rows] = inside
            n_hist[rows] = outside + inside
    else:
        tasks = [np.arange(lo, min(nq, lo + chunk)) for lo in range(0, nq, chunk)]
        # a shared label is a shared set bit: AND of the packed label rows, no product
        qlp, dlp = _pack_bits(ql.cpu().numpy() > 0), _pack_bits(dl.cpu().numpy() > 0)

        def work(rows):
            dist = _packed_distances(qp[rows], dp, scratch)
            if 2 * width > 256:
                dist = dist.astype(np.uint16)
            key = np.multiply(dist, 2, out=dist, casting="unsafe")
            key += _shared_label(qlp[rows], dlp)
            both = _row_histograms(key, 2 * width, None, scratch)[0].reshape(len(rows), width, 2)
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
    distances of a few queries at a time come from XOR + popcount on bit-packed codes (one
    uint32 word up to 32 bits, uint64 words beyond: 1/32 of the memory a float product
    touches; measured faster, see BENCHMARKS.md), counted per row by bincount on int16
    pair keys (:func:`_row_histograms`), chunks spread over the cores in a thread pool
    (no torch or BLAS threads inside it). The CPU route never calls CUDA. On CUDA the distances come from one matrix product
    ``(K - Q D^T) / 2`` and each becomes a bin key ``2 d + relevant`` (plus a row offset)
    counted by one bincount. With class labels the relevance matrix is never built:
    relevant items are the query's class's slice of the class-sorted database.
    """
    qb = code_bits(query_codes, "query codes")
    db = code_bits(db_codes, "database codes")
    if qb.shape[1] != db.shape[1]:
        raise InputError(N_("query codes have {query} bits, database codes {database}"),
                         params={"query": qb.shape[1], "database": db.shape[1]})
    ql = as_labels(query_labels, qb.shape[0], "query labels")
    dl = as_labels(db_labels, db.shape[0], "database labels")
    dev = resolve_device(device)
    bits = qb.shape[1]
    nq, ndb = qb.shape[0], db.shape[0]
    width = bits + 1
    single = ql.ndim == 1 and dl.ndim == 1
    if not single:
        relevance_matrix(ql[:1], dl[:1])  # checks the label kinds match
    if dev.type == "cpu":
        return _cpu_histograms(qb, db, ql, dl, width, memory_budget)
    q, d = (torch.from_numpy(np.where(b, np.float32(1), np.float32(-1))) for b in (qb, db))
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
        rel = None if single else relevance_matrix(ql[rows], dl).numpy().astype(np.int32)
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
