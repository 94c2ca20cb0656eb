"""The measures: mAP (with its tie band), P@k and radius measures of a Hamming ranking,
and the reference functions calculate_hamming_dist_matrix / calculate_mAP /
calculate_precision_at_k.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.hashing._torch import torch
from metrics_core.hashing.device import (
    ENGINES,
    Placed,
    confirm_codes,
    device_bits,
    fixed_point_sums,
    pick_engine,
    place_inputs,
    replayed,
)
from metrics_core.hashing.histograms import hamming_counts, placed_counts
from metrics_core.hashing.ties import (
    as_counts,
    expected_ap_retrieved_norm,
    fixed_sum,
    harmonic_on,
    join_unit_sum_parts,
    rule_terms,
    tie_tables,
    unit_sum_parts,
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
from metrics_core.threads import map_in_threads, usable_cores
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
        same torch code where they are (:mod:`~metrics_core.hashing.ties`: operations
        rounded alike everywhere, sums as integers), then divided and averaged by the same
        numpy code on the host: any device gives the CPU's results bit for bit.

    Returns
    -------
    dict with "map", "map_band" [pessimistic, optimistic], "ap" (per query), "precision_at_k",
    "precision_radius", "recall_radius", "empty_radius_queries" (queries with no code within
    the radius; their precision there counts 0), "pr_by_radius" (per radius: "radius", "precision",
    "recall" and "empty", the queries with no code within it), "per_class_map" (single labels),
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
    dev = resolve_device(device)
    stable = retrieved_expected = query_label_values = None
    # the one measure with transcendental functions, computed on the host from the histograms
    host_expected = topk is not None and normalizer == "retrieved" and ties == "expected"
    # the tie rules whose closed-form sums are needed (the chosen rule and the band's ends)
    rules = tuple(
        rule
        for rule in ("expected", "optimistic", "pessimistic")
        if rule in (ties, "pessimistic", "optimistic")
        and not (rule == "expected" and host_expected)
    )
    counts = topk is not None and normalizer == "retrieved"  # the normalizer counts relevant
    asked = _Asked(rules, topk, ks, ties, radius, counts)
    placed = None
    if ties != "stable" and not host_expected and pick_engine(engine, dev) == "triton":
        placed = place_inputs(query_codes, db_codes, query_labels, db_labels, dev)
    if placed is not None and _one_computation(placed):
        # counting and measures in one computation: one wait, one copy back (on CUDA, one
        # replay of a CUDA graph)
        got, query_label_values = _counted_measures(placed, memory_budget, asked)
        nq, width, ndb = got["R"].shape[0], placed.qt.shape[1] + 1, placed.dt.shape[0]
    else:
        if placed is not None:  # placed once: counted by the engine, measured from the counts
            n, r, _ = placed_counts(placed, engine="triton", memory_budget=memory_budget)
        else:
            n, r, stable = hamming_counts(
                query_codes,
                db_codes,
                query_labels,
                db_labels,
                device=device,
                engine=engine,
                memory_budget=memory_budget,
                stable=(topk, ks) if ties == "stable" else None,
                on_device=True,
            )
        n, r = as_counts(n), as_counts(r)  # made int64 where the measures run
        nq, width = n.shape
        ndb = _n_db(db_codes, n)
        if host_expected:
            retrieved_expected = expected_ap_retrieved_norm(
                n.to(torch.int64).cpu().numpy(), r.to(torch.int64).cpu().numpy(), topk
            )
        # the stable rule's P@k come with its counts
        got = _device_measures(n, r, ndb, asked._replace(ks=() if stable is not None else ks))
    bits = width - 1
    rad = min(int(radius), bits)
    R = got["R"]

    def ap_for(rule):
        if rule == "stable" and stable is not None:
            s, c = fixed_point_sums(stable.hi, stable.lo), stable.in_cut.astype(np.float64)
        elif rule == "expected" and retrieved_expected is not None:
            return retrieved_expected
        else:
            s, c = got[rule]
        if topk is None:
            norm = R
        elif normalizer == "retrieved":
            norm = c
        else:
            norm = np.minimum(R, topk)
        return np.divide(s, norm, out=np.zeros(nq), where=norm > 0)

    ap, lo_band, hi_band = ap_for(ties), ap_for("pessimistic"), ap_for("optimistic")
    has_rel = R > 0
    keep = has_rel if zero_relevant == "exclude" else None  # None: every query
    if keep is not None and not keep.any():
        warnings.warn("no query has a relevant item: mAP is NaN", stacklevel=2)

    def mean(x):
        if keep is None:
            return float(np.mean(x)) if nq else math.nan
        return float(np.mean(x[keep])) if keep.any() else math.nan

    if stable is not None:
        precision_at_k = {k: float(np.mean(stable.at_k[k] / k)) for k in ks}
    else:
        precision_at_k = {k: float(np.mean(got["at_k"][k] / k)) for k in ks}
    out = {
        "map": mean(ap),
        "map_band": [mean(lo_band), mean(hi_band)],
        "ap": ap,
        "precision_at_k": precision_at_k,
        "precision_radius": float(np.mean(got["precision_radius"])) if nq else math.nan,
        # recall is undefined without relevant items: those queries follow zero_relevant
        "recall_radius": mean(got["recall_radius"]) if nq else math.nan,
        "radius": rad,
        # queries with no code within the radius: their precision there counts 0 (DeepHash's
        # rule); when every query has none, the radius retrieved nothing and says nothing
        "empty_radius_queries": int(got["empty_radius"].sum()),
        "pr_by_radius": {
            "radius": list(range(width)),
            "precision": (got["precision_sums"] / max(nq, 1)).tolist(),
            "recall": (got["recall_sums"] / max(nq, 1)).tolist(),
            "empty": got["empty_by_radius"].tolist(),
        },
        "n_queries": nq,
        "n_db": ndb,
        "bits": bits,
        "ties": ties,
        "topk": topk,
        "zero_relevant_queries": int((~has_rel).sum()),
    }
    if query_label_values is None:
        query_label_values = as_labels(query_labels, nq, "query labels").cpu().numpy()
    out["per_class_map"] = _per_class_map(ap, keep, query_label_values)
    return out


def _n_db(db_codes, n) -> int:
    """Database items: from the codes' shape where they have one (no wait for the device),
    else from a histogram row (every row counts the whole database)."""
    shape = getattr(db_codes, "shape", None)
    if shape is not None and len(shape) == 2:
        return int(shape[0])
    return int(n[0].sum()) if len(n) else 0


#: Histogram cells (queries x distances) per block of rows on the CPU: a block's few dozen
#: float64 tensors stay in a core's cache, and blocks run in threads (torch releases the
#: GIL). On CUDA all rows are one block, replayed from a CUDA graph.
ROW_BLOCK_CELLS = 32 << 10


class _Asked(NamedTuple):
    """What the measures ask of the histograms (:class:`_MeasurePlan`)."""

    rules: tuple
    topk: int | None
    ks: tuple
    ties: str
    rad: int
    counts: bool


class _MeasurePlan:
    """The per-query sums the measures need, as one torch computation from the histograms
    (:meth:`core`: the same bits on every device, :mod:`metrics_core.hashing.ties`) and
    its flat float64 result read back (:meth:`unpack`, :meth:`collect`): relevant items
    ``R``; per tie rule of ``rules`` the AP sums and (with ``counts``) the relevant items
    inside the cut; the relevant items inside each k of ``ks`` (``at_k``, under ``ties``);
    precision and recall within the radius ``rad`` (at most the code length) and whether
    nothing is within it; and, per radius, the sums over queries of precision and recall
    (the precision-recall curve; exact integer parts from each block of rows, added across
    blocks and joined on the host) and the queries with no code within it. The host divides
    and averages."""

    def __init__(self, device, ndb: int, width: int, asked: _Asked):
        self.H = harmonic_on(device, ndb + 1)
        self.width = width
        self.asked = asked._replace(rad=min(int(asked.rad), width - 1))  # within the code
        # sums per query besides the 4 singles
        self.per = len(asked.rules) * (2 if asked.counts else 1) + len(asked.ks)
        self.key = (ndb, width, *self.asked)

    def core(self, n, r):
        """The flat float64 tensor of :meth:`unpack`, from histogram rows ``n, r``."""
        a = self.asked
        tables = tie_tables(n, r, a.topk, self.H)
        terms = rule_terms(n, r, a.rules, a.topk, tables, counts=a.counts)
        per_query = []  # (queries, distances) float64 terms, each summed over distances
        for rule in a.rules:
            s, c = terms[rule]
            per_query += [s] if c is None else [s, c]
        per_query += _inside_k_terms(n, r, a.ks, a.ties, tables)
        precision, recall, R = _by_radius(r, tables)
        empty = (tables["C"][:, a.rad] == 0).to(torch.float64)
        pieces = [torch.stack([R, precision[:, a.rad], recall[:, a.rad], empty]).reshape(-1)]
        if per_query:
            pieces.append(fixed_sum(torch.stack(per_query), 2).reshape(-1))
        hi, lo = unit_sum_parts(torch.stack([precision, recall]), 1)  # exact in float64
        nothing = (tables["C"] == 0).sum(dim=0, keepdim=True)  # queries with no code within
        pieces.append(torch.cat([hi, lo, nothing]).to(torch.float64).reshape(-1))
        return torch.cat(pieces)

    def size(self, rows: int) -> int:
        """Length of :meth:`core`'s result for ``rows`` rows."""
        return (4 + self.per) * rows + 5 * self.width

    def unpack(self, flat: np.ndarray, rows: int):
        """(singles (4, rows), sums (per, rows), column parts (5, width) int64)."""
        head, per = 4 * rows, self.per
        return (
            flat[:head].reshape(4, rows),
            flat[head : head + per * rows].reshape(per, rows),
            flat[head + per * rows :].astype(np.int64).reshape(5, self.width),
        )

    def collect(self, blocks) -> dict:
        """The sums of every block of rows (:meth:`unpack`), in row order, by name."""
        if not blocks:
            blocks = [self.unpack(np.zeros(self.size(0)), 0)]
        singles = np.concatenate([b[0] for b in blocks], axis=1)
        sums = np.concatenate([b[1] for b in blocks], axis=1)
        parts = np.sum([b[2] for b in blocks], axis=0)  # exact: integers
        columns = join_unit_sum_parts(parts[:2], parts[2:4])
        out = {
            "R": singles[0],
            "precision_radius": singles[1],
            "recall_radius": singles[2],
            "empty_radius": singles[3] > 0,
            "precision_sums": columns[0],
            "recall_sums": columns[1],
            "empty_by_radius": parts[4],
        }
        i = 0
        for rule in self.asked.rules:
            if self.asked.counts:
                out[rule] = (sums[i], sums[i + 1])
                i += 2
            else:
                out[rule] = (sums[i], None)
                i += 1
        out["at_k"] = {k: sums[i + j] for j, k in enumerate(self.asked.ks)}
        return out


def _device_measures(n, r, ndb: int, asked: _Asked) -> dict:
    """The :class:`_MeasurePlan` sums of histograms ``n, r``, computed where they are and
    copied to the host.

    Each query's numbers come from its own row alone, so blocks of rows change nothing:
    on the CPU, blocks of at most :data:`ROW_BLOCK_CELLS` cells (at least one per core) run
    in threads. On CUDA the computation (about a hundred small kernels) is replayed from a
    CUDA graph captured once per shape (:func:`~metrics_core.hashing.device.replayed`): the
    same kernels, so the same bits, at a fraction of the launch cost."""
    nq, width = n.shape
    plan = _MeasurePlan(n.device, ndb, width, asked)
    if nq == 0:
        return plan.collect([])
    if n.device.type == "cuda":
        flat = replayed(plan.core, ("hashing-measures", *plan.key), n, r)
        return plan.collect([plan.unpack(flat, nq)])  # one copy to the host, one wait
    step = max(1, min(ROW_BLOCK_CELLS // max(width, 1), -(-nq // usable_cores())))
    cuts = [(lo, min(nq, lo + step)) for lo in range(0, nq, step)]

    def block(cut):
        lo, hi = cut
        return plan.unpack(plan.core(n[lo:hi], r[lo:hi]).numpy(), hi - lo)

    return plan.collect(map_in_threads(block, cuts))


#: Bytes of inputs (codes and labels as given) up to which an evaluation by the Triton
#: engine on CUDA is one captured graph, counting included: the graph keeps a copy of them.
#: Above it the launch cost is small against the counting, and only the measures are a graph.
GRAPH_INPUT_BYTES = 128 << 20


def _one_computation(placed: Placed) -> bool:
    """Whether the Triton engine counts and measures these inputs in one computation: its
    kernels take them, and (on CUDA, where that computation is a captured graph holding a
    copy of them) they are at most :data:`GRAPH_INPUT_BYTES`. Larger inputs are counted,
    then measured from a graph of the measures alone: no copy of them is kept."""
    from metrics_core.hashing import triton_engine  # importable: the engine was picked

    small = placed.qt.device.type != "cuda" or placed.nbytes() <= GRAPH_INPUT_BYTES
    return small and triton_engine.takes(placed)


def _counted_measures(placed: Placed, memory_budget: int, asked: _Asked):
    """Count and measure in one computation (the Triton engine, histograms only): the code
    checks, the bits, the histogram kernel and the :class:`_MeasurePlan` sums, with the
    checks and the query labels in the same result, so that one copy brings everything
    back (one wait). On CUDA it is replayed from a CUDA graph captured once per shape: from
    codes to sums, one launch.

    Returns the plan's sums by name and the query labels as a numpy array (int64 class ids
    or 0/1 rows). Codes that fail the device's check are named by :func:`confirm_codes`
    (whose bits are right whenever the check passes)."""
    from metrics_core.hashing import triton_engine  # only where Triton runs

    qt, dt, ql, _ = placed
    nq, ndb, width = qt.shape[0], dt.shape[0], qt.shape[1] + 1
    plan = _MeasurePlan(qt.device, ndb, width, asked)
    length = plan.size(nq)

    def run(qt, dt, ql, dl):
        inp, checks = device_bits(qt, dt, ql, dl)
        n, r, _ = triton_engine.triton_counts(inp, memory_budget)
        flat = plan.core(n, r)
        # every part as int64 (the float64 sums by their bits): one exact copy back
        return torch.cat([flat.view(torch.int64), checks, ql.to(torch.int64).reshape(-1)])

    key = ("hashing-counted", triton_engine.settings(), *plan.key)
    got = replayed(run, key, *placed)
    confirm_codes(got[length : length + 2].tolist(), qt, dt)
    labels = got[length + 2 :].reshape(ql.shape)
    return plan.collect([plan.unpack(got[:length].view(np.float64), nq)]), labels


def _inside_k_terms(n, r, ks, ties: str, tables: dict) -> list:
    """Per k of ``ks``: the relevant items of each distance inside the top k (float64,
    queries x distances), the tie group the cut falls in resolved by the tie rule
    (expected: in proportion; optimistic: relevant first; pessimistic: relevant last).
    ``tables``: :func:`tie_tables` of ``n, r``. P@k is their sum over distances over k."""
    out = []
    above = tables["A"]  # items strictly closer than each distance
    for k in ks:
        taken = torch.clamp(torch.clamp(k - above, min=0), max=n)  # items inside the top k
        if ties == "expected":
            # r * taken / n, 0 where n = 0 (there taken is 0 too)
            inside = (r * taken).to(torch.float64) / torch.clamp(n, min=1).to(torch.float64)
        elif ties == "optimistic":
            inside = torch.minimum(r, taken).to(torch.float64)
        else:
            inside = torch.clamp(torch.clamp(taken - (n - r), min=0), max=r).to(torch.float64)
        out.append(inside)
    return out


def _by_radius(r, tables: dict):
    """Precision and recall of everything within each Hamming radius, per query (no tie
    question: the whole radius is retrieved), float64 tensors of the shape of ``r``, and
    the relevant items of each query ``R`` (float64, exact). ``tables``: :func:`tie_tables`
    of the rows (its float64 counts). Relevant items are at most the items (``r <= n``), so
    a radius with no item (or a query with no relevant item) divides 0 by 1: 0."""
    F = tables["float"]
    cum_r = F["B"] + F["r"]  # relevant items within each radius
    R = cum_r[:, -1]
    precision = cum_r / torch.clamp(F["A"] + F["n"], min=1.0)
    recall = cum_r / torch.clamp(R, min=1.0)[:, None]
    return precision, recall, R


def _per_class_map(ap: np.ndarray, keep: np.ndarray | None, ql: np.ndarray) -> dict:
    """mAP per class of the queries (class ids, or each column of 0/1 multi-labels), from
    the validated labels; ``keep``: the queries in the means (None: every one)."""
    if ql.ndim == 1:
        # a stable sort by class: each class's queries, in query order, are one slice, so
        # each mean is taken over the same values in the same order as a mask would give
        order = np.argsort(ql, kind="stable")
        by_class = ql[order]
        starts = np.flatnonzero(by_class[1:] != by_class[:-1]) + 1 if len(order) else order
        bounds = [0, *starts.tolist(), len(order)] if len(order) else [0]
        ap_sorted = ap[order]
        keep_sorted = None if keep is None else keep[order]
        out = {}
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            kept = ap_sorted[lo:hi] if keep_sorted is None else ap_sorted[lo:hi][keep_sorted[lo:hi]]
            # np.mean's own steps (a pairwise sum, divided by the count), without its
            # per-call overhead: a hundred classes cost a hundred calls
            mean = float(np.add.reduce(kept)) / len(kept) if len(kept) else math.nan
            out[str(by_class[lo])] = mean
        return out
    if keep is None:
        keep = np.ones(len(ap), dtype=bool)
    members = {str(c): ql[:, c] > 0 for c in range(ql.shape[1])}
    return {
        c: float(np.mean(ap[m & keep])) if (m & keep).any() else math.nan
        for c, m in members.items()
    }
