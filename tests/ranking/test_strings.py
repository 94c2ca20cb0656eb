"""Exact string helpers of the engine: fingerprints and the order inside tie groups."""

import random

import numpy as np
import pyarrow as pa
import pytest

from metrics_core.ranking.strings import (
    encode_strings,
    hash_strings,
    order_within_groups,
    pair_keys,
    sort_by_query,
)

ALPHABET = "ab9Z_#-.\u00e9\u4e2d"


def random_strings(rng, n, max_len=20):
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, max_len))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_order_within_groups_equals_python_byte_order(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 300)
    # long shared prefixes force several 8-byte rounds
    strs = [("clueweb09-en0000-" if rng.random() < 0.5 else "") + s for s in random_strings(rng, n)]
    groups = np.sort(np.array([rng.randint(0, 6) for _ in range(n)]))
    for descending in (False, True):
        perm = order_within_groups(pa.array(strs), groups, descending)
        assert sorted(perm.tolist()) == list(range(n))
        got = [(int(groups[i]), strs[i].encode()) for i in perm]
        want = sorted(
            ((int(g), s.encode()) for g, s in zip(groups, strs, strict=True)),
            key=lambda t: (t[0], t[1]),
            reverse=False,
        )
        if descending:
            want = sorted(want, key=lambda t: t[1], reverse=True)
            want = sorted(want, key=lambda t: t[0])  # stable: groups ascending, strings descending
        assert got == want


def test_fingerprints_equal_for_equal_strings_across_chunks_and_slices():
    rng = random.Random(9)
    strs = random_strings(rng, 2000)
    whole = hash_strings(pa.array(strs))
    chunked = hash_strings(pa.chunked_array([pa.array(strs[:700]), pa.array(strs[700:])]))
    sliced = hash_strings(pa.array(["x"] + strs).slice(1))
    assert np.array_equal(whole, chunked) and np.array_equal(whole, sliced)
    distinct = {s: h for s, h in zip(strs, whole.tolist(), strict=True)}
    assert len(set(distinct.values())) == len(distinct)  # no collision among these


def test_pair_keys_in_place_matches_fresh():
    h = hash_strings(pa.array(["a", "b", "c"]))
    q = np.array([0, 1, 0], dtype=np.int32)
    fresh = pair_keys(q, h, 2)
    buf = h.copy()
    inplace = pair_keys(q, buf, 2, out=buf)
    assert inplace is buf and np.array_equal(fresh, inplace)
    assert fresh[0] != fresh[2] and len(set(fresh.tolist())) == 3


@pytest.mark.parametrize("key_bits", [64, 20, 8])  # 8: no room in the packed key (lexsort)
@pytest.mark.parametrize("seed", range(3))
def test_order_within_groups_many_groups_equal_strings_and_prefixes(seed, key_bits):
    """Thousands of groups of every size, equal strings (kept in position order), empty
    strings and prefixes of each other, against Python's sort of the UTF-8 bytes."""
    rng = random.Random(100 + seed)
    strs, groups = [], []
    for g in range(1500):
        size = rng.choice([1, 2, 3, 5, 40])
        pool = random_strings(rng, 4, max_len=12) + ["doc1", "doc10", "doc100", ""]
        for _ in range(size):
            strs.append(rng.choice(pool))
            groups.append(g * 3)  # ids with gaps: only their order matters
    groups = np.array(groups)
    for descending in (False, True):
        perm = order_within_groups(pa.array(strs), groups, descending, _key_bits=key_bits)
        sliced = pa.array(["zz-not-this-one"] + strs).slice(1)  # offsets not from 0
        assert order_within_groups(sliced, groups, descending).tolist() == perm.tolist()
        key = [(int(groups[i]), strs[i].encode(), i) for i in range(len(strs))]
        if descending:  # bytes descending (a prefix after the longer string), then position
            want = sorted(key, key=lambda t: (t[0], [-b for b in t[1]] + [1], t[2]))
        else:
            want = sorted(key)
        assert [t[2] for t in want] == perm.tolist()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("grouped", [True, False])
def test_sort_by_query_equals_one_sort(seed, grouped):
    """Sorting pieces of whole queries gives the array one sort gives, whether or not the
    rows come grouped by query (and a query larger than a piece)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 300, size=200)
    sizes[5] = 5000  # one query bigger than a piece
    codes = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)
    if not grouped:
        codes = rng.permutation(codes)
    docs = rng.integers(0, 2**63, size=len(codes), dtype=np.uint64)
    docs[7] = docs[8]  # a duplicate pair where both rows share a query (grouped case)
    keys = pair_keys(codes, docs, len(sizes))
    want = np.sort(keys)
    got = sort_by_query(keys.copy(), codes, chunk=256)
    assert np.array_equal(got, want)
    # the query code is the top of the key: sorted keys are sorted by query
    q_bits = int(len(sizes) - 1).bit_length()
    assert np.all(np.diff((want >> np.uint64(64 - q_bits)).astype(np.int64)) >= 0)


def test_exact_pair_keys_never_collide():
    """After a fingerprint collision the engine keys pairs by exact document codes: the
    keys of different pairs must differ (a bijection of the code bits)."""
    rng = np.random.default_rng(0)
    n_queries = 37
    codes = rng.integers(0, n_queries, size=200_000).astype(np.int32)
    docs = rng.integers(0, 1 << 20, size=200_000).astype(np.uint64)
    keys = pair_keys(codes, docs, n_queries, exact=True)
    pairs = np.unique(np.stack([codes.astype(np.uint64), docs]), axis=1).shape[1]
    assert len(np.unique(keys)) == pairs
    # and small consecutive codes are spread over the bits below the query's
    spread = pair_keys(
        np.zeros(1024, dtype=np.int32), np.arange(1024, dtype=np.uint64), n_queries, exact=True
    )
    assert len(np.unique(spread >> np.uint64(40))) > 900


@pytest.mark.parametrize("seed", range(3))
def test_string_order_is_pythons_sorted(seed):
    """trec_eval adds queries in the order of their ids as strings: Arrow's sort must give
    Python's order (code points), astral characters and prefixes included."""
    from metrics_core.ranking.strings import string_order

    rng = random.Random(seed)
    ids = random_strings(rng, 500, max_len=6) + [
        "\U0001f600",
        "\uffff",
        "q1",
        "q10",
        "q2",
        "Q1",
        "",
    ]
    rng.shuffle(ids)
    want = sorted(range(len(ids)), key=ids.__getitem__)
    assert string_order(ids).tolist() == want
    assert string_order(pa.array(ids)).tolist() == want


@pytest.mark.parametrize("seed", range(8))
def test_encode_strings_first_appearance_codes_grouped_or_not(seed):
    """Codes in order of first appearance and the dictionary, as a reference made with a
    Python dict, for columns grouped in stretches (the shortcut through the heads of the
    stretches), shuffled (one hash of every value), chunked, sliced or not."""
    rng = random.Random(seed)
    names = random_strings(rng, rng.randint(1, 40), max_len=6)
    stretches = [(rng.choice(names), rng.randint(1, 60)) for _ in range(rng.randint(1, 80))]
    values = [name for name, k in stretches for _ in range(k)]
    if seed % 2:
        rng.shuffle(values)
    first: dict = {}
    want = np.array([first.setdefault(v, len(first)) for v in values], dtype=np.int32)
    arr = pa.array(values, type=pa.string())
    cut = rng.randint(0, len(values))
    for column in (
        arr,
        pa.chunked_array([arr.slice(0, cut), arr.slice(cut)]),
        pa.array(["x"] + values, type=pa.string()).slice(1),
    ):
        codes, vocab = encode_strings(column)
        assert codes.dtype == np.int32 and codes.tolist() == want.tolist()
        assert vocab.to_pylist() == list(first)


@pytest.mark.parametrize("seed", range(6))
def test_tie_order_of_pairs_equals_the_string_sort(seed):
    """Tie groups mostly of two (a fused run's ties), some larger, equal ids and shared
    prefixes among them: the pairs compared one by one give the order of the string sort
    (ids in byte order within each group, equal ids in their positions' order)."""
    from metrics_core.ranking.keys import _tie_order_sorted, tie_order

    rng = random.Random(seed)
    sizes = [2 if rng.random() < 0.8 else rng.randint(1, 5) for _ in range(rng.randint(1, 200))]
    n = sum(sizes)
    pool = random_strings(rng, max(n // 3, 1), max_len=12)
    strs = [("d-0000000" if rng.random() < 0.3 else "") + rng.choice(pool) for _ in range(n)]
    values = pa.array(strs + ["unused"])
    group = np.repeat(np.arange(len(sizes)), sizes)
    tied = np.array(rng.sample(range(10 * n), n), dtype=np.int64)  # entries of an order
    rows = np.arange(n, dtype=np.int64)
    for descending in (False, True):
        got = tie_order(values, tied, rows, group, descending)
        assert got.tolist() == _tie_order_sorted(values, tied, rows, group, descending, 64).tolist()
        want = []
        for g in range(len(sizes)):
            members = [i for i in range(n) if group[i] == g]
            key = sorted(members, key=lambda i: strs[i].encode())  # stable: equal ids kept
            if descending:  # byte order reversed, equal ids still in position order
                key = sorted(members, key=lambda i: (strs[i].encode(), -i), reverse=True)
            want += [int(tied[i]) for i in key]
        assert got.tolist() == want


@pytest.mark.parametrize("seed", range(6))
def test_strings_compare_is_byte_order(seed):
    """-1 / 0 / 1 as Python compares the UTF-8 bytes: ids of every length around the 8-byte
    rounds, prefixes of one another, NUL bytes, non-ASCII, strings at the buffer's very end;
    one array, a slice, a chunked array of one chunk and one of several (Arrow's path)."""
    from metrics_core.ranking.strings import strings_compare

    rng = random.Random(seed)
    pool = ["", "a", "\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "\u00e9", "x" * 17]
    strs = [
        "".join(rng.choice(pool) for _ in range(rng.randint(0, 4)))
        for _ in range(rng.randint(1, 80))
    ]
    arr = pa.array(strs)
    cut = rng.randint(0, len(strs) - 1)
    layouts = [
        (arr, strs),
        (arr.slice(cut), strs[cut:]),
        (pa.chunked_array([arr]), strs),
        (pa.chunked_array([arr.slice(0, cut), arr.slice(cut)], type=pa.string()), strs),
    ]
    for values, plain in layouts:
        a = np.array([rng.randrange(len(plain)) for _ in range(100)])
        b = np.array([rng.randrange(len(plain)) for _ in range(100)])
        b[:10] = len(plain) - 1  # the buffer's last string
        got = strings_compare(values, a, values, b)
        enc = [s.encode() for s in plain]
        want = [(enc[i] > enc[j]) - (enc[i] < enc[j]) for i, j in zip(a, b, strict=True)]
        assert got.tolist() == want
        other = pa.array(plain[::-1])  # two arrays
        got = strings_compare(values, a, other, len(plain) - 1 - b)
        assert got.tolist() == want


@pytest.mark.parametrize("seed", range(4))
def test_strings_equal_is_python_equality(seed):
    """Equal lengths and bytes, 8 at a time from the buffers: ids sharing long prefixes,
    NUL bytes, empty ids, the buffer's last string, one array or two, slices and chunks."""
    from metrics_core.ranking.strings import strings_equal

    rng = random.Random(seed)
    pool = ["", "a", "\x00", "abcdefgh", "abcdefgh\x00", "\u00e9", "x" * 9]
    strs = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 3))) for _ in range(60)]
    arr = pa.array(strs)
    cut = rng.randint(1, len(strs) - 1)
    for values, plain in [
        (arr, strs),
        (arr.slice(cut), strs[cut:]),
        (pa.chunked_array([arr.slice(0, cut), arr.slice(cut)], type=pa.string()), strs),
    ]:
        a = np.array([rng.randrange(len(plain)) for _ in range(200)])
        b = np.array([rng.randrange(len(plain)) for _ in range(200)])
        b[:20] = len(plain) - 1
        want = [plain[i] == plain[j] for i, j in zip(a, b, strict=True)]
        assert strings_equal(values, a, values, b).tolist() == want
        other = pa.array(plain[::-1])
        assert strings_equal(values, a, other, len(plain) - 1 - b).tolist() == want
