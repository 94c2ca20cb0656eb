"""Fast exact work on large Arrow string columns.

Building a dictionary of ten million document ids costs seconds; RankLab needs only
(1) to find equal (query, doc) pairs and (2) to join run rows with judged pairs. Both
work on 64-bit fingerprints of the strings, computed by vectorised polynomial hashing
over Arrow's byte buffer; every pair found equal by fingerprint is then checked by
comparing the strings themselves, so a fingerprint collision can never change a result.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyarrow as pa

_X = np.uint64(0x9E3779B97F4A7C15)  # odd, so invertible modulo 2**64
_CHUNK_BYTES = 1 << 22


def _inverse_odd(x: np.uint64) -> np.uint64:
    """Inverse of an odd number modulo 2**64 (Newton's iteration doubles the bits)."""
    y = x
    with np.errstate(over="ignore"):
        for _ in range(6):
            y = y * (np.uint64(2) - x * y)
    return y


def _powers(base: np.uint64, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        p = np.cumprod(np.full(n, base, dtype=np.uint64), dtype=np.uint64)
    return np.concatenate((np.ones(1, dtype=np.uint64), p[:-1]))


@lru_cache(maxsize=1)
def _power_tables() -> tuple[np.ndarray, np.ndarray]:
    """x**i and x**-i for one chunk of bytes, built on first use (64 MB; not at import)."""
    return _powers(_X, _CHUNK_BYTES + 1), _powers(_inverse_odd(_X), _CHUNK_BYTES + 1)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place: spreads every input bit over the output."""
    with np.errstate(over="ignore"):
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def hash_strings(arr: pa.Array) -> np.ndarray:
    """64-bit fingerprint of every string of an Arrow string array (no nulls).

    h(s) = mix(sum_j s_j x^j + len(s) c) mod 2**64: computed per chunk of the byte buffer
    as a cumulative sum of ``byte * x**position`` rescaled by ``x**-start`` of each string,
    so the value does not depend on where the string sits in the buffer.

    >>> import pyarrow as pa
    >>> h = hash_strings(pa.array(["ab", "ba", "ab", ""]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    if isinstance(arr, pa.ChunkedArray):
        out = np.empty(len(arr), dtype=np.uint64)
        at = 0
        for chunk in arr.chunks:
            out[at:at + len(chunk)] = hash_strings(chunk)
            at += len(chunk)
        return out
    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    n = len(arr)
    out = np.zeros(n, dtype=np.uint64)
    if n == 0:
        return out
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=n + 1,
                            offset=arr.offset * 4).astype(np.int64)
    buf = arr.buffers()[2]
    data = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, dtype=np.uint8)
    _POW, _IPOW = _power_tables()
    i = 0
    with np.errstate(over="ignore"):
        while i < n:
            s0 = offsets[i]
            j = int(np.searchsorted(offsets, s0 + _CHUNK_BYTES, side="right")) - 1
            j = max(min(j, n), i + 1)
            s1 = offsets[j]
            b = data[s0:s1].astype(np.uint64)
            if s1 - s0 > _CHUNK_BYTES:  # one very long string: its own powers
                out[i] = np.sum(b * _powers(_X, len(b)), dtype=np.uint64)
            else:
                b *= _POW[: s1 - s0]
                cs = np.empty(s1 - s0 + 1, dtype=np.uint64)
                cs[0] = 0
                np.cumsum(b, dtype=np.uint64, out=cs[1:])
                st = offsets[i:j] - s0
                out[i:j] = (cs[offsets[i + 1:j + 1] - s0] - cs[st]) * _IPOW[st]
            i = j
        out += np.diff(offsets).astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93)
    return _mix(out)


def pair_keys(query_codes: np.ndarray, doc_hashes: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Fingerprint of (query, doc) pairs from query codes and doc-string fingerprints.

    ``out=doc_hashes`` computes in place (the doc fingerprints are then gone), which saves
    one array the size of the run.
    """
    k = np.empty(len(doc_hashes), dtype=np.uint64) if out is None else out
    block = 1 << 20
    with np.errstate(over="ignore"):
        for i in range(0, len(k), block):
            q = query_codes[i:i + block].astype(np.uint64)
            q += np.uint64(1)
            q *= np.uint64(0xA24BAED4963EE407)
            part = k[i:i + block]
            np.add(doc_hashes[i:i + block], q, out=part)
            _mix(part)
    return k


def strings_equal(a: pa.Array, rows_a: np.ndarray, b: pa.Array, rows_b: np.ndarray) -> np.ndarray:
    """Elementwise ``a[rows_a] == b[rows_b]`` (exact check of fingerprint matches)."""
    if len(rows_a) == 0:
        return np.zeros(0, dtype=bool)
    import pyarrow.compute as pc

    eq = pc.equal(a.take(pa.array(rows_a)), b.take(pa.array(rows_b)))
    if isinstance(eq, pa.ChunkedArray):
        eq = eq.combine_chunks()
    return eq.to_numpy(zero_copy_only=False)


def stable_argsort_codes(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Stable argsort of small non-negative integer codes (radix passes on 16-bit digits)."""
    if n_codes <= 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    high = (codes[order] >> 16).astype(np.uint16 if n_codes <= 1 << 32 else np.int64)
    return order[np.argsort(high, kind="stable")]


def _word_at(offsets: np.ndarray, data: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """Bytes k..k+7 of strings ``idx`` as big-endian uint64, zero-padded past the end.

    Zero padding keeps strcmp's order: ids never contain a NUL byte, and a string that
    ends sorts before any longer string with the same prefix.
    """
    start = offsets[idx] + k
    length = offsets[idx + 1] - offsets[idx]
    word = np.zeros(len(idx), dtype=np.uint64)
    last = max(len(data) - 1, 0)
    for j in range(8):
        has = (k + j) < length
        b = data[np.minimum(start + j, last)].astype(np.uint64) if len(data) else np.zeros(len(idx), np.uint64)
        b[~has] = 0
        word |= b << np.uint64(56 - 8 * j)
    return word


def order_within_groups(values: pa.Array, group: np.ndarray, descending: bool) -> np.ndarray:
    """Permutation sorting positions by (group ascending, string in byte order).

    ``group`` must be non-decreasing (tie groups in rank order). Exact: strings are compared
    8 bytes at a time, most significant first, and only the positions still tied after a
    word are looked at again -- short ids are settled by one integer sort. Equal strings
    keep their positions' order.

    >>> import pyarrow as pa
    >>> v = pa.array(["b", "abcdefghij", "abcdefghik", "a", "z"])
    >>> order_within_groups(v, np.array([0, 0, 0, 0, 1]), descending=False).tolist()
    [3, 1, 2, 0, 4]
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    m = len(values)
    perm = np.arange(m)
    if m < 2:
        return perm
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32, count=m + 1,
                            offset=values.offset * 4).astype(np.int64)
    buf = values.buffers()[2]
    data = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, dtype=np.uint8)
    lengths = np.diff(offsets)
    # positions (into perm) still to sort, their current group ids, and the byte offset
    todo = np.arange(m)
    sub_group = np.asarray(group, dtype=np.int64)
    k = 0
    while len(todo) > 1:
        idx = perm[todo]
        word = _word_at(offsets, data, idx, k)
        key = ~word if descending else word
        # by word (any order among equal words), then a stable radix pass by group:
        # ordered by (group, word), far cheaper than a three-key lexsort
        o = np.argsort(key)
        o = o[stable_argsort_codes(sub_group[o], int(sub_group[-1]) + 1)]
        perm[todo] = idx[o]
        # still tied: same group, same word, and a string continues past this word
        g, w = sub_group[o], key[o]
        same = (g[1:] == g[:-1]) & (w[1:] == w[:-1])
        longer = lengths[idx[o]] > k + 8
        same &= longer[1:] & longer[:-1]
        if not same.any():
            break
        in_run = np.zeros(len(o), dtype=bool)
        in_run[1:] |= same
        in_run[:-1] |= same
        keep = np.flatnonzero(in_run)
        run_id = np.cumsum(~np.r_[False, same])[keep]
        todo = todo[keep]
        sub_group = run_id
        k += 8
    return perm
