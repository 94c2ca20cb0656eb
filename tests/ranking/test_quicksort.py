"""ranx's order of equal scores: numba's quicksort reproduced for many lists at once
(metrics_core.ranking.quicksort), against numba's own np.argsort."""

from __future__ import annotations

import numpy as np
import pytest

from metrics_core.ranking.quicksort import argsort_segments, positions, segment_order

numba = pytest.importorskip("numba")

# numba compiles ranx's functions (and its own argsort) once per process, tens of seconds
# in a fresh environment: the tests that call them run in one process of pytest -n 2
pytestmark = pytest.mark.xdist_group("numba")


@numba.njit
def _numba_argsort(a):
    return np.argsort(a)


def _segments(rng, kind, n_segments, longest):
    lengths = rng.integers(0, longest, size=n_segments)
    segs = []
    for n in lengths:
        if kind == "few values":
            x = rng.integers(0, 3, n).astype(float)
        elif kind == "many values":
            x = rng.integers(0, 20, n).astype(float)
        elif kind == "sorted":
            x = np.sort(rng.integers(0, 5, n).astype(float))
        elif kind == "reversed":
            x = -np.sort(rng.integers(0, 5, n).astype(float))
        elif kind == "nan and signed zeros":
            x = rng.integers(-1, 2, n).astype(float) * 0.0
            x[rng.random(n) < 0.2] = np.nan
            x[rng.random(n) < 0.2] = 1.5
        else:
            x = rng.random(n)
            x[rng.random(n) < 0.3] = 0.5
        segs.append(x)
    return lengths, segs


KINDS = ["few values", "many values", "sorted", "reversed", "nan and signed zeros", "mixed"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("longest", [16, 40, 300])
def test_every_segment_in_numbas_order(kind, longest):
    rng = np.random.default_rng(longest + KINDS.index(kind))
    for _ in range(10):
        lengths, segs = _segments(rng, kind, int(rng.integers(1, 25)), longest)
        keys = np.concatenate(segs) if len(segs) else np.zeros(0)
        got = argsort_segments(keys, lengths)
        fast = segment_order(keys, lengths)
        at = 0
        for x, n in zip(segs, lengths, strict=True):
            want = _numba_argsort(x) + at
            assert got[at : at + n].tolist() == want.tolist()
            assert fast[at : at + n].tolist() == want.tolist()
            at += n


def test_short_lists_keep_equal_keys_in_input_order_and_long_ones_do_not():
    """Up to 15 items numba insertion-sorts (stable); from 16 its partitions move equal
    keys: the reason ranx's ranks of tied documents are not the input order."""
    short = np.zeros(15)
    assert argsort_segments(short, [15]).tolist() == list(range(15))
    long = np.zeros(16)
    assert argsort_segments(long, [16]).tolist() == _numba_argsort(long).tolist()
    assert argsort_segments(long, [16]).tolist() != list(range(16))


def test_positions_invert_the_order():
    keys = np.array([3.0, 1.0, 2.0, 5.0, 5.0])
    order = segment_order(keys, [3, 2])
    assert order.tolist() == [1, 2, 0, 3, 4]
    assert positions(order, [3, 2]).tolist() == [2, 0, 1, 0, 1]
