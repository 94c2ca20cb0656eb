"""The device route: every pass over the (query, item) pairs runs where the codes are, and
only integers per query come back.

What leaves the device:

* the distance histograms ``n[q, d]`` (items at Hamming distance ``d``) and ``r[q, d]``
  (relevant items at ``d``), (queries x (bits + 1)) integers;
* for the stable tie rule (distance, then database index), per query: the sum of the
  precisions at the relevant items inside the cut, as a fixed-point integer (see
  :func:`fixed_point_sums`), the number of relevant items inside the cut and inside each
  k of P@k.

Everything after that (AP under each tie rule, the band, P@k, radius measures) is one numpy
function on the host, the same for every device, so CUDA gives the CPU's numbers bit for bit
by construction.

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

import importlib.util
import os
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
    compact int32, or multi-label rows as bool), and whether the labels are multi-label."""

    qbits: Tensor
    dbits: Tensor
    qlab: Tensor
    dlab: Tensor
    multi: bool

    @property
    def bits(self) -> int:
        return int(self.qbits.shape[1])


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


def memory_for(dev, memory_budget: int) -> int:
    """Bytes a chunk may use: ``memory_budget``, and on CUDA at most half the free memory."""
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return max(1, min(int(memory_budget), int(free) // 2))
    return max(1, int(memory_budget))


def triton_usable(dev) -> bool:
    """Triton is importable and can run on ``dev`` (CUDA; or the CPU through Triton's
    interpreter when ``TRITON_INTERPRET=1``)."""
    if importlib.util.find_spec("triton") is None:
        return False
    return dev.type == "cuda" or os.environ.get("TRITON_INTERPRET") == "1"


def _device_bits(codes, name: str, dev) -> Tensor:
    """Boolean (items, bits) code bits on ``dev``. A tensor is checked where it is (two
    reductions); anything irregular goes to :func:`code_bits`, which names the problem."""
    if (
        isinstance(codes, torch.Tensor)
        and codes.ndim in (1, 2)
        and codes.numel() > 0
        and not codes.dtype.is_complex
    ):
        t = codes.detach().to(dev)
        t = t[None, :] if t.ndim == 1 else t
        if t.dtype == torch.bool:
            return t
        if bool(((t == 1) | (t == -1)).all()) or bool(((t == 0) | (t == 1)).all()):
            return t > 0
    return torch.from_numpy(code_bits(codes, name)).to(dev)


def device_inputs(query_codes, db_codes, query_labels, db_labels, dev) -> DeviceInputs:
    """Check the four inputs (the messages of :func:`code_bits` and :func:`as_labels`) and
    place them on ``dev``: CUDA tensors stay where they are."""
    qb = _device_bits(query_codes, "query codes", dev)
    db = _device_bits(db_codes, "database codes", dev)
    if qb.shape[1] != db.shape[1]:
        raise InputError(
            N_("query codes have {query} bits, database codes {database}"),
            params={"query": qb.shape[1], "database": db.shape[1]},
        )
    ql = as_labels(query_labels, qb.shape[0], "query labels", device=dev)
    dl = as_labels(db_labels, db.shape[0], "database labels", device=dev)
    relevance_matrix(ql[:1], dl[:1])  # checks the label kinds match
    if ql.ndim == 1:
        return DeviceInputs(qb, db, *_class_ids_int32(ql, dl), False)
    return DeviceInputs(qb, db, ql > 0, dl > 0, True)


def _class_ids_int32(ql: Tensor, dl: Tensor) -> tuple[Tensor, Tensor]:
    """Class ids as int32 (the kernels' type; only equality matters): cast when every id fits
    (one min/max, the only wait), else renumbered by ``torch.unique`` (a sort)."""
    q_lo, d_lo, q_hi, d_hi = torch.stack([ql.min(), dl.min(), ql.max(), dl.max()]).tolist()
    if -(2**31) <= min(q_lo, d_lo) and max(q_hi, d_hi) < 2**31:
        return ql.to(torch.int32).contiguous(), dl.to(torch.int32).contiguous()
    _, inverse = torch.unique(torch.cat([ql, dl]), return_inverse=True)
    inverse = inverse.to(torch.int32)
    return inverse[: len(ql)].contiguous(), inverse[len(ql) :].contiguous()


def pack_words(bits: Tensor) -> Tensor:
    """Boolean (items, bits) -> (items, words) int32, 32 bits a word, zero padded (padding
    bits are equal in every row: no distance, no shared label). Device-agnostic.

    >>> pack_words(torch.tensor([[True, False, True] + [False] * 29 + [True]])).tolist()
    [[5, 1]]
    """
    n, k = bits.shape
    words = -(-k // 32)
    padded = torch.zeros((n, words * 32), dtype=torch.uint8, device=bits.device)
    padded[:, :k] = bits
    weights = (2 ** torch.arange(8, device=bits.device)).to(torch.uint8)  # made on the device
    packed = (padded.view(n, words * 4, 8) * weights).sum(dim=2, dtype=torch.int32).to(torch.uint8)
    if np.little_endian:
        return packed.contiguous().view(torch.int32)
    return packed.view(n, words, 4).flip(2).contiguous().view(torch.int32)  # pragma: no cover


# -- the torch engine ------------------------------------------------------------------------
def _torch_chunks(inp: DeviceInputs, rows_per_chunk: int):
    """Per chunk of queries: (rows slice, distances (rows, items) int32, relevance bool)."""
    dev = inp.qbits.device
    bits = inp.bits
    ftype = torch.float16 if dev.type == "cuda" and bits <= HALF_EXACT_BITS else torch.float32
    q = inp.qbits.to(ftype) * 2 - 1
    dT = (inp.dbits.to(ftype) * 2 - 1).T.contiguous()
    if inp.multi:
        ltype = (
            torch.float16
            if dev.type == "cuda" and inp.qlab.shape[1] <= HALF_EXACT_BITS
            else torch.float32
        )
        qlab, dlabT = inp.qlab.to(ltype), inp.dlab.to(ltype).T.contiguous()
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
    """The torch engine: histograms ``(n, r)`` (numpy int64), and with ``stable = (cut, ks)``
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
    n, r = histograms_to_host(torch.cat(n_parts), torch.cat(r_parts))
    if not stable:
        return n, r, None
    ks = stable[1]
    hi, lo, in_cut = (torch.cat([p[i] for p in st_parts]) for i in range(3))
    out = stable_to_host(hi, lo, in_cut, [torch.cat([p[3][k] for p in st_parts]) for k in ks], ks)
    return n, r, out


def histograms_to_host(n: Tensor, r: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """The two (queries, distances) histograms as int64 numpy arrays, in one copy from the
    device (one wait)."""
    both = torch.stack([n, r]).to(torch.int64).cpu().numpy()
    return both[0], both[1]


def stable_to_host(hi: Tensor, lo: Tensor, in_cut: Tensor, at_k: list, ks) -> StableCounts:
    """The stable order's per-query integers (``at_k``: one tensor per k of ``ks``) as
    :class:`StableCounts` of int64 numpy arrays, in one copy from the device."""
    rows = torch.stack([t.to(torch.int64) for t in (hi, lo, in_cut, *at_k)]).cpu().numpy()
    return StableCounts(rows[0], rows[1], rows[2], {k: rows[3 + i] for i, k in enumerate(ks)})


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
