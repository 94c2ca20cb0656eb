"""The Triton engine of the device route (see :mod:`metrics_core.hashing.device`).

Two kernels on codes packed in 32-bit words (at most :data:`MAX_WORDS` words, 128 bits; longer
codes, or more than :data:`MAX_LABEL_WORDS` x 32 labels, go to the torch engine):

* :func:`_histogram_kernel`: a block of database items (``BN``) against a few queries (``BQ``);
  per query, XOR + popcount, the key ``2 d + relevant`` and the block's histogram of it
  (``tl.histogram``), added to the query's row by one atomic add per non-empty bin. Rows may
  be split by database segment (the stable rule's first pass). The histogram's cost grows
  with its bins (a power of two): K-bit codes have K + 1 distances, one or two more than a
  power of two for the usual K (8, 16, 32, 64, 128), so those last distances are counted by
  two sums each and the histogram takes half the bins.
* :func:`_stable_kernel`: the stable rule (distance, then database index) without a sort.
  A program takes a few queries (one per lane) and one segment of the database, walked in
  index order; per item, the query's counter of its distance is incremented atomically and
  its old value is the number of items ranked before it: those at a smaller distance plus the
  earlier items at the same distance (counters started, per segment, from the first pass's
  histograms). Relevant items do the same on a second counter (relevant items ranked before
  it), and add ``seen / rank`` to the query's sum as an integer of 2**-48 (truncated).

Popcount is the GPU's instruction (libdevice's ``popc``) on CUDA, and a shift-and-mask
popcount in Triton's interpreter (``TRITON_INTERPRET=1``, which runs these kernels on the CPU
in the tests and lacks libdevice), or should a GPU's compiler refuse the instruction.
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from metrics_core.hashing._torch import torch
from metrics_core.hashing.device import (
    FIXED_BITS,
    SPLIT_BITS,
    DeviceInputs,
    current_device_is,
    memory_for,
    pack_words,
    stable_to_host,
    torch_counts,
)

#: Code words (32 bits) the kernels take; longer codes use the torch engine.
MAX_WORDS = 4
#: Label words (32 labels) the kernels take for multi-label data.
MAX_LABEL_WORDS = 8
#: Histogram kernel: database items and queries per program, warps (the fastest of the
#: configurations `bench/bench_hashing.py --device cuda --tune` tries, on an H100).
HIST_BN = 2048
HIST_BQ = 8
HIST_WARPS = 8
#: Stable kernel: queries per program (one warp), and how many programs to aim for.
STABLE_BQ = 32
STABLE_PROGRAMS = 32768
#: Distances counted by sums instead of histogram bins, at most (64-bit codes: one, d = 64).
MAX_OVER = 2
SEG_MIN, SEG_MAX = 512, 16384  # SEG_MAX * 2**48 < 2**63: a segment's sum fits int64
GRID_MAX = 65535


@triton.jit
def _popc(x, HW: tl.constexpr):
    """Set bits of int32 words: the GPU's popcount instruction (``HW``), or shift-and-mask
    (about a dozen integer operations; what Triton's interpreter can run)."""
    if HW:
        return libdevice.popc(x)
    else:
        x = x - ((x >> 1) & 0x55555555)
        x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
        x = (x + (x >> 4)) & 0x0F0F0F0F
        return (x * 0x01010101) >> 24


@triton.jit
def _histogram_kernel(
    q_ptr,
    d_ptr,
    ql_ptr,
    dl_ptr,
    out_ptr,
    nq,
    ndb,
    blocks_per_seg,
    nseg,
    NW: tl.constexpr,
    NLW: tl.constexpr,
    MULTI: tl.constexpr,
    BQ: tl.constexpr,
    BN: tl.constexpr,
    NB: tl.constexpr,
    NBOUT: tl.constexpr,
    NOVER: tl.constexpr,
    HW: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_q = tl.program_id(1)
    cols = pid_n * BN + tl.arange(0, BN)
    valid = cols < ndb
    seg = pid_n // blocks_per_seg
    bins = tl.arange(0, NB)
    d0 = tl.load(d_ptr + cols, mask=valid, other=0)
    if NW > 1:
        d1 = tl.load(d_ptr + ndb + cols, mask=valid, other=0)
    if NW > 2:
        d2 = tl.load(d_ptr + 2 * ndb + cols, mask=valid, other=0)
    if NW > 3:
        d3 = tl.load(d_ptr + 3 * ndb + cols, mask=valid, other=0)
    if not MULTI:
        dlab = tl.load(dl_ptr + cols, mask=valid, other=0)
    for i in tl.static_range(BQ):
        row = pid_q * BQ + i
        row_ok = row < nq
        r = tl.minimum(row, nq - 1)
        dist = _popc(d0 ^ tl.load(q_ptr + r * NW), HW)
        if NW > 1:
            dist += _popc(d1 ^ tl.load(q_ptr + r * NW + 1), HW)
        if NW > 2:
            dist += _popc(d2 ^ tl.load(q_ptr + r * NW + 2), HW)
        if NW > 3:
            dist += _popc(d3 ^ tl.load(q_ptr + r * NW + 3), HW)
        if MULTI:
            hit = tl.zeros([BN], dtype=tl.int32)
            for w in tl.static_range(NLW):
                hit = hit | (
                    tl.load(dl_ptr + w * ndb + cols, mask=valid, other=0)
                    & tl.load(ql_ptr + r * NLW + w)
                )
            rel = hit != 0
        else:
            rel = dlab == tl.load(ql_ptr + r)
        key = dist * 2 + rel.to(tl.int32)
        base = out_ptr + r * NBOUT * nseg + seg  # row r, bin b, segment seg: b * nseg apart
        if NOVER > 0:
            # the few largest distances (2 d + 1 >= NB) are counted by two sums each, so that
            # the histogram has half the bins (its cost grows with them)
            fits = dist < NB // 2
            h = tl.histogram(tl.where(fits, key, 0), NB, mask=valid & fits)
            for v in tl.static_range(NOVER):
                at = valid & (dist == NB // 2 + v)
                n_at = tl.sum(at.to(tl.int32), axis=0)
                r_at = tl.sum((at & rel).to(tl.int32), axis=0)
                tl.atomic_add(
                    base + 2 * (NB // 2 + v) * nseg,
                    n_at - r_at,
                    mask=row_ok & (n_at > r_at),
                    sem="relaxed",
                )
                tl.atomic_add(
                    base + (2 * (NB // 2 + v) + 1) * nseg,
                    r_at,
                    mask=row_ok & (r_at > 0),
                    sem="relaxed",
                )
        else:
            h = tl.histogram(key, NB, mask=valid)
        tl.atomic_add(base + bins * nseg, h, mask=(h > 0) & row_ok, sem="relaxed")


@triton.jit
def _stable_item(
    j, ndb, q0, q1, q2, q3, qlab, rows, live, ql_ptr, dl_ptr, d_ptr, base, nseg,
    NW: tl.constexpr, NLW: tl.constexpr, MULTI: tl.constexpr, BQ: tl.constexpr,
    HW: tl.constexpr,
):  # fmt: skip
    """Database item ``j`` against the program's queries: whether it counts (``here``),
    whether it is relevant, and the offset of its counters (its distance's)."""
    ok = j < ndb
    dist = _popc(q0 ^ tl.load(d_ptr + j, mask=ok, other=0), HW)
    if NW > 1:
        dist += _popc(q1 ^ tl.load(d_ptr + ndb + j, mask=ok, other=0), HW)
    if NW > 2:
        dist += _popc(q2 ^ tl.load(d_ptr + 2 * ndb + j, mask=ok, other=0), HW)
    if NW > 3:
        dist += _popc(q3 ^ tl.load(d_ptr + 3 * ndb + j, mask=ok, other=0), HW)
    here = live & ok
    if MULTI:
        hit = tl.zeros([BQ], dtype=tl.int32)
        for w in tl.static_range(NLW):
            hit = hit | (
                tl.load(ql_ptr + rows * NLW + w, mask=live, other=0)
                & tl.load(dl_ptr + w * ndb + j, mask=ok, other=0)
            )
        rel = (hit != 0) & here
    else:
        rel = (qlab == tl.load(dl_ptr + j, mask=ok, other=-2)) & here
    return here, rel, base + dist * nseg


@triton.jit
def _stable_add(before, seen_before, here, rel, acc, cnt, ks, cut, SCALE: tl.constexpr):
    """Add an item to the program's sums: ``seen / rank`` (an integer of 2**-48, truncated)
    for a relevant item inside the cut, and to the count of each k its rank is within."""
    rank = tl.where(here, before + 1, 1)
    seen = tl.where(rel, seen_before + 1, 0)
    fixed = (seen.to(tl.float64) / rank.to(tl.float64) * SCALE).to(tl.int64)
    acc += tl.where(rel & (rank <= cut), fixed, 0)
    cnt += (rel[:, None] & (rank[:, None] <= ks[None, :])).to(tl.int32)
    return acc, cnt


@triton.jit
def _stable_kernel(
    q_ptr,
    d_ptr,
    ql_ptr,
    dl_ptr,
    start_n_ptr,
    start_r_ptr,
    ks_ptr,
    acc_ptr,
    cnt_ptr,
    nq,
    ndb,
    nseg,
    W,
    cut,
    SEG: tl.constexpr,
    NW: tl.constexpr,
    NLW: tl.constexpr,
    MULTI: tl.constexpr,
    BQ: tl.constexpr,
    NK: tl.constexpr,
    SCALE: tl.constexpr,
    HW: tl.constexpr,
):
    seg = tl.program_id(0)
    pid_q = tl.program_id(1)
    rows = pid_q * BQ + tl.arange(0, BQ)
    live = rows < nq
    q0 = tl.load(q_ptr + rows * NW, mask=live, other=0)
    q1 = q0  # words past NW are never read
    q2 = q0
    q3 = q0
    if NW > 1:
        q1 = tl.load(q_ptr + rows * NW + 1, mask=live, other=0)
    if NW > 2:
        q2 = tl.load(q_ptr + rows * NW + 2, mask=live, other=0)
    if NW > 3:
        q3 = tl.load(q_ptr + rows * NW + 3, mask=live, other=0)
    qlab = rows  # read only with class ids
    if not MULTI:
        qlab = tl.load(ql_ptr + rows, mask=live, other=-1)
    base = rows * W * nseg + seg  # counters by row, distance, segment: d * nseg apart
    ks = tl.load(ks_ptr + tl.arange(0, NK))
    acc = tl.zeros([BQ], dtype=tl.int64)
    cnt = tl.zeros([BQ, NK], dtype=tl.int32)
    start = seg * SEG
    # two items a step (SEG is a power of two): their four counters are taken before any is
    # read, so the waits overlap; counters of one query are one thread's, taken in item order
    # (one thread's atomics on one address are ordered), so the ranks are the same
    for t in range(0, SEG, 2):
        here0, rel0, at0 = _stable_item(
            start + t, ndb, q0, q1, q2, q3, qlab, rows, live, ql_ptr, dl_ptr, d_ptr, base,
            nseg, NW, NLW, MULTI, BQ, HW,
        )  # fmt: skip
        here1, rel1, at1 = _stable_item(
            start + t + 1, ndb, q0, q1, q2, q3, qlab, rows, live, ql_ptr, dl_ptr, d_ptr, base,
            nseg, NW, NLW, MULTI, BQ, HW,
        )  # fmt: skip
        before0 = tl.atomic_add(start_n_ptr + at0, 1, mask=here0, sem="relaxed")
        seen0 = tl.atomic_add(start_r_ptr + at0, 1, mask=rel0, sem="relaxed")
        before1 = tl.atomic_add(start_n_ptr + at1, 1, mask=here1, sem="relaxed")
        seen1 = tl.atomic_add(start_r_ptr + at1, 1, mask=rel1, sem="relaxed")
        acc, cnt = _stable_add(before0, seen0, here0, rel0, acc, cnt, ks, cut, SCALE)
        acc, cnt = _stable_add(before1, seen1, here1, rel1, acc, cnt, ks, cut, SCALE)
    tl.store(acc_ptr + rows * nseg + seg, acc, mask=live)
    tl.store(
        cnt_ptr + (rows * nseg + seg)[:, None] * NK + tl.arange(0, NK)[None, :],
        cnt,
        mask=live[:, None],
    )


#: Whether the kernels use the GPU's popcount instruction (on CUDA): true until a kernel
#: with it fails there (then the shift-and-mask popcount runs from then on).
_POPC_INSTRUCTION = {"usable": True}


def _launch(kernel, grid, device, *args, **kwargs) -> None:
    """Launch ``kernel`` on ``grid``: with the popcount instruction on CUDA, the
    shift-and-mask popcount elsewhere (Triton's interpreter), or on CUDA after a launch
    with the instruction failed once (a compiler without it); a failure that is not the
    instruction's fails again without it, and is raised."""
    if device.type == "cuda" and _POPC_INSTRUCTION["usable"]:
        try:
            kernel[grid](*args, HW=True, **kwargs)
            return
        except Exception:  # pragma: no cover - needs a GPU whose compiler refuses it
            _POPC_INSTRUCTION["usable"] = False
    kernel[grid](*args, HW=False, **kwargs)


def _words(bits: int, labels: int | None) -> tuple[int, int]:
    """32-bit words of a code of ``bits`` bits and of a row of ``labels`` 0/1 labels (None:
    class ids, one word)."""
    return -(-bits // 32), 1 if labels is None else -(-labels // 32)


def _fits(words: int, label_words: int) -> bool:
    """The kernels take at most :data:`MAX_WORDS` code words, :data:`MAX_LABEL_WORDS` label
    words (longer ones go to the torch engine)."""
    return words <= MAX_WORDS and label_words <= MAX_LABEL_WORDS


def takes(placed) -> bool:
    """Whether the kernels take these inputs (:class:`~metrics_core.hashing.device.Placed`)."""
    labels = int(placed.ql.shape[1]) if placed.ql.ndim == 2 else None
    return _fits(*_words(int(placed.qt.shape[1]), labels))


def settings() -> tuple:
    """The block sizes and popcount the histogram kernel runs with (a captured graph
    holds them)."""
    return HIST_BN, HIST_BQ, HIST_WARPS, _POPC_INSTRUCTION["usable"]


def _pow2(x: int) -> int:
    return 1 << max(0, int(x) - 1).bit_length()


def _packed(inp: DeviceInputs):
    """Codes and labels as the kernels read them: query rows (queries, words) and database
    columns (words, items) of int32; class ids (int64: compared, never cast), or label words
    like the codes."""
    qw = pack_words(inp.qbits).contiguous()
    dw = pack_words(inp.dbits).T.contiguous()
    if inp.multi:
        return qw, dw, pack_words(inp.qlab).contiguous(), pack_words(inp.dlab).T.contiguous()
    return qw, dw, inp.qlab.contiguous(), inp.dlab.contiguous()


def _histograms(qw, dw, ql, dl, multi, nlw, width, seg_len, nseg):
    """(rows, width, 2, nseg) int32: per query, distance and database segment, the items
    not relevant and the relevant items (a segment's counts of one distance side by side)."""
    nq, nw = qw.shape
    ndb = dw.shape[1]
    nb = _pow2(2 * width)  # a row of the output: every key 2 d + relevant
    bins, over = nb // 2, width - nb // 4  # the histogram's bins when the distances d >= nb / 4
    if not 0 < over <= MAX_OVER:  # (the few largest) are counted by sums instead
        bins, over = nb, 0
    bn = min(HIST_BN, seg_len)
    out = torch.zeros(nq * nseg * nb, dtype=torch.int32, device=qw.device)
    for lo in range(0, nq, GRID_MAX * HIST_BQ):
        hi = min(nq, lo + GRID_MAX * HIST_BQ)
        grid = (triton.cdiv(ndb, bn), triton.cdiv(hi - lo, HIST_BQ))
        _launch(
            _histogram_kernel,
            grid,
            qw.device,
            qw[lo:hi],
            dw,
            ql[lo:hi],
            dl,
            out[lo * nseg * nb :],
            hi - lo,
            ndb,
            seg_len // bn,
            nseg,
            NW=nw,
            NLW=nlw,
            MULTI=multi,
            BQ=HIST_BQ,
            BN=bn,
            NB=bins,
            NBOUT=nb,
            NOVER=over,
            num_warps=HIST_WARPS,
        )
    return out.view(nq, nb, nseg)[:, : 2 * width].view(nq, width, 2, nseg)  # no copy


def triton_counts(inp: DeviceInputs, memory_budget: int, stable: tuple | None = None):
    """The Triton engine: ``(n, r, StableCounts or None)`` as
    :func:`metrics_core.hashing.device.torch_counts` returns them; the stable pass's chunks
    of queries sized by :func:`~metrics_core.hashing.device.memory_for`. The kernels are
    launched on the inputs' GPU (Triton launches on the current device)."""
    with current_device_is(inp.qbits.device):
        return _triton_counts(inp, memory_budget, stable)


def _triton_counts(inp: DeviceInputs, memory_budget: int, stable: tuple | None):
    nq, ndb = inp.qbits.shape[0], inp.dbits.shape[0]
    nw, nlw = _words(inp.bits, int(inp.qlab.shape[1]) if inp.multi else None)
    if not _fits(nw, nlw):
        return torch_counts(inp, memory_budget, stable)
    qw, dw, ql, dl = _packed(inp)
    width = inp.bits + 1
    if stable is None:
        h = _histograms(qw, dw, ql, dl, inp.multi, nlw, width, _pow2(ndb), 1)[..., 0]
        return h.sum(dim=2), h[:, :, 1], None  # int64 items, int32 relevant (a view)
    budget = memory_for(qw.device, memory_budget)
    cut, ks = stable
    ks_all = [ndb if cut is None else min(int(cut), ndb)] + [min(int(k), ndb) for k in ks]
    nk = _pow2(len(ks_all))
    ks_t = torch.zeros(nk, dtype=torch.int32, device=qw.device)
    ks_t[: len(ks_all)] = torch.tensor(ks_all, dtype=torch.int32)
    q_blocks = triton.cdiv(nq, STABLE_BQ)
    seg_len = min(SEG_MAX, max(SEG_MIN, _pow2(triton.cdiv(ndb * q_blocks, STABLE_PROGRAMS))))
    nseg = triton.cdiv(ndb, seg_len)
    nb = _pow2(2 * width)
    per_query = nseg * (nb + 4 * width + 2 * nk + 4) * 4
    chunk = max(STABLE_BQ, min(nq, budget // per_query) // STABLE_BQ * STABLE_BQ)
    chunk = min(chunk, GRID_MAX * STABLE_BQ)
    n_parts, r_parts, hi_parts, lo_parts, cnt_parts = [], [], [], [], []
    for lo in range(0, nq, chunk):
        hi = min(nq, lo + chunk)
        rows = hi - lo
        h = _histograms(qw[lo:hi], dw, ql[lo:hi], dl, inp.multi, nlw, width, seg_len, nseg)
        # items and relevant items by row, distance and segment (int32: at most the database)
        counts = torch.stack((h[:, :, 0] + h[:, :, 1], h[:, :, 1]))
        del h
        flat = counts.view(2, rows, width * nseg)
        # the items (relevant items) ranked before each distance and segment's first: those
        # at a smaller distance, then those at that distance in earlier segments; in the
        # order distance, then segment, an exclusive cumulative sum
        starts = torch.cumsum(flat, dim=2, dtype=torch.int32)
        starts -= flat
        start_n, start_r = starts[0], starts[1]
        n_tot, r_tot = counts.sum(dim=3)  # int64 histograms
        del counts, flat
        acc = torch.zeros(rows * nseg, dtype=torch.int64, device=qw.device)
        cnt = torch.zeros(rows * nseg * nk, dtype=torch.int32, device=qw.device)
        grid = (nseg, triton.cdiv(rows, STABLE_BQ))
        _launch(
            _stable_kernel,
            grid,
            qw.device,
            qw[lo:hi],
            dw,
            ql[lo:hi],
            dl,
            start_n,
            start_r,
            ks_t,
            acc,
            cnt,
            rows,
            ndb,
            nseg,
            width,
            ks_all[0],
            SEG=seg_len,
            NW=nw,
            NLW=nlw,
            MULTI=inp.multi,
            BQ=STABLE_BQ,
            NK=nk,
            SCALE=float(2**FIXED_BITS),
            num_warps=max(1, STABLE_BQ // 32),
        )
        acc = acc.view(rows, nseg)
        n_parts.append(n_tot)
        r_parts.append(r_tot)
        hi_parts.append((acc >> SPLIT_BITS).sum(dim=1))
        lo_parts.append((acc & ((1 << SPLIT_BITS) - 1)).sum(dim=1))
        cnt_parts.append(cnt.view(rows, nseg, nk).sum(dim=1))
    counts = torch.cat(cnt_parts)
    out = stable_to_host(
        torch.cat(hi_parts),
        torch.cat(lo_parts),
        counts[:, 0],
        [counts[:, 1 + i] for i in range(len(ks))],
        ks,
    )
    return torch.cat(n_parts), torch.cat(r_parts), out


def compiled_for(kernel: str, *, arch: int = 90, popcount: bool = True, multi: bool = False):
    """One kernel (``"histogram"`` or ``"stable"``) compiled as a GPU of compute capability
    ``arch`` runs it (9.0: H100), by Triton and the ptxas of its wheel: no GPU needed. For
    checks (the kernels compile with and without the popcount instruction) and instruction
    counts (``bench/bench_hashing_kernels.py``). ``multi``: label words (multi-label rows)
    instead of int64 class ids. Returns Triton's compiled kernel (``.asm`` holds the PTX
    and the cubin)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    labels = "*i32" if multi else "*i64"
    nw, nlw = (4, MAX_LABEL_WORDS) if multi else (2, 1)
    if kernel == "histogram":
        fn, warps = _histogram_kernel, HIST_WARPS
        types = {"q_ptr": "*i32", "d_ptr": "*i32", "ql_ptr": labels, "dl_ptr": labels}
        types |= {"out_ptr": "*i32", "nq": "i32", "ndb": "i32", "blocks_per_seg": "i32"}
        nb, nover = (256, 0) if multi else (128, 1)  # 128 bits; 64 bits: the last by sums
        # one segment: the histograms alone (Triton specialises an integer argument of 1)
        constants: dict = dict(nseg=1, NW=nw, NLW=nlw, MULTI=multi, BQ=HIST_BQ, BN=HIST_BN)
        constants |= dict(NB=nb, NBOUT=256, NOVER=nover)
    else:
        fn, warps = _stable_kernel, max(1, STABLE_BQ // 32)
        types = {"q_ptr": "*i32", "d_ptr": "*i32", "ql_ptr": labels, "dl_ptr": labels}
        types |= {"start_n_ptr": "*i32", "start_r_ptr": "*i32", "ks_ptr": "*i32"}
        types |= {"acc_ptr": "*i64", "cnt_ptr": "*i32", "nq": "i32", "ndb": "i32"}
        types |= {"nseg": "i32", "W": "i32", "cut": "i32"}
        constants = dict(SEG=SEG_MIN, NW=nw, NLW=nlw, MULTI=multi, BQ=STABLE_BQ, NK=4)
        constants |= dict(SCALE=float(2**FIXED_BITS))
    constants["HW"] = popcount
    signature = {**types, **dict.fromkeys(constants, "constexpr")}
    where = {(fn.arg_names.index(name),): value for name, value in constants.items()}
    source = ASTSource(fn=fn, signature=signature, constexprs=where)
    return triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"num_warps": warps})


__all__ = ["triton_counts", "takes", "settings", "compiled_for", "MAX_WORDS", "MAX_LABEL_WORDS"]
