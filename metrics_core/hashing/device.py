"""The device route: every pass over the (query, item) pairs runs where the codes are, and
only integers per query come back.

What the counting gives:

* the distance histograms ``n[q, d]`` (items at Hamming distance ``d``) and ``r[q, d]``
  (relevant items at ``d``), (queries x (bits + 1)) integers, left on the device for the
  measures (:mod:`metrics_core.hashing.ties`: the same torch function on every device, with
  exact integer sums) or copied to the host;
* for the stable tie rule (distance, then database index), per query: the sum of the
  precisions at the relevant items inside the cut, as a fixed-point integer (see
  :func:`fixed_point_sums`), the number of relevant items inside the cut and inside each
  k of P@k.

So CUDA gives the CPU's numbers bit for bit by construction. The inputs are checked in two
steps: what the host can see without reading device values (:func:`place_inputs`: types,
shapes, labels), then whether code tensors hold only ±1 or only 0/1, reduced on the device
(:func:`device_bits`) and read back with the results (one wait). On CUDA a whole evaluation
by the Triton engine, from the codes to the per-query sums, is one captured CUDA graph
(:func:`replayed`).

Two engines, both written in device-agnostic torch/Triton and tested on the CPU:

* ``torch``: codes as ±1 in half precision on CUDA, float32 on the CPU; the distances of a
  chunk of queries by one matrix product ``(K - Q D^T) / 2`` (exact: partial sums of ±1 are
  integers of at most K <= 2048 in magnitude, which half precision holds exactly); relevance
  by class-id comparison (no relevance matrix is kept) or, multi-label, by a label-matrix
  product; histograms by one ``bincount`` of the keys ``row * 2W + 2 d + relevant``, spread
  over :data:`LANES` copies of the bins on CUDA (key plus ``lane * rows * 2W``, lane = item
  index mod LANES) so that few threads update the same counter, the copies summed after.
  The stable rule sorts each chunk's distances (small integers) stably, on the device.
* ``triton`` (:mod:`metrics_core.hashing.triton_engine`): one fused kernel computes XOR + popcount
  on 32-bit words and each block's per-query histogram (one atomic add per non-empty bin per
  block); the stable rule adds a second kernel that walks the database in index order in
  segments, the rank of each relevant item being the items at a smaller distance plus the
  earlier items at the same distance (counters started from the first kernel's per-segment
  histograms), with no sort.

Chunks of queries are sized from ``memory_budget`` and, on CUDA, half the device's free memory.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.hashing._torch import torch
from metrics_core.hashing.validate import as_labels, code_bits, relevance_matrix

if TYPE_CHECKING:
    from torch import Tensor

#: The engines of :func:`metrics_core.hashing.histograms.distance_histograms`: ``auto``
#: (numpy on the CPU, Triton on CUDA where importable, else torch), or one named.
ENGINES = ("auto", "numpy", "torch", "triton")
#: Copies of the histogram bins the torch engine spreads its keys over on CUDA.
LANES = 64
#: The stable rule's precisions are summed as integers of 2**-FIXED_BITS (truncated): exact,
#: so the sum does not depend on the order a device adds them in.
FIXED_BITS = 48
#: Each per-query fixed-point sum travels as two int64 parts, ``hi * 2**SPLIT_BITS + lo``.
SPLIT_BITS = 24
#: Bytes per (query, item) pair of a torch-engine chunk: histograms, and the stable sort.
TORCH_PAIR_BYTES = 24
TORCH_STABLE_PAIR_BYTES = 64
#: Largest code length the half-precision product holds exactly (integers up to 2048).
HALF_EXACT_BITS = 2048


class DeviceInputs(NamedTuple):
    """Validated inputs on the device: code bits (bool, items x bits), labels (class ids as
    int64, or multi-label rows as bool), and whether the labels are multi-label."""

    qbits: Tensor
    dbits: Tensor
    qlab: Tensor
    dlab: Tensor
    multi: bool

    @property
    def bits(self) -> int:
        return int(self.qbits.shape[1])


class Placed(NamedTuple):
    """The four inputs on the device, checked as far as the host can without reading a
    value there: codes (bool when checked on the host; numbers, checked on the device by
    :func:`device_bits`), labels (:func:`as_labels`: int64 class ids or float32 0/1 rows,
    of one kind), shapes that agree."""

    qt: Tensor
    dt: Tensor
    ql: Tensor
    dl: Tensor

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self)


class StableCounts(NamedTuple):
    """Per query, the stable order's integers: the fixed-point precision sum inside the cut
    (``hi``, ``lo``: see :func:`fixed_point_sums`), the relevant items inside the cut (``in_cut``) and
    inside each k (``at_k``: one array per k)."""

    hi: np.ndarray
    lo: np.ndarray
    in_cut: np.ndarray
    at_k: dict


def fixed_point_sums(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """The float64 value of the fixed-point sums ``(hi * 2**24 + lo) / 2**48`` (int64 parts).

    The parts are first made canonical (``0 <= lo < 2**24``), so any split of the same exact
    integer gives the same float: one rounding, the same on every device.

    >>> fixed_point_sums(np.array([1, 2]), np.array([2**24, 0])).tolist()   # one integer, two splits
    [1.1920928955078125e-07, 1.1920928955078125e-07]
    >>> float(fixed_point_sums(np.array([2**24]), np.array([0]))[0])   # 2**48 / 2**48
    1.0
    """
    hi = np.asarray(hi, dtype=np.int64) + (np.asarray(lo, dtype=np.int64) >> SPLIT_BITS)
    lo = np.asarray(lo, dtype=np.int64) & ((1 << SPLIT_BITS) - 1)
    return hi * 2.0 ** (SPLIT_BITS - FIXED_BITS) + lo * 2.0**-FIXED_BITS


def current_device_is(dev):
    """A context in which ``dev`` is the current CUDA device (the one Triton launches on
    and CUDA graphs capture on), whichever was current; nothing to do elsewhere."""
    return torch.cuda.device(dev) if dev.type == "cuda" else contextlib.nullcontext()


def memory_for(dev, memory_budget: int) -> int:
    """Bytes a chunk may use: ``memory_budget``, and on CUDA at most half the free memory."""
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return max(1, min(int(memory_budget), int(free) // 2))
    return max(1, int(memory_budget))


@functools.cache
def _triton_installed() -> bool:
    """Whether Triton can be imported (looked up once: the search of the import path costs
    more than a small evaluation's device work)."""
    return importlib.util.find_spec("triton") is not None


def triton_usable(dev) -> bool:
    """Triton is importable and can run on ``dev`` (CUDA; or the CPU through Triton's
    interpreter when ``TRITON_INTERPRET=1``)."""
    if not _triton_installed():
        return False
    return dev.type == "cuda" or os.environ.get("TRITON_INTERPRET") == "1"


def _code_tensor(codes, dev):
    """A regular code tensor (2-D, non-empty, real) on ``dev`` (a 1-D tensor is one code),
    or None: anything else goes to :func:`code_bits`, which names the problem."""
    if (
        isinstance(codes, torch.Tensor)
        and codes.ndim in (1, 2)
        and codes.numel() > 0
        and not codes.dtype.is_complex
    ):
        t = codes.detach().to(dev)
        return t[None, :] if t.ndim == 1 else t
    return None


def place_inputs(query_codes, db_codes, query_labels, db_labels, dev) -> Placed:
    """Check what the host can check of the four inputs (the messages of :func:`code_bits`
    and :func:`as_labels`) and place them on ``dev``: tensors already there stay where they
    are, without a copy or a wait; codes that are not a regular tensor are checked on the
    host. Whether code tensors hold only ±1 or only 0/1 is checked on the device
    (:func:`device_bits`)."""
    qt, dt = _code_tensor(query_codes, dev), _code_tensor(db_codes, dev)
    if qt is None:  # not a regular tensor: checked (and any problem named) on the host
        qt = torch.from_numpy(code_bits(query_codes, "query codes")).to(dev)
    if dt is None:
        dt = torch.from_numpy(code_bits(db_codes, "database codes")).to(dev)
    if qt.shape[1] != dt.shape[1]:
        raise InputError(
            N_("query codes have {query} bits, database codes {database}"),
            params={"query": qt.shape[1], "database": dt.shape[1]},
        )
    ql = as_labels(query_labels, qt.shape[0], "query labels", device=dev)
    dl = as_labels(db_labels, dt.shape[0], "database labels", device=dev)
    if ql.ndim != dl.ndim or (ql.ndim == 2 and ql.shape[1] != dl.shape[1]):
        relevance_matrix(ql[:1], dl[:1])  # the kinds differ: it names the problem
    return Placed(qt, dt, ql, dl)


def _codes_ok(t) -> Tensor:
    """A device boolean: the code tensor holds only ±1, or only 0/1 (bool: checked), in
    blocks of rows (:func:`row_blocks`: boolean temporaries of a bounded size)."""
    if t.dtype == torch.bool:
        return torch.ones((), dtype=torch.bool, device=t.device)
    plus_minus, zero_one = [], []
    for lo, hi in row_blocks(t.shape[0], t.shape[1]):
        block = t[lo:hi]
        one = block == 1
        plus_minus.append((one | (block == -1)).all())
        zero_one.append((one | (block == 0)).all())
    return torch.stack(plus_minus).all() | torch.stack(zero_one).all()


def device_bits(qt: Tensor, dt: Tensor, ql: Tensor, dl: Tensor) -> tuple[DeviceInputs, Tensor]:
    """The :class:`DeviceInputs` of placed inputs (:func:`place_inputs`), by device
    operations alone (no wait: it can run inside a CUDA graph), and the checks of the two
    code tensors, an int64 pair (1: only ±1 or only 0/1) for :func:`confirm_codes`.

    The bits are ``code > 0`` whichever of the two encodings the codes use, so they are
    right whenever the checks pass: a caller may compute with them first and read the
    checks with its results (one wait)."""
    checks = torch.stack([_codes_ok(qt), _codes_ok(dt)]).to(torch.int64)
    qb = qt if qt.dtype == torch.bool else qt > 0
    db = dt if dt.dtype == torch.bool else dt > 0
    if ql.ndim == 2:
        return DeviceInputs(qb, db, ql > 0, dl > 0, True), checks
    return DeviceInputs(qb, db, ql.contiguous(), dl.contiguous(), False), checks


def confirm_codes(checks, query_codes, db_codes) -> None:
    """Raise the :func:`code_bits` message (the first value that is not a code bit) for
    the codes whose device check (:func:`device_bits`) failed; ``checks``: its two values
    on the host; the codes: the placed tensors (:class:`Placed`: the values as given)."""
    for ok, codes, name in zip(
        checks, (query_codes, db_codes), ("query codes", "database codes"), strict=True
    ):
        if not ok:
            code_bits(codes, name)  # names the problem


#: Elements of a code (or label) matrix checked or packed at a time: the temporaries of
#: those steps (a few bytes an element) stay near this many bytes whatever the database's
#: size, within any memory budget; the usual sizes are one block.
BLOCK_ELEMENTS = 1 << 24

_WEIGHTS: dict = {}  # device -> the 32 bit weights of a word (int32)


def row_blocks(rows: int, per_row: int) -> list[tuple[int, int]]:
    """(start, stop) of consecutive blocks of rows of at most :data:`BLOCK_ELEMENTS`
    elements (at least one row each).

    >>> row_blocks(5, BLOCK_ELEMENTS // 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    step = max(1, BLOCK_ELEMENTS // max(per_row, 1))
    return [(lo, min(rows, lo + step)) for lo in range(0, rows, step)]


def pack_words(bits: Tensor) -> Tensor:
    """Boolean (items, bits) -> (items, words) int32, 32 bits a word, bit j of a word worth
    2**j (the last, -2**31: the two's complement sign), zero padded (padding bits are equal
    in every row: no distance, no shared label). Device-agnostic: per block of rows
    (:func:`row_blocks`), one product and one int32 sum of 32 terms per word, exact (any
    partial sum of distinct bit weights lies within int32's range).

    >>> pack_words(torch.tensor([[True, False, True] + [False] * 29 + [True]])).tolist()
    [[5, 1]]
    >>> pack_words(torch.ones((1, 32), dtype=torch.bool)).tolist()   # all 32 bits: -1
    [[-1]]
    """
    n, k = bits.shape
    words = -(-k // 32)
    weights = _WEIGHTS.get(bits.device)
    if weights is None:
        weights = torch.tensor([1 << j for j in range(31)] + [-(1 << 31)], dtype=torch.int32)
        weights = _WEIGHTS.setdefault(bits.device, weights.to(bits.device))
    out = torch.empty((n, words), dtype=torch.int32, device=bits.device)
    for lo, hi in row_blocks(n, words * 32):
        block = bits[lo:hi]
        if k != words * 32:
            padded = torch.zeros((hi - lo, words * 32), dtype=torch.bool, device=bits.device)
            padded[:, :k] = block
            block = padded
        out[lo:hi] = (block.reshape(hi - lo, words, 32) * weights).sum(dim=2, dtype=torch.int32)
    return out


# -- the torch engine ------------------------------------------------------------------------
def _transposed(bits: Tensor, ftype, signs: bool) -> Tensor:
    """(columns, rows) of ``ftype``: the bits as ±1 (``signs``) or 0/1, transposed, made a
    block of rows at a time (:func:`row_blocks`: no whole-matrix temporaries)."""
    out = torch.empty((bits.shape[1], bits.shape[0]), dtype=ftype, device=bits.device)
    for lo, hi in row_blocks(bits.shape[0], bits.shape[1]):
        block = bits[lo:hi].to(ftype)
        out[:, lo:hi] = (block * 2 - 1 if signs else block).T
    return out


def _torch_chunks(inp: DeviceInputs, rows_per_chunk: int):
    """Per chunk of queries: (rows slice, distances (rows, items) int32, relevance bool)."""
    dev = inp.qbits.device
    bits = inp.bits
    ftype = torch.float16 if dev.type == "cuda" and bits <= HALF_EXACT_BITS else torch.float32
    q = inp.qbits.to(ftype) * 2 - 1
    dT = _transposed(inp.dbits, ftype, signs=True)
    if inp.multi:
        ltype = (
            torch.float16
            if dev.type == "cuda" and inp.qlab.shape[1] <= HALF_EXACT_BITS
            else torch.float32
        )
        qlab, dlabT = inp.qlab.to(ltype), _transposed(inp.dlab, ltype, signs=False)
    nq = q.shape[0]
    for lo in range(0, nq, rows_per_chunk):
        hi = min(nq, lo + rows_per_chunk)
        dist = (bits - (q[lo:hi] @ dT).to(torch.int32)) // 2
        if inp.multi:
            rel = (qlab[lo:hi] @ dlabT) > 0
        else:
            rel = inp.qlab[lo:hi, None] == inp.dlab[None, :]
        yield slice(lo, hi), dist, rel


def _torch_hist(dist: Tensor, rel: Tensor, width: int):
    """(rows, width) int64 histograms of all and of relevant items from one chunk."""
    rows, cols = dist.shape
    bins = rows * 2 * width
    key = dist.to(torch.int64) * 2 + rel
    key += torch.arange(rows, device=dist.device, dtype=torch.int64)[:, None] * (2 * width)
    lanes = LANES if dist.device.type == "cuda" else 1
    if lanes > 1:
        key += (torch.arange(cols, device=dist.device, dtype=torch.int64) % lanes)[None, :] * bins
    counts = (
        torch.bincount(key.view(-1), minlength=lanes * bins).view(lanes, rows, width, 2).sum(dim=0)
    )
    return counts.sum(dim=2), counts[:, :, 1]


def _torch_stable(dist: Tensor, rel: Tensor, cut: int, ks, bits: int):
    """The stable order's integers for one chunk: a stable sort of the small-integer
    distances, the relevant items' running count, precisions as fixed-point integers
    (truncated, as the Triton engine does)."""
    ndb = dist.shape[1]
    small = dist.to(torch.int16) if bits < 2**15 else dist
    order = torch.sort(small, dim=1, stable=True).indices
    rel_sorted = torch.gather(rel, 1, order)
    del order
    seen = torch.cumsum(rel_sorted, dim=1, dtype=torch.int64)
    pos = torch.arange(1, cut + 1, device=dist.device, dtype=torch.float64)
    fixed = (seen[:, :cut].to(torch.float64) / pos * float(2**FIXED_BITS)).to(torch.int64)
    fixed = torch.where(rel_sorted[:, :cut], fixed, 0)
    hi = (fixed >> SPLIT_BITS).sum(dim=1)
    lo = (fixed & ((1 << SPLIT_BITS) - 1)).sum(dim=1)
    at_k = {k: seen[:, min(k, ndb) - 1] for k in ks}
    return hi, lo, seen[:, cut - 1], at_k


def torch_counts(inp: DeviceInputs, memory_budget: int, stable: tuple | None = None):
    """The torch engine: histograms ``(n, r)`` (int64 tensors on the device), and with
    ``stable = (cut, ks)``
    the :class:`StableCounts` as well (else None); a cut of None is the whole ranking."""
    dev = inp.qbits.device
    nq, ndb = inp.qbits.shape[0], inp.dbits.shape[0]
    width = inp.bits + 1
    per_pair = TORCH_STABLE_PAIR_BYTES if stable else TORCH_PAIR_BYTES
    rows = max(1, min(nq, memory_for(dev, memory_budget) // max(ndb * per_pair, 1)))
    if stable:
        stable = (ndb if stable[0] is None else min(int(stable[0]), ndb), tuple(stable[1]))
    n_parts, r_parts, st_parts = [], [], []
    for _, dist, rel in _torch_chunks(inp, rows):
        n_c, r_c = _torch_hist(dist, rel, width)
        n_parts.append(n_c)
        r_parts.append(r_c)
        if stable:
            st_parts.append(_torch_stable(dist, rel, stable[0], stable[1], inp.bits))
    n, r = torch.cat(n_parts), torch.cat(r_parts)
    if not stable:
        return n, r, None
    ks = stable[1]
    hi, lo, in_cut = (torch.cat([p[i] for p in st_parts]) for i in range(3))
    out = stable_to_host(hi, lo, in_cut, [torch.cat([p[3][k] for p in st_parts]) for k in ks], ks)
    return n, r, out


def histograms_to_host(n: Tensor, r: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """The two (queries, distances) histograms as int64 numpy arrays, in one copy from the
    device (one wait)."""
    both = torch.stack([n.to(torch.int64), r.to(torch.int64)]).cpu().numpy()
    return both[0], both[1]


def stable_to_host(hi: Tensor, lo: Tensor, in_cut: Tensor, at_k: list, ks) -> StableCounts:
    """The stable order's per-query integers (``at_k``: one tensor per k of ``ks``) as
    :class:`StableCounts` of int64 numpy arrays, in one copy from the device."""
    rows = torch.stack([t.to(torch.int64) for t in (hi, lo, in_cut, *at_k)]).cpu().numpy()
    return StableCounts(rows[0], rows[1], rows[2], {k: rows[3 + i] for i, k in enumerate(ks)})


# -- CUDA graphs ------------------------------------------------------------------------------
#: Captured graphs kept (one per shape of a computation: an evaluation per training epoch
#: replays the same one); the oldest is dropped past this many.
GRAPHS_KEPT = 4
#: Devices whose computations :func:`replayed` captures (a test adds the CPU, with a
#: stand-in for the capture, to check what a replay reads).
GRAPH_DEVICES = ("cuda",)
_GRAPHS: OrderedDict = OrderedDict()
_GRAPHS_LOCK = threading.Lock()


def replayed(fn, key, *inputs) -> np.ndarray:
    """``fn(*inputs)`` (tensors in, one tensor out, no wait for the device inside) as a numpy
    array on the host.

    On CUDA, ``fn`` is captured once per ``key`` and input shapes in a CUDA graph and then
    replayed (the inputs copied into the graph's own): the same kernels on the same values,
    so the same bits as running it, without the launch cost of each of its many small
    operations. A computation that cannot be captured runs as it is (and is not tried
    again); so does everything on other devices, or with ``RANKLAB_CUDA_GRAPHS=0``."""
    dev = inputs[0].device
    if dev.type not in GRAPH_DEVICES or os.environ.get("RANKLAB_CUDA_GRAPHS") == "0":
        return fn(*inputs).cpu().numpy()
    full_key = (str(dev), key, tuple((tuple(t.shape), t.dtype) for t in inputs))
    with _GRAPHS_LOCK, current_device_is(dev):  # the inputs' GPU, whichever is current
        entry = _GRAPHS.get(full_key)
        if entry is None:
            entry = _capture(fn, inputs, dev)
            _GRAPHS[full_key] = entry
            while len(_GRAPHS) > GRAPHS_KEPT:
                _GRAPHS.popitem(last=False)
        else:
            _GRAPHS.move_to_end(full_key)
        if entry is False:
            return fn(*inputs).cpu().numpy()
        graph, static, out, _ = entry
        for mine, given in zip(static, inputs, strict=True):
            mine.copy_(given)
        graph.replay()
        return out.cpu().numpy()  # before anyone replays it again


def _capture(fn, inputs, dev):
    """(graph, its input tensors, its output tensor, fn), or False when ``fn`` cannot be
    captured. A first run on a side stream settles lazy initialisations, as CUDA graphs
    require."""
    try:
        static = [t.clone() for t in inputs]
        side = torch.cuda.Stream(dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            fn(*static)
        torch.cuda.current_stream(dev).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fn(*static)
        return graph, static, out, fn  # fn keeps what it reads (its closure) alive
    except Exception:  # pragma: no cover - depends on the device and torch build
        return False


# -- dispatch ---------------------------------------------------------------------------------
def pick_engine(engine: str, dev) -> str:
    """The engine that runs: ``auto`` is numpy on the CPU, Triton on CUDA where importable,
    else torch. ``triton`` on the CPU needs Triton's interpreter (``TRITON_INTERPRET=1``)."""
    if engine == "auto":
        if dev.type == "cpu":
            return "numpy"
        return "triton" if triton_usable(dev) else "torch"
    if engine == "triton" and not triton_usable(dev):
        raise InputError(
            N_("the triton engine needs triton and a CUDA device (or TRITON_INTERPRET=1)"),
            hint=N_("Use engine auto or torch"),
        )
    return engine
