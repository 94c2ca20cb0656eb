"""Per-query histograms of Hamming distances (all items, relevant items): the only
pass over the (query, item) pairs. CPU: XOR + popcount on bit-packed codes, chunks of
queries spread over threads; CUDA: the device route (:mod:`metrics_core.hashing.device`),
which keeps the codes on the device and returns only the histograms.
"""

from __future__ import annotations

import threading

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.hashing._torch import torch
from metrics_core.hashing.device import (
    ENGINES,
    Placed,
    confirm_codes,
    device_bits,
    histograms_to_host,
    pick_engine,
    place_inputs,
    torch_counts,
)
from metrics_core.hashing.validate import (
    DEFAULT_MEMORY_BUDGET,
    as_labels,
    code_bits,
    relevance_matrix,
    resolve_device,
)
from metrics_core.threads import map_in_threads, usable_cores
from metrics_core.validation import check_choice

#: Queries per CPU chunk: the unit of work of a thread (16 rows of 50,000 items beat
#: both 8 and 32 rows).
CPU_CHUNK_QUERIES = 16
#: Largest joint histogram of two rows (bins) for which rows are counted in pairs (the
#: key, twice that with the relevant group, is built in int16: below 32,768).
PAIR_BINS_MAX = 8192
#: Bytes of XOR words computed at a time: kept in the core's cache until counted.
XOR_BLOCK_BYTES = 512 << 10
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


def _packed_distances(
    qp: np.ndarray, dp: np.ndarray, scratch: _Scratch | None = None
) -> np.ndarray:
    """Hamming distances by XOR + popcount on packed words (exact small integers).

    uint8 while the codes have fewer than 256 bits (one byte per pair keeps the passes
    that follow memory-light), uint16 beyond. The XOR words of a few rows at a time
    (:data:`XOR_BLOCK_BYTES`) stay in the core's cache until they are counted. With
    ``scratch`` the result lives in its buffer of this thread, valid until the thread's
    next call.
    """
    scratch = _Scratch() if scratch is None else scratch
    rows, cols, words = qp.shape[0], dp.shape[0], qp.shape[1]
    dtype = np.uint8 if words * qp.dtype.itemsize * 8 < 256 else np.uint16
    out = scratch.get("dist", rows * cols, dtype).reshape(rows, cols)
    step = max(1, min(rows, XOR_BLOCK_BYTES // max(cols * qp.dtype.itemsize, 1)))
    xor = scratch.get("xor", step * cols, qp.dtype).reshape(step, cols)
    more = scratch.get("more", step * cols, np.uint8).reshape(step, cols) if words > 1 else None
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        x, o = xor[: hi - lo], out[lo:hi]
        np.bitwise_xor(qp[lo:hi, None, 0], dp[None, :, 0], out=x)
        np.bitwise_count(x, out=o, casting="unsafe")
        if more is not None:  # the other words
            for w in range(1, words):
                np.bitwise_xor(qp[lo:hi, None, w], dp[None, :, w], out=x)
                np.add(o, np.bitwise_count(x, out=more[: hi - lo]), out=o, casting="unsafe")
    return out


def _shared_label(qlp: np.ndarray, dlp: np.ndarray) -> np.ndarray:
    """(rows, items) bool: the packed label rows share at least one set bit."""
    both = qlp[:, None, 0] & dlp[None, :, 0]
    for w in range(1, qlp.shape[1]):
        both |= qlp[:, None, w] & dlp[None, :, w]
    return both != 0


def _bincounts(keys: np.ndarray, bins: int) -> np.ndarray:
    """(rows, bins) int64: torch.bincount of each row of ``keys``, in pieces of at most
    :data:`BINCOUNT_PIECE` keys (below torch's grain size, so no call starts threads of
    its own: inside the caller's thread pool they would only compete for the same cores;
    measured 15x slower on a busy machine), the pieces' counts added in place. torch
    counts int16 keys without widening them and releases the GIL."""
    rows, cols = keys.shape
    pieces = max(1, -(-cols // BINCOUNT_PIECE))
    cuts = [cols * i // pieces for i in range(pieces + 1)]
    per_row = []
    for i in range(rows):
        counts = torch.bincount(torch.from_numpy(keys[i, : cuts[1]]), minlength=bins)
        for p in range(1, pieces):
            counts += torch.bincount(
                torch.from_numpy(keys[i, cuts[p] : cuts[p + 1]]), minlength=bins
            )
        per_row.append(counts)
    return torch.stack(per_row).numpy()


def _key_dtype(bins: int) -> np.dtype:
    return np.dtype(np.int16 if bins < 2**15 else np.int32 if bins < 2**31 else np.int64)


def row_histograms(
    values: np.ndarray, width: int, lo: int = 0, hi: int = 0, scratch: _Scratch | None = None
):
    """Per row of small integers ``values`` (rows, items), each in 0..width-1: the count of
    each value over every column and over the columns ``lo:hi``.

    Returns two (rows, width) int64 arrays ``(counts, counts_in_lo_hi)``.

    Rows are counted two at a time when the squared width is small
    (:data:`PAIR_BINS_MAX`): the key ``width * v[2i, j] + v[2i + 1, j]`` (plus ``width**2``
    inside ``lo:hi``) has one bincount make the joint histogram of both rows, half the
    keys (the costly part of a bincount, one memory increment each); its row sums are
    the counts of row ``2i``, its column sums those of row ``2i + 1``. An odd last row has
    the key ``width * v`` (a pair with a row of zeros: its row sums are its counts).
    Wider values are counted one row at a time (key ``v``, plus ``width`` inside
    ``lo:hi``).

    >>> v = np.array([[0, 1, 1, 2], [2, 2, 0, 1], [1, 1, 1, 0]], dtype=np.uint8)
    >>> n, r = row_histograms(v, 3, 1, 3)
    >>> n.tolist(), r.tolist()
    ([[1, 2, 1], [1, 1, 2], [1, 3, 0]], [[0, 2, 0], [1, 0, 1], [0, 2, 0]])
    """
    rows, cols = values.shape
    scratch = _Scratch() if scratch is None else scratch
    if rows == 0 or cols == 0:
        return np.zeros((rows, width), np.int64), np.zeros((rows, width), np.int64)
    paired = width * width <= PAIR_BINS_MAX and rows > 1
    bins = width * width if paired else width
    key_type = _key_dtype(2 * bins)
    n_keys = (rows + 1) // 2 if paired else rows
    keys = scratch.get("keys", n_keys * cols, key_type).reshape(n_keys, cols)
    if paired:
        np.multiply(values[0::2], width, out=keys, dtype=key_type, casting="unsafe")
        np.add(keys[: rows // 2], values[1::2], out=keys[: rows // 2], casting="unsafe")
    else:
        np.copyto(keys, values, casting="unsafe")
    groups = 2 if hi > lo else 1  # (outside lo:hi, inside lo:hi)
    if groups == 2:
        keys[:, lo:hi] += key_type.type(bins)
    counts = _bincounts(keys, groups * bins)
    shape = (width, width) if paired else (1, width)
    c = counts.reshape(n_keys, groups, *shape)  # (key row, group, first row, second row)
    first = np.einsum("pgij->pgi", c) if paired else c[:, :, 0]  # einsum: twice sum(axis=3)'s speed
    n_counts = np.empty((rows, width), np.int64)
    r_counts = np.zeros((rows, width), np.int64)
    step = 2 if paired else 1  # rows 0, 2, 4 ... of a pair, or every row
    n_counts[::step] = first.sum(axis=1)
    r_counts[::step] = first[:, -1] if groups == 2 else 0
    if paired:
        second = np.einsum("pgij->pgj", c[: rows // 2])
        n_counts[1::2] = second.sum(axis=1)
        r_counts[1::2] = second[:, -1] if groups == 2 else 0
    return n_counts, r_counts


def _worker_count() -> int:
    """Threads for the CPU histogram: the cores this process may use, at most torch's
    thread count (numpy's XOR, popcount and key arithmetic and torch's bincount release the
    GIL, so query chunks run in parallel)."""
    return max(1, min(usable_cores(), torch.get_num_threads()))


def stable_order(labels: np.ndarray) -> np.ndarray:
    """``np.argsort(labels, kind="stable")``, sorted as int16 when every class id fits
    (numpy radix-sorts 16-bit keys: a third of the time of int64 ids).

    >>> stable_order(np.array([3, 1, 3, 1, 2])).tolist()
    [1, 3, 4, 0, 2]
    """
    if labels.size and -(2**15) <= labels.min() and labels.max() < 2**15:
        labels = labels.astype(np.int16)
    return np.argsort(labels, kind="stable")


def _class_tasks(qln: np.ndarray, dls: np.ndarray, chunk: int) -> list:
    """(query rows, class slice of the class-sorted database) per chunk, class by class."""
    tasks = []
    q_order = stable_order(qln)
    bounds = np.flatnonzero(np.diff(qln[q_order])) + 1
    for group in np.split(q_order, bounds):
        if len(group) == 0:
            continue
        c = qln[group[0]]
        lo_c, hi_c = np.searchsorted(dls, c, "left"), np.searchsorted(dls, c, "right")
        for lo in range(0, len(group), chunk):
            tasks.append((group[lo : lo + chunk], lo_c, hi_c))
    return tasks


def _cpu_histograms(
    q: np.ndarray, d: np.ndarray, ql: torch.Tensor, dl: torch.Tensor, width: int, memory_budget: int
):
    """CPU route of :func:`distance_histograms`: bit-packed codes, small query chunks in
    a thread pool. With class labels the database is sorted by class, so the relevant
    items of a query are one contiguous slice of its distance row; queries are taken
    class by class."""
    nq, ndb = q.shape[0], d.shape[0]
    qp, dp = _pack_bits(q), _pack_bits(d)
    scratch = _Scratch()
    n_hist = np.zeros((nq, width), dtype=np.int64)
    r_hist = np.zeros((nq, width), dtype=np.int64)
    # Chunks of a few queries; the budget still caps them (per pair: the distance and
    # the key; the XOR words of a few rows at a time).
    per_query = max(ndb * 4, 1)
    chunk = max(1, min(CPU_CHUNK_QUERIES, memory_budget // per_query))
    if ql.ndim == 1 and dl.ndim == 1:
        qln, dln = ql.numpy(), dl.numpy()
        db_order = stable_order(dln)
        dp = dp[db_order]
        tasks = _class_tasks(qln, dln[db_order], chunk)

        def work(task):
            rows, lo_c, hi_c = task
            # every item, and the class's slice (the relevant items), counted in one pass
            n_hist[rows], r_hist[rows] = row_histograms(
                _packed_distances(qp[rows], dp, scratch), width, lo_c, hi_c, scratch
            )
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
            both = row_histograms(key, 2 * width, scratch=scratch)[0].reshape(len(rows), width, 2)
            n_hist[rows] = both.sum(axis=2)
            r_hist[rows] = both[:, :, 1]

    map_in_threads(work, tasks, _worker_count())  # re-raises a worker's exception here
    return n_hist, r_hist


def _check_codes(query_codes, db_codes):
    qb = code_bits(query_codes, "query codes")
    db = code_bits(db_codes, "database codes")
    if qb.shape[1] != db.shape[1]:
        raise InputError(
            N_("query codes have {query} bits, database codes {database}"),
            params={"query": qb.shape[1], "database": db.shape[1]},
        )
    return qb, db


def hamming_counts(
    query_codes,
    db_codes,
    query_labels,
    db_labels,
    *,
    device=None,
    engine: str = "auto",
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    stable: tuple | None = None,
    on_device: bool = False,
):
    """Every integer the measures need, by one engine: the histograms ``(n, r)`` of
    :func:`distance_histograms` and, with ``stable = (cut, ks)``, the stable order's
    :class:`~metrics_core.hashing.device.StableCounts` (cut None: the whole ranking), else None.
    The histograms are int64 numpy arrays, or with ``on_device`` left where they were counted
    (int64 tensors of a device route, numpy arrays of the CPU route), for the measures to
    be computed there.

    ``engine`` (:data:`~metrics_core.hashing.device.ENGINES`): ``auto`` is the numpy route
    on the CPU and the device route on CUDA (Triton where importable, else torch); ``torch``
    and ``triton`` name a device route (on the CPU too: that is how the tests check them).
    The numpy route leaves the stable order to the torch engine on the CPU.
    """
    check_choice(engine, ENGINES, "engine")
    dev = resolve_device(device)
    picked = pick_engine(engine, dev)
    if picked == "numpy" and stable is None:
        qb, db = _check_codes(query_codes, db_codes)
        ql = as_labels(query_labels, qb.shape[0], "query labels")
        dl = as_labels(db_labels, db.shape[0], "database labels")
        if not (ql.ndim == 1 and dl.ndim == 1):
            relevance_matrix(ql[:1], dl[:1])  # checks the label kinds match
        n, r = _cpu_histograms(qb, db, ql, dl, qb.shape[1] + 1, memory_budget)
        return n, r, None
    # the numpy route leaves the stable order to the torch engine on the CPU
    n, r, counts = device_counts(
        query_codes,
        db_codes,
        query_labels,
        db_labels,
        device="cpu" if picked == "numpy" else dev,
        engine="torch" if picked == "numpy" else picked,
        memory_budget=memory_budget,
        stable=stable,
    )
    if on_device:
        return n, r, counts
    return (*histograms_to_host(n, r), counts)


def distance_histograms(
    query_codes,
    db_codes,
    query_labels,
    db_labels,
    *,
    device=None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    engine: str = "auto",
    on_device: bool = False,
):
    """Per query and distance d = 0..K: items at d (``n``) and relevant items at d (``r``).

    Returns two int64 numpy arrays of shape (queries, K + 1) (with ``on_device``, a device
    route's int64 tensors where they were counted). No sort. On the CPU (engine
    ``numpy``) the distances of a few queries at a time come from XOR + popcount on
    bit-packed codes (one uint32 word up to 32 bits, uint64 words beyond: 1/32 of the memory
    a float product touches; measured faster, see BENCHMARKS.md), counted two rows at a time
    by bincount on int16 pair keys (:func:`row_histograms`), chunks spread over the cores in
    a thread pool (no torch or BLAS threads inside it). The CPU route never calls CUDA. With
    class labels the relevance matrix is never built: relevant items are the query's class's
    slice of the class-sorted database.

    On CUDA (engines ``triton`` and ``torch``, :mod:`metrics_core.hashing.device`) the codes
    stay on the device and only these histograms come back. Every engine gives the same
    integers, so the measures computed from them are the same bit for bit.
    """
    n, r, _ = hamming_counts(
        query_codes,
        db_codes,
        query_labels,
        db_labels,
        device=device,
        engine=engine,
        memory_budget=memory_budget,
        on_device=on_device,
    )
    return n, r


def device_counts(
    query_codes,
    db_codes,
    query_labels,
    db_labels,
    *,
    device=None,
    engine: str = "torch",
    memory_budget: int,
    stable: tuple | None = None,
):
    """Histograms (int64 tensors on ``device``; and, with ``stable = (cut, ks)``, the stable
    order's integers, on the host) by the torch or Triton engine on ``device``
    (:mod:`metrics_core.hashing.device`); the Triton engine is imported only when it runs."""
    dev = resolve_device(device)
    placed = place_inputs(query_codes, db_codes, query_labels, db_labels, dev)
    return placed_counts(placed, engine=engine, memory_budget=memory_budget, stable=stable)


def placed_counts(placed: Placed, *, engine: str, memory_budget: int, stable: tuple | None = None):
    """:func:`device_counts` of inputs already placed (:func:`place_inputs`): the device's
    code checks read back (one wait), then the engine counts."""
    inp, checks = device_bits(*placed)
    confirm_codes(checks.tolist(), placed.qt, placed.dt)
    if engine == "triton":
        from metrics_core.hashing import triton_engine

        return triton_engine.triton_counts(inp, memory_budget, stable)
    return torch_counts(inp, memory_budget, stable)
