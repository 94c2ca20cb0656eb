"""The measures: mAP (with its tie band), P@k and radius measures of a Hamming ranking,
and the reference functions calculate_hamming_dist_matrix / calculate_mAP /
calculate_precision_at_k.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.hashing._torch import torch
from metrics_core.hashing.device import ENGINES, fixed_point_sums
from metrics_core.hashing.histograms import distance_histograms, hamming_counts
from metrics_core.hashing.ties import (
    expected_ap_retrieved_norm,
    harmonic_numbers,
    rule_sums,
    tie_tables,
)
from metrics_core.hashing.validate import (
    DEFAULT_MEMORY_BUDGET,
    NORMALIZERS,
    TIE_RULES,
    ZERO_RELEVANT,
    as_labels,
    resolve_device,
    validate_codes,
)
from metrics_core.validation import LIMITS, check_choice, check_int


# -- the seed's functions ------------------------------------------------------------------
def calculate_hamming_dist_matrix(query_codes, db_codes) -> torch.Tensor:
    """Hamming distances D[i, j] = (K - u_i · v_j) / 2 of ±1 codes (the inner-product form of deep-hashing evaluation).

    >>> calculate_hamming_dist_matrix([[1, 1, -1]], [[1, 1, -1], [-1, -1, 1]]).tolist()
    [[0.0, 3.0]]
    """
    q = validate_codes(query_codes, "query codes")
    d = validate_codes(db_codes, "database codes").to(q.device)
    if q.shape[1] != d.shape[1]:
        raise InputError(
            N_("query codes have {query} bits, database codes {database}"),
            params={"query": q.shape[1], "database": d.shape[1]},
        )
    return 0.5 * (q.shape[1] - q @ d.T)


def calculate_mAP(
    query_codes, db_codes, query_labels, db_labels, topk: int | None = None, ties: str = "expected"
) -> float:
    """Mean average precision over the Hamming ranking; see :func:`evaluate_hashing`."""
    return evaluate_hashing(
        query_codes, db_codes, query_labels, db_labels, topk=topk, ties=ties, ks=()
    )["map"]


def calculate_precision_at_k(
    query_codes, db_codes, query_labels, db_labels, k: int, ties: str = "expected"
) -> float:
    """Mean precision of the top ``k`` of the Hamming ranking."""
    return evaluate_hashing(query_codes, db_codes, query_labels, db_labels, ks=(k,), ties=ties)[
        "precision_at_k"
    ][int(k)]


# -- the measures --------------------------------------------------------------------------
def evaluate_hashing(
    query_codes,
    db_codes,
    query_labels,
    db_labels,
    *,
    topk: int | None = None,
    ks=(1, 5, 10, 100),
    radius: int = 2,
    ties: str = "expected",
    normalizer: str = "retrieved",
    zero_relevant: str = "zero",
    device=None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    engine: str = "auto",
) -> dict:
    """mAP (band over tie orders), P@k, precision/recall within a Hamming radius, PR by radius.

    Parameters
    ----------
    query_codes, db_codes : array-like (items, bits) of ±1 or 0/1
    query_labels, db_labels : class ids (1-D) or 0/1 label matrices (2-D, multi-label:
        relevant when at least one label is shared). A one-column 0/1 matrix is multi-label
        too: items sharing the 1 match, two items tagged 0 do not. A one-column matrix with
        other values is class ids written as a column.
    topk : int, optional
        mAP@topk; None for mAP over the whole ranking.
    ks : iterable of int
        Cutoffs of P@k.
    radius : int
        Precision/recall of the items within this Hamming radius (2 is customary).
    ties : {"expected", "optimistic", "pessimistic", "stable"}
    normalizer : {"retrieved", "min_r_k"}
        AP@k divides by the relevant items retrieved in the top k (DeepHash's CalcTopMap)
        or by min(R, k). Without topk both are R.
    zero_relevant : {"zero", "exclude"}
        Queries with no relevant item count as AP 0, or are left out of the mean.
    device : str or torch.device, optional
        Where the pairs are counted (None: CUDA when available, else the CPU). CUDA
        tensors are used where they are; only per-query integers come back.
    memory_budget : int
        Bytes of working memory per chunk (on CUDA also at most half the free memory).
    engine : {"auto", "numpy", "torch", "triton"}
        Who counts (see :func:`~metrics_core.hashing.histograms.hamming_counts`). Every
        engine gives the same integers, and every number here is computed from them by the
        same numpy code on the host: any device gives the CPU's results bit for bit.

    Returns
    -------
    dict with "map", "map_band" [pessimistic, optimistic], "ap" (per query), "precision_at_k",
    "precision_radius", "recall_radius", "empty_radius_queries" (queries with no code within
    the radius; their precision there counts 0), "pr_by_radius", "per_class_map" (single labels),
    "n_queries", "n_db", "bits", "ties", "zero_relevant_queries".

    Examples
    --------
    >>> codes_db = [[1, 1], [1, -1], [-1, -1]]
    >>> out = evaluate_hashing([[1, 1]], codes_db, [0], [0, 1, 0], ks=(1,))
    >>> round(out["map"], 4), [round(v, 4) for v in out["map_band"]]   # (1/1 + 2/3) / 2
    (0.8333, [0.8333, 0.8333])
    """
    check_choice(ties, TIE_RULES, "tie rule")
    check_choice(normalizer, NORMALIZERS, "normalizer")
    check_choice(zero_relevant, ZERO_RELEVANT, "zero_relevant rule")
    if topk is not None:
        topk = check_int(topk, "topk", minimum=1, maximum=LIMITS["cutoff"])
    ks = tuple(sorted({check_int(k, "k of P@k", minimum=1, maximum=LIMITS["cutoff"]) for k in ks}))
    radius = check_int(radius, "radius", minimum=0, maximum=LIMITS["radius"])
    check_choice(engine, ENGINES, "engine")
    resolve_device(device)
    stable = None
    if ties == "stable":
        n, r, stable = hamming_counts(
            query_codes,
            db_codes,
            query_labels,
            db_labels,
            device=device,
            engine=engine,
            memory_budget=memory_budget,
            stable=(topk, ks),
        )
    else:
        n, r = distance_histograms(
            query_codes,
            db_codes,
            query_labels,
            db_labels,
            device=device,
            memory_budget=memory_budget,
            engine=engine,
        )
    nq, width = n.shape
    bits, ndb = width - 1, int(n[0].sum()) if nq else 0
    # every row counts the whole database (ndb items): the harmonic numbers up to ndb + 1
    H = harmonic_numbers(ndb + 1)
    retrieved_expected = None
    if topk is not None and normalizer == "retrieved" and ties == "expected":
        retrieved_expected = expected_ap_retrieved_norm(n, r, int(topk))

    # the tie rules whose closed-form sums are needed (the chosen rule and the band's ends)
    rules = tuple(
        rule
        for rule in ("expected", "optimistic", "pessimistic")
        if rule in (ties, "pessimistic", "optimistic")
        and not (rule == "expected" and retrieved_expected is not None)
    )
    counts = topk is not None and normalizer == "retrieved"  # the normalizer counts relevant

    # precision and recall within each radius, written in place by the blocks of rows
    prec_by_radius, rec_by_radius = np.empty((nq, width)), np.empty((nq, width))

    def rows_of(rows: slice):
        """Every per-query number of the queries ``rows`` (row by row: the same values
        whichever blocks of rows are taken)."""
        nb, rb = n[rows], r[rows]
        tables = tie_tables(nb, rb, topk, H)
        Rb = (tables["B"][:, -1] + rb[:, -1]).astype(np.float64)  # relevant items in all
        sums = rule_sums(nb, rb, rules, topk, tables, counts=counts)

        def ap_for(rule):
            if rule == "stable" and stable is not None:
                s, c = (
                    fixed_point_sums(stable.hi[rows], stable.lo[rows]),
                    stable.in_cut[rows].astype(np.float64),
                )
            elif rule == "expected" and retrieved_expected is not None:
                return retrieved_expected[rows]
            else:
                s, c = sums[rule]
            if topk is None:
                norm = Rb
            elif normalizer == "retrieved":
                norm = c
            else:
                norm = np.minimum(Rb, topk)
            return np.divide(s, norm, out=np.zeros(len(Rb)), where=norm > 0)

        at_k = [] if stable is not None else _precision_at_k_rows(nb, rb, ks, ties, tables)
        _by_radius(rb, Rb, tables, prec_by_radius[rows], rec_by_radius[rows])
        return (Rb, ap_for(ties), ap_for("pessimistic"), ap_for("optimistic"), *at_k)

    R, ap, lo_band, hi_band, *at_k = _in_row_blocks(rows_of, nq, width)
    has_rel = R > 0
    keep = has_rel if zero_relevant == "exclude" else np.ones(nq, dtype=bool)
    if zero_relevant == "exclude" and not keep.any():
        warnings.warn("no query has a relevant item: mAP is NaN", stacklevel=2)

    def mean(x):
        return float(np.mean(x[keep])) if keep.any() else math.nan

    if stable is not None:
        precision_at_k = {k: float(np.mean(stable.at_k[k] / k)) for k in ks}
    else:
        precision_at_k = {k: float(np.mean(v)) for k, v in zip(ks, at_k, strict=True)}
    rad = min(int(radius), bits)
    out = {
        "map": mean(ap),
        "map_band": [mean(lo_band), mean(hi_band)],
        "ap": ap,
        "precision_at_k": precision_at_k,
        "precision_radius": float(np.mean(prec_by_radius[:, rad])) if nq else math.nan,
        # recall is undefined without relevant items: those queries follow zero_relevant
        "recall_radius": mean(rec_by_radius[:, rad]) if nq else math.nan,
        "radius": rad,
        # queries with no code within the radius: their precision there counts 0 (DeepHash's
        # rule); when every query has none, the radius retrieved nothing and says nothing
        "empty_radius_queries": int((n[:, : rad + 1].sum(axis=1) == 0).sum()) if nq else 0,
        "pr_by_radius": {
            "radius": list(range(width)),
            "precision": prec_by_radius.mean(axis=0).tolist(),
            "recall": rec_by_radius.mean(axis=0).tolist(),
        },
        "n_queries": nq,
        "n_db": ndb,
        "bits": bits,
        "ties": ties,
        "topk": topk,
        "zero_relevant_queries": int((~has_rel).sum()),
    }
    out["per_class_map"] = _per_class_map(
        ap, keep, as_labels(query_labels, nq, "query labels").cpu().numpy()
    )
    return out


#: Histogram cells (queries x distances) per block of rows the host computes at a time: the
#: block's dozen or so arrays (96 KB each at most: larger ones cost fresh pages on every call,
#: above the allocator's 128 KB threshold) stay in a core's cache; the blocks run in threads
#: (numpy releases the GIL in its array loops).
ROW_BLOCK_CELLS = 12 << 10


_POOL: tuple[int, int, ThreadPoolExecutor] | None = None  # (process id, threads, pool)
_POOL_LOCK = threading.Lock()


def _row_pool(workers: int) -> ThreadPoolExecutor:
    """The threads that compute the blocks of rows, kept between calls (starting a dozen
    threads costs about a millisecond, as much as the measures of a thousand queries); made
    anew in a forked child, whose copy has no threads."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid() or _POOL[1] < workers:
            if _POOL is not None and _POOL[0] == os.getpid():
                _POOL[2].shutdown(wait=False)  # too few threads: its idle ones end
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hash-measures")
            _POOL = (os.getpid(), workers, pool)
        return _POOL[2]


def _in_row_blocks(fn, nq: int, width: int):
    """``fn(rows)`` -> tuple of per-query arrays, for blocks of rows in a thread pool, the
    blocks' arrays concatenated. Each query's numbers are computed from its own row alone,
    so the blocks change no value."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    step = max(1, ROW_BLOCK_CELLS // max(width, 1))
    blocks = [slice(lo, min(nq, lo + step)) for lo in range(0, nq, step)] or [slice(0, 0)]
    if len(blocks) == 1:
        return fn(blocks[0])
    if cores == 1:
        parts = [fn(rows) for rows in blocks]
    else:
        parts = list(_row_pool(cores).map(fn, blocks))
    return tuple(np.concatenate([p[j] for p in parts]) for j in range(len(parts[0])))


def _precision_at_k_rows(n: np.ndarray, r: np.ndarray, ks, ties: str, tables: dict) -> list:
    """P@k of every query from its distance histograms (one array per k), the tie group the
    cut falls in resolved by the tie rule (expected: in proportion; optimistic: relevant
    first; pessimistic: relevant last). ``tables``: :func:`tie_tables` of ``n, r``."""
    out = []
    above = tables["A"]  # items strictly closer than each distance
    for k in ks:
        taken = np.clip(k - above, 0, n)  # items of each distance inside the top k
        if ties == "expected":
            inside = np.divide(r * taken, n, out=np.zeros(n.shape), where=n > 0)
        elif ties == "optimistic":
            inside = np.minimum(r, taken)
        else:
            inside = np.clip(taken - (n - r), 0, r)
        out.append(inside.sum(axis=1) / k)
    return out


def _by_radius(r: np.ndarray, R: np.ndarray, tables: dict, precision, recall) -> None:
    """Precision and recall of everything within each Hamming radius, per query (no tie
    question: the whole radius is retrieved), written into ``precision`` and ``recall``
    (float64, the shape of ``r``). ``tables``: :func:`tie_tables` of the rows. Relevant
    items are at most the items (``r <= n``), so a radius with no item (or a query with no
    relevant item) divides 0 by 1: 0."""
    cum_r = (tables["B"] + r).astype(np.float64)
    np.maximum(tables["C"], 1.0, out=precision)
    np.divide(cum_r, precision, out=precision)
    np.divide(cum_r, np.maximum(R, 1.0)[:, None], out=recall)


def _per_class_map(ap: np.ndarray, keep: np.ndarray, ql: np.ndarray) -> dict:
    """mAP per class of the queries (class ids, or each column of 0/1 multi-labels), from
    the validated labels."""
    if ql.ndim == 1:
        # a stable sort by class: each class's queries, in query order, are one slice, so
        # each mean is taken over the same values in the same order as a mask would give
        order = np.argsort(ql, kind="stable")
        classes, starts = np.unique(ql[order], return_index=True)
        ends = [*starts[1:], len(order)]
        ap_sorted, keep_sorted = ap[order], keep[order]
        out = {}
        for c, lo, hi in zip(classes, starts, ends, strict=True):
            kept = ap_sorted[lo:hi][keep_sorted[lo:hi]]
            # np.mean's own steps (a pairwise sum, divided by the count), without its
            # per-call overhead: a hundred classes cost a hundred calls
            out[str(c)] = float(np.add.reduce(kept)) / len(kept) if len(kept) else math.nan
        return out
    members = {str(c): ql[:, c] > 0 for c in range(ql.shape[1])}
    return {
        c: float(np.mean(ap[m & keep])) if (m & keep).any() else math.nan
        for c, m in members.items()
    }
