"""Fast exact work on large Arrow string columns.

Building a dictionary of ten million document ids costs seconds; RankLab needs only
(1) to find equal (query, doc) pairs and (2) to join run rows with judged pairs. Both
work on 64-bit fingerprints of the strings, folded from 8-byte words gathered out of
Arrow's byte buffer; every pair found equal by fingerprint is then checked by comparing
the strings themselves, so a fingerprint collision can never change a result. (3) The
order of tied documents compares the strings themselves, a few bytes a round.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_WORD_MULT = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it is a bijection
_LEN_MULT = np.uint64(0xD6E8FEB86659FD93)
#: rows fingerprinted at a time (slices of a longer array)
_HASH_SLICE = 1 << 15
#: _LOW_BYTES[r]: mask of the low r bytes of a little-endian word (r = 0..8)
_LOW_BYTES = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place: spreads every input bit over the output."""
    with np.errstate(over="ignore"):
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def _mix_low_bits(h: np.ndarray, bits: int) -> np.ndarray:
    """A bijection of the values below 2**bits, in place (odd multipliers modulo 2**bits
    and xor-shifts): spreads exact codes over the bits without any two meeting."""
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2**64 - 1)
    shift = np.uint64(max(bits // 2, 1))
    with np.errstate(over="ignore"):
        for mult in (0xBF58476D1CE4E5B9, 0x94D049BB133111EB):
            h *= np.uint64(mult)
            h &= mask
            h ^= h >> shift
    return h


def _shifted_words(data: np.ndarray) -> tuple[np.ndarray, int]:
    """The bytes of ``data`` as aligned little-endian uint64 words, 8 times: row ``s``
    of the (8, n_words) result holds the words that start at byte ``8 j + s``.

    A gather from aligned words is several times faster than one from a byte-strided
    view; the copies cost 8 bytes per byte of one chunk, transient.
    """
    n_words = (len(data) + 7) // 8 + 1
    padded = np.zeros(n_words * 8 + 8, dtype=np.uint8)
    padded[: len(data)] = data
    shifted = np.empty((8, n_words), dtype=np.uint64)
    for s in range(8):
        shifted[s] = np.frombuffer(padded, dtype="<u8", count=n_words, offset=s)
    return shifted.ravel(), n_words


def hash_strings(arr: pa.Array, out: np.ndarray | None = None) -> np.ndarray:
    """64-bit fingerprint of every string of an Arrow string array (no nulls).

    The string's bytes are taken 8 at a time (one gather per word from aligned shifted
    copies of Arrow's buffer, the bytes past the end masked off) and folded in:
    ``h <- (h xor word) * M; h ^= h >> 32``, starting from ``len * L``. A 10-byte id
    costs two gathers. Equal strings get equal fingerprints wherever they sit (chunks,
    slices); different strings almost surely differ, and the engine checks every match
    string by string. Not finalised: :func:`pair_keys` mixes the bits. ``out``: the
    array (uint64, one per string) that receives them.

    >>> import pyarrow as pa
    >>> h = hash_strings(pa.array(["ab", "ba", "ab", ""]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    if out is None:
        out = np.empty(len(arr), dtype=np.uint64)
    if isinstance(arr, pa.ChunkedArray):
        at = 0
        for chunk in arr.chunks:
            hash_strings(chunk, out[at : at + len(chunk)])
            at += len(chunk)
        return out
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        arr = arr.cast(pa.string())
    n = len(arr)
    if n > _HASH_SLICE:
        # in slices whose shifted copies stay in the processor's cache: 2.2 times faster
        # than one pass over a 100,000-row chunk (a whole file's Arrow block)
        for lo in range(0, n, _HASH_SLICE):
            hash_strings(arr.slice(lo, _HASH_SLICE), out[lo : lo + _HASH_SLICE])
        return out
    if n == 0:
        return out
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=n + 1, offset=arr.offset * 4)
    lengths = np.diff(offsets)
    buf = arr.buffers()[2]
    data = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, dtype=np.uint8)
    lo, hi = int(offsets[0]), int(offsets[-1])  # the bytes of these strings only
    words, n_words = _shifted_words(data[lo:hi])
    start = offsets[:-1] - lo
    # word k of string i: row (start % 8), column start // 8 + k
    idx = (start & 7).astype(np.int64) * n_words + (start >> 3)
    with np.errstate(over="ignore"):
        h = out
        np.multiply(lengths, _LEN_MULT, out=h, dtype=np.uint64, casting="unsafe")
        rows = None  # None: all strings (each has bytes at this word, or k = 0)
        k, longest = 0, int(lengths.max())
        while k < longest:
            w = words[idx] if rows is None else words[idx[rows]]
            rest = (lengths if rows is None else lengths[rows]) - k
            if (rest < 8).any():
                w &= _LOW_BYTES[np.minimum(rest, 8)]
            hk = h if rows is None else h[rows]
            hk ^= w
            hk *= _WORD_MULT
            hk ^= hk >> np.uint64(32)
            if rows is not None:
                h[rows] = hk
            k += 8
            idx += 1
            more = lengths > k if rows is None else lengths[rows] > k
            if not more.all():
                rows = np.flatnonzero(more) if rows is None else rows[more]
                if len(rows) == 0:
                    break
    return h


def pair_keys(
    query_codes: np.ndarray,
    doc_hashes: np.ndarray,
    n_queries: int,
    out: np.ndarray | None = None,
    exact: bool = False,
) -> np.ndarray:
    """Fingerprint of (query, doc) pairs from query codes (0 .. ``n_queries`` - 1) and
    doc-string fingerprints.

    The query code fills the high bits, exactly; the mixed doc fingerprint the rest. So
    the keys order by query first: the keys of rows grouped by query in ascending code
    order are sorted by sorting each query's rows (:func:`sort_by_query`). Equal pairs
    get equal keys; different documents of one query share a key with probability
    2**-(64 - query bits), and every match is checked string by string.

    ``out=doc_hashes`` computes in place (the doc fingerprints are then gone), which saves
    one array the size of the run. ``exact=True``: ``doc_hashes`` are exact document
    codes (below 2**(64 - query bits)), spread by a bijection of the low bits, so
    different pairs always get different keys.

    >>> import pyarrow as pa
    >>> h = hash_strings(pa.array(["a", "b", "a"]))
    >>> k = pair_keys(np.array([0, 0, 1]), h, n_queries=2)
    >>> bool(k[0] < k[2]), bool(k[1] < k[2]), bool(k[0] != k[1])
    (True, True, True)
    """
    q_bits = max(int(n_queries - 1).bit_length(), 1)
    shift = np.uint64(64 - q_bits)
    k = np.empty(len(doc_hashes), dtype=np.uint64) if out is None else out
    block = 1 << 20
    for i in range(0, len(k), block):
        part = k[i : i + block]
        if k is not doc_hashes:
            part[:] = doc_hashes[i : i + block]
        if exact:
            _mix_low_bits(part, 64 - q_bits)
        else:
            _mix(part)
            part >>= np.uint64(q_bits)
        part |= query_codes[i : i + block].astype(np.uint64) << shift
    return k


def sort_by_query(keys: np.ndarray, query_codes: np.ndarray, chunk: int = 1 << 12) -> np.ndarray:
    """Sort keys of :func:`pair_keys` in place; returns ``keys``.

    When the rows are grouped by query in ascending code order (a run or qrels file
    written query by query, the usual case), the sorted array is the rows of each query
    sorted: they are sorted in pieces of whole queries of about ``chunk`` rows, which fit
    in the processor's cache (2.5 times faster than one sort of a million keys).
    Otherwise one sort of the whole array.
    """
    n = len(keys)
    if n > chunk and bool(np.all(query_codes[1:] >= query_codes[:-1])):
        starts = np.flatnonzero(query_codes[1:] != query_codes[:-1]) + 1
        _sort_pieces(keys, starts, chunk)
        return keys
    keys.sort()
    return keys


def sort_query_chunks(keys: np.ndarray, counts: np.ndarray, chunk: int = 1 << 12) -> np.ndarray:
    """Sort in place keys whose high bits are a query code, the array grouped by query
    in ascending code order (``counts[q]`` keys of query ``q``, in that order); returns
    ``keys``. The result is the one of ``keys.sort()``: every key of a query is below
    every key of a later one, so pieces of whole queries of about ``chunk`` keys are
    sorted one by one (each fits in the processor's cache: 2.5 times faster than one
    sort of a million keys)."""
    if len(keys) > chunk:
        _sort_pieces(keys, np.cumsum(counts)[:-1], chunk)
    else:
        keys.sort()
    return keys


def _sort_pieces(keys: np.ndarray, starts: np.ndarray, chunk: int) -> None:
    """Sort ``keys`` in pieces cut at some of ``starts`` (ascending), about ``chunk`` apart."""
    n = len(keys)
    at = np.searchsorted(starts, np.arange(chunk, n, chunk))
    cuts = np.unique(starts[at[at < len(starts)]]).tolist()
    lo = 0
    for hi in [*cuts, n]:
        if hi > lo:
            keys[lo:hi].sort()
        lo = hi


def string_order(ids) -> np.ndarray:
    """Indexes that sort ``ids`` (a list or an Arrow array of strings) as Python's
    ``sorted`` does (code point order, which is UTF-8 byte order), ties in input order.

    >>> string_order(["q10", "q2", "Q1", "q1"]).tolist()
    [2, 3, 0, 1]
    """
    arr = (
        ids
        if isinstance(ids, (pa.Array, pa.ChunkedArray))
        else pa.array(list(ids), type=pa.string())
    )
    if not len(arr):
        return np.zeros(0, dtype=np.int64)
    import pyarrow.compute as pc

    return pc.sort_indices(arr).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def strings_equal(a: pa.Array, rows_a: np.ndarray, b: pa.Array, rows_b: np.ndarray) -> np.ndarray:
    """Elementwise ``a[rows_a] == b[rows_b]`` (exact check of fingerprint matches).

    On arrays of one buffer each: equal lengths, then the strings' bytes 8 at a time
    (words loaded from Arrow's buffers), each round only on the pairs equal so far; else
    :func:`strings_compare`."""
    one_a, one_b = _one_buffer(a), _one_buffer(b)
    if one_a is None or one_b is None or len(rows_a) == 0:
        return strings_compare(a, rows_a, b, rows_b) == 0
    word_a, off_a = _words_from(one_a, big_endian=False)
    word_b, off_b = (word_a, off_a) if one_b is one_a else _words_from(one_b, big_endian=False)
    rows_a = np.asarray(rows_a, dtype=np.int64)
    rows_b = np.asarray(rows_b, dtype=np.int64)
    start_a, start_b = off_a[rows_a], off_b[rows_b]
    length = off_a[rows_a + 1] - start_a
    equal = length == off_b[rows_b + 1] - start_b
    todo = np.flatnonzero(equal & (length > 0))
    start_a, start_b, rest = start_a[todo], start_b[todo], length[todo]
    while len(todo):
        same = word_a(start_a, rest) == word_b(start_b, rest)
        equal[todo[~same]] = False
        more = same & (rest > 8)
        todo, start_a, start_b = todo[more], start_a[more] + 8, start_b[more] + 8
        rest = rest[more] - 8
    return equal


#: _HIGH_BYTES[r]: mask of the high r bytes of a big-endian word (r = 0..8)
_HIGH_BYTES = np.array(
    [0] + [(2**64 - 1) ^ ((1 << (64 - 8 * r)) - 1) for r in range(1, 9)], dtype=np.uint64
)


def _one_buffer(arr) -> pa.Array | None:
    """The Arrow string array behind ``arr`` when it is one (a chunked array of one chunk
    included), else None."""
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks != 1:
            return None
        arr = arr.chunk(0)
    return arr if pa.types.is_string(arr.type) and arr.null_count == 0 else None


def _words_from(arr: pa.Array, big_endian: bool = True):
    """A function giving the words (``big_endian``: in byte order; else as loaded) of the
    bytes from ``start`` (``rest`` bytes left in each string: zero past its end; 8-byte
    loads from Arrow's buffer, the last 7 bytes read by a load that ends at the buffer's
    end, shifted), and the array's offsets."""
    offsets = np.frombuffer(
        arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4
    )
    buf = arr.buffers()[2]
    data = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, np.uint8)
    if len(data) < 8:
        data = np.r_[data, np.zeros(8, np.uint8)]
    last = len(data) - 8
    words = np.ndarray((last + 1,), dtype="<u8", buffer=data, strides=(1,))

    def word(start: np.ndarray, rest: np.ndarray) -> np.ndarray:
        at = np.minimum(start, last)
        w = words[at]
        if big_endian:
            w = w.byteswap()
        if (at != start).any():  # the buffer's last bytes: drop the ones before ``start``
            shift = ((start - at) * 8).astype(np.uint64)
            if big_endian:
                w <<= shift
            else:
                w >>= shift
        w &= (_HIGH_BYTES if big_endian else _LOW_BYTES)[np.clip(rest, 0, 8)]
        return w

    return word, offsets


def strings_compare(a: pa.Array, rows_a: np.ndarray, b: pa.Array, rows_b: np.ndarray) -> np.ndarray:
    """Elementwise -1, 0 or 1 as ``a[rows_a]`` is below, equal to or above ``b[rows_b]`` in
    byte order (code point order; a string before every longer one it begins), exact.

    On arrays of one buffer each the strings are compared 8 bytes a round (big-endian words
    loaded from Arrow's buffers), each round only on the pairs equal so far: no string is
    copied. Otherwise by Arrow's comparisons of the strings taken.

    >>> v = pa.array(["abcdefghij", "abcdefghik", "ab", "ab"])
    >>> strings_compare(v, np.array([0, 1, 2, 2]), v, np.array([1, 0, 0, 3])).tolist()
    [-1, 1, -1, 0]
    """
    n = len(rows_a)
    out = np.zeros(n, dtype=np.int8)
    if n == 0:
        return out
    one_a, one_b = _one_buffer(a), _one_buffer(b)
    if one_a is None or one_b is None:
        import pyarrow.compute as pc

        x, y = a.take(pa.array(rows_a)), b.take(pa.array(rows_b))
        for value, fn in ((-1, pc.less), (1, pc.greater)):
            hit = fn(x, y)
            if isinstance(hit, pa.ChunkedArray):
                hit = hit.combine_chunks()
            out[hit.to_numpy(zero_copy_only=False)] = value
        return out
    word_a, off_a = _words_from(one_a)
    word_b, off_b = word_a, off_a
    if one_b is not one_a:
        word_b, off_b = _words_from(one_b)
    rows_a = np.asarray(rows_a, dtype=np.int64)
    rows_b = np.asarray(rows_b, dtype=np.int64)
    start_a, start_b = off_a[rows_a], off_b[rows_b]
    len_a, len_b = off_a[rows_a + 1] - start_a, off_b[rows_b + 1] - start_b
    todo = np.arange(n)
    k = 0
    while len(todo):
        wa, wb = word_a(start_a, len_a - k), word_b(start_b, len_b - k)
        cmp = (wa > wb).astype(np.int8) - (wa < wb)
        more = (cmp == 0) & (len_a > k + 8) & (len_b > k + 8)
        # equal words, one string ended: the shorter is below (it begins the longer)
        ended = (cmp == 0) & ~more
        cmp[ended] = (len_a[ended] > len_b[ended]).astype(np.int8) - (len_a[ended] < len_b[ended])
        out[todo] = cmp
        todo = todo[more]
        start_a, start_b = start_a[more] + 8, start_b[more] + 8
        len_a, len_b = len_a[more], len_b[more]
        k += 8
    return out


def stable_argsort_codes(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Stable argsort of small non-negative integer codes (radix passes on 16-bit digits)."""
    if n_codes <= 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    high = (codes[order] >> 16).astype(np.uint16 if n_codes <= 1 << 32 else np.int64)
    return order[np.argsort(high, kind="stable")]


def _bytes_at(offsets: np.ndarray, data: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """Bytes k..k+7 of strings ``idx`` as big-endian uint64, zero past the string's end.

    One unaligned 8-byte load per string (a byte-strided view of the buffer, padded so
    the load never runs off the end). Zero padding keeps strcmp's order: ids never hold a
    NUL byte, and a string that ends sorts before any longer one with the same prefix.
    """
    start = offsets[idx] + k
    rest = (offsets[idx + 1] - offsets[idx]) - k
    words = np.ndarray((max(len(data) - 7, 0),), dtype="<u8", buffer=data, strides=(1,))
    w = (
        words[np.minimum(start, max(len(words) - 1, 0))].byteswap()
        if len(words)
        else np.zeros(len(idx), dtype=np.uint64)
    )
    short = rest < 8
    if short.any():  # keep the first `rest` bytes (the high ones, big-endian)
        keep = np.clip(rest[short], 0, 8).astype(np.uint64) * np.uint64(8)
        with np.errstate(over="ignore"):
            mask = np.where(
                keep > 0, ~np.uint64(0) << (np.uint64(64) - np.maximum(keep, 1)), np.uint64(0)
            )
        w[short] &= mask
    return w


def order_within_groups(
    values: pa.Array,
    group: np.ndarray,
    descending: bool,
    rows: np.ndarray | None = None,
    _key_bits: int = 64,
) -> np.ndarray:
    """Permutation sorting positions by (group ascending, string in byte order).

    ``group`` must be non-decreasing (tie groups in rank order); ``rows``: order
    ``values[rows]`` instead of ``values``. Exact: strings are
    compared a few bytes per round, and only the positions still tied after a round are
    looked at again. Each round is one plain sort of packed 64-bit keys -- (group, next
    bytes of the string, position within the group) -- not an argsort: sorting ten
    million tied ids takes a few tenths of a second. Equal strings keep their positions'
    order.

    >>> import pyarrow as pa
    >>> v = pa.array(["b", "abcdefghij", "abcdefghik", "a", "z"])
    >>> order_within_groups(v, np.array([0, 0, 0, 0, 1]), descending=False).tolist()
    [3, 1, 2, 0, 4]
    """
    if rows is not None:  # taken here, so that the copy is freed as soon as it is read
        values = values.take(pa.array(rows))
    m = len(values)
    # positions, offsets and group ids in int32 (m < 2**31): tie groups can cover the
    # whole run, and every array here is then the size of the run
    idx_type = np.int32 if m < 2**31 - 1 else np.int64
    perm = np.arange(m, dtype=idx_type)
    if m < 2:
        return perm
    offsets, data = _string_bytes(values)
    del values  # the copy above is all that is needed
    lengths = np.diff(offsets)
    # the positions still to order (into perm, in their current order), their group ids
    # (0..g-1, non-decreasing) and the byte where their strings are compared next
    todo = np.arange(m, dtype=idx_type)
    group = np.asarray(group)
    sub_group = np.zeros(m, dtype=idx_type)
    np.cumsum(group[1:] != group[:-1], out=sub_group[1:])
    k = 0
    while len(todo) > 1:
        idx = perm[todo]
        o, w, step = _sort_round(offsets, data, idx, sub_group, k, descending, idx_type, _key_bits)
        perm[todo] = idx[o]
        # still tied: runs of the same group and the same bytes, unless every string of
        # the run has ended (then they are equal and stay in position order). A string
        # that ended here goes on with the rest of its run: the next round sees its zero
        # padding and puts it first, as strcmp does.
        g = sub_group[o]
        same = (g[1:] == g[:-1]) & (w[1:] == w[:-1])
        if not same.any():
            break
        run_start = np.flatnonzero(np.r_[True, ~same]).astype(idx_type)
        run_size = np.diff(np.r_[run_start, len(o)]).astype(idx_type)
        longer = lengths[idx[o]] > k + step
        go_on = (run_size > 1) & np.logical_or.reduceat(longer, run_start)
        if not go_on.any():
            break
        keep = np.repeat(go_on, run_size)
        sub_group = np.repeat(np.cumsum(go_on, dtype=idx_type)[go_on] - 1, run_size[go_on])
        todo = todo[keep]
        k += step
    return perm


def _string_bytes(values) -> tuple[np.ndarray, np.ndarray]:
    """(offsets from 0, bytes padded with 16 zeros) of an Arrow string array: 8-byte loads
    past a string's end read zeros."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    m = len(values)
    offsets = np.frombuffer(
        values.buffers()[1], dtype=np.int32, count=m + 1, offset=values.offset * 4
    ).copy()
    buf = values.buffers()[2]
    raw = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, dtype=np.uint8)
    offsets -= offsets[0]
    raw = raw[
        int(
            np.frombuffer(values.buffers()[1], dtype=np.int32, count=1, offset=values.offset * 4)[0]
        ) :
    ][: int(offsets[-1])]
    data = np.zeros(len(raw) + 16, dtype=np.uint8)  # padded: 8-byte loads past the end
    data[: len(raw)] = raw
    return offsets, data


def _sort_round(offsets, data, idx, sub_group, k: int, descending: bool, idx_type, key_bits: int):
    """One round: the positions ``idx`` (grouped by ``sub_group``) ordered by the next
    bytes of their strings from byte ``k``. Returns the order (into ``idx``), the bytes
    compared (in that order) and how many bytes were compared."""
    n_groups = int(sub_group[-1]) + 1
    heads = np.flatnonzero(np.r_[True, sub_group[1:] != sub_group[:-1]]).astype(idx_type)
    size = np.diff(np.r_[heads, len(idx)]).astype(idx_type)
    within = np.arange(len(idx), dtype=idx_type) - np.repeat(heads, size)
    group_bits = max(n_groups - 1, 1).bit_length()
    pos_bits = max(int(size.max()) - 1, 1).bit_length()
    step = (key_bits - group_bits - pos_bits) // 8  # bytes compared this round
    if step < 1:  # > 2**28 tied ids: no room in the key, one byte per round by lexsort
        word = _bytes_at(offsets, data, idx, k) >> np.uint64(56)
        if descending:
            word = ~word & np.uint64(0xFF)
        o = np.lexsort((within, word, sub_group))
        return o, word[o], 1
    word = _bytes_at(offsets, data, idx, k) >> np.uint64(64 - 8 * step)
    if descending:
        word = ~word & np.uint64((1 << (8 * step)) - 1)
    key = sub_group.astype(np.uint64) << np.uint64(8 * step + pos_bits)
    key |= word << np.uint64(pos_bits)
    key |= within.astype(np.uint64)
    del word
    key.sort()
    # each sorted entry back to its place in todo: its group's head + its rank
    o = heads[(key >> np.uint64(8 * step + pos_bits)).astype(np.intp)].astype(idx_type)
    o += (key & np.uint64((1 << pos_bits) - 1)).astype(idx_type)
    w = (key >> np.uint64(pos_bits)) & np.uint64((1 << (8 * step)) - 1)
    return o, w, step


def encode_strings(arr) -> tuple[np.ndarray, pa.Array]:
    """Integer codes (first-appearance order) and the dictionary of an Arrow string column."""
    if isinstance(arr, pa.ChunkedArray) and pa.types.is_dictionary(arr.type):
        # already encoded by the reader, with one dictionary for all chunks; renumber in
        # order of first appearance -- a first appearance is always where the value changes
        dictionary = arr.chunk(0).dictionary if arr.num_chunks else pa.array([], pa.string())
        head_parts: list[np.ndarray] = []
        pos_parts: list[np.ndarray] = []
        at = 0
        for c in arr.chunks:
            ind = c.indices.to_numpy(zero_copy_only=False)
            if len(ind):
                ch = np.flatnonzero(np.r_[True, ind[1:] != ind[:-1]])
                head_parts.append(ind[ch])
                pos_parts.append(ch + at)
            at += len(ind)
        heads = np.concatenate(head_parts) if head_parts else np.zeros(0, dtype=np.int32)
        head_pos = np.concatenate(pos_parts) if pos_parts else np.zeros(0, dtype=np.int64)
        used, first = np.unique(heads, return_index=True)
        by_first = used[np.argsort(head_pos[first])]
        vocab = dictionary.take(pa.array(by_first, type=pa.int64()))
        remap = np.full(len(dictionary), -1, dtype=np.int32)
        remap[by_first] = np.arange(len(by_first), dtype=np.int32)
        out = np.empty(len(arr), dtype=np.int32)
        at = 0
        for c in arr.chunks:
            out[at : at + len(c)] = remap[c.indices.to_numpy(zero_copy_only=False)]
            at += len(c)
        return out, vocab
    grouped = _encode_grouped(arr)
    if grouped is not None:
        return grouped
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    enc = arr.dictionary_encode()
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return codes, enc.dictionary


def _encode_grouped(arr):
    """:func:`encode_strings` of a column whose equal values mostly sit together (a run
    or qrels written query by query): the rows where the value changes are found by one
    comparison of each value with the previous one, and only those heads are
    dictionary-encoded (first appearance among the heads is first appearance among the
    rows). None when more than one row in 16 starts a new stretch (then hashing every
    value is as cheap)."""
    n = len(arr)
    if n < 2 or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    import pyarrow.compute as pc

    changed = pc.not_equal(arr.slice(1), arr.slice(0, n - 1))
    chunks = changed.chunks if isinstance(changed, pa.ChunkedArray) else [changed]
    heads = [np.zeros(1, dtype=np.int64)]
    at = 1
    for chunk in chunks:
        heads.append(np.flatnonzero(chunk.to_numpy(zero_copy_only=False)) + at)
        at += len(chunk)
    heads = np.concatenate(heads)
    if len(heads) > n // 16:
        return None
    values = arr.take(pa.array(heads))
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    enc = values.dictionary_encode()
    head_codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    codes = np.repeat(head_codes, np.diff(np.r_[heads, n]))
    return codes, enc.dictionary
